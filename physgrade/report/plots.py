"""The report's figures, drawn with matplotlib off screen and kept as PNG bytes.

Each function takes the numbers a table of the report also holds, so a figure never shows
anything the exported tables do not.
"""

from __future__ import annotations

import io
from typing import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")  # no display, no Qt: the core draws into memory only
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.figure import Figure as MplFigure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

#: A palette that stays apart for readers with the common colour-vision deficiencies.
COLOURS = ("#2d6cb5", "#e08a2c", "#3a9a6a", "#c4485b", "#7d5ab5", "#8c6d46", "#d47fb8",
           "#6b6b6b", "#b5b52d", "#35a8c4")
DPI = 110


def _png(figure: MplFigure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI)  # the constrained layout already fits
    plt.close(figure)
    return buffer.getvalue()


def _figure(width: float, height: float) -> tuple[MplFigure, plt.Axes]:
    figure, axes = plt.subplots(figsize=(width, height), layout="constrained")
    axes.spines[["top", "right"]].set_visible(False)
    axes.grid(axis="y", color="#e4e7eb", linewidth=0.8)
    axes.set_axisbelow(True)
    return figure, axes


def _grid(count: int, per_row: int, width: float, height: float) -> tuple[MplFigure, list]:
    """A figure of ``count`` small panels, ``per_row`` to a row (at most), each
    ``width`` × ``height`` inches; the cells left over stay blank."""
    per_row = max(min(count, per_row), 1)
    rows = max((count + per_row - 1) // per_row, 1)
    figure, grid = plt.subplots(rows, per_row, figsize=(width * per_row, height * rows),
                                layout="constrained", squeeze=False)
    for axes in grid.flat[count:]:
        axes.axis("off")
    return figure, list(grid.flat[:count])


def lines(x_labels: Sequence[str], series: Mapping[str, Sequence[float | None]], y_label: str,
          percent: bool = True) -> bytes:
    """One line per series over ordered steps (the progressive degradation curve)."""
    figure, axes = _figure(7.5, 4.2)
    x = np.arange(len(x_labels))
    for i, (name, values) in enumerate(series.items()):
        y = np.array([np.nan if v is None else v for v in values], dtype=float)
        axes.plot(x, y * (100 if percent else 1), marker="o", linewidth=2 if name.startswith("all")
                  else 1.4, color=COLOURS[i % len(COLOURS)], label=name)
    axes.set_xticks(x, x_labels)
    axes.set_ylabel(y_label)
    if percent:
        axes.set_ylim(0, 102)
    axes.legend(frameon=False, fontsize=8, loc="lower left")
    return _png(figure)


#: A value with its 95% interval (value, low, high), shares 0..1; None where there is none.
Interval = tuple[float | None, float | None, float | None]
#: How each kind of estimate is drawn in a forest plot, in the order of its legend: a point
#: alone, or a point with its interval.
_FOREST_MARKERS = ("D", "o", "s")


def forest(rows: Sequence[str], panels: Mapping[str, Mapping[str, Sequence[Interval]]],
           x_label: str) -> bytes:
    """Estimates side by side with their intervals: a panel per measure, a row per ``rows``
    (top down), and in each row one mark per series (such as the judge alone, the experts
    alone, corrected), in the series' order; a series without intervals shows points only.
    Every panel has the same series."""
    names = list(next(iter(panels.values()), {}))
    figure, grid = plt.subplots(
        1, max(len(panels), 1), figsize=(3.9 * max(len(panels), 1) + 1.6,
                                         len(rows) * (0.16 * len(names) + 0.25) + 1.3),
        layout="constrained", sharey=True, squeeze=False)
    y = np.arange(len(rows))[::-1].astype(float)
    spread = 0.6 / max(len(names), 1)  # the marks of a row share its band
    # The axis reaches every interval's ends (the estimates cut shares to 0..100%).
    ends = [(low, high) for series in panels.values() for values in series.values()
            for _, low, high in values if low is not None and high is not None]
    low_ends = [low * 100 for low, _ in ends]
    high_ends = [high * 100 for _, high in ends]
    for axes, (title, series) in zip(grid[0], panels.items()):
        for i, values in enumerate(series.values()):
            offset = ((len(names) - 1) / 2 - i) * spread
            colour = COLOURS[i % len(COLOURS)]
            for row_y, (value, low, high) in zip(y + offset, values):
                if low is not None and high is not None:
                    axes.plot([low * 100, high * 100], [row_y, row_y], color=colour,
                              linewidth=2, solid_capstyle="butt")
                if value is not None:
                    axes.plot([value * 100], [row_y], color=colour, markersize=6,
                              marker=_FOREST_MARKERS[i % len(_FOREST_MARKERS)],
                              markeredgecolor="white", markeredgewidth=0.6)
        axes.set_title(title, fontsize=10)
        axes.set_xlabel(x_label, fontsize=9)
        axes.set_xlim(min([0.0, *low_ends]) - 2, max([100.0, *high_ends]) + 2)
        axes.set_ylim(-0.5, len(rows) - 0.5)
        axes.spines[["top", "right"]].set_visible(False)
        axes.grid(axis="x", color="#e4e7eb", linewidth=0.8)
        axes.set_axisbelow(True)
        for between in y[:-1] - 0.5:
            axes.axhline(between, color="#d5d9de", linewidth=0.6)
    grid[0][0].set_yticks(y, rows)
    for axes in grid[0]:
        axes.tick_params(axis="y", length=0)
    ranged = [any(high is not None for series in panels.values()
                  for _, _, high in list(series.values())[i]) for i in range(len(names))]
    figure.legend([Line2D([], [], color=COLOURS[i % len(COLOURS)], linewidth=2,
                          linestyle="-" if ranged[i] else "none", markersize=6,
                          marker=_FOREST_MARKERS[i % len(_FOREST_MARKERS)],
                          markeredgecolor="white") for i in range(len(names))],
                  names, loc="outside lower center", ncols=max(len(names), 1), frameon=False,
                  fontsize=8)
    return _png(figure)


def grouped_bars(groups: Sequence[str], series: Mapping[str, Sequence[float | None]],
                 y_label: str) -> bytes:
    """Bars of shares (0..1) for each group, one bar per series (error prevalence by model)."""
    figure, axes = _figure(max(6.0, 0.25 * len(groups) * max(len(series), 1) + 2), 4.2)
    x = np.arange(len(groups))
    width = 0.8 / max(len(series), 1)
    for i, (name, values) in enumerate(series.items()):
        y = np.array([np.nan if v is None else v for v in values], dtype=float) * 100
        axes.bar(x + (i - (len(series) - 1) / 2) * width, y, width, label=name,
                 color=COLOURS[i % len(COLOURS)])
    axes.set_xticks(x, groups)
    axes.set_ylabel(y_label)
    axes.set_ylim(0, 100)
    axes.legend(frameon=False, fontsize=8)
    return _png(figure)


def doubling_scatter(x: np.ndarray, y: np.ndarray, intercept: float | None, slope: float,
                     x_label: str, y_label: str) -> bytes:
    """Dots of shares ``y`` (drawn as points of 100) against positive ``x`` on a doubling scale,
    with the straight line ``intercept + slope * log2(x)`` (a judge's length bias)."""
    figure, axes = _figure(6.4, 3.8)
    rng = np.random.default_rng(0)  # jitter only: differences take few values and overprint
    axes.scatter(x, y * 100 + rng.uniform(-0.6, 0.6, len(y)), s=9, alpha=0.4,
                 color=COLOURS[0], linewidths=0)
    axes.set_xscale("log", base=2)
    axes.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    axes.axhline(0, color="#9aa1a9", linewidth=0.8)
    if intercept is not None and len(x):
        ends = np.array([x.min(), x.max()], dtype=float)
        axes.plot(ends, (intercept + slope * np.log2(ends)) * 100, color=COLOURS[1], linewidth=2)
    axes.set_xlabel(x_label)
    axes.set_ylabel(y_label)
    return _png(figure)


def heatmap(rows: Sequence[str], columns: Sequence[str], values: np.ndarray, title: str,
            percent: bool = True) -> bytes:
    """A rows × columns grid of numbers, each cell printed (mean scores by model and topic)."""
    figure, axes = plt.subplots(figsize=(1.1 * len(columns) + 2.8, 0.45 * len(rows) + 1.6),
                                layout="constrained")
    shown = np.where(np.isnan(values), np.nan, values * (100 if percent else 1))
    image = axes.imshow(shown, cmap="Blues", aspect="auto",
                        vmin=0, vmax=100 if percent else np.nanmax(shown) if np.isfinite(
                            shown).any() else 1)
    axes.set_xticks(range(len(columns)), columns, rotation=30, ha="right")
    axes.set_yticks(range(len(rows)), rows)
    axes.set_title(title, fontsize=10)
    limit = np.nanmax(shown) if np.isfinite(shown).any() else 0
    for (r, c), value in np.ndenumerate(shown):
        if np.isfinite(value):
            axes.text(c, r, f"{value:.0f}" if percent else f"{value:g}", ha="center",
                      va="center", fontsize=8,
                      color="white" if value > 0.6 * (100 if percent else limit) else "#1f2328")
    figure.colorbar(image, ax=axes, shrink=0.8, label="%" if percent else None)
    return _png(figure)


def confusion_grid(panels: Mapping[str, tuple[Sequence[int], np.ndarray]], row_label: str,
                   column_label: str) -> bytes:
    """Small confusion matrices side by side, one per criterion: counts, rows = reference."""
    figure, panel_axes = _grid(len(panels), 4, 2.6, 2.5)
    for axes, (name, (categories, matrix)) in zip(panel_axes, panels.items()):
        axes.imshow(matrix, cmap="Blues", vmin=0, vmax=max(int(matrix.max()), 1))
        labels = [str(c) for c in categories]
        axes.set_xticks(range(len(labels)), labels)
        axes.set_yticks(range(len(labels)), labels)
        axes.set_title(name, fontsize=10)
        axes.set_xlabel(column_label, fontsize=8)
        axes.set_ylabel(row_label, fontsize=8)
        high = matrix.max()
        for (r, c), value in np.ndenumerate(matrix):
            axes.text(c, r, str(value), ha="center", va="center", fontsize=9,
                      color="white" if value > 0.6 * high else "#1f2328")
    return _png(figure)


def difference_plots(panels: dict[str, tuple[np.ndarray, np.ndarray]], label: str) -> bytes:
    """Bland–Altman plots: for each pair of raters, the mean of their two totals against the
    difference (judge − reference), with the mean difference and its 95% limits of agreement."""
    figure, panel_axes = _grid(len(panels), 3, 3.8, 3.3)
    rng = np.random.default_rng(0)  # jitter only: totals take few values and would overprint
    for axes, (name, (reference, other)) in zip(panel_axes, panels.items()):
        mean = (reference + other) / 2 * 100
        difference = (other - reference) * 100
        axes.scatter(mean + rng.uniform(-0.6, 0.6, len(mean)),
                     difference + rng.uniform(-0.6, 0.6, len(mean)), s=8, alpha=0.35,
                     color=COLOURS[0], linewidths=0)
        if len(difference) >= 2:
            centre, spread = difference.mean(), 1.96 * difference.std(ddof=1)
            for y, style in ((centre, "-"), (centre - spread, "--"), (centre + spread, "--")):
                axes.axhline(y, color=COLOURS[1], linestyle=style, linewidth=1)
        axes.axhline(0, color="#9aa1a9", linewidth=0.8)
        axes.set_title(name, fontsize=9)
        axes.set_xlabel(f"mean of the two {label}", fontsize=8)
        axes.set_ylabel("judge − reference (points of %)", fontsize=8)
        axes.spines[["top", "right"]].set_visible(False)
    return _png(figure)
