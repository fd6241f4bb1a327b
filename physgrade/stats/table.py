"""Reading a ratings CSV: a header, one row per item, one column per rater, empty cells missing.

Every problem is a ValueError naming the file, and where it can, the line and the column, so
that the person who exported the sheet can find and fix the cell.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from physgrade.stats.agreement import SCALES

MISSING = frozenset({"", "na", "n/a"})  # N/A is "not applicable": no rating, never a 0


@dataclass(frozen=True, slots=True)
class RatingsTable:
    """The ratings as numbers, ready for physgrade.stats.agreement."""

    ratings: np.ndarray                    # items x raters, NaN = missing
    raters: tuple[str, ...]
    categories: tuple[float, ...] | None   # the scale's values; None = the values observed
    labels: tuple[str, ...] | None = None  # text ratings (nominal): the text of code 0, 1, 2, ...


def read_ratings(path: str | Path, scale: str, id_column: str | None = None,
                 categories: Sequence[str] | None = None) -> RatingsTable:
    """Read a ratings CSV. Nominal ratings may be any text (coded 0, 1, ... in the order of
    ``categories``, or alphabetically); the other scales need numbers."""
    if scale not in SCALES:
        raise ValueError(f"unknown scale {scale!r}; use one of {', '.join(SCALES)}")
    header, rows = _read(Path(path))
    raters = [i for i, name in enumerate(header) if name != id_column]
    if id_column is not None and len(raters) == len(header):
        raise ValueError(f'{path}: there is no column "{id_column}" to identify items; the columns '
                         f"are {', '.join(header)}")
    if len(raters) < 2:
        raise ValueError(f"{path}: agreement needs at least 2 rater columns, found {len(raters)} "
                         f"({', '.join(header[i] for i in raters) or 'none'})")
    cells = [(line, header[i], row[i].strip()) for line, row in rows for i in raters]
    given = None if categories is None else [c.strip() for c in categories]
    rated = [text for _, _, text in cells if text.lower() not in MISSING]
    labels = None
    if scale == "nominal" and any(_number(text) is None for text in rated + (given or [])):
        labels = tuple(given if given is not None else sorted(set(rated)))
        values = tuple(float(code) for code in range(len(labels)))
    elif given is not None:
        values = tuple(_category(path, scale, text) for text in given)
    else:
        values = None
    ratings = np.empty(len(cells))
    for k, (line, column, text) in enumerate(cells):
        try:
            ratings[k] = _value(text, scale, labels, values)
        except ValueError as exc:
            raise ValueError(f'{path}, line {line}, column "{column}": {exc}') from None
    return RatingsTable(ratings.reshape(len(rows), len(raters)), tuple(header[i] for i in raters),
                        values, labels)


def _read(path: Path) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The header and the (line number, cells) of every non-blank row, checked for shape."""
    try:
        with path.open(encoding="utf-8-sig", newline="") as stream:
            reader = csv.reader(stream)
            header = [name.strip() for name in next(reader, [])]
            rows = [(reader.line_num, row) for row in reader if row]
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except csv.Error as exc:
        raise ValueError(f"{path}, line {reader.line_num}: {exc}") from exc
    if not any(header):
        raise ValueError(f"{path} is empty: it needs a header row naming the raters")
    for i, name in enumerate(header):
        if not name:
            raise ValueError(f"{path}, line 1: column {i + 1} has no name")
        if name in header[:i]:
            raise ValueError(f'{path}, line 1: column "{name}" appears twice in the header')
    for line, row in rows:
        if len(row) != len(header):
            raise ValueError(f"{path}, line {line}: {len(row)} cells, but the header has "
                             f"{len(header)} columns")
    return header, rows


def _value(text: str, scale: str, labels: tuple[str, ...] | None,
           categories: tuple[float, ...] | None) -> float:
    """One cell as a number: NaN if missing, the code of a text label, or the number it holds."""
    if text.lower() in MISSING:
        return math.nan
    if labels is not None:
        if text not in labels:
            raise ValueError(f'"{text}" is not one of the categories {", ".join(labels)}')
        return float(labels.index(text))
    if (value := _number(text)) is None:
        raise ValueError(f'"{text}" is not a number ({scale} scales need numeric ratings)')
    if categories is not None and value not in categories:
        raise ValueError(f"{text} is not one of the categories {', '.join(f'{c:g}' for c in categories)}")
    return value


def _category(path: str | Path, scale: str, text: str) -> float:
    if (value := _number(text)) is None:
        raise ValueError(f'{path}: category "{text}" is not a number ({scale} scales need numeric ratings)')
    return value


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None
