"""What killed runs left behind, told from what live runs are using by a lock.

A process ended outright (SIGKILL, the out-of-memory killer, a power cut) removes nothing it
made, so a later run has to, without touching what a run still going is using. A run therefore
marks what it makes with a lock file that it holds as long as it lives: the system releases the
lock when the process ends, however it ends, so a lock that can be taken is a finished run's. A
process id written in a name would tell less: ids are reused, and a folder may be shared with
another machine, or with a container or sandbox (Flatpak) whose processes are out of sight.

Where the system offers no ``flock`` (Windows) or the file system refuses it, a lock that exists
counts as held: what it marks is kept, never taken from a live run.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


@contextmanager
def held(lock: Path) -> Iterator[None]:
    """Create ``lock`` and hold it while the block runs (what it marks is a live run's), then
    remove it."""
    descriptor = hold(lock)
    try:
        yield
    finally:
        os.close(descriptor)
        lock.unlink(missing_ok=True)  # once closed: Windows removes no open file


def hold(lock: Path) -> int:
    """Create ``lock`` and hold it until the descriptor returned is closed or this process ends.
    A sweep may take the new file for a dead run's in the instant before it is held, and remove
    it: it is then made again."""
    while True:
        descriptor = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        _lock(descriptor)
        if os.fstat(descriptor).st_nlink:
            return descriptor
        os.close(descriptor)


@contextmanager
def claimed(lock: Path) -> Iterator[bool]:
    """Whether the run that made ``lock`` is over (or left none, where ``lock`` does not exist):
    if so, the block removes what it marked while this process holds the lock, and the lock goes
    at the end. False while a live run holds it, and where another sweep is removing it."""
    descriptor = None
    try:
        descriptor = os.open(lock, os.O_RDWR)
    except FileNotFoundError:
        over = True
    except OSError:  # not ours to open (another user's): not ours to judge
        over = False
    if descriptor is None:
        yield over
        return
    try:
        over = _try_lock(descriptor) and os.fstat(descriptor).st_nlink > 0
        yield over
        if over:
            lock.unlink(missing_ok=True)
    finally:
        os.close(descriptor)


if sys.platform == "win32":
    def _lock(descriptor: int) -> None:
        """No lock to take: the file marks the run, and a sweep keeps what it marks."""

    def _try_lock(descriptor: int) -> bool:
        return False
else:
    import fcntl

    def _lock(descriptor: int) -> None:
        """Lock ``descriptor`` exclusively, waiting for a sweep that has it for an instant."""
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
        except OSError:  # a file system without locks: sweeps cannot take it either
            pass

    def _try_lock(descriptor: int) -> bool:
        """Lock ``descriptor`` exclusively if nobody holds it; False where someone does or the
        file system cannot tell."""
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        return True
