"""The queue: a Qt table model over :func:`physgrade.queue.load_queue`, and its filter bar.

The model holds the whole queue (58,000 light rows) and the indices the filter lets through;
the filtering is the core's :class:`~physgrade.queue.QueueFilter`. Only the text search goes to
the database, after the grader stops typing.
"""

from __future__ import annotations

from typing import Any, Mapping

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QGridLayout, QHeaderView, QLineEdit, QPushButton, QVBoxLayout, QWidget

from physgrade.queue import GRADED, STARTED, QueueFilter, QueueItem
from physgrade.selection import RESPONSE_FACETS
from physgrade_ui import style
from physgrade_ui.facet_bar import DeclaredFacets
from physgrade_ui.widgets import FacetButton, list_table

Index = QModelIndex | QPersistentModelIndex
COLUMNS = ("Question", "Model", "Me", "Others")
#: Filter facets: QueueFilter field and button title, in the order of the bar (the response
#: facets first, then the queue's own).
FACETS = (*((facet.key, facet.title) for facet in RESPONSE_FACETS),
          ("compliance", "Template"), ("mine", "Me"), ("others", "Others"),
          ("assignment", "Assignment"))
#: The estimation samples' facet, on a row of its own under the others (its values are names a
#: study chose, often long), shown only when the project has a sample: most projects have none.
SAMPLE_FACET = ("samples", "Estimation sample")
#: Facet buttons per row: three keep the queue narrow enough for the reading beside it.
FACETS_PER_ROW = 3
SEARCH_DELAY_MS = 300


def progress_text(item: QueueItem) -> str:
    if item.progress == GRADED:
        return "✓"
    return f"{item.scored}/{item.criteria}" if item.progress == STARTED else ""


class QueueModel(QAbstractTableModel):
    """The responses the filter shows, in queue order."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.items: list[QueueItem] = []
        self.visible: list[int] = []
        self.filter = QueueFilter()
        self._row_of: dict[str, int] = {}
        self._by_id: dict[str, QueueItem] = {}

    def set_items(self, items: list[QueueItem], queue_filter: QueueFilter) -> None:
        self.beginResetModel()
        self.items = items
        self._by_id = {item.response_id: item for item in items}
        self._apply(queue_filter)
        self.endResetModel()

    def set_filter(self, queue_filter: QueueFilter) -> None:
        self.beginResetModel()
        self._apply(queue_filter)
        self.endResetModel()

    def _apply(self, queue_filter: QueueFilter) -> None:
        self.filter = queue_filter
        matches = queue_filter.matches
        self.visible = [i for i, item in enumerate(self.items) if matches(item)]
        self._row_of = {self.items[i].response_id: row for row, i in enumerate(self.visible)}

    def item(self, row: int) -> QueueItem:
        return self.items[self.visible[row]]

    def row_of(self, response_id: str | None) -> int | None:
        return self._row_of.get(response_id) if response_id else None

    def update_scored(self, response_id: str, scored: int) -> None:
        """The grader's count of scored criteria changed (the row stays, even if the filter
        would now hide it: items do not vanish under the grader's hands)."""
        self._by_id[response_id].scored = scored
        self._progress_changed(response_id)

    def update_progress(self, fresh: list[QueueItem], responses: frozenset[str] | None) -> None:
        """Take the grader's and the others' progress on ``responses`` (None: all) from a fresh
        read of the queue; rows stay where they are, as in :meth:`update_scored`."""
        for item in fresh:
            known = self._by_id.get(item.response_id)
            if known is None or (responses is not None and item.response_id not in responses):
                continue
            if (known.scored, known.others) != (item.scored, item.others):
                known.scored, known.others = item.scored, item.others
                self._progress_changed(item.response_id)

    def _progress_changed(self, response_id: str) -> None:
        row = self.row_of(response_id)
        if row is not None:
            self.dataChanged.emit(self.index(row, 2), self.index(row, 3))

    def graded_count(self) -> int:
        return sum(1 for i in self.visible if self.items[i].progress == GRADED)

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.visible)

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        item = self.items[self.visible[index.row()]]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return (item.question_id, item.model, progress_text(item),
                    "●" if item.others else "")[column]
        if role == Qt.ItemDataRole.ToolTipRole:
            return (f"{item.model}\n{item.response_id} · {item.topic or 'no topic'} · {item.kind}"
                    f"{'' if item.compliant else ' · not template-compliant'}\n"
                    f"Me: {item.progress} ({item.scored}/{item.criteria})"
                    f"{' · graded by others' if item.others else ''}"
                    + (f"\nEstimation sample: {', '.join(item.samples)}" if item.samples
                       else ""))
        if role == Qt.ItemDataRole.TextAlignmentRole and column >= 2:
            return Qt.AlignmentFlag.AlignCenter
        if role == Qt.ItemDataRole.ForegroundRole and column == 2 and item.progress == GRADED:
            return QColor(style.GOOD)
        return None

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None


