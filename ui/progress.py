"""A progress dialog bound to a :class:`~physgrade_ui.workers.Worker`: shows its stages, cancels it.

The dialog appears only if the work takes longer than a moment, so quick operations do not
flash a window, and it goes away by itself whatever the outcome.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QMessageBox, QProgressDialog, QWidget

from physgrade_ui.workers import Operation, Worker

SHOW_AFTER_MS = 400


class ProgressDialog(QProgressDialog):
    """Window-modal progress for one worker; its Cancel button asks the worker to stop."""

    def __init__(self, title: str, worker: Worker, parent: QWidget) -> None:
        super().__init__(f"{title}…", "Cancel", 0, 0, parent)
        self._title = title
        self.setWindowTitle(title)
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self.setMinimumDuration(SHOW_AFTER_MS)
        self.setMinimumWidth(420)
        self.setAutoClose(False)
        self.setAutoReset(False)
        self.canceled.connect(worker.cancel)
        worker.progress.connect(self.show_progress)
        for outcome in (worker.finished, worker.failed, worker.cancelled):
            outcome.connect(self._dismiss)

    @Slot(int, int, str)
    def show_progress(self, done: int, total: int, stage: str) -> None:
        self.setLabelText(f"{self._title}: {stage}…")
        self.setMaximum(max(total, 0))  # 0 makes a busy indicator when the total is unknown
        self.setValue(min(done, total) if total > 0 else 0)

    @Slot()
    def _dismiss(self) -> None:
        # hide(), not close(): closing a QProgressDialog emits canceled.
        self.canceled.disconnect()
        self.hide()
        self.deleteLater()


def run_with_outcome(title: str, operation: Operation, parent: QWidget,
                     on_finished: Callable[[Any], None], say: Callable[[str], None],
                     failed: str, cancelled: str) -> Worker:
    """:func:`run_with_progress`, handing the result to ``on_finished``, and telling the user
    through ``say`` (a status bar) when the work did not finish: ``cancelled`` as it is,
    ``failed`` also in an error box together with the error."""
    worker = run_with_progress(title, operation, parent)
    worker.finished.connect(on_finished)
    worker.failed.connect(partial(_show_failure, parent, title, say, failed))
    worker.cancelled.connect(partial(say, cancelled))
    return worker


def _show_failure(parent: QWidget, title: str, say: Callable[[str], None], message: str,
                  error: Exception) -> None:
    say(message)
    QMessageBox.critical(parent, title, f"{message}\n\n{error}")


def run_with_progress(title: str, operation: Operation, parent: QWidget) -> Worker:
    """Start ``operation`` on a worker with a progress dialog; connect to the returned worker."""
    worker = Worker(operation, parent)
    ProgressDialog(title, worker, parent)
    for outcome in (worker.finished, worker.failed, worker.cancelled):
        outcome.connect(worker.deleteLater)
    worker.start()
    return worker


class SingleRun:
    """The one long operation a page or window runs at a time: started with progress and
    Cancel, forgotten when it ends (``changed`` hears both), stopped and waited for when the
    window closes."""

    def __init__(self, parent: QWidget, say: Callable[[str], None],
                 changed: Callable[[], None] = lambda: None) -> None:
        self._parent, self._say, self._changed = parent, say, changed
        self.worker: Worker | None = None

    def start(self, title: str, operation: Operation, on_finished: Callable[[Any], None],
              failed: str, cancelled: str) -> Worker | None:
        """:func:`run_with_outcome` unless an operation is already under way (then None)."""
        if self.worker is not None:
            return None
        self.worker = run_with_outcome(title, operation, self._parent, on_finished, self._say,
                                       failed, cancelled)
        for outcome in (self.worker.finished, self.worker.failed, self.worker.cancelled):
            outcome.connect(self._idle)
        self._changed()
        return self.worker

    def _idle(self) -> None:
        self.worker = None
        self._changed()

    def stop(self) -> None:
        """Cancel the operation under way, if any, and wait until it has returned."""
        if self.worker is not None:
            self.worker.cancel()
            self.worker.wait()
