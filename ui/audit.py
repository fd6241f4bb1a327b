"""The judge audit: an expert reviews LLM judges' verdicts on a stratified sample, blind.

A sample is drawn once (``physgrade.validation.sampling``) from the responses every chosen
judge has a complete verdict on; the reviewer then works through every (response, judge)
verdict of it, in an order of their own (``physgrade.validation.session``). Reviews imported
from files are there too, as the sample "imported", to go on with like any other. The judge on
show is named only by its blind alias ("Judge B"): its real name appears nowhere on this page.
For each criterion the reviewer says how far they agree with the judge's score (2 full,
1 partial, 0 disagree), then labels the verdict as a whole correct, lenient or strict.

Keyboard first, like the workbench: every change (a review, a sample drawn) is committed at
once through the window's operations, which tell every page what changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from html import escape
from typing import Callable

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QShowEvent
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from physgrade.changes import NOTHING, Changes, RecordKind
from physgrade.grading import grading_item
from physgrade.project import Project
from physgrade.selection import NAMED, filter_choices
from physgrade.validation import reviews, sampling, session
from physgrade.validation.sampling import Sample
from physgrade.validation.session import ReviewItem, VerdictView
from physgrade.wording import sentence
from physgrade_ui import figure_keys, reading, style, transfer
from physgrade_ui.figure_keys import FigureKeys
from physgrade_ui.grader import show_person
from physgrade_ui.operations import Operations, Write
from physgrade_ui.pages import Section
from physgrade_ui.reading_view import BufferedReadingView
from physgrade_ui.widgets import EmptyState, RowCursor, SeedField, label, polish, restyle, shortcuts

#: The reviewer's agreement with one criterion's score (the core's scale): value, button text,
#: meaning.
AGREEMENTS = ((reviews.FULL, "2", "Full agreement"), (reviews.PARTIAL, "1", "Partial agreement"),
              (reviews.DISAGREE, "0", "Disagree"))
#: The reviewer's label of a verdict as a whole (the core's labels): value, button text, key,
#: meaning.
VERDICTS = tuple((verdict, verdict.capitalize(), verdict[0].upper(), meaning)
                 for verdict, meaning in reviews.VERDICTS.items())
#: The facets a sample can be stratified over, as the dialog names them.
FACET_NAMES = tuple((facet, NAMED[facet].long_title) for facet in sampling.DEFAULT_STRATA)
#: The keys, as the hint line and the help overlay list them.
KEYS = (("↑  ↓  Tab", "Previous / next criterion"),
        ("2  1  0", "Agree fully / partly / not with the criterion (then the next)"),
        ("⌫  Del", "Clear my agreement with the criterion"),
        ("C  L  S", "Label the verdict correct / lenient / strict"),
        ("N  Enter  →", "Next verdict (the next unfinished one first)"),
        ("P  ←", "Previous verdict"),
        figure_keys.KEYS)
NO_JUDGES = ("An audit has experts check the verdicts of LLM judges, blind: each judge is "
             "shown only as “Judge A”, “Judge B” and so on. This project has no judge verdicts yet: "
             "run a judge first (Judge ▸ Run judge…), or import verdicts (File ▸ Import).")
NO_SAMPLE = ("An audit has experts check the verdicts of LLM judges, blind: each judge is shown "
             "only as “Judge A”, “Judge B” and so on. Start by drawing a sample of responses, stratified "
             "over topics, Bloom levels and models; every chosen judge's verdict on each of them "
             "is then reviewed criterion by criterion.")
NO_REVIEWER = "Say who you are first (Grading ▸ Change Grader…): reviews are kept under your name."


def judges(project: Project) -> list[str]:
    """The rater labels of the project's judges that have given verdicts."""
    return filter_choices(project).judges


def hint_html() -> str:
    """The hint line under the session: our own text, so rich text is safe here."""
    cap = (f'<span style="color: {style.ACCENT}; font-family: monospace; '
           'font-weight: 700;">{}</span>')
    short = ("criterion", "agree 2 / 1 / 0", "clear", "correct / lenient / strict", "next",
             "previous")
    parts = []
    for (keys, _), what in zip(KEYS, short):
        shown = " ".join(cap.format(escape(k)) for k in keys.split())
        parts.append(f"{shown} {escape(what)}")
    return "&nbsp;&nbsp;·&nbsp;&nbsp;".join(parts)


# -- the New sample dialog ------------------------------------------------------------------


