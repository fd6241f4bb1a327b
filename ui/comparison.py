"""The comparison: every rater's scores of the item and their reasons, after the grader's own.

The core decides when it may show (:func:`physgrade.grading.compare` returns None while the
grade is incomplete); this panel only lays out what it is given: a criteria-by-raters table as
wide as the reading, each cell a value with that rater's rationale under it, cells that differ
from the grader's marked, and each rater's overall comment beneath.

Rater names, notes and comments are imported or written by language models, so all of it goes
through ``html.escape`` or :func:`physgrade.maths.to_html`. The web view that shows the table
is made only when there is something to reveal: until then the panel is a plain label.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QStackedLayout, QVBoxLayout, QWidget

from physgrade.grading import GradingItem, OtherVerdict
from physgrade.maths import to_html
from physgrade.raters import HUMAN, LLM, RULES
from physgrade_ui import reading, style
from physgrade_ui.reading_view import ReadingView
from physgrade_ui.widgets import label

KIND_NAMES = {HUMAN: "grader", LLM: "judge", RULES: "rule check"}
HIDDEN = ("Blind grading: judge verdicts and colleagues' scores appear here once you have "
          "scored every criterion.")
NOBODY = "Nobody else has scored this response yet."

CSS = reading.CSS + f"""
body {{ padding: 12px 16px 40px; }}
table.compare {{ width: 100%; table-layout: fixed; border-collapse: separate;
                 border-spacing: 0; margin: 6px 0 0; }}
table.compare col.criterion {{ width: 124px; }}
table.compare th, table.compare td {{ vertical-align: top; text-align: left; padding: 7px 9px;
    border: none; border-bottom: 1px solid {style.BORDER}; background: none;
    overflow-wrap: break-word; }}
table.compare thead th {{ position: sticky; top: 0; z-index: 1; background: {style.SURFACE};
    border-bottom: 2px solid {style.BORDER}; font-size: 13px; line-height: 1.3; }}
.rater {{ font-weight: 600; color: {style.TEXT}; }}
.kind {{ display: block; font-weight: normal; font-size: 11.5px; color: {style.MUTED}; }}
th.criterion .key {{ display: block; color: {style.ACCENT}; font: 700 13px monospace; }}
th.criterion .name {{ display: block; font-weight: normal; font-size: 12px;
                      color: {style.MUTED}; line-height: 1.3; }}
