"""Calibrate the figure stage of the duplicate audit on a labelled set of drawn diagrams.

The set is built here, deterministically (Pillow, seeded): physics-like diagrams of ten kinds
(an incline, a pulley, a circuit, a projectile, a spring, a pendulum, a lens, charges, a v-t
graph, a free-body diagram), several of each kind with other parameters (an incline at another
angle is another problem's figure: the hard negatives). Of each diagram, copies that a figure
takes on its way from one problem set to another:

- ``png``: saved again (other bytes, the same pixels), ``rgba``: on a transparent background;
- ``jpeg85``, ``jpeg50``, ``webp75``: re-encoded;
- ``half``, ``x0.75``, ``x1.5``: rescaled;
- ``crop3``: 3% cut off every side, ``crop6``: 6% off the left and the top;
- ``shift``: the drawing moved by 2% of the width and height on the same canvas;
- ``mixed``: 4% cut off every side, rescaled to 60%, saved as JPEG at quality 70.

Every image is hashed with :func:`physgrade.dedup.figures.perceptual_hash`. Same pairs are a
diagram and each of its copies; distinct pairs are every two images of different diagrams
(originals and copies), split into the same kind and other kinds. For each Hamming distance
0..80 (of the hash's 256 bits) the script prints the recall of each copy kind and how many
distinct pairs are at or below it. The diagrams are split in halves (a seeded shuffle); the
threshold chosen is the smallest distance with the best recall among those that flag no
distinct pair of the calibration half (the widest margin to the distinct pairs); its figures on
the held-out half follow.

    python benchmarks/calibrate_figures.py [--per-kind 8] [--seed 7] [--save FOLDER]

With the defaults it draws and hashes 1,040 images, about half a minute on a 2-core machine.
"""

from __future__ import annotations

import argparse
import io
import math
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
from PIL import Image, ImageDraw, ImageFont

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from physgrade.dedup import figures  # noqa: E402

Draw = ImageDraw.ImageDraw
GRID = range(0, 81, 2)  # hash distances are even: each hash has as many bits set as clear
COPIES = ("png", "rgba", "jpeg85", "jpeg50", "webp75", "half", "x0.75", "x1.5", "crop3",
          "crop6", "shift", "mixed")
INK, PALE, ACCENT = (20, 20, 20), (150, 150, 150), (200, 40, 40)


def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


# -- the diagrams ---------------------------------------------------------------------------

def arrow(d: Draw, start: tuple[float, float], end: tuple[float, float], width: int = 3,
          fill: tuple[int, int, int] = INK) -> None:
    d.line([start, end], fill=fill, width=width)
    angle = math.atan2(end[1] - start[1], end[0] - start[0])
    head = [end] + [(end[0] - 14 * math.cos(angle + s), end[1] - 14 * math.sin(angle + s))
                    for s in (0.4, -0.4)]
    d.polygon(head, fill=fill)


def zigzag(d: Draw, start: tuple[float, float], end: tuple[float, float], turns: int,
           amplitude: float) -> None:
    (x0, y0), (x1, y1) = start, end
    length = math.hypot(x1 - x0, y1 - y0)
    ux, uy = (x1 - x0) / length, (y1 - y0) / length
    points = [start]
    for k in range(1, 2 * turns):
        t = k / (2 * turns)
        side = amplitude * (1 if k % 2 else -1)
        points.append((x0 + ux * length * t - uy * side, y0 + uy * length * t + ux * side))
    points.append(end)
    d.line(points, fill=INK, width=3)


