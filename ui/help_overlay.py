"""The keyboard help: a card of every shortcut laid over the window (``?`` or F1).

It covers the window instead of opening a dialog so the grader keeps their place; any key or
click closes it.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QColor, QKeyEvent, QMouseEvent, QPainter, QPaintEvent
from PySide6.QtWidgets import QFrame, QGridLayout, QVBoxLayout, QWidget

from physgrade_ui.widgets import label

Section = tuple[str, list[tuple[str, str]]]  # title, (keys, what they do)


class HelpOverlay(QWidget):
    """A dimmed layer over ``parent`` with the shortcut sections in columns."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.card = QFrame(self)
        self.card.setProperty("role", "card")
        self.grid = QGridLayout()
        self.grid.setHorizontalSpacing(36)
        self.grid.setVerticalSpacing(2)
        layout = QVBoxLayout(self.card)
        layout.setContentsMargins(28, 22, 28, 22)
        layout.addWidget(label("Keyboard shortcuts", "title"))
        layout.addLayout(self.grid)
        layout.addWidget(label("Press any key or click to close.", "muted"))
        parent.installEventFilter(self)
        self.hide()

    def open(self, sections: list[Section]) -> None:
        while (item := self.grid.takeAt(0)) is not None:
            widget = item.widget()
            assert widget is not None  # it holds labels only
            widget.deleteLater()
        for column, (title, rows) in enumerate(sections):
            self.grid.addWidget(label(title, "section"), 0, column * 2, 1, 2)
            for row, (keys, what) in enumerate(rows, start=1):
                key = label(keys, "key")
                self.grid.addWidget(key, row, column * 2, Qt.AlignmentFlag.AlignRight)
                self.grid.addWidget(label(what), row, column * 2 + 1)
        self._fit()
        self.show()
        self.raise_()
        self.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def _fit(self) -> None:
        parent = self.parentWidget()
        assert parent is not None  # given at construction
        self.setGeometry(parent.rect())
        self.card.adjustSize()
        self.card.move((self.width() - self.card.width()) // 2,
                       max(0, (self.height() - self.card.height()) // 2))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and self.isVisible():
            self._fit()
        return False

    def paintEvent(self, event: QPaintEvent) -> None:
        QPainter(self).fillRect(self.rect(), QColor(20, 24, 30, 120))

    def keyPressEvent(self, event: QKeyEvent) -> None:
        self.hide()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        self.hide()
