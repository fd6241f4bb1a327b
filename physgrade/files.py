"""Text files written whole or not at all.

Reports, ids files and the like are written beside their place under a hidden name and moved
into place once complete, so a failed, cancelled or killed write never leaves half a file that
another program could take for the real one.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, TextIO

from physgrade.failures import explain
from physgrade.project import ProjectError


def write_whole(path: Path, write: Callable[[TextIO], object], *, new: bool = False) -> Path:
    """Write ``path`` (UTF-8) through ``write``, whole or not at all. With ``new`` an existing
    file is refused, also one that appears while writing: a file handed to people or tools is
    not to be lost to a slip of the name."""
    if new and path.exists():
        raise ProjectError(f"{path} already exists; choose another file name")
    partial = path.with_name(f".{path.name}.partial")
    try:
        with partial.open("w", encoding="utf-8", newline="") as stream:
            write(stream)
        if new and path.exists():  # made meanwhile: os.replace would write over it
            raise ProjectError(f"{path} appeared while it was written; nothing written")
        os.replace(partial, path)
    except OSError as exc:  # a full disk, a read-only folder: named as the file asked for
        raise ProjectError(f"{explain(exc, path)}; nothing written") from exc
    finally:
        partial.unlink(missing_ok=True)
    return path
