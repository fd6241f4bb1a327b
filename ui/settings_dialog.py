"""File ▸ Settings…: what a user sets once, each shown as it is now, checked, and kept by Save.

The grader's name (the open project's person, :mod:`physgrade_ui.grader`), the project's answer
tolerance (:mod:`physgrade.answers.tolerance`: the rules' hint and rater and the judge prompt all
use it, so it is the project's, not a user's, and not offered for a grader's pack), the
duplicate audit's thresholds
and embedding model (the audit the Duplicates page runs next starts from them), the model the
Run judge dialog offers first, and forgetting the remembered API key. Every field is checked
before anything is written, by the rule that uses it, so a bad value changes nothing; Cancel
changes nothing either.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit, QWidget

from physgrade.answers.outcome import Settings
from physgrade.judge import credentials
from physgrade.judge.pricing import known_models
from physgrade_ui import preferences, transfer
from physgrade_ui.duplicates import (
    AuditRequest,
    ModelField,
    default_thresholds,
    model_problem,
    remember_request,
    remembered_request,
)
from physgrade_ui.grader import name_box
from physgrade_ui.widgets import label

EMBEDDED = "empty: the embedded all-MiniLM-L6-v2"


class Refused(ValueError):
    """A field's value that cannot be kept: the message names the field."""


@dataclass(frozen=True, slots=True)
class Choices:
    """What Save keeps: ``grader`` and ``tolerance`` None where they are not offered (no
    project, a pack)."""

    grader: str | None
    tolerance: float | None
    jaccard: float
    cosine: float
    model: Path | None
    judge_model: str
    forget_key: bool


def save(choices: Choices) -> None:
    """Keep ``choices`` (all but the grader and the tolerance, which the window sets for its
    project); a key the keyring will not let go is refused before anything is kept."""
    if choices.forget_key and (problem := credentials.forget()):
        raise Refused(f"Forget the remembered key: {problem}.")
    preferences.JUDGE_MODEL.set(choices.judge_model)
    last = remembered_request() or AuditRequest(None, *default_thresholds())
    remember_request(dataclasses.replace(last, jaccard=choices.jaccard, cosine=choices.cosine,
                                         model=choices.model))


def _number(field: str, text: str, percent: bool = False) -> float:
    try:
        value = float(text.strip().removesuffix("%").strip())
    except ValueError:
        raise Refused(f"{field}: “{text.strip()}” is not a number.") from None
    return value / 100 if percent else value


class SettingsDialog(transfer.TransferDialog[Choices]):
    """The settings, filled with their values now; Save checks them all, then keeps them."""

    def __init__(self, project: Path | None, person: str | None, known: list[str],
                 parent: QWidget | None = None, tolerance: float | None = None) -> None:
        """``project``: the project whose grader may be changed (None: none is offered, as for
        no project or a grader's pack), graded by ``person``; ``known``: its graders;
        ``tolerance``: its answer tolerance (None: not offered)."""
        super().__init__("Settings", "Save", parent)
        self.grader: QComboBox | None = None
        if project is not None:
            self.grader = name_box(known, person, self)
            self.form.addRow("&Grader", self.grader)
            self.form.addRow("", self._note(
                f"What you grade, review and label from now on in {project.name} is stored "
                "under this name; what was given already stays under its name, and other "
                "projects keep their own."))

        self.tolerance = QLineEdit("" if tolerance is None else f"{tolerance * 100:g}%", self)
        self.tolerance.setEnabled(project is not None and tolerance is not None)
        self.tolerance.setToolTip(
            "How far a number may be from the reference answer, relative to it, to match: the "
            "rules' hint and rater check under it and the judge prompt states it. It is kept in "
            "the project" if self.tolerance.isEnabled() else
            "The project's answer tolerance: open a project (not a grader's pack) to change it")
        self.form.addRow("Answer &tolerance", self.tolerance)

        last = remembered_request()
        jaccard, cosine = (last.jaccard, last.cosine) if last else default_thresholds()
        self.jaccard = QLineEdit(f"{jaccard:g}", self)
        self.jaccard.setToolTip("Duplicates, stage 1: the share of word 5-grams two questions "
                                "have in common")
        self.cosine = QLineEdit(f"{cosine:g}", self)
        self.cosine.setToolTip("Duplicates, stage 2: the cosine similarity of the questions' "
                               "embeddings")
        self.form.addRow("Duplicates: &Jaccard ≥", self.jaccard)
        self.form.addRow("Duplicates: &cosine ≥", self.cosine)
        self.model = ModelField(self)
        self.model.edit.setPlaceholderText(EMBEDDED)
        self.model.edit.setText(str(last.model) if last and last.model else "")
        self.form.addRow("&Embedding model", self.model)
        self.form.addRow("", self._note("The next duplicate audit starts from these."))

        self.judge_model = QComboBox(self)
        self.judge_model.setEditable(True)
        self.judge_model.addItems(known_models())
        self.judge_model.setCurrentText(preferences.JUDGE_MODEL.get())
        self.form.addRow("&Judge model", self.judge_model)

        found = credentials.find()
        kept = credentials.remembered()
        self.key_source = label(found.source if found else "none: the Run judge dialog asks "
                                "for one", "muted", self)
        self.form.addRow("API key", self.key_source)
        self.forget_key = QCheckBox("&Forget the remembered key", self)
        self.forget_key.setEnabled(kept is not None)
        self.forget_key.setToolTip("Deletes it from the system keyring (and this session) on Save"
                                   if kept else "No key is remembered")
        self.form.addRow("", self.forget_key)
        self.resize(640, self.sizeHint().height())

    def _note(self, text: str) -> QWidget:
        note = label(text, "muted", self)
        note.setWordWrap(True)
        return note

    def choices(self) -> Choices:
        """The form's values, checked by the rules that use them; :class:`Refused` names the
        field of the first that cannot be kept."""
        from physgrade.dedup.audit import Thresholds  # numpy comes with it: only when saving

        name = self.grader.currentText().strip() if self.grader is not None else None
        if name == "":
            raise Refused("Grader: enter your name or initials.")
        tolerance = None
        if self.tolerance.isEnabled():
            tolerance = _number("Answer tolerance", self.tolerance.text(), percent=True)
            try:
                Settings(rtol=tolerance)
            except ValueError as exc:
                raise Refused(f"Answer tolerance: {exc}.") from None
        jaccard = _number("Duplicates: Jaccard", self.jaccard.text())
        cosine = _number("Duplicates: cosine", self.cosine.text())
        try:
            Thresholds(jaccard, cosine)
        except ValueError as exc:
            raise Refused(f"Duplicates: {exc}.") from None
        model = self.model.path()
        if model is not None and (problem := model_problem(model)):
            raise Refused(f"Embedding model: {problem}")
        judge_model = self.judge_model.currentText().strip()
        if not judge_model:
            raise Refused("Judge model: enter a model name.")
        return Choices(name, tolerance, jaccard, cosine, model, judge_model,
                       self.forget_key.isChecked())

    def accept(self) -> None:
        """Save: keep everything, or, if a field cannot be kept, nothing, and say which."""
        try:
            choices = self.choices()
            save(choices)
        except Refused as exc:
            self.refuse(str(exc))
            return
        self.grant(choices)