def incline(d: Draw, w: int, h: int, r: random.Random) -> None:
    angle = math.radians(r.uniform(15, 50))
    base = w * 0.8
    x0, y0 = w * 0.1, h * 0.85
    top = (x0, y0 - min(base * math.tan(angle), h * 0.7))
    d.polygon([(x0, y0), (x0 + base, y0), top], outline=INK, width=3)
    slope = math.atan2(y0 - top[1], base)
    t = r.uniform(0.3, 0.6)
    cx, cy = top[0] + base * t, top[1] + (y0 - top[1]) * t
    s = r.uniform(30, 55)
    corners = [(0, 0), (s, 0), (s, -s), (0, -s)]
    c, si = math.cos(slope), math.sin(slope)
    d.polygon([(cx + x * c - y * si, cy + x * si + y * c) for x, y in corners], outline=INK,
              fill=(220, 220, 240), width=3)
    d.arc([x0 + base - 80, y0 - 80, x0 + base + 80, y0 + 80], 180, 180 + math.degrees(slope),
          fill=INK, width=2)
    d.text((x0 + base - 120, y0 - 40), f"{math.degrees(slope):.0f}°", fill=INK, font=font(22))
    arrow(d, (cx + s / 2, cy - s / 2), (cx + s / 2, cy - s / 2 + r.uniform(70, 110)), fill=ACCENT)
    d.text((cx + s / 2 + 8, cy + 40), "mg", fill=ACCENT, font=font(20))


def pulley(d: Draw, w: int, h: int, r: random.Random) -> None:
    cx, cy, rad = w * r.uniform(0.35, 0.65), h * 0.2, r.uniform(30, 50)
    d.line([(cx, cy), (cx, h * 0.05)], fill=INK, width=4)
    d.line([(cx - 80, h * 0.05), (cx + 80, h * 0.05)], fill=INK, width=6)
    d.ellipse([cx - rad, cy - rad, cx + rad, cy + rad], outline=INK, width=3)
    for side, depth, size, name in ((-1, r.uniform(0.45, 0.7), r.uniform(40, 70), "m1"),
                                    (1, r.uniform(0.45, 0.7), r.uniform(40, 70), "m2")):
        x = cx + side * rad
        d.line([(x, cy), (x, h * depth)], fill=INK, width=2)
        d.rectangle([x - size / 2, h * depth, x + size / 2, h * depth + size], outline=INK,
                    fill=(230, 230, 230), width=3)
        d.text((x - 12, h * depth + size / 2 - 10), name, fill=INK, font=font(20))


def circuit(d: Draw, w: int, h: int, r: random.Random) -> None:
    x0, y0, x1, y1 = w * 0.12, h * 0.15, w * r.uniform(0.75, 0.9), h * r.uniform(0.7, 0.88)
    d.rectangle([x0, y0, x1, y1], outline=INK, width=3)
    sides = {"top": ((x0, y0), (x1, y0)), "right": ((x1, y0), (x1, y1)),
             "bottom": ((x0, y1), (x1, y1))}
    for _ in range(r.randint(1, 4)):
        (ax, ay), (bx, by) = sides[r.choice(list(sides))]
        t = r.uniform(0.25, 0.75)
        x, y = ax + (bx - ax) * t, ay + (by - ay) * t
        across = ax == bx  # a vertical side
        d.rectangle([x - 18, y - 40, x + 18, y + 40] if across else
                    [x - 40, y - 18, x + 40, y + 18], fill="white")
        if r.random() < 0.7:
            zigzag(d, (x, y - 40) if across else (x - 40, y), (x, y + 40) if across
                   else (x + 40, y), 4, 12)
        else:  # a capacitor
            for side in (-8, 8):
                d.line([(x - 25, y + side), (x + 25, y + side)] if across else
                       [(x + side, y - 25), (x + side, y + 25)], fill=INK, width=4)
            d.line([(x, y - 40), (x, y - 8)] if across else [(x - 40, y), (x - 8, y)], fill=INK,
                   width=3)
            d.line([(x, y + 8), (x, y + 40)] if across else [(x + 8, y), (x + 40, y)], fill=INK,
                   width=3)
        d.text((x + 25, y - 10) if across else (x - 15, y - 50), f"{r.randint(1, 99)} Ω",
               fill=INK, font=font(18))
    ym = y0 + (y1 - y0) * r.uniform(0.3, 0.7)
    d.rectangle([x0 - 15, ym - 20, x0 + 15, ym + 20], fill="white")
    d.line([(x0 - 25, ym - 8), (x0 + 25, ym - 8)], fill=INK, width=3)
    d.line([(x0 - 12, ym + 8), (x0 + 12, ym + 8)], fill=INK, width=5)
    d.text((x0 + 30, ym - 10), f"{r.randint(2, 24)} V", fill=INK, font=font(18))


