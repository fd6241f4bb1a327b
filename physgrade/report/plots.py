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
from matplotlib.image import AxesImage  # noqa: E402
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
    image = _cells(axes, rows, columns, values, title, percent)
    figure.colorbar(image, ax=axes, shrink=0.8, label="%" if percent else None)
    return _png(figure)


def heatmap_grid(panels: Mapping[str, tuple[Sequence[str], Sequence[str], np.ndarray]],
                 per_row: int) -> bytes:
    """Heatmaps of shares side by side, ``per_row`` to a row, one colour scale (0..100%) for
    all: a panel per title, each its rows × columns grid (seed 001's four-panel heatmaps, one
    row of panels per question kind)."""
    widest = max((len(columns) for _, columns, _ in panels.values()), default=1)
    tallest = max((len(rows) for rows, _, _ in panels.values()), default=1)
    figure, panel_axes = _grid(len(panels), per_row, 0.75 * widest + 2.2, 0.34 * tallest + 1.7)
    image = None
    for axes, (title, (rows, columns, values)) in zip(panel_axes, panels.items()):
        image = _cells(axes, rows, columns, values, title, True)
    if image is not None:
        figure.colorbar(image, ax=panel_axes, shrink=0.6, label="%")
    return _png(figure)


def _cells(axes: plt.Axes, rows: Sequence[str], columns: Sequence[str], values: np.ndarray,
           title: str, percent: bool) -> AxesImage:
    """One heatmap drawn on ``axes``, each cell printed; its image (for a colour bar)."""
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
    return image


def stacked_bars(panels: Mapping[str, tuple[Sequence[str], Mapping[str, Sequence[float | None]]]],
                 y_label: str) -> bytes:
    """Stacked bars of shares (0..1), a panel per title: a bar per group, one layer per series
    in order from the bottom (seed 001's Fig 3: each stage's part of a model's mean score)."""
    groups = max((len(names) for names, _ in panels.values()), default=1)
    figure, panel_axes = _grid(len(panels), 2, max(4.5, 0.55 * groups + 1.5), 5.0)
    for axes, (title, (names, series)) in zip(panel_axes, panels.items()):
        x = np.arange(len(names))
        bottom = np.zeros(len(names))
        for i, (label, values) in enumerate(series.items()):
            height = np.array([0.0 if v is None else v for v in values], dtype=float) * 100
            axes.bar(x, height, 0.7, bottom=bottom, label=label, color=COLOURS[i % len(COLOURS)])
            bottom += height
        axes.set_xticks(x, names, rotation=30, ha="right")
        axes.set_ylim(0, 100)
        axes.set_ylabel(y_label)
        axes.set_title(title, fontsize=10)
        axes.spines[["top", "right"]].set_visible(False)
        axes.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(0, -0.3))
    return _png(figure)


def scatter(panels: Mapping[str, tuple[Sequence[str], np.ndarray, np.ndarray]], x_label: str,
            y_label: str) -> bytes:
    """A dot per named point, a panel per title, with the least-squares line through them
    (shares ``x`` drawn as %, ``y`` as they are; seed 001's Fig 13: compliance against score)."""
    figure, panel_axes = _grid(len(panels), 2, 5.0, 4.0)
    for axes, (title, (names, x, y)) in zip(panel_axes, panels.items()):
        shown = ~(np.isnan(x) | np.isnan(y))
        axes.scatter(x[shown] * 100, y[shown], s=28, color=COLOURS[0], zorder=3)
        for name, at_x, at_y in zip(np.asarray(names)[shown], x[shown] * 100, y[shown]):
            axes.annotate(str(name), (at_x, at_y), textcoords="offset points", xytext=(4, 3),
                          fontsize=7)
        if shown.sum() >= 2 and np.ptp(x[shown]) > 0:
            slope, intercept = np.polyfit(x[shown] * 100, y[shown], 1)
            ends = np.array([x[shown].min(), x[shown].max()]) * 100
            axes.plot(ends, intercept + slope * ends, color=COLOURS[1], linewidth=1.4)
        axes.set_xlabel(x_label, fontsize=9)
        axes.set_ylabel(y_label, fontsize=9)
        axes.set_title(title, fontsize=10)
        axes.spines[["top", "right"]].set_visible(False)
    return _png(figure)


#: A distribution as five numbers: minimum, lower quartile, median, upper quartile, maximum.
Spread = tuple[float, float, float, float, float]


def ranges(rows: Sequence[str], series: Mapping[str, Sequence[Spread | None]], x_label: str) -> bytes:
    """Distributions side by side, a row per ``rows`` (top down) and one mark per series in
    each: a thin line from minimum to maximum, a thick one between the quartiles and a dot at
    the median (seed 001's Fig 10: response lengths per model and dataset split)."""
    figure, axes = _figure(7.5, len(rows) * (0.2 * len(series) + 0.3) + 1.4)
    axes.grid(axis="y", visible=False)
    axes.grid(axis="x", color="#e4e7eb", linewidth=0.8)
    y = np.arange(len(rows))[::-1].astype(float)
    spread = 0.6 / max(len(series), 1)
    for i, (name, values) in enumerate(series.items()):
        colour = COLOURS[i % len(COLOURS)]
        offset = ((len(series) - 1) / 2 - i) * spread
        drawn = [(at, found) for at, found in zip(y + offset, values) if found is not None]
        for k, (at, (low, q25, median, q75, high)) in enumerate(drawn):
            axes.plot([low, high], [at, at], color=colour, linewidth=1)
            axes.plot([q25, q75], [at, at], color=colour, linewidth=4, solid_capstyle="butt")
            axes.plot([median], [at], marker="o", color=colour, markeredgecolor="white",
                      markersize=6, linestyle="none", label=name if k == 0 else None)
    axes.set_yticks(y, rows)
    axes.set_ylim(-0.5, len(rows) - 0.5)
    axes.set_xlabel(x_label)
    if len(series) > 1:
        axes.legend(frameon=False, fontsize=8, loc="lower right")
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
