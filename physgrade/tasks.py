"""The protocol for long work, shared by the command line and the desktop app.

A long operation is a plain function that takes a ``Task``: it reports progress through it and
checks it for cancellation between steps. The CLI gives it a progress bar; the UI runs it on a
worker thread and forwards progress as signals. One protocol, two faces.
"""

from __future__ import annotations

import threading
from typing import Callable

#: (done, total or None if unknown, what is being done)
ProgressCallback = Callable[[int, int | None, str], None]


class Cancelled(Exception):
    """Raised inside an operation when its caller asked it to stop; nothing is committed."""


class Task:
    """Progress reporting and cooperative cancellation for one run of an operation."""

    def __init__(self, progress: ProgressCallback | None = None) -> None:
        self._progress = progress
        self._cancel = threading.Event()

    def cancel(self) -> None:
        """Ask the operation to stop at its next check (callable from any thread)."""
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def check(self) -> None:
        """Raise :class:`Cancelled` if cancellation was requested."""
        if self._cancel.is_set():
            raise Cancelled()

    def report(self, done: int, total: int | None, stage: str) -> None:
        """Tell the caller how far the work is, then honour a pending cancellation."""
        if self._progress is not None:
            self._progress(done, total, stage)
        self.check()

    def part(self, offset: int, total: int, named: str = "") -> "Task":
        """This task as seen by one part of the work: the part's progress counts on from
        ``offset`` towards ``total`` (its stages prefixed with ``named: `` if given), and
        cancelling either cancels both."""
        child = Task(lambda done, _total, stage: self.report(
            offset + done, total, f"{named}: {stage}" if named else stage))
        child._cancel = self._cancel
        return child
