"""The user's own preferences, kept in the app's settings (not in the project): each person
reads at their own zoom and layout whatever project they open.

Each preference is one :class:`Preference` defined here, so the settings keys and defaults
exist once; pages read and write them through it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from PySide6.QtCore import QByteArray, QSettings

T = TypeVar("T", bool, float, QByteArray)


@dataclass(frozen=True)
class Preference(Generic[T]):
    """One setting: its key in QSettings, its default, and its type (QSettings stores text in
    INI files, so the type is needed to read it back)."""

    key: str
    default: T

    def get(self) -> T:
        kind = type(self.default)
        value = QSettings().value(self.key, self.default, kind)
        return kind(value) if value is not None else self.default

    def set(self, value: T) -> None:
        QSettings().setValue(self.key, value)


#: the reading's zoom factor (Ctrl+= / Ctrl+- / Ctrl+0)
ZOOM = Preference("reading/zoom", 1.0)
ZOOM_STEPS = (0.67, 0.75, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 1.75, 2.0)

#: the Grade page's queue is hidden (Q) / the rubric's level descriptions are hidden (D)
QUEUE_HIDDEN = Preference("grade/queue_hidden", False)
DESCRIPTIONS_HIDDEN = Preference("grade/descriptions_hidden", False)
#: the Grade page's pane sizes (QSplitter.saveState)
GRADE_SPLITTER = Preference("grade/splitter", QByteArray())
#: the Adjudicate page's pane sizes (QSplitter.saveState)
ADJUDICATE_SPLITTER = Preference("adjudicate/splitter", QByteArray())

#: move to the next unfinished response once the last criterion is scored
AUTO_ADVANCE = Preference("grade/auto_advance", False)
#: keep the rules' answer hint hidden until the grader has scored the final answer (blind studies)
HINT_AFTER_ANSWER = Preference("grade/hint_after_answer", False)

#: the main window's geometry and state (QMainWindow.saveGeometry / saveState)
WINDOW_GEOMETRY = Preference("window/geometry", QByteArray())
WINDOW_STATE = Preference("window/state", QByteArray())


def zoomed(current: float, direction: int) -> float:
    """The next zoom step from ``current`` in ``direction`` (1 in, -1 out, 0 back to 100%)."""
    if direction == 0:
        return 1.0
    if direction > 0:
        return next((step for step in ZOOM_STEPS if step > current + 1e-6), ZOOM_STEPS[-1])
    return next((step for step in reversed(ZOOM_STEPS) if step < current - 1e-6), ZOOM_STEPS[0])