@dataclass(slots=True)
class SampleDraw:
    """A sample the reviewer asked for, as a write for the operations; after it ran, the
    sample drawn or the core's reason for refusing it."""

    name: str
    judges: tuple[str, ...]
    per_stratum: int
    seed: int
    strata: tuple[str, ...]
    sample: Sample | None = None
    refusal: str | None = None

    def __call__(self, project: Project) -> Changes:
        """Draw and store it; a refusal of what was asked (no judge, a name taken: the core's
        ValueError) is kept to show next to the form, nothing stored."""
        try:
            self.sample = sampling.draw(project, self.name, self.judges, self.per_stratum,
                                        self.seed, self.strata)
        except ValueError as exc:
            self.refusal = sentence(str(exc))
            return NOTHING
        self.refusal = None
        return self.sample.changes


class NewSampleDialog(transfer.TransferDialog[SampleDraw]):
    """Name, judges, facets, size and seed of a new sample. On accept it is handed to
    ``submit`` (which draws it through the operations): drawn, the dialog closes; refused, it
    stays open with the core's reason, nothing stored."""

    def __init__(self, taken: set[str], judge_labels: list[str],
                 submit: Callable[[SampleDraw], None], parent: QWidget | None = None) -> None:
        super().__init__("New audit sample", "Draw sample", parent)
        self.submit = submit
        number = len(taken) + 1
        while f"Sample {number}" in taken:
            number += 1
        self.name = QLineEdit(f"Sample {number}", self)
        self.name.selectAll()
        self.judges = QListWidget(self)
        self.judges.setObjectName("sample_judges")
        for judge in judge_labels:
            item = QListWidgetItem(judge, self.judges)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
        self.judges.setFixedHeight(min(6, max(2, len(judge_labels))) * 26 + 8)
        self.facets = {facet: QCheckBox(name, self) for facet, name in FACET_NAMES}
        facets = QHBoxLayout()
        facets.setSpacing(16)
        for box in self.facets.values():
            box.setChecked(True)
            facets.addWidget(box)
        facets.addStretch(1)
        self.per_stratum = QSpinBox(self)
        self.per_stratum.setRange(1, 10_000)
        self.per_stratum.setValue(2)
        self.seed = SeedField("Random", "The same seed and data give the same sample", self)

        self.form.addRow("Name", self.name)
        self.form.addRow("Judges", self.judges)
        self.form.addRow("Stratify by", facets)
        self.form.addRow("Responses per stratum", self.per_stratum)
        self.form.addRow("Seed", self.seed)
        note = label("Drawn among the responses every chosen judge has a complete verdict on. "
                     "The same seed and data give the same sample; reviewers see the judges "
                     "only under blind names.", "muted", self)
        note.setWordWrap(True)
        self.form.addRow("", note)
        self.resize(560, self.sizeHint().height())

    def chosen_judges(self) -> list[str]:
        return [self.judges.item(i).text() for i in range(self.judges.count())
                if self.judges.item(i).checkState() == Qt.CheckState.Checked]

    def chosen_facets(self) -> tuple[str, ...]:
        return tuple(facet for facet, box in self.facets.items() if box.isChecked())

    def accept(self) -> None:
        draw = SampleDraw(self.name.text(), tuple(self.chosen_judges()),
                          self.per_stratum.value(), self.seed.value(), self.chosen_facets())
        self.submit(draw)
        if draw.refusal is not None:
            self.refuse(draw.refusal)
        else:  # drawn, or kept until the project is free, or failed (the operations said so)
            self.grant(draw)


# -- the verdict panel ----------------------------------------------------------------------


