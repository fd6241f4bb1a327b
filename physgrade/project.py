"""A physgrade project: one SQLite file, its schema migrations and its transactions.

The file runs in WAL mode with foreign keys on, so a crash or kill loses at most the write in
flight. Writes live with their concept and each returns the :class:`~physgrade.changes.Changes`
it made: scores in :mod:`physgrade.scores`, raters in :mod:`physgrade.raters`, Bloom labels in
:mod:`physgrade.annotation.labels`, reviews of judge verdicts in
:mod:`physgrade.validation.reviews`, duplicate decisions in :mod:`physgrade.dedup.pairs`,
adjudicators' final values of criteria in :mod:`physgrade.team.adjudication`. Expert
work is validated there, committed at once and (through triggers in the schema) leaves a history
row.
"""

from __future__ import annotations

import re
import sqlite3
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from physgrade.failures import explain

if TYPE_CHECKING:
    import sqlite_utils

BUSY_TIMEOUT_MS = 10_000
_MIGRATION_NAME = re.compile(r"^(\d{3})_[\w-]+\.sql$")


class ProjectError(Exception):
    """A project that cannot be opened or an operation it refuses; the message says why."""


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    path: Path

    def sql(self) -> str:
        return self.path.read_text(encoding="utf-8")


def migrations(directory: Path | None = None) -> list[Migration]:
    """The numbered schema files, in order (by default those shipped in ``db/``)."""
    if directory is None:
        directory = Path(str(resources.files("physgrade_db")))
    found = []
    for path in sorted(directory.glob("*.sql")):
        match = _MIGRATION_NAME.match(path.name)
        if match:
            found.append(Migration(int(match.group(1)), path))
    versions = [m.version for m in found]
    if versions != list(range(1, len(found) + 1)):
        raise ProjectError(f"schema files in {directory} are not numbered 001, 002, ...: "
                           f"{[m.path.name for m in found]}")
    return found


def now_iso() -> str:
    """The current UTC time as ISO 8601 with milliseconds (how every timestamp is stored)."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Project:
    """An open project file. Use :meth:`open` or :meth:`create`; close it (or use ``with``)."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self.conn = conn

    @cached_property
    def db(self) -> "sqlite_utils.Database":
        """The sqlite-utils view of the connection, for queries and introspection.

        Imported on first use: sqlite-utils pulls in pandas when installed, which would cost
        quick commands like ``physgrade info`` half a second.
        """
        import sqlite_utils
        return sqlite_utils.Database(self.conn)

    # -- opening -------------------------------------------------------------------------

    @classmethod
    def create(cls, path: str | Path, migration_dir: Path | None = None) -> "Project":
        """Make a new, empty project file; refuses to overwrite an existing one."""
        path = Path(path)
        if path.exists():
            raise ProjectError(f"{path} already exists")
        if not path.parent.is_dir():
            raise ProjectError(f"folder {path.parent} does not exist")
        return cls._connect(path, migration_dir, new=True)

    @classmethod
    def open(cls, path: str | Path, migration_dir: Path | None = None) -> "Project":
        """Open an existing project, upgrading its schema (in one transaction) if it is older.

        Only :meth:`create` makes a project: a file that is empty (a copy or download that
        failed) or an SQLite database without physgrade's tables is refused, never filled
        with an empty project in its place."""
        path = Path(path)
        if not path.is_file():
            raise ProjectError(f"no project file at {path}")
        if path.stat().st_size == 0:
            raise ProjectError(f"{path} is empty (0 bytes), so it is not a physgrade project: "
                               "a copy or download may have failed. Restore it from a backup, "
                               "or make a new project with physgrade init")
        # SQLite itself tells a file that is not a database: reading the header with a file of
        # our own would be wrong, since closing any handle on a file drops every POSIX lock the
        # process holds on it, those of connections already open included.
        return cls._connect(path, migration_dir, new=False)

    @classmethod
    def _connect(cls, path: Path, migration_dir: Path | None, new: bool) -> "Project":
        try:
            conn = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000,
                                   check_same_thread=False)
        except sqlite3.Error as exc:
            raise ProjectError(explain(exc, path)) from exc
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master "
                                                 "WHERE type = 'table'")}
            if not new and "questions" not in tables:
                raise ProjectError(f"{path} is an SQLite file but not a physgrade project")
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA journal_mode = WAL")
            # NORMAL is durable in WAL mode against a killed process; only a power cut may lose
            # the last transactions, never corrupt the file.
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            project = cls(path, conn)
            project._migrate(migrations(migration_dir))
        except sqlite3.Error as exc:
            conn.close()
            raise ProjectError(explain(exc, path)) from exc
        except ProjectError:
            conn.close()
            raise
        return project

    @property
    def schema_version(self) -> int:
        return self.conn.execute("PRAGMA user_version").fetchone()[0]

    def _migrate(self, steps: list[Migration]) -> None:
        current = self.schema_version
        if current > len(steps):
            raise ProjectError(f"{self.path} was made by a newer physgrade (schema "
                               f"{current}, this version knows {len(steps)}); please upgrade")
        pending = steps[current:]
        if not pending:
            return
        # Foreign keys cannot change inside a transaction; migrations may rebuild tables.
        self.conn.execute("PRAGMA foreign_keys = OFF")
        script = "BEGIN IMMEDIATE;\n"
        for step in pending:
            script += step.sql() + "\n"
        script += f"PRAGMA user_version = {pending[-1].version};\n"
        try:
            self.conn.executescript(script)
            problems = self.conn.execute("PRAGMA foreign_key_check").fetchall()
            if problems:
                raise ProjectError(f"schema upgrade left broken references: {problems[:3]}")
            self.conn.execute("COMMIT")
        except (sqlite3.Error, ProjectError) as exc:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise ProjectError(f"schema upgrade of {self.path} to version "
                               f"{pending[-1].version} failed, nothing changed: {exc}") from exc
        finally:
            self.conn.execute("PRAGMA foreign_keys = ON")

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "Project":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def setting(self, key: str) -> str | None:
        """A project setting: what belongs to the project rather than to a user, so that every
        rater of it works alike (the answer tolerance, the declared facets...); None where the
        project keeps none."""
        row = self.conn.execute("SELECT value FROM project_settings WHERE key = ?",
                                (key,)).fetchone()
        return None if row is None else row[0]

    def put_setting(self, key: str, value: str | None) -> None:
        """Keep ``value`` as setting ``key`` (None removes it), within the caller's
        transaction."""
        if value is None:
            self.conn.execute("DELETE FROM project_settings WHERE key = ?", (key,))
        else:
            self.conn.execute("INSERT INTO project_settings (key, value) VALUES (?, ?) "
                              "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                              (key, value))

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads that see the project as it was at the first of them (one read transaction),
        not half of a write another connection commits meanwhile; within a transaction
        already open, that one."""
        if self.conn.in_transaction:
            yield
            return
        self.conn.execute("BEGIN DEFERRED")
        try:
            yield
        finally:
            self.conn.execute("COMMIT")

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All or nothing: commit if the block ends normally, roll back on any exception.

        The first failure is the one raised: where SQLite has rolled back already (a full disk
        or an I/O error does, a failed COMMIT may), no second ROLLBACK hides it."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            self.conn.execute("COMMIT")
        except BaseException:
            if self.conn.in_transaction:
                with suppress(sqlite3.Error):  # the failure that brought us here is the news
                    self.conn.execute("ROLLBACK")
            raise
