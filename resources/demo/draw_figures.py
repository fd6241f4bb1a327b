"""Draw the demo's figures (resources/demo/figures/*.png) from the numbers of their questions.

The PNGs are committed and imported with the demo; the app never draws them. Run this only
after changing a figure or the numbers of the question it belongs to, and commit the result:

    .venv/bin/python resources/demo/draw_figures.py

Each figure is drawn at about twice the size it is shown at (sharp on high-DPI screens), with
matplotlib's own fonts and no time stamp, then reduced to a palette of a few colours, so that a
run with the same matplotlib and Pillow writes the same bytes and each file stays small.
"""

from __future__ import annotations

import io
import math
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
from matplotlib import patches  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from PIL import Image  # noqa: E402

FIGURES = Path(__file__).resolve().parent / "figures"
#: Pixels per inch of the drawing: about twice the column a figure is shown in.
DPI = 180
#: Colours kept when the drawing is reduced to a palette (anti-aliased edges included).
PALETTE_COLOURS = 48
INK, GREY, PALE = "#1f2328", "#6b7280", "#e5e7eb"
BLUE, RED, ORANGE, TEAL, COPPER = "#2d6cb5", "#c4485b", "#d9822b", "#1b8a7a", "#b8733a"
STYLE = {"font.family": "DejaVu Sans", "mathtext.fontset": "dejavusans", "font.size": 11,
         "lines.solid_capstyle": "round", "path.simplify": False}


def canvas(width: float, height: float, inches_per_unit: float = 0.5) -> tuple[Figure, Axes]:
    """A blank drawing ``width`` x ``height`` units, with equal scales and no axes."""
    figure = Figure(figsize=(width * inches_per_unit, height * inches_per_unit), dpi=DPI,
                    facecolor="white")
    axes = figure.add_axes((0, 0, 1, 1))
    axes.set_xlim(0, width)
    axes.set_ylim(0, height)
    axes.set_aspect("equal")
    axes.axis("off")
    return figure, axes


def arrow(axes: Axes, start: tuple[float, float], end: tuple[float, float], colour: str = INK,
          both: bool = False, width: float = 1.6) -> None:
    axes.annotate("", xy=end, xytext=start, arrowprops={
        "arrowstyle": "<|-|>" if both else "-|>", "color": colour, "lw": width,
        "mutation_scale": 14, "shrinkA": 0, "shrinkB": 0})


def zigzag(start: tuple[float, float], end: tuple[float, float], teeth: int = 6,
           amplitude: float = 0.22, lead: float = 0.0) -> tuple[list[float], list[float]]:
    """The points of a resistor's or a spring's zigzag from ``start`` to ``end``, with straight
    leads of length ``lead`` at both ends."""
    (x0, y0), (x1, y1) = start, end
    length = math.hypot(x1 - x0, y1 - y0)
    ux, uy = (x1 - x0) / length, (y1 - y0) / length
    nx, ny = -uy, ux
    points = [(0.0, 0.0), (lead, 0.0)]
    step = (length - 2 * lead) / (2 * teeth)
    for i in range(1, 2 * teeth):
        points.append((lead + i * step, amplitude if i % 2 else -amplitude))
    points += [(length - lead, 0.0), (length, 0.0)]
    return ([x0 + s * ux + t * nx for s, t in points], [y0 + s * uy + t * ny for s, t in points])


