"""Running a core operation off the GUI thread, so the window stays responsive.

A core operation is a callable taking a :class:`physgrade.tasks.Task`. :class:`Worker` runs it
on its own :class:`QThread`, turns the task's progress reports into a Qt signal and reports the
outcome with exactly one of ``finished``, ``failed`` or ``cancelled``, always delivered on the
GUI thread and never before the caller got a chance to connect (they go through the event loop).

Workers are made by :class:`~physgrade_ui.operations.Operations` alone, which also opens the
connection an operation uses (a connection is not shared across threads); the operation must
not touch objects owned by the GUI thread.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Callable

from PySide6.QtCore import QObject, QThread, Signal, Slot

from physgrade.tasks import Cancelled, Task

Operation = Callable[[Task], Any]


class _Thread(QThread):
    """A QThread that runs one callable."""

    def __init__(self, body: Callable[[], None], parent: QObject) -> None:
        super().__init__(parent)
        self._body = body

    def run(self) -> None:
        self._body()


class _Ending(Enum):
    """How an operation on a worker ended: which signal delivers it."""

    FINISHED = "finished"
    FAILED = "failed"
    CANCELLED = "cancelled"


class Worker(QObject):
    """One run of one operation on a background thread."""

    #: (done, total or -1 when unknown, stage)
    progress = Signal(int, int, str)
    #: the operation's return value
    finished = Signal(object)
    #: the exception it raised
    failed = Signal(object)
    cancelled = Signal()

    def __init__(self, operation: Operation, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._operation = operation
        self._task = Task(self._report)
        self._outcome: tuple[_Ending, Any] = (_Ending.CANCELLED, None)
        self._thread = _Thread(self._run, self)
        self._thread.finished.connect(self._deliver)

    def start(self) -> None:
        self._thread.start()

    def cancel(self) -> None:
        """Ask the operation to stop at its next progress report (harmless once it is done)."""
        self._task.cancel()

    def is_running(self) -> bool:
        return self._thread.isRunning()

    def wait(self) -> None:
        """Block until the operation has returned (used when the window closes)."""
        self._thread.wait()

    def _report(self, done: int, total: int | None, stage: str) -> None:
        # Called on the worker thread; the signal is queued to the GUI thread's receivers.
        self.progress.emit(done, -1 if total is None else total, stage)

    def _run(self) -> None:
        try:
            self._outcome = (_Ending.FINISHED, self._operation(self._task))
        except Cancelled:
            self._outcome = (_Ending.CANCELLED, None)
        except Exception as exc:  # any failure is the caller's to present, not a crash
            self._outcome = (_Ending.FAILED, exc)

    @Slot()
    def _deliver(self) -> None:
        self._thread.wait()  # finished is emitted just before the thread ends; let it end
        ending, value = self._outcome
        if ending is _Ending.FINISHED:
            self.finished.emit(value)
        elif ending is _Ending.FAILED:
            self.failed.emit(value)
        else:
            self.cancelled.emit()
