"""The grading workbench: the queue, the reading (reference beside response) and the P-REFS panel.

Keyboard first, in the manner of a flash-card reviewer: the keys act on the current criterion
of the response on show, every change is written through the core at once (no Save button),
and the grader's place is stored in the project on every move, so reopening resumes there.
Every write goes through :class:`~physgrade_ui.operations.Operations`; what the page shows is
re-read from the project when the write's :class:`~physgrade.changes.Changes` come back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QProgressBar,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from physgrade import scores, step_marks
from physgrade.changes import Changes, RecordKind
from physgrade.grading import Given, GradingItem, compare, grading_item
from physgrade.pace import Pace
from physgrade.project import Project
from physgrade.queue import (
    Position,
    QueueFilter,
    QueueItem,
    facet_values,
    field_values,
    load_position,
    load_queue,
    save_position,
)
from physgrade_ui import figure_keys, preferences, reading
from physgrade_ui.answer_hint import AnswerHints
from physgrade_ui.comparison import ComparisonPanel
from physgrade_ui.figure_keys import FigureKeys
from physgrade_ui.grader import show_person
from physgrade_ui.operations import Operations, Write
from physgrade_ui.pages import Section
from physgrade_ui.queue_view import QueuePanel
from physgrade_ui.reading_bar import ReadingBar
from physgrade_ui.reading_view import BufferedReadingView
from physgrade_ui.scoring import ScoringPanel
from physgrade_ui.step_marking import StepChange, StepMarking
from physgrade_ui.widgets import ElidedLabel, label, named_shortcut, shortcuts

#: the panes' first widths, before the grader has moved a splitter: at 1280×800 the reading
#: keeps the 450 px its formulas are measured at, the rubric its least width, and the queue
#: room for the models' names (see :class:`~physgrade_ui.queue_view.QueuePanel`)
QUEUE_WIDTH = 310
RUBRIC_WIDTH = 360
#: the pause before auto-advance moves on, long enough to see the last score land
ADVANCE_DELAY_MS = 400


@dataclass(frozen=True, slots=True)
class Change:
    """One change the grader made, with what it replaced (``before`` None: nothing given)."""

    response_id: str
    criterion: str
    before: Given | None
    note_only: bool


class GradingPage(QSplitter):
    """Grade responses one after another, the grader's progress through the filter and pace
    shown above the rubric."""

    shown = Signal(str)  # a response is on show, content rendered

    page_title = "Grade"

    def __init__(self, ops: Operations, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        self.ops = ops
        self.project: Project | None = None
        self.grader: str | None = None
        self.item: GradingItem | None = None
        self.undo_stack: list[Change | StepChange] = []
        self.pace = Pace()
        #: The criterion a score key has just scored, the cursor having moved on from it by
        #: itself: E writes its note. None once the grader moves the cursor.
        self.scored_by_key: str | None = None

        self.queue = QueuePanel()
        self.queue.filter_changed.connect(self._filter_changed)
        self.queue.search.returnPressed.connect(self.focus_panel)
        self.queue.table.selectionModel().currentRowChanged.connect(self._row_changed)

        self.reader = BufferedReadingView(reading.CSS)
        self.reader.rendered.connect(self._rendered)
        self.reader.resized.connect(self._show_layout)
        self.reader.show_html(reading.placeholder("Choose a response in the queue."))
        self.comparison = ComparisonPanel()
        self.comparison.closed.connect(self.close_comparison)
        self.reading = QStackedWidget()
        self.reading.addWidget(self.reader)
        self.reading.addWidget(self.comparison)
        self.bar = ReadingBar()
        middle = QWidget()  # the bar above the reading; the category picker opens over it
        self.marking = StepMarking(self, middle, self.reader, self._write, self.ops.say,
                                   self.focus_panel, self._scored_low)

        self.panel = ScoringPanel()
        self.panel.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.panel.value_chosen.connect(self.score)
        self.panel.note_edited.connect(self.write_note)
        self.panel.note_closed.connect(self.focus_panel)
        self.hints = AnswerHints(ops, self)
        self.panel.set_hint(self.hints.view)
        self.progress_bar = QProgressBar()
        self.progress_bar.setToolTip("Responses you have graded in full, of those the queue's "
                                     "filter shows")
        self.progress_bar.setProperty("role", "pace")
        self.pace_label = label("", "muted")
        self.pace_label.setToolTip("Responses you have graded in full since physgrade started, "
                                   "and how many per hour of work (a pause counts five minutes "
                                   "at most)")
        self.person_label = ElidedLabel()  # a long name ends in "…" rather than widen the pane
        self.person_label.setProperty("role", "person")
        side = QWidget()
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(10, 10, 14, 12)
        side_layout.setSpacing(8)
        side_layout.addWidget(self.person_label)
        pace_row = QHBoxLayout()
        pace_row.setSpacing(8)
        pace_row.addWidget(self.progress_bar, 1)
        pace_row.addWidget(self.pace_label)
        side_layout.addLayout(pace_row)
        side_layout.addWidget(self.marking.summary)
        side_layout.addWidget(self.panel)
        side_layout.addStretch(1)
        self.side = scroller = QScrollArea()
        scroller.setWidget(side)
        scroller.setWidgetResizable(True)
        scroller.setFrameShape(QScrollArea.Shape.NoFrame)
        scroller.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroller.setMinimumWidth(360)

        middle_layout = QVBoxLayout(middle)
        middle_layout.setContentsMargins(0, 0, 0, 0)
        middle_layout.setSpacing(0)
        middle_layout.addWidget(self.bar)
        middle_layout.addWidget(self.reading, 1)
        self.addWidget(self.queue)
        self.addWidget(middle)
        self.addWidget(scroller)
        self.setStretchFactor(1, 1)
        self.setChildrenCollapsible(False)
        self.panes = preferences.KeptPanes(self, preferences.GRADE_PANES, self._lay_out_default)
        self.keys = self._make_keys()
        self.view_actions = [self.queue_action, self.descriptions_action, self.compare_action,
                             self.jump_action, self.zoom_in_action, self.zoom_out_action,
                             self.zoom_reset_action]
        self.menu_actions = [self._preference_action(
            "&Advance When a Response Is Graded", preferences.AUTO_ADVANCE),
            self._preference_action("&Hide the Rules Hint Until ANS Is Scored",
                                    preferences.HINT_AFTER_ANSWER, self.hint_settings_changed)]
        self.bar.connect_actions(self.queue_action, self.compare_action, self.jump_action,
                                 self.zoom_out_action, self.zoom_in_action,
                                 self.zoom_reset_action)
        self.queue.setVisible(not preferences.QUEUE_HIDDEN.get())
        self.queue_action.setChecked(self.queue.isHidden())
        self.descriptions_action.setChecked(preferences.DESCRIPTIONS_HIDDEN.get())
        self.panel.set_descriptions_shown(not self.descriptions_action.isChecked())
        self._set_zoom(preferences.ZOOM.get())
        self._show_pace()

    def showEvent(self, event: QShowEvent) -> None:
        """Lay the three panes out for the project, and put the keyboard on the panel, ready
        to score."""
        super().showEvent(event)
        self._lay_out()
        QTimer.singleShot(0, self.focus_panel)

    def _lay_out(self) -> None:
        """The panes as the grader left them in this project (once per project); the queue
        stays shown or hidden as Q left it, whatever the sizes say."""
        if self.panes.lay_out():
            self.queue.setVisible(not self.queue_action.isChecked())

    def _lay_out_default(self) -> None:
        """The reading widest."""
        width = self.width()
        self.setSizes([QUEUE_WIDTH, width - QUEUE_WIDTH - RUBRIC_WIDTH, RUBRIC_WIDTH])

    # -- keys -------------------------------------------------------------------------------

    def _make_keys(self) -> list[tuple[str, str, list[QAction]]]:
        """The workbench's shortcuts, grouped as the help overlay lists them; the ones the
        menus also offer are kept as named actions."""
        key = partial(shortcuts, self)
        named = partial(named_shortcut, self)
        self.queue_action = named("Hide the Q&ueue", ["Q"], self.toggle_queue, checkable=True)
        self.descriptions_action = named("Hide the &Level Descriptions", ["D"],
                                         self.toggle_descriptions, checkable=True)
        self.compare_action = named("&Compare With the Other Raters", ["C"],
                                    self.toggle_comparison, checkable=True)
        # Esc closes the comparison; enabled only while it is open, so that Esc still cancels
        # a note or leaves the search field.
        self.escape_action = named("Close the Comparison", ["Escape"], self.close_comparison)
        self.escape_action.setEnabled(False)
        self.jump_action = named("Jump to the &Response (or Back to the Reference)", ["R"],
                                 self.jump_reading)
        self.figures = FigureKeys(self, self.reader, self.ops.say, self._figure_refusal)
        self.zoom_in_action = named("Zoom &In", ["Ctrl+=", "Ctrl++"], partial(self.zoom, 1))
        self.zoom_out_action = named("Zoom Ou&t", ["Ctrl+-"], partial(self.zoom, -1))
        self.zoom_reset_action = named("Actual Si&ze", ["Ctrl+0"], partial(self.zoom, 0))
        return [
            ("0 – 9", "Score the current criterion",
             [a for digit in range(10) for a in key([str(digit)], partial(self.score_key, digit))]),
            ("N", "N/A (where the rubric allows it)", key(["N"], partial(self.score_key, None))),
            ("↑  ↓", "Previous / next criterion",
             key(["Up"], partial(self.move, -1)) + key(["Down"], partial(self.move, 1))),
            ("E", "Note on the criterion you just scored (after ↑ ↓, the current one): type, "
                  "then Enter; Esc cancels", key(["E"], self.open_note)),
            *self.marking.keys(),
            ("Ctrl+Z", "Undo the last change (a score, a note or a step mark)",
             key(["Ctrl+Z"], self.undo)),
            ("→  ←", "Next / previous response",
             key(["Right"], partial(self.step, 1)) + key(["Left"], partial(self.step, -1))),
            ("U", "Next response I have not finished", key(["U"], self.next_unfinished)),
            ("R", "Jump to the response, and back to the reference (when they stack)",
             [self.jump_action]),
            (*figure_keys.KEYS, [self.figures.next_action, self.figures.back_action]),
            ("Space", "Scroll the reading down (Shift: up)",
             key(["Space"], partial(self.scroll_reading, 1))
             + key(["Shift+Space"], partial(self.scroll_reading, -1))),
            ("C", "Compare with the other raters (once you have scored everything); Esc closes",
             [self.compare_action, self.escape_action]),
            ("Q", "Hide or show the queue", [self.queue_action]),
            ("D", "Hide or show what each score level means", [self.descriptions_action]),
            ("Ctrl+=  Ctrl+-  Ctrl+0", "Zoom the reading in, out, back to 100%",
             [self.zoom_in_action, self.zoom_out_action, self.zoom_reset_action]),
        ]

    def _preference_action(self, text: str, preference: preferences.Preference[bool],
                           changed: Callable[[], None] | None = None) -> QAction:
        """A checkable menu entry kept in the user's preferences."""
        action = QAction(text, self)
        action.setCheckable(True)
        action.setChecked(preference.get())
        action.toggled.connect(preference.set)
        if changed is not None:
            action.toggled.connect(changed)
        return action

    def help_section(self) -> Section:
        return ("Grading", [(keys, what) for keys, what, _ in self.keys])

    # -- the layout -------------------------------------------------------------------------

    def move(self, delta: int) -> None:  # type: ignore[override]  # the page is never placed by move()
        """Up / Down, or a score given: the next criterion, scrolled into view on a short
        screen where the rubric does not fit."""
        self.scored_by_key = None
        self.panel.move(delta)
        self._reveal_current()

    def _reveal_current(self) -> None:
        if self.panel.rows:
            self.side.ensureWidgetVisible(self.panel.rows[self.panel.current], 0, 12)

    def toggle_queue(self) -> None:
        """Q: give the queue's width to the reading, or take it back."""
        hidden = not self.queue.isHidden()
        self.queue.setVisible(not hidden)
        self.queue_action.setChecked(hidden)
        preferences.QUEUE_HIDDEN.set(hidden)
        self.ops.say("Queue hidden: Q shows it again." if hidden else "Queue shown.")

    def toggle_descriptions(self) -> None:
        """D: hide what each score level means (for graders who know the rubric by heart)."""
        hidden = not preferences.DESCRIPTIONS_HIDDEN.get()
        preferences.DESCRIPTIONS_HIDDEN.set(hidden)
        self.descriptions_action.setChecked(hidden)
        self.panel.set_descriptions_shown(not hidden)

    def zoom(self, direction: int) -> None:
        """Ctrl+= / Ctrl+- / Ctrl+0: the reading's zoom, kept for this user."""
        factor = preferences.zoomed(preferences.ZOOM.get(), direction)
        preferences.ZOOM.set(factor)
        self._set_zoom(factor)
        self.ops.say(f"Reading at {factor:.0%}.")

    def _set_zoom(self, factor: float) -> None:
        for view in self.reader.views:
            view.setZoomFactor(factor)
        self.comparison.set_zoom(factor)
        self.bar.show_zoom(factor)
        self._show_layout()

    def _show_layout(self) -> None:
        self.bar.show_side_by_side(self.side_by_side())

    def scroll_reading(self, direction: int) -> None:
        if self.reading.currentWidget() is self.comparison:
            self.comparison.scroll_by_page(direction)
        else:
            self.reader.scroll_by_page(direction)

    def side_by_side(self) -> bool:
        """Whether the reading is wide enough (in CSS px, so zoom counts) for the reference
        and the response to stand side by side."""
        return self.reader.width() / self.reader.current.zoomFactor() >= reading.SIDE_BY_SIDE_FROM

    def jump_reading(self) -> None:
        """R: to the response's first part, or back to the reference, where they stack."""
        if self.item is None or self.reading.currentWidget() is not self.reader:
            self.ops.say("Choose a response first." if self.item is None else
                         "Close the comparison first (Esc).")
            return
        if self.side_by_side():
            self.ops.say("The reference and the response are side by side.")
            return
        self.reader.jump_between(reading.REFERENCE_PART, reading.RESPONSE_PART, self._jumped)

    def _jumped(self, part: str) -> None:
        if part:
            self.ops.say("Reading the response; R goes back to the reference."
                         if part == reading.RESPONSE_PART else
                         "Reading the reference; R jumps to the response.")

    def _figure_refusal(self) -> str:
        """Why F cannot enlarge a figure now ("" when it can)."""
        if self.item is None:
            return "Choose a response first."
        return "" if self.reading.currentWidget() is self.reader else \
            "Close the comparison first (Esc)."

    def toggle_comparison(self) -> None:
        """C: the other raters' scores, as wide as the reading, in place of it (or back)."""
        if self.reading.currentWidget() is self.comparison:
            self.close_comparison()
            return
        if self.item is None:
            self.compare_action.setChecked(False)
            self.ops.say("Choose a response first.")
            return
        self.reading.setCurrentWidget(self.comparison)
        self.compare_action.setChecked(True)
        self.escape_action.setEnabled(True)
        self.figures.close()  # Esc is now the comparison's
        self._show_comparison()

    def close_comparison(self) -> None:
        """Back to the reading (Esc, C, the panel's Close, or moving to another response)."""
        if self.reading.currentWidget() is self.reader:
            return
        self.reading.setCurrentWidget(self.reader)
        self.compare_action.setChecked(False)
        self.escape_action.setEnabled(False)
        self.focus_panel()

    def _show_comparison(self) -> None:
        """Fill the comparison for the item on show (blind until it is fully scored), and
        say on its button whether there is anything to see."""
        if self.item is None or self.project is None or self.grader is None:
            return
        verdicts = compare(self.project, self.item, self.grader)
        self.bar.show_comparison(self.item.complete, verdicts, self.item.values)
        if self.reading.currentWidget() is self.comparison:
            mine = step_marks.describe(self.project, self.marking.steps, self.marking.mark)
            self.comparison.show_verdicts(self.item, verdicts, mine)

    def _show_pace(self) -> None:
        listed = self.queue.model.rowCount()
        self.progress_bar.setRange(0, max(listed, 1))  # a range of 0 to 0 means "busy"
        self.progress_bar.setFormat("%v of %m graded" if listed else "Nothing to grade")
        self.progress_bar.setValue(self.queue.model.graded_count())
        self.pace_label.setText(self.pace.text())

    # -- the page ---------------------------------------------------------------------------

    def open(self, project: Project | None, grader: str | None) -> None:
        """Show ``project``'s queue for ``grader``, resuming where they stopped (nothing while
        either is unknown)."""
        self.undo_stack.clear()
        self.hints.reset()
        self.panes.open(project.path if project is not None else None)
        self._lay_out()
        show_person(self.person_label, "Grading", grader)
        if project is None or grader is None:
            self.project = self.grader = None
            self.queue.model.set_items([], QueueFilter())
            self._show_nothing()
            return
        self.project, self.grader = project, grader
        position = load_position(project, grader)
        self._show_queue(load_queue(project, grader), position.filter, position.response_id)
        self.focus_panel()

    def apply(self, changes: Changes) -> None:
        """Re-read what a write changed of what the page shows; the grader keeps their place."""
        if self.project is None or self.grader is None:
            return
        if changes.touches(RecordKind.QUESTIONS, RecordKind.RESPONSES):
            self.hints.reset()  # reference answers or responses may differ: checks are stale
        if changes.touches(RecordKind.QUESTIONS, RecordKind.RESPONSES, RecordKind.BLOOM,
                           RecordKind.ASSIGNMENTS, RecordKind.ESTIMATION, RecordKind.SETTINGS):
            current, criterion = self.item.response_id if self.item else None, self.panel.current
            self._show_queue(load_queue(self.project, self.grader), self.queue.model.filter,
                             current)
            if self.item is not None and self.item.response_id == current:
                self.panel.set_current(criterion)
        elif changes.touches(RecordKind.SCORES):
            self._rescore(changes.responses)
        elif changes.touches(RecordKind.RUBRICS) and self.item is not None:
            self._reread_item()  # the level descriptions were reworded
        if changes.touches(RecordKind.SETTINGS):
            self.hint_settings_changed()  # the project's answer tolerance
        if changes.touches(RecordKind.STEPS, RecordKind.TAXONOMIES):
            self.marking.reread(None if changes.touches(RecordKind.TAXONOMIES)
                                else changes.responses)
            if self.reading.currentWidget() is self.comparison:
                self._show_comparison()  # the raters' first wrong steps, shown

    def stop(self) -> None:
        """The window is closing: end the answer checks and close their checker."""
        self.hints.stop()

    def focus_widget(self) -> QWidget:
        return self.panel

    def focus_search(self) -> bool:
        self.queue.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.queue.search.selectAll()
        return True

    def focus_panel(self) -> None:
        self.panel.setFocus(Qt.FocusReason.OtherFocusReason)

    def _show_queue(self, items: list[QueueItem], queue_filter: QueueFilter,
                    response_id: str | None) -> None:
        """Show ``items`` through ``queue_filter`` (its search run again), with ``response_id``
        on show if the filter shows it, else the first response."""
        if queue_filter.search:
            assert self.project is not None  # a queue is shown only for a project
            queue_filter = queue_filter.with_search(self.project, queue_filter.search)
        self.queue.set_choices(facet_values(items), queue_filter, field_values(items))
        self.queue.model.set_items(items, queue_filter)
        if not self.select(response_id) and self.queue.model.rowCount():
            self.select(self.queue.model.item(0).response_id)
        if not self.queue.model.rowCount():
            self._show_nothing()
        self._show_pace()

    def _rescore(self, responses: frozenset[str] | None) -> None:
        """Scores changed for ``responses`` (None: any): the item on show and the queue's
        counts are read again, the rows staying where they are."""
        assert self.project is not None and self.grader is not None  # as apply() checked
        on_show = self.item.response_id if self.item else None
        if on_show is not None and (responses is None or on_show in responses):
            self._reread_item()
        if on_show is not None and responses == {on_show} and self.item is not None:
            self.queue.model.update_scored(on_show, len(self.item.mine))
        else:
            self.queue.model.update_progress(load_queue(self.project, self.grader), responses)
        self._show_pace()

    def _reread_item(self) -> None:
        """Show what the project now holds for the item on show (the criterion stays)."""
        # an item is on show only for a project and a grader
        assert self.project is not None and self.grader is not None and self.item is not None
        item = grading_item(self.project, self.item.response_id, self.grader)
        if item is None:
            return  # removed: the change that removed it re-reads the queue
        before, self.item = self.item, item
        if before is not None and before.response_id == item.response_id:
            if item.complete and not before.complete:
                self.pace.finish(item.response_id)
                self._advance_later(item.response_id)
            elif before.complete and not item.complete:
                self.pace.reopen(item.response_id)
        self.panel.show_item(item, keep_current=True)
        self._show_comparison()
        self.hints.show(self.project, item)

    def _show_nothing(self) -> None:
        """No response on show: the reading and the rubric say why, and nothing can be scored."""
        self.item = None
        self.scored_by_key = None
        self.marking.show_nothing()
        self.hints.show_nothing()
        self.close_comparison()
        self.bar.show_comparison(False, None)
        if self.queue.model.items:
            self.panel.show_nothing("No response matches the filter.")
            self.reader.show_html(reading.placeholder(
                "No responses match the filter. Change the search or the filters, or press "
                "Clear in the queue to show every response."))
        else:
            self.panel.show_nothing("No responses to grade yet.")
            self.reader.show_html(reading.placeholder(
                "This project has no responses yet. Import some with File ▸ Import."))

    def _save_position(self, response_id: str, queue_filter: QueueFilter) -> None:
        assert self.grader is not None  # a response is on show only for a grader
        self.ops.write(partial(save_position, grader=self.grader,
                               position=Position(response_id, queue_filter)),
                       what="place in the queue")

    # -- moving -----------------------------------------------------------------------------

    def select(self, response_id: str | None) -> bool:
        """Put ``response_id`` on show if the filter shows it; False otherwise."""
        row = self.queue.model.row_of(response_id)
        if row is None:
            return False
        index = self.queue.model.index(row, 0)
        self.queue.table.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows)
        self.queue.table.scrollTo(index)
        return True

    def step(self, delta: int) -> None:
        """Show the next (1) or previous (-1) response in the queue."""
        current = self.queue.table.currentIndex().row()
        row = current + delta
        if 0 <= row < self.queue.model.rowCount():
            self.select(self.queue.model.item(row).response_id)
        else:
            self.ops.say("End of the queue." if delta > 0 else "Start of the queue.")

    def next_unfinished(self) -> None:
        """Jump to the next response this grader has not scored in full, wrapping round."""
        model = self.queue.model
        count = model.rowCount()
        current = self.queue.table.currentIndex().row()
        for offset in range(1, count + 1):
            row = (current + offset) % count
            if model.item(row).scored < model.item(row).criteria:
                self.select(model.item(row).response_id)
                return
        self.ops.say("Every response in this filter is graded.")

    def _row_changed(self, current: QModelIndex) -> None:
        if current.isValid() and self.project is not None:
            self.show_response(self.queue.model.item(current.row()).response_id)

    def show_response(self, response_id: str) -> None:
        assert self.project is not None and self.grader is not None  # a queue is shown for both
        item = grading_item(self.project, response_id, self.grader)
        if item is None:  # removed since the queue was read
            self.ops.say(f"Response {response_id} is no longer in the project.")
            return
        if self.item is not None and self.item.response_id != response_id:
            self.close_comparison()  # a new response is read first, blind
        self.item = item
        self.scored_by_key = None
        self.reader.show_html(reading.grading_html(item))
        self.marking.show(self.project, self.grader, response_id, item.text, item.sections)
        self.panel.show_item(item)
        self._reveal_current()
        self.hints.show(self.project, item)
        self._show_comparison()
        self._save_position(response_id, self.queue.model.filter)

    def _rendered(self) -> None:
        if self.item is not None:
            self.shown.emit(self.item.response_id)
            QTimer.singleShot(0, self._prepare_next)

    def _prepare_next(self) -> None:
        """While the grader reads, lay the next response out out of sight, so moving on is
        only a matter of showing it."""
        row = self.queue.table.currentIndex().row() + 1
        if (self.project is not None and self.grader is not None
                and 0 < row < self.queue.model.rowCount()):
            upcoming = grading_item(self.project, self.queue.model.item(row).response_id,
                                    self.grader)
            if upcoming is not None:
                self.reader.prepare(reading.grading_html(upcoming))

    # -- filters ----------------------------------------------------------------------------

    def _filter_changed(self) -> None:
        if self.project is None:
            return
        current = self.item.response_id if self.item else None
        chosen = self.queue.facet_filter().with_search(self.project, self.queue.search.text())
        self.queue.model.set_filter(chosen)
        if not self.select(current):
            if self.queue.model.rowCount():
                self.select(self.queue.model.item(0).response_id)
            else:
                self._show_nothing()
        if self.item is not None:
            self._save_position(self.item.response_id, chosen)
        self._show_pace()

    # -- scoring ----------------------------------------------------------------------------

    def score_key(self, value: int | None) -> None:
        """A digit (or N for N/A) pressed: score the current criterion if it takes that value."""
        criterion = self.panel.current_criterion
        if self.item is None or criterion is None:
            return
        if not self.panel.allowed(value):
            allowed = self.panel.rows[self.panel.current].values
            self.panel.refuse(f"{criterion.key} takes {', '.join(map(str, allowed))}"
                              + (" or N/A" if criterion.allows_na else "") + ".")
            return
        self.score(criterion.key, value)
        self.move(1)
        self.scored_by_key = criterion.key

    def score(self, criterion: str, value: int | None) -> None:
        """Write one criterion's score; once it is committed, remember how to undo it."""
        self.scored_by_key = None  # a click scores the row it makes current
        item = self.item
        # the rows are disabled while no response is on show
        assert item is not None and self.grader is not None
        before = item.mine.get(criterion)
        unchanged = before is not None and before.value == value
        shown = "N/A" if value is None else value
        if unchanged or not self._write(
                partial(scores.set_score, grader=self.grader, response_id=item.response_id,
                        criterion=criterion, value=value),
                Change(item.response_id, criterion, before, note_only=False),
                f"{criterion} = {shown} saved.", "score"):
            self.panel.show_item(item, keep_current=True)  # a clicked button shows what is stored

    def open_note(self) -> None:
        """E: the note of the criterion a score key has just scored, else of the current one.

        A score moves the cursor on, so the note goes where the score went, and the cursor
        stays for the next score. The editor opens even on a criterion without a score (its
        Enter then asks for one): a refused E would leave the note's text to the score keys.
        """
        if self.item is None or not self.panel.rows:
            return
        index = (self.item.rubric.keys.index(self.scored_by_key) if self.scored_by_key
                 else self.panel.current)
        self.side.ensureWidgetVisible(self.panel.open_note(index).note, 0, 12)

    def write_note(self, criterion: str, note: str) -> None:
        item = self.item
        if item is None or self.grader is None:  # no response on show: nothing to note on
            return
        before = item.mine.get(criterion)
        if before is None or (before.note or "") == note:
            return
        self._write(partial(scores.set_note, grader=self.grader, response_id=item.response_id,
                            criterion=criterion, note=note),
                    Change(item.response_id, criterion, before, note_only=True),
                    f"Note on {criterion} saved." if note else f"Note on {criterion} removed.",
                    "note")

    def _scored_low(self) -> list[str]:
        """The criteria the grader scored below their maximum on the response on show."""
        return self.item.rubric.errors(self.item.values) if self.item is not None else []

    def _write(self, write: Write, change: Change | StepChange, message: str, what: str) -> bool:
        """Write now (True once committed; a write waiting for a lock is undoable when saved)."""
        return self.ops.write(write, partial(self._saved, change, message), what)

    def _saved(self, change: Change | StepChange, message: str, changes: Changes) -> None:
        """A change is committed (at once, or later if it waited for a lock): it can be undone."""
        self.undo_stack.append(change)
        self.pace.acted()
        self.ops.say(message)

    def undo(self) -> None:
        """Take back the last change, on whichever response it was made."""
        if not self.undo_stack:
            self.ops.say("Nothing to undo.")
            return
        change = self.undo_stack.pop()
        if self.item is None or self.item.response_id != change.response_id:
            if not self.select(change.response_id):
                self.show_response(change.response_id)
        if isinstance(change, StepChange):
            assert self.grader is not None  # changes are made by the grader on show
            self.ops.write(partial(step_marks.restore, grader=self.grader,
                                   response_id=change.response_id, mark=change.before),
                           partial(self._undone, change), "undo")
            return
        where: dict[str, Any] = dict(grader=self.grader, response_id=change.response_id,
                                     criterion=change.criterion)
        if change.note_only:
            assert change.before is not None  # a note is written only beside a score
            write = partial(scores.set_note, note=change.before.note or "", **where)
        elif change.before is None:
            write = partial(scores.clear_score, **where)
        else:
            write = partial(scores.set_score, value=change.before.value, **where)
        self.ops.write(write, partial(self._undone, change), "undo")

    def _undone(self, change: Change | StepChange, changes: Changes) -> None:
        self.pace.acted()
        if isinstance(change, StepChange):
            self.ops.say(f"Undone: the {change.what} on {change.response_id}.")
            return
        if self.item is not None and self.item.response_id == change.response_id:
            self.scored_by_key = None
            self.panel.set_current(self.item.rubric.keys.index(change.criterion))
        self.ops.say(f"Undone: {change.criterion} on {change.response_id}.")

    def _advance_later(self, response_id: str) -> None:
        """The grader has just scored the last criterion: with auto-advance on, move on to
        the next unfinished response after a moment (if they are still on this one)."""
        if preferences.AUTO_ADVANCE.get():
            QTimer.singleShot(ADVANCE_DELAY_MS, partial(self._advance_from, response_id))

    def _advance_from(self, response_id: str) -> None:
        """Move on, unless a note is being written: it would end on the next response's row."""
        if self.panel.writing_note():
            QTimer.singleShot(ADVANCE_DELAY_MS, partial(self._advance_from, response_id))
        elif (self.item is not None and self.item.response_id == response_id
              and self.item.complete):
            self.next_unfinished()

    def hint_settings_changed(self) -> None:
        """A rules setting changed (when the hint shows, its tolerance): the hint on show
        follows at once."""
        if self.project is not None and self.item is not None:
            self.hints.show(self.project, self.item)

