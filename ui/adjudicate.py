"""The Adjudicate page: settle, criterion by criterion, what the graders disagree on.

Left, the responses two or more people scored differently (the core's
:func:`~physgrade.team.adjudication.disputes`, read in the background); in the middle the
response beside its reference, as the workbench shows it; on the right a decision table: a row
per criterion of the rubric (the disputed ones marked), a column per grader with their value
and note, and the Final column with the adjudicated value. Under it the current criterion's
final value, its levels spelled out, as the workbench's rubric row shows them.

Keyboard first, in the manner of the Bloom page's adjudication: the adjudicator is the person
the app works as; each key commits one decision at once through the operations, and every page
hears of it through the broadcast. A decision is the human consensus reports use.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from html import escape

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QMouseEvent, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from physgrade.changes import Changes, RecordKind
from physgrade.grading import GradingItem, grading_item
from physgrade.project import Project
from physgrade.rubric import RUBRICS, Criterion, Rubric, value_text
from physgrade.tasks import Task
from physgrade.team.adjudication import (
    Decision,
    Dispute,
    Scoring,
    clear_decision,
    decisions,
    disputes,
    scorings,
    set_decision,
)
from physgrade.wording import count
from physgrade_ui import figure_keys, preferences, reading, style
from physgrade_ui.figure_keys import FigureKeys
from physgrade_ui.grader import show_person
from physgrade_ui.operations import Operations, Write
from physgrade_ui.pages import Section
from physgrade_ui.reading_view import BufferedReadingView
from physgrade_ui.scoring import CriterionRow
from physgrade_ui.widgets import ElidedLabel, EmptyState, RowCursor, SessionHeader, label, restyle, shortcuts

#: The list's filters: value, name, what it shows.
FILTERS = (("open", "Open", "Disputes with a criterion still to decide (one you settle stays "
                            "listed until the list is read afresh)"),
           ("all", "All", "Every disputed response, settled or not"))
#: The largest difference worth asking for: the widest range of any criterion.
MOST_DIFFERENCE = max(c.maximum for rubric in RUBRICS.values() for c in rubric.criteria)
#: The keys, as the help overlay lists them.
KEYS = (("↑  ↓  K  J", "Previous / next criterion"),
        ("0 – 9", "Final value of the criterion (then the next disputed one)"),
        ("N", "Final value N/A (where the rubric allows it)"),
        ("⌫  Del", "Clear the final value"),
        ("E", "Note on the final value you just set (after ↑ ↓, the current one): type, "
              "then Enter; Esc cancels"),
        ("Enter  →  PgDn", "Next unsettled dispute"),
        ("←  PgUp", "Previous dispute"),
        ("Space", "Scroll the reading down (Shift: up)"),
        figure_keys.KEYS)
HINT = ("↑ ↓ criterion   ·   0–9  N  final value   ·   ⌫ clear   ·   E note   ·   "
        "Enter → next dispute   ·   ← back   ·   F1 every key")
NO_DISPUTES = ("No responses are disputed: the graders agree (or only one person graded each "
               "response).")
ALL_SETTLED = ("Every disputed response has a final value on each disputed criterion; reports "
               "use them as the consensus. Show all disputes to revise a decision.")
NO_ADJUDICATOR = ("Say who you are first (Grading ▸ Change Grader…): decisions are kept under "
                  "your name.")
#: What the Final column says of a criterion without a decision.
TO_DECIDE, AGREED, NO_MAJORITY = "to decide", "agreed", "no majority"


def state_text(dispute: Dispute) -> str:
    """A dispute's progress: "settled", or "k of n decided"."""
    if dispute.settled:
        return "settled"
    return f"{len(dispute.decided)} of {len(dispute.disputed)} decided"


def majority(values: list[int | None]) -> tuple[bool, int | None]:
    """Whether more than half of ``values`` agree, and on what (None: N/A)."""
    for value in dict.fromkeys(values):
        if values.count(value) * 2 > len(values):
            return True, value
    return False, None


def cell_html(main: str, under: str | None = None, color: str | None = None) -> str:
    """A decision table cell: a value, large, with a line of small text under it. Both are
    escaped here (notes are people's words: never markup)."""
    tint = f" color: {color};" if color else ""
    html = f'<div style="font-size: 13pt; font-weight: 600;{tint}">{escape(main)}</div>'
    if under:
        html += f'<div style="font-size: 9pt; color: {style.MUTED};">{escape(under)}</div>'
    return html


def _read_disputes(min_difference: int, project: Project, task: Task) -> list[Dispute]:
    """On a worker: every dispute of the project."""
    return disputes(project, min_difference)


# -- the decision table ----------------------------------------------------------------------


class DecisionRow:
    """One criterion's cells in the decision table, highlighted together."""

    def __init__(self, criterion: Criterion, cells: list[QLabel]) -> None:
        self.criterion = criterion
        self.cells = cells

    def set_current(self, current: bool) -> None:
        for cell in self.cells:
            restyle(cell, "current", current)