.range {{ white-space: nowrap; }}
table.compare .you {{ background: #f3f7fc; }}
.value {{ font-size: 20px; font-weight: 600; line-height: 1.2; white-space: nowrap;
          font-variant-numeric: tabular-nums; }}
.value.none {{ color: {style.MUTED}; font-weight: normal; }}
.na {{ font-size: 15px; color: {style.MUTED}; }}
.note {{ font-size: 12.5px; line-height: 1.4; margin-top: 4px; overflow-x: auto; }}
table.compare td.differs {{ background: {style.WARN_BACKGROUND};
                            box-shadow: inset 3px 0 0 {style.WARN}; }}
td.differs .value {{ color: {style.WARN}; }}
.mine {{ font-size: 11.5px; font-weight: 600; color: {style.WARN}; }}
table.compare tr.total > * {{ border-top: 2px solid {style.BORDER}; border-bottom: none; }}
tr.total th {{ font-size: 13px; }}
tr.steps th {{ font-size: 13px; }}
.step {{ font-size: 13px; font-weight: 600; line-height: 1.3; }}
td.differs .step {{ color: {style.WARN}; }}
.agree {{ color: {style.GOOD}; }}
.comment {{ border-left: 3px solid {style.ACCENT}; padding: 2px 0 2px 12px; margin: 12px 0; }}
.comment .meta {{ margin-bottom: 2px; }}
@media (max-width: 760px) {{  /* five or six raters in a narrow reading pane */
  body {{ padding: 10px 10px 32px; }}
  table.compare col.criterion {{ width: 104px; }}
  table.compare th, table.compare td {{ padding: 6px 6px; }}
  .value {{ font-size: 17px; }}
  .note {{ font-size: 12px; }}
}}
"""


@dataclass(frozen=True, slots=True)
class Column:
    """One rater's column: who, and what they gave with why."""

    name: str
    about: list[str]
    scores: dict[str, int | None]
    notes: dict[str, str]
    mine: bool = False


def about(verdict: OtherVerdict) -> list[str]:
    """The rater's kind and the prompt version (a rule check's settings) it worked under."""
    kind = KIND_NAMES.get(verdict.kind, verdict.kind)
    if not verdict.prompt_version:
        return [kind]
    return [kind, f"{'settings' if verdict.kind == RULES else 'prompt'} {verdict.prompt_version}"]


def value_html(value: int | None) -> str:
    return '<span class="na">N/A</span>' if value is None else str(value)


def _total(column: Column, keys: tuple[str, ...], item: GradingItem) -> tuple[str, int | None]:
    """The total cell's text and the points earned; none for a rater who scored only some
    criteria (the rule checker scores the final answer alone), whose sum would mislead."""
    if any(key not in column.scores for key in keys):
        return '<div class="value none">—</div>', None
    earned, possible = item.rubric.total(column.scores)
    return f'<div class="value">{earned}/{possible}</div>', earned


def _header(column: Column) -> str:
    lines = "".join(f'<span class="kind">{escape(line)}</span>' for line in column.about)
    return (f'<th class="{"you" if column.mine else ""}"><span class="rater">'
            f"{escape(column.name)}</span>{lines}</th>")


def _cell(column: Column, key: str, mine: dict[str, int | None]) -> str:
    if key not in column.scores:
        return f'<td class="{"you" if column.mine else ""}"><div class="value none">—</div></td>'
    value = column.scores[key]
    differs = not column.mine and key in mine and mine[key] != value
    note = column.notes.get(key)
    return (f'<td class="{"you" if column.mine else "differs" if differs else ""}">'
            f'<div class="value">{value_html(value)}</div>'
            + (f'<div class="mine">you: {value_html(mine[key])}</div>' if differs else "")
            + (f'<div class="note">{to_html(note)}</div>' if note else "") + "</td>")


def comparison_html(item: GradingItem, verdicts: list[OtherVerdict], my_step: str = "") -> str:
    """The grader's column and every other rater's, criterion by criterion, with a total row
    and, where anyone has said it, the first wrong step (``my_step`` the grader's), then the
    overall comments."""
    mine = item.values
    columns = [Column("You", ["your grade"], mine,
                      {key: given.note for key, given in item.mine.items() if given.note},
                      mine=True)]
    columns += [Column(v.rater, about(v), v.scores, v.notes) for v in verdicts]
    keys = item.rubric.keys
    head = "".join(_header(column) for column in columns)
    rows = []
    for key in keys:
        criterion = item.rubric.criterion(key)
        rows.append(f'<tr><th class="criterion" scope="row"><span class="key">{escape(key)}</span>'
                    f'<span class="name">{escape(criterion.name)} '
                    f'<span class="range">(0–{criterion.maximum})</span></span>'
                    f'</th>{"".join(_cell(c, key, mine) for c in columns)}</tr>')
    _, my_total = _total(columns[0], keys, item)
    totals = []
    for column in columns:
        text, earned = _total(column, keys, item)
        differs = not column.mine and earned is not None and earned != my_total
        hint = f'<div class="mine">you: {my_total}</div>' if differs else ""
        totals.append(f'<td class="{"you" if column.mine else "differs" if differs else ""}">'
                      f"{text}{hint}</td>")
    rows.append(f'<tr class="total"><th scope="row">Total</th>{"".join(totals)}</tr>')
    if my_step or any(v.step for v in verdicts):  # where each rater says the reasoning breaks
        steps = [my_step, *(v.step for v in verdicts)]
        cells = [f'<td class="{"you" if n == 0 else "differs" if step and step != my_step else ""}">'
                 f'<div class="step">{escape(step or "—")}</div></td>'
                 for n, step in enumerate(steps)]
        rows.append(f'<tr class="steps"><th scope="row">First wrong step</th>{"".join(cells)}'
                    "</tr>")
    disagreeing = sum(1 for v in verdicts if v.disagreements(mine))
    summary = (f"{len(verdicts)} other rater{'s' if len(verdicts) != 1 else ''}: "
               + (f"{disagreeing} disagree{'s' if disagreeing == 1 else ''} with you "
                  "(shaded cells)." if disagreeing
                  else '<span class="agree">all agree with you.</span>'))
    colgroup = '<col class="criterion">' + "<col>" * len(columns)
    return (f'<p class="meta">{summary}</p><table class="compare"><colgroup>{colgroup}'
            f'</colgroup><thead><tr><th class="criterion">Criterion</th>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>{_comments(verdicts)}')


def _comments(verdicts: list[OtherVerdict]) -> str:
    """Each rater's overall comment; one that only repeats a criterion's note (the rule checker
    gives its reason as both) is left out."""
    blocks = [f'<div class="comment"><div class="meta"><span class="rater">{escape(v.rater)}'
              f'</span> · {escape(" · ".join(about(v)))}</div>{to_html(v.comment)}</div>'
              for v in verdicts if v.comment and v.comment not in v.notes.values()]
    return f"<h2>Overall comments</h2>{''.join(blocks)}" if blocks else ""


class ComparisonPanel(QWidget):
    """The comparison table in a web view, or a line saying why there is none.

    ``closed`` is emitted by the Close button (the page handles C and Esc itself);
    ``rendered`` each time a table is on show.
    """

    closed = Signal()
    rendered = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view: ReadingView | None = None
        self._revealed = False
        self._pending: str | None = None  # a table waiting for the view (made when shown)
        self._zoom = 1.0
        self.close_button = QPushButton("Close  (C)")
        self.close_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the keys stay on the rubric
        self.close_button.clicked.connect(self.closed)
        self.message = label(HIDDEN, "muted")
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.message.setWordWrap(True)
        self.message_page = QWidget()
        self.message_page.setAutoFillBackground(True)  # it covers the view's stale table
        message_layout = QVBoxLayout(self.message_page)
        message_layout.setContentsMargins(16, 12, 16, 12)
        message_layout.addWidget(self.message)
        message_layout.addStretch(1)
        # All pages stay visible, the current one on top: a hidden web view stops drawing and,
        # shown again, would first flash the table of the response before.
        self.pages = QStackedLayout()
        self.pages.setStackingMode(QStackedLayout.StackingMode.StackAll)
        self.pages.addWidget(self.message_page)
        bar = QHBoxLayout()
        bar.setContentsMargins(16, 8, 10, 4)
        bar.addWidget(label("Compare with the other raters", "section"))
        bar.addStretch(1)
        bar.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(bar)
        layout.addLayout(self.pages, 1)

    @property
    def revealed(self) -> bool:
        """Whether the panel holds the comparison table (not the blind or nobody message)."""
        return self._revealed

    def show_verdicts(self, item: GradingItem, verdicts: list[OtherVerdict] | None,
                      my_step: str = "") -> None:
        """Show the comparison of ``item`` (``my_step``: where the grader says its reasoning
        breaks): None keeps it blind, [] says nobody else scored."""
        if not verdicts:
            self._revealed = False
            self._pending = None
            self.message.setText(HIDDEN if verdicts is None else NOBODY)
            self.pages.setCurrentWidget(self.message_page)
            return
        self._revealed = True
        self.message.clear()  # it shows while the browser starts: no stale "blind" line
        self._pending = comparison_html(item, verdicts, my_step)
        if self.isVisible():
            self._show_pending()

    def set_zoom(self, factor: float) -> None:
        """Zoom the table as the reading is zoomed."""
        self._zoom = factor
        if self.view is not None:
            self.view.setZoomFactor(factor)

    def scroll_by_page(self, direction: int) -> None:
        """Space and Shift+Space scroll the table as they scroll the reading."""
        if self.view is not None and self._revealed:
            self.view.scroll_by_page(direction)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._show_pending()

    def _show_pending(self) -> None:
        """Put the waiting table in the view, making the view on first use."""
        # Taken first: the first web view in a window makes Qt recreate the window, which
        # shows this panel again (a nested call) before the view is even in the layout.
        html, self._pending = self._pending, None
        if html is None:
            return
        if self.view is None:
            self.view = ReadingView(CSS)
            self.view.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            self.view.setZoomFactor(self._zoom)
            self.view.rendered.connect(self._rendered)
            self.pages.addWidget(self.view)
            self.pages.setCurrentWidget(self.message_page)  # on top until the table is in
        self.view.show_html(html)

    def _rendered(self) -> None:
        if self._revealed and self.view is not None:
            self.pages.setCurrentWidget(self.view)
            self.rendered.emit()
