"""The Duplicates page: review the near-duplicate audit's candidate pairs, one key per verdict.

The page lays out what :mod:`physgrade.dedup` stored in the project: the last audit of a source
(its model, execution provider, thresholds and counts), the candidate pairs by descending
cosine with how close their figures come (the figure stage), the two texts of the pair on show
with the words that differ highlighted, and the clusters the pairs link. A reviewer confirms
(C) or rejects (R) a pair, or clears (U) their decision; every decision is committed at once
through the operations, and every page hears of it.

An audit runs through the operations on a worker with a connection of its own. The embedding
stack (ONNX Runtime, the tokenizer, and numpy behind the audit) is imported only when needed,
never when the app starts.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import re
from dataclasses import dataclass
from functools import partial
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence, cast

from PySide6.QtCore import (
    QAbstractTableModel,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    QSettings,
    Qt,
    QTimer,
    QUrl,
)
from PySide6.QtGui import QAction, QColor, QImage, QShowEvent, QTextDocument
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from physgrade.changes import Changes, RecordKind
from physgrade.dedup import pairs
from physgrade.dedup.pairs import CONFIRMED, REJECTED, TO_REVIEW, StoredPair
from physgrade.dedup.texts import WITHIN
from physgrade.images import CheckedImage
from physgrade.project import Project
from physgrade.tasks import Task
from physgrade_ui import style, transfer
from physgrade_ui.operations import Operations
from physgrade_ui.pages import Section
from physgrade_ui.widgets import (
    NUMBER_ALIGNMENT,
    EmptyState,
    label,
    list_table,
    local_time,
    polish,
    shortcuts,
)
from physgrade_ui.workers import Worker

if TYPE_CHECKING:
    from physgrade.dedup.run import Audit

Index = QModelIndex | QPersistentModelIndex

SET_FILTER = ("Projects and question files (*.physgrade *.jsonl *.ndjson *.json *.csv);;"
              "All files (*)")
CSV_FILTER = "CSV (*.csv)"
LABELS = {"close_duplicate": "close duplicate", "same_topic": "same topic"}
DECISIONS = {CONFIRMED: "✓ confirmed", REJECTED: "✗ rejected"}
#: Filter choices: (shown, value for the core; "both" is narrowed here from stage 1).
STAGES = (("Any", None), ("1 · word 5-grams", 1), ("2 · embeddings", 2), ("1 + 2 · both", "both"),
          ("4 · figures", 4))
#: What each stage of a pair compared, as the comparison names it.
STAGE_NAMES = {1: "word 5-grams", 2: "embeddings", 4: "figures"}
JUDGE_LABELS = (("Any", None), ("Close duplicate", "close_duplicate"),
                ("Same topic", "same_topic"), ("Not labelled", "none"))
#: The first, shown at the start, leaves out the pairs the project declares variants.
DECISION_FILTERS = (("To review", TO_REVIEW), ("Any", None), ("Undecided", "none"),
                    ("Confirmed", CONFIRMED), ("Rejected", REJECTED))
DECLARED_VARIANT = "declared variant"
#: Words of a question shown in the table and the cluster view.
PREVIEW_WORDS = 16
NO_AUDIT = ("An audit compares every question of the project with every other (or with "
            "another project or a questions file) twice: by shared word 5-grams, and by "
            "meaning, with sentence embeddings computed on this computer; questions with "
            "figures are compared by their figures too. It lists the pairs that look alike, "
            "for you to confirm or reject with one key each.")
FIRST_RUN = "The first run prepares the embedded model once, which takes a few seconds."
NO_PAIR = "Select a pair to compare its two texts."
NO_REVIEWER = "Say who you are first: decisions are kept under your name."
#: The keys, as the hint line and the help overlay list them.
KEYS = (("J  ↓", "Next pair"), ("K  ↑", "Previous pair"),
        ("C  Y", "Confirm: a duplicate (then the next pair)"),
        ("R  N", "Reject: not a duplicate (then the next pair)"),
        ("U", "Clear my decision"))

_WORD = re.compile(r"\S+\s*")


# -- the audit, imported when first needed (it brings numpy) --------------------------------


def default_thresholds() -> tuple[float, float]:
    from physgrade.dedup.audit import DEFAULT_COSINE, DEFAULT_JACCARD

    return DEFAULT_JACCARD, DEFAULT_COSINE


@dataclass(frozen=True, slots=True)
class AuditRequest:
    """What the Run audit dialog asks for: the other set (None: within the project), the
    thresholds, and the model (None: the embedded default), int8 or not."""

    against: Path | None
    jaccard: float
    cosine: float
    model: Path | None = None
    quantize: bool = False


SETTINGS_KEY = "duplicates/audit"


def remembered_request() -> AuditRequest | None:
    """The settings of the last audit run from the app (thresholds, model, other set), kept in
    the app's settings so the next run, even after a restart, starts from them."""
    try:
        saved = json.loads(cast(str, QSettings().value(SETTINGS_KEY, "", str)) or "null")
        if not saved:
            return None
        return AuditRequest(Path(saved["against"]) if saved["against"] else None,
                            float(saved["jaccard"]), float(saved["cosine"]),
                            Path(saved["model"]) if saved["model"] else None,
                            bool(saved["quantize"]))
    except (ValueError, KeyError, TypeError):
        return None  # settings written by another version: start from the defaults


def remember_request(request: AuditRequest) -> None:
    QSettings().setValue(SETTINGS_KEY, json.dumps({
        "against": str(request.against) if request.against else None,
        "jaccard": request.jaccard, "cosine": request.cosine,
        "model": str(request.model) if request.model else None, "quantize": request.quantize}))


#: What a stopped audit may have stored: the embeddings are committed as they are computed.
EMBEDDED_SO_FAR = Changes.of(RecordKind.EMBEDDINGS)


