"""Small building blocks shared by the pages and dialogs: role-styled labels, fitted tables."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from PySide6.QtCore import Qt
from PySide6.QtCore import QAbstractItemModel
from PySide6.QtWidgets import (QAbstractItemView, QHeaderView, QLabel, QSizePolicy, QTableView,
                               QTableWidget, QTableWidgetItem, QWidget)


ROW_HEIGHT = 32
NUMBER_ALIGNMENT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter


def label(text: str, role: str | None = None, parent: QWidget | None = None) -> QLabel:
    """A QLabel styled by role (see :mod:`physgrade_ui.style`)."""
    widget = QLabel(text, parent)
    if role:
        widget.setProperty("role", role)
    return widget


def list_table(model: QAbstractItemModel, row_height: int) -> QTableView:
    """A list of records as a table: whole rows selected one at a time, no grid, left-aligned
    headers, columns the user can resize."""
    table = QTableView()
    table.setModel(model)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setAlternatingRowColors(True)
    table.setShowGrid(False)
    table.setWordWrap(False)
    table.verticalHeader().hide()
    table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    table.verticalHeader().setDefaultSectionSize(row_height)
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
    return table


class SmallTable(QTableWidget):
    """A read-only table that is as tall as its rows, so the page scrolls rather than the table."""

    def __init__(self, headers: list[str], parent: QWidget | None = None) -> None:
        super().__init__(0, len(headers), parent)
        self.setHorizontalHeaderLabels(headers)
        self.verticalHeader().hide()
        self.setShowGrid(False)
        self.setAlternatingRowColors(True)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._batches = 0
        self._fit_columns()
        header = self.horizontalHeader()
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.setWordWrap(False)
        self.verticalHeader().setDefaultSectionSize(ROW_HEIGHT)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def fill(self, rows: list[tuple[str | int | float, ...]]) -> None:
        """Show ``rows``; counts (int) and shares (float, shown as %) are right-aligned."""
        with self.batch():
            self._fill(rows)

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Change many cells with one layout at the end: fitting columns to their contents
        after every cell would cost milliseconds per cell."""
        self._batches += 1
        if self._batches == 1:
            self.setUpdatesEnabled(False)
            self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        try:
            yield
        finally:
            self._batches -= 1
            if not self._batches:
                self._fit_columns()
                self.setUpdatesEnabled(True)

    def _fit_columns(self) -> None:
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)

    def _fill(self, rows: list[tuple[str | int | float, ...]]) -> None:
        self.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                number = isinstance(value, (int, float))
                text = (f"{value:,}" if isinstance(value, int) else
                        f"{value:.0%}" if isinstance(value, float) else value)
                item = QTableWidgetItem(text)
                if number:
                    item.setTextAlignment(NUMBER_ALIGNMENT)
                    self.horizontalHeaderItem(c).setTextAlignment(NUMBER_ALIGNMENT)
                self.setItem(r, c, item)
        self.setFixedHeight(self.horizontalHeader().sizeHint().height() + 2 * self.frameWidth()
                            + ROW_HEIGHT * len(rows))


