"""What a report is, as plain data: sections of tables and figures.

The report builder fills it, the writers turn it into HTML, CSV and JSON, and the app's Reports
page shows it; none of them needs to know how the numbers were computed.
"""

from __future__ import annotations

import hashlib
import pickle
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Union

from physgrade.stats.estimate import Estimate

#: Why an estimate of a draft report has no interval yet: it comes with the finished section
#: (:func:`physgrade.report.build.draft_report`).
PENDING = "interval still being computed"
#: What a table cell holds: text, a count, a number, an estimate with its interval, or nothing.
Cell = Union[str, int, float, Estimate, None]


@dataclass(frozen=True, slots=True)
class Table:
    """A titled table. ``name`` is its file name in a CSV export (letters, digits, ``_``).

    Numbers and estimates in the columns named in ``percent`` are shares (0..1) that readers
    see as percentages; the stored numbers stay shares in every export.

    ``folded`` is the table readers see (on screen and in HTML) where it differs: people with
    few grades folded into one row (:mod:`physgrade.report.folding`); ``rows`` keep everyone's
    own row, for the CSV and JSON exports.
    """

    name: str
    title: str
    columns: tuple[str, ...]
    rows: list[tuple[Cell, ...]]
    note: str = ""
    percent: frozenset[str] = frozenset()
    folded: Table | None = None

    def shown(self) -> Table:
        """The table as readers see it."""
        return self.folded or self

    def numeric(self, column: int) -> bool:
        """Whether a column holds numbers only (readers see it right-aligned)."""
        return bool(self.rows) and all(cell is None or isinstance(cell, (int, float, Estimate))
                                       for cell in (row[column] for row in self.rows))

    def text(self, row: int, column: int) -> str:
        return cell_text(self.rows[row][column], self.columns[column] in self.percent)

    def as_dict(self) -> dict[str, Any]:
        """Every number of the table, estimates with their n and interval."""
        return {"name": self.name, "title": self.title, "note": self.note,
                "columns": list(self.columns),
                "rows": [[cell.as_dict() if isinstance(cell, Estimate) else cell for cell in row]
                         for row in self.rows]}


def cell_text(cell: Cell, percent: bool = False) -> str:
    """How a cell reads on screen and in HTML: shares as %, other numbers to 3 decimals."""
    if cell is None:
        return "—"
    if isinstance(cell, Estimate):
        return cell.text(percent=percent)
    if isinstance(cell, int):
        return f"{cell:,}"
    if isinstance(cell, float):
        return f"{cell:.1%}" if percent else f"{cell:.3f}"
    return cell


#: What a narrow column may not break: an interval, "n = 57", a hyphenated word ("P-REFS").
_UNBROKEN = re.compile(r"\[[^\]\n]*\]|\S+ = \S+|\S*-\S*")


def cell_parts(text: str) -> list[tuple[str, bool]]:
    """A cell's text in order, as (part, whether it must stay on one line), so that a value
    goes above its interval and a name or a count stays whole where a column wraps (the app
    and the HTML report wrap alike)."""
    parts: list[tuple[str, bool]] = []
    end = 0
    for found in _UNBROKEN.finditer(text):
        parts += [(text[end:found.start()], False)] if found.start() > end else []
        parts.append((found.group(), True))
        end = found.end()
    return parts + ([(text[end:], False)] if end < len(text) else [])


#: Figures are drawn one at a time: matplotlib's state is not shared safely between threads.
_DRAWING = threading.Lock()
#: How many bytes of the latest images are kept by what they were drawn from: a figure's PNG
#: is 20 to 400 kB, a report's figures 1 to 2 MB.
KEPT_BYTES = 32 * 2**20
#: The latest images, oldest first, by the digest of the pickled plot that drew them (its
#: function and every number it was given): a report computed again on numbers that did not
#: change (a filter set back, a rater chosen again) shows those figures without drawing them.
_IMAGES: OrderedDict[bytes, bytes] = OrderedDict()


def _image(plot: Callable[[], bytes]) -> bytes:
    """What ``plot`` draws, from :data:`_IMAGES` where the same plot drew it lately; a plot
    that cannot be pickled is drawn every time. Call with :data:`_DRAWING` held."""
    try:
        key = hashlib.sha256(pickle.dumps(plot, protocol=pickle.HIGHEST_PROTOCOL)).digest()
    except (pickle.PicklingError, AttributeError, TypeError):
        return plot()
    if key in _IMAGES:
        _IMAGES.move_to_end(key)
        return _IMAGES[key]
    image = _IMAGES[key] = plot()
    while sum(len(kept) for kept in _IMAGES.values()) > KEPT_BYTES:
        _IMAGES.popitem(last=False)
    return image


@dataclass(frozen=True, eq=False)
class Figure:
    """A plot, drawn as a PNG image when first asked for (:meth:`draw`), so that a report's
    numbers can be shown before its figures are drawn; the numbers behind it are in the
    section's table named ``table`` (shown just after it). ``plot`` draws it."""

    name: str
    title: str
    plot: Callable[[], bytes]
    caption: str = ""
    table: str = ""
    _png: list[bytes] = field(default_factory=list, init=False, repr=False)

    def draw(self) -> bytes:
        """The image, drawn now unless it was, here or lately by a figure of the same plot
        (one figure at a time, whatever the thread)."""
        with _DRAWING:
            if not self._png:
                self._png.append(_image(self.plot))
            return self._png[0]

    @property
    def png(self) -> bytes:
        return self.draw()

    @property
    def drawn(self) -> bool:
        """Whether the image is there already (showing it costs nothing)."""
        return bool(self._png)


@dataclass(frozen=True, slots=True)
class Section:
    """A numbered part of a report; ``short`` names it where many sit side by side (the app's
    tabs), the title when empty."""

    title: str
    intro: str = ""
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    short: str = ""

    @property
    def tab(self) -> str:
        return self.short or self.title

    def shown(self) -> Section:
        """The section as readers see it: its tables' folded rows (see :meth:`Table.shown`)."""
        return replace(self, tables=[table.shown() for table in self.tables])

    def figures_after(self, table: Table | None) -> list[Figure]:
        """The figures drawn from ``table``; None gives those that belong to no table."""
        names = {t.name for t in self.tables}
        if table is None:
            return [f for f in self.figures if f.table not in names]
        return [f for f in self.figures if f.table == table.name]


@dataclass(frozen=True, slots=True)
class Report:
    """A whole report: what it was computed on (``settings``) and its sections, in order."""

    title: str
    settings: dict[str, Any]
    sections: list[Section]

    def tables(self) -> list[Table]:
        return [table for section in self.sections for table in section.tables]

    def figures(self) -> list[Figure]:
        return [figure for section in self.sections for figure in section.figures]
