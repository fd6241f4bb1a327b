"""Grader packs: one grader's share of a study as a project file of its own.

A pack is an ordinary project (every command and the app open it) holding the responses
assigned to one grader, their questions and references (with the images of all three), the
project's rubric wording, the grader's own grades and, unless the study is blind, the verdicts
and grades of everyone else on those responses. Its ``pack_origin`` row says where it came
from; the project keeps a ``packs`` row and, in ``pack_base``, every person's score copied into
the pack: the common ancestor that :mod:`physgrade.team.merge` compares both sides with.

The pack is filled in a hidden part file beside its destination (:mod:`physgrade.team.parts`)
and renamed onto it only when complete, so a pack cut short never appears. Rows are copied by
``INSERT … SELECT`` through an attached database, raters keeping their ids.
"""

from __future__ import annotations

import os
import re
import sqlite3
import unicodedata
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from physgrade.changes import NOTHING, Changes, RecordKind
from physgrade.failures import explain, is_locked
from physgrade.project import Project, ProjectError, now_iso
from physgrade.raters import is_person, person_id
from physgrade.tasks import Task
from physgrade.team.parts import part_for
from physgrade.wording import count

#: What a pack file's name ends with.
PACK_SUFFIX = ".physgrade"
#: The name under which a pack being made is attached to the project's connection.
_SCHEMA = "pack"
#: The longest grader slug in a file name (the project's name comes before it).
_SLUG_LENGTH = 60
#: Steps of progress of one pack: copying the responses, the grades, recording the pack.
_STEPS = 3
#: The packs made: a change of the project's record of its packs alone.
PACKS_MADE = Changes.of(RecordKind.PACKS, responses=(), questions=())


@dataclass(frozen=True, slots=True)
class PackOrigin:
    """Where a pack came from (its ``pack_origin`` row)."""

    pack_id: str
    grader: str
    project_id: str
    project_name: str
    made_at: str
    blind: bool

    #: The columns of ``pack_origin`` that :meth:`from_row` takes, in order.
    COLUMNS = "pack_id, grader, project_id, project_name, made_at, blind"

    @classmethod
    def from_row(cls, row: Sequence) -> "PackOrigin":
        pack_id, grader, project, name, made_at, blind = row
        return cls(pack_id, grader, project, name, made_at, bool(blind))


@dataclass(frozen=True, slots=True)
class PackMade:
    """One pack written."""

    path: Path
    grader: str
    responses: int
    questions: int
    blind: bool

    def text(self) -> str:
        """One line for people: "pack for expert-1: 42 responses (30 questions), blind, at …"."""
        seen = "blind" if self.blind else "with the judges' verdicts and colleagues' grades"
        return (f"pack for {self.grader}: {count(self.responses, 'response')} "
                f"({count(self.questions, 'question')}), {seen}, written to {self.path}")


def origin(project: Project) -> PackOrigin | None:
    """Where ``project`` came from if it is a pack; None for a project that is no pack."""
    row = project.conn.execute(f"SELECT {PackOrigin.COLUMNS} FROM pack_origin").fetchone()
    return None if row is None else PackOrigin.from_row(row)


def project_id(project: Project) -> str:
    """The project's own id (a pack remembers it; a merge checks it)."""
    row = project.conn.execute("SELECT id FROM project_identity").fetchone()
    if row is None:
        raise ProjectError(f"{project.path} has no project id (its project_identity table is "
                           "empty)")
    return row[0]


def file_slug(text: str) -> str:
    """``text`` as a file-name part safe on every system: ASCII letters, digits and dashes."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    return slug[:_SLUG_LENGTH].rstrip("-") or "grader"


def pack_name(project: Project, grader: str) -> str:
    """The default file name of ``grader``'s pack: ``<project stem>-<grader slug>.physgrade``."""
    return f"{project.path.stem}-{file_slug(grader)}{PACK_SUFFIX}"


def pack_paths(project: Project, folder: Path, graders: Sequence[str]) -> list[Path]:
    """Where :func:`make_packs` writes each grader's pack in ``folder``: :func:`pack_name`,
    and ``-2``, ``-3`` … after it where two names make one slug (the app checks the same paths
    before it starts)."""
    paths: list[Path] = []
    for grader in graders:
        path = folder / pack_name(project, grader)
        number = 2
        while path in paths:
            path = folder / f"{Path(pack_name(project, grader)).stem}-{number}{PACK_SUFFIX}"
            number += 1
        paths.append(path)
    return paths


