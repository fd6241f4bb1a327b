"""Small building blocks shared by the pages and dialogs: role-styled labels, fitted tables,
filter drop-downs."""

from __future__ import annotations

import random
from contextlib import contextmanager
from datetime import datetime
from typing import Callable, Iterable, Iterator

from PySide6.QtCore import QAbstractItemModel, QEvent, QSize, Qt, Signal
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

ROW_HEIGHT = 32
NUMBER_ALIGNMENT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter


def label(text: str, role: str | None = None, parent: QWidget | None = None) -> QLabel:
    """A QLabel styled by role (see :mod:`physgrade_ui.style`)."""
    widget = QLabel(text, parent)
    if role:
        widget.setProperty("role", role)
    return widget


def restyle(widget: QWidget, name: str, value: object) -> None:
    """Set a property the style sheet reads, re-polishing only when it changes (polishing a
    widget costs more than the rest of showing a row)."""
    if widget.property(name) == value:
        return
    widget.setProperty(name, value)
    polish(widget)


def polish(widget: QWidget) -> None:
    """Apply the style sheet again, after a property it reads has changed."""
    widget.style().unpolish(widget)
    widget.style().polish(widget)


def local_time(stamp: str | None) -> str:
    """A stored UTC timestamp as the user's local date and time ("23 Nov 2026, 14:05"); what
    cannot be read is shown as it is, and no time as a dash."""
    try:
        return f"{datetime.fromisoformat(stamp or '').astimezone():%d %b %Y, %H:%M}"
    except ValueError:
        return stamp or "—"


def shortcuts(widget: QWidget, keys: Iterable[str], slot: Callable[[], object]) -> list[QAction]:
    """Actions that call ``slot`` on each of ``keys`` while focus is in ``widget`` or a child
    (so a page's letter keys never fire while another page, or a drop-down, has focus)."""
    actions = []
    for key in keys:
        action = QAction(widget)
        action.setShortcut(QKeySequence(key))
        action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        action.triggered.connect(slot)
        widget.addAction(action)
        actions.append(action)
    return actions


def named_shortcut(widget: QWidget, text: str, keys: Iterable[str], slot: Callable[[], object],
                   checkable: bool = False) -> QAction:
    """One action with a menu text and its ``keys``, acting while focus is in ``widget`` (as
    :func:`shortcuts`), for a page's keys that a menu or a button also offers."""
    action = QAction(text, widget)
    action.setShortcuts([QKeySequence(key) for key in keys])
    action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    action.setCheckable(checkable)
    action.triggered.connect(slot)
    widget.addAction(action)
    return action


def plain_key(event: QEvent) -> bool:
    """Whether ``event`` asks to be a shortcut for a key without Ctrl, Alt or Meta: a widget
    that takes typed keys accepts it (in ``event``) so that the page's letter, digit and arrow
    shortcuts leave the key to it."""
    return (event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent)
            and not event.modifiers() & ~(Qt.KeyboardModifier.ShiftModifier
                                          | Qt.KeyboardModifier.KeypadModifier))


