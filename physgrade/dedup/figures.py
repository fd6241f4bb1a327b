"""The audit's figure stage: two questions that show the same figure, byte for byte or redrawn.

Each stored image gets a 256-bit perceptual hash, a DCT hash (pHash): the image is laid on
white, turned grey, trimmed to its drawing (so a crop of its margin or a shift changes nothing),
reduced to 64 x 64, and its 16 x 16 lowest frequencies, each against their median, are its bits.
A re-encoded, rescaled or slightly cropped copy keeps most bits; another diagram flips about
half. The usual 64-bit hash (8 x 8) sees little more than a line drawing's layout: on the
calibration set, distinct diagrams of one kind came within 2 bits, JPEG copies up to 8 apart.
A few lines of numpy and scipy (both already needed) do it; the maintained ``imagehash`` would
add PyWavelets for the same DCT hash, with neither the trimming nor the larger size.

Hashes are kept in the project per image and method (``image_hashes``), so each image is hashed
once. Only a question's own images (its statement's) count: a reference solution's figure is
part of an answer, and the text stages compare statements too. Two questions are a figure pair
when they share an image (the exact hash, SHA-256) or when two of their figures are at most
the threshold apart (:data:`DEFAULT_FIGURE_BITS`).
"""

from __future__ import annotations

import io
import sqlite3
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image
from scipy.fft import dctn

from physgrade.formats import Record
from physgrade.images import ImageError, read_image
from physgrade.project import Project
from physgrade.tasks import Task

#: Names how the hashes are computed; a hash stored by another method is computed again.
METHOD = "phash-dct-16x16-trim-v1"
BITS = 256
#: Calibrated by ``benchmarks/calibrate_figures.py`` on the labelled set it draws (crops,
#: rescales, re-encodes and shifts of physics diagrams, against other diagrams of the same kind
#: and of other kinds): the smallest distance with the best recall among those flagging no two
#: distinct diagrams of its calibration half. See the README.
DEFAULT_FIGURE_BITS = 36
#: How far the lax and strict settings move the figure threshold, in bits.
FIGURE_STEP = 8
#: Grey levels a pixel must differ from the background by to count as drawing when trimming.
_INK = 24
#: Hashes computed between commits.
_COMMIT = 500
#: Image pairs compared at once (bounds the memory of a block: 32 bytes each).
_BLOCK = 2_000_000


def perceptual_hash(data: bytes) -> bytes:
    """The 256-bit DCT hash (32 bytes) of an image's bytes (its first frame)."""
    with Image.open(io.BytesIO(data)) as image:
        image.load()
        grey = _on_white(image).convert("L")
    pixels = np.asarray(grey, dtype=np.int16)
    border = np.concatenate((pixels[0], pixels[-1], pixels[:, 0], pixels[:, -1]))
    ink = np.abs(pixels - int(np.median(border))) > _INK
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    if rows.size and cols.size:  # trimmed to the drawing; a blank image stays whole
        grey = grey.crop((int(cols[0]), int(rows[0]), int(cols[-1]) + 1, int(rows[-1]) + 1))
    small = np.asarray(grey.resize((64, 64), Image.Resampling.LANCZOS), dtype=np.float64)
    low = dctn(small, norm="ortho")[:16, :16].ravel()
    return np.packbits(low > np.median(low)).tobytes()


def _on_white(image: Image.Image) -> Image.Image:
    """The image with any transparency laid on white, as a reader sees it on the page."""
    if image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info:
        rgba = image.convert("RGBA")
        return Image.alpha_composite(Image.new("RGBA", rgba.size, "white"), rgba)
    return image


def distance(first: bytes, second: bytes) -> int:
    """How many bits of two hashes differ (0..256)."""
    return (int.from_bytes(first, "big") ^ int.from_bytes(second, "big")).bit_count()


