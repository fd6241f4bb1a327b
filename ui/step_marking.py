"""Marking where a response's reasoning breaks, on the Grade page, by keyboard.

The response's steps (:mod:`physgrade.steps`: template steps, else paragraphs) are elements of
the reading. ``[`` and ``]`` move an outline between them; W marks the outlined step as the first
wrong one, O says that no step is wrong, G gives the error a category of the project's taxonomy,
``+`` ``-`` ``=`` rate the outlined step +1, −1 or 0 (PRM800K's ratings). Each key writes at
once through :mod:`physgrade.step_marks` and is undone by the page's Ctrl+Z, as a score is; the
reading (tags beside the step labels, the first wrong step red) and a box above the rubric show
what the project holds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial
from typing import Callable

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QAction, QColor, QFocusEvent, QKeyEvent, QMouseEvent
from PySide6.QtWidgets import QFrame, QGraphicsDropShadowEffect, QHBoxLayout, QVBoxLayout, QWidget

from physgrade import step_marks
from physgrade.changes import Changes
from physgrade.project import Project, ProjectError
from physgrade.step_marks import NO_ERROR, StepMark, category_title
from physgrade.steps import ResponseStep, response_steps, step_label
from physgrade.taxonomies import Taxonomy, taxonomy
from physgrade.template import ParsedSolution
from physgrade_ui.operations import Write
from physgrade_ui.reading import RESPONSE_PART, STEP_CLASS
from physgrade_ui.reading_view import BufferedReadingView
from physgrade_ui.widgets import RowCursor, label, plain_key, restyle, shortcuts

#: How a rating is written on its tag and in messages.
RATING_TEXT = {1: "+1", 0: "0", -1: "−1"}

#: Draws a mark on the reading's steps (``state``: see :meth:`StepMarking._draw`): the outlined
#: step, the first wrong one, the right ones before it, ratings as outlined tags (text nodes:
#: a category's title is the project's text, never markup); with ``reveal``, the outlined step
#: is scrolled into view unless its top is in the upper part of it already.
SCRIPT = """((state) => {
  const boxes = document.querySelectorAll(%(selector)s);
  let outlined = null;
  for (const box of boxes) {
    const n = Number(box.dataset.step), first = state.first_wrong;
    const wrong = first !== null && first >= 1 && n === first;
    const right = first !== null && (first === 0 || n < first);
    box.classList.toggle('current', n === state.current);
    box.classList.toggle('first-wrong', wrong);
    box.classList.toggle('right', right);
    const tags = box.querySelector('.step-tags');
    tags.replaceChildren();
    const tag = (text, kind) => {
      const made = document.createElement('span');
      made.className = 'tag ' + kind; made.textContent = text; tags.appendChild(made); };
    if (wrong) tag('first wrong step' + (state.category ? ' · ' + state.category : ''),
                   'bad solid');
    else if (right) tag('right', 'good');
    const rating = state.ratings[String(n)];
    if (rating !== undefined)
      tag('rated ' + state.rating_text[String(rating)],
          'rating ' + (rating > 0 ? 'good' : rating < 0 ? 'bad' : 'plain'));
    if (n === state.current) outlined = box;
  }
  if (outlined && state.reveal) {
    const top = outlined.getBoundingClientRect().top;
    if (top < 48 || top > innerHeight * 0.55) outlined.scrollIntoView({block: 'start'});
  }
  return boxes.length;
})(%(state)s)"""

#: The keys, as the help overlay lists them (the actions are made by :meth:`StepMarking.keys`).
KEYS = (("[  ]", "Previous / next step of the response (outlined in the reading)"),
        ("W", "The outlined step is the first wrong one (W on it again: unmark)"),
        ("O", "No error: every step is right (O again: unmark)"),
        ("G", "Category of the first wrong step: ↑ ↓ or its digit, Enter; Esc cancels"),
        ("+  -  =", "Rate the outlined step +1, −1 or 0 and go on (the same key again: unrate)"))


@dataclass(frozen=True, slots=True)
class StepChange:
    """One change to the grader's step mark of a response, with the whole mark it replaced
    (None: there was none), for the page's undo."""

    response_id: str
    before: StepMark | None
    what: str  # what changed, for the "Undone" line