class ElidedLabel(QLabel):
    """A one-line label that ends in "…" where its text does not fit; ``text()`` stays whole."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

    def minimumSizeHint(self) -> QSize:
        return QSize(0, super().minimumSizeHint().height())

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        rect = self.contentsRect()
        shown = self.fontMetrics().elidedText(" ".join(self.text().split()),
                                              Qt.TextElideMode.ElideRight, rect.width())
        self.style().drawItemText(painter, rect, int(Qt.AlignmentFlag.AlignLeft
                                                     | Qt.AlignmentFlag.AlignVCenter),
                                  self.palette(), self.isEnabled(), shown,
                                  QPalette.ColorRole.WindowText)


class RowCursor:
    """A keyboard cursor over a panel's rows (each with ``set_current(bool)``): the current
    row is highlighted and moved by the arrow keys. Mixed into panels that set ``rows``."""

    rows: list
    current: int = 0

    def set_current(self, index: int) -> None:
        if not self.rows:
            return
        self.current = max(0, min(index, len(self.rows) - 1))
        for i, row in enumerate(self.rows):
            row.set_current(i == self.current)

    def move(self, delta: int) -> None:
        self.set_current(self.current + delta)


class EmptyState(QWidget):
    """What a page shows before it has anything to show: a centred card with a title, what to
    do, and the button that does it."""

    def __init__(self, title: str, texts: list[tuple[str, str | None]], action: str,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        card = QFrame(self)
        card.setProperty("role", "card")
        card.setFixedWidth(640)  # a fixed width lets the wrapped text take its full height
        self.title = label(title, "title", card)
        self.texts = []
        inner = QVBoxLayout(card)
        inner.setContentsMargins(28, 24, 28, 24)
        inner.setSpacing(12)
        inner.addWidget(self.title)
        for text, role in texts:
            self.texts.append(label(text, role, card))
            self.texts[-1].setWordWrap(True)
            inner.addWidget(self.texts[-1])
        self.button = QPushButton(action, card)
        self.button.setProperty("role", "primary")
        inner.addSpacing(6)
        inner.addWidget(self.button, 0, Qt.AlignmentFlag.AlignLeft)
        row = QHBoxLayout()  # stretches, not an alignment: aligned, the card's height
        row.addStretch(1)    # would ignore the wrapped text's height for its width
        row.addWidget(card)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        layout.addLayout(row)
        layout.addStretch(2)

    def say(self, title: str, text: str, action: str | None) -> None:
        """Show ``title`` and ``text`` (the first text), and the button as ``action`` (hidden
        for None)."""
        self.title.setText(title)
        self.texts[0].setText(text)
        self.button.setVisible(action is not None)
        if action is not None:
            self.button.setText(action)


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


class SessionHeader(QFrame):
    """The card above a page worked through item by item (Bloom labels, Adjudicate): the title
    and the page's controls, each after its caption; under them the session's counts
    (``stats``), the person at work (``person``) and where they are (``position``), on a row of
    their own so that a long name never widens the window."""

    def __init__(self, title: str, controls: Iterable[tuple[str, QWidget]],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setProperty("role", "card")
        self.person = label("", "person", self)
        self.stats = label("", None, self)
        self.position = label("", "position", self)
        for plain in (self.person, self.stats, self.position):
            plain.setTextFormat(Qt.TextFormat.PlainText)
        top = QHBoxLayout()
        top.setSpacing(10)
        top.addWidget(label(title, "title", self))
        top.addSpacing(12)
        for caption, control in controls:
            if caption:
                top.addWidget(label(caption, "muted", self))
            top.addWidget(control)
            top.addSpacing(6)
        top.addStretch(1)
        bottom = QHBoxLayout()
        bottom.setSpacing(10)
        bottom.addWidget(self.stats, 1)
        bottom.addWidget(self.person)
        bottom.addSpacing(12)
        bottom.addWidget(self.position)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(18, 10, 18, 10)
        layout.setSpacing(6)
        layout.addLayout(top)
        layout.addLayout(bottom)


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

    def title_item(self, column: int) -> QTableWidgetItem:
        """The header item of ``column`` (the labels given at construction made one for each)."""
        item = self.horizontalHeaderItem(column)
        assert item is not None
        return item

    def cell_item(self, row: int, column: int) -> QTableWidgetItem:
        """The item of a cell :meth:`fill` filled (it fills every cell)."""
        item = self.item(row, column)
        assert item is not None
        return item

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
                    self.title_item(c).setTextAlignment(NUMBER_ALIGNMENT)
                self.setItem(r, c, item)
        self.setFixedHeight(self.horizontalHeader().sizeHint().height() + 2 * self.frameWidth()
                            + ROW_HEIGHT * len(rows))


def mnemonic_free(text: str) -> str:
    """``text`` as a button or menu shows it literally: Qt reads a lone "&" as the mark of an
    Alt key."""
    return text.replace("&", "&&")


class FacetButton(QToolButton):
    """A drop-down of checkable values for one facet; its label says how many are chosen."""

    changed = Signal()

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = title
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setMenu(QMenu(self))
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self._show_label()

    def set_values(self, values: list[str], chosen: frozenset[str]) -> None:
        menu = self.menu()
        menu.clear()
        for value in values:
            # "&" in a value ("Electricity & Magnetism") is text, not a keyboard accelerator.
            action = QAction(mnemonic_free(value), menu)
            action.setData(value)
            action.setCheckable(True)
            action.setChecked(value in chosen)
            action.toggled.connect(self._toggled)
            menu.addAction(action)
        self._show_label()

    def clear(self) -> None:
        """Choose nothing (any value), without emitting ``changed``."""
        self.blockSignals(True)
        for action in self.menu().actions():
            action.setChecked(False)
        self.blockSignals(False)
        self._show_label()

    def chosen(self) -> frozenset[str]:
        return frozenset(a.data() for a in self.menu().actions() if a.isChecked())

    def _toggled(self) -> None:
        self._show_label()
        self.changed.emit()

    def _show_label(self) -> None:
        chosen = self.chosen()
        self.setProperty("active", bool(chosen))
        self.setText(self.title if not chosen else
                     f"{self.title}: {mnemonic_free(next(iter(chosen)))}" if len(chosen) == 1
                     else f"{self.title}: {len(chosen)}")
        self.setToolTip(", ".join(sorted(chosen)) or f"Any {self.title.lower()}")
        polish(self)


#: The largest seed the seed fields offer (a spin box holds a 32-bit int).
MAX_SEED = 2**31 - 1


class SeedField(QWidget):
    """A seed to draw from, with a button that fills in a new one: samples and assignments are
    drawn from a seed, so that the same seed and data give the same draw."""

    def __init__(self, button: str, tooltip: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.spin = QSpinBox(self)
        self.spin.setRange(0, MAX_SEED)
        self.spin.setMinimumWidth(130)
        self.spin.setToolTip(tooltip)
        self.new = QPushButton(button, self)
        self.new.setProperty("role", "small")
        self.new.setAutoDefault(False)
        self.new.setToolTip("Fill in a random seed")
        self.new.clicked.connect(self.fill_new)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)
        layout.addWidget(self.spin)
        layout.addWidget(self.new)
        layout.addStretch(1)
        # A label's mnemonic focuses its buddy only if the buddy takes focus itself: the field
        # does, and hands it to the spin box.
        self.setFocusPolicy(self.spin.focusPolicy())
        self.setFocusProxy(self.spin)
        self.fill_new()

    def value(self) -> int:
        return self.spin.value()

    def setValue(self, value: int) -> None:
        self.spin.setValue(value)

    def fill_new(self) -> None:
        self.spin.setValue(random.SystemRandom().randrange(0, 1_000_000))