def run_audit(request: AuditRequest, project: Project, task: Task) -> Audit:
    """Audit ``project`` (on a worker, through its own connection). The other set is read
    first, so that a bad file fails before the model loads; ONNX Runtime and the tokenizer are
    imported here, not with the page."""
    from physgrade.dedup import models, run, texts
    from physgrade.dedup.audit import Thresholds
    from physgrade.dedup.engine import Embedder

    thresholds = Thresholds(request.jaccard, request.cosine)
    against = None
    if request.against is not None:
        task.report(0, None, "reading the other set")
        against = texts.load_set(request.against)
    task.report(0, None, "preparing the model")
    files = models.resolve(request.model, request.quantize)
    task.report(0, None, "loading the model")
    embedder = Embedder(files)
    return run.audit_project(project, embedder, against, thresholds, task)


# -- text helpers ---------------------------------------------------------------------------


def provider_name(provider: str | None) -> str:
    """The execution provider as people name it: "CPU", "CUDA", "CoreML", "DirectML"."""
    if not provider:
        return "?"
    short = provider.removesuffix("ExecutionProvider")
    return "DirectML" if short == "Dml" else short or provider


def source_name(source: str) -> str:
    return "Within the project" if source == WITHIN else Path(source).name


def preview(text: str, words: int = PREVIEW_WORDS) -> str:
    """The first words of a text, on one line."""
    split = text.split()
    return " ".join(split[:words]) + (" …" if len(split) > words else "")


def stages_text(stages: tuple[int, ...]) -> str:
    return "+".join(map(str, stages))


def figure_text(pair: StoredPair) -> str:
    """How close the pair's figures come: one image, or the bits their hashes differ by."""
    if pair.same_image:
        return "same image"
    return "—" if pair.figure_distance is None else f"{pair.figure_distance} bits"


def flagged_by(stages: tuple[int, ...]) -> str:
    """The stages that flagged a pair, in words."""
    if stages == (1, 2):
        return "both text stages"
    named = [f"{stage} ({STAGE_NAMES.get(stage, '?')})" for stage in stages]
    if len(named) == 1:
        return f"stage {named[0]}"
    return f"stages {', '.join(named[:-1])} and {named[-1]}"


def audit_details(audit: dict[str, Any], source: str) -> str:
    """Model, thresholds (the figure stage's where the audit saw figures), what was compared
    and when, in one line."""
    compared = (f"{audit['n_a']:,} questions with each other" if source == WITHIN else
                f"{audit['n_a']:,} questions against {audit['n_b']:,} in {source_name(source)}")
    saw_figures = audit.get("figure_bits") is not None and audit["summary"].get("with_figures")
    figures = (f"figures ≤ {audit['figure_bits']} bits",) if saw_figures else ()
    return " · ".join((audit["model"], f"Jaccard ≥ {audit['jaccard']:.2f}",
                       f"cosine ≥ {audit['cosine']:.2f}", *figures, compared,
                       f"ran {local_time(audit['ran_at'])}"))


def summary_text(audit: dict[str, Any]) -> str:
    """The pairs found and the core's one-line summary of the items flagged."""
    from physgrade.dedup.audit import Summary

    found = f"{audit['pairs']:,} candidate pair{'' if audit['pairs'] == 1 else 's'}"
    try:
        return f"{found}; {Summary.from_json(audit['summary']).text()}"
    except (KeyError, TypeError):
        return found


def diff_html(first: str, second: str) -> tuple[str, str]:
    """Both texts as escaped HTML, the words one has and the other has not highlighted.

    The texts are compared as word tokens (difflib), so changed punctuation or spacing inside a
    word counts, and line breaks are kept. The texts are untrusted: nothing of them is ever
    read as HTML.
    """
    a_tokens, b_tokens = _WORD.findall(first), _WORD.findall(second)
    matcher = difflib.SequenceMatcher(None, [t.rstrip() for t in a_tokens],
                                      [t.rstrip() for t in b_tokens], autojunk=False)
    a_parts, b_parts = [_lead(first)], [_lead(second)]
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        a_parts.append(_run(a_tokens[i1:i2], op != "equal"))
        b_parts.append(_run(b_tokens[j1:j2], op != "equal"))
    return _document(a_parts), _document(b_parts)


def _lead(text: str) -> str:
    return escape(text[:len(text) - len(text.lstrip())])


def _run(tokens: list[str], changed: bool) -> str:
    """Tokens as HTML; a changed run is one highlight, up to (not over) its last space."""
    text = "".join(tokens)
    if not changed or not text:
        return escape(text)
    words = text.rstrip()
    return (f'<span style="background-color: {style.DIFF_BACKGROUND};">{escape(words)}'
            f"</span>{escape(text[len(words):])}")


def _document(parts: list[str]) -> str:
    body = "".join(parts).replace("\n", "<br>")
    return f'<div style="white-space: pre-wrap;">{body}</div>'


def hint_html() -> str:
    """The hint line under the pairs: our own text, so rich text is safe here."""
    cap = (f'<span style="color: {style.ACCENT}; font-family: monospace; '
           'font-weight: 700;">{}</span>')
    parts = []
    for keys, what in KEYS:
        shown = " / ".join(cap.format(escape(k)) for k in keys.split())
        parts.append(f"{shown} {escape(what.split(':')[0].split(' (')[0].lower())}")
    return "&nbsp;&nbsp;·&nbsp;&nbsp;".join(parts)


# -- the pairs table ------------------------------------------------------------------------

