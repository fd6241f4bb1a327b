"""Filter buttons for a project's declared facets (:mod:`physgrade.facets`), beside the built-in
ones of a filter bar: the queue's, the Questions page's and the Reports page's.

Which facets a project declares changes with its imports, so the buttons are made from the
values the page is handed, not fixed as the built-in ones are.
"""

from __future__ import annotations

from typing import Mapping

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QGridLayout, QWidget

from physgrade.facets import title
from physgrade_ui.widgets import FacetButton


class DeclaredFacets(QWidget):
    """A button per declared facet, ``per_row`` to a row (all in one row if None); hidden when
    the project declares none. ``changed`` is emitted when a value is ticked or unticked."""

    changed = Signal()

    def __init__(self, per_row: int | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.per_row = per_row
        self.grid = QGridLayout(self)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setSpacing(4)
        self.buttons: dict[str, FacetButton] = {}
        self.hide()

    def set_values(self, values: Mapping[str, list[str]],
                   chosen: Mapping[str, frozenset[str]] | None = None) -> None:
        """Offer each facet of ``values`` (name -> its values) with ``chosen`` ticked (default:
        what is ticked now), without emitting ``changed``."""
        kept = self.chosen() if chosen is None else chosen
        if list(values) != list(self.buttons):
            for button in self.buttons.values():
                self.grid.removeWidget(button)
                button.deleteLater()
            self.buttons = {}
            for n, name in enumerate(values):
                button = FacetButton(title(name))
                button.changed.connect(self.changed)
                self.buttons[name] = button
                self.grid.addWidget(button, *(divmod(n, self.per_row) if self.per_row else (0, n)))
        for name, button in self.buttons.items():
            button.blockSignals(True)
            button.set_values(values[name], kept.get(name, frozenset()))
            button.blockSignals(False)
        self.setVisible(bool(self.buttons))

    def chosen(self) -> dict[str, frozenset[str]]:
        """The values ticked, by facet (a facet with none ticked is left out: any value)."""
        return {name: picked for name, button in self.buttons.items()
                if (picked := button.chosen())}

    def clear(self) -> None:
        """Tick nothing, without emitting ``changed``."""
        for button in self.buttons.values():
            button.clear()
