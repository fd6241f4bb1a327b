"""The main window comes back where the user left it: its size and position are kept in the
user's settings (isolated per test by ``app_settings``) when it closes."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QRect  # noqa: E402

from physgrade_ui.main_window import DEFAULT_SIZE, MainWindow  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_settings")


def shown(qtbot) -> MainWindow:
    window = MainWindow(None)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return window


def test_the_first_start_has_the_default_size(qtbot) -> None:
    assert shown(qtbot).size() == DEFAULT_SIZE


def test_window_state_survives_a_restart(qtbot) -> None:
    first = shown(qtbot)
    placed = QRect(110, 70, 1300, 820)  # within the screen, above the minimum size
    first.setGeometry(placed)
    qtbot.waitUntil(lambda: first.geometry() == placed, timeout=5_000)
    first.close()

    second = shown(qtbot)
    assert second.geometry() == placed
