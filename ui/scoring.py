"""The P-REFS panel: one row per criterion with its values, help and note; live subtotals.

A view over a :class:`~physgrade.grading.GradingItem`: it shows the item and reports what the
grader chose (``value_chosen``, ``note_edited``). The workbench writes through the core and
hands the updated item back, so what the panel shows is always what the project holds.

The current criterion spells out what each of its values means (the project's level
descriptions), so nobody has to remember that COR 1 is "one local slip"; the other rows keep to
their one help line. A key the current criterion does not take is refused beside it.
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QButtonGroup,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from physgrade.grading import GradingItem
from physgrade.rubric import FINAL_ANSWER, Criterion, Rubric, value_text
from physgrade_ui.widgets import RowCursor, label, plain_key, restyle

#: How long a refused key's message stays beside the criterion.
REFUSAL_MS = 4000


class NoteEdit(QLineEdit):
    """A criterion's note: Enter keeps it, Escape gives up the edit.

    While it has the keyboard every key without Ctrl, Alt or Meta is its own: digits, letters,
    arrows, Escape and Tab never reach the page's scoring shortcuts, so a note cannot score.
    """

    cancelled = Signal()

    def event(self, event: QEvent) -> bool:
        if plain_key(event):
            event.accept()  # a plain key is text (or Enter, Esc) for the note, not a shortcut
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.cancelled.emit()
        else:
            super().keyPressEvent(event)
        event.accept()  # ↑ ↓ and the like end here rather than scroll the panel

    def focusNextPrevChild(self, next: bool) -> bool:
        """Tab stays in the note: moved on, the keys would score again with the note open."""
        return False


class CriterionRow(QFrame):
    """One criterion: key and name, a button per allowed value, the help line, the note.

    While it is the current criterion, what each value means replaces the help line, one line
    per value; the chosen value's line is highlighted.
    """

    def __init__(self, criterion: Criterion, multiple_choice: bool,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.criterion = criterion
        self.values = criterion.allowed_values(multiple_choice)
        self.setProperty("role", "criterion")
        self.setProperty("current", False)
        self.buttons = QButtonGroup(self)
        self.buttons.setExclusive(False)  # none checked means "not scored yet"
        top = QHBoxLayout()
        top.setSpacing(6)
        key = label(criterion.key, "criterion-key")
        key.setFixedWidth(40)
        top.addWidget(key)
        name = label(criterion.name, "criterion-name")
        name.setWordWrap(True)  # a narrow panel wraps the name rather than clip the buttons
        top.addWidget(name, 1)
        self.descriptions_shown = True
        self._described: dict[int | None, str] | None = None
        self.levels = QWidget(self)
        grid = QGridLayout(self.levels)
        grid.setContentsMargins(0, 2, 0, 0)
        grid.setHorizontalSpacing(4)
        grid.setVerticalSpacing(1)
        grid.setColumnStretch(1, 1)
        self.level_labels: dict[int | None, tuple[QLabel, QLabel]] = {}
        for line, value in enumerate(criterion.choices(multiple_choice)):
            button = QPushButton(value_text(value))
            button.setCheckable(True)
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # keys go to the panel, not a button
            button.setProperty("role", "value")
            button.setProperty("value", value)
            self.buttons.addButton(button)
            top.addWidget(button)
            shown_value = label(value_text(value), "level-value", self.levels)
            shown_value.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
            meaning = label("", "level", self.levels)
            meaning.setWordWrap(True)
            grid.addWidget(shown_value, line, 0, Qt.AlignmentFlag.AlignTop)
            grid.addWidget(meaning, line, 1)
            self.level_labels[value] = (shown_value, meaning)
        self.refusal = label("", "refusal")
        self.refusal.setWordWrap(True)
        self.refusal.hide()
        self._refusal_timer = QTimer(self)
        self._refusal_timer.setSingleShot(True)
        self._refusal_timer.timeout.connect(self.end_refusal)
        self.help = label(criterion.help, "criterion-help")
        self.help.setWordWrap(True)
        self.note = NoteEdit()
        self.note.setPlaceholderText(f"Note on {criterion.key} — Enter keeps it, Esc cancels")
        self.note.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.setSpacing(3)
        layout.addLayout(top)
        layout.addWidget(self.refusal)
        layout.addWidget(self.help)
        layout.addWidget(self.levels)
        layout.addWidget(self.note)
        self.describe({})
        self._show_parts()

    def refuse(self, text: str) -> None:
        """Say beside the criterion why a key did nothing, for a few seconds."""
        self.refusal.setText(text)
        self.refusal.show()
        self._refusal_timer.start(REFUSAL_MS)

    def end_refusal(self) -> None:
        self._refusal_timer.stop()
        self.refusal.hide()

    def hold(self, widget: QWidget) -> None:
        """Show ``widget`` above the note (the ANS row holds the rules' hint)."""
        if widget.parentWidget() is self:
            return
        previous = widget.parentWidget()
        if previous is not None and (held := previous.layout()) is not None:
            held.removeWidget(widget)
        layout = self.layout()
        assert isinstance(layout, QVBoxLayout)  # made in __init__
        layout.insertWidget(layout.indexOf(self.note), widget)

    def describe(self, described: dict[int | None, str]) -> None:
        """Show what each value means (the texts the project holds; the buttons' tooltips too)."""
        if described == self._described:
            return
        self._described = dict(described)
        for button in self.buttons.buttons():
            value = button.property("value")
            key = "N" if value is None else str(value)
            meaning = described.get(value)
            button.setToolTip(f"{value_text(value)}: {meaning}\nKey {key}" if meaning
                              else f"{value_text(value)} — key {key}")
            self.level_labels[value][1].setText(meaning or "")

    def show_value(self, given: bool, value: int | None, note: str | None) -> None:
        for button in self.buttons.buttons():
            chosen = given and button.property("value") == value
            button.setChecked(chosen)
            for shown in self.level_labels[button.property("value")]:
                restyle(shown, "chosen", chosen)
        if not self.note.hasFocus():
            self.note.setText(note or "")
            self.note.setCursorPosition(0)  # show a long note from its start
            self.note.setVisible(bool(note))

    def set_current(self, current: bool) -> None:
        restyle(self, "current", current)
        self._show_parts()

    def set_descriptions_shown(self, shown: bool) -> None:
        self.descriptions_shown = shown
        self._show_parts()

    def _show_parts(self) -> None:
        """The current row explains its values; the others keep their help line; with the
        descriptions hidden, neither shows."""
        current = bool(self.property("current"))
        self.help.setVisible(self.descriptions_shown and not current)
        self.levels.setVisible(self.descriptions_shown and current)


class ScoringPanel(RowCursor, QWidget):  # type: ignore[misc]  # RowCursor.move hides QWidget.move
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
        self.descriptions_shown = True
        self._refused: CriterionRow | None = None
        self.title = label("", "section")
        self.total = label("", "total")
        self.scored = label("", "muted")  # how many criteria are scored, under the title
        self.stages = label("", "muted")
        self.stages.setWordWrap(True)
        self.errors = label("", "muted")
        self.errors.setWordWrap(True)
        heading = QGridLayout()
        heading.setVerticalSpacing(0)
        heading.addWidget(self.title, 0, 0)
        heading.addWidget(self.scored, 1, 0)
        heading.addWidget(self.total, 0, 1, 2, 1, Qt.AlignmentFlag.AlignRight
                          | Qt.AlignmentFlag.AlignVCenter)
        heading.setColumnStretch(0, 1)
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
            row.setEnabled(True)
            row.describe(item.levels.get(row.criterion.key, {}))
            given = item.mine.get(row.criterion.key)
            row.show_value(given is not None, given.value if given else None,
                           given.note if given else None)
        if not keep_current:
            unscored = [i for i, row in enumerate(self.rows) if row.criterion.key not in item.mine]
            self.set_current(unscored[0] if unscored else 0)
        self._show_totals()

    def show_nothing(self, message: str) -> None:
        """No response on show (say, the filter matches none): the rubric stays in sight but
        greyed, nothing scored, no total, ``message`` in their place, so that nothing of the
        response shown last can be taken for this one's or scored."""
        self.item = None
        self._end_refusal()
        for row in self.rows:
            row.show_value(False, None, None)
            row.set_current(False)
            row.setEnabled(False)
        self.total.setText("")
        self.scored.setText(message)
        self.stages.setText("")
        self.errors.setText("")

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
                row = CriterionRow(criterion, multiple_choice, self)
                row.set_descriptions_shown(self.descriptions_shown)
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

    def set_descriptions_shown(self, shown: bool) -> None:
        """Show or hide what each value of the current criterion means, and the other rows'
        help lines (hidden, the panel is as compact as it gets; tooltips still explain)."""
        self.descriptions_shown = shown
        for rows in self._row_sets.values():
            for row in rows:
                row.set_descriptions_shown(shown)

    def _show_totals(self) -> None:
        item = self.item
        assert item is not None  # only show_item calls it, with the item on show
        values = item.values
        earned, _ = item.rubric.total(values)
        out_of = item.rubric.out_of(values)
        self.total.setText(f"{earned} / {out_of}" if values else f"– / {out_of}")
        self.scored.setText(f"{len(values)} of {len(item.rubric.criteria)} scored")
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

    def set_current(self, index: int) -> None:
        """Move the current criterion; a refusal said beside the one left goes with it. With
        no response on show there is no criterion to score, so none is current."""
        if self.item is None:
            return
        before = self.current
        super().set_current(index)
        if self.current != before:
            self._end_refusal()

    def refuse(self, text: str) -> None:
        """Say beside the current criterion why a key did nothing ("COR takes 0, 1, 2."), for
        a few seconds, where the grader is looking rather than only in the status bar."""
        if not self.rows:
            return
        self._end_refusal()
        self._refused = self.rows[self.current]
        self._refused.refuse(text)

    def _end_refusal(self) -> None:
        if self._refused is not None:
            self._refused.end_refusal()
            self._refused = None

    @property
    def current_criterion(self) -> Criterion | None:
        return self.rows[self.current].criterion if self.rows and self.item else None

    def allowed(self, value: int | None) -> bool:
        """Whether the current criterion takes ``value`` (None: N/A)."""
        if not self.rows:
            return False
        row = self.rows[self.current]
        return row.criterion.allows_na if value is None else value in row.values

    def open_note(self, index: int) -> CriterionRow:
        """Open the note of row ``index`` (the cursor stays where it is) and give it the keyboard."""
        row = self.rows[index]
        row.note.show()
        row.note.setFocus(Qt.FocusReason.ShortcutFocusReason)
        row.note.selectAll()
        return row

    def writing_note(self) -> bool:
        return any(row.note.hasFocus() for row in self.rows)

    # -- what the grader does -------------------------------------------------------------

    def _clicked(self, key: str, button: QPushButton) -> None:
        self.set_current(next(i for i, row in enumerate(self.rows) if row.criterion.key == key))
        self.value_chosen.emit(key, button.property("value"))

    def _note_done(self, row: CriterionRow) -> None:
        """Enter: keep the note; on a criterion without a score the editor keeps the text and
        the keyboard (a note belongs to a score), so that nothing typed falls to the keys."""
        note = row.note.text().strip()
        key = row.criterion.key
        if note and self.item is not None and key not in self.item.mine:
            row.refuse(f"A note goes with a score: Esc, score {key}, then E.")
            return
        row.note.clearFocus()
        self.note_edited.emit(row.criterion.key, note)
        self.note_closed.emit()

    def _note_cancelled(self, row: CriterionRow) -> None:
        given = self.item.mine.get(row.criterion.key) if self.item else None
        row.note.clearFocus()
        row.show_value(given is not None, given.value if given else None,
                       given.note if given else None)
        self.note_closed.emit()