def projectile(d: Draw, w: int, h: int, r: random.Random) -> None:
    ox, oy = w * 0.1, h * 0.85
    arrow(d, (ox, oy), (w * 0.95, oy), 2)
    arrow(d, (ox, oy), (ox, h * 0.08), 2)
    angle = math.radians(r.uniform(25, 70))
    speed = r.uniform(0.8, 1.0)
    points = []
    for k in range(60):
        t = k / 59 * 2 * math.sin(angle)
        x, y = speed * math.cos(angle) * t, speed * math.sin(angle) * t - t * t / 2
        points.append((ox + x * w * 0.8, oy - y * h * 1.4))
    d.line(points, fill=ACCENT, width=3)
    arrow(d, (ox, oy), (ox + 90 * math.cos(angle), oy - 90 * math.sin(angle)), 3)
    d.text((ox + 50, oy - 30), "θ", fill=INK, font=font(22))
    d.text((w * 0.9, oy + 8), "x", fill=INK, font=font(20))


def spring(d: Draw, w: int, h: int, r: random.Random) -> None:
    floor = h * r.uniform(0.6, 0.8)
    d.line([(w * 0.08, floor), (w * 0.92, floor)], fill=INK, width=3)
    d.line([(w * 0.1, floor), (w * 0.1, floor - 150)], fill=INK, width=6)
    for k in range(8):
        d.line([(w * 0.1, floor - 20 * k), (w * 0.1 - 15, floor - 20 * k - 15)], fill=INK, width=2)
    size = r.uniform(60, 100)
    x = w * r.uniform(0.45, 0.7)
    zigzag(d, (w * 0.1, floor - size / 2), (x, floor - size / 2), r.randint(5, 10), 14)
    d.rectangle([x, floor - size, x + size, floor], outline=INK, fill=(220, 235, 220), width=3)
    d.text((x + size / 2 - 8, floor - size / 2 - 12), "m", fill=INK, font=font(24))
    arrow(d, (x + size + 10, floor - size / 2), (x + size + 90, floor - size / 2), fill=ACCENT)


def pendulum(d: Draw, w: int, h: int, r: random.Random) -> None:
    px, py = w * r.uniform(0.4, 0.6), h * 0.1
    d.line([(px - 100, py), (px + 100, py)], fill=INK, width=6)
    length = h * r.uniform(0.5, 0.75)
    angle = math.radians(r.uniform(10, 40)) * r.choice((-1, 1))
    bx, by = px + length * math.sin(angle), py + length * math.cos(angle)
    for k in range(0, int(length), 16):
        d.line([(px, py + k), (px, py + k + 8)], fill=PALE, width=2)
    d.line([(px, py), (bx, by)], fill=INK, width=3)
    rad = r.uniform(15, 30)
    d.ellipse([bx - rad, by - rad, bx + rad, by + rad], fill=(80, 80, 160))
    d.text((px + 10 * (1 if angle > 0 else -3), py + 60), "θ", fill=INK, font=font(22))
    d.text(((px + bx) / 2 + 10, (py + by) / 2), "L", fill=INK, font=font(22))


