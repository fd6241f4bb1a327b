"""Bloom's taxonomy annotation: label questions by cognitive level and knowledge type, fast.

A session mode in the manner of the workbench: one question on show, read large, with two
pickers under it (cognitive level on the number row, 1–6; knowledge type on Q W E R, as the
keyboard lays them out). A model's suggestion can stand beside the pickers — A or Enter takes
it — or be hidden for blind labelling. Every pick is committed at once through the window's
operations, which tell every page what changed; once both dimensions are picked the next
question comes on show by itself.

In the Disagreements filter the page adjudicates instead: the other annotators' labels and the
current final label are shown, and the same keys set the question's final label.
"""

from __future__ import annotations

import time
from functools import partial
from html import escape
from typing import Callable

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QShowEvent
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from physgrade.annotation import session
from physgrade.annotation.labels import set_bloom_final, set_bloom_label
from physgrade.annotation.session import BloomItem, Label
from physgrade.changes import Changes, RecordKind
from physgrade.maths import to_html
from physgrade.project import Project
from physgrade.queries import question as stored_question
from physgrade.taxonomy import BLOOM_COGNITIVE, BLOOM_KNOWLEDGE
from physgrade_ui import figure_keys, reading, style
from physgrade_ui.figure_keys import FigureKeys
from physgrade_ui.grader import show_person
from physgrade_ui.operations import Operations
from physgrade_ui.pages import Section
from physgrade_ui.reading_view import BufferedReadingView
from physgrade_ui.widgets import EmptyState, SessionHeader, label, polish, restyle, shortcuts

#: The keys of the two pickers, in the vocabularies' order: the number row and Q W E R.
COGNITIVE_KEYS = tuple(str(n) for n in range(1, len(BLOOM_COGNITIVE) + 1))
KNOWLEDGE_KEYS = ("Q", "W", "E", "R")
#: What each level and type means, for the buttons' tool tips.
MEANINGS = {
    "Remember": "recall facts, terms, formulas",
    "Understand": "explain ideas or concepts in one's own words",
    "Apply": "use a procedure or formula in a given situation",
    "Analyze": "break a situation into parts and relate them",
    "Evaluate": "justify a judgement or choice against criteria",
    "Create": "put parts together into a new model, design or solution",
    "Factual": "terms, details, units, constants",
    "Conceptual": "principles, models, theories and how they relate",
    "Procedural": "methods, techniques and when to use them",
    "Metacognitive": "knowledge of one's own thinking and strategies",
}
#: The filters as the bar names them (the core's names are the data).
FILTER_NAMES = {"unlabelled": "Unlabelled", "all": "All", "disagreements": "Disagreements"}
#: The keys, as the hint line and the help overlay list them.
KEYS = (("1 – 6", "Cognitive level (Remember … Create)"),
        ("Q  W  E  R", "Knowledge type (Factual … Metacognitive)"),
        ("A  Enter", "Accept the suggestion (both), then the next question"),
        ("⌫  Del", "Clear my label (adjudicating: the final label)"),
        ("N  →", "Next question"),
        ("P  ←", "Previous question"),
        ("B", "Blind: hide / show the suggestion"),
        ("Space", "Scroll the question down (Shift: up)"),
        figure_keys.KEYS)
HINT = (("1–6", "cognitive"), ("Q W E R", "knowledge"), ("A ↵", "accept suggestion"),
        ("⌫", "clear"), ("N →", "next"), ("P ←", "previous"), ("B", "blind"))
ADJUDICATING = ("Adjudicating: your choice becomes the final label. The same keys set it; "
                "the annotators' own labels stay as they are.")
NO_ANNOTATOR = "Say who you are first (Grading ▸ Change Grader…): labels are kept under your name."
#: Extra style for the question: larger type than the workbench's reading.
CSS = reading.CSS + """
body { font-size: 18px; line-height: 1.6; padding: 22px 34px 48px; }
h1 { font-size: 21px; }
.meta { font-size: 14px; }
.question { padding: 16px 22px; font-size: 19px; }
.options td.label { width: 30px; }
"""


def hint_html() -> str:
    """The hint line under the session: our own text, so rich text is safe here."""
    cap = (f'<span style="color: {style.ACCENT}; font-family: monospace; '
           'font-weight: 700;">{}</span>')
    return "&nbsp;&nbsp;·&nbsp;&nbsp;".join(f"{cap.format(escape(keys))} {escape(what)}"
                                            for keys, what in HINT)


