"""The Questions page: a filterable list of the project's questions beside a reading pane."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Any, Callable

from PySide6.QtCore import (
    QAbstractTableModel,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QColor, QFont, QFontMetrics, QShowEvent
from PySide6.QtWidgets import QLineEdit, QSplitter, QVBoxLayout, QWidget

from physgrade import facets
from physgrade.changes import Changes, RecordKind
from physgrade.project import Project
from physgrade.queries import QuestionRow, question_detail, question_rows
from physgrade.selection import shown
from physgrade.tasks import Task
from physgrade.wording import count
from physgrade_ui import figure_keys, reading, style
from physgrade_ui.facet_bar import DeclaredFacets
from physgrade_ui.figure_keys import FigureKeys
from physgrade_ui.operations import Operations, explain
from physgrade_ui.pages import Section
from physgrade_ui.reading_view import ReadingView
from physgrade_ui.widgets import list_table

if TYPE_CHECKING:  # the check itself loads pint and sympy: on a worker, when it runs
    from physgrade.variants import VariantCheck

PLACEHOLDER = reading.placeholder("Select a question to read it here.")

Index = QModelIndex | QPersistentModelIndex


def variant_text(row: QuestionRow) -> str:
    """"q-0005 · Asia" for a regional variant; empty for an original question."""
    return " · ".join(filter(None, (row.variant_of, row.region)))


#: What the Variant column adds for a variant that drifted from its base (the filter finds it).
DRIFTED = "drifted"
DRIFT_MARK = "⚠"


def drift_html(check: VariantCheck) -> str:
    """The notice above a drifted variant in the reading pane: what differs from its base."""
    items = "".join(f"<li>{escape(line)}</li>" for line in check.differences)
    base = f'<span style="white-space: nowrap;">{escape(check.base)}</span>'
    return (f'<div class="warn" style="border: 1px solid {style.WARN}; border-radius: 6px; '
            f'padding: 8px 14px; margin: 0 0 12px;"><b>{DRIFT_MARK} This variant drifted from '
            f"its base {base}.</b> A contextual variant keeps its base's numbers, units and "
            f'answer; here:<ul style="margin-bottom: 2px;">{items}</ul></div>')


def drift_tooltip(check: VariantCheck) -> str:
    return "\n".join([f"Drifted from its base {check.base}:",
                      *(f"• {line}" for line in check.differences)])


def drifted_variants(project: Project, task: Task) -> dict[str, VariantCheck]:
    """On a worker: the variants that drifted from their base, by id."""
    from physgrade.variants import check_variants

    return {check.id: check for check in check_variants(project, task) if not check.ok}


HEADER_SLACK = 28  # header padding and the sort arrow, in pixels

#: (header, value of a row); numbers stay numbers so that sorting is numeric.
COLUMNS: tuple[tuple[str, Callable[[QuestionRow], str | int]], ...] = (
    ("ID", lambda r: r.id),
    ("Topic", lambda r: r.topic or ""),
    ("Kind", lambda r: r.kind),
    ("Bloom level", lambda r: r.bloom_cognitive or ""),
    ("Knowledge", lambda r: r.bloom_knowledge or ""),
    ("Responses", lambda r: r.responses),
    ("Graded", lambda r: r.graded),
    ("Variant", variant_text),
)
VARIANT_COLUMN = len(COLUMNS) - 1


class QuestionTableModel(QAbstractTableModel):
    """The rows of :func:`physgrade.queries.question_rows`, read-only."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows: list[QuestionRow] = []
        self.drifted: dict[str, VariantCheck] = {}

    def set_rows(self, rows: list[QuestionRow]) -> None:
        self.beginResetModel()
        self._rows = rows
        self.endResetModel()

    def set_drifted(self, drifted: dict[str, VariantCheck]) -> None:
        """Mark the variants that drifted from their base: their rows tinted, their Variant
        column saying so, their tooltips saying what differs."""
        self.drifted = drifted
        if self._rows:
            self.dataChanged.emit(self.index(0, 0),
                                  self.index(len(self._rows) - 1, len(COLUMNS) - 1))

    def question_id(self, row: int) -> str:
        return self._rows[row].id

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self._rows[index.row()]
        value = COLUMNS[index.column()][1](row)
        drift = self.drifted.get(row.id)
        marked = drift is not None and index.column() == VARIANT_COLUMN
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{DRIFT_MARK} {DRIFTED} · {value}" if marked else value  # the news first
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{drift_tooltip(drift)}\n\n{row.preview}" if drift else row.preview
        if drift and role == Qt.ItemDataRole.BackgroundRole:  # the whole row: seen at any width
            return QColor(style.WARN_BACKGROUND)
        if marked and role == Qt.ItemDataRole.ForegroundRole:
            return QColor(style.WARN)
        if role == Qt.ItemDataRole.TextAlignmentRole and isinstance(value, int):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section][0]
        return None


