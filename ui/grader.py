"""Who is grading: asked at first start, remembered in the app's settings, changeable.

The name is the grader's identity in every project they open (scores, history, positions).
"""

from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QComboBox, QDialog, QDialogButtonBox, QVBoxLayout, QWidget

from physgrade_ui.widgets import label

KEY = "grader"


def remembered() -> str | None:
    name = QSettings().value(KEY, "", str)
    return name.strip() or None


def remember(name: str) -> None:
    QSettings().setValue(KEY, name.strip())


class GraderDialog(QDialog):
    """Type a name or pick one of the project's graders; Enter confirms."""

    def __init__(self, known: list[str], current: str | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Who is grading?")
        self.name = QComboBox()
        self.name.setEditable(True)
        self.name.addItems(known)
        self.name.setCurrentText(current or "")
        self.name.lineEdit().setPlaceholderText("Your name or initials")
        self.name.editTextChanged.connect(self._check)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(22, 20, 22, 18)
        layout.setSpacing(10)
        intro = label("Your scores are kept under this name, in every project you open. "
                      "Colleagues grading the same project use their own names.", "muted")
        intro.setWordWrap(True)
        layout.addWidget(intro)
        layout.addWidget(self.name)
        layout.addWidget(self.buttons)
        self.resize(420, self.sizeHint().height())
        self._check()

    def chosen(self) -> str:
        return self.name.currentText().strip()

    def _check(self) -> None:
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setEnabled(bool(self.chosen()))
