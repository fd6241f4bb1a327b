"""A progress dialog bound to a :class:`~physgrade_ui.workers.Worker`: shows its stages, cancels it.

The dialog appears only if the work takes longer than a moment, so quick operations do not
flash a window, and it goes away by itself whatever the outcome, for good: it is shown by a
timer of its own that the outcome stops (Qt's own delayed show could still pop the dialog up
after a quick failure, on top of the error box, where nothing would close it).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtWidgets import QProgressDialog, QWidget

from physgrade_ui.dialogs import fit_on_show
from physgrade_ui.workers import Worker

SHOW_AFTER_MS = 400
NEVER_MS = 2**31 - 1


class ProgressDialog(QProgressDialog):
    """Window-modal progress for one worker; its Cancel button asks the worker to stop."""

    def __init__(self, title: str, worker: Worker, parent: QWidget) -> None:
        super().__init__(f"{title}…", "Cancel", 0, 0, parent)
        self._title = title
        self.setWindowTitle(title)
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self.setAutoClose(False)
        self.setAutoReset(False)
        self.setMinimumWidth(420)
        self.setMinimumDuration(NEVER_MS)  # Qt never shows it by itself: the timer below does
        fit_on_show(self)
        self.reset()
        self.hide()
        self._show_timer = QTimer(self)
        self._show_timer.setSingleShot(True)
        self._show_timer.timeout.connect(self.show)
        self._show_timer.start(SHOW_AFTER_MS)
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
        self._show_timer.stop()
        self.canceled.disconnect()
        self.reset()
        self.hide()
        # Give the keyboard back to the window (without a window manager nobody else would).
        if (parent := self.parentWidget()) is not None:
            parent.window().activateWindow()
        self.deleteLater()
