"""F and Esc over a reading's figures, the same on every page that shows a reading.

F enlarges the reading's next figure to the whole reading area (after the last one, the reading
comes back), so a diagram's labels can be read without leaving the keyboard; Esc goes back at
once. Esc acts only while a figure is enlarged, so a page's own Esc keeps its meaning otherwise.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtWidgets import QWidget

from physgrade_ui.reading_view import BufferedReadingView, ReadingView
from physgrade_ui.widgets import named_shortcut

#: The keys, as the help overlay lists them.
KEYS = ("F", "Enlarge the next figure to the whole reading (after the last one: back); Esc "
             "goes back")


class FigureKeys:
    """The two keys on ``page`` for ``reader``; ``refusal`` says why F cannot act now (or
    returns "" when it can), and ``say`` shows a line in the status bar."""

    def __init__(self, page: QWidget, reader: ReadingView | BufferedReadingView,
                 say: Callable[[str], None], refusal: Callable[[], str] = lambda: "") -> None:
        self._reader = reader
        self._say = say
        self._refusal = refusal
        self.next_action = named_shortcut(page, "Enlarge the Next &Figure", ["F"], self.step)
        self.back_action = named_shortcut(page, "Back From the Figure", ["Escape"], self.back)
        self.back_action.setEnabled(False)
        reader.rendered.connect(self._new_reading)

    @property
    def enlarged(self) -> bool:
        return self.back_action.isEnabled()

    def step(self) -> None:
        """F: the next figure, enlarged; after the last one, the reading."""
        refused = self._refusal()
        if refused:
            self._say(refused)
            return
        self._reader.step_figure(True, self._shown)

    def back(self) -> None:
        """Esc: from the enlarged figure back to the reading."""
        self._reader.step_figure(False, self._shown)

    def close(self) -> None:
        """Close an enlarged figure without a word (the page is about to show something else)."""
        if self.enlarged:
            self.back_action.setEnabled(False)
            self._reader.step_figure(False, lambda number, count: None)

    def _new_reading(self) -> None:
        """A new reading is shown: it has no figure enlarged."""
        self.back_action.setEnabled(False)

    def _shown(self, number: int, count: int) -> None:
        self.back_action.setEnabled(number > 0)
        if not count:
            self._say("This reading has no figures.")
        elif number:
            following = "the next" if number < count else "the reading"
            self._say(f"Figure {number} of {count} in this reading: F for {following}, Esc back "
                      "to the reading.")
        else:
            self._say("Back to the reading.")