def make_pack(project: Project, grader: str, out: Path, *, blind: bool = True,
              task: Task | None = None) -> tuple[PackMade, Changes]:
    """Write ``grader``'s pack to ``out`` (a new file) and record it in the project.

    ``blind`` leaves out every verdict and grade but the grader's own. Refuses a grader with
    no assigned response, an ``out`` that exists and one in a folder that does not.
    """
    task = task or Task()
    out = Path(out)
    if out.exists():
        raise ProjectError(f"{out} already exists: choose another file name (a pack is never "
                           "written over a file)")
    if not out.parent.is_dir():
        raise ProjectError(f"folder {out.parent} does not exist")
    grader_id = _assignee(project, grader)
    pack_id = uuid.uuid4().hex
    try:
        with part_for(out) as partial:
            Project.create(partial).close()
            made = _fill(project, partial, _Pack(pack_id, out.name, grader, grader_id, blind),
                         task)
            if out.exists():  # made meanwhile: os.replace would write over it
                _forget(project, pack_id)
                raise ProjectError(f"{out} appeared while the pack was being made; nothing "
                                   "written")
            try:
                os.replace(partial, out)
            except OSError:
                _forget(project, pack_id)
                raise
    except (sqlite3.Error, OSError) as exc:
        if is_locked(exc):  # the project's lock: the part is this run's alone
            raise
        # A full disk or a folder that cannot be written: the pack's, by far the larger write.
        raise ProjectError(f"{explain(exc, out)}; the pack was not written") from exc
    return PackMade(out, grader, made.responses, made.questions, blind), PACKS_MADE


def make_packs(project: Project, folder: Path, graders: Sequence[str] | None = None, *,
               blind: bool = True, task: Task | None = None) -> tuple[list[PackMade], Changes]:
    """One pack per grader (None: everyone with an assignment) into ``folder``, named by
    :func:`pack_name`. Cancelling raises :class:`~physgrade.tasks.Cancelled` between two packs
    or inside one: the packs written before stay in ``folder`` and recorded in the project (the
    app says so), the one under way is not written."""
    task = task or Task()
    folder = Path(folder)
    if not folder.is_dir():
        raise ProjectError(f"folder {folder} does not exist")
    # Imported here: the app reads a pack's origin at start-up, and planning is not needed then.
    from physgrade.team.assign import assignees

    names = list(dict.fromkeys(graders)) if graders is not None else assignees(project)
    if not names:
        raise ProjectError("nobody has assigned responses: assign some first (physgrade assign)")
    for grader in names:  # before any pack is written
        _assignee(project, grader)
    paths = pack_paths(project, folder, names)
    taken = [path for path in paths if path.exists()]
    if taken:
        raise ProjectError(f"{taken[0]} already exists: move it away or choose another folder "
                           "(a pack is never written over a file)")
    made: list[PackMade] = []
    changes = NOTHING
    steps = len(names) * _STEPS
    for number, (grader, path) in enumerate(zip(names, paths)):
        task.report(number * _STEPS, steps, f"pack {number + 1} of {len(names)}: {grader}")
        pack, changed = make_pack(project, grader, path, blind=blind,
                                  task=task.part(number * _STEPS, steps))
        made.append(pack)
        changes |= changed
    task.report(steps, steps, f"{len(made)} packs written")
    return made, changes


def _assignee(project: Project, grader: str) -> int:
    """The rater id of ``grader``; refuses someone with no assigned response."""
    grader_id = person_id(project, grader)
    if grader_id is None or not project.conn.execute(
            "SELECT EXISTS (SELECT 1 FROM assignments WHERE grader_id = ?)",
            (grader_id,)).fetchone()[0]:
        raise ProjectError(f"{grader} has no assigned responses: assign some first "
                           "(physgrade assign)")
    return grader_id


# -- filling a pack ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Pack:
    """The pack being made."""

    id: str
    file_name: str
    grader: str
    grader_id: int
    blind: bool


@dataclass(frozen=True, slots=True)
class _Filled:
    responses: int
    questions: int


def _fill(project: Project, path: Path, pack: _Pack, task: Task) -> _Filled:
    """Copy the pack's rows into the new file at ``path`` (attached for the copy) and record
    the pack in the project, in one transaction."""
    conn = project.conn
    conn.execute(f"ATTACH ? AS {_SCHEMA}", (str(path),))
    try:
        # A single file, no write-ahead log beside it to be left behind by the rename; opening
        # the pack as a project puts it back in WAL mode.
        conn.execute(f"PRAGMA {_SCHEMA}.journal_mode = DELETE")
        with project.transaction():
            filled = _copy_rows(project, pack, task)
            task.report(2, _STEPS, "recording the pack in the project")
            _record(project, pack, filled)
    finally:
        conn.execute(f"DETACH {_SCHEMA}")
    return filled


