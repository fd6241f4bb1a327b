"""A physgrade project: one SQLite file, its schema migrations, and the write path for expert work.

The file runs in WAL mode with foreign keys on, so a crash or kill loses at most the write in
flight. Expert work (a score, a review, a Bloom label) goes through the few ``set_*`` methods
here: each validates against the rubric, commits at once, and (through triggers in the schema)
leaves a history row. Everything else only reads.
"""

from __future__ import annotations

import json
import re
import sqlite3
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    import sqlite_utils

from physgrade.rubric import RUBRICS, Rubric, ScoreError, rubric_for_kind
from physgrade.taxonomy import BLOOM_COGNITIVE, BLOOM_KNOWLEDGE

BUSY_TIMEOUT_MS = 10_000
RATER_KINDS = ("human", "llm", "rules")
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
        return cls._connect(path, migration_dir)

    @classmethod
    def open(cls, path: str | Path, migration_dir: Path | None = None) -> "Project":
        """Open an existing project, upgrading its schema (in one transaction) if it is older."""
        path = Path(path)
        if not path.is_file():
            raise ProjectError(f"no project file at {path}")
        with path.open("rb") as f:
            header = f.read(16)
        if header and header != b"SQLite format 3\x00":
            raise ProjectError(f"{path} is not a physgrade project (not an SQLite file)")
        return cls._connect(path, migration_dir)

    @classmethod
    def _connect(cls, path: Path, migration_dir: Path | None) -> "Project":
        conn = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000,
                               check_same_thread=False)
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master "
                                                 "WHERE type = 'table'")}
            if tables and "questions" not in tables:
                raise ProjectError(f"{path} is an SQLite file but not a physgrade project")
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA journal_mode = WAL")
            # NORMAL is durable in WAL mode against a killed process; only a power cut may lose
            # the last transactions, never corrupt the file.
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            project = cls(path, conn)
            project._migrate(migrations(migration_dir))
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise ProjectError(f"cannot open {path}: {exc}") from exc
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

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All or nothing: commit if the block ends normally, roll back on any exception."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # -- raters ----------------------------------------------------------------------------

    def rater_id(self, name: str, kind: str, prompt_version: str = "") -> int:
        """The id of a rater, created on first use. A name keeps the kind it was made with."""
        if kind not in RATER_KINDS:
            raise ProjectError(f"rater kind must be one of {', '.join(RATER_KINDS)}, not {kind!r}")
        if not name.strip():
            raise ProjectError("a rater needs a name")
        row = self.conn.execute("SELECT id, kind FROM raters WHERE name = ? AND prompt_version = ?",
                                (name, prompt_version)).fetchone()
        if row is not None:
            if row[1] != kind:
                raise ProjectError(f"{name!r} is already a rater of kind {row[1]!r}, not {kind!r}")
            return row[0]
        return self.conn.execute("INSERT INTO raters (name, kind, prompt_version) VALUES (?, ?, ?)",
                                 (name, kind, prompt_version)).lastrowid

    # -- the write path for expert work -------------------------------------------------

    def response_rubric(self, response_id: str) -> tuple[Rubric, bool]:
        """The rubric a response is graded with, and whether its question is multiple choice."""
        row = self.conn.execute(
            "SELECT q.kind, q.options IS NOT NULL FROM responses r "
            "JOIN questions q ON q.id = r.question_id WHERE r.id = ?", (response_id,)).fetchone()
        if row is None:
            raise ProjectError(f"no response {response_id!r} in this project")
        return rubric_for_kind(row[0]), bool(row[1])

    def set_score(self, grader: str, response_id: str, criterion: str, value: int | None,
                  note: str | None = None, rubric: str | None = None) -> None:
        """Record one criterion of a person's grade, committed at once (history by trigger).

        ``value`` None means N/A where the rubric allows it. The rubric follows the question's
        kind unless named (e.g. ``"coarse"``).
        """
        chosen, multiple_choice = self.response_rubric(response_id)
        if rubric is not None:
            chosen = RUBRICS[rubric]
        stored = chosen.validate_one(criterion, value, multiple_choice)
        stamp = now_iso()
        with self.transaction():
            rater = self.rater_id(grader, "human")
            self.conn.execute(
                "INSERT INTO scores (rater_id, response_id, rubric, criterion, value, note, "
                "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (rater_id, response_id, rubric, criterion) DO UPDATE SET "
                "value = excluded.value, note = coalesce(excluded.note, scores.note), "
                "updated_at = excluded.updated_at",
                (rater, response_id, chosen.key, criterion, stored, note, stamp))
            self.conn.execute(
                "INSERT INTO assessments (rater_id, response_id, rubric, assessed_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET assessed_at = excluded.assessed_at",
                (rater, response_id, chosen.key, stamp))

    def set_note(self, grader: str, response_id: str, criterion: str, note: str,
                 rubric: str | None = None) -> None:
        """Attach a note to a criterion the grader has scored ("" removes it), committed at once."""
        chosen = RUBRICS[rubric] if rubric else self.response_rubric(response_id)[0]
        with self.transaction():
            changed = self.conn.execute(
                "UPDATE scores SET note = nullif(?, ''), updated_at = ? WHERE rater_id = "
                "(SELECT id FROM raters WHERE name = ? AND prompt_version = '' AND kind = 'human') "
                "AND response_id = ? AND rubric = ? AND criterion = ?",
                (note.strip(), now_iso(), grader, response_id, chosen.key, criterion)).rowcount
            if not changed:
                raise ScoreError(criterion, f"score {criterion} before adding a note to it")

    def clear_score(self, grader: str, response_id: str, criterion: str,
                    rubric: str | None = None) -> None:
        """Remove one criterion of a person's grade (e.g. undo), committed at once."""
        chosen = RUBRICS[rubric] if rubric else self.response_rubric(response_id)[0]
        with self.transaction():
            self.conn.execute(
                "DELETE FROM scores WHERE rater_id = (SELECT id FROM raters WHERE name = ? "
                "AND prompt_version = '' AND kind = 'human') AND response_id = ? AND rubric = ? "
                "AND criterion = ?", (grader, response_id, chosen.key, criterion))

    def set_bloom_label(self, question_id: str, annotator: str, cognitive: str | None,
                        knowledge: str | None, kind: str = "human", prompt_version: str = "",
                        extra: dict[str, object] | None = None) -> None:
        """Record an annotator's Bloom labels of a question, committed at once. A model
        annotator is named with its prompt version; ``extra`` keeps e.g. its rationale. A
        person's label also updates the question's final label (``questions.bloom_*``) in the
        same transaction, through the schema's triggers (see
        :mod:`physgrade.annotation.adjudication`)."""
        if cognitive is not None and cognitive not in BLOOM_COGNITIVE:
            raise ScoreError("cognitive", f"{cognitive!r} is not a Bloom cognitive level")
        if knowledge is not None and knowledge not in BLOOM_KNOWLEDGE:
            raise ScoreError("knowledge", f"{knowledge!r} is not a Bloom knowledge type")
        with self.transaction():
            annotator_id = self.rater_id(annotator, kind, prompt_version)
            self.conn.execute(
                "INSERT INTO bloom_labels (question_id, annotator_id, cognitive, knowledge, "
                "updated_at, extra) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET "
                "cognitive = excluded.cognitive, knowledge = excluded.knowledge, "
                "updated_at = excluded.updated_at, extra = coalesce(excluded.extra, bloom_labels.extra)",
                (question_id, annotator_id, cognitive, knowledge, now_iso(),
                 json.dumps(extra, ensure_ascii=False) if extra else None))

    def set_duplicate_decision(self, pair_id: int, reviewer: str, decision: str | None) -> None:
        """Record a reviewer's verdict on a candidate pair ("confirmed" a duplicate, or
        "rejected"; None withdraws it), committed at once."""
        if decision not in (None, "confirmed", "rejected"):
            raise ProjectError(f"a duplicate decision is 'confirmed' or 'rejected', not "
                               f"{decision!r}")
        if not reviewer.strip():
            raise ProjectError("a decision needs a reviewer's name")
        with self.transaction():
            changed = self.conn.execute(
                "UPDATE duplicate_pairs SET decision = ?, decided_by = ?, decided_at = ? "
                "WHERE id = ?", (decision, reviewer if decision else None,
                                 now_iso() if decision else None, pair_id)).rowcount
            if not changed:
                raise ProjectError(f"no candidate pair {pair_id}")

    def set_review_agreement(self, reviewer: str, judge_id: int, response_id: str, criterion: str,
                             agreement: int | None) -> None:
        """Record a reviewer's agreement with one criterion of a judge's verdict (2 full,
        1 partial, 0 disagree; None withdraws it), committed at once."""
        if agreement is not None and (isinstance(agreement, bool) or not isinstance(agreement, int)
                                      or agreement not in (0, 1, 2)):
            raise ScoreError(criterion, f"an agreement is 2 (full), 1 (partial) or 0 (disagree), "
                                        f"not {agreement!r}")
        rubric, _ = self.response_rubric(response_id)
        rubric.criterion(criterion)  # raises ScoreError for a criterion of another rubric
        if not reviewer.strip():
            raise ProjectError("a review needs a reviewer's name")
        with self.transaction():
            rater = self._reviewer_of(reviewer, judge_id, response_id)
            if agreement is None:
                self.conn.execute(
                    "DELETE FROM judge_review_criteria WHERE reviewer_id = ? AND judge_id = ? "
                    "AND response_id = ? AND criterion = ?", (rater, judge_id, response_id, criterion))
                return
            self.conn.execute(
                "INSERT INTO judge_review_criteria (reviewer_id, judge_id, response_id, criterion, "
                "agreement, updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET "
                "agreement = excluded.agreement, updated_at = excluded.updated_at",
                (rater, judge_id, response_id, criterion, agreement, now_iso()))

    def set_review_verdict(self, reviewer: str, judge_id: int, response_id: str,
                           verdict: str | None) -> None:
        """Record a reviewer's label of a judge's verdict as a whole ("correct", "lenient":
        under-penalizes, "strict": over-penalizes; None withdraws it), committed at once."""
        if verdict not in (None, "correct", "lenient", "strict"):
            raise ProjectError(f"a verdict is labelled 'correct', 'lenient' or 'strict', not "
                               f"{verdict!r}")
        self.response_rubric(response_id)  # refuses an unknown response
        if not reviewer.strip():
            raise ProjectError("a review needs a reviewer's name")
        with self.transaction():
            rater = self._reviewer_of(reviewer, judge_id, response_id)
            self.conn.execute(
                "INSERT INTO judge_reviews (reviewer_id, judge_id, response_id, verdict, "
                "updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET "
                "verdict = excluded.verdict, updated_at = excluded.updated_at",
                (rater, judge_id, response_id, verdict, now_iso()))

    def _reviewer_of(self, reviewer: str, judge_id: int, response_id: str) -> int:
        """The reviewer's rater id, once the judge is known to have a verdict on the response."""
        if not self.conn.execute(
                "SELECT 1 FROM assessments a JOIN raters j ON j.id = a.rater_id WHERE "
                "a.rater_id = ? AND a.response_id = ? AND j.kind != 'human'",
                (judge_id, response_id)).fetchone():
            raise ProjectError(f"judge {judge_id} gave no verdict on {response_id!r} to review")
        return self.rater_id(reviewer, "human")

    def set_bloom_final(self, question_id: str, cognitive: str | None, knowledge: str | None,
                        adjudicator: str) -> None:
        """Decide a question's final Bloom label (both dimensions), committed at once; None for
        both withdraws the decision. The final label (``questions.bloom_*``) follows in the
        same transaction, by the rule of :mod:`physgrade.annotation.adjudication` (applied by
        the schema's triggers, which also apply it whenever a person's label changes)."""
        if (cognitive is None) != (knowledge is None):
            raise ScoreError("cognitive" if cognitive is None else "knowledge",
                             "an adjudicated label needs both a cognitive level and a "
                             "knowledge type")
        if cognitive is not None and cognitive not in BLOOM_COGNITIVE:
            raise ScoreError("cognitive", f"{cognitive!r} is not a Bloom cognitive level")
        if knowledge is not None and knowledge not in BLOOM_KNOWLEDGE:
            raise ScoreError("knowledge", f"{knowledge!r} is not a Bloom knowledge type")
        if not adjudicator.strip():
            raise ProjectError("an adjudication needs the adjudicator's name")
        with self.transaction():
            if not self.conn.execute("SELECT 1 FROM questions WHERE id = ?",
                                     (question_id,)).fetchone():
                raise ProjectError(f"no question {question_id!r} in this project")
            if cognitive is None:
                self.conn.execute("DELETE FROM bloom_adjudications WHERE question_id = ?",
                                  (question_id,))
                return
            self.conn.execute(
                "INSERT INTO bloom_adjudications (question_id, cognitive, knowledge, adjudicator, "
                "decided_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET "
                "cognitive = excluded.cognitive, knowledge = excluded.knowledge, "
                "adjudicator = excluded.adjudicator, decided_at = excluded.decided_at",
                (question_id, cognitive, knowledge, adjudicator.strip(), now_iso()))

    def bloom_adjudication(self, question_id: str) -> tuple[str, str, str, str] | None:
        """The decision on a question's final Bloom label: (cognitive, knowledge, adjudicator,
        decided_at), or None when nobody adjudicated it."""
        row = self.conn.execute(
            "SELECT cognitive, knowledge, adjudicator, decided_at FROM bloom_adjudications "
            "WHERE question_id = ?", (question_id,)).fetchone()
        return tuple(row) if row else None