def lens(d: Draw, w: int, h: int, r: random.Random) -> None:
    axis = h * 0.5
    d.line([(w * 0.05, axis), (w * 0.95, axis)], fill=PALE, width=2)
    lx = w * r.uniform(0.45, 0.55)
    half = h * r.uniform(0.3, 0.4)
    d.ellipse([lx - 15, axis - half, lx + 15, axis + half], outline=(40, 90, 200), width=3)
    focal = w * r.uniform(0.12, 0.25)
    for side in (-1, 1):
        d.ellipse([lx + side * focal - 4, axis - 4, lx + side * focal + 4, axis + 4], fill=INK)
    ox, tall = lx - focal * r.uniform(1.3, 2.5), h * r.uniform(0.15, 0.3)
    arrow(d, (ox, axis), (ox, axis - tall), 3)
    image_x = lx + 1 / (1 / focal - 1 / (lx - ox))
    image_h = tall * (image_x - lx) / (lx - ox)
    d.line([(ox, axis - tall), (lx, axis - tall), (image_x, axis + image_h)], fill=ACCENT, width=2)
    d.line([(ox, axis - tall), (image_x, axis + image_h)], fill=ACCENT, width=2)
    arrow(d, (image_x, axis), (image_x, axis + image_h), 3, fill=(40, 90, 200))


def charges(d: Draw, w: int, h: int, r: random.Random) -> None:
    spots = [(w * r.uniform(0.15, 0.85), h * r.uniform(0.2, 0.8)) for _ in range(r.randint(2, 4))]
    for k, (x, y) in enumerate(spots):
        for n in range(8):
            a = n * math.pi / 4 + k
            arrow(d, (x + 30 * math.cos(a), y + 30 * math.sin(a)),
                  (x + 85 * math.cos(a), y + 85 * math.sin(a)), 2, PALE)
    for k, (x, y) in enumerate(spots):
        sign = "+" if k % 2 == 0 else "−"
        d.ellipse([x - 24, y - 24, x + 24, y + 24], fill=ACCENT if sign == "+" else (40, 90, 200))
        d.text((x - 8, y - 15), sign, fill="white", font=font(28))


def graph(d: Draw, w: int, h: int, r: random.Random) -> None:
    ox, oy = w * 0.1, h * 0.88
    for k in range(1, 8):
        d.line([(ox + k * w * 0.11, oy), (ox + k * w * 0.11, h * 0.1)], fill=(225, 225, 225))
        d.line([(ox, oy - k * h * 0.1), (w * 0.9, oy - k * h * 0.1)], fill=(225, 225, 225))
    arrow(d, (ox, oy), (w * 0.93, oy), 2)
    arrow(d, (ox, oy), (ox, h * 0.06), 2)
    points = [(ox, oy - h * r.uniform(0, 0.6))]
    for k in range(1, r.randint(3, 6) + 1):
        points.append((ox + k * w * 0.8 / 6, oy - h * r.uniform(0.05, 0.75)))
    d.line(points, fill=ACCENT, width=4)
    d.text((ox - 40, h * 0.06), "v", fill=INK, font=font(22))
    d.text((w * 0.9, oy + 10), "t", fill=INK, font=font(22))


def free_body(d: Draw, w: int, h: int, r: random.Random) -> None:
    cx, cy, s = w * 0.5, h * 0.5, r.uniform(50, 80)
    d.rectangle([cx - s / 2, cy - s / 2, cx + s / 2, cy + s / 2], outline=INK,
                fill=(235, 225, 210), width=3)
    for k in range(r.randint(2, 5)):
        a = r.uniform(0, 2 * math.pi)
        length = r.uniform(70, 160)
        arrow(d, (cx, cy), (cx + length * math.cos(a), cy + length * math.sin(a)), 3,
              ACCENT if k == 0 else INK)
        d.text((cx + (length + 15) * math.cos(a) - 10, cy + (length + 15) * math.sin(a) - 10),
               f"F{k + 1}", fill=INK, font=font(20))