#: (header, text of a pair)
COLUMNS: tuple[tuple[str, Callable[[StoredPair], str]], ...] = (
    ("A", lambda p: p.a),
    ("B", lambda p: p.b),
    ("Cosine", lambda p: f"{p.cosine:.3f}"),
    ("Jaccard", lambda p: f"{p.jaccard:.3f}"),
    ("Figure", figure_text),
    ("Stages", lambda p: stages_text(p.stages)),
    ("Judge", lambda p: LABELS.get(p.label or "", p.label or "—")),
    ("Decision", lambda p: DECISIONS.get(p.decision or "",
                                         DECLARED_VARIANT if p.declared_variant else "—")),
    ("Question A", lambda p: preview(p.a_text)),
)
NUMERIC = {"Cosine", "Jaccard"}
DECISION_COLUMN = [title for title, _ in COLUMNS].index("Decision")
JUDGE_COLUMN = [title for title, _ in COLUMNS].index("Judge")
FIGURE_COLUMN = [title for title, _ in COLUMNS].index("Figure")


class PairModel(QAbstractTableModel):
    """Stored pairs, read-only, in the core's order (descending cosine)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[StoredPair] = []

    def set_rows(self, rows: list[StoredPair]) -> None:
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def replace(self, row: int, pair: StoredPair) -> None:
        self.rows[row] = pair
        self.dataChanged.emit(self.index(row, 0), self.index(row, len(COLUMNS) - 1))

    def row_of(self, pair_id: int | None) -> int | None:
        return next((r for r, p in enumerate(self.rows) if p.id == pair_id), None)

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        pair, (title, text) = self.rows[index.row()], COLUMNS[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return text(pair)
        if role == Qt.ItemDataRole.TextAlignmentRole and title in NUMERIC:
            return int(NUMBER_ALIGNMENT)
        if role == Qt.ItemDataRole.ForegroundRole:
            if index.column() == DECISION_COLUMN and pair.decision:
                return QColor(style.GOOD if pair.decision == CONFIRMED else style.BAD)
            if (index.column() in (DECISION_COLUMN, JUDGE_COLUMN, FIGURE_COLUMN)
                    and text(pair) == "—"):
                return QColor(style.MUTED)
        if role == Qt.ItemDataRole.BackgroundRole and index.column() == DECISION_COLUMN:
            if pair.decision:
                return QColor(style.GOOD_BACKGROUND if pair.decision == CONFIRMED
                              else style.BAD_BACKGROUND)
        if role == Qt.ItemDataRole.ToolTipRole:
            if index.column() == DECISION_COLUMN and pair.decided_by:
                return f"{pair.decision} by {pair.decided_by}"
            if index.column() == JUDGE_COLUMN and pair.label_model:
                return f"labelled by {pair.label_model}"
            if index.column() == FIGURE_COLUMN and pair.figure_distance is not None:
                return ("Both questions show this image, byte for byte" if pair.same_image else
                        f"The closest figures' perceptual hashes differ by "
                        f"{pair.figure_distance} of 256 bits")
            if title == "Question A":
                return pair.a_text
        return None

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section][0]
        if role == Qt.ItemDataRole.TextAlignmentRole and COLUMNS[section][0] in NUMERIC:
            return int(NUMBER_ALIGNMENT)
        return None


# -- the comparison -------------------------------------------------------------------------


#: The most a figure takes of a pane's height (px): the pair's two figures are compared at a
#: glance, beside their texts, and each pane scrolls for the rest.
FIGURE_HEIGHT = 180


class TextPane(QWidget):
    """One side of the pair: its id over its text, read-only."""

    def __init__(self, side: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.side = side
        self.title = label(side, "section", self)
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self.text = QTextBrowser(self)
        self.text.setOpenLinks(False)
        self.text.setReadOnly(True)
        self.text.setObjectName(f"text_{side.lower()}")
        self.text.document().setDocumentMargin(10)
        font = self.text.font()
        font.setPointSize(style.BASE_POINT_SIZE + 1)
        self.text.setFont(font)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.title)
        layout.addWidget(self.text, 1)

    def show_text(self, title: str, html: str, figures: Sequence[CheckedImage] = ()) -> None:
        """The question's text and, under it, its figures (the project's own images, handed
        to the document as resources: nothing is loaded from anywhere)."""
        self.title.setText(f"{self.side} · {title}")
        document = self.text.document()
        width = max(160, self.text.viewport().width() - 2 * int(document.documentMargin()))
        shown = []
        for n, image in enumerate(figures, 1):
            name = QUrl(f"figure:{image.sha256}")
            document.addResource(QTextDocument.ResourceType.ImageResource, name,
                                 QImage.fromData(image.data))
            scale = min(1.0, width / image.width, FIGURE_HEIGHT / image.height)
            shown.append(f'<p><img src="{name.toString()}" width="{round(image.width * scale)}" '
                         f'height="{round(image.height * scale)}">'
                         f'<br><span style="color: {style.MUTED};">Figure {n} · '
                         f"{image.width}×{image.height} px</span></p>")
        self.text.setHtml(html + "".join(shown))

    def clear(self) -> None:
        self.title.setText(self.side)
        self.text.setHtml(f'<p style="color: {style.MUTED};">{escape(NO_PAIR)}</p>')


class Comparison(QWidget):
    """The pair on show: scores and decision, both texts side by side, the judge's reading."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.scores = label("", None, self)
        self.scores.setTextFormat(Qt.TextFormat.PlainText)
        self.decision = label("", "decision", self)
        self.decision.setTextFormat(Qt.TextFormat.PlainText)
        self.a, self.b = TextPane("A", self), TextPane("B", self)
        self.judge = label("", "muted", self)
        self.judge.setTextFormat(Qt.TextFormat.PlainText)  # a model's words: never HTML
        self.judge.setWordWrap(True)
        self.judge.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        top = QHBoxLayout()
        top.setSpacing(12)
        top.addWidget(self.scores)
        top.addStretch(1)
        top.addWidget(self.decision)
        texts = QHBoxLayout()
        texts.setSpacing(12)
        texts.addWidget(self.a, 1)
        texts.addWidget(self.b, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 8, 0, 0)
        layout.setSpacing(8)
        layout.addLayout(top)
        layout.addLayout(texts, 1)
        layout.addWidget(self.judge)
        self.show_pair(None)

    def show_pair(self, pair: StoredPair | None,
                  figures: tuple[Sequence[CheckedImage], Sequence[CheckedImage]] = ((), ())
                  ) -> None:
        """Show ``pair`` (None: none) with each question's ``figures``."""
        if pair is None:
            self.scores.setText("")
            self._show_decision(None, None)
            self.a.clear()
            self.b.clear()
            self.judge.setText("")
            return
        first, second = diff_html(pair.a_text, pair.b_text)
        self.a.show_text(pair.a, first, figures[0])
        self.b.show_text(pair.b if pair.source == WITHIN
                         else f"{pair.b}  (in {source_name(pair.source)})", second, figures[1])
        closeness = ("" if pair.figure_distance is None else "Same image   ·   "
                     if pair.same_image else f"Figures {pair.figure_distance} bits apart   ·   ")
        self.scores.setText(f"Cosine {pair.cosine:.3f}   ·   Jaccard {pair.jaccard:.3f}   ·   "
                            f"{closeness}flagged by {flagged_by(pair.stages)}")
        self._show_decision(pair.decision, pair.decided_by)
        if pair.label:
            reading = f"Judge {pair.label_model or ''}: {LABELS.get(pair.label, pair.label)}"
            self.judge.setText(reading + (f" — {pair.label_rationale}"
                                          if pair.label_rationale else ""))
        else:
            self.judge.setText("No judge has labelled this pair.")

    def _show_decision(self, decision: str | None, by: str | None) -> None:
        self.decision.setText({CONFIRMED: f"Confirmed duplicate · {by}",
                               REJECTED: f"Rejected · {by}"}.get(decision or "", "Undecided"))
        self.decision.setProperty("decision", decision or "none")
        polish(self.decision)


