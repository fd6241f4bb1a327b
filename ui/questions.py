"""The Questions page: a filterable list of the project's questions beside a reading pane."""

from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import (QAbstractTableModel, QItemSelectionModel, QModelIndex,
                            QPersistentModelIndex, QSortFilterProxyModel, Qt)
from PySide6.QtGui import QFont, QFontMetrics, QShowEvent
from PySide6.QtWidgets import (QLineEdit, QSplitter, QVBoxLayout, QWidget)

from physgrade.changes import Changes, Kind
from physgrade.project import Project
from physgrade.queries import QuestionRow, question_detail, question_rows
from physgrade_ui import reading, style
from physgrade_ui.operations import Operations
from physgrade_ui.pages import Section
from physgrade_ui.reading_view import ReadingView
from physgrade_ui.widgets import list_table

PLACEHOLDER = reading.placeholder("Select a question to read it here.")

Index = QModelIndex | QPersistentModelIndex


def variant_text(row: QuestionRow) -> str:
    """"q-0005 · Asia" for a regional variant; empty for an original question."""
    return " · ".join(filter(None, (row.variant_of, row.region)))


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


class QuestionTableModel(QAbstractTableModel):
    """The rows of :func:`physgrade.queries.question_rows`, read-only."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows: list[QuestionRow] = []

    def set_rows(self, rows: list[QuestionRow]) -> None:
        self.beginResetModel()
        self._rows = rows
        self.endResetModel()

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
        if role == Qt.ItemDataRole.DisplayRole:
            return value
        if role == Qt.ItemDataRole.ToolTipRole:
            return row.preview
        if role == Qt.ItemDataRole.TextAlignmentRole and isinstance(value, int):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section][0]
        return None


#: The changes that alter a question's row (its Bloom label, its counts of responses).
ROW_KINDS = (Kind.QUESTIONS, Kind.RESPONSES, Kind.BLOOM, Kind.SCORES)


class QuestionsPage(QSplitter):
    """Filter, list and read questions."""

    page_title = "Questions"

    def __init__(self, ops: Operations, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        self.ops = ops
        self.model = QuestionTableModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setFilterKeyColumn(-1)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)

        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter by id, topic, kind, Bloom level…   (Ctrl+F)")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self.proxy.setFilterFixedString)

        self.table = list_table(self.proxy, row_height=30)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(True)
        self.table.selectionModel().currentRowChanged.connect(self._show_current)
        self.filter.returnPressed.connect(self.table.setFocus)

        self.reader = ReadingView(reading.CSS)
        self.reader.show_html(PLACEHOLDER)

        listing = QWidget()
        layout = QVBoxLayout(listing)
        layout.setContentsMargins(16, 16, 8, 16)
        layout.setSpacing(10)
        layout.addWidget(self.filter)
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

    def showEvent(self, event: QShowEvent) -> None:
        """Split about 2:1 once the real width is known: the list has eight columns to show."""
        super().showEvent(event)
        if not self._sized:
            self._sized = True
            self.setSizes([self.width() * 66 // 100, self.width() * 34 // 100])

    # -- the page ----------------------------------------------------------------------------

    def open(self, project: Project | None, person: str | None) -> None:
        self.show_rows(question_rows(project) if project is not None else [])

    def apply(self, changes: Changes) -> None:
        """Re-read the list when rows changed, and the question on show when it changed."""
        project = self.ops.project
        if project is None:
            return
        current = self.current_id()
        if changes.touches(*ROW_KINDS):
            self.show_rows(question_rows(project))
            if self.current_id() != current:
                return  # the list shows another question now, read afresh
        if current is not None and changes.touches(*ROW_KINDS) and (
                changes.questions is None or current in changes.questions):
            self._show_current(self.table.selectionModel().currentIndex())

    def stop(self) -> None:
        """Nothing runs on this page's behalf."""

    def help_section(self) -> Section | None:
        return None

    def focus_widget(self) -> QWidget:
        return self.table

    def focus_search(self) -> bool:
        self.filter.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.filter.selectAll()
        return True

    def show_rows(self, rows: list[QuestionRow]) -> None:
        """Replace the list, keeping the selected question selected if it still exists."""
        current = self.current_id()
        self.model.set_rows(rows)
        self._fit_columns()
        if not self.select(current) and self.proxy.rowCount():
            self.table.selectRow(0)
        if self.current_id() is None:
            self.reader.show_html(PLACEHOLDER)

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
        self.reader.show_html(reading.question_html(detail) if detail else PLACEHOLDER)
