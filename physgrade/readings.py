"""What a report reads from a project besides the scores, kept until the project changes.

Reviews of judge verdicts, Bloom labels, estimation samples and judge versions are small tables,
but a report read them again, narrowed in SQL, for every filter change. Each is now read whole
by one function (such as :func:`physgrade.validation.figures.read_reviews`) and narrowed in
memory; :class:`Readings` keeps what those functions returned until a change notice
(:meth:`Readings.forget`), so that a filter change reads nothing from the database.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, TypeVar

from physgrade.project import Project

T = TypeVar("T")


class Readings:
    """The results of read functions of one project, kept until :meth:`forget`; a new
    ``Readings()`` reads afresh (the command line's one report)."""

    def __init__(self) -> None:
        self._found: dict[Callable[[Project], Any], Any] = {}
        self._generation = 0
        self._lock = threading.Lock()

    def get(self, project: Project, read: Callable[[Project], T]) -> T:
        """What ``read(project)`` returns, read now only if not kept (callable from any
        thread; a reading begun before a :meth:`forget` is used once, never kept)."""
        with self._lock:
            if read in self._found:
                return self._found[read]
            generation = self._generation
        found = read(project)
        with self._lock:
            if generation == self._generation:
                self._found[read] = found
        return found

    def forget(self) -> None:
        """Drop everything kept: the project changed."""
        with self._lock:
            self._found.clear()
            self._generation += 1