@dataclass(frozen=True, slots=True)
class FigureSet:
    """The question figures of one audited set: for each image shown, the index of its question
    in the set's ids, its SHA-256 and its perceptual hash (one row of ``hashes``)."""

    owners: list[int] = field(default_factory=list)
    sha256: list[str] = field(default_factory=list)
    hashes: np.ndarray = field(default_factory=lambda: np.zeros((0, BITS // 64), np.uint64))

    def __len__(self) -> int:
        return len(self.owners)

    @property
    def questions(self) -> int:
        """How many questions show at least one figure."""
        return len(set(self.owners))

    @classmethod
    def of(cls, rows: list[tuple[int, str, bytes]]) -> "FigureSet":
        """From ``(question index, sha256, hash)`` rows."""
        if not rows:
            return cls()
        owners, shas, hashes = zip(*rows)
        packed = np.frombuffer(b"".join(hashes), dtype=">u8").astype(np.uint64)
        return cls(list(owners), list(shas), packed.reshape(len(rows), BITS // 64))

    def by_owner(self) -> dict[int, list[int]]:
        rows: dict[int, list[int]] = defaultdict(list)
        for row, owner in enumerate(self.owners):
            rows[owner].append(row)
        return rows


def project_figures(project: Project, ids: list[str], task: Task | None = None) -> FigureSet:
    """The figures of the project's questions ``ids`` (in that order), hashing the images not
    hashed yet and keeping their hashes in the project."""
    index = {qid: n for n, qid in enumerate(ids)}
    links = project.conn.execute(
        "SELECT l.owner_id, l.sha256, h.hash FROM image_links l LEFT JOIN image_hashes h "
        "ON h.sha256 = l.sha256 AND h.method = ? WHERE l.owner_kind = 'question' "
        "ORDER BY l.owner_id, l.position", (METHOD,)).fetchall()
    missing = sorted({sha for _, sha, found in links if found is None})
    computed: dict[str, bytes] = {}
    for start in range(0, len(missing), _COMMIT):  # kept as they come: a stopped audit keeps them
        chunk = {}
        for n, sha in enumerate(missing[start:start + _COMMIT], start):
            if task is not None:
                task.report(n, len(missing), "hashing figures")
            data = project.conn.execute("SELECT bytes FROM images WHERE sha256 = ?",
                                        (sha,)).fetchone()[0]
            chunk[sha] = perceptual_hash(bytes(data))
        with project.transaction():
            project.conn.executemany(
                "INSERT OR REPLACE INTO image_hashes (sha256, method, hash) VALUES (?, ?, ?)",
                [(sha, METHOD, value) for sha, value in chunk.items()])
        computed.update(chunk)
    return FigureSet.of([(index[qid], sha, bytes(found) if found is not None else computed[sha])
                         for qid, sha, found in links if qid in index])


def file_figures(conn: sqlite3.Connection, ids: list[str]) -> FigureSet:
    """The question figures of another project file, open read-only through ``conn`` (hashed,
    not kept there)."""
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'image_links'").fetchone() is None:
        return FigureSet()  # a project from before images
    index = {qid: n for n, qid in enumerate(ids)}
    links = conn.execute("SELECT owner_id, sha256 FROM image_links WHERE owner_kind = 'question' "
                         "ORDER BY owner_id, position").fetchall()
    hashed = {sha: perceptual_hash(bytes(data)) for sha, data in conn.execute(
        "SELECT sha256, bytes FROM images WHERE sha256 IN (SELECT sha256 FROM image_links "
        "WHERE owner_kind = 'question')")}
    return FigureSet.of([(index[qid], sha, hashed[sha]) for qid, sha in links if qid in index])


def record_figure(record: Record, index: int, reference: str, base: Path) -> tuple[str, bytes]:
    """The SHA-256 and hash of the image ``reference`` of a questions file's record (a path
    relative to ``base`` or a data: URI), read and checked as an import reads it."""
    try:
        image = read_image(reference, base)
    except ImageError as exc:
        raise record.error(f"images[{index}]", str(exc)) from None
    return image.sha256, perceptual_hash(image.data)


@dataclass(frozen=True, slots=True)
class Match:
    """How close two questions' figures come: the fewest bits apart of any two, and whether
    they show one image (the same bytes)."""

    distance: int
    same_image: bool


def close_pairs(a: FigureSet, b: FigureSet | None, bits: int) -> dict[tuple[int, int], Match]:
    """Question pairs ``(i, j)`` with figures at most ``bits`` apart (one image in common is 0
    apart, so always a pair); with ``b`` None, the pairs ``i < j`` within ``a``."""
    others = a if b is None else b
    found: dict[tuple[int, int], Match] = {}
    if not len(a) or not len(others):
        return found
    step = max(1, _BLOCK // len(others))
    for start in range(0, len(a), step):
        block = a.hashes[start:start + step]
        apart = np.bitwise_count(block[:, None, :] ^ others.hashes[None, :, :]).sum(axis=2)
        for row, col in zip(*np.nonzero(apart <= bits)):
            x, y = start + int(row), int(col)
            i, j = a.owners[x], others.owners[y]
            if b is None:
                if i == j:
                    continue
                i, j = min(i, j), max(i, j)
            _keep(found, (i, j), Match(int(apart[row, col]), a.sha256[x] == others.sha256[y]))
    return found


def _keep(found: dict[tuple[int, int], Match], key: tuple[int, int], match: Match) -> None:
    """Keep the closer match of a pair (one image in common first)."""
    known = found.get(key)
    if known is None or (match.distance, not match.same_image) < (known.distance,
                                                                   not known.same_image):
        found[key] = match


def match(a: FigureSet, b: FigureSet, rows_a: list[int], rows_b: list[int]) -> Match | None:
    """How close the figures ``rows_a`` of ``a`` come to ``rows_b`` of ``b`` (None: either
    question has none)."""
    if not rows_a or not rows_b:
        return None
    apart = np.bitwise_count(a.hashes[rows_a][:, None, :] ^ b.hashes[rows_b][None, :, :]).sum(2)
    same = any(a.sha256[x] == b.sha256[y] for x in rows_a for y in rows_b)
    return Match(int(apart.min()), same)  # one image in common is 0 apart
