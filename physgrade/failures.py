"""What a failed read or write of a file means to the person who asked for it, and what to do.

SQLite and the operating system word their failures for programmers ("database is locked",
"attempt to write a readonly database", "[Errno 28] No space left on device") and seldom name
the file. The command line and the app both say instead which file, what happened and what the
user can do about it, in the same words; failures physgrade words itself pass through as they are.
"""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

#: SQLite's primary result codes, by name (``sqlite3.Error.sqlite_errorname`` without the
#: extended part), with what each means for the file; ``{file}`` is filled in.
_SQLITE_MEANINGS = {
    "SQLITE_BUSY": "{file} is being written by another program (another physgrade window or "
                   "command, or a sync tool); try again when it has finished",
    "SQLITE_LOCKED": "{file} is being written by another program (another physgrade window or "
                     "command, or a sync tool); try again when it has finished",
    "SQLITE_READONLY": "{file} cannot be written: the file or its folder is read-only (SQLite "
                       "also writes beside it); make both writable, or copy the project to a "
                       "folder you can write to",
    "SQLITE_FULL": "the disk holding {file} is full; free some space and try again",
    "SQLITE_IOERR": "the disk failed while reading or writing {file} (an input/output error); "
                    "check the drive or network share, and keep a copy of the project elsewhere",
    "SQLITE_CORRUPT": "{file} is damaged (SQLite reports a malformed database); restore it from "
                      "a backup",
    "SQLITE_NOTADB": "{file} is not a physgrade project (not an SQLite file)",
    "SQLITE_CANTOPEN": "{file} cannot be opened: its folder may be missing, or not readable and "
                       "writable by you",
    "SQLITE_PERM": "{file} cannot be opened: permission denied",
}

#: The same for the operating system's error numbers.
_OS_MEANINGS = {
    errno.ENOSPC: "the disk holding {file} is full; free some space and try again",
    errno.EDQUOT: "your disk quota is used up, so {file} cannot be written; free some space "
                  "and try again",
    errno.EROFS: "{file} is on a read-only disk; copy it to a folder you can write to",
    errno.EACCES: "permission denied for {file}; check who may read and write it",
    errno.EPERM: "permission denied for {file}; check who may read and write it",
    errno.ENOENT: "{file} does not exist",
    errno.EIO: "the disk failed while reading or writing {file} (an input/output error); check "
               "the drive or network share",
}


def is_locked(error: BaseException) -> bool:
    """True when another connection holds the project's write lock (SQLite's busy or locked):
    the one failure that waiting, then trying again, mends."""
    return isinstance(error, sqlite3.OperationalError) and _sqlite_code(error) in {
        "SQLITE_BUSY", "SQLITE_LOCKED"}


def explain(error: BaseException, path: str | Path | None = None) -> str:
    """``error`` in words a user can act on, naming ``path`` (the file being read or written;
    by default the one an operating system's error names)."""
    if isinstance(error, sqlite3.Error):
        file = str(path) if path is not None else "the project file"
        meaning = _SQLITE_MEANINGS.get(_sqlite_code(error) or "")
        return meaning.format(file=file) if meaning is not None else f"{file}: {error}"
    if isinstance(error, OSError):
        named = path if path is not None else error.filename
        file = str(named) if named is not None else "the file being written"
        meaning = _OS_MEANINGS.get(error.errno or 0)
        return meaning.format(file=file) if meaning is not None else f"{file}: {error.strerror or error}"
    return str(error)


def _sqlite_code(error: sqlite3.Error) -> str | None:
    """The primary result code's name ("SQLITE_IOERR" for "SQLITE_IOERR_WRITE"), where the
    error came from SQLite (Python's module raises some of its own, without one)."""
    name = getattr(error, "sqlite_errorname", None)
    return "_".join(name.split("_")[:2]) if isinstance(name, str) else None
