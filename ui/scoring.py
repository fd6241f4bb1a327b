"""The P-REFS panel: one row per criterion with its values, help and note; live subtotals.

A view over a :class:`~physgrade.grading.GradingItem`: it shows the item and reports what the
grader chose (``value_chosen``, ``note_edited``). The workbench writes through the core and
hands the updated item back, so what the panel shows is always what the project holds.
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (QButtonGroup, QFrame, QHBoxLayout, QLineEdit, QPushButton,
                               QVBoxLayout, QWidget)

from physgrade.grading import GradingItem
from physgrade.rubric import FINAL_ANSWER, Criterion, Rubric
from physgrade_ui.widgets import RowCursor, label

NA = "N/A"


class NoteEdit(QLineEdit):
    """A criterion's note: Enter keeps it, Escape gives up the edit."""

    cancelled = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.cancelled.emit()
            return
        super().keyPressEvent(event)


class CriterionRow(QFrame):
    """One criterion: key and name, a button per allowed value, the help line, the note."""

    def __init__(self, criterion: Criterion, values: tuple[int, ...],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.criterion = criterion
        self.values = values
        self.setProperty("role", "criterion")
        self.setProperty("current", False)
        self.buttons = QButtonGroup(self)
        self.buttons.setExclusive(False)  # none checked means "not scored yet"
        top = QHBoxLayout()
        top.setSpacing(6)
        key = label(criterion.key, "criterion-key")
        key.setFixedWidth(40)
        top.addWidget(key)
        top.addWidget(label(criterion.name, "criterion-name"), 1)
        choices: list[int | None] = list(values) + ([None] if criterion.allows_na else [])
        for value in choices:
            button = QPushButton(NA if value is None else str(value))
            button.setCheckable(True)
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # keys go to the panel, not a button
            button.setProperty("role", "value")
            button.setProperty("value", value)
            button.setToolTip("N/A — key N" if value is None else f"{value} point(s) — key {value}")
            self.buttons.addButton(button)
            top.addWidget(button)
        help_text = label(criterion.help, "muted")
        help_text.setWordWrap(True)
        self.note = NoteEdit()
        self.note.setPlaceholderText("Note on this criterion — Enter keeps it, Esc cancels")
        self.note.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 7, 10, 7)
        layout.setSpacing(3)
        layout.addLayout(top)
        layout.addWidget(help_text)
        layout.addWidget(self.note)

    def hold(self, widget: QWidget) -> None:
        """Show ``widget`` under the help line (the ANS row holds the rules' hint)."""
        if widget.parentWidget() is self:
            return
        previous = widget.parentWidget()
        if previous is not None and previous.layout() is not None:
            previous.layout().removeWidget(widget)
        self.layout().insertWidget(2, widget)

    def show_value(self, given: bool, value: int | None, note: str | None) -> None:
        for button in self.buttons.buttons():
            button.setChecked(given and button.property("value") == value)
        if not self.note.hasFocus():
            self.note.setText(note or "")
            self.note.setCursorPosition(0)  # show a long note from its start
            self.note.setVisible(bool(note))

    def set_current(self, current: bool) -> None:
        if self.property("current") == current:
            return  # re-polishing a styled frame costs more than everything else here
        self.setProperty("current", current)
        self.style().unpolish(self)
        self.style().polish(self)


