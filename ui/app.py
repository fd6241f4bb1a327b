"""The desktop app's entry point, called by ``physgrade gui`` and ``physgrade demo``.

The command line finds :func:`run` through the ``physgrade.app`` entry point group declared in
pyproject.toml, never by importing this package: the core runs where the app is not installed.
"""

from __future__ import annotations

import sys
from contextlib import ExitStack
from functools import partial
from importlib import resources
from pathlib import Path
from types import TracebackType
from typing import Callable

from PySide6.QtCore import qInstallMessageHandler
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from physgrade_ui import reading_view, recent, style
from physgrade_ui.main_window import MainWindow


def run(path: Path | None = None, smoke: Path | None = None) -> int:
    """Show the main window on ``path`` (else the most recent project, else the empty state)
    and run the event loop; returns the exit code. The terminal it was started from hears
    Qt's warnings but not QtWebEngine's routine chatter.

    ``smoke``: instead, check that the app renders mathematics and save a screenshot there
    (:mod:`physgrade_ui.smoke`, on settings of its own), then quit."""
    previous = qInstallMessageHandler(reading_view.print_unless_noise)
    try:
        app = QApplication.instance() or QApplication(sys.argv)
        assert isinstance(app, QApplication)  # a test's or ours: the widgets need a QApplication
        app.setApplicationName("physgrade")
        app.setOrganizationName("physgrade")
        app.setWindowIcon(icon())
        style.apply(app)
        with ExitStack() as stack:
            if smoke is not None:
                from physgrade_ui import smoke as smoke_test  # only for a smoke test

                stack.enter_context(smoke_test.own_settings())
            window = MainWindow(path if path is not None else recent.most_recent())
            sys.excepthook = partial(_last_resort, window, sys.excepthook)
            if smoke is not None:
                return smoke_test.check(app, window, smoke)
            window.show()
            return app.exec()
    finally:
        qInstallMessageHandler(previous)  # no Python handler once Python begins to go


def icon() -> QIcon:
    """The app's icon (resources/icons: the SVG drawn at 256 px, as desktops ask for a PNG)."""
    return QIcon(str(resources.files("physgrade_resources") / "icons" / "physgrade.png"))


def _last_resort(window: MainWindow, default: Callable[..., object], kind: type[BaseException],
                 error: BaseException, trace: TracebackType | None) -> None:
    """A failure no operation caught (a bug of ours): printed as Python would, and told the
    user in the one error box rather than lost on a terminal they may not see."""
    default(kind, error, trace)
    if isinstance(error, Exception):
        window.ops.fail("Something went wrong", error,
                        "physgrade hit an unexpected error; your work up to here is saved.")