# -- the Run audit dialog -------------------------------------------------------------------


class ModelField(QWidget):
    """A local model: a sentence-transformers folder or an .onnx file."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.edit = QLineEdit(self)
        self.edit.setPlaceholderText("a sentence-transformers folder, or an .onnx file")
        self.edit.setMinimumWidth(300)
        folder = QPushButton("Folder…", self)
        folder.clicked.connect(self._folder)
        onnx = QPushButton("ONNX file…", self)
        onnx.clicked.connect(self._onnx)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.edit, 1)
        layout.addWidget(folder)
        layout.addWidget(onnx)

    def path(self) -> Path | None:
        text = self.edit.text().strip()
        return Path(text).expanduser() if text else None

    def _folder(self) -> None:
        chosen = QFileDialog.getExistingDirectory(self, "Model folder", self.edit.text())
        if chosen:
            self.edit.setText(chosen)

    def _onnx(self) -> None:
        chosen, _ = QFileDialog.getOpenFileName(self, "ONNX model", self.edit.text(),
                                                "ONNX models (*.onnx);;All files (*)")
        if chosen:
            self.edit.setText(chosen)


def model_problem(model: Path | None) -> str | None:
    """Why ``model`` cannot be a local model (None: it can be)."""
    if model is None or not model.exists():
        return "Choose an existing model folder or .onnx file."
    if model.is_file() and model.suffix.lower() != ".onnx":
        return f"{model.name} is not an .onnx file; choose it, or its folder."
    return None


def _spin(value: float) -> QDoubleSpinBox:
    spin = QDoubleSpinBox()
    spin.setRange(0.05, 1.0)
    spin.setSingleStep(0.01)
    spin.setDecimals(2)
    spin.setValue(value)
    return spin


class AuditDialog(transfer.TransferDialog[AuditRequest]):
    """What to compare, at which thresholds, with which model; filled from the last request."""

    def __init__(self, last: AuditRequest | None = None, parent: QWidget | None = None) -> None:
        super().__init__("Run duplicate audit", "Run audit", parent)
        self.defaults = default_thresholds()
        jaccard, cosine = self.defaults

        self.within = QRadioButton("The project's questions with each other", self)
        self.against = QRadioButton("The project's questions against another set:", self)
        self.set_file = transfer.FileField("Compare against", SET_FILTER, save=False, parent=self)
        self.set_file.edit.setPlaceholderText("another .physgrade project, or a questions file")
        compare = QVBoxLayout()
        compare.setSpacing(6)
        compare.addWidget(self.within)
        compare.addWidget(self.against)
        compare.addWidget(self.set_file)
        compare.addWidget(label("A questions file is JSON Lines, JSON or CSV with id, question "
                                "and optional options.", "muted", self))
        group = QButtonGroup(self)
        group.addButton(self.within)
        group.addButton(self.against)

        self.jaccard, self.cosine = _spin(jaccard), _spin(cosine)
        self.jaccard.setToolTip("Stage 1: the share of word 5-grams two texts have in common")
        self.cosine.setToolTip("Stage 2: the cosine similarity of the texts' embeddings")
        reset = QPushButton("Defaults", self)
        reset.setProperty("role", "small")
        reset.clicked.connect(self._reset_thresholds)
        thresholds = QHBoxLayout()
        thresholds.setSpacing(8)
        for text, spin in (("Jaccard ≥", self.jaccard), ("cosine ≥", self.cosine)):
            thresholds.addWidget(label(text, None, self))
            thresholds.addWidget(spin)
            thresholds.addSpacing(10)
        thresholds.addWidget(reset)
        thresholds.addStretch(1)

        self.embedded = QRadioButton("Embedded all-MiniLM-L6-v2", self)
        self.local = QRadioButton("A local model:", self)
        self.model = ModelField(self)
        self.quantize = QCheckBox("int8: quantized weights (faster on a CPU, a little less "
                                  "precise)", self)
        models = QVBoxLayout()
        models.setSpacing(6)
        models.addWidget(self.embedded)
        models.addWidget(self.local)
        models.addWidget(self.model)
        models.addWidget(self.quantize)
        model_group = QButtonGroup(self)
        model_group.addButton(self.embedded)
        model_group.addButton(self.local)

        self.form.addRow("Compare", compare)
        self.form.addRow("Thresholds", thresholds)
        self.form.addRow("Model", models)
        self.form.addRow("", label(FIRST_RUN, "muted", self))

        for button in (self.within, self.against, self.embedded, self.local):
            button.toggled.connect(self._enable)
        self.set_file.edit.textEdited.connect(lambda: self.against.setChecked(True))
        self.model.edit.textEdited.connect(lambda: self.local.setChecked(True))
        self._fill(last)
        self.resize(640, self.sizeHint().height())

    def _fill(self, last: AuditRequest | None) -> None:
        if last is not None:
            self.jaccard.setValue(last.jaccard)
            self.cosine.setValue(last.cosine)
            self.quantize.setChecked(last.quantize)
            if last.against is not None:
                self.set_file.edit.setText(str(last.against))
            if last.model is not None:
                self.model.edit.setText(str(last.model))
        (self.against if last and last.against else self.within).setChecked(True)
        (self.local if last and last.model else self.embedded).setChecked(True)
        self._enable()

    def _enable(self) -> None:
        self.set_file.setEnabled(self.against.isChecked())
        self.model.setEnabled(self.local.isChecked())

    def _reset_thresholds(self) -> None:
        self.jaccard.setValue(self.defaults[0])
        self.cosine.setValue(self.defaults[1])

    def accept(self) -> None:
        against = self.set_file.path() if self.against.isChecked() else None
        model = self.model.path() if self.local.isChecked() else None
        if self.against.isChecked() and (against is None or not against.is_file()):
            self.refuse("Choose an existing project or questions file to compare against.")
        elif self.local.isChecked() and (problem := model_problem(model)):
            self.refuse(problem)
        else:
            self.grant(AuditRequest(against, round(self.jaccard.value(), 2),
                                    round(self.cosine.value(), 2), model,
                                    self.quantize.isChecked()))


# -- the page -------------------------------------------------------------------------------


def _combo(choices: tuple[tuple[str, Any], ...], tip: str) -> QComboBox:
    combo = QComboBox()
    for text, value in choices:
        combo.addItem(text, value)
    combo.setToolTip(tip)
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
    return combo


class DuplicatesPage(QWidget):
    """The near-duplicate audit of the open project, reviewed by ``person``."""

    page_title = "Duplicates"

    def __init__(self, ops: Operations, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ops = ops
        self.project: Project | None = None
        self.person: str | None = None
        ops.busy_changed.connect(self._show_state)
        self.export_file: Path | None = None
        # The changes of the page's own last decision or audit, already on show when they are
        # broadcast back to it: not read again.
        self._shown: Changes | None = None
        self._decisions: dict[int, str | None] = {}  # every pair of the source: its decision
        self._declared = 0  # pairs of the source that the project declares variants
        self._clusters_stale = True
        self._cluster_count: int | None = None  # known before the tree is laid out

        self.empty = self._make_empty_state()
        self.content = QWidget(self)
        self.header = self._make_header()
        self.filters = self._make_filters()
        self.model = PairModel(self)
        self.table = list_table(self.model, row_height=30)
        self.table.setObjectName("pairs")
        self.table.setTabKeyNavigation(False)
        self.table.selectionModel().currentRowChanged.connect(self._show_current)
        self.comparison = Comparison()
        self.hint = label(hint_html(), "muted")
        self.hint.setTextFormat(Qt.TextFormat.RichText)

        self.review = QSplitter(Qt.Orientation.Vertical)
        self.review.setObjectName("review")
        self.review.addWidget(self.table)
        self.review.addWidget(self.comparison)
        self.review.setChildrenCollapsible(False)
        self._sized = False
        pairs_tab = QWidget()
        pairs_layout = QVBoxLayout(pairs_tab)
        pairs_layout.setContentsMargins(0, 10, 0, 0)
        pairs_layout.setSpacing(8)
        pairs_layout.addLayout(self.filters)
        pairs_layout.addWidget(self.review, 1)
        pairs_layout.addWidget(self.hint)

        self.clusters = QTreeWidget()
        self.clusters.setObjectName("clusters")
        self.clusters.setHeaderLabels(["Cluster", "Question"])
        self.clusters.setAlternatingRowColors(True)
        self.clusters.setUniformRowHeights(True)
        self.clusters.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.clusters_note = label("Clusters group the project's own questions linked by "
                                   "candidate pairs nobody rejected, largest first.", "muted")
        clusters_tab = QWidget()
        clusters_layout = QVBoxLayout(clusters_tab)
        clusters_layout.setContentsMargins(0, 10, 0, 0)
        clusters_layout.setSpacing(8)
        clusters_layout.addWidget(self.clusters_note)
        clusters_layout.addWidget(self.clusters, 1)

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(pairs_tab, "Pairs")
        self.tabs.addTab(clusters_tab, "Clusters")
        self.tabs.currentChanged.connect(self._tab_changed)

        content_layout = QVBoxLayout(self.content)
        content_layout.setContentsMargins(0, 0, 0, 0)
        content_layout.setSpacing(10)
        content_layout.addWidget(self.header)
        content_layout.addWidget(self.tabs, 1)

        self.body = QStackedWidget()
        self.body.addWidget(self.empty)
        self.body.addWidget(self.content)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(20, 14, 20, 8)
        layout.addWidget(self.body)
        self.keys = self._make_keys()
        self._show_state()

    # -- building -----------------------------------------------------------------------------

    def _make_empty_state(self) -> QWidget:
        empty = EmptyState("No duplicate audit yet", [(NO_AUDIT, None), (FIRST_RUN, "muted")],
                           "Run audit…", self)
        self.empty_run = empty.button
        self.empty_run.clicked.connect(self.choose_audit)
        return empty

    def _make_header(self) -> QFrame:
        header = QFrame(self)
        header.setProperty("role", "card")
        self.title = label("Near-duplicate audit", "title", header)
        self.source_label = label("", "section", header)
        self.source_label.setTextFormat(Qt.TextFormat.PlainText)
        self.provider = label("", "provider", header)
        self.provider.setTextFormat(Qt.TextFormat.PlainText)
        self.provider.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.details = label("", "muted", header)
        self.details.setTextFormat(Qt.TextFormat.PlainText)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary = label("", None, header)
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.export_button = QPushButton("Export CSV…", header)
        self.export_button.setToolTip("Write the pairs the filters show to a CSV file")
        self.export_button.clicked.connect(self.export)
        self.run_button = QPushButton("Run audit…", header)
        self.run_button.setProperty("role", "primary")
        self.run_button.clicked.connect(self.choose_audit)

        top = QHBoxLayout()
        top.setSpacing(12)
        top.addWidget(self.title)
        top.addWidget(self.source_label, 0, Qt.AlignmentFlag.AlignBottom)
        top.addStretch(1)
        top.addWidget(label("Ran on", "muted", header))
        top.addWidget(self.provider)
        top.addSpacing(14)
        top.addWidget(self.export_button)
        top.addWidget(self.run_button)
        layout = QVBoxLayout(header)
        layout.setContentsMargins(18, 12, 18, 12)
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addWidget(self.details)
        layout.addWidget(self.summary)
        return header

    def _make_filters(self) -> QHBoxLayout:
        self.source = QComboBox()
        self.source.setToolTip("Which audit's pairs: within the project, or against a file")
        self.source.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.source.currentIndexChanged.connect(self._source_changed)
        self.stage = _combo(STAGES, "Pairs a stage flagged (1: shared word 5-grams, 2: "
                                    "embeddings, 4: figures); both: pairs both text stages "
                                    "flagged")
        self.label_filter = _combo(JUDGE_LABELS, "The judge's label of the pair")
        self.decision_filter = _combo(DECISION_FILTERS, "The reviewers' decision on the pair")
        for combo in (self.stage, self.label_filter, self.decision_filter):
            combo.currentIndexChanged.connect(self.show_pairs)
        for combo in (self.source, self.stage, self.label_filter, self.decision_filter):
            combo.activated.connect(self.focus_pairs)  # chosen: back to the keys
        self.count = label("", "muted")
        self.count.setWordWrap(True)  # a second line, rather than a page wider than the window
        bar = QHBoxLayout()
        bar.setSpacing(6)
        for title, combo in (("Source", self.source), ("Stage", self.stage),
                             ("Judge", self.label_filter), ("Decision", self.decision_filter)):
            bar.addWidget(label(title, "muted"))
            bar.addWidget(combo)
            bar.addSpacing(12)
        bar.addStretch(1)
        bar.addWidget(self.count)
        return bar

    def _make_keys(self) -> list[QAction]:
        """The review keys, on the table and the comparison (not on the filter bar, whose
        drop-downs take letters to jump to an item)."""
        actions = []
        for keys, slot in ((("J", "Down"), partial(self.move, 1)),
                           (("K", "Up"), partial(self.move, -1)),
                           (("C", "Y"), partial(self.decide, CONFIRMED)),
                           (("R", "N"), partial(self.decide, REJECTED)),
                           (("U",), partial(self.decide, None))):
            actions += shortcuts(self.review, keys, slot)
        return actions

    def help_section(self) -> Section:
        return ("Duplicates", list(KEYS))

    def showEvent(self, event: QShowEvent) -> None:
        """Put the keyboard on the pairs, ready to review."""
        super().showEvent(event)
        QTimer.singleShot(0, self, self._size_review)
        QTimer.singleShot(0, self, self.focus_pairs)

    def _size_review(self) -> None:
        """Split the pairs from the texts once, when first seen: the table as tall as its
        rows, within 30–55% of the height."""
        if self._sized or not self.review.isVisible():
            return
        self._sized = True
        height = self.review.height()
        wanted = (self.table.horizontalHeader().sizeHint().height() + 2 * self.table.frameWidth() + 4
                  + self.table.verticalHeader().defaultSectionSize() * self.model.rowCount())
        table = max(height * 30 // 100, min(wanted, height * 55 // 100))
        self.review.setSizes([table, height - table])

    def focus_pairs(self) -> None:
        if self.body.currentWidget() is self.content and self.tabs.currentIndex() == 0:
            self.table.setFocus(Qt.FocusReason.OtherFocusReason)

    # -- the project ----------------------------------------------------------------------------

    def open(self, project: Project | None, person: str | None) -> None:
        """Show ``project``'s audits (keeping the source, filters and pair on show), decided
        under ``person``'s name."""
        if project is None or self.project is None or project.path != self.project.path:
            self.export_file = None
        self.project, self.person = project, person
        self._shown = None
        self.reread()

    def apply(self, changes: Changes) -> None:
        """Re-read the audits when pairs or the questions' texts changed (unless the change is
        the page's own, on show already)."""
        shown, self._shown = self._shown, None
        if changes is not shown and changes.touches(RecordKind.PAIRS, RecordKind.QUESTIONS):
            self.reread()

    def reread(self, choose: str | None = None) -> None:
        """Read the sources, pairs and clusters again, on ``choose`` or the source on show."""
        self._stale_clusters()
        self._fill_sources(choose)
        self._show_state()

    def focus_widget(self) -> QWidget:
        return self.table

    def focus_search(self) -> bool:
        return False

    def _fill_sources(self, choose: str | None = None) -> None:
        current = choose if choose is not None else self.source.currentData()
        self.source.blockSignals(True)
        self.source.clear()
        for source in pairs.sources(self.project) if self.project is not None else []:
            self.source.addItem(source_name(source), source)
            self.source.setItemData(self.source.count() - 1, source or "Within the project",
                                    Qt.ItemDataRole.ToolTipRole)
        index = self.source.findData(current)
        self.source.setCurrentIndex(index if index >= 0 else 0)
        self.source.blockSignals(False)
        self._source_changed()

    def _source_changed(self) -> None:
        self._show_header()
        self.show_pairs()

    def current_source(self) -> str | None:
        return self.source.currentData() if self.source.count() else None

    def _show_header(self) -> None:
        source = self.current_source()
        audit = None if source is None or self.project is None else \
            pairs.last_audit(self.project, source)
        self.body.setCurrentWidget(self.content if source is not None else self.empty)
        if audit is None or source is None or self.project is None:  # (no source or project: no audit)
            for widget in (self.source_label, self.details, self.summary, self.provider):
                widget.setText("")
            return
        self.source_label.setText(source_name(source))
        self.source_label.setToolTip(source or str(self.project.path))
        shown = provider_name(audit["provider"])
        self.provider.setText(shown)
        self.provider.setToolTip(f"ONNX Runtime execution provider: {audit['provider']}")
        self.provider.setProperty("gpu", shown != "CPU")
        polish(self.provider)
        self.details.setText(audit_details(audit, source))
        self.summary.setText(summary_text(audit))

    # -- the pairs ------------------------------------------------------------------------------

    def show_pairs(self) -> None:
        """Re-read the pairs the filters ask for, keeping the pair on show if it is still
        there."""
        source = self.current_source()
        if self.project is None or source is None:
            self.model.set_rows([])
            self._decisions, self._declared = {}, 0
            self._show_current(QModelIndex())
            self._show_count()
            self._show_state()
            return
        keep = self.current_pair()
        stage = self.stage.currentData()
        rows = pairs.stored_pairs(self.project, source, 1 if stage == "both" else stage,
                                  self.label_filter.currentData(),
                                  self.decision_filter.currentData())
        if stage == "both":
            rows = [p for p in rows if set(p.stages) >= {1, 2}]
        everything = pairs.stored_pairs(self.project, source)
        self._decisions = {p.id: p.decision for p in everything}
        self._declared = sum(p.declared_variant for p in everything)
        # The Figure column only where some pair has figures: a text-only audit looks as before.
        self.table.setColumnHidden(FIGURE_COLUMN, all(p.figure_distance is None
                                                      for p in everything))
        self.model.set_rows(rows)
        self._fit_columns()
        row = self.model.row_of(keep.id if keep else None)
        self.select_row(row if row is not None else 0)
        if not rows:
            self._show_current(QModelIndex())
        self._show_count()
        self._show_state()

    def _fit_columns(self) -> None:
        header = self.table.horizontalHeader()
        header.setStretchLastSection(True)
        for column in range(len(COLUMNS) - 1):
            self.table.resizeColumnToContents(column)
            header.resizeSection(column, max(header.sectionSize(column), 70) + 14)

    def _show_count(self) -> None:
        decided = list(self._decisions.values())
        total = len(decided)
        shown = self.model.rowCount()
        text = f"{shown:,} of {total:,} pairs" if shown != total else \
            f"{total:,} pair{'' if total == 1 else 's'}"
        declared = (f" · {self._declared:,} declared variant{'' if self._declared == 1 else 's'}"
                    if self._declared else "")
        self.count.setText(f"{text} · {decided.count('confirmed'):,} confirmed, "
                           f"{decided.count('rejected'):,} rejected, "
                           f"{decided.count(None):,} undecided{declared}")

    def current_pair(self) -> StoredPair | None:
        index = self.table.selectionModel().currentIndex()
        return self.model.rows[index.row()] if index.isValid() else None

    def select_row(self, row: int) -> None:
        if not 0 <= row < self.model.rowCount():
            return
        index = self.model.index(row, 0)
        self.table.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows)
        self.table.scrollTo(index)

    def move(self, step: int) -> None:  # type: ignore[override]  # the page is never placed by move()
        """The next (1) or previous (-1) pair."""
        index = self.table.selectionModel().currentIndex()
        row = index.row() + step if index.isValid() else 0
        self.select_row(max(0, min(row, self.model.rowCount() - 1)))

    def _show_current(self, current: QModelIndex) -> None:
        self._show_pair(self.model.rows[current.row()] if current.isValid() else None)

    def _show_pair(self, pair: StoredPair | None) -> None:
        """The pair in the comparison, with both questions' figures (a quick indexed read)."""
        project = self.ops.project
        self.comparison.show_pair(pair, pairs.pair_figures(project, pair)
                                  if pair is not None and project is not None else ((), ()))

    def decide(self, decision: str | None) -> bool:
        """Commit the reviewer's decision on the pair on show (None: withdraw it); True when
        it is saved."""
        pair = self.current_pair()
        if pair is None or self.project is None:
            return False
        if self.person is None:
            self.ops.say(NO_REVIEWER)
            self.ops.ask_person.emit()
            return False
        decided = dataclasses.replace(pair, decision=decision,
                                      decided_by=self.person if decision else None)
        return self.ops.write(partial(pairs.set_duplicate_decision, pair_id=pair.id,
                                      reviewer=self.person, decision=decision),
                              partial(self._decided, decided), what="decision")

    def _decided(self, pair: StoredPair, changes: Changes) -> None:
        """Show a saved decision on its row; one on the pair on show (not a clearing) moves on
        to the next pair."""
        self.ops.say(f"{pair.a} / {pair.b}: " + (f"{pair.decision} by {pair.decided_by}"
                                                  if pair.decision else "decision cleared"))
        if pair.id not in self._decisions:
            return  # another source is on show now (the write waited for a lock): re-read it
        self._shown = changes
        self._decisions[pair.id] = pair.decision
        row = self.model.row_of(pair.id)
        if row is not None:
            self.model.replace(row, pair)
        if pair.source == WITHIN:  # a rejection can split a cluster, a confirmation rejoin it
            self._stale_clusters()
            self._show_state()
        self._show_count()
        if row is None or row != self.table.selectionModel().currentIndex().row():
            return
        if pair.decision is not None and row + 1 < self.model.rowCount():
            self.select_row(row + 1)
        else:
            self._show_pair(pair)

    # -- clusters -------------------------------------------------------------------------------

    def _tab_changed(self, index: int) -> None:
        if index == 1:
            self.show_clusters()
        else:
            QTimer.singleShot(0, self, self.focus_pairs)

    def _stale_clusters(self) -> None:
        self._clusters_stale, self._cluster_count = True, None

    def show_clusters(self) -> None:
        """Lay the clusters out (when their tab is on show and they changed)."""
        if not self._clusters_stale:
            return
        self.clusters.clear()
        groups: list[list[str]] = []
        if self.project is not None:
            groups = pairs.clusters(self.project)
            texts: dict[str, str] = {}
            for pair in pairs.stored_pairs(self.project, WITHIN):
                texts.setdefault(pair.a, pair.a_text)
                texts.setdefault(pair.b, pair.b_text)
            expand = sum(map(len, groups)) <= 60
            for number, group in enumerate(groups, 1):
                top = QTreeWidgetItem(self.clusters, [f"Cluster {number}",
                                                      f"{len(group)} questions"])
                font = top.font(0)
                font.setBold(True)
                top.setFont(0, font)
                top.setForeground(1, QColor(style.MUTED))
                for qid in group:
                    child = QTreeWidgetItem(top, [qid, preview(texts.get(qid, ""), 24)])
                    child.setToolTip(1, texts.get(qid, ""))
                top.setExpanded(expand)
        self._cluster_count = len(groups)
        self.tabs.setTabText(1, f"Clusters ({len(groups):,})")
        if not groups:
            QTreeWidgetItem(self.clusters, ["No clusters", "no within-project pair is left "
                                                           "unrejected"])
        self._clusters_stale = False

    # -- state ----------------------------------------------------------------------------------

    def _show_state(self) -> None:
        idle = not self.ops.busy
        has_project = self.project is not None
        for button in (self.run_button, self.empty_run):
            button.setEnabled(idle and has_project)
        self.export_button.setEnabled(idle and self.model.rowCount() > 0)
        if self.tabs.currentIndex() == 1:
            self.show_clusters()
        elif self._cluster_count is None and self.project is not None:
            # The tree is laid out when its tab is shown; its count is kept right meanwhile.
            self._cluster_count = len(pairs.clusters(self.project))
            self.tabs.setTabText(1, f"Clusters ({self._cluster_count:,})")

    # -- running an audit -----------------------------------------------------------------------

    def choose_audit(self) -> None:
        dialog = AuditDialog(remembered_request(), self)
        if dialog.exec() == AuditDialog.DialogCode.Accepted:
            self.start_audit(dialog.request())

    def start_audit(self, request: AuditRequest) -> Worker | None:
        """Run the audit with progress and Cancel (None: another run is under way); every page
        hears what it stored."""
        if self.project is None:
            return None
        worker = self.ops.run("Auditing for duplicates", partial(run_audit, request),
                              partial(self._audited, self.project.path),
                              changes=lambda audit: audit.changes,
                              partial_changes=EMBEDDED_SO_FAR,
                              failed="The audit failed. Nothing was changed.",
                              cancelled="The audit was cancelled. Nothing was changed.")
        if worker is not None:
            remember_request(request)
        return worker

    def _audited(self, path: Path, audit: Audit) -> None:
        if self.project is None or self.project.path != path:
            return
        self._shown = audit.changes  # read here, with the audit's source on show
        found = len(audit.result.pairs)
        self.ops.say(f"Audit done on {provider_name(audit.provider)} with {audit.model}: "
                     f"{found:,} candidate pair{'' if found == 1 else 's'}")
        self.reread(choose=audit.source)
        QTimer.singleShot(0, self, self._size_review)
        self.focus_pairs()

    def stop(self) -> None:
        """Nothing of the page's own runs: the operations end the audit under way."""

    # -- export ---------------------------------------------------------------------------------

    def export(self) -> None:
        if self.project is None:
            return
        suggested = self.export_file or self.project.path.with_name(
            f"{self.project.path.stem} duplicates.csv")
        chosen, _ = QFileDialog.getSaveFileName(self, "Export pairs", str(suggested), CSV_FILTER)
        if chosen:
            path = Path(chosen)
            self.export_csv(path if path.suffix else path.with_suffix(".csv"))

    def export_csv(self, path: Path) -> bool:
        """Write the pairs the filters show (with their texts and clusters) to ``path``."""
        if self.project is None:
            return False
        rows = list(self.model.rows)
        try:
            pairs.write_csv(self.project, path, rows)
        except OSError as exc:
            self.ops.fail("Export pairs", exc, "The pairs could not be written.")
            return False
        self.export_file = path
        self.ops.say(f"Exported {len(rows):,} pair{'' if len(rows) == 1 else 's'} to {path}")
        return True
