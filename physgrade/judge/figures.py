"""The figures a judge request shows: a question's, its reference solution's and a response's
images, sent as image content blocks (base64) before the prompt's text.

Only records with images change: a request for a record without any is sent exactly as before,
so the caches and recorded prompt versions of existing projects stand. The hashes of the images
a call sends are its images' part of the cache key: they are kept with the stored answer
(``extra["images"]``), and a stored answer whose images differ from the record's images now is
not a cached answer (a new run asks again and replaces it).

Image tokens are estimated as Anthropic documents them: width x height / 750 per image, at most
:data:`MAX_IMAGE_TOKENS` (a larger image is scaled down to about 1.15 megapixels first).
"""

from __future__ import annotations

import json
import math
import sqlite3
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from physgrade.images import CheckedImage, images_of

#: The most tokens one image takes (Anthropic scales larger images down to ~1.15 megapixels).
MAX_IMAGE_TOKENS = 1600
#: Pixels per token of an image.
PIXELS_PER_TOKEN = 750
#: How each owner's figures are introduced in a request.
CAPTIONS = {"question": "The question's figures:",
            "reference": "The reference solution's figures:",
            "response": "The response's figures:"}


@dataclass(frozen=True, slots=True)
class Figures:
    """One owner's images, in order, and the caption that introduces them."""

    caption: str
    images: tuple[CheckedImage, ...]


def figures_of(conn: sqlite3.Connection,
               owners: Iterable[tuple[str, str]]) -> tuple[Figures, ...]:
    """The figures of each ``(owner_kind, owner_id)`` that has images, in the order given."""
    found = []
    for kind, owner in owners:
        images = tuple(images_of(conn, kind, owner))
        if images:
            found.append(Figures(CAPTIONS[kind], images))
    return tuple(found)


def content(figures: tuple[Figures, ...], text: str) -> str | list[dict[str, Any]]:
    """A user message's content: ``text`` alone where there are no figures (as ever), else each
    group's caption and images, then ``text``."""
    if not figures:
        return text
    blocks: list[dict[str, Any]] = []
    for group in figures:
        blocks.append({"type": "text", "text": group.caption})
        blocks += [{"type": "image", "source": {
            "type": "base64", "media_type": image.media_type,
            "data": image.base64_data}} for image in group.images]
    blocks.append({"type": "text", "text": text})
    return blocks


def image_tokens(width: int, height: int) -> int:
    """The input tokens one image is estimated to take."""
    return min(math.ceil(width * height / PIXELS_PER_TOKEN), MAX_IMAGE_TOKENS)


def tokens_by_owner(conn: sqlite3.Connection, owner_kind: str) -> dict[str, int]:
    """The estimated image tokens of each ``owner_kind`` record that has images."""
    tokens: dict[str, int] = {}
    for owner, width, height in conn.execute(
            "SELECT l.owner_id, i.width, i.height FROM image_links l JOIN images i "
            "ON i.sha256 = l.sha256 WHERE l.owner_kind = ?", (owner_kind,)):
        tokens[owner] = tokens.get(owner, 0) + image_tokens(width, height)
    return tokens


def hashes_by_owner(conn: sqlite3.Connection, owner_kind: str) -> dict[str, list[str]]:
    """The image hashes of each ``owner_kind`` record that has images, in order."""
    found: dict[str, list[str]] = {}
    for owner, sha in conn.execute(
            "SELECT owner_id, sha256 FROM image_links WHERE owner_kind = ? "
            "ORDER BY owner_id, position", (owner_kind,)):
        found.setdefault(owner, []).append(sha)
    return found


def hashes_of(conn: sqlite3.Connection, owners: Iterable[tuple[str, str]]) -> list[str]:
    """The SHA-256 of each image the figures of ``owners`` send, in the order sent: the images'
    part of a call's key (their bytes are not read)."""
    return [sha for kind, owner in owners for (sha,) in conn.execute(
        "SELECT sha256 FROM image_links WHERE owner_kind = ? AND owner_id = ? ORDER BY position",
        (kind, owner))]


def has_images(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM image_links LIMIT 1").fetchone() is not None


def saw_other_images(done: Iterable[str], held: dict[str, list[str]],
                     current: Callable[[str], list[str]]) -> set[str]:
    """Those of ``done`` whose stored answer saw other images (``held``, by id) than the record
    has now (``current(id)``): the images sent are part of each call's key, so they are due."""
    return {key for key in done if held.get(key, []) != current(key)}


def sent_hashes(extra: str | None) -> list[str]:
    """The image hashes a stored answer's ``extra`` records (none for an answer without
    images, or one stored before images were sent)."""
    try:
        found = json.loads(extra or "{}").get("images")
    except (ValueError, AttributeError):
        return []
    return list(found) if isinstance(found, list) else []
