"""The recently opened projects, remembered in QSettings (newest first, files that still exist)."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from PySide6.QtCore import QSettings

KEY = "recent_projects"
LIMIT = 8


def recent_projects() -> list[Path]:
    """Remembered projects whose files still exist, newest first."""
    stored = cast("list[str] | None", QSettings().value(KEY, [], list)) or []
    return [Path(p) for p in stored if Path(p).is_file()]


def remember(path: Path) -> None:
    """Put ``path`` first in the list (once), dropping the oldest beyond the limit."""
    path = path.resolve()
    paths = [path] + [p for p in recent_projects() if p != path]
    QSettings().setValue(KEY, [str(p) for p in paths[:LIMIT]])


def most_recent() -> Path | None:
    return next(iter(recent_projects()), None)
