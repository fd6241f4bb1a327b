"""Interrupting a command at a known point: the command line's progress task, made to cancel
itself when a report matches, as Ctrl+C would at that moment."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable

from physgrade import cli
from physgrade.tasks import Task

#: The message of a command interrupted after it stored work, up to what it says it kept.
CANCELLED = "physgrade: cancelled; "


def cancel_when(monkeypatch, when: Callable[[int, int | None, str], bool]) -> None:
    """Make every task the command line starts cancel itself at the first progress report
    ``(done, total, stage)`` for which ``when`` is true."""
    @contextmanager
    def progress_task():
        def progress(done: int, total: int | None, stage: str) -> None:
            if when(done, total, stage):
                task.cancel()

        task = Task(progress)
        yield task

    monkeypatch.setattr(cli, "progress_task", progress_task)