def write(figure: Figure, name: str) -> Path:
    """Save ``figure`` as a small palette PNG under :data:`FIGURES`, the same bytes every run."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    with Image.open(buffer) as drawn:
        reduced = drawn.convert("RGB").quantize(PALETTE_COLOURS, method=Image.Quantize.MEDIANCUT,
                                                dither=Image.Dither.NONE)
    FIGURES.mkdir(exist_ok=True)
    path = FIGURES / name
    reduced.save(path, format="PNG", optimize=True)
    return path


# -- q-0007: a crate on a ramp slides into a spring ----------------------------------------------

def ramp_and_spring() -> Figure:
    figure, axes = canvas(12, 6)
    floor, top, foot, wall = 0.9, 4.9, 7.6, 11.4
    axes.add_patch(patches.Rectangle((0.2, 0.35), wall - 0.2, floor - 0.35, color=PALE, lw=0))
    axes.plot([0.2, wall], [floor, floor], color=INK, lw=2)
    axes.text(8.0, 0.6, "frictionless floor", color=GREY, fontsize=9.5, ha="center",
              va="center", style="italic")
    axes.add_patch(patches.Rectangle((wall, 0.35), 0.35, 2.4, color=GREY, lw=0))
    # The ramp, and the crate resting near its top.
    axes.add_patch(patches.Polygon([(2.4, floor), (2.4, top), (foot, floor)], closed=True,
                                   facecolor="#d4d8de", edgecolor=INK, lw=2))
    angle = math.atan2(top - floor, foot - 2.4)
    along, normal = (math.cos(angle), -math.sin(angle)), (math.sin(angle), math.cos(angle))
    side, start = 0.8, 0.35
    corner = (2.4 + start * along[0], top + start * along[1])
    axes.add_patch(patches.Rectangle(corner, side, side, angle=-math.degrees(angle),
                                     facecolor=ORANGE, edgecolor=INK, lw=1.6))
    axes.text(3.55, 5.55, r"$m = 2.0$ kg, released from rest", ha="left", va="center")
    middle = (2.4 + (foot - 2.4) * 0.55, top + (floor - top) * 0.55)
    axes.text(middle[0] - 0.55 * normal[0], middle[1] - 0.55 * normal[1], "frictionless",
              color=GREY, fontsize=9.5, style="italic", ha="center", va="center",
              rotation=-math.degrees(angle), rotation_mode="anchor")
    # The height of the ramp's top above the floor.
    arrow(axes, (1.9, floor), (1.9, top), both=True)
    axes.plot([1.7, 2.4], [top, top], color=GREY, lw=1, ls=(0, (3, 2)))
    axes.text(1.7, (floor + top) / 2, r"$h = 3.2$ m", ha="right", va="center")
    # The spring, fixed to the wall, with a light plate where the crate meets it.
    level = floor + 0.45
    xs, ys = zigzag((wall, level), (9.2, level), teeth=7, amplitude=0.22, lead=0.25)
    axes.plot(xs, ys, color=INK, lw=1.8)
    axes.plot([9.2, 9.2], [level - 0.35, level + 0.35], color=INK, lw=2.6)
    axes.text(10.3, level + 0.75, r"$k = 800$ N/m", ha="center", va="bottom")
    return figure


# -- q-0012: a battery with internal resistance across two resistors in parallel ----------------

def battery_and_parallel_resistors() -> Figure:
    figure, axes = canvas(12.5, 6.2)
    top, bottom, cell_x, branch_1, branch_2 = 5.0, 1.0, 1.25, 6.8, 10.0
    wire = {"color": INK, "lw": 1.8}
    # The battery: an ideal cell and its internal resistance, in the dashed box.
    axes.add_patch(patches.Rectangle((0.4, 0.45), 3.4, 5.1, fill=False, edgecolor=GREY, lw=1.3,
                                     ls=(0, (5, 3))))
    axes.text(2.1, 5.72, "battery", color=GREY, ha="center", va="bottom", style="italic")
    axes.plot([cell_x, cell_x], [top, 3.95], **wire)
    axes.plot([cell_x - 0.5, cell_x + 0.5], [3.95, 3.95], color=INK, lw=2)  # + plate
    axes.plot([cell_x - 0.25, cell_x + 0.25], [3.65, 3.65], color=INK, lw=4.5)  # - plate
    axes.text(cell_x - 0.7, 4.2, "+", ha="center", va="center", fontsize=12)
    axes.plot([cell_x, cell_x], [3.65, 2.95], **wire)
    xs, ys = zigzag((cell_x, 2.95), (cell_x, 1.6), teeth=4, amplitude=0.2)
    axes.plot(xs, ys, **wire)
    axes.plot([cell_x, cell_x], [1.6, bottom], **wire)
    axes.text(1.95, 3.8, r"$\varepsilon = 12.0$ V", ha="left", va="center")
    axes.text(1.95, 2.28, r"$r = 0.50\ \Omega$", ha="left", va="center")
    # The rails, the battery's terminals A and B, and the two branches.
    axes.plot([cell_x, branch_2, branch_2], [top, top, 4.05], **wire)
    axes.plot([cell_x, branch_2, branch_2], [bottom, bottom, 1.95], **wire)
    for x, label in ((branch_1, r"$R_1 = 4.0\ \Omega$"), (branch_2, r"$R_2 = 6.0\ \Omega$")):
        axes.plot([x, x], [top, 4.05], **wire)
        xs, ys = zigzag((x, 4.05), (x, 1.95), teeth=5, amplitude=0.24)
        axes.plot(xs, ys, **wire)
        axes.plot([x, x], [1.95, bottom], **wire)
        axes.text(x + 0.42, 3.0, label, ha="left", va="center")
    for y in (top, bottom):
        axes.add_patch(patches.Circle((branch_1, y), 0.09, color=INK))
    for y, label, offset in ((top, "A", 0.32), (bottom, "B", -0.32)):
        axes.add_patch(patches.Circle((4.4, y), 0.13, facecolor="white", edgecolor=INK, lw=1.6,
                                      zorder=3))
        axes.text(4.4, y + offset, label, ha="center", va="center", fontweight="bold")
    return figure


# -- q-0013: a rod held up by the magnetic force on its current -----------------------------------

def rod_in_a_field() -> Figure:
    figure, axes = canvas(12, 6.6)
    left, right, level = 2.5, 9.5, 3.0
    # Where the field's marks would cover a label, the rod or an arrow (x0, y0, x1, y1).
    covered = [(4.4, 4.4, 6.6, 5.0), (2.8, 1.75, 4.5, 2.65), (5.85, 1.15, 6.9, 2.8),
               (6.9, 2.0, 9.6, 2.7)]

    def into_page(x: float, y: float, size: float = 0.17) -> None:
        axes.add_patch(patches.Circle((x, y), size, fill=False, edgecolor=BLUE, lw=1.2))
        d = size * 0.7
        axes.plot([x - d, x + d], [y - d, y + d], color=BLUE, lw=1.2)
        axes.plot([x - d, x + d], [y + d, y - d], color=BLUE, lw=1.2)

    for x in (0.6 + 0.9 * i for i in range(13)):
        for y in (0.55, 1.45, 2.35, 3.65, 5.0):  # clear of the rod and its length
            if not any(x0 - 0.2 < x < x1 + 0.2 and y0 - 0.2 < y < y1 + 0.2
                       for x0, y0, x1, y1 in covered):
                into_page(x, y)
    into_page(0.6, 6.1)
    axes.text(0.95, 6.1, r"uniform magnetic field $B = 0.25$ T, into the page", ha="left",
              va="center", color=BLUE)
    # The rod, its length, the current's direction and the weight.
    axes.add_patch(patches.FancyBboxPatch((left, level - 0.16), right - left, 0.32,
                                          boxstyle="round,pad=0,rounding_size=0.12",
                                          facecolor=COPPER, edgecolor=INK, lw=1.4))
    axes.text(right, level - 0.55, r"copper rod, $m = 20$ g", ha="right", va="center")
    for x in (left, right):
        axes.plot([x, x], [4.0, 4.5], color=GREY, lw=1)
    arrow(axes, (left, 4.25), (right, 4.25), both=True, width=1.3)
    axes.text((left + right) / 2, 4.42, r"$L = 0.40$ m", ha="center", va="bottom")
    arrow(axes, (2.9, 2.45), (4.4, 2.45), colour=RED, width=2)
    axes.text(3.65, 2.0, r"$I$", color=RED, ha="center", va="center", fontsize=13)
    arrow(axes, (6.0, level - 0.16), (6.0, 1.25), width=2)
    axes.text(6.25, 1.55, r"$m\,g$", ha="left", va="center", fontsize=12)
    return figure


# -- q-0027: an object in front of a converging lens, and its ray diagram -------------------------

def lens(axes: Axes, x: float, axis: float, half_height: float) -> None:
    axes.add_patch(patches.Ellipse((x, axis), 0.42, 2 * half_height, facecolor="#cfe3f5",
                                   edgecolor=BLUE, lw=1.6))


def focal_point(axes: Axes, x: float, axis: float, label: str) -> None:
    axes.add_patch(patches.Circle((x, axis), 0.08, color=INK, zorder=3))
    axes.text(x, axis - 0.32, label, ha="center", va="top", fontsize=12)


def dimension(axes: Axes, x0: float, x1: float, y: float, label: str) -> None:
    arrow(axes, (x0, y), (x1, y), both=True, width=1.2)
    axes.text((x0 + x1) / 2, y + 0.14, label, ha="center", va="bottom")


def tick(axes: Axes, x: float, y0: float, y1: float) -> None:
    """A dashed line from a point of the drawing to a dimension line."""
    axes.plot([x, x], [y0, y1], color=GREY, lw=1, ls=(0, (3, 2)))


def object_before_a_lens() -> Figure:
    """The question's figure: 3 cm to a unit across, heights drawn larger (as labelled)."""
    figure, axes = canvas(12.5, 5.6)
    axis, lens_x, cm = 3.0, 7.5, 1 / 3
    object_x = lens_x - 18.0 * cm
    axes.plot([0.3, 12.2], [axis, axis], color=GREY, lw=1.2, ls=(0, (8, 3, 2, 3)))
    lens(axes, lens_x, axis, 1.7)
    axes.text(lens_x, axis + 1.85, "thin converging lens", ha="center", va="bottom")
    for side in (-1, 1):
        focal_point(axes, lens_x + side * 12.0 * cm, axis, "F")
    arrow(axes, (object_x, axis), (object_x, axis + 1.5), colour=ORANGE, width=2.6)
    axes.text(object_x + 0.2, axis + 0.75, "1.50 cm", ha="left", va="center")
    axes.text(object_x, axis + 1.75, "object", ha="center", va="bottom", color=ORANGE)
    tick(axes, object_x, axis - 0.1, 0.85)
    dimension(axes, object_x, lens_x, 0.85, "18.0 cm")
    dimension(axes, lens_x, lens_x + 12.0 * cm, 0.85, r"$f = 12.0$ cm")
    axes.text(12.2, 5.35, "heights not to scale", color=GREY, fontsize=9, ha="right",
              va="top", style="italic")
    return figure