class AgreementRow(QFrame):
    """One criterion the judge scored: key, name, the judge's score and reason, and the
    reviewer's agreement as three buttons."""

    clicked = Signal(int)

    def __init__(self, key: str, name: str, maximum: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.key = key
        self.maximum = maximum
        self.setProperty("role", "criterion")
        self.setProperty("current", False)
        key_label = label(key, "criterion-key", self)
        key_label.setFixedWidth(40)
        self.score = label("", "judge-score", self)
        self.score.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.score.setMinimumWidth(48)
        self.buttons = QButtonGroup(self)
        self.buttons.setExclusive(False)  # none checked: no agreement given yet
        top = QHBoxLayout()
        top.setSpacing(6)
        top.addWidget(key_label)
        top.addWidget(label(name, "criterion-name", self), 1)
        top.addWidget(self.score)
        top.addSpacing(8)
        for value, text, meaning in AGREEMENTS:
            button = QPushButton(text, self)
            button.setCheckable(True)
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # keys go to the panel
            button.setProperty("role", "agree")
            button.setProperty("value", value)
            button.setToolTip(f"{meaning} — key {value}")
            self.buttons.addButton(button, value)
            top.addWidget(button)
        self.buttons.idClicked.connect(self.clicked)
        self.rationale = label("", "rationale", self)
        self.rationale.setTextFormat(Qt.TextFormat.PlainText)  # a model's words: never HTML
        self.rationale.setWordWrap(True)
        self.rationale.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 7, 10, 7)
        layout.setSpacing(3)
        layout.addLayout(top)
        layout.addWidget(self.rationale)

    def show_values(self, score: int | None, rationale: str | None,
                    agreement: int | None) -> None:
        self.score.setText("N/A" if score is None else f"{score}/{self.maximum}")
        self.score.setToolTip("The judge's score")
        self.rationale.setText(rationale or "")
        self.rationale.setVisible(bool(rationale))
        for button in self.buttons.buttons():
            button.setChecked(button.property("value") == agreement)

    def set_current(self, current: bool) -> None:
        restyle(self, "current", current)


class VerdictPanel(RowCursor, QWidget):  # type: ignore[misc]  # RowCursor.move hides QWidget.move
    """One judge's verdict on the response on show, under its alias only, with the
    reviewer's agreements and label."""

    agreement_clicked = Signal(str, int)   # criterion, 2 / 1 / 0
    verdict_clicked = Signal(str)          # correct / lenient / strict

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view: VerdictView | None = None
        self.rows: list[AgreementRow] = []
        self.current = 0
        self._row_sets: dict[tuple[str, ...], list[AgreementRow]] = {}
        self.alias = label("", "alias", self)
        self.alias.setTextFormat(Qt.TextFormat.PlainText)
        self.state = label("", "review-state", self)
        self.state.setTextFormat(Qt.TextFormat.PlainText)
        self.position = label("", "muted", self)
        self.position.setTextFormat(Qt.TextFormat.PlainText)
        self.position.setWordWrap(True)  # a long line would widen the panel past its column
        heading = QHBoxLayout()
        heading.setSpacing(10)
        heading.addWidget(self.alias)
        heading.addStretch(1)
        heading.addWidget(self.state)
        columns = QHBoxLayout()
        columns.setContentsMargins(10, 0, 10, 0)
        columns.addWidget(label("Criterion", "muted", self), 1)
        columns.addWidget(label("Judge", "muted", self))
        columns.addSpacing(30)
        agree = label("My agreement", "muted", self)
        agree.setMinimumWidth(150)
        agree.setAlignment(Qt.AlignmentFlag.AlignRight)
        columns.addWidget(agree)
        self.row_box = QVBoxLayout()
        self.row_box.setSpacing(4)

        self.comment = label("", None, self)
        self.comment.setTextFormat(Qt.TextFormat.PlainText)
        self.comment.setWordWrap(True)
        self.comment.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.verdict_buttons = QButtonGroup(self)
        self.verdict_buttons.setExclusive(False)
        verdicts = QHBoxLayout()
        verdicts.setSpacing(8)
        for value, text, key, meaning in VERDICTS:
            button = QPushButton(f"{text}   {key}", self)
            button.setCheckable(True)
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            button.setProperty("role", "verdict")
            button.setProperty("verdict", value)
            button.setToolTip(f"{text}: {meaning} — key {key}")
            button.clicked.connect(partial(self.verdict_clicked.emit, value))
            self.verdict_buttons.addButton(button)
            verdicts.addWidget(button, 1)
        self.verdict_note = label("   ·   ".join(
            f"{text}: {meaning.removeprefix('the judge ')}"
            for value, text, _, meaning in VERDICTS if value != reviews.CORRECT), "muted", self)
        self.verdict_note.setWordWrap(True)
        self.finished = label("", "finished", self)
        self.finished.setTextFormat(Qt.TextFormat.PlainText)
        self.finished.setWordWrap(True)
        self.finished.hide()

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addLayout(heading)
        layout.addWidget(self.position)
        layout.addWidget(self.finished)
        layout.addSpacing(4)
        layout.addLayout(columns)
        layout.addLayout(self.row_box)
        layout.addWidget(label("Overall comment", "section", self))
        layout.addWidget(self.comment)
        layout.addWidget(label("Verdict as a whole", "section", self))
        layout.addLayout(verdicts)
        layout.addWidget(self.verdict_note)

    def show_view(self, view: VerdictView, position: str, keep_current: bool = False) -> None:
        """Show ``view``; the current criterion becomes its first without an agreement, unless
        kept."""
        keys = tuple(view.scores)
        for row in self.rows:
            row.hide()
        if keys not in self._row_sets:
            rows = []
            for key in keys:
                criterion = view.rubric.criterion(key)
                row = AgreementRow(key, criterion.name, criterion.maximum, self)
                row.setToolTip(criterion.help)
                row.clicked.connect(partial(self._row_clicked, key))
                self.row_box.addWidget(row)
                rows.append(row)
            self._row_sets[keys] = rows
        self.rows = self._row_sets[keys]
        for row in self.rows:
            row.show_values(view.scores[row.key], view.rationale.get(row.key),
                            view.agreements.get(row.key))
            row.show()
        self.view = view
        self.alias.setText(view.alias)
        self.position.setText(position)
        self.comment.setText(view.comment or "The judge made no overall comment.")
        self.comment.setProperty("role", None if view.comment else "muted")
        polish(self.comment)
        for button in self.verdict_buttons.buttons():
            button.setChecked(button.property("verdict") == view.verdict)
        todo = len([k for k in view.scores if k not in view.agreements])
        self.state.setText("✓ Reviewed" if view.done else
                           f"{todo} to agree" + ("" if view.verdict else " · no label")
                           if todo else "Label the verdict")
        self.state.setProperty("state", "done" if view.done else "open")
        polish(self.state)
        if not keep_current:
            open_rows = [i for i, row in enumerate(self.rows) if row.key not in view.agreements]
            self.set_current(open_rows[0] if open_rows else 0)
        else:
            self.set_current(self.current)

    def show_finished(self, message: str | None) -> None:
        self.finished.setText(message or "")
        self.finished.setVisible(bool(message))

    @property
    def current_key(self) -> str | None:
        return self.rows[self.current].key if self.rows else None

    def _row_clicked(self, key: str, value: int) -> None:
        self.set_current(next(i for i, row in enumerate(self.rows) if row.key == key))
        self.agreement_clicked.emit(key, value)


