"""The strip above the Grade page's reading: the layout's switches, each with its key shown.

A view over the page's actions: a button triggers its action and follows its checked state,
so the keys, the menus and these buttons never disagree.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from physgrade.grading import OtherVerdict
from physgrade_ui.widgets import ElidedLabel


def comparison_text(complete: bool, verdicts: list[OtherVerdict] | None,
                    mine: dict[str, int | None]) -> str:
    """What the comparison holds, said beside its button before it is opened."""
    if not complete or verdicts is None:
        return "blind until you finish"
    if not verdicts:
        return "nobody else yet"
    disagreeing = sum(1 for verdict in verdicts if verdict.disagreements(mine))
    raters = f"{len(verdicts)} other{'s' if len(verdicts) != 1 else ''}"
    return f"{raters}, {disagreeing} disagree" if disagreeing else f"{raters}, all agree"


class ReadingBar(QWidget):
    """The queue switch, the jump from reference to response, the zoom, and the comparison
    with what it holds."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("reading-bar")
        self.queue = self._button("Queue  (Q)")
        self.zoom_out = self._button("−")
        self.zoom_level = QLabel("100%")
        self.zoom_level.setProperty("role", "muted")
        self.zoom_in = self._button("+")
        self.compare = self._button("Compare  (C)")
        self.jump = self._button("Response  (R)")
        # it gives way ("…") before the bar makes the page wider than a small screen
        self.compared = ElidedLabel()
        self.compared.setText(comparison_text(False, None, {}))
        self.compared.setProperty("role", "muted")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.setSpacing(4)
        layout.addWidget(self.queue)
        layout.addWidget(self.jump)
        layout.addSpacing(6)
        layout.addWidget(self.zoom_out)
        layout.addWidget(self.zoom_level)
        layout.addWidget(self.zoom_in)
        layout.addSpacing(6)
        layout.addWidget(self.compare)
        layout.addWidget(self.compared, 1)

    def _button(self, text: str) -> QPushButton:
        button = QPushButton(text)
        button.setProperty("role", "small")
        button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the keyboard stays on the rubric
        return button

    def connect_actions(self, queue: QAction, compare: QAction, jump: QAction,
                        zoom_out: QAction, zoom_in: QAction, zoom_reset: QAction) -> None:
        """Each button triggers its action; the checkable ones follow their action's state."""
        for button, action in ((self.queue, queue), (self.compare, compare), (self.jump, jump),
                               (self.zoom_out, zoom_out), (self.zoom_in, zoom_in)):
            button.clicked.connect(action.trigger)
            button.setToolTip(f"{action.text().replace('&', '')}  "
                              f"({action.shortcut().toString()})")
            if action.isCheckable():
                button.setCheckable(True)
                button.setChecked(action.isChecked())
                action.toggled.connect(button.setChecked)
        self.queue.setToolTip("Hide or show the queue  (Q)")
        self.zoom_level.setToolTip(f"{zoom_reset.text().replace('&', '')}: "
                                   f"{zoom_reset.shortcut().toString()}")

    def show_side_by_side(self, side_by_side: bool) -> None:
        """The jump between reference and response is offered only where they stack."""
        self.jump.setVisible(not side_by_side)

    def show_zoom(self, factor: float) -> None:
        self.zoom_level.setText(f"{factor:.0%}")

    def show_comparison(self, complete: bool, verdicts: list[OtherVerdict] | None,
                        mine: dict[str, int | None] | None = None) -> None:
        self.compared.setText(comparison_text(complete, verdicts, mine or {}))
