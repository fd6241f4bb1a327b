"""The empty state shown when no project is open: what the app is for and the two ways in."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from physgrade_ui.widgets import label


class WelcomePage(QWidget):
    """Centred title and "New project…" / "Open project…" buttons that trigger the menu actions."""

    def __init__(self, new_action: QAction, open_action: QAction,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        title = label("physgrade", "title", self)
        blurb = label("Grade language-model answers to physics questions with the P-REFS "
                      "rubric.\nStart a new project or open an existing one.", "muted", self)
        blurb.setAlignment(Qt.AlignmentFlag.AlignCenter)
        buttons = QHBoxLayout()
        buttons.setSpacing(12)
        buttons.addStretch(1)
        for text, action, primary in (("New project…", new_action, False),
                                      ("Open project…", open_action, True)):
            button = QPushButton(f"{text}   {action.shortcut().toString()}", self)
            if primary:
                button.setProperty("role", "primary")
            button.clicked.connect(action.trigger)
            buttons.addWidget(button)
        buttons.addStretch(1)

        layout = QVBoxLayout(self)
        layout.setSpacing(14)
        layout.addStretch(2)
        layout.addWidget(title, 0, Qt.AlignmentFlag.AlignHCenter)
        layout.addWidget(blurb, 0, Qt.AlignmentFlag.AlignHCenter)
        layout.addSpacing(10)
        layout.addLayout(buttons)
        layout.addStretch(3)