class ScoringPanel(RowCursor, QWidget):
    """The rubric of the item on show, its current criterion, subtotals and implied errors."""

    value_chosen = Signal(str, object)  # criterion, value (None: N/A)
    note_edited = Signal(str, str)      # criterion, note ("" removes it)
    note_closed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.item: GradingItem | None = None
        self.rows: list[CriterionRow] = []
        self.current = 0
        self._layout_key: tuple[str, bool] | None = None
        self._row_sets: dict[tuple[str, bool], list[CriterionRow]] = {}
        self.hint: QWidget | None = None  # shown in the ANS row; it never scores
        self.title = label("", "section")
        self.total = label("", "total")
        self.stages = label("", "muted")
        self.stages.setWordWrap(True)
        self.errors = label("", "muted")
        self.errors.setWordWrap(True)
        heading = QHBoxLayout()
        heading.addWidget(self.title, 1)
        heading.addWidget(self.total)
        self.row_box = QVBoxLayout()
        self.row_box.setSpacing(4)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addLayout(heading)
        layout.addWidget(self.stages)
        layout.addLayout(self.row_box)
        layout.addWidget(self.errors)

    # -- showing ------------------------------------------------------------------------

    def show_item(self, item: GradingItem, keep_current: bool = False) -> None:
        """Show ``item``; the current criterion becomes its first unscored one unless kept."""
        multiple_choice = item.question.multiple_choice
        if self._layout_key != (item.rubric.key, multiple_choice):
            self._build(item.rubric, multiple_choice)
        self.item = item
        for row in self.rows:
            given = item.mine.get(row.criterion.key)
            row.show_value(given is not None, given.value if given else None,
                           given.note if given else None)
        if not keep_current:
            unscored = [i for i, row in enumerate(self.rows) if row.criterion.key not in item.mine]
            self.set_current(unscored[0] if unscored else 0)
        self._show_totals()

    def set_hint(self, widget: QWidget) -> None:
        """Show ``widget`` in the final-answer (ANS) row of whichever rubric is on show."""
        self.hint = widget
        self._place_hint()

    def _place_hint(self) -> None:
        row = next((row for row in self.rows if row.criterion.key == FINAL_ANSWER), None)
        if self.hint is not None and row is not None:
            row.hold(self.hint)

    def _build(self, rubric: Rubric, multiple_choice: bool) -> None:
        """Show the rows of this rubric (built once per rubric; the others are hidden)."""
        for row in self.rows:
            row.hide()
        key = (rubric.key, multiple_choice)
        if key not in self._row_sets:
            rows = []
            for criterion in rubric.criteria:
                row = CriterionRow(criterion, criterion.allowed_values(multiple_choice), self)
                row.buttons.buttonClicked.connect(partial(self._clicked, criterion.key))
                row.note.returnPressed.connect(partial(self._note_done, row))
                row.note.cancelled.connect(partial(self._note_cancelled, row))
                self.row_box.addWidget(row)
                rows.append(row)
            self._row_sets[key] = rows
        self.rows = self._row_sets[key]
        for row in self.rows:
            row.show()
        self._layout_key = key
        self._place_hint()
        self.title.setText(f"{rubric.title} rubric" + ("  ·  multiple choice"
                                                       if multiple_choice else ""))

    def _show_totals(self) -> None:
        item = self.item
        values = item.values
        earned, possible = item.rubric.total(values)
        scored = len(values)
        self.total.setText(f"{earned} / {possible}" if scored else f"– / {item.rubric.maximum}")
        parts = []
        for stage in item.rubric.stages:
            keys = [c for c in item.rubric.criteria if c.stage == stage]
            stage_scores = {c.key: values[c.key] for c in keys if c.key in values}
            got, out_of = item.rubric.total(stage_scores)
            todo = len(keys) - len(stage_scores)
            parts.append(f"{stage}: " + (f"{got}/{out_of}" if stage_scores else "–")
                         + (f" ({todo} to score)" if todo else ""))
        self.stages.setText("   ·   ".join(parts))
        errors = item.rubric.errors(values)
        self.errors.setText("Errors implied: " + ", ".join(
            f"{key} ({item.rubric.criterion(key).name.lower()})" for key in errors)
            if errors else ("No errors: every criterion at its maximum." if item.complete
                            else ""))

    # -- the current criterion ----------------------------------------------------------

    @property
    def current_criterion(self) -> Criterion | None:
        return self.rows[self.current].criterion if self.rows else None

    def allowed(self, value: int | None) -> bool:
        """Whether the current criterion takes ``value`` (None: N/A)."""
        if not self.rows:
            return False
        row = self.rows[self.current]
        return row.criterion.allows_na if value is None else value in row.values

    def open_note(self) -> None:
        row = self.rows[self.current]
        row.note.show()
        row.note.setFocus(Qt.FocusReason.ShortcutFocusReason)
        row.note.selectAll()

    # -- what the grader does -------------------------------------------------------------

    def _clicked(self, key: str, button: QPushButton) -> None:
        self.set_current(next(i for i, row in enumerate(self.rows) if row.criterion.key == key))
        self.value_chosen.emit(key, button.property("value"))

    def _note_done(self, row: CriterionRow) -> None:
        note = row.note.text().strip()
        row.note.clearFocus()
        self.note_edited.emit(row.criterion.key, note)
        self.note_closed.emit()

    def _note_cancelled(self, row: CriterionRow) -> None:
        given = self.item.mine.get(row.criterion.key) if self.item else None
        row.note.clearFocus()
        row.show_value(given is not None, given.value if given else None,
                       given.note if given else None)
        self.note_closed.emit()
