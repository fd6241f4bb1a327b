"""The user's own preferences, kept in the app's settings (not in the project): each person
reads at their own zoom and layout whatever project they open.

Each preference is one :class:`Preference` defined here, so the settings keys and defaults
exist once; pages read and write them through it. The pane sizes are the exception to "whatever
project": they are kept per project (:class:`PaneSizes`), as projects are read at different
widths, while the zoom and the window stay the same everywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar, cast

from PySide6.QtCore import QByteArray, QSettings
from PySide6.QtWidgets import QSplitter

T = TypeVar("T", bool, float, str, QByteArray)


@dataclass(frozen=True)
class Preference(Generic[T]):
    """One setting: its key in QSettings, its default, and its type (QSettings stores text in
    INI files, so the type is needed to read it back)."""

    key: str
    default: T

    def get(self) -> T:
        kind = type(self.default)
        value = cast("T | None", QSettings().value(self.key, self.default, kind))
        return kind(value) if value is not None else self.default

    def set(self, value: T) -> None:
        QSettings().setValue(self.key, value)


#: the reading's zoom factor (Ctrl+= / Ctrl+- / Ctrl+0)
ZOOM = Preference("reading/zoom", 1.0)
ZOOM_STEPS = (0.67, 0.75, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 1.75, 2.0)

#: the Grade page's queue is hidden (Q) / the rubric's level descriptions are hidden (D)
QUEUE_HIDDEN = Preference("grade/queue_hidden", False)
DESCRIPTIONS_HIDDEN = Preference("grade/descriptions_hidden", False)


@dataclass(frozen=True)
class ByProject:
    """A text setting kept for each project, by its file's resolved path (a project reached
    by another path, a link, is the same project)."""

    key: str

    def get(self, project: Path) -> str | None:
        return self._all().get(str(project.resolve()))

    def set(self, project: Path, value: str) -> None:
        kept = self._all()
        kept[str(project.resolve())] = value
        QSettings().setValue(self.key, kept)

    def _all(self) -> dict[str, str]:
        return dict(cast("dict[str, str] | None", QSettings().value(self.key, {})) or {})


@dataclass(frozen=True)
class PaneSizes:
    """A page's pane sizes (QSplitter.saveState), kept for each project by its file's resolved
    path, and the sizes last used in any project: a project opened for the first time starts
    from those (the key ``last`` names is the one a single app-wide setting used before)."""

    last: Preference[QByteArray]
    by_project: ByProject

    def get(self, project: Path | None) -> QByteArray:
        kept = self.by_project.get(project) if project is not None else None
        return QByteArray.fromBase64(kept.encode()) if kept else self.last.get()

    def kept_for(self, project: Path) -> bool:
        return self.by_project.get(project) is not None

    def set(self, project: Path | None, state: QByteArray) -> None:
        self.last.set(state)
        if project is not None:
            self.by_project.set(project, bytes(state.toBase64().data()).decode())


#: the Grade page's pane sizes
GRADE_PANES = PaneSizes(Preference("grade/splitter", QByteArray()),
                        ByProject("grade/splitter_by_project"))
#: the Adjudicate page's pane sizes
ADJUDICATE_PANES = PaneSizes(Preference("adjudicate/splitter", QByteArray()),
                             ByProject("adjudicate/splitter_by_project"))

#: the Reports page's "fold people under N grades" (a number), kept for each project: how many
#: grades make a row of one's own depends on the project's size
REPORT_MIN_GRADES = ByProject("reports/min_grades_by_project")

#: move to the next unfinished response once the last criterion is scored
AUTO_ADVANCE = Preference("grade/auto_advance", False)
#: keep the rules' answer hint hidden until the grader has scored the final answer (blind studies)
HINT_AFTER_ANSWER = Preference("grade/hint_after_answer", False)

#: the model the Run judge dialog offers first
JUDGE_MODEL = Preference("judge/model", "claude-haiku-4-5")

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


class KeptPanes:
    """Lays ``splitter`` out as the project on show left it, and keeps its sizes for that
    project whenever the user drags a handle. A project seen for the first time keeps the
    sizes it starts with, so that a later change in another project leaves it as it was."""

    def __init__(self, splitter: QSplitter, sizes: PaneSizes,
                 lay_out_default: Callable[[], None]) -> None:
        """``lay_out_default``: the first sizes, where nothing (usable) was kept."""
        self.splitter = splitter
        self.sizes = sizes
        self.lay_out_default = lay_out_default
        self.project: Path | None = None
        self.laid_out = False
        splitter.splitterMoved.connect(self.keep)

    def open(self, project: Path | None) -> None:
        """Another project (None: none): its sizes are laid out at the next :meth:`lay_out`."""
        if project != self.project:
            self.project = project
            self.laid_out = False

    def lay_out(self) -> bool:
        """Lay the panes out for the project, once, when they are on show (their width known);
        True if it was done now (restoring a state also restores which panes were hidden)."""
        if self.laid_out or not self.splitter.isVisible():
            return False
        self.laid_out = True
        state = self.sizes.get(self.project)
        if state.isEmpty() or not self.splitter.restoreState(state):
            self.lay_out_default()
        if self.project is not None and not self.sizes.kept_for(self.project):
            self.keep()
        return True

    def keep(self) -> None:
        self.sizes.set(self.project, self.splitter.saveState())