def ray_diagram() -> Figure:
    """The reference solution's figure: the three principal rays find the image at 36.0 cm,
    real, inverted and twice as tall (4 cm to a unit across, 0.8 units to a cm up)."""
    figure, axes = canvas(17.2, 7.1, inches_per_unit=0.37)
    axis, lens_x, cm, up = 3.3, 7.6, 1 / 4, 0.8
    object_x, image_x, focus = lens_x - 18.0 * cm, lens_x + 36.0 * cm, 12.0 * cm
    tip, image_tip = (object_x, axis + 1.5 * up), (image_x, axis - 3.0 * up)
    axes.plot([0.2, 17.0], [axis, axis], color=GREY, lw=1.2, ls=(0, (8, 3, 2, 3)))
    lens(axes, lens_x, axis, 2.55)
    for side, label in ((-1, "F"), (1, "F′")):
        focal_point(axes, lens_x + side * focus, axis, label)
    rays = (  # through the lens along each principal ray, then on to the image's tip
        (RED, [tip, (lens_x, tip[1]), image_tip]),
        (TEAL, [tip, image_tip]),
        (BLUE, [tip, (lens_x, image_tip[1]), image_tip]))
    for colour, points in rays:
        xs, ys = zip(*points)
        axes.plot(xs, ys, color=colour, lw=1.7)
    arrow(axes, (object_x, axis), tip, colour=ORANGE, width=2.6)
    arrow(axes, (image_x, axis), image_tip, colour=ORANGE, width=2.6)
    axes.text(object_x - 0.2, axis + 0.75 * up, "object:\n" + r"$h_o = 1.50$ cm", ha="right",
              va="center", linespacing=1.3)
    axes.text(image_x - 0.3, axis + 1.2, "image: " + r"$h_i = -3.00$ cm" + "\ninverted, real",
              ha="right", va="center", linespacing=1.3)
    tick(axes, object_x, tip[1] + 0.15, 6.2)
    tick(axes, image_x, axis + 0.15, 6.2)
    dimension(axes, object_x, lens_x, 6.2, r"$d_o = 18.0$ cm")
    dimension(axes, lens_x, image_x, 6.2, r"$d_i = 36.0$ cm")
    return figure


#: Each figure's file name and how it is drawn, in the order of the questions.
DRAWINGS: dict[str, Callable[[], Figure]] = {
    "q-0007-ramp.png": ramp_and_spring,
    "q-0012-circuit.png": battery_and_parallel_resistors,
    "q-0013-rod.png": rod_in_a_field,
    "q-0027-lens.png": object_before_a_lens,
    "q-0027-rays.png": ray_diagram,
}


def main(names: Iterable[str] = ()) -> None:
    """Draw the named figures, or all of them."""
    chosen = list(names) or list(DRAWINGS)
    with matplotlib.rc_context(STYLE):
        for name in chosen:
            path = write(DRAWINGS[name](), name)
            print(f"{path}: {path.stat().st_size:,} bytes")


if __name__ == "__main__":
    main(sys.argv[1:])