class QueuePanel(QWidget):
    """Search box, facet buttons and the queue table. ``filter_changed`` carries the facets
    and the search text; the page runs the search through the core."""

    filter_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = QueueModel(self)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search questions and responses…   (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self.search.textChanged.connect(self._search_timer.start)
        self._search_timer.timeout.connect(self.filter_changed)
        self.search.returnPressed.connect(self._search_now)

        self.facets: dict[str, FacetButton] = {}
        grid = QGridLayout()
        grid.setSpacing(4)
        for n, (key, title) in enumerate(FACETS):
            grid.addWidget(self._facet(key, title), *divmod(n, FACETS_PER_ROW))
        self.clear_button = QPushButton("Clear")
        self.clear_button.setProperty("role", "small")
        self.clear_button.setToolTip("Clear the search and every filter")
        self.clear_button.clicked.connect(self.clear_filters)
        grid.addWidget(self.clear_button, *divmod(len(FACETS), FACETS_PER_ROW))
        samples = self._facet(*SAMPLE_FACET)
        samples.hide()
        grid.addWidget(samples, grid.rowCount(), 0, 1, FACETS_PER_ROW)
        # The project's declared facets (language, difficulty...), under the built-in ones.
        self.declared = DeclaredFacets(FACETS_PER_ROW)
        self.declared.changed.connect(self.filter_changed)
        grid.addWidget(self.declared, grid.rowCount(), 0, 1, FACETS_PER_ROW)

        self.table = list_table(self.model, row_height=28)
        # The queue is narrow: the ids and marks take only what they need and the model's name
        # the rest. A name still too long loses its middle, which keeps both its family (at the
        # start) and its size, date or variant (at the end); the row's tooltip holds it whole.
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        header = self.table.horizontalHeader()
        for column in (0, 2, 3):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 12, 6, 12)
        layout.setSpacing(8)
        layout.addWidget(self.search)
        layout.addLayout(grid)
        layout.addWidget(self.table, 1)

    def _facet(self, key: str, title: str) -> FacetButton:
        button = FacetButton(title)
        button.changed.connect(self.filter_changed)
        self.facets[key] = button
        return button

    def set_choices(self, values: dict[str, list[str]], queue_filter: QueueFilter,
                    fields: Mapping[str, list[str]] | None = None) -> None:
        """Fill the facet menus (``fields``: the declared facets' values) and show
        ``queue_filter`` in the bar, without emitting."""
        self.blockSignals(True)
        for key, button in self.facets.items():
            button.blockSignals(True)
            button.set_values(values.get(key, []), getattr(queue_filter, key))
            button.blockSignals(False)
        self.facets[SAMPLE_FACET[0]].setVisible(bool(values.get(SAMPLE_FACET[0])))
        self.declared.set_values(fields or {}, dict(queue_filter.fields))
        self.search.blockSignals(True)
        self.search.setText(queue_filter.search)
        self.search.blockSignals(False)
        self.blockSignals(False)

    def facet_filter(self) -> QueueFilter:
        """The facets as chosen in the bar (the search text is run by the page)."""
        # The keys are QueueFilter's facet fields, each a frozenset (never search, a str).
        chosen: dict[str, Any] = {key: button.chosen() for key, button in self.facets.items()}
        return QueueFilter(**chosen, fields=tuple(sorted(self.declared.chosen().items())))

    def clear_filters(self) -> None:
        self._clear()
        self.filter_changed.emit()

    def filter_to(self, key: str, values: frozenset[str]) -> None:
        """Show only the items whose facet ``key`` takes one of ``values`` (of those its menu
        offers): every other facet and the search are cleared."""
        self._clear()
        button = self.facets[key]
        button.set_values([action.text() for action in button.menu().actions()], values)
        self.filter_changed.emit()

    def _clear(self) -> None:
        for button in self.facets.values():
            button.clear()
        self.declared.clear()
        self.search.blockSignals(True)
        self.search.clear()
        self.search.blockSignals(False)

    def _search_now(self) -> None:
        self._search_timer.stop()
        self.filter_changed.emit()