def _copy_rows(project: Project, pack: _Pack, task: Task) -> _Filled:
    conn = project.conn
    p = _SCHEMA
    task.report(0, _STEPS, f"copying {pack.grader}'s responses")
    # The rows copied are the grader's own: the pack's history starts empty.
    conn.execute(f"INSERT INTO {p}.score_history_quiet (reason) VALUES ('making the pack')")
    conn.execute(f"INSERT INTO {p}.questions SELECT q.* FROM main.questions q WHERE q.id IN ("
                 "WITH RECURSIVE wanted(id) AS ("
                 "SELECT r.question_id FROM main.assignments a JOIN main.responses r "
                 "ON r.id = a.response_id WHERE a.grader_id = ? "
                 "UNION SELECT v.variant_of FROM main.questions v JOIN wanted w ON v.id = w.id "
                 "WHERE v.variant_of IS NOT NULL) SELECT id FROM wanted)", (pack.grader_id,))
    conn.execute(f"INSERT INTO {p}.responses SELECT r.* FROM main.assignments a "
                 "JOIN main.responses r ON r.id = a.response_id WHERE a.grader_id = ?",
                 (pack.grader_id,))
    # The images of those questions, their references and those responses, each once.
    shown = (f"(l.owner_kind IN ('question', 'reference') AND l.owner_id IN "
             f"(SELECT id FROM {p}.questions)) OR (l.owner_kind = 'response' AND l.owner_id IN "
             f"(SELECT id FROM {p}.responses))")
    conn.execute(f"INSERT INTO {p}.images SELECT i.* FROM main.images i WHERE i.sha256 IN "
                 f"(SELECT l.sha256 FROM main.image_links l WHERE {shown})")
    conn.execute(f"INSERT INTO {p}.image_links SELECT l.* FROM main.image_links l WHERE {shown}")
    task.check()
    # Blind: the grader's own grades only; else every verdict and grade of those responses.
    whose, only = ("WHERE t.rater_id = ?", (pack.grader_id,)) if pack.blind else ("", ())
    others = "" if pack.blind else "".join(
        f" UNION SELECT t.rater_id FROM {p}.responses x JOIN main.{table} t "
        "ON t.response_id = x.id" for table in ("scores", "assessments"))
    conn.execute(f"INSERT INTO {p}.raters SELECT * FROM main.raters WHERE id IN "
                 f"(SELECT ?{others})", (pack.grader_id,))
    for table in ("scores", "assessments"):
        conn.execute(f"INSERT INTO {p}.{table} SELECT t.* FROM {p}.responses x "
                     f"JOIN main.{table} t ON t.response_id = x.id {whose}", only)
    task.check()
    conn.execute(f"INSERT INTO {p}.assignments (grader_id, response_id, run_id) "
                 f"SELECT ?, id, NULL FROM {p}.responses", (pack.grader_id,))
    conn.execute(f"DELETE FROM {p}.rubric_levels")
    conn.execute(f"INSERT INTO {p}.rubric_levels SELECT * FROM main.rubric_levels")
    conn.execute(f"INSERT INTO {p}.pack_origin (pack_id, grader, project_id, project_name, "
                 "made_at, blind) VALUES (?, ?, ?, ?, ?, ?)",
                 (pack.id, pack.grader, project_id(project), project.path.name, now_iso(),
                  int(pack.blind)))
    conn.execute(f"DELETE FROM {p}.score_history_quiet")
    task.report(1, _STEPS, f"copied {pack.grader}'s responses")
    responses, questions = conn.execute(
        f"SELECT (SELECT count(*) FROM {p}.responses), (SELECT count(*) FROM {p}.questions)"
    ).fetchone()
    return _Filled(responses, questions)


def _record(project: Project, pack: _Pack, filled: _Filled) -> None:
    """The project's ``packs`` row, and as the pack's base every person's score copied."""
    conn = project.conn
    conn.execute("INSERT INTO packs (id, grader_id, file_name, made_at, blind, responses) "
                 "VALUES (?, ?, ?, ?, ?, ?)", (pack.id, pack.grader_id, pack.file_name,
                                              now_iso(), int(pack.blind), filled.responses))
    conn.execute(f"INSERT INTO pack_base SELECT ?, s.rater_id, s.response_id, s.rubric, "
                 f"s.criterion, s.value, s.note FROM {_SCHEMA}.scores s "
                 f"JOIN {_SCHEMA}.raters r ON r.id = s.rater_id WHERE {is_person()}",
                 (pack.id,))


def _forget(project: Project, pack_id: str) -> None:
    """Remove the record of a pack whose file could not be put in place."""
    with project.transaction():
        project.conn.execute("DELETE FROM pack_base WHERE pack_id = ?", (pack_id,))
        project.conn.execute("DELETE FROM packs WHERE id = ?", (pack_id,))