def mark_text(steps: tuple[ResponseStep, ...], mark: StepMark | None, category: str) -> str:
    """The mark in one line: "First wrong: Step 3 · Calculation error", "No error: every step
    right", or how to give one."""
    if mark is None or mark.first_wrong is None:
        return "Not marked: W first wrong step, O no error"
    if mark.first_wrong == NO_ERROR:
        return "No error: every step right"
    return (f"First wrong: {step_label(steps, mark.first_wrong)} · "
            f"{category or 'no category yet (G)'}")


class StepSummary(QFrame):
    """The box above the rubric: how many steps, the outlined one, the mark, the ratings."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setProperty("role", "criterion")
        self.place = label("", "muted")
        self.place.setToolTip("\n".join(f"{keys}: {what}" for keys, what in KEYS))
        self.mark = label("", "step-mark")
        self.mark.setWordWrap(True)
        top = QHBoxLayout()
        top.setSpacing(8)
        top.addWidget(label("Steps", "criterion-name"))
        top.addWidget(self.place, 1, Qt.AlignmentFlag.AlignRight)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addWidget(self.mark)

    def show_mark(self, steps: tuple[ResponseStep, ...], current: int, mark: StepMark | None,
                  category: str) -> None:
        self.setEnabled(True)
        rated = len(mark.ratings) if mark else 0
        at = next((step.label for step in steps if step.number == current), "")
        self.place.setText(" · ".join(filter(None, (
            f"{at} of {len(steps)}" if at else f"{len(steps)} step{'s' * (len(steps) != 1)}"
            + (": ] to go through" if steps else ""),
            f"{rated} rated" if rated else ""))))
        self.mark.setText(mark_text(steps, mark, category) if steps
                          else "This response has no steps to mark.")
        state = "none" if mark is None or mark.first_wrong is None else \
            "right" if mark.first_wrong == NO_ERROR else "wrong"
        restyle(self.mark, "state", state)

    def show_nothing(self) -> None:
        self.place.setText("")
        self.mark.setText("")
        self.setEnabled(False)


class CategoryRow(QFrame):
    """One category: its digit and title, the criteria it belongs to that the grader scored
    below their maximum, and while it is the current one (highlighted) what it means, so that
    even nine categories fit a small screen."""

    clicked = Signal()

    def __init__(self, digit: int | None, title: str, description: str, scored: str,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setProperty("role", "criterion")
        self.setProperty("current", False)
        key = label("" if digit is None else str(digit), "criterion-key")
        key.setFixedWidth(18)
        name = label(title, "criterion-name")
        name.setTextFormat(Qt.TextFormat.PlainText)  # the project's own words, never markup
        top = QHBoxLayout()
        top.setSpacing(6)
        top.addWidget(key)
        top.addWidget(name, 1)
        if scored:
            agrees = label(f"you scored {scored} low", "muted")
            agrees.setToolTip("Your scores of this response put these criteria of the category "
                              "below their maximum.")
            top.addWidget(agrees)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        layout.setSpacing(1)
        layout.addLayout(top)
        self.meaning = label(description, "criterion-help")
        self.meaning.setTextFormat(Qt.TextFormat.PlainText)
        self.meaning.setWordWrap(True)
        self.meaning.setContentsMargins(24, 0, 0, 0)
        self.meaning.hide()
        layout.addWidget(self.meaning)

    def set_current(self, current: bool) -> None:
        restyle(self, "current", current)
        self.meaning.setVisible(current and bool(self.meaning.text()))

    def mousePressEvent(self, event: QMouseEvent) -> None:
        self.clicked.emit()


class CategoryPicker(RowCursor, QFrame):  # type: ignore[misc]  # RowCursor.move hides QWidget.move
    """A small list of a taxonomy's categories over the reading: ↑ ↓ and Enter, a category's
    digit, or a click choose (0: no category); Esc cancels. While it is open every plain key
    is its own, so nothing typed scores or marks."""

    chosen = Signal(object)  # the category's key, None for no category
    closed = Signal()

    WIDTH = 460

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setProperty("role", "card")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        shadow = QGraphicsDropShadowEffect(self)
        shadow.setBlurRadius(24)
        shadow.setOffset(0, 4)
        shadow.setColor(QColor(20, 24, 30, 90))
        self.setGraphicsEffect(shadow)
        self.title = label("", "section")
        self.taxonomy = label("", "muted")
        self.rows: list[CategoryRow] = []
        self.keys: list[str | None] = []
        self.box = QVBoxLayout()
        self.box.setSpacing(3)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(14, 8, 14, 12)
        layout.setSpacing(6)
        layout.addWidget(self.title)
        layout.addWidget(self.taxonomy)
        layout.addLayout(self.box)
        layout.addWidget(label("↑ ↓ and Enter, or a digit, choose; Esc cancels.", "muted"))
        parent.installEventFilter(self)
        self.hide()

    def open(self, chosen_from: Taxonomy, step: str, chosen: str | None,
             low: list[str]) -> None:
        """Offer ``chosen_from``'s categories for ``step`` ("Step 3"), each with those of its
        criteria among ``low`` (the ones the grader scored below their maximum); the category
        ``chosen`` is current, else the first with such a criterion, else the first. "No
        category" comes last where one is chosen."""
        for row in self.rows:
            row.deleteLater()
        choices: list[tuple[str | None, str, str, str]] = [
            (category.key, category.title, category.description,
             ", ".join(key for key in category.criteria if key in low))
            for category in chosen_from.categories]
        if chosen is None:
            chosen = next((key for key, _, _, scored in choices if scored), None)
        else:
            choices.append((None, "No category", "Take the category back.", ""))
        self.rows, self.keys = [], []
        for digit, (key, title, description, scored) in enumerate(choices, 1):
            shown = 0 if key is None else digit if digit <= 9 else None
            row = CategoryRow(shown, title, description, scored, self)
            row.clicked.connect(partial(self._choose, key))
            self.box.addWidget(row)
            self.rows.append(row)
            self.keys.append(key)
        self.title.setText(f"{step}: what went wrong")
        self.taxonomy.setText(chosen_from.title)
        self.set_current(self.keys.index(chosen) if chosen in self.keys else 0)
        self.show()
        self.raise_()
        self.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def set_current(self, index: int) -> None:
        """The current category, its meaning shown (the box grows or shrinks with it)."""
        super().set_current(index)
        self._fit()

    def close_picker(self) -> None:
        """Close without a word (a new response is on show)."""
        if self.isVisible():
            self.hide()

    def _fit(self) -> None:
        parent = self.parentWidget()
        assert parent is not None  # given at construction
        width = min(self.WIDTH, parent.width() - 24)
        layout = self.layout()
        assert layout is not None  # made in __init__
        # by the height its wrapped lines take at that width (a size hint would cut them)
        self.setFixedSize(width, layout.totalHeightForWidth(width))
        QFrame.move(self, (parent.width() - self.width()) // 2,  # RowCursor's move is the cursor's
                    min(56, max(0, parent.height() - self.height())))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and self.isVisible():
            self._fit()
        return False

    def event(self, event: QEvent) -> bool:
        if plain_key(event):
            event.accept()  # ↑ ↓, digits and letters are the list's, not the page's shortcuts
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key == Qt.Key.Key_Escape:
            self._close()
        elif key in (Qt.Key.Key_Up, Qt.Key.Key_Down):
            self.move(-1 if key == Qt.Key.Key_Up else 1)
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self._choose(self.keys[self.current])
        elif Qt.Key.Key_0 <= key <= Qt.Key.Key_9:
            digit = key - Qt.Key.Key_0
            if digit == 0 and None in self.keys:
                self._choose(None)
            elif 1 <= digit <= len(self.keys) and self.keys[digit - 1] is not None:
                self._choose(self.keys[digit - 1])
        event.accept()

    def focusOutEvent(self, event: QFocusEvent) -> None:
        """A click elsewhere leaves the choice, as a popup would."""
        super().focusOutEvent(event)
        if event.reason() == Qt.FocusReason.MouseFocusReason:
            self.hide()

    def _choose(self, key: str | None) -> None:
        self.hide()
        self.chosen.emit(key)
        self.closed.emit()

    def _close(self) -> None:
        self.hide()
        self.closed.emit()