def label_text(given: Label | None) -> str:
    """A label as one line: "Apply · Procedural", a dash for a dimension not given."""
    if given is None or (given.cognitive is None and given.knowledge is None):
        return "—"
    return f"{given.cognitive or '—'} · {given.knowledge or '—'}"


def question_html(item: BloomItem, project: Project) -> str:
    """The question alone (no responses, no stored Bloom labels): heading, facts, the text
    with its options and expected answer."""
    facts = [item.topic or "no topic", item.kind]
    shown = stored_question(project, item.question_id)
    if shown is not None and shown.region:
        facts.append(f"region: {shown.region}")
    heading = (f"<h1>{escape(item.question_id)}</h1>"
               f'<p class="meta">{" · ".join(escape(f) for f in facts)}</p>')
    if shown is not None:
        return heading + reading.question_block(shown)
    text = to_html(item.question)  # the question went away since the queue was read
    return heading + f'<div class="question">{text}</div>'


# -- the pickers --------------------------------------------------------------------------------


class Picker(QObject):
    """One dimension's choices as checkable buttons on a row of ``grid`` (each with its key);
    the suggested one is marked. The two pickers share the grid, so their buttons line up."""

    picked = Signal(str)

    def __init__(self, title: str, values: tuple[str, ...], keys: tuple[str, ...],
                 grid: QGridLayout, row: int, parent: QWidget) -> None:
        super().__init__(parent)
        self.values = values
        self.group = QButtonGroup(self)
        self.group.setExclusive(False)  # none checked: not labelled yet
        self.buttons: dict[str, QPushButton] = {}
        grid.addWidget(label(title, "picker-title", parent), row, 0)
        for column, (value, key) in enumerate(zip(values, keys), start=1):
            button = QPushButton(f"{key}   {value}", parent)
            button.setCheckable(True)
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # keys go to the session
            button.setProperty("role", "bloom")
            button.setProperty("suggested", False)
            button.setToolTip(f"{value}: {MEANINGS.get(value, '')} — key {key}")
            button.clicked.connect(partial(self.picked.emit, value))
            self.group.addButton(button)
            self.buttons[value] = button
            grid.addWidget(button, row, column)

    def show_values(self, chosen: str | None, suggested: str | None) -> None:
        for value, button in self.buttons.items():
            button.setChecked(value == chosen)
            restyle(button, "suggested", value == suggested)

    @property
    def chosen(self) -> str | None:
        return next((v for v, b in self.buttons.items() if b.isChecked()), None)


# -- the page -----------------------------------------------------------------------------------


