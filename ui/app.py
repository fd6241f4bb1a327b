"""The desktop app's entry point, called by ``physgrade gui`` and ``physgrade demo``."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtWidgets import QApplication

from physgrade_ui import recent, style
from physgrade_ui.main_window import MainWindow


def run(path: Path | None = None) -> int:
    """Show the main window on ``path`` (else the most recent project, else the empty state)
    and run the event loop; returns the exit code."""
    app = QApplication.instance() or QApplication(sys.argv)
    app.setApplicationName("physgrade")
    app.setOrganizationName("physgrade")
    style.apply(app)
    window = MainWindow(path if path is not None else recent.most_recent())
    window.show()
    return app.exec()