KINDS: dict[str, Callable[[Draw, int, int, random.Random], None]] = {
    "incline": incline, "pulley": pulley, "circuit": circuit, "projectile": projectile,
    "spring": spring, "pendulum": pendulum, "lens": lens, "charges": charges, "graph": graph,
    "free_body": free_body}


def diagram(kind: str, seed: int) -> Image.Image:
    """One diagram of ``kind`` on a white canvas of a varied size and margin."""
    r = random.Random(seed)
    w, h = r.choice(((640, 480), (800, 500), (600, 600), (720, 405)))
    margin = r.uniform(0.02, 0.1)
    inner = Image.new("RGB", (round(w * (1 - 2 * margin)), round(h * (1 - 2 * margin))), "white")
    KINDS[kind](ImageDraw.Draw(inner), inner.width, inner.height, r)
    canvas = Image.new("RGB", (w, h), "white")
    canvas.paste(inner, (round(w * margin), round(h * margin)))
    return canvas


# -- the copies -----------------------------------------------------------------------------

def encoded(image: Image.Image, kind: str = "PNG", **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, kind, **options)
    return out.getvalue()


def crop(image: Image.Image, left: float, top: float, right: float, bottom: float) -> Image.Image:
    w, h = image.size
    return image.crop((round(w * left), round(h * top), round(w * (1 - right)),
                       round(h * (1 - bottom))))


def scaled(image: Image.Image, factor: float) -> Image.Image:
    return image.resize((round(image.width * factor), round(image.height * factor)),
                        Image.Resampling.LANCZOS)


def transparent(image: Image.Image) -> Image.Image:
    rgba = image.convert("RGBA")
    grey = np.asarray(image.convert("L"))
    alpha = np.where(grey > 250, 0, 255).astype(np.uint8)
    rgba.putalpha(Image.fromarray(alpha))
    return rgba


def shifted(image: Image.Image) -> Image.Image:
    canvas = Image.new("RGB", image.size, "white")
    canvas.paste(image, (round(image.width * 0.02), round(image.height * 0.02)))
    return canvas


def copies(image: Image.Image) -> dict[str, bytes]:
    return {"png": encoded(image, optimize=True), "rgba": encoded(transparent(image)),
            "jpeg85": encoded(image, "JPEG", quality=85),
            "jpeg50": encoded(image, "JPEG", quality=50),
            "webp75": encoded(image, "WEBP", quality=75),
            "half": encoded(scaled(image, 0.5)), "x0.75": encoded(scaled(image, 0.75)),
            "x1.5": encoded(scaled(image, 1.5)), "crop3": encoded(crop(image, *[0.03] * 4)),
            "crop6": encoded(crop(image, 0.06, 0.06, 0, 0)), "shift": encoded(shifted(image)),
            "mixed": encoded(scaled(crop(image, *[0.04] * 4), 0.6), "JPEG", quality=70)}


# -- the calibration ------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Item:
    diagram: int
    kind: str  # of diagram
    copy: str  # "original" or one of COPIES
    hash: bytes


def build(per_kind: int, save: Path | None) -> list[Item]:
    items = []
    for k, kind in enumerate(KINDS):
        for n in range(per_kind):
            number = k * per_kind + n
            image = diagram(kind, seed=1000 * k + n)
            shown = {"original": encoded(image), **copies(image)}
            for copy, data in shown.items():
                items.append(Item(number, kind, copy, figures.perceptual_hash(data)))
                if save is not None:
                    ending = {"jpeg85": "jpg", "jpeg50": "jpg", "mixed": "jpg",
                              "webp75": "webp"}.get(copy, "png")
                    save.mkdir(parents=True, exist_ok=True)
                    (save / f"{kind}-{n}-{copy}.{ending}").write_bytes(data)
    return items


def distances(items: list[Item]) -> np.ndarray:
    hashes = figures.FigureSet.of([(n, "", i.hash) for n, i in enumerate(items)]).hashes
    return np.bitwise_count(hashes[:, None, :] ^ hashes[None, :, :]).sum(axis=2)