class StepMarking:
    """The step keys of the Grade page ``page``, its summary box, its category picker (over
    ``host``) and the marks drawn on ``reader``. Writes go through ``commit(write, change,
    message, what)``, the page's own, which keeps ``change`` for its undo; ``say`` tells;
    ``low`` gives the criteria the grader's scores of the response put below their maximum
    (the picker points out the categories they belong to)."""

    def __init__(self, page: QWidget, host: QWidget, reader: BufferedReadingView,
                 commit: Callable[[Write, StepChange, str, str], bool],
                 say: Callable[[str], None], closed: Callable[[], None],
                 low: Callable[[], list[str]]) -> None:
        self._page = page
        self._low = low
        self._reader = reader
        self._commit = commit
        self._say = say
        self.summary = StepSummary()
        self.picker = CategoryPicker(host)
        self.picker.chosen.connect(self._category_chosen)
        self.picker.closed.connect(closed)
        self.project: Project | None = None
        self.grader: str | None = None
        self.response_id: str | None = None
        self.steps: tuple[ResponseStep, ...] = ()
        self.mark: StepMark | None = None
        self.category = ""  # the title of the mark's category, as the project words it
        self.current = 0  # the outlined step's number; 0 until [ or ] is pressed
        reader.rendered.connect(partial(self._draw, False))
        self.summary.show_nothing()

    def keys(self) -> list[tuple[str, str, list[QAction]]]:
        """The keys as the page lists them (see :data:`KEYS`)."""
        key = partial(shortcuts, self._page)
        actions = [key(["["], partial(self.move, -1)) + key(["]"], partial(self.move, 1)),
                   key(["W"], self.mark_wrong), key(["O"], self.mark_no_error),
                   key(["G"], self.choose_category),
                   key(["+"], partial(self.rate, 1)) + key(["-"], partial(self.rate, -1))
                   + key(["="], partial(self.rate, 0))]
        return [(keys, what, made) for (keys, what), made in zip(KEYS, actions)]

    # -- what is on show ----------------------------------------------------------------------

    def show(self, project: Project, grader: str, response_id: str, text: str,
             sections: ParsedSolution | None) -> None:
        """A response is on show (its reading is being drawn): its steps and the grader's mark,
        none outlined."""
        self.picker.close_picker()
        self.project, self.grader, self.response_id = project, grader, response_id
        self.steps = response_steps(text, sections)
        self.current = 0
        self._read()

    def show_nothing(self) -> None:
        self.picker.close_picker()
        self.project = self.grader = self.response_id = None
        self.steps, self.mark, self.current = (), None, 0
        self.category = ""
        self.summary.show_nothing()

    def reread(self, responses: frozenset[str] | None) -> None:
        """Marks (or, with ``responses`` None, the taxonomies' words) changed for
        ``responses``; an open picker offers what no longer is, so it closes."""
        if responses is None:
            self.picker.close_picker()
        if self.response_id is not None and (responses is None or self.response_id in responses):
            self._read()
            self._draw(False)

    def _read(self) -> None:
        assert self.project is not None and self.grader is not None and self.response_id
        self.mark = step_marks.my_mark(self.project, self.grader, self.response_id)
        self.category = category_title(self.project, self.mark)  # read once per change
        self._show()

    def _show(self) -> None:
        self.summary.show_mark(self.steps, self.current, self.mark, self.category)

    def _draw(self, reveal: bool) -> None:
        """The mark on the reading's steps (again after every new reading)."""
        if self.project is None:
            return
        mark = self.mark
        state = {"current": self.current, "reveal": reveal,
                 "first_wrong": mark.first_wrong if mark else None,
                 "category": self.category,
                 "ratings": {str(step): value for step, value in (mark.ratings if mark
                                                                  else {}).items()},
                 "rating_text": {str(value): text for value, text in RATING_TEXT.items()}}
        self._reader.run_script(SCRIPT % {
            "selector": json.dumps(f"#{RESPONSE_PART} .{STEP_CLASS}[data-step]"),
            "state": json.dumps(state)})

    # -- the keys -----------------------------------------------------------------------------

    def move(self, delta: int) -> None:
        """[ / ]: the previous or next step outlined and scrolled into view (the first ] the
        first step, the first [ the last)."""
        if not self._ready():
            return
        count = len(self.steps)
        self.current = (count if delta < 0 else 1) if not self.current else \
            max(1, min(count, self.current + delta))
        self._show()
        self._draw(True)

    def mark_wrong(self) -> None:
        """W: the outlined step is the first wrong one; on the one marked, the mark goes."""
        if not self._ready() or not self._outlined():
            return
        step = step_label(self.steps, self.current)
        if self.mark is not None and self.mark.first_wrong == self.current:
            self._write(step_marks.clear_first_wrong, {}, "first wrong step",
                        f"{step} is no longer marked as the first wrong step.")
        else:
            self._write(step_marks.mark_first_wrong, {"step": self.current}, "first wrong step",
                        f"{step} is the first wrong step: G gives its category.")

    def mark_no_error(self) -> None:
        """O: every step is right; pressed again, the mark goes."""
        if not self._ready():
            return
        if self.mark is not None and self.mark.first_wrong == NO_ERROR:
            self._write(step_marks.clear_first_wrong, {}, "no error",
                        "No longer marked as without error.")
        else:
            self._write(step_marks.mark_first_wrong, {"step": NO_ERROR}, "no error",
                        "Marked: every step is right.")

    def choose_category(self) -> None:
        """G: the category picker, for a first wrong step."""
        if not self._ready():
            return
        if self.mark is None or not self.mark.first_wrong:
            self._say("Mark the first wrong step first (] to it, then W); G then gives its "
                      "category.")
            return
        assert self.project is not None
        try:
            offered = taxonomy(self.project, self.mark.taxonomy)
        except ProjectError as error:  # the mark's taxonomy is no longer the project's
            self._say(str(error))
            return
        self.picker.open(offered, step_label(self.steps, self.mark.first_wrong),
                         self.mark.category, self._low())

    def _category_chosen(self, key: str | None) -> None:
        if self.project is None or self.mark is None or not self.mark.first_wrong:
            return
        if key == self.mark.category:
            self._say("That category is the one given already.")
            return
        try:
            chosen_from = taxonomy(self.project, self.mark.taxonomy)
            title = chosen_from.category(key).title if key else ""
        except (ProjectError, KeyError) as error:  # reworded since the picker opened
            self._say(f"That category is no longer offered ({error}); press G again.")
            return
        self._write(step_marks.set_category, {"taxonomy": chosen_from.name, "category": key},
                    "category", f"Category: {title}." if key else "Category taken back.")

    def rate(self, rating: int) -> None:
        """+ - =: rate the outlined step and outline the next; the same rating again unrates."""
        if not self._ready() or not self._outlined():
            return
        step = step_label(self.steps, self.current)
        if self.mark is not None and self.mark.ratings.get(self.current) == rating:
            self._write(step_marks.rate_step, {"step": self.current, "rating": None}, "rating",
                        f"Rating of {step} taken back.")
            return
        if self._write(step_marks.rate_step, {"step": self.current, "rating": rating}, "rating",
                       f"{step} rated {RATING_TEXT[rating]}.") and self.current < len(self.steps):
            self.move(1)

    # -- helpers ------------------------------------------------------------------------------

    def _ready(self) -> bool:
        """Whether there is a response with steps to mark; says why not."""
        if self.response_id is None:
            self._say("Choose a response first.")
            return False
        if not self.steps:
            self._say("This response has no steps to mark.")
            return False
        return True

    def _outlined(self) -> bool:
        if not self.current:
            self._say("Go to a step first: ] the next, [ the previous.")
        return bool(self.current)

    def _write(self, write: Callable[..., Changes], values: dict[str, object], what: str,
               message: str) -> bool:
        assert self.grader is not None and self.response_id is not None
        return self._commit(partial(write, grader=self.grader, response_id=self.response_id,
                                    **values),
                            StepChange(self.response_id, self.mark, what), message, "step mark")
