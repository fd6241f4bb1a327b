"""What a report reads from a project besides the scores, kept until what it comes from changes.

Reviews of judge verdicts, Bloom labels, estimation samples and judge versions are small tables,
but a report read them again, narrowed in SQL, for every filter change. Each is now read whole
by one function (such as :func:`physgrade.validation.figures.read_reviews`) and narrowed in
memory; :class:`Readings` keeps what those functions returned until a change notice touches the
kinds of records it was read from (:meth:`Readings.forget`), so that a filter change reads
nothing from the database.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, TypeVar

from physgrade.changes import Changes, RecordKind
from physgrade.project import Project

T = TypeVar("T")


class Readings:
    """The results of read functions of one project, each kept until a change of the kinds it
    was read from; a new ``Readings()`` reads afresh (the command line's one report)."""

    def __init__(self) -> None:
        self._found: dict[Callable[[Project], Any], tuple[tuple[RecordKind, ...], Any]] = {}
        self._generation = 0
        self._lock = threading.Lock()

    def get(self, project: Project, read: Callable[[Project], T], read_from: tuple[RecordKind, ...]) -> T:
        """What ``read(project)`` returns, read now (as of one moment) only if not kept;
        ``read_from``: the kinds of records it reads. Callable from any thread; a reading begun
        before a :meth:`forget` is used once, never kept."""
        with self._lock:
            if read in self._found:
                return self._found[read][1]
            generation = self._generation
        with project.snapshot():
            found = read(project)
        with self._lock:
            if generation == self._generation:
                self._found[read] = (read_from, found)
        return found

    def forget(self, changes: Changes) -> None:
        """Drop what was read from the kinds of records ``changes`` touched."""
        with self._lock:
            stale = [read for read, (read_from, _) in self._found.items()
                     if changes.touches(*read_from)]
            for read in stale:
                del self._found[read]
            if changes:
                self._generation += 1
