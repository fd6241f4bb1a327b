"""Who is grading: one person per project, remembered in the app's settings, changeable.

A grader's pack is always graded as its grader (the pack says who). Any other project is graded
as the person chosen in it; a project opened for the first time takes the person chosen last
and keeps them. So opening a pack, or choosing someone else in one project, never changes who
you are in another.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QComboBox, QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from physgrade.project import Project
from physgrade.team.packs import PackOrigin
from physgrade_ui.dialogs import fitted_layout
from physgrade_ui.preferences import ByProject
from physgrade_ui.widgets import label

#: the person chosen last: who a project opened for the first time is graded as
KEY = "grader"
#: each project's person
BY_PROJECT = ByProject("graders_by_project")
#: the window's entry that changes the person, and its key
CHANGE_ACTION, CHANGE_KEY = "Change &Grader…", "Ctrl+G"
CHANGE_HINT = (f"Grading ▸ {CHANGE_ACTION.replace('&', '')} ({CHANGE_KEY}) changes who you are "
               "in this project.")


def remembered() -> str | None:
    """The person chosen last, in any project (None: nobody has said yet)."""
    name = cast(str, QSettings().value(KEY, "", str))
    return name.strip() or None


def remember(name: str) -> None:
    """``name`` is who a project opened for the first time is graded as."""
    QSettings().setValue(KEY, name.strip())


def person_for(project: Project, pack: PackOrigin | None) -> str | None:
    """Who grades ``project`` (``pack``: its origin where it is a grader's pack): a pack's
    grader; else :func:`chosen_for`, kept for the project from now on, so that a later choice
    elsewhere does not change it (None: nobody has said yet)."""
    if pack is not None:
        return pack.grader
    name = chosen_for(project.path)
    if name is not None:
        BY_PROJECT.set(project.path, name.strip())
    return name


def chosen_for(path: Path) -> str | None:
    """The person chosen in the project at ``path``, else the person chosen last."""
    return BY_PROJECT.get(path) or remembered()


def choose(path: Path, name: str) -> None:
    """``name`` grades the project at ``path`` from now on, and any project opened for the first
    time after it."""
    BY_PROJECT.set(path, name.strip())
    remember(name)


def show_person(widget: QLabel, activity: str, person: str | None) -> None:
    """Say on ``widget`` who does ``activity`` ("Grading") on the page: "Grading as ana"."""
    widget.setText(f"{activity} as {person}" if person else f"{activity} as nobody yet")
    widget.setToolTip(CHANGE_HINT)


def name_box(known: list[str], current: str | None, parent: QWidget | None = None) -> QComboBox:
    """Where a grader's name is chosen from the project's graders, or a new one typed."""
    box = QComboBox(parent)
    box.setEditable(True)
    box.addItems(known)
    box.setCurrentText(current or "")
    line = box.lineEdit()
    assert line is not None  # an editable combo box has one
    line.setPlaceholderText("Your name or initials")
    return box


class GraderDialog(QDialog):
    """Type a name or pick one of the project's graders; Enter confirms. It says what changing
    the name changes, so that it is asked once."""

    def __init__(self, project: Path, known: list[str], current: str | None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Who is grading?")
        self.name = name_box(known, current)
        self.name.editTextChanged.connect(self._check)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        intro = label(f"The grades, reviews and labels you give from now on in {project.name} "
                      "are stored under this name. What was given already stays under the name "
                      "that gave it: nothing is moved. Other projects keep their own names.",
                      "muted")
        intro.setWordWrap(True)
        body = QVBoxLayout()
        body.setSpacing(10)
        body.addWidget(intro)
        body.addWidget(self.name)
        body.addStretch(1)
        fitted_layout(self, body, self.buttons, (22, 20, 22, 18), 10)
        self.resize(420, self.sizeHint().height())
        self._check()

    def chosen(self) -> str:
        return self.name.currentText().strip()

    def _check(self) -> None:
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setEnabled(bool(self.chosen()))