class BloomPage(QWidget):
    """Label the open project's questions with Bloom's taxonomy."""

    page_title = "Bloom labels"

    def __init__(self, ops: Operations, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ops = ops
        self.project: Project | None = None
        self.annotator: str | None = None
        self.items: list[str] = []
        self.index: int | None = None
        self.item: BloomItem | None = None
        self.picked: set[str] = set()            # the dimensions picked on the question on show
        self.pending: Label | None = None        # half a final label, until the other half
        self.session_labelled: set[str] = set()  # questions labelled since the session started
        self.session_adjudicated: set[str] = set()
        self.started = time.monotonic()
        self.clock: Callable[[], float] = time.monotonic  # tests may turn it
        self._filling = False

        self.header = self._make_header()
        self.reader = BufferedReadingView(CSS)
        self.reader.rendered.connect(self._rendered)
        self.reader.show_html(reading.placeholder("Open a project to label its questions."))
        self.side = self._make_side()
        self.pickers = self._make_pickers()
        upper = QSplitter(Qt.Orientation.Horizontal)
        upper.setObjectName("bloom_reading")
        upper.addWidget(self.reader)
        upper.addWidget(self.side)
        upper.setStretchFactor(0, 1)
        upper.setChildrenCollapsible(False)
        self.upper = upper
        self._sized = False
        self.session = QWidget()
        self.session.setObjectName("bloom_session")
        session_layout = QVBoxLayout(self.session)
        session_layout.setContentsMargins(0, 0, 0, 0)
        session_layout.setSpacing(8)
        session_layout.addWidget(upper, 1)
        session_layout.addWidget(self.pickers)
        self.hint = label(hint_html(), "muted")
        self.hint.setTextFormat(Qt.TextFormat.RichText)
        session_layout.addWidget(self.hint)

        self.empty = EmptyState("Nothing to label", [("", None)], "Show all questions", self)
        self.empty_button = self.empty.button
        self.empty_button.clicked.connect(self._empty_action)
        self.body = QStackedWidget()
        self.body.addWidget(self.empty)
        self.body.addWidget(self.session)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 8)
        layout.setSpacing(8)
        layout.addWidget(self.header)
        layout.addWidget(self.body, 1)
        self.keys = self._make_keys()
        self.ticker = QTimer(self)  # the pace goes down while nobody labels
        self.ticker.setInterval(10_000)
        self.ticker.timeout.connect(self._show_stats)
        self._show_state()

    # -- building -----------------------------------------------------------------------------

    def _make_header(self) -> SessionHeader:
        """The controls, made here and laid out (and so owned) by the header."""

        def combo(name: str) -> QComboBox:
            box = QComboBox()
            box.setObjectName(name)
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            box.setFocusPolicy(Qt.FocusPolicy.ClickFocus)  # letters stay with the session
            return box

        self.filter = combo("bloom_filter")
        for key in session.FILTERS:
            self.filter.addItem(FILTER_NAMES.get(key, key.capitalize()), key)
        self.filter.setItemData(0, "Questions you have not labelled yet",
                                Qt.ItemDataRole.ToolTipRole)
        self.filter.setItemData(1, "Every question, to revise your labels",
                                Qt.ItemDataRole.ToolTipRole)
        self.filter.setItemData(2, "Questions the annotators disagree on: adjudicate the final "
                                "label", Qt.ItemDataRole.ToolTipRole)
        self.topic = combo("bloom_topic")
        self.topic.setMinimumWidth(170)
        self.source = combo("bloom_source")
        self.source.setMinimumWidth(150)
        self.source.setToolTip("Whose labels are shown as the suggestion")
        self.blind = QCheckBox("Blind")
        self.blind.setObjectName("bloom_blind")
        self.blind.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.blind.setToolTip("Hide the suggestion, to label independently — key B")
        self.filter.currentIndexChanged.connect(self._queue_changed)
        self.topic.currentIndexChanged.connect(self._queue_changed)
        self.source.currentIndexChanged.connect(self._suggestion_changed)
        self.blind.toggled.connect(self._suggestion_changed)
        header = SessionHeader("Bloom labels", (("Show", self.filter), ("Topic", self.topic),
                                                ("Suggestions", self.source), ("", self.blind)),
                               self)
        self.annotator_label, self.stats, self.position = (header.person, header.stats,
                                                           header.position)
        self.stats.setObjectName("bloom_stats")
        return header

    def _make_side(self) -> QScrollArea:
        side = QWidget()
        self.state = label("", "bloom-state", side)
        self.state.setTextFormat(Qt.TextFormat.PlainText)
        self.question_id = label("", "alias", side)
        self.question_id.setTextFormat(Qt.TextFormat.PlainText)
        self.mine_label = label("", "muted", side)
        self.mine_label.setTextFormat(Qt.TextFormat.PlainText)
        self.banner = label(ADJUDICATING, "adjudicating", side)
        self.banner.setObjectName("bloom_banner")
        self.banner.setWordWrap(True)
        self.banner.hide()

        self.suggestion = QFrame(side)
        self.suggestion.setObjectName("bloom_suggestion")
        self.suggestion.setProperty("role", "suggestion")
        self.suggestion_title = label("", "suggestion-title", self.suggestion)
        self.suggestion_title.setTextFormat(Qt.TextFormat.PlainText)
        self.suggestion_value = label("", "suggestion-value", self.suggestion)
        self.suggestion_value.setTextFormat(Qt.TextFormat.PlainText)
        self.suggestion_rationale = label("", "rationale-plain", self.suggestion)
        self.suggestion_rationale.setTextFormat(Qt.TextFormat.PlainText)  # a model's words
        self.suggestion_rationale.setWordWrap(True)
        self.suggestion_rationale.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse)
        self.accept_button = QPushButton("Accept   A / Enter", self.suggestion)
        self.accept_button.setProperty("role", "primary")
        self.accept_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.accept_button.clicked.connect(self.accept_suggestion)
        inner = QVBoxLayout(self.suggestion)
        inner.setContentsMargins(14, 10, 14, 12)
        inner.setSpacing(4)
        inner.addWidget(self.suggestion_title)
        inner.addWidget(self.suggestion_value)
        inner.addWidget(self.suggestion_rationale)
        inner.addSpacing(4)
        inner.addWidget(self.accept_button, 0, Qt.AlignmentFlag.AlignLeft)
        self.no_suggestion = label("", "muted", side)
        self.no_suggestion.setTextFormat(Qt.TextFormat.PlainText)
        self.no_suggestion.setWordWrap(True)

        self.others = QFrame(side)
        self.others.setObjectName("bloom_others")
        self.others.setProperty("role", "card")
        self.others_grid = QGridLayout(self.others)
        self.others_grid.setContentsMargins(14, 10, 14, 12)
        self.others_grid.setHorizontalSpacing(16)
        self.others_grid.setVerticalSpacing(4)
        self.others.hide()

        column = QVBoxLayout(side)
        column.setContentsMargins(12, 4, 6, 4)
        column.setSpacing(8)
        heading = QHBoxLayout()
        heading.addWidget(self.question_id)
        heading.addStretch(1)
        heading.addWidget(self.state)
        column.addLayout(heading)
        column.addWidget(self.mine_label)
        column.addWidget(self.banner)
        column.addSpacing(4)
        column.addWidget(self.suggestion)
        column.addWidget(self.no_suggestion)
        column.addWidget(self.others)
        column.addStretch(1)
        scroller = QScrollArea()
        scroller.setWidget(side)
        scroller.setWidgetResizable(True)
        scroller.setFrameShape(QScrollArea.Shape.NoFrame)
        scroller.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroller.setMinimumWidth(340)
        return scroller

    def _make_pickers(self) -> QFrame:
        card = QFrame(self)
        card.setObjectName("bloom_pickers")
        card.setProperty("role", "card")
        card.setProperty("adjudicating", False)
        card.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # the keys' home
        grid = QGridLayout(card)
        grid.setContentsMargins(16, 12, 16, 12)
        grid.setHorizontalSpacing(8)
        grid.setVerticalSpacing(10)
        self.cognitive = Picker("Cognitive level", BLOOM_COGNITIVE, COGNITIVE_KEYS, grid, 0, card)
        self.knowledge = Picker("Knowledge type", BLOOM_KNOWLEDGE, KNOWLEDGE_KEYS, grid, 1, card)
        self.cognitive.picked.connect(partial(self._clicked, "cognitive"))
        self.knowledge.picked.connect(partial(self._clicked, "knowledge"))
        grid.setColumnMinimumWidth(0, 140)
        for column in range(1, len(BLOOM_COGNITIVE) + 1):
            grid.setColumnStretch(column, 1)
        return card

    def _make_keys(self) -> list[QAction]:
        """The labelling keys, on the session (not on the bar, whose drop-downs take letters)."""
        actions = []
        for value, shortcut in zip(BLOOM_COGNITIVE, COGNITIVE_KEYS):
            actions += shortcuts(self.session, (shortcut,), partial(self.pick, "cognitive", value))
        for value, shortcut in zip(BLOOM_KNOWLEDGE, KNOWLEDGE_KEYS):
            actions += shortcuts(self.session, (shortcut,), partial(self.pick, "knowledge", value))
        actions += shortcuts(self.session, ("A", "Return", "Enter"), self.accept_suggestion)
        actions += shortcuts(self.session, ("Backspace", "Delete"), self.clear)
        actions += shortcuts(self.session, ("N", "Right"), self.next_item)
        actions += shortcuts(self.session, ("P", "Left"), self.previous_item)
        actions += shortcuts(self.session, ("B",), self.blind.toggle)
        actions += shortcuts(self.session, ("Space",), partial(self.reader.scroll_by_page, 1))
        actions += shortcuts(self.session, ("Shift+Space",), partial(self.reader.scroll_by_page, -1))
        self.figures = FigureKeys(self.session, self.reader, self.ops.say)
        return actions + [self.figures.next_action, self.figures.back_action]

    def help_section(self) -> Section:
        return ("Bloom labels", list(KEYS))

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.ticker.start()
        QTimer.singleShot(0, self, self._size_reading)

    def hideEvent(self, event) -> None:  # noqa: ANN001 - Qt's QHideEvent
        self.ticker.stop()
        super().hideEvent(event)

    def _size_reading(self) -> None:
        if self._sized or not self.upper.isVisible():
            return
        self._sized = True
        width = self.upper.width()
        side = max(360, min(460, width * 34 // 100))
        self.upper.setSizes([width - side, side])

    def focus_session(self) -> None:
        if self.body.currentWidget() is self.session:
            self.pickers.setFocus(Qt.FocusReason.OtherFocusReason)

    # -- the project --------------------------------------------------------------------------

    @property
    def adjudicating(self) -> bool:
        return self.filter.currentData() == "disagreements"

    @property
    def suggester(self) -> str | None:
        return self.source.currentData() if self.source.count() else None

    @property
    def blinded(self) -> bool:
        return self.blind.isChecked()

    def open(self, project: Project | None, annotator: str | None) -> None:
        """Show ``project``'s questions for ``annotator``; the filters, the question on show
        and the session (its counts and pace) go on while the project and the annotator stay
        the same."""
        same = (project is not None and self.project is not None
                and self.project.path == project.path and self.annotator == annotator)
        if not same:
            self.session_labelled.clear()
            self.session_adjudicated.clear()
            self.started = self.clock()
        self.project, self.annotator = project, annotator
        show_person(self.annotator_label, "Labelling", annotator)
        if project is None:  # the empty state says so (the reading is out of sight)
            self.item = self.index = None
            self.items = []
            self._show_state()
            return
        self._filling = True
        topic = self.topic.currentData() if same else None
        self.topic.clear()
        self.topic.addItem("All topics", None)
        for name in session.topics(project):
            self.topic.addItem(name, name)
        self.topic.setCurrentIndex(max(0, self.topic.findData(topic)) if topic else 0)
        self._fill_sources(keep=same)
        self._filling = False
        keep = self.item.question_id if same and self.item is not None else None
        self._load_queue(keep)

    def apply(self, changes: Changes) -> None:
        """Re-read what the changes touch. New or changed questions: the topics and the queue
        (keeping the question on show); labels: the question on show, the suggestion
        sources and the counts. The queue otherwise stays as read, so that a question
        labelled does not vanish under the annotator."""
        if changes.touches(RecordKind.QUESTIONS):
            self.open(self.project, self.annotator)
            return
        if not changes.touches(RecordKind.BLOOM):
            return
        suggester = self.suggester
        self._filling = True
        self._fill_sources(keep=True)
        self._filling = False
        on_show = self.item is not None and (changes.questions is None
                                             or self.item.question_id in changes.questions)
        if on_show or (self.item is not None and self.suggester != suggester):
            self._show_item(render=False)
        else:
            self._show_stats()

    def _fill_sources(self, keep: bool) -> None:
        """List the models whose labels can be suggested. With ``keep`` the choice stays (also
        "None") while it is still offered; otherwise, or once it is gone, the first model is
        chosen."""
        kept, chosen = keep and self.source.count() > 0, self.suggester
        self.source.clear()
        self.source.addItem("None", None)
        for name in session.suggesters(self.project) if self.project is not None else []:
            self.source.addItem(name, name)
        index = (0 if chosen is None else self.source.findData(chosen)) if kept else -1
        self.source.setCurrentIndex(index if index >= 0 else min(1, self.source.count() - 1))

    def focus_widget(self) -> QWidget:
        """The pickers; with nothing to label, the empty state's button."""
        return self.pickers if self.body.currentWidget() is self.session else self.empty_button

    def focus_search(self) -> bool:
        return False

    def stop(self) -> None:
        """The window is closing: the pace stops ticking (the project is let go of with every
        page's, as it closes)."""
        self.ticker.stop()

    def _queue_changed(self) -> None:
        if not self._filling:
            self._load_queue()
            self.focus_session()

    def _suggestion_changed(self) -> None:
        if not self._filling and self.item is not None:
            self._show_item(render=False)
        self.focus_session()

    def _load_queue(self, keep: str | None = None) -> None:
        """Read the queue of the filter and topic; it stays as read while the annotator works
        through it (a labelled question does not vanish under them), so P goes back."""
        self.item = self.index = None
        if self.project is None or self.annotator is None:
            self.items = []
        else:
            self.items = session.queue(self.project, self.annotator,
                                       self.filter.currentData() or "unlabelled",
                                       self.topic.currentData())
        self._show_state()
        if self.items:
            self.show_index(self.items.index(keep) if keep in self.items else 0)

    def _show_state(self) -> None:
        """The session, or the empty state saying why there is nothing and what to do."""
        has_items = self.project is not None and self.annotator is not None and bool(self.items)
        self.body.setCurrentWidget(self.session if has_items else self.empty)
        for widget in (self.filter, self.topic, self.source, self.blind):
            widget.setEnabled(self.project is not None and self.annotator is not None)
        adjudicating = self.adjudicating
        if self.pickers.property("adjudicating") != adjudicating:
            self.pickers.setProperty("adjudicating", adjudicating)
            for part in [self.pickers, *self.pickers.findChildren(QWidget)]:
                polish(part)  # the buttons' look depends on the card's property
        self.banner.setVisible(adjudicating)
        self._show_stats()
        if has_items:
            return
        button, title, text = None, "Nothing to label", ""
        if self.project is None:
            title, text = "No project", "Open a project to label its questions."
        elif self.annotator is None:
            title, text, button = "Who is labelling?", NO_ANNOTATOR, "Change grader…"
        elif not session.topics(self.project) and not session.queue(
                self.project, self.annotator, "all"):
            title = "No questions yet"
            text = ("Bloom labels are given to questions. This project has none yet: import "
                    "questions first (File ▸ Import).")
        elif adjudicating:
            title = "No disagreements"
            text = ("No question here has annotators disagreeing on its Bloom label, so there "
                    "is nothing to adjudicate. Label more questions, or have a colleague label "
                    "the same ones.")
            button = "Label unlabelled questions"
        elif self.filter.currentData() == "unlabelled":
            title = "All labelled"
            where = (f" in {self.topic.currentText()}" if self.topic.currentData() else "")
            text = (f"You have labelled every question{where}. Show all questions to revise "
                    "your labels, or the disagreements to adjudicate the final labels.")
            button = "Show all questions"
        else:
            text = "No question matches the topic. Choose another topic."
            button = "Show all topics"
        self.empty.say(title, text, button)

    def _empty_action(self) -> None:
        text = self.empty_button.text()
        if text == "Change grader…":
            self.ops.ask_person.emit()
        elif text == "Show all topics":
            self.topic.setCurrentIndex(0)
        elif text == "Label unlabelled questions":
            self.filter.setCurrentIndex(self.filter.findData("unlabelled"))
        else:
            self.filter.setCurrentIndex(self.filter.findData("all"))

    def _show_stats(self) -> None:
        if self.project is None or self.annotator is None:
            self.stats.setText("")
            self.position.setText("")
            return
        done = len(self.session_labelled)
        minutes = max((self.clock() - self.started) / 60, 1)  # never more than were given
        pace = f"{done / minutes:.1f} / min" if done else "— / min"
        parts = [f"{done:,} labelled this session", f"pace {pace}",
                 f"{session.labelled_count(self.project, self.annotator):,} labelled in all"]
        if self.session_adjudicated:
            parts.insert(1, f"{len(self.session_adjudicated):,} adjudicated")
        self.stats.setText("   ·   ".join(parts))
        self.position.setText(f"{self.index + 1:,} of {len(self.items):,}"
                              if self.index is not None and self.items else "")

    # -- moving -------------------------------------------------------------------------------

    def show_index(self, index: int) -> None:
        if self.project is None or not 0 <= index < len(self.items):
            return
        self.index = index
        self.picked.clear()
        self.pending = None
        self._show_item(render=True)
        self.focus_session()

    def _read_item(self) -> BloomItem:
        # show_index put a question on show: a queue is read only with a project and annotator
        assert self.project is not None and self.annotator is not None and self.index is not None
        return session.item(self.project, self.items[self.index], self.annotator,
                            None if self.blinded else self.suggester)

    def _show_item(self, render: bool) -> None:
        """Read the question on show again and show it (the reading only when it changed)."""
        self.item = self._read_item()
        item = self.item
        if render:
            assert self.project is not None  # as _read_item found
            self.reader.show_html(question_html(item, self.project))
        adjudicating = self.adjudicating
        suggestion = None if self.blinded else item.suggestion
        shown = self._shown_label()
        self.cognitive.show_values(shown.cognitive if shown else None,
                                   suggestion.cognitive if suggestion else None)
        self.knowledge.show_values(shown.knowledge if shown else None,
                                   suggestion.knowledge if suggestion else None)
        self.question_id.setText(item.question_id)
        complete = shown is not None and shown.cognitive is not None and \
            shown.knowledge is not None
        if adjudicating:
            state = ("✓ Adjudicated" if item.adjudicated else "To adjudicate", item.adjudicated)
            self.mine_label.setText(f"Final label: {label_text(item.final)}"
                                    + (f"   ·   picking {label_text(self.pending)}"
                                       if self.pending else ""))
        else:
            state = ("✓ Labelled" if complete else
                     "Half labelled" if shown and (shown.cognitive or shown.knowledge)
                     else "Unlabelled", complete)
            self.mine_label.setText(f"My label: {label_text(item.mine)}")
        self.state.setText(state[0])
        self.state.setProperty("state", "done" if state[1] else "open")
        polish(self.state)
        self._show_suggestion(suggestion, item.suggestion_rationale)
        self._show_others(item if adjudicating else None)
        self._show_stats()

    def _show_suggestion(self, suggestion: Label | None, rationale: str | None) -> None:
        if suggestion is not None:
            self.suggestion_title.setText(f"Suggested by {self.suggester}")
            self.suggestion_value.setText(label_text(suggestion))
            self.suggestion_rationale.setText(rationale or "")
            self.suggestion_rationale.setVisible(bool(rationale))
            self.suggestion.show()
            self.no_suggestion.hide()
            return
        self.suggestion_title.setText("")
        self.suggestion_value.setText("")
        self.suggestion_rationale.setText("")
        self.suggestion.hide()
        self.no_suggestion.setText(
            "Blind: the suggestion is hidden (B shows it)." if self.blinded else
            "No suggestion source chosen." if self.suggester is None else
            f"{self.suggester} has no label for this question.")
        self.no_suggestion.show()

    def _show_others(self, item: BloomItem | None) -> None:
        """The annotators' labels and the final one, while adjudicating."""
        grid = self.others_grid
        while (taken := grid.takeAt(0)) is not None:
            widget = taken.widget()
            assert widget is not None  # it holds labels only
            widget.deleteLater()
        if item is None:
            self.others.hide()
            return
        grid.addWidget(label("Labels", "section", self.others), 0, 0, 1, 2)
        rows = sorted(item.others.items())
        if item.mine is not None:
            rows.append((f"{self.annotator} (you)", item.mine))
        for row, (name, given) in enumerate(rows, start=1):
            who = label(name, None, self.others)
            who.setTextFormat(Qt.TextFormat.PlainText)
            what = label(label_text(given), "label-value", self.others)
            what.setTextFormat(Qt.TextFormat.PlainText)
            grid.addWidget(who, row, 0)
            grid.addWidget(what, row, 1)
        final_row = len(rows) + 1
        final = label("Final" + (" (adjudicated)" if item.adjudicated else ""), "final-name",
                      self.others)
        value = label(label_text(item.final), "final-value", self.others)
        value.setTextFormat(Qt.TextFormat.PlainText)
        grid.addWidget(final, final_row, 0)
        grid.addWidget(value, final_row, 1)
        grid.setColumnStretch(1, 1)
        self.others.show()

    def next_item(self) -> None:
        if self.index is None or self.project is None or self.annotator is None:
            return
        if self.index + 1 < len(self.items):
            self.show_index(self.index + 1)
            return
        if self.filter.currentData() == "unlabelled":
            left = session.queue(self.project, self.annotator, "unlabelled",
                                 self.topic.currentData())
            if not left:
                self.items, self.index, self.item = [], None, None
                self._show_state()
                self.ops.say("All labelled: every question in the filter has your label.")
                return
            self.items = left
            self.ops.say(f"Back to the {len(left):,} question"
                         f"{'' if len(left) == 1 else 's'} you skipped.")
            self.show_index(0)
            return
        self.ops.say("This is the last question in the filter.")

    def previous_item(self) -> None:
        if self.index is None:
            return
        if self.index == 0:
            self.ops.say("This is the first question in the filter.")
            return
        self.show_index(self.index - 1)

    def _rendered(self) -> None:
        QTimer.singleShot(0, self, self._prepare_next)

    def _prepare_next(self) -> None:
        """Lay out the question N will show, out of sight."""
        if (self.project is None or self.annotator is None or self.index is None
                or self.index + 1 >= len(self.items)):
            return
        upcoming = session.item(self.project, self.items[self.index + 1], self.annotator, None)
        self.reader.prepare(question_html(upcoming, self.project))

    # -- labelling ----------------------------------------------------------------------------

    def _clicked(self, dimension: str, value: str) -> None:
        """A picker button clicked: pick it, or take it back if it was the one chosen."""
        shown = self._shown_label()
        current = getattr(shown, dimension) if shown else None
        if current == value and not self.adjudicating:
            self._write_label(**{dimension: None}, keep=shown)
        else:
            self.pick(dimension, value)
        self.focus_session()

    def _shown_label(self) -> Label | None:
        """The label the pickers show: mine, or while adjudicating the final label (or the
        half of a new one picked so far)."""
        if self.item is None:
            return None
        if self.adjudicating:
            return self.pending or self.item.final
        return self.item.mine

    def pick(self, dimension: str, value: str) -> None:
        """A key or a click: set one dimension (keeping the other) and commit it; once both
        dimensions are picked here (or this pick completes the label) move on."""
        if self.item is None:
            return
        before = self._shown_label()
        was_complete = before is not None and before.cognitive is not None and \
            before.knowledge is not None
        if not self._write_label(**{dimension: value}, keep=before):
            return
        self.picked.add(dimension)
        after = self._shown_label()
        complete = after is not None and after.cognitive is not None and \
            after.knowledge is not None
        if complete and (len(self.picked) == 2 or not was_complete):
            self._advance()

    def accept_suggestion(self) -> None:
        """A or Enter: take the suggestion (both dimensions it gives) and move on; with no
        suggestion on show, Enter simply moves on."""
        if self.item is None:
            return
        suggestion = None if self.blinded else self.item.suggestion
        if suggestion is None or (suggestion.cognitive is None and suggestion.knowledge is None):
            self.ops.say("Blind: no suggestion to accept." if self.blinded else
                         "No suggestion to accept for this question.")
            return
        given = {k: v for k, v in (("cognitive", suggestion.cognitive),
                                   ("knowledge", suggestion.knowledge)) if v is not None}
        if self._write_label(**given, keep=self._shown_label()):
            self._advance()

    def clear(self) -> None:
        """Backspace: clear my label (adjudicating: the final label) of the question on show."""
        if self.item is None:
            return
        self.picked.clear()
        self.pending = None
        self._write_label(cognitive=None, knowledge=None, keep=None)

    def _advance(self) -> None:
        if self.index is not None and self.index + 1 < len(self.items):
            self.show_index(self.index + 1)
        else:
            self.next_item()

    def _write_label(self, keep: Label | None, **given: str | None) -> bool:
        """Commit a label made of ``given`` dimensions and ``keep``'s others: the annotator's own,
        or while adjudicating the question's final label."""
        if self.project is None or self.annotator is None or self.item is None:
            self.ops.say(NO_ANNOTATOR)
            return False
        cognitive = given.get("cognitive", keep.cognitive if keep else None)
        knowledge = given.get("knowledge", keep.knowledge if keep else None)
        question_id = self.item.question_id
        if self.adjudicating and (cognitive is None) != (knowledge is None):
            self.pending = Label(cognitive, knowledge)  # a final label needs both halves
            missing = "knowledge type (Q W E R)" if knowledge is None else "cognitive level (1–6)"
            self.ops.say(f"{question_id}: now the {missing} of the final label.")
            self._show_item(render=False)
            return True
        self.pending = None
        final = self.adjudicating
        if final:
            write = partial(set_bloom_final, question_id=question_id, cognitive=cognitive,
                            knowledge=knowledge, adjudicator=self.annotator)
        else:
            write = partial(set_bloom_label, question_id=question_id, annotator=self.annotator,
                            cognitive=cognitive, knowledge=knowledge)
        return self.ops.write(write, done=partial(self._saved, question_id, final,
                                                  Label(cognitive, knowledge)),
                              what="final label" if final else "Bloom label")

    def _saved(self, question_id: str, final: bool, given: Label, changes: Changes) -> None:
        """A label (``final``: the final label) is saved: count it and say so. The question on
        show is read again by :meth:`apply`, which hears of it next."""
        tally = self.session_adjudicated if final else self.session_labelled
        if given.cognitive is not None or given.knowledge is not None:
            tally.add(question_id)
            self.ops.say(f"{question_id}: {'final label' if final else 'labelled'} "
                         f"{label_text(given)}.")
        else:
            tally.discard(question_id)
            self.ops.say(f"{question_id}: {'final label' if final else 'label'} cleared.")
