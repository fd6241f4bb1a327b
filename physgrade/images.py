"""Images of questions, reference solutions and responses: checked, stored once, written back.

An image comes into a project from an exchange file as a path (relative to the file) or a
``data:`` URI (base64). Only PNG, JPEG, GIF and WebP are taken, and each is decoded with Pillow
before it is stored: its byte size, its declared width x height (read before any pixel is
decoded, so a decompression bomb is refused unopened) and its pixels are checked. SVG is refused
(it is a document that may carry scripts and links, not a picture), as is anything else. The
bytes are kept exactly as given, never interpreted: a PNG whose text chunk holds HTML is only a
PNG. Each distinct image is stored once in the project (``images``, named by the SHA-256 of its
bytes); ``image_links`` says which question, reference solution or response shows it, in order.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import os
import sqlite3
import warnings
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

#: The image types accepted, by Pillow's format name, with their media type and file ending.
MEDIA_TYPES = {"PNG": ("image/png", "png"), "JPEG": ("image/jpeg", "jpg"),
               "GIF": ("image/gif", "gif"), "WEBP": ("image/webp", "webp")}
_ENDINGS = {media: ending for media, ending in MEDIA_TYPES.values()}
#: The largest image file accepted, in bytes (20 MiB).
MAX_BYTES = 20 * 1024 * 1024
#: The most pixels (width x height) an accepted image may declare (40 megapixels).
MAX_PIXELS = 40_000_000
#: Who may hold an image: a question, its reference solution, a response.
OWNER_KINDS = ("question", "reference", "response")


class ImageError(ValueError):
    """An image that cannot be taken; the message says why (the caller adds file, line, field)."""


@dataclass(frozen=True, slots=True)
class CheckedImage:
    """An image that passed the checks, with its bytes exactly as given."""

    sha256: str
    media_type: str
    width: int
    height: int
    data: bytes

    @property
    def file_name(self) -> str:
        """The image's file name on export: its hash and the ending of its type."""
        return f"{self.sha256}.{_ENDINGS[self.media_type]}"

    @property
    def base64_data(self) -> str:
        """The bytes in base64, as an API's image block and a ``data:`` URI carry them."""
        return base64.b64encode(self.data).decode("ascii")

    @property
    def data_uri(self) -> str:
        """The image as a ``data:`` URI of its checked type: how the reading shows it, as the
        reading view loads nothing but its own document."""
        return f"data:{self.media_type};base64,{self.base64_data}"


def check(data: bytes) -> CheckedImage:
    """Decode ``data`` safely and return it checked; :class:`ImageError` says what is wrong."""
    if not data:
        raise ImageError("the image is empty")
    if len(data) > MAX_BYTES:
        raise ImageError(f"the image is {len(data):,} bytes; at most {MAX_BYTES:,} are accepted")
    if _looks_like_svg(data):
        raise ImageError("SVG images are not accepted (an SVG is a document that may carry "
                         "scripts and links); convert it to PNG")
    allowed = list(MEDIA_TYPES)
    kind = ""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data), formats=allowed) as image:
                kind = image.format or ""
                width, height = image.size
                # Checked from the header, before a single pixel is decoded.
                if width <= 0 or height <= 0:
                    raise ImageError(f"the image declares an empty size {width}x{height}")
                if width * height > MAX_PIXELS:
                    raise ImageError(f"the image declares {width}x{height} pixels "
                                     f"({width * height:,}); at most {MAX_PIXELS:,} are accepted")
                image.verify()  # the file's structure and checksums (PNG: every chunk's CRC)
            with Image.open(io.BytesIO(data), formats=allowed) as image:
                image.load()  # the pixels themselves: a truncated or corrupt image fails here
    except ImageError:
        raise
    except Image.UnidentifiedImageError:
        raise ImageError("not a PNG, JPEG, GIF or WebP image (the only types accepted)") from None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise ImageError(f"the image is too large to decode safely (at most {MAX_PIXELS:,} "
                         "pixels are accepted)") from None
    except Exception as exc:  # noqa: BLE001 - any decoder failure on untrusted bytes is a refusal
        raise ImageError(f"the {kind or 'image'} data cannot be decoded: {exc}") from None
    media_type = MEDIA_TYPES[kind][0]
    return CheckedImage(hashlib.sha256(data).hexdigest(), media_type, width, height, data)


