"""The grading workbench: the queue, the reading (reference beside response) and the P-REFS panel.

Keyboard first, in the manner of a flash-card reviewer: the keys act on the current criterion
of the response on show, every change is written through the core at once (no Save button),
and the grader's place is stored in the project on every move, so reopening resumes there.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QShowEvent
from PySide6.QtWidgets import QScrollArea, QSplitter, QVBoxLayout, QWidget

from physgrade.grading import Given, GradingItem, compare, grading_item
from physgrade.project import Project
from physgrade.queue import (Position, QueueFilter, facet_values, load_position, load_queue,
                             save_position)
from physgrade.rubric import ScoreError
from physgrade_ui import reading
from physgrade_ui.answer_hint import AnswerHints
from physgrade_ui.comparison import ComparisonStrip
from physgrade_ui.queue_view import QueuePanel
from physgrade_ui.reading_view import BufferedReadingView
from physgrade_ui.scoring import ScoringPanel
from physgrade_ui.widgets import shortcuts

Section = tuple[str, list[tuple[str, str]]]


@dataclass(frozen=True, slots=True)
class Change:
    """One change the grader made, with what it replaced (``before`` None: nothing given)."""

    response_id: str
    criterion: str
    before: Given | None
    note_only: bool


class GradingPage(QSplitter):
    """Grade responses one after another. ``status`` carries messages for the status bar;
    ``progress`` the grader's count of graded items in the filter and the filter's size."""

    status = Signal(str)
    progress = Signal(int, int)
    shown = Signal(str)  # a response is on show, content rendered

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        self.project: Project | None = None
        self.grader: str | None = None
        self.item: GradingItem | None = None
        self.undo_stack: list[Change] = []

        self.queue = QueuePanel()
        self.queue.filter_changed.connect(self._filter_changed)
        self.queue.search.returnPressed.connect(self.focus_panel)
        self.queue.table.selectionModel().currentRowChanged.connect(self._row_changed)

        self.reader = BufferedReadingView(reading.CSS)
        self.reader.rendered.connect(self._rendered)
        self.reader.show_html(reading.placeholder("Choose a response in the queue."))

        self.panel = ScoringPanel()
        self.panel.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.panel.value_chosen.connect(self.score)
        self.panel.note_edited.connect(self.write_note)
        self.panel.note_closed.connect(self.focus_panel)
        self.hints = AnswerHints(self)
        self.panel.set_hint(self.hints.view)
        self.comparison = ComparisonStrip()
        side = QWidget()
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(10, 12, 14, 12)
        side_layout.setSpacing(14)
        side_layout.addWidget(self.panel)
        side_layout.addWidget(self.comparison)
        side_layout.addStretch(1)
        scroller = QScrollArea()
        scroller.setWidget(side)
        scroller.setWidgetResizable(True)
        scroller.setFrameShape(QScrollArea.Shape.NoFrame)
        scroller.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

        self.addWidget(self.queue)
        self.addWidget(self.reader)
        self.addWidget(scroller)
        self.setStretchFactor(1, 1)
        self.setChildrenCollapsible(True)
        scroller.setMinimumWidth(400)
        self._sized = False
        self.keys = self._make_keys()

    def showEvent(self, event: QShowEvent) -> None:
        """Lay the three panes out once, and put the keyboard on the panel, ready to score."""
        super().showEvent(event)
        if not self._sized:
            self._sized = True
            width = self.width()
            self.setSizes([340, width - 340 - 430, 430])
        QTimer.singleShot(0, self.focus_panel)

    # -- keys -------------------------------------------------------------------------------

    def _make_keys(self) -> list[tuple[str, str, list[QAction]]]:
        """The workbench's shortcuts, grouped as the help overlay lists them."""
        key = partial(shortcuts, self)
        return [
            ("0 – 9", "Score the current criterion",
             [a for digit in range(10) for a in key([str(digit)], partial(self.score_key, digit))]),
            ("N", "N/A (where the rubric allows it)", key(["N"], partial(self.score_key, None))),
            ("↑  ↓", "Previous / next criterion",
             key(["Up"], partial(self.panel.move, -1)) + key(["Down"], partial(self.panel.move, 1))),
            ("E", "Write a note on the criterion (Enter keeps it)", key(["E"], self.open_note)),
            ("Ctrl+Z", "Undo the last change", key(["Ctrl+Z"], self.undo)),
            ("→  ←", "Next / previous response",
             key(["Right"], partial(self.step, 1)) + key(["Left"], partial(self.step, -1))),
            ("U", "Next response I have not finished", key(["U"], self.next_unfinished)),
            ("Space", "Scroll the reading down (Shift: up)",
             key(["Space"], partial(self.reader.scroll_by_page, 1))
             + key(["Shift+Space"], partial(self.reader.scroll_by_page, -1))),
        ]

    def help_section(self) -> Section:
        return ("Grading", [(keys, what) for keys, what, _ in self.keys])

    # -- the project and the grader ---------------------------------------------------------

    def open(self, project: Project, grader: str) -> None:
        """Show ``project``'s queue for ``grader``, resuming where they stopped."""
        self.project, self.grader = project, grader
        self.undo_stack.clear()
        self.hints.reset()
        position = load_position(project, grader)
        items = load_queue(project, grader)
        queue_filter = position.filter
        if queue_filter.search:
            queue_filter = queue_filter.with_search(project, queue_filter.search)
        self.queue.set_choices(facet_values(items), queue_filter)
        self.queue.model.set_items(items, queue_filter)
        if not self.select(position.response_id) and self.queue.model.rowCount():
            self.select(self.queue.model.item(0).response_id)
        if not self.queue.model.rowCount():
            self._show_nothing()
        self._report_progress()
        self.focus_panel()

    def close_project(self) -> None:
        self.project = self.grader = self.item = None
        self.hints.reset()
        self.queue.model.set_items([], QueueFilter())
        self._show_nothing()

    def stop(self) -> None:
        """The window is closing: end the answer checks and close their checker."""
        self.hints.stop()

    def _show_nothing(self) -> None:
        self.item = None
        self.hints.view.clear()
        message = ("No responses match the filter." if self.queue.model.items
                   else "This project has no responses yet. Import some with File ▸ Import.")
        self.reader.show_html(reading.placeholder(message))

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
            self.status.emit("End of the queue." if delta > 0 else "Start of the queue.")

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
        self.status.emit("Every response in this filter is graded.")

    def _row_changed(self, current: QModelIndex) -> None:
        if current.isValid() and self.project is not None:
            self.show_response(self.queue.model.item(current.row()).response_id)

    def show_response(self, response_id: str) -> None:
        item = grading_item(self.project, response_id, self.grader)
        if item is None:  # removed since the queue was read
            self.status.emit(f"Response {response_id} is no longer in the project.")
            return
        self.item = item
        self.reader.show_html(reading.grading_html(item))
        self.panel.show_item(item)
        self.hints.show(self.project, item)
        self.comparison.show_verdicts(item, compare(self.project, item, self.grader))
        save_position(self.project, self.grader, Position(response_id, self.queue.model.filter))

    def _rendered(self) -> None:
        if self.item is not None:
            self.shown.emit(self.item.response_id)
            QTimer.singleShot(0, self._prepare_next)

    def _prepare_next(self) -> None:
        """While the grader reads, lay the next response out out of sight, so moving on is
        only a matter of showing it."""
        row = self.queue.table.currentIndex().row() + 1
        if self.project is not None and 0 < row < self.queue.model.rowCount():
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
            save_position(self.project, self.grader, Position(self.item.response_id, chosen))
        self._report_progress()

    def focus_search(self) -> None:
        self.queue.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.queue.search.selectAll()

    def focus_panel(self) -> None:
        self.panel.setFocus(Qt.FocusReason.OtherFocusReason)

    # -- scoring ----------------------------------------------------------------------------

    def score_key(self, value: int | None) -> None:
        """A digit (or N for N/A) pressed: score the current criterion if it takes that value."""
        criterion = self.panel.current_criterion
        if self.item is None or criterion is None:
            return
        if not self.panel.allowed(value):
            allowed = self.panel.rows[self.panel.current].values
            self.status.emit(f"{criterion.key} takes {', '.join(map(str, allowed))}"
                             + (" or N/A" if criterion.allows_na else "") + ".")
            return
        self.score(criterion.key, value)
        self.panel.move(1)

    def score(self, criterion: str, value: int | None) -> None:
        """Write one criterion's score now, remember how to undo it, and show the result."""
        item = self.item
        before = item.mine.get(criterion)
        if before is not None and before.value == value:
            self.panel.show_item(item, keep_current=True)
            return
        if not self._write(partial(self.project.set_score, self.grader, item.response_id,
                                   criterion, value)):
            return
        self.undo_stack.append(Change(item.response_id, criterion, before, note_only=False))
        shown = "N/A" if value is None else value
        self._refresh(f"{criterion} = {shown} saved.")

    def open_note(self) -> None:
        criterion = self.panel.current_criterion
        if self.item is None or criterion is None:
            return
        if criterion.key not in self.item.mine:
            self.status.emit(f"Score {criterion.key} first, then add a note to it.")
            return
        self.panel.open_note()

    def write_note(self, criterion: str, note: str) -> None:
        before = self.item.mine.get(criterion)
        if before is None or (before.note or "") == note:
            return
        if self._write(partial(self.project.set_note, self.grader, self.item.response_id,
                               criterion, note)):
            self.undo_stack.append(Change(self.item.response_id, criterion, before,
                                          note_only=True))
            self._refresh(f"Note on {criterion} saved." if note else f"Note on {criterion} removed.")

    def undo(self) -> None:
        """Take back the last change, on whichever response it was made."""
        if not self.undo_stack:
            self.status.emit("Nothing to undo.")
            return
        change = self.undo_stack.pop()
        if self.item is None or self.item.response_id != change.response_id:
            self.select(change.response_id) or self.show_response(change.response_id)
        project, grader, rid = self.project, self.grader, change.response_id
        if change.note_only:
            write = partial(project.set_note, grader, rid, change.criterion,
                            change.before.note or "")
        elif change.before is None:
            write = partial(project.clear_score, grader, rid, change.criterion)
        else:
            write = partial(project.set_score, grader, rid, change.criterion,
                            change.before.value)
        if self._write(write):
            self.panel.set_current(self.item.rubric.keys.index(change.criterion))
            self._refresh(f"Undone: {change.criterion} on {rid}.")

    def _write(self, write: Callable[[], None]) -> bool:
        try:
            write()
        except ScoreError as exc:
            self.status.emit(str(exc))
            return False
        return True

    def _refresh(self, message: str) -> None:
        """Re-read the item from the project after a write, so the panel shows what is stored."""
        item = grading_item(self.project, self.item.response_id, self.grader)
        self.item = item
        self.panel.show_item(item, keep_current=True)
        self.comparison.show_verdicts(item, compare(self.project, item, self.grader))
        self.queue.model.update_scored(item.response_id, len(item.mine))
        self._report_progress()
        self.status.emit(message)

    def _report_progress(self) -> None:
        self.progress.emit(self.queue.model.graded_count(), self.queue.model.rowCount())