#: The changes that alter a question's row (its Bloom label, its counts of responses; the
#: settings name the declared facets it is filtered by).
ROW_KINDS = (RecordKind.QUESTIONS, RecordKind.RESPONSES, RecordKind.BLOOM, RecordKind.SCORES,
             RecordKind.SETTINGS)


class QuestionFilter(QSortFilterProxyModel):
    """The text filter over every column, and the declared facets' values ticked: ``fields``
    holds each question's values of them (:func:`physgrade.facets.by_question`)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.fields: dict[str, dict[str, str | None]] = {}
        self.chosen: dict[str, frozenset[str]] = {}

    def narrow(self, fields: dict[str, dict[str, str | None]],
               chosen: dict[str, frozenset[str]]) -> None:
        self.beginFilterChange()
        self.fields, self.chosen = fields, chosen
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        if self.chosen:
            model = self.sourceModel()
            assert isinstance(model, QuestionTableModel)
            held = self.fields.get(model.question_id(source_row), {})
            if not all(shown(held.get(name)) in values for name, values in self.chosen.items()):
                return False
        return super().filterAcceptsRow(source_row, source_parent)


class QuestionsPage(QSplitter):
    """Filter, list and read questions."""

    page_title = "Questions"

    def __init__(self, ops: Operations, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        self.ops = ops
        self.model = QuestionTableModel(self)
        self.proxy = QuestionFilter(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setFilterKeyColumn(-1)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)

        self.filter = QLineEdit()
        self.filter.setPlaceholderText(
            f"Filter by id, topic, kind, Bloom level, {DRIFTED}…   (Ctrl+F)")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self.proxy.setFilterFixedString)
        self.declared = DeclaredFacets()  # the project's declared facets (language...)
        self.declared.changed.connect(self._narrow)

        self.table = list_table(self.proxy, row_height=30)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(True)
        self.table.selectionModel().currentRowChanged.connect(self._show_current)
        self.filter.returnPressed.connect(self.table.setFocus)

        self.reader = ReadingView(reading.CSS)
        self.reader.show_html(PLACEHOLDER)
        self.figures = FigureKeys(self, self.reader, self.ops.say)

        listing = QWidget()
        layout = QVBoxLayout(listing)
        layout.setContentsMargins(16, 16, 8, 16)
        layout.setSpacing(10)
        layout.addWidget(self.filter)
        layout.addWidget(self.declared)
        layout.addWidget(self.table)
        pane = QWidget()
        pane_layout = QVBoxLayout(pane)
        pane_layout.setContentsMargins(8, 16, 16, 16)
        pane_layout.addWidget(self.reader)
        self.addWidget(listing)
        self.addWidget(pane)
        self.setChildrenCollapsible(False)
        pane.setMinimumWidth(380)
        self._sized = False
        self._drift_said = 0  # drifted variants the status bar last told of

    def showEvent(self, event: QShowEvent) -> None:
        """Split about 2:1 once the real width is known: the list has eight columns to show."""
        super().showEvent(event)
        if not self._sized:
            self._sized = True
            self.setSizes([self.width() * 66 // 100, self.width() * 34 // 100])

    # -- the page ----------------------------------------------------------------------------

    def open(self, project: Project | None, person: str | None) -> None:
        self.model.set_drifted({})
        self._drift_said = 0
        self.declared.set_values({}, {})
        self.show_rows(question_rows(project) if project is not None else [], project)
        if project is not None:
            self.check_variants()

    def apply(self, changes: Changes) -> None:
        """Re-read the list when rows changed, and the question on show when it changed; check
        the variants again when questions changed."""
        project = self.ops.project
        if project is None:
            return
        if changes.touches(RecordKind.QUESTIONS):
            self.check_variants()
        current = self.current_id()
        if changes.touches(*ROW_KINDS):
            self.show_rows(question_rows(project), project)
            if self.current_id() != current:
                return  # the list shows another question now, read afresh
        if current is not None and changes.touches(*ROW_KINDS) and (
                changes.questions is None or current in changes.questions):
            self._show_current(self.table.selectionModel().currentIndex())

    def stop(self) -> None:
        """Nothing runs on this page's behalf but the check of the variants, a read that the
        operations end."""

    # -- variants that drifted from their base ---------------------------------------------

    def check_variants(self) -> None:
        """Compare every variant with its base in the background; marks follow when it is done."""
        self.ops.read(drifted_variants, self.show_drifted, key=self,
                      failed=lambda error: self.ops.say(
                          f"The variants could not be checked: {explain(error)}"))

    def show_drifted(self, drifted: dict[str, VariantCheck]) -> None:
        """Mark the drifted variants, show the question on show again if its mark changed, and
        say how many drifted when that number changes."""
        before = self.model.drifted
        self.model.set_drifted(drifted)
        current = self.current_id()
        if current is not None and before.get(current) != drifted.get(current):
            self._show_current(self.table.selectionModel().currentIndex())
        if drifted and len(drifted) != self._drift_said:
            self.ops.say(f"{count(len(drifted), 'contextual variant')} drifted from "
                         f"{'its' if len(drifted) == 1 else 'their'} base: type “{DRIFTED}” in "
                         "the filter to list them.")
        self._drift_said = len(drifted)

    def help_section(self) -> Section | None:
        return ("Questions", [figure_keys.KEYS])

    def focus_widget(self) -> QWidget:
        return self.table

    def focus_search(self) -> bool:
        self.filter.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.filter.selectAll()
        return True

    def show_rows(self, rows: list[QuestionRow], project: Project | None) -> None:
        """Replace the list (and ``project``'s declared facets' values), keeping the selected
        question selected if it still exists."""
        current = self.current_id()
        self.declared.set_values(facets.choices(project) if project is not None else {})
        self.proxy.narrow(facets.by_question(project) if project is not None else {},
                          self.declared.chosen())
        self.model.set_rows(rows)
        self._fit_columns()
        if not self.select(current) and self.proxy.rowCount():
            self.table.selectRow(0)
        if self.current_id() is None:
            self.reader.show_html(PLACEHOLDER)

    def _narrow(self) -> None:
        """Show the questions with the declared facets' values ticked."""
        self.proxy.narrow(self.proxy.fields, self.declared.chosen())

    def _fit_columns(self) -> None:
        """Size columns to their content and header text.

        Qt's own fit reserves room for the sort arrow in every header, which would push the
        last column off a laptop screen; only the sorted column needs it, and it fits in the
        slack given here.
        """
        header = self.table.horizontalHeader()
        font = QFont(header.font())
        font.setPointSize(style.HEADER_POINT_SIZE)
        font.setBold(True)
        metrics = QFontMetrics(font)
        for column, (title, _) in enumerate(COLUMNS[:-1]):
            header.resizeSection(column, max(self.table.sizeHintForColumn(column),
                                             metrics.horizontalAdvance(title) + HEADER_SLACK))

    def current_id(self) -> str | None:
        index = self.table.selectionModel().currentIndex()
        if not index.isValid():
            return None
        return self.model.question_id(self.proxy.mapToSource(index).row())

    def select(self, question_id: str | None) -> bool:
        """Select a question by id among the rows the filter shows; False if it is not there."""
        for row in range(self.proxy.rowCount()):
            if self.proxy.index(row, 0).data() == question_id:
                self.table.selectionModel().setCurrentIndex(
                    self.proxy.index(row, 0),
                    QItemSelectionModel.SelectionFlag.ClearAndSelect
                    | QItemSelectionModel.SelectionFlag.Rows)
                self.table.scrollTo(self.proxy.index(row, 0))
                return True
        return False

    def _show_current(self, current: QModelIndex) -> None:
        if not current.isValid():
            self.reader.show_html(PLACEHOLDER)
            return
        project = self.ops.project
        question_id = self.model.question_id(self.proxy.mapToSource(current).row())
        detail = question_detail(project, question_id) if project is not None else None
        if detail is None:
            self.reader.show_html(PLACEHOLDER)
            return
        drift = self.model.drifted.get(question_id)
        self.reader.show_html((drift_html(drift) if drift else "") + reading.question_html(detail))