def _looks_like_svg(data: bytes) -> bool:
    head = data[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return head.startswith((b"<svg", b"<?xml", b"<!doctype svg")) or b"<svg" in head


def read_image(reference: str, base: Path) -> CheckedImage:
    """Read and check the image named by ``reference``: a ``data:`` URI (base64) or a path
    relative to ``base`` (the folder of the file being imported)."""
    reference = reference.strip()
    if not reference:
        raise ImageError("is empty; give a path or a data: URI")
    if reference[:5].lower() == "data:":
        return _read_data_uri(reference)
    if "://" in reference:
        raise ImageError(f"{_short(reference)} is a URL; give a path relative to the file, or a "
                         "data: URI (images are never downloaded)")
    path = base / reference
    if path.suffix.lower() in {".svg", ".svgz"}:
        raise ImageError(f"{reference}: SVG images are not accepted (an SVG is a document that "
                         "may carry scripts and links); convert it to PNG")
    try:
        size = os.stat(path).st_size
        if size > MAX_BYTES:
            raise ImageError(f"{reference} is {size:,} bytes; at most {MAX_BYTES:,} are accepted")
        data = path.read_bytes()
    except FileNotFoundError:
        raise ImageError(f"{reference}: no such file (paths are relative to the imported "
                         "file)") from None
    except IsADirectoryError:
        raise ImageError(f"{reference} is a folder, not an image file") from None
    except OSError as exc:
        raise ImageError(f"{reference} cannot be read: {exc.strerror}") from None
    try:
        return check(data)
    except ImageError as exc:
        raise ImageError(f"{reference}: {exc}") from None


def _read_data_uri(uri: str) -> CheckedImage:
    header, comma, payload = uri.partition(",")
    if not comma:
        raise ImageError("the data: URI has no ',' before its data")
    params = [p.strip().lower() for p in header[5:].split(";")]
    if "base64" not in params[1:]:
        raise ImageError("only base64 data: URIs are accepted (data:image/png;base64,...)")
    declared = params[0]
    if declared in {"image/svg+xml", "image/svg"}:
        raise ImageError("SVG images are not accepted (an SVG is a document that may carry "
                         "scripts and links); convert it to PNG")
    if declared and declared not in _ENDINGS:
        raise ImageError(f"the data: URI says {declared!r}; only PNG, JPEG, GIF and WebP "
                         "images are accepted")
    if len(payload) > MAX_BYTES * 4 // 3 + 4:
        raise ImageError(f"the data: URI holds more than {MAX_BYTES:,} bytes")
    try:
        data = base64.b64decode("".join(payload.split()), validate=True)
    except (binascii.Error, ValueError):
        raise ImageError("the data: URI's base64 data is not valid") from None
    image = check(data)
    if declared and declared != image.media_type:
        raise ImageError(f"the data: URI says {declared} but holds {image.media_type}")
    return image


def _short(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


# -- the project's images ------------------------------------------------------------------------

def store_image(conn: sqlite3.Connection, image: CheckedImage) -> None:
    """Store ``image`` unless the project holds it already (one copy per distinct image)."""
    conn.execute("INSERT OR IGNORE INTO images (sha256, media_type, width, height, byte_size, "
                 "bytes) VALUES (?, ?, ?, ?, ?, ?)",
                 (image.sha256, image.media_type, image.width, image.height, len(image.data),
                  image.data))


def images_of(conn: sqlite3.Connection, owner_kind: str, owner_id: str) -> list[CheckedImage]:
    """The images of a question (``question``), its reference (``reference``) or a response
    (``response``), in order."""
    if owner_kind not in OWNER_KINDS:
        raise ValueError(f"unknown image owner {owner_kind!r}")
    return [CheckedImage(sha256, media_type, width, height, bytes(data))
            for sha256, media_type, width, height, data in conn.execute(
                "SELECT i.sha256, i.media_type, i.width, i.height, i.bytes FROM image_links l "
                "JOIN images i ON i.sha256 = l.sha256 WHERE l.owner_kind = ? AND l.owner_id = ? "
                "ORDER BY l.position", (owner_kind, owner_id))]


#: The folder, beside the exported records, that export writes images into.
EXPORT_FOLDER = "images"


def write_back(conn: sqlite3.Connection, owner_kind: str, owner_id: str,
               folder: Path) -> list[str]:
    """Write the images of one owner into ``folder/images/`` (named by hash) and return their
    paths relative to ``folder``, in order: what the exported record's field lists."""
    paths = []
    for image in images_of(conn, owner_kind, owner_id):
        target = folder / EXPORT_FOLDER / image.file_name
        if not (target.is_file() and target.stat().st_size == len(image.data)):
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(f".{target.name}.partial")
            try:
                partial.write_bytes(image.data)
                os.replace(partial, target)
            finally:
                partial.unlink(missing_ok=True)
        paths.append(f"{EXPORT_FOLDER}/{image.file_name}")
    return paths
