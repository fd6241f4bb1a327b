"""Import and export: the dialogs that ask what to move, and the operations the worker runs.

The operations run on a worker through :meth:`physgrade_ui.operations.Operations.run`; the
dialogs only collect and check the user's choices and never touch the project.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from physgrade.exporter import export_kind
from physgrade.formats import FILE_KINDS, parse_mapping
from physgrade.importer import ImportResult, import_file
from physgrade.project import Project
from physgrade.tasks import Task
from physgrade_ui.dialogs import fit_to_show, fitted_layout

IMPORT_FILTER = "Exchange files (*.jsonl *.ndjson *.json *.csv *.tsv);;All files (*)"
EXPORT_FILTER = "JSON Lines (*.jsonl);;CSV (*.csv)"
EXPORT_SUFFIXES = (".jsonl", ".csv")
Request = TypeVar("Request")


@dataclass(frozen=True, slots=True)
class ImportRequest:
    file: Path
    kind: str
    mapping: dict[str, str]


@dataclass(frozen=True, slots=True)
class ExportRequest:
    kind: str
    file: Path


def import_into(request: ImportRequest, project: Project, task: Task) -> ImportResult:
    """Import (on a worker, through the connection the operations opened for it)."""
    return import_file(project, request.file, request.kind, request.mapping or None, task)


def export_from(request: ExportRequest, project: Project, task: Task) -> int:
    """Export (on a worker, through the connection the operations opened for it)."""
    return export_kind(project, request.kind, request.file, task)


def guess_kind(file: Path) -> str | None:
    """The kind a file's name suggests (``responses.jsonl`` → responses), to save a click."""
    stem = file.stem.lower()
    return next((kind for kind in sorted(FILE_KINDS, key=len, reverse=True) if kind in stem), None)


class FileField(QWidget):
    """A path line edit with a Browse… button (open or save dialog)."""

    def __init__(self, caption: str, file_filter: str, save: bool, parent: QWidget) -> None:
        super().__init__(parent)
        self._caption, self._filter, self._save = caption, file_filter, save
        self.edit = QLineEdit(self)
        self.edit.setMinimumWidth(340)
        browse = QPushButton("Browse…", self)
        browse.clicked.connect(self._browse)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.edit, 1)
        layout.addWidget(browse)

    def path(self) -> Path | None:
        text = self.edit.text().strip()
        return Path(text).expanduser() if text else None

    def _browse(self) -> None:
        chooser = QFileDialog.getSaveFileName if self._save else QFileDialog.getOpenFileName
        chosen, _ = chooser(self, self._caption, self.edit.text(), self._filter)
        if chosen:
            self.edit.setText(chosen)


class TransferDialog(QDialog, Generic[Request]):
    """The shared frame: a form, an inline error line, OK/Cancel; subclasses check the form
    in ``accept`` and keep what the user asked for with :meth:`grant`."""

    def __init__(self, title: str, action: str, parent: QWidget | None) -> None:
        super().__init__(parent)
        self._request: Request | None = None
        self.setWindowTitle(title)
        self.form = QFormLayout()
        self.form.setHorizontalSpacing(14)
        self.form.setVerticalSpacing(10)
        self.error = QLabel(self)
        self.error.setProperty("role", "error")
        self.error.setWordWrap(True)
        self.error.hide()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText(action)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        body = QVBoxLayout()
        body.setSpacing(14)
        body.addLayout(self.form)
        body.addWidget(self.error)
        body.addStretch(1)
        fitted_layout(self, body, buttons)

    def kind_combo(self) -> QComboBox:
        combo = QComboBox(self)
        combo.addItems(FILE_KINDS)
        return combo

    def request(self) -> Request:
        """What the user asked for (once the dialog was accepted)."""
        assert self._request is not None, "request() is valid after the dialog was accepted"
        return self._request

    def grant(self, request: Request) -> None:
        """Close the dialog as accepted, asking for ``request``."""
        self._request = request
        super().accept()

    def refuse(self, message: str) -> None:
        """Keep the dialog open and say what to fix, next to the form (the dialog grows to
        show it where the screen has room; a longer message scrolls into view)."""
        self.error.setText(message)
        self.error.show()
        fit_to_show(self.error)


class ImportDialog(TransferDialog[ImportRequest]):
    """Which file, as which kind, with which field renames."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Import", "Import", parent)
        self.file = FileField("Import file", IMPORT_FILTER, save=False, parent=self)
        self.kind = self.kind_combo()
        self.mapping = QPlainTextEdit(self)
        self.mapping.setPlaceholderText("Optional field renames, one per line, e.g.\n"
                                        "problem=question\nA=options.A")
        self.mapping.setFixedHeight(90)
        self.form.addRow("File", self.file)
        self.form.addRow("Kind", self.kind)
        self.form.addRow("Field mapping", self.mapping)
        self.file.edit.textChanged.connect(self._suggest_kind)

    def _suggest_kind(self, text: str) -> None:
        kind = guess_kind(Path(text))
        if kind:
            self.kind.setCurrentText(kind)

    def accept(self) -> None:
        file = self.file.path()
        if file is None or not file.is_file():
            self.refuse("Choose an existing file to import.")
            return
        lines = [line for line in self.mapping.toPlainText().splitlines() if line.strip()]
        try:
            mapping = parse_mapping(lines)
        except ValueError as exc:
            self.refuse(f"Field mapping: {exc}")
            return
        self.grant(ImportRequest(file, self.kind.currentText(), mapping))


class ExportDialog(TransferDialog[ExportRequest]):
    """Which kind of record, into which .jsonl or .csv file."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Export", "Export", parent)
        self.kind = self.kind_combo()
        self.file = FileField("Export to", EXPORT_FILTER, save=True, parent=self)
        self.form.addRow("Kind", self.kind)
        self.form.addRow("File", self.file)

    def accept(self) -> None:
        file = self.file.path()
        if file is None or file.suffix.lower() not in EXPORT_SUFFIXES:
            self.refuse("Choose a file ending in .jsonl or .csv.")
            return
        if not file.parent.is_dir():
            self.refuse(f"The folder {file.parent} does not exist.")
            return
        self.grant(ExportRequest(self.kind.currentText(), file))