def report(items: list[Item], name: str) -> dict[int, tuple[dict[str, float], int, int]]:
    """Per threshold: the recall of each copy kind, and the distinct pairs flagged (same kind
    of diagram, other kinds)."""
    matrix = distances(items)
    diagram = np.array([i.diagram for i in items])
    kind = np.array([i.kind for i in items])
    upper = np.triu(np.ones(matrix.shape, dtype=bool), 1)
    distinct = upper & (diagram[:, None] != diagram[None, :])
    same_kind = distinct & (kind[:, None] == kind[None, :])
    other_kind = distinct & ~same_kind
    originals = {i.diagram: n for n, i in enumerate(items) if i.copy == "original"}
    same = {copy: np.array([matrix[originals[i.diagram], n] for n, i in enumerate(items)
                            if i.copy == copy]) for copy in COPIES}
    print(f"\n{name}: {len(originals)} diagrams, {len(items)} images; "
          f"{int(same_kind.sum()):,} distinct pairs of one kind, {int(other_kind.sum()):,} of "
          "other kinds")
    print("   same pairs, distance to the original: " + ", ".join(
        f"{copy} median {np.median(d):.0f} max {d.max()}" for copy, d in same.items()))
    print(f"   distinct pairs: smallest distance {matrix[same_kind].min()} (one kind), "
          f"{matrix[other_kind].min()} (other kinds); 1st percentile "
          f"{np.percentile(matrix[distinct], 1):.0f}, median {np.median(matrix[distinct]):.0f}")
    print("   bits | recall " + " ".join(f"{c:>6}" for c in COPIES) + " |    all | false: "
          "one kind, other kinds")
    table = {}
    for t in GRID:
        recall = {copy: float((d <= t).mean()) for copy, d in same.items()}
        overall = float(np.mean(np.concatenate(list(same.values())) <= t))
        false_same, false_other = int((matrix[same_kind] <= t).sum()), int(
            (matrix[other_kind] <= t).sum())
        table[t] = (recall, false_same, false_other)
        print(f"   {t:4} |        " + " ".join(f"{recall[c]:6.3f}" for c in COPIES)
              + f" | {overall:6.3f} | {false_same:6,} {false_other:6,}")
    return table


def overall(recall: dict[str, float]) -> float:
    return sum(recall.values()) / len(recall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-kind", type=int, default=8, help="diagrams of each kind")
    parser.add_argument("--seed", type=int, default=7, help="of the calibration split")
    parser.add_argument("--save", type=Path, help="write the labelled images to this folder")
    args = parser.parse_args()
    started = time.perf_counter()
    items = build(args.per_kind, args.save)
    print(f"{len(items)} images drawn, copied and hashed ({figures.METHOD}) in "
          f"{time.perf_counter() - started:.1f} s")
    numbers = sorted({i.diagram for i in items})
    random.Random(args.seed).shuffle(numbers)
    calibration = set(numbers[:len(numbers) // 2])
    tables = {name: report([i for i in items if (i.diagram in calibration) == inside], name)
              for name, inside in (("calibration", True), ("held-out", False))}
    clean = [t for t in GRID if sum(tables["calibration"][t][1:]) == 0]
    if not clean:
        print("\nno threshold flags no distinct pair of the calibration half")
        return
    best = min(clean, key=lambda t: (-overall(tables["calibration"][t][0]), t))
    for name, table in tables.items():
        recall, false_same, false_other = table[best]
        print(f"\nthreshold {best} bits ({name}): recall " + ", ".join(
            f"{c} {recall[c]:.3f}" for c in COPIES) + f"; distinct pairs flagged: {false_same} "
            f"of one kind, {false_other} of other kinds")
    print(f"(the default is {figures.DEFAULT_FIGURE_BITS})")


if __name__ == "__main__":
    main()
