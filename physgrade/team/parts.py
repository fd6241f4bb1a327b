"""The part file a pack is filled in: hidden beside its destination, and gone once its run is over.

A part is named ``.<destination's name>.<8 hex digits>.part``; beside it SQLite may keep
``-journal``, ``-wal`` and ``-shm`` files while it writes, and its run holds a ``.lock``
(:mod:`physgrade.leftovers`). The run removes them all when it ends, cancelled or interrupted
(Ctrl+C, SIGTERM) included; what a killed run leaves, the next pack made in that folder removes,
leaving alone the parts of runs still going.
"""

from __future__ import annotations

import os
import re
import uuid
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Iterator

from physgrade import leftovers

#: What SQLite may keep beside a database it writes.
_BESIDE = ("-journal", "-wal", "-shm")
#: A part's lock file ends with this.
_LOCK = ".lock"
#: The name of a part (group 1) or of one of the files beside it.
_NAME = re.compile(r"(\..+\.[0-9a-f]{8}\.part)(?:%s)?" % "|".join(map(re.escape, (*_BESIDE, _LOCK))))


@contextmanager
def part_for(destination: Path) -> Iterator[Path]:
    """A new part beside ``destination`` for the block to fill and move into place. The parts
    killed runs left in that folder go first, and every file of this one at the end."""
    _remove_dead_parts(destination.parent)
    part = destination.with_name(f".{destination.name}.{uuid.uuid4().hex[:8]}.part")
    with leftovers.held(_lock(part)):
        try:
            yield part
        finally:
            _remove(part)


def _remove_dead_parts(folder: Path) -> None:
    """Remove what runs that are over left of their parts in ``folder`` (a live run holds its
    part's lock). A file that cannot be removed stays for a later run to try; a folder that
    cannot be read is left to the writing to explain."""
    try:
        names = {found[1] for name in os.listdir(folder) if (found := _NAME.fullmatch(name))}
    except OSError:
        return
    for name in names:
        part = folder / name
        with suppress(OSError), leftovers.claimed(_lock(part)) as over:
            if over:
                _remove(part)


def _lock(part: Path) -> Path:
    return part.with_name(part.name + _LOCK)


def _remove(part: Path) -> None:
    """The part and what SQLite keeps beside it."""
    for path in (part, *(part.with_name(part.name + ending) for ending in _BESIDE)):
        path.unlink(missing_ok=True)