class DecisionTable(RowCursor, QWidget):  # type: ignore[misc]  # RowCursor.move hides QWidget.move
    """Criteria by graders, and the Final column: what a person needs to decide, side by side.

    A disputed row shows every grader's note under their value; on the other rows a note is
    marked ✎ (its text in the tool tip) and spelled out while the row is current. The column
    heads are a widget of their own, :attr:`head`, kept as wide as the columns, so that they
    can stay in sight above the rows as these scroll. The table holds the keyboard: the
    page's keys act on its current row.
    """

    clicked = Signal(int)  # a row clicked

    def __init__(self, head_parent: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("decision_table")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.grid = QGridLayout(self)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setSpacing(0)
        self.head = QWidget(head_parent)
        self.head.setObjectName("decision_head")
        self.head_row = QHBoxLayout(self.head)
        self.head_row.setContentsMargins(0, 0, 0, 0)
        self.head_row.setSpacing(0)
        self.rows: list[DecisionRow] = []
        self.current = 0
        self.heads: list[QLabel] = []
        self._shape: tuple[str, tuple[str, ...]] | None = None
        self._row_of: dict[QWidget, int] = {}
        self.scorings: list[Scoring] = []
        self.decisions: dict[str, Decision] = {}
        self.disputed: tuple[str, ...] = ()
        self.adjudicator = ""

    def show_dispute(self, rubric: Rubric, scored: list[Scoring],
                     decided: dict[str, Decision], disputed: tuple[str, ...],
                     adjudicator: str, keep_current: bool) -> None:
        """Show ``scored`` and ``decided`` under ``rubric``; unless ``keep_current`` the
        current row becomes the first disputed criterion still to decide."""
        self.scorings, self.decisions, self.disputed = scored, decided, disputed
        self.adjudicator = adjudicator
        graders = tuple(scoring.grader for scoring in scored)
        if self._shape != (rubric.key, graders):
            self._build(rubric, graders)
        for column, grader in enumerate(graders, start=1):
            self.heads[column].setText(grader + (" (you)" if grader == adjudicator else ""))
        for index in range(len(self.rows)):
            self._fill(index)
        if keep_current:
            self.set_current(self.current)
        else:
            keys = [row.criterion.key for row in self.rows]
            open_ = [keys.index(key) for key in disputed if key not in decided and key in keys]
            self.set_current(open_[0] if open_ else
                             keys.index(disputed[0]) if disputed and disputed[0] in keys else 0)
        QTimer.singleShot(0, self, self._align_heads)  # new text may have moved the columns

    def _align_heads(self) -> None:
        """Make each column head as wide as its column."""
        if not self.rows:
            return
        self.grid.activate()
        for column, head in enumerate(self.heads):
            head.setFixedWidth(self.grid.cellRect(0, column).width())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._align_heads()

    def _build(self, rubric: Rubric, graders: tuple[str, ...]) -> None:
        """Make the cells of a rubric's rows and these graders' columns."""
        for layout in (self.grid, self.head_row):
            while (taken := layout.takeAt(0)) is not None:
                old = taken.widget()
                if old is not None:  # not the heads' closing stretch
                    old.hide()
                    old.deleteLater()
        for column in range(self.grid.columnCount()):
            self.grid.setColumnStretch(column, 0)
            self.grid.setColumnMinimumWidth(column, 0)
        self._row_of.clear()
        final = len(graders) + 1
        self.heads = [label(text, "decision-head", self.head)
                      for text in ("Criterion", *graders, "Final")]
        for column, head in enumerate(self.heads):
            head.setTextFormat(Qt.TextFormat.PlainText)
            head.setWordWrap(True)
            head.setProperty("column", "final" if column == final else "")
            self.head_row.addWidget(head)
        self.head_row.addStretch(1)  # over the rows' scroll bar
        self.rows = []
        for index, criterion in enumerate(rubric.criteria):
            cells = []
            for column in range(final + 1):
                cell = label("", "decision-cell", self)
                cell.setTextFormat(Qt.TextFormat.RichText)
                cell.setWordWrap(True)
                # The columns' widths are the grid's to give (graders' alike), not the text's.
                policy = QSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
                policy.setHeightForWidth(True)
                cell.setSizePolicy(policy)
                cell.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
                cell.setProperty("current", False)
                cell.setProperty("disputed", False)
                cell.setProperty("column", "criterion" if column == 0 else
                                 "final" if column == final else "grader")
                self.grid.addWidget(cell, index, column)
                self._row_of[cell] = index
                cells.append(cell)
            self.rows.append(DecisionRow(criterion, cells))
        self.grid.setColumnMinimumWidth(0, 118)  # "Interpretation", the longest name
        for column in range(1, final):
            self.grid.setColumnStretch(column, 1)
        self.grid.setColumnMinimumWidth(final, 80)
        self._shape = (rubric.key, graders)
        self.current = 0

    def _fill(self, index: int) -> None:
        """Write one row's cells from what is shown (the current row spells its notes out)."""
        row = self.rows[index]
        criterion = row.criterion
        key = criterion.key
        disputed = key in self.disputed
        spelled = disputed or index == self.current
        criterion_cell, *grader_cells, final_cell = row.cells
        mark = f' <span style="color: {style.WARN};">≠</span>' if disputed else ""
        criterion_cell.setText(
            f'<span style="color: {style.ACCENT}; font-family: monospace; font-weight: 700;">'
            f'{escape(key)}</span>{mark}<div style="font-size: 9pt; color: {style.MUTED};">'
            f"{escape(criterion.name)}</div>")
        criterion_cell.setToolTip(f"{criterion.name} (0–{criterion.maximum}): {criterion.help}"
                                  + ("\nThe graders differ here." if disputed else ""))
        for cell, scoring in zip(grader_cells, self.scorings):
            note = scoring.notes.get(key)
            if key not in scoring.values:
                cell.setText(cell_html("—", "not scored", style.MUTED))
            else:
                shown = value_text(scoring.values[key]) + ("" if spelled or not note else "  ✎")
                cell.setText(cell_html(shown, note if spelled else None))
            cell.setToolTip(f"{scoring.grader}: {note}" if note else "")
        decision = self.decisions.get(key)
        if decision is not None:
            who = "you" if decision.adjudicator == self.adjudicator else decision.adjudicator
            final_cell.setText(cell_html(value_text(decision.value), f"decided by {who}",
                                         style.GOOD) + (
                f'<div style="font-size: 9pt;">{escape(decision.note)}</div>'
                if decision.note and spelled else ""))
            final_cell.setToolTip(f"Decided by {decision.adjudicator} on "
                                  f"{decision.decided_at[:10]}"
                                  + (f": {decision.note}" if decision.note else ""))
        elif disputed:
            final_cell.setText(cell_html("—", TO_DECIDE, style.WARN))
            final_cell.setToolTip("No final value yet: a digit sets it.")
        else:
            given = [s.values[key] for s in self.scorings if key in s.values]
            agreed, value = majority(given)
            final_cell.setText(cell_html(value_text(value) if agreed else "—",
                                         AGREED if agreed else NO_MAJORITY, style.MUTED))
            final_cell.setToolTip("The graders' majority stands; a digit overrides it."
                                  if agreed else "No majority: a digit decides it.")
        for cell in row.cells:
            restyle(cell, "disputed", disputed)

    def set_current(self, index: int) -> None:
        """Move the current row; the rows left and reached show their notes as they should."""
        before = self.current
        super().set_current(index)
        for changed in {before, self.current}:
            if 0 <= changed < len(self.rows) and self.scorings:
                self._fill(changed)

    @property
    def current_criterion(self) -> Criterion | None:
        return self.rows[self.current].criterion if self.rows else None

    def mousePressEvent(self, event: QMouseEvent) -> None:
        """A click on a row makes it current (the cells are labels: the table hears it)."""
        child = self.childAt(event.position().toPoint())
        row = self._row_of.get(child) if child is not None else None
        if row is not None:
            self.clicked.emit(row)
        super().mousePressEvent(event)


# -- the page --------------------------------------------------------------------------------


class AdjudicatePage(QWidget):
    """Decide the final values of the open project's disputed criteria."""

    page_title = "Adjudicate"

    def __init__(self, ops: Operations, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ops = ops
        self.project: Project | None = None
        self.adjudicator: str | None = None
        self.found: list[Dispute] = []         # every dispute, as last read
        self.loaded = False                    # the first read of the list is back
        self.kept: set[str] = set()            # listed while open: they stay once settled
        self.dispute: Dispute | None = None    # on show
        self.item: GradingItem | None = None
        self.trail: list[str] = []             # the disputes shown before, for ←
        self._editors: dict[tuple[str, bool], list[CriterionRow]] = {}
        self._editor: CriterionRow | None = None
        #: The row a decision key has just decided, the cursor having moved on from it by
        #: itself: E writes its note. None once the adjudicator moves the cursor.
        self.decided_by_key: int | None = None
        self._after_note: int | None = None    # the row the cursor goes back to after a note

        self.header = self._make_header()
        self.list = QListWidget()
        self.list.setObjectName("disputes")
        self.list.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the keys stay on the table
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)  # whole in the tool tip
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setMinimumWidth(180)
        self.list.currentRowChanged.connect(self._row_chosen)
        self.reader = BufferedReadingView(reading.CSS)
        self.reader.rendered.connect(self._rendered)
        self.reader.show_html(reading.placeholder("Choose a disputed response."))
        self.side = self._make_side()
        self.session = QSplitter(Qt.Orientation.Horizontal)
        self.session.setObjectName("adjudicate_session")
        self.session.addWidget(self.list)
        self.session.addWidget(self.reader)
        self.session.addWidget(self.side)
        self.session.setStretchFactor(1, 1)
        self.session.setChildrenCollapsible(False)
        self.panes = preferences.KeptPanes(self.session, preferences.ADJUDICATE_PANES,
                                           self._lay_out_default)

        self.empty = EmptyState("Nothing to adjudicate", [("", None)], "Show all disputes", self)
        self.empty_button = self.empty.button
        self.empty_button.clicked.connect(self._empty_action)
        self.body = QStackedWidget()
        self.body.addWidget(self.empty)
        self.body.addWidget(self.session)
        self.hint = ElidedLabel()  # it gives way before the page grows wider than the screen
        self.hint.setText(HINT)
        self.hint.setProperty("role", "muted")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 8)
        layout.setSpacing(8)
        layout.addWidget(self.header)
        layout.addWidget(self.body, 1)
        layout.addWidget(self.hint)
        self._make_keys()
        self._show_state()

    # -- building -------------------------------------------------------------------------------

    def _make_header(self) -> SessionHeader:
        """The controls, made here and laid out (and so owned) by the header."""
        self.difference = QSpinBox()
        self.difference.setObjectName("min_difference")
        self.difference.setRange(1, MOST_DIFFERENCE)
        self.difference.setFocusPolicy(Qt.FocusPolicy.ClickFocus)  # digits stay with the table
        self.difference.setToolTip("List a response when its graders' values of a criterion "
                                   "differ by at least this much (N/A against a value always "
                                   "counts)")
        self.difference.valueChanged.connect(self._difference_changed)
        self.difference.editingFinished.connect(self.focus_table)
        self.filter = QComboBox()
        self.filter.setObjectName("dispute_filter")
        self.filter.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        for index, (value, name, meaning) in enumerate(FILTERS):
            self.filter.addItem(name, value)
            self.filter.setItemData(index, meaning, Qt.ItemDataRole.ToolTipRole)
        self.filter.currentIndexChanged.connect(self._filter_changed)
        header = SessionHeader("Adjudicate", (("Differ by at least", self.difference),
                                              ("Show", self.filter)), self)
        self.adjudicator_label, self.stats, self.position = (header.person, header.stats,
                                                             header.position)
        self.stats.setObjectName("adjudicate_stats")
        return header

    def _make_side(self) -> QWidget:
        """The dispute's heading, the decision table (it scrolls, with the comments under it)
        and, always in sight below, the current criterion's final value."""
        side = QWidget()
        side.setObjectName("adjudicate_side")
        side.setMinimumWidth(400)
        self.response_id = label("", "alias", side)
        self.response_id.setTextFormat(Qt.TextFormat.PlainText)
        self.state = label("", "review-state", side)
        self.state.setTextFormat(Qt.TextFormat.PlainText)
        self.facts = label("", "muted", side)
        self.facts.setTextFormat(Qt.TextFormat.PlainText)
        self.facts.setWordWrap(True)

        sheet = QWidget()
        self.table = DecisionTable(side, sheet)
        self.table.clicked.connect(self._row_clicked)
        self.comments_title = label("Overall comments", "section", sheet)
        self.comments = label("", None, sheet)
        self.comments.setTextFormat(Qt.TextFormat.RichText)  # made here, every word escaped
        self.comments.setWordWrap(True)
        self.comments.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        sheet_layout = QVBoxLayout(sheet)
        sheet_layout.setContentsMargins(0, 0, 4, 0)
        sheet_layout.setSpacing(6)
        sheet_layout.addWidget(self.table)
        sheet_layout.addWidget(self.comments_title)
        sheet_layout.addWidget(self.comments)
        sheet_layout.addStretch(1)
        self.sheet = QScrollArea(side)
        self.sheet.setObjectName("decision_sheet")
        self.sheet.setWidget(sheet)
        self.sheet.setWidgetResizable(True)
        self.sheet.setFrameShape(QScrollArea.Shape.NoFrame)
        # Rows change height as their text wraps to a new width: the current one stays in sight.
        self.sheet.viewport().installEventFilter(self)
        self.table.installEventFilter(self)

        self.editor_parent = side  # each rubric's editors are made when it is first shown
        self.editor_box = QVBoxLayout()
        self.editor_box.setContentsMargins(0, 0, 0, 0)
        column = QVBoxLayout(side)
        column.setContentsMargins(12, 4, 8, 4)
        column.setSpacing(6)
        heading = QHBoxLayout()
        heading.addWidget(self.response_id)
        heading.addStretch(1)
        heading.addWidget(self.state)
        column.addLayout(heading)
        column.addWidget(self.facts)
        column.addWidget(self.table.head)
        column.addWidget(self.sheet, 1)
        column.addWidget(label("Final value", "section", side))
        column.addLayout(self.editor_box)
        return side

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:
            QTimer.singleShot(0, self, self._reveal_current)
        return super().eventFilter(watched, event)

    def _make_keys(self) -> None:
        """The adjudication keys, on the table (not on the header, whose spin box takes
        digits, nor on the note, which takes Enter)."""
        key = partial(shortcuts, self.table)
        key(["Up", "K"], partial(self.move_criterion, -1))
        key(["Down", "J"], partial(self.move_criterion, 1))
        for digit in range(10):
            key([str(digit)], partial(self.decide_key, digit))
        key(["N"], partial(self.decide_key, None))
        key(["Backspace", "Delete"], self.clear)
        key(["E"], self.open_note)
        key(["Return", "Enter", "Right", "PgDown"], self.next_dispute)
        key(["Left", "PgUp"], self.previous_dispute)
        key(["Space"], partial(self.reader.scroll_by_page, 1))
        key(["Shift+Space"], partial(self.reader.scroll_by_page, -1))
        self.figures = FigureKeys(self.table, self.reader, self.ops.say)

    def help_section(self) -> Section:
        return ("Adjudicate", list(KEYS))

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        for view in self.reader.views:  # the reading at the zoom the grader chose
            view.setZoomFactor(preferences.ZOOM.get())
        QTimer.singleShot(0, self, self.panes.lay_out)

    def _lay_out_default(self) -> None:
        """The list narrow and the decisions a third or so."""
        width = self.session.width()
        listed = max(190, min(250, width * 18 // 100))
        side = max(440, min(540, width * 38 // 100))
        self.session.setSizes([listed, width - listed - side, side])

    # -- the page -------------------------------------------------------------------------------

    def open(self, project: Project | None, adjudicator: str | None) -> None:
        """Show ``project``'s disputes to ``adjudicator``; the filters and the dispute on show
        stay while the project is the same."""
        same = (project is not None and self.project is not None
                and self.project.path == project.path)
        self.project, self.adjudicator = project, adjudicator
        self.panes.open(project.path if project is not None else None)
        show_person(self.adjudicator_label, "Adjudicating", adjudicator)
        if not same:
            self.found, self.loaded, self.kept = [], False, set()
            self.trail.clear()
            self.dispute = self.item = None
            self.list.clear()
        elif self.dispute is not None and adjudicator is not None:
            self._reread(render=False)  # "you" is somebody else now
        self._show_state()
        self._read()

    def apply(self, changes: Changes) -> None:
        """Scores, decisions or raters changed: the dispute on show is read again now, the
        list in the background (a dispute settled stays listed, marked settled). Decisions on
        the dispute on show alone (each key's) change only its decisions and its marker: those
        are read again, and nothing else."""
        if not changes.touches(RecordKind.SCORES, RecordKind.ADJUDICATIONS, RecordKind.RATERS,
                               RecordKind.QUESTIONS, RecordKind.RESPONSES):
            return
        if (self.dispute is not None and self.item is not None
                and changes.kinds == {RecordKind.ADJUDICATIONS}
                and changes.responses == {self.dispute.response_id}):
            self._show_decisions(keep_current=True)
            return
        if self.dispute is not None and (changes.responses is None
                                         or self.dispute.response_id in changes.responses):
            self._reread(render=changes.touches(RecordKind.QUESTIONS, RecordKind.RESPONSES))
        self._read()

    def stop(self) -> None:
        """Nothing runs on this page's behalf but reads, which the operations end."""

    def focus_widget(self) -> QWidget:
        """The decision table; with nothing to decide, the empty state's button."""
        return self.table if self.body.currentWidget() is self.session else self.empty_button

    def focus_search(self) -> bool:
        return False

    def focus_table(self) -> None:
        if self.body.currentWidget() is self.session:
            self.table.setFocus(Qt.FocusReason.OtherFocusReason)

    def _take_keyboard(self) -> None:
        """Put the keyboard on the table, unless the person is typing in this page's spin box,
        drop-down or a note."""
        focus = QApplication.focusWidget()
        typing = isinstance(focus, (QLineEdit, QAbstractSpinBox, QComboBox)) and \
            self.isAncestorOf(focus)
        if self.isVisible() and not typing:
            self.focus_table()

    # -- the list -------------------------------------------------------------------------------

    def _read(self) -> None:
        """Read the disputes in the background; :meth:`_listed` shows them."""
        if self.project is None or self.adjudicator is None:
            return
        self.ops.read(partial(_read_disputes, self.difference.value()), self._listed, key=self)

    def _listed(self, found: list[Dispute]) -> None:
        """The disputes are read: list those the filter shows (and those kept), the one on
        show staying on show."""
        self.found, self.loaded = found, True
        if self.showing_open:
            self.kept |= {dispute.response_id for dispute in found if not dispute.settled}
        self._fill_list(self.dispute.response_id if self.dispute else None)

    @property
    def showing_open(self) -> bool:
        return self.filter.currentData() == "open"

    @property
    def listed(self) -> list[Dispute]:
        """The disputes in the list, in its order."""
        return [self.list.item(row).data(Qt.ItemDataRole.UserRole)
                for row in range(self.list.count())]

    def _fill_list(self, keep: str | None) -> None:
        """List the disputes the filter shows, ``keep`` chosen if listed, else the first
        unsettled one."""
        shown = [d for d in self.found if not self.showing_open or d.response_id in self.kept]
        ids = [d.response_id for d in shown]
        if ids == [d.response_id for d in self.listed]:  # the same rows: markers only
            for row, dispute in enumerate(shown):
                if self.list.item(row).data(Qt.ItemDataRole.UserRole) != dispute:
                    self._describe(self.list.item(row), dispute)
        else:
            self.list.blockSignals(True)
            self.list.clear()
            for dispute in shown:
                self._describe(QListWidgetItem(self.list), dispute)
            self.list.blockSignals(False)
        self._show_state()
        if not shown:
            self.dispute = self.item = None
            return
        self._select(ids.index(keep) if keep in ids else
                     next((i for i, d in enumerate(shown) if not d.settled), 0))

    def _describe(self, item: QListWidgetItem, dispute: Dispute) -> None:
        item.setData(Qt.ItemDataRole.UserRole, dispute)
        item.setText(f"{dispute.question_id} · {dispute.model}\n"
                     f"{', '.join(dispute.disputed)}  ·  "
                     + ("✓ settled" if dispute.settled else state_text(dispute)))
        item.setToolTip(f"{dispute.response_id} · {dispute.topic or 'no topic'}\n"
                        f"Graded by {', '.join(dispute.graders)}\n"
                        f"Disputed: {', '.join(dispute.disputed)} · {state_text(dispute)}")
        item.setForeground(QColor(style.GOOD) if dispute.settled else
                           self.list.palette().text().color())

    def _select(self, row: int) -> None:
        """Make ``row`` the list's current row and show its dispute."""
        if self.list.currentRow() == row:  # the list would not say so
            self._row_chosen(row)
        else:
            self.list.setCurrentRow(row)

    def _row_chosen(self, row: int) -> None:
        """A row became current (a click, a key, the list read again): show its dispute, the
        one shown before kept for ←."""
        if row < 0 or self.project is None:
            return
        dispute = self.list.item(row).data(Qt.ItemDataRole.UserRole)
        moved = self.dispute is None or dispute.response_id != self.dispute.response_id
        if moved and self.dispute is not None:
            self.trail.append(self.dispute.response_id)
        self.show_dispute(dispute, render=moved)
        self._show_stats()
        self._take_keyboard()

    def _difference_changed(self) -> None:
        self.kept.clear()
        self._read()

    def _filter_changed(self) -> None:
        self.kept = {d.response_id for d in self.found if not d.settled}
        self._fill_list(self.dispute.response_id if self.dispute else None)
        self.focus_table()

    def _show_state(self) -> None:
        """The session, or the empty state saying why there is nothing to decide."""
        ready = self.project is not None and self.adjudicator is not None
        has_items = ready and self.list.count() > 0
        self.body.setCurrentWidget(self.session if has_items else self.empty)
        if has_items and not self.panes.laid_out:
            QTimer.singleShot(0, self, self.panes.lay_out)
        for widget in (self.difference, self.filter):
            widget.setEnabled(ready)
        self._show_stats()
        if has_items:
            return
        button = None
        if self.project is None:
            title, text = "No project", "Open a project to adjudicate its disputes."
        elif self.adjudicator is None:
            title, text, button = "Who is adjudicating?", NO_ADJUDICATOR, "Change grader…"
        elif not self.loaded:
            title, text = "Finding disputes…", "Reading where the graders differ."
        elif not self.found and self.difference.value() > 1:
            title = "Nothing to adjudicate"
            text = (f"No response has graders whose values of a criterion differ by "
                    f"{self.difference.value()} or more.")
            button = "Show every difference"
        elif not self.found:
            title, text = "Nothing to adjudicate", NO_DISPUTES
        else:
            title, text, button = "All settled", ALL_SETTLED, "Show all disputes"
        self.empty.say(title, text, button)

    def _empty_action(self) -> None:
        text = self.empty_button.text()
        if text == "Change grader…":
            self.ops.ask_person.emit()
        elif text == "Show every difference":
            self.difference.setValue(1)
        else:
            self.filter.setCurrentIndex(self.filter.findData("all"))

    def _show_stats(self) -> None:
        self.hint.setVisible(self.body.currentWidget() is self.session)
        if not self.found or self.project is None or self.adjudicator is None:
            self.stats.setText("")
            self.position.setText("")
            return
        settled = sum(1 for dispute in self.found if dispute.settled)
        total = len(self.found)
        self.stats.setText(f"{count(total, 'disputed response')}   ·   "
                           f"{settled:,} settled   ·   {total - settled:,} to settle")
        row = self.list.currentRow()
        self.position.setText(f"{row + 1:,} of {self.list.count():,}" if row >= 0 else "")

    # -- the dispute on show --------------------------------------------------------------------

    def show_dispute(self, dispute: Dispute, render: bool = True) -> None:
        """Put ``dispute`` on show: its reading (unless ``render`` is False: the same response)
        and its decisions."""
        self.dispute = dispute
        self.decided_by_key = None
        self._reread(render, keep_current=not render)

    def _reread(self, render: bool, keep_current: bool = True) -> None:
        """Read the response on show again: the people's scorings, the decisions, the text."""
        assert self.project is not None and self.dispute is not None
        response_id = self.dispute.response_id
        item = grading_item(self.project, response_id, self.adjudicator or "")
        if item is None:  # removed: the list, read again, lets it go
            self.ops.say(f"Response {response_id} is no longer in the project.")
            return
        self.item = item
        if render:
            self.reader.show_html(reading.grading_html(item))
        self._show_decisions(keep_current)

    def _show_decisions(self, keep_current: bool) -> None:
        """Fill the side from the project: the table, the current criterion, the comments,
        and the list's marker of this dispute."""
        assert self.project is not None and self.dispute is not None and self.item is not None
        response_id = self.dispute.response_id
        scored = scorings(self.project, response_id)
        decided = decisions(self.project, response_id)
        self.dispute = replace(self.dispute, decided=tuple(key for key in self.dispute.disputed
                                                           if key in decided))
        item = self.item
        self.table.show_dispute(item.rubric, scored, decided, self.dispute.disputed,
                                self.adjudicator or "", keep_current)
        if not keep_current:
            QTimer.singleShot(0, self, self._reveal_current)  # once the new rows are laid out
        self.response_id.setText(response_id)
        self.facts.setText(f"{item.question.id} · {item.model} · {item.rubric.title} rubric"
                           + (" · multiple choice" if item.question.multiple_choice else "")
                           + f" · graded by {', '.join(s.grader for s in scored)}")
        self.state.setText("✓ Settled" if self.dispute.settled else
                           state_text(self.dispute).capitalize())
        restyle(self.state, "state", "done" if self.dispute.settled else "open")
        comments = [(s.grader, s.comment) for s in scored if s.comment]
        self.comments.setText("".join(f"<p><b>{escape(who)}</b><br>{escape(text)}</p>"
                                      for who, text in comments))
        self.comments.setVisible(bool(comments))
        self.comments_title.setVisible(bool(comments))
        self._show_editor()
        row = next((r for r in range(self.list.count())
                    if self.list.item(r).data(Qt.ItemDataRole.UserRole).response_id
                    == response_id), None)
        if row is not None:
            self._describe(self.list.item(row), self.dispute)
        self.found = [self.dispute if d.response_id == response_id else d for d in self.found]
        self._show_stats()

    def _show_editor(self) -> None:
        """Under the table, the current criterion's final value with what each value means."""
        item = self.item
        criterion = self.table.current_criterion
        if item is None or criterion is None:
            return
        shape = (item.rubric.key, item.question.multiple_choice)
        if shape not in self._editors:
            rows = []
            for each in item.rubric.criteria:
                row = CriterionRow(each, item.question.multiple_choice, self.editor_parent)
                row.set_current(True)  # it spells out what each value means
                row.buttons.buttonClicked.connect(partial(self._value_clicked, each.key))
                row.note.returnPressed.connect(partial(self._note_done, row))
                row.note.cancelled.connect(partial(self._note_cancelled, row))
                row.hide()
                self.editor_box.addWidget(row)
                rows.append(row)
            self._editors[shape] = rows
        editor = next(row for row in self._editors[shape] if row.criterion.key == criterion.key)
        if editor is not self._editor:
            self._end_refusal()
            if self._editor is not None:
                self._editor.hide()
            self._editor = editor
            editor.show()
        editor.describe(item.levels.get(criterion.key, {}))
        decision = self.table.decisions.get(criterion.key)
        editor.show_value(decision is not None, decision.value if decision else None,
                          decision.note if decision else None)

    def _rendered(self) -> None:
        QTimer.singleShot(0, self, self._prepare_next)

    def _prepare_next(self) -> None:
        """Lay out the response Enter will most likely show, out of sight."""
        target = self._next_row()
        if self.project is None or target is None:
            return
        upcoming = grading_item(self.project, self.listed[target].response_id,
                                self.adjudicator or "")
        if upcoming is not None:
            self.reader.prepare(reading.grading_html(upcoming))

    # -- moving ---------------------------------------------------------------------------------

    def move_criterion(self, delta: int) -> None:
        """↑ / ↓: the previous or next criterion."""
        self.set_criterion(self.table.current + delta)

    def set_criterion(self, index: int) -> None:
        self.decided_by_key = None
        if not self.table.rows:
            return
        self.table.set_current(index)
        self._show_editor()
        self._reveal_current()

    def _reveal_current(self) -> None:
        """Scroll the table to the current criterion, where the table is taller than its
        pane."""
        if self.table.rows:
            content = self.sheet.widget()
            assert content is not None  # set in __init__
            layout = content.layout()
            assert layout is not None
            layout.activate()  # the rows' heights as the text wraps now
            self.sheet.ensureWidgetVisible(self.table.rows[self.table.current].cells[0], 0, 24)

    def _row_clicked(self, row: int) -> None:
        self.set_criterion(row)
        self.focus_table()

    def _next_disputed(self) -> None:
        """After a decision: the next disputed criterion still to decide (else simply the next
        disputed one), wrapping round."""
        keys = [row.criterion.key for row in self.table.rows]
        rows = len(keys)
        order = [(self.table.current + offset) % rows for offset in range(1, rows + 1)]
        disputed = [i for i in order if keys[i] in self.table.disputed]
        open_ = [i for i in disputed if keys[i] not in self.table.decisions]
        if open_ or disputed:
            self.set_criterion((open_ or disputed)[0])

    def _next_row(self) -> int | None:
        """The list row of the next unsettled dispute after the one on show (wrapping round);
        once every one is settled, simply the next row. None: nowhere to go."""
        row, rows = self.list.currentRow(), self.list.count()
        if row < 0:
            return None
        listed = self.listed
        for offset in range(1, rows):
            candidate = (row + offset) % rows
            if not listed[candidate].settled:
                return candidate
        return row + 1 if row + 1 < rows and listed[row].settled else None

    def next_dispute(self) -> None:
        """Enter / → / PgDn: the next unsettled dispute."""
        if self.list.currentRow() < 0:
            return
        target = self._next_row()
        if target is None:
            self.ops.say("This is the last dispute left to settle." if not
                         self.listed[self.list.currentRow()].settled
                         else "Every dispute in the list is settled.")
            return
        self._select(target)

    def previous_dispute(self) -> None:
        """← / PgUp: back to the dispute shown before (else the one above it)."""
        row = self.list.currentRow()
        if row < 0:
            return
        ids = [d.response_id for d in self.listed]
        while self.trail and self.trail[-1] not in ids:
            self.trail.pop()
        target = ids.index(self.trail.pop()) if self.trail else row - 1
        if target < 0:
            self.ops.say("This is the first dispute in the list.")
            return
        self.list.blockSignals(True)  # going back leaves no trail
        self.list.setCurrentRow(target)
        self.list.blockSignals(False)
        self.show_dispute(self.listed[target])
        self._show_stats()
        self.focus_table()

    # -- deciding -------------------------------------------------------------------------------

    def decide_key(self, value: int | None) -> None:
        """A digit (or N for N/A): the final value of the current criterion, if it takes it;
        then the next disputed criterion."""
        criterion = self.table.current_criterion
        if self.item is None or criterion is None:
            return
        allowed = criterion.allowed_values(self.item.question.multiple_choice)
        if value is None and not criterion.allows_na:
            self._refuse(f"{criterion.key} ({criterion.name}) has no N/A: it takes "
                         f"{', '.join(map(str, allowed))}.")
            return
        if value is not None and value not in allowed:
            self._refuse(f"{criterion.key} takes {', '.join(map(str, allowed))}"
                         + (" or N/A" if criterion.allows_na else "") + ".")
            return
        if self.decide(criterion.key, value):
            decided = self.table.current
            self._next_disputed()
            self.decided_by_key = decided

    def decide(self, criterion: str, value: int | None, note: str | None = None) -> bool:
        """Commit the final value of ``criterion`` now (``note`` None keeps the note)."""
        if self.dispute is None or self.adjudicator is None:
            self.ops.say(NO_ADJUDICATOR)
            return False
        response_id = self.dispute.response_id
        decided = set(self.table.decisions) | {criterion}
        settled = set(self.dispute.disputed) <= decided
        message = (f"{response_id}: final {criterion} = {value_text(value)}."
                   + ("  Settled: Enter for the next dispute." if settled else ""))
        return self._write(partial(set_decision, adjudicator=self.adjudicator,
                                   response_id=response_id, criterion=criterion, value=value,
                                   note=note), message if note is None else
                           f"{response_id}: note on the final {criterion} saved.")

    def clear(self) -> None:
        """Backspace / Delete: withdraw the current criterion's final value."""
        criterion = self.table.current_criterion
        if self.dispute is None or criterion is None:
            return
        if criterion.key not in self.table.decisions:
            self.ops.say(f"{criterion.key} has no final value to clear.")
            return
        response_id = self.dispute.response_id
        self._write(partial(clear_decision, response_id=response_id, criterion=criterion.key),
                    f"{response_id}: final {criterion.key} cleared; the graders' values stand.")

    def _write(self, write: Write, message: str) -> bool:
        if not self.ops.write(write, done=lambda _changes: self.ops.say(message),
                              what="final value"):
            self._show_editor()  # a clicked button shows what is stored
            return False
        return True

    def _refuse(self, text: str) -> None:
        """Say why a key did nothing, beside the criterion and in the status bar."""
        self.ops.say(text)
        if self._editor is not None:
            self._editor.refuse(text)

    def _end_refusal(self) -> None:
        if self._editor is not None:
            self._editor.end_refusal()

    def _value_clicked(self, criterion: str, button: QPushButton) -> None:
        """A value button clicked: decide it, or withdraw it if it was the decision."""
        decision = self.table.decisions.get(criterion)
        value = button.property("value")
        self.decided_by_key = None  # the clicked value is the current row's
        if decision is not None and decision.value == value:
            self.clear()
        else:
            self.decide(criterion, value)
        self.focus_table()

    def open_note(self) -> None:
        """E: a note on the final value a decision key has just set (the cursor goes back to
        it until Enter or Esc), else on the current criterion's.

        The editor opens even without a final value (its Enter then asks for one): a refused E
        would leave the note's text to the decision keys.
        """
        if self._editor is None:
            return
        if self.decided_by_key is not None and self.decided_by_key != self.table.current:
            self._after_note = self.table.current
            self.set_criterion(self.decided_by_key)
        self._editor.note.show()
        self._editor.note.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self._editor.note.selectAll()

    def _note_done(self, editor: CriterionRow) -> None:
        """Enter: keep the note; without a final value the editor keeps the text and the
        keyboard (a note belongs to a decision)."""
        key = editor.criterion.key
        decision = self.table.decisions.get(key)
        note = editor.note.text().strip()
        if decision is None and note:
            self._refuse(f"A note goes with a final value: Esc, decide {key}, then E.")
            return
        editor.note.clearFocus()
        if decision is not None and note != (decision.note or ""):
            self.decide(key, decision.value, note)
        self._end_note()

    def _note_cancelled(self, editor: CriterionRow) -> None:
        editor.note.clearFocus()
        self._show_editor()
        self._end_note()

    def _end_note(self) -> None:
        """The keyboard back on the table, its cursor where it was before E."""
        if self._after_note is not None:
            self.set_criterion(self._after_note)
            self._after_note = None
        self.focus_table()