# -- the page -------------------------------------------------------------------------------


class AuditPage(QWidget):
    """Audit the open project's judges on a sample."""

    page_title = "Audit"

    def __init__(self, ops: Operations, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ops = ops
        self.project: Project | None = None
        self.reviewer: str | None = None
        self.judge_labels: list[str] = []
        self.items: list[ReviewItem] = []
        self.index: int | None = None
        self.view: VerdictView | None = None
        self.trail: list[int] = []  # the items shown before, for P
        self.dialog: NewSampleDialog | None = None

        self.empty = self._make_empty_state()
        self.header = self._make_header()
        self.reader = BufferedReadingView(reading.CSS)
        self.reader.rendered.connect(self._rendered)
        self.reader.show_html(reading.placeholder("Choose a sample."))
        self.panel = VerdictPanel()
        self.panel.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.panel.agreement_clicked.connect(self._agreement_clicked)
        self.panel.verdict_clicked.connect(self.toggle_label)
        side = QWidget()
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(12, 12, 14, 12)
        side_layout.addWidget(self.panel)
        side_layout.addStretch(1)
        self.scroller = QScrollArea()
        self.scroller.setWidget(side)
        self.scroller.setWidgetResizable(True)
        self.scroller.setFrameShape(QScrollArea.Shape.NoFrame)
        self.scroller.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.session = QSplitter(Qt.Orientation.Horizontal)
        self.session.setObjectName("audit_session")
        self.session.addWidget(self.reader)
        self.session.addWidget(self.scroller)
        self.session.setStretchFactor(0, 1)
        self.session.setChildrenCollapsible(False)
        self._sized = False
        self.hint = label(hint_html(), "muted")
        self.hint.setTextFormat(Qt.TextFormat.RichText)

        self.content = QWidget(self)
        content_layout = QVBoxLayout(self.content)
        content_layout.setContentsMargins(0, 0, 0, 0)
        content_layout.setSpacing(8)
        content_layout.addWidget(self.header)
        content_layout.addWidget(self.session, 1)
        content_layout.addWidget(self.hint)
        self.body = QStackedWidget()
        self.body.addWidget(self.empty)
        self.body.addWidget(self.content)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 8)
        layout.addWidget(self.body)
        self.keys = self._make_keys()
        self._show_state()

    # -- building -----------------------------------------------------------------------------

    def _make_empty_state(self) -> QWidget:
        empty = EmptyState("No audit sample yet", [("", None)], "New sample…", self)
        self.empty_title, (self.empty_text,), self.empty_new = empty.title, empty.texts, \
            empty.button
        self.empty_new.clicked.connect(self.new_sample)
        return empty

    def _make_header(self) -> QFrame:
        header = QFrame(self)
        header.setProperty("role", "card")
        title = label("Judge audit", "title", header)
        self.sample = QComboBox(header)
        self.sample.setObjectName("audit_sample")
        self.sample.setMinimumWidth(200)
        self.sample.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.sample.setFocusPolicy(Qt.FocusPolicy.ClickFocus)  # keys stay with the review
        self.sample.currentIndexChanged.connect(self._sample_changed)
        self.new_button = QPushButton("New sample…", header)
        self.new_button.clicked.connect(self.new_sample)
        self.new_button.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.details = label("", "muted", header)
        self.details.setTextFormat(Qt.TextFormat.PlainText)
        self.details.setWordWrap(True)
        self.progress_text = label("", None, header)
        self.progress_text.setTextFormat(Qt.TextFormat.PlainText)
        self.progress_bar = QProgressBar(header)
        self.progress_bar.setTextVisible(False)
        self.progress_bar.setMaximumWidth(180)  # narrower on a small screen
        self.reviewer_label = label("", "person", header)
        self.reviewer_label.setTextFormat(Qt.TextFormat.PlainText)
        top = QHBoxLayout()
        top.setSpacing(12)
        top.addWidget(title)
        top.addSpacing(10)
        top.addWidget(label("Sample", "muted", header))
        top.addWidget(self.sample)
        top.addWidget(self.new_button)
        top.addStretch(1)
        top.addWidget(self.progress_text)
        top.addWidget(self.progress_bar)
        top.addSpacing(10)
        top.addWidget(self.reviewer_label)
        layout = QVBoxLayout(header)
        layout.setContentsMargins(18, 10, 18, 10)
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addWidget(self.details)
        return header

    def _make_keys(self) -> list[QAction]:
        """The review keys, on the session (not on the header, whose drop-down takes letters)."""
        actions = shortcuts(self.session, ("Up", "Backtab"), partial(self.panel.move, -1))
        actions += shortcuts(self.session, ("Down", "Tab"), partial(self.panel.move, 1))
        for value in (2, 1, 0):
            actions += shortcuts(self.session, (str(value),), partial(self.agree_key, value))
        actions += shortcuts(self.session, ("Backspace", "Delete"), self.clear_agreement)
        for verdict, _, shortcut, _ in VERDICTS:
            actions += shortcuts(self.session, (shortcut,), partial(self.set_label, verdict))
        actions += shortcuts(self.session, ("N", "Return", "Enter", "Right"), self.next_item)
        actions += shortcuts(self.session, ("P", "Left"), self.previous_item)
        self.figures = FigureKeys(self.session, self.reader, self.ops.say)
        return actions + [self.figures.next_action, self.figures.back_action]

    def help_section(self) -> Section:
        return ("Judge audit", list(KEYS))

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        QTimer.singleShot(0, self, self._size_session)

    def _size_session(self) -> None:
        if self._sized or not self.session.isVisible():
            return
        self._sized = True
        width = self.session.width()
        side = max(460, self.scroller.minimumWidth(), min(560, width * 38 // 100))
        self.session.setSizes([width - side, side])

    def _fit_side(self) -> None:
        """Keep the panel's column at least as wide as the panel needs: it has no horizontal
        scroll bar, so a narrower column (the splitter, a small window) would cut off the
        agreement and verdict buttons on its right."""
        content = self.scroller.widget()
        assert content is not None  # set in __init__
        layout = content.layout()
        assert layout is not None
        margins = layout.contentsMargins()
        needed = self.panel.minimumSizeHint().width() + margins.left() + margins.right() + \
            self.scroller.verticalScrollBar().sizeHint().width()
        if self.scroller.minimumWidth() != needed:
            self.scroller.setMinimumWidth(needed)

    def focus_panel(self) -> None:
        if self.body.currentWidget() is self.content:
            self.panel.setFocus(Qt.FocusReason.OtherFocusReason)

    # -- the project ----------------------------------------------------------------------------

    def open(self, project: Project | None, reviewer: str | None) -> None:
        """Show ``project``'s samples for ``reviewer``, keeping the sample on show if it is
        the same project."""
        if self.dialog is not None:
            self.dialog.reject()  # its judges and names were the old project's
        same = project is not None and self.project is not None and \
            self.project.path == project.path
        self.project, self.reviewer = project, reviewer
        self.judge_labels = judges(project) if project is not None else []
        self._fill_samples(self.current_sample_id() if same else None)
        self._sample_changed()
        if project is not None and sampling.loose_reviews(project):
            # Reviews imported before imports made the "imported" sample: it takes them now
            # (the broadcast then lists it here).
            self.ops.write(sampling.take_imported, what="sample of imported reviews")

    def apply(self, changes: Changes) -> None:
        """Re-read what the changes touch: the judges offered, the samples, the verdict on
        show and the progress; the sample and the verdict on show stay."""
        if changes.touches(RecordKind.SCORES, RecordKind.RATERS):
            self.judge_labels = judges(self.project) if self.project is not None else []
        if changes.touches(RecordKind.SAMPLES) and self._fill_samples(self.current_sample_id()):
            self._sample_changed()
            return
        self._show_state()
        if self.index is None:
            return
        item = self.items[self.index]
        if changes.touches(RecordKind.QUESTIONS, RecordKind.RESPONSES) and _names(changes.responses,
                                                                       {item.response_id}):
            self.reader.show_html(self._reading(item))
        if changes.touches(RecordKind.REVIEWS, RecordKind.SCORES, RecordKind.SAMPLES) and _names(
                changes.responses, {shown.response_id for shown in self.items}):
            self._show_view(keep_current=True)

    def focus_widget(self) -> QWidget:
        """The review panel; before there is a sample, the button that draws one."""
        return self.panel if self.body.currentWidget() is self.content else self.empty_new

    def focus_search(self) -> bool:
        return False

    def stop(self) -> None:
        """Nothing runs on this page's behalf (the project is let go of with every page's, as
        it closes)."""

    def current_sample_id(self) -> int | None:
        return self.sample.currentData() if self.sample.count() else None

    def _fill_samples(self, choose: int | None) -> bool:
        """List the stored samples with ``choose`` on show (if it is one; else the newest).
        True if that is another sample than was on show (its session is not read yet)."""
        before = self.current_sample_id()
        stored = sampling.samples(self.project) if self.project is not None else []
        self.sample.blockSignals(True)
        self.sample.clear()
        for drawn in stored:
            self.sample.addItem(drawn.name, drawn.id)
            self.sample.setItemData(self.sample.count() - 1, drawn.text(),
                                    Qt.ItemDataRole.ToolTipRole)
        index = self.sample.findData(choose) if choose is not None else -1
        self.sample.setCurrentIndex(index if index >= 0 else self.sample.count() - 1)
        self.sample.blockSignals(False)
        return self.current_sample_id() != before

    def _show_state(self) -> None:
        has_sample = self.project is not None and self.sample.count() > 0
        self.body.setCurrentWidget(self.content if has_sample else self.empty)
        can_draw = self.project is not None and bool(self.judge_labels)
        self.new_button.setEnabled(can_draw)
        self.empty_new.setEnabled(can_draw)
        if not has_sample:
            no_judges = self.project is not None and not self.judge_labels
            self.empty_title.setText("No judges to audit yet" if no_judges
                                     else "No audit sample yet")
            self.empty_text.setText(NO_JUDGES if no_judges else NO_SAMPLE)
        show_person(self.reviewer_label, "Reviewing", self.reviewer)

    # -- samples --------------------------------------------------------------------------------

    def new_sample(self) -> NewSampleDialog | None:
        """The New sample dialog, window-modal but not blocking; a drawn sample is chosen."""
        if self.project is None or self.dialog is not None:
            return None
        taken = {stored.name for stored in sampling.samples(self.project)}
        self.dialog = NewSampleDialog(taken, self.judge_labels, self.draw_sample, self)
        self.dialog.finished.connect(self._dialog_closed)
        self.dialog.open()
        return self.dialog

    def draw_sample(self, draw: SampleDraw) -> None:
        """Draw and store a sample through the operations (it comes on show once stored)."""
        self.ops.write(draw, done=partial(self._drawn, draw), what="sample")

    def _drawn(self, draw: SampleDraw, changes: Changes) -> None:
        if draw.sample is None:  # refused: the dialog, if still open, shows why too
            self.ops.say(f"Sample “{draw.name.strip()}” not drawn: {draw.refusal}")
            return
        self._fill_samples(draw.sample.id)
        self._sample_changed()
        self.ops.say(f"Sample “{draw.sample.name}” drawn: {draw.sample.text()}")

    def _dialog_closed(self) -> None:
        dialog, self.dialog = self.dialog, None
        if dialog is not None:
            dialog.deleteLater()
        QTimer.singleShot(0, self, self.focus_panel)

    def _sample_changed(self) -> None:
        """Read the session of the sample on show, from its first verdict left to review."""
        self.trail.clear()
        self.view = self.index = None
        sample_id = self.current_sample_id()
        if self.project is None or sample_id is None:
            self.items = []
            self.details.setText("")
            self._show_state()
            return
        chosen = sampling.sample(self.project, sample_id)
        facets = ", ".join(name for facet, name in FACET_NAMES if facet in chosen.strata)
        self.details.setText(
            f"{chosen.text()}  ·  the reviews of imported files, to read and change like any "
            "sample's" if chosen.imported else
            f"{chosen.text()}  ·  stratified by {facets or 'nothing'}  ·  "
            f"{chosen.per_stratum:,} per stratum  ·  seed {chosen.seed}")
        self._show_state()
        if self.reviewer is None:
            self.items = []
            self._show_nothing(NO_REVIEWER)
            self._show_progress()
            return
        self.items = session.queue(self.project, sample_id, self.reviewer)
        start = session.next_open(self.items, self.project, self.reviewer)
        self.show_index(start if start is not None else 0)

    def _show_nothing(self, message: str) -> None:
        self.panel.hide()
        self.reader.show_html(reading.placeholder(message))

    # -- moving ---------------------------------------------------------------------------------

    def show_index(self, index: int, keep_current: bool = False) -> None:
        """Put the queue's ``index``-th verdict on show, with its response."""
        if self.project is None or self.reviewer is None or not 0 <= index < len(self.items):
            return
        moved = index != self.index
        self.index = index
        item = self.items[index]
        if moved:
            self.reader.show_html(self._reading(item))
        self._show_view(keep_current=keep_current and not moved)
        self.panel.show()
        self.focus_panel()

    def _reading(self, item: ReviewItem) -> str:
        assert self.project is not None and self.reviewer is not None  # as an item is on show
        shown = grading_item(self.project, item.response_id, self.reviewer)
        if shown is None:
            return reading.placeholder(f"Response {item.response_id} is no longer in the project.")
        return reading.grading_html(shown)

    def _show_view(self, keep_current: bool) -> None:
        # show_index set them all (and clearing any of them clears the index)
        assert self.index is not None and self.project is not None and self.reviewer is not None
        item = self.items[self.index]
        self.view = session.verdict_view(self.project, item, self.reviewer)
        position = (f"Verdict {self.index + 1:,} of {len(self.items):,}  ·  response "
                    f"{item.response_id}  ·  {self.view.rubric.title} rubric"
                    + ("  ·  multiple choice" if self.view.multiple_choice else ""))
        self.panel.show_view(self.view, position, keep_current)
        self._fit_side()
        self._show_progress()

    def _show_progress(self) -> None:
        sample_id = self.current_sample_id()
        if self.project is None or sample_id is None or self.reviewer is None:
            self.progress_text.setText("")
            self.progress_bar.setRange(0, 1)
            self.progress_bar.setValue(0)
            self.panel.show_finished(None)
            return
        done, total = session.progress(self.project, sample_id, self.reviewer)
        self.progress_text.setText(f"{done:,} of {total:,} verdicts reviewed")
        self.progress_bar.setRange(0, max(total, 1))
        self.progress_bar.setValue(done)
        finished = bool(total) and done == total
        self.panel.show_finished(f"Sample finished: you have reviewed all {total:,} verdicts. "
                                 "Changes are still saved as you make them."
                                 if finished else None)

    def next_item(self) -> None:
        """The next verdict not yet finished after this one (wrapping round); once every one
        is finished, simply the next."""
        if self.index is None or not self.items or self.project is None or self.reviewer is None:
            return
        count = len(self.items)
        after = self.items[self.index + 1:] + self.items[:self.index + 1]
        found = session.next_open(after, self.project, self.reviewer)
        if found is not None:
            target = (self.index + 1 + found) % count
            if target == self.index:
                self.ops.say("This is the last verdict left to review.")
                return
        elif self.index + 1 < count:
            target = self.index + 1
        else:
            self.ops.say("Sample finished: every verdict is reviewed.")
            return
        self.trail.append(self.index)
        self.show_index(target)

    def previous_item(self) -> None:
        """Back to the verdict shown before this one (or the one before it in the queue)."""
        if self.index is None:
            return
        target = self.trail.pop() if self.trail else self.index - 1
        if target < 0:
            self.ops.say("This is the first verdict of the sample.")
            return
        self.show_index(target)

    def _rendered(self) -> None:
        QTimer.singleShot(0, self, self._prepare_next)

    def _prepare_next(self) -> None:
        """Lay out the response N will most likely show, out of sight."""
        if self.project is None or self.index is None or self.reviewer is None:
            return
        after = self.items[self.index + 1:]
        found = session.next_open(after, self.project, self.reviewer)
        if found is not None and after[found].response_id != self.items[self.index].response_id:
            self.reader.prepare(self._reading(after[found]))

    # -- reviewing ------------------------------------------------------------------------------

    def agree_key(self, value: int) -> None:
        """2 / 1 / 0 pressed: the agreement with the current criterion, then the next one."""
        key = self.panel.current_key
        if key is not None and self.agree_with(key, value):
            self.panel.move(1)

    def _agreement_clicked(self, criterion: str, value: int) -> None:
        """A click on an agreement button: give it, or take it back if it was given."""
        if self.view is not None and not self.agree_with(
                criterion, None if self.view.agreements.get(criterion) == value else value):
            self._show_view(keep_current=True)  # the button as stored: nothing was saved
        self.focus_panel()

    def agree_with(self, criterion: str, value: int | None) -> bool:
        """Commit the agreement with ``criterion`` now (None clears it)."""
        if self.view is None or self.index is None or self.reviewer is None:
            return False
        item = self.items[self.index]
        what = ("agreement cleared" if value is None else
                next(meaning for level, _, meaning in AGREEMENTS if level == value).lower())
        labelled = self.view.verdict
        if not self._write(partial(reviews.set_review_agreement, reviewer=self.reviewer,
                                   judge_id=item.judge_id, response_id=item.response_id,
                                   criterion=criterion, agreement=value), f"{criterion}: {what}"):
            return False
        if labelled is not None and self.view is not None and self.view.verdict is None:
            # The core clears a label the agreement contradicts ("correct" with a partial one).
            self.ops.say(f"{self.view.alias} on {self.view.response_id}: {criterion}: {what}; "
                         f"the label {labelled} no longer holds and was cleared: label the verdict "
                         "again.")
        return True

    def clear_agreement(self) -> None:
        key = self.panel.current_key
        if key is not None and self.view is not None:
            self.agree_with(key, None)

    def set_label(self, verdict: str | None) -> bool:
        """Commit the reviewer's label of the verdict as a whole (None clears it)."""
        if self.view is None or self.index is None or self.reviewer is None:
            return False
        item = self.items[self.index]
        return self._write(partial(reviews.set_review_verdict, reviewer=self.reviewer,
                                   judge_id=item.judge_id, response_id=item.response_id,
                                   verdict=verdict),
                           f"Verdict labelled {verdict}" if verdict else "Label cleared")

    def toggle_label(self, verdict: str) -> None:
        """A verdict button clicked: set that label, or take it back if it was set."""
        if self.view is not None and not self.set_label(
                None if self.view.verdict == verdict else verdict):
            self._show_view(keep_current=True)  # unchecks the button: nothing was saved
        self.focus_panel()

    def _write(self, write: Write, what: str) -> bool:
        """Commit a review through the operations; once saved, the broadcast has shown it
        (:meth:`apply`), and the status bar says ``what`` was done."""
        if self.project is None or self.reviewer is None:
            self.ops.say(NO_REVIEWER)
            return False
        if not self.ops.write(write, what="review"):
            return False
        if self.view is not None:
            self.ops.say(f"{self.view.alias} on {self.view.response_id}: {what}."
                         + ("  Verdict reviewed — N for the next." if self.view.done else ""))
        return True


def _names(ids: frozenset[str] | None, shown: set[str]) -> bool:
    """Whether changes to ``ids`` (None: any) may touch one of ``shown``."""
    return ids is None or not ids.isdisjoint(shown)
