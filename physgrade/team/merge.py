"""Merging grader packs back: three-way, per person, response and criterion, never losing work.

For every score a pack holds or held, three versions are compared (value and note together):
the *base* (``pack_base``: what the pack and the project last agreed on), *theirs* (the pack's
now) and *ours* (the project's now). A pack that did not change a score since the base brings
nothing; a change in the pack alone is applied; the same change on both sides is simply agreed
on; a change on both sides that differs is a *conflict*, kept in ``merge_conflicts`` for a
person to settle (:func:`resolve`) while the project keeps its value.

The pack's new history rows come along, marked with where they came from; the history triggers
stay quiet while the merge writes scores, since those rows already tell what happened. The rows
of a score whose pack value the project does not take (a conflict's) come as *proposals*
(:mod:`physgrade.score_history`), so that the project's history replays to its scores; keeping
the pack's side later is a change of its own, with its own row.

Each pack is read first into temporary tables (nothing changes while a pack is being checked),
then all packs are merged in ONE transaction: a merge cancelled, refused or killed half-way
leaves the project as it was. A pack that brings nothing new writes nothing at all, so merging
the same pack twice changes nothing.

The work is done by SQL over whole sets of rows (a pack of thousands of grades is a handful of
statements), with the decision per score written once, in :data:`_ACTION`.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from physgrade.changes import NOTHING, Changes, RecordKind
from physgrade.project import Project, ProjectError, migrations, now_iso
from physgrade.raters import HUMAN, ensure_rater, is_person
from physgrade.rubric import RUBRICS, ScoreError, value_text
from physgrade.score_history import attributed, is_applied, kept_from_pack, merged_from
from physgrade.scores import Scored, scored, write
from physgrade.tasks import Task
from physgrade.team.packs import PackOrigin, project_id
from physgrade.wording import count

KEEP_PACK, KEEP_PROJECT = "pack", "project"
#: What a person may keep when settling a conflict.
KEEPS = (KEEP_PACK, KEEP_PROJECT)
#: The first schema version that has packs.
FIRST_PACK_SCHEMA = 8
#: The name a pack is attached under while it is read.
_SCHEMA = "merge_pack"
#: Steps of progress per pack: reading it, then merging it (keys, checks, writes, history).
_READ_STEPS, _MERGE_STEPS = 1, 4


@dataclass(frozen=True, slots=True)
class Conflict:
    """One criterion a person scored differently in the project and in a pack."""

    id: int
    pack_file: str
    grader: str
    response_id: str
    rubric: str
    criterion: str
    project_value: int | None
    project_given: bool
    project_note: str | None
    project_time: str | None
    pack_value: int | None
    pack_given: bool
    pack_note: str | None
    pack_time: str | None

    def text(self) -> str:
        """One line: response, criterion, grader, both values and both times."""
        project = _side(self.project_given, self.project_value, self.project_note,
                        self.project_time)
        pack = _side(self.pack_given, self.pack_value, self.pack_note, self.pack_time)
        return (f"#{self.id} {self.response_id} {self.criterion} {self.grader}: "
                f"project {project}; pack {pack} ({self.pack_file})")


def _side(given: bool, value: int | None, note: str | None, time: str | None) -> str:
    text = value_text(value) if given else "not scored"
    if given and note:
        text += f" ({note!r})"
    return f"{text} @ {time}" if time else text


@dataclass(frozen=True, slots=True)
class PackMerged:
    """What one pack brought."""

    file: str
    grader: str
    applied: int      # criteria changed in the project (set, changed or removed)
    conflicts: int    # conflicts found or brought up to date
    history: int      # history rows brought
    already: bool     # nothing new: merged before, or unchanged since it was made

    def text(self) -> str:
        """In plain words: what came into the project, what waits, what the history keeps."""
        if self.already:
            return f"{self.file} ({self.grader}): nothing new"
        parts = [f"{count(self.applied, 'score')} taken into the project (given, changed or "
                 "taken back in the pack)"]
        if self.conflicts:
            parts.append(f"{count(self.conflicts, 'score')} that differ from the project's "
                         "own, kept apart for a person to decide")
        parts.append(f"{count(self.history, 'change')} of the grader's kept in the history")
        return f"{self.file} ({self.grader}): {'; '.join(parts)}"


@dataclass(frozen=True, slots=True)
class MergeResult:
    packs: tuple[PackMerged, ...]
    conflicts: tuple[Conflict, ...]   # every open conflict after the merge
    changes: Changes

    def text(self) -> str:
        """A line per pack, then what waits for a person, if anything."""
        lines = [pack.text() for pack in self.packs]
        if self.conflicts:
            lines.append(f"{count(len(self.conflicts), 'conflict')} "
                         f"wait{'s' if len(self.conflicts) == 1 else ''} for a person: "
                         "the same grader gave a criterion one value in the project and "
                         "another in a pack, and nothing was overwritten")
        return "\n".join(lines)


# -- merging -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Read:
    """A pack read into the temporary tables (as number ``index``)."""

    index: int
    path: Path
    origin: PackOrigin
    last_history: int
    read_from: int            # the project's history_merged of the pack when it was read
    merged_mark: str | None   # the pack's history row there
    last_mark: str | None     # its last history row
    sha256: str               # of the file as read


def merge(project: Project, paths: Sequence[Path], task: Task | None = None) -> MergeResult:
    """Merge the packs at ``paths`` into the project, in order, all in one transaction.

    Refuses (changing nothing) a file that is no pack of this project, cannot be read, holds
    a score the rubric does not allow, or is an older copy of a pack merged already.
    """
    task = task or Task()
    paths = [Path(path) for path in paths]
    if not paths:
        raise ValueError("name at least one pack to merge")
    total = len(paths) * (_READ_STEPS + _MERGE_STEPS)
    conn = project.conn
    _create_work_tables(conn)
    try:
        read = []
        for index, path in enumerate(paths):
            task.report(index * _READ_STEPS, total, f"reading {path.name}")
            read.append(_read_pack(project, path, index))
        merged: list[PackMerged] = []
        changes = NOTHING
        with project.transaction():
            for pack in read:
                offset = len(paths) * _READ_STEPS + pack.index * _MERGE_STEPS
                result, changed = _merge_pack(project, pack, task.part(offset, total))
                merged.append(result)
                changes |= changed
            task.report(total, total, "committing the merge")
    finally:
        _drop_work_tables(conn)
    return MergeResult(tuple(merged), tuple(open_conflicts(project)), changes)


#: The temporary tables of a merge: the packs as read, then one pack's keys at a time.
_WORK_TABLES = {
    "merge_scores": "pack INTEGER, name TEXT, response_id TEXT, rubric TEXT, criterion TEXT, "
                    "value INTEGER, note TEXT, updated_at TEXT, "
                    "PRIMARY KEY (pack, name, response_id, rubric, criterion)",
    "merge_assessments": "pack INTEGER, name TEXT, response_id TEXT, rubric TEXT, comment TEXT, "
                         "assessed_at TEXT, PRIMARY KEY (pack, name, response_id, rubric)",
    "merge_history": "pack INTEGER, id INTEGER, name TEXT, response_id TEXT, rubric TEXT, "
                     "criterion TEXT, action TEXT, old_value INTEGER, new_value INTEGER, "
                     "changed_by TEXT, changed_at TEXT, PRIMARY KEY (pack, id)",
    "merge_raters": "name TEXT PRIMARY KEY, rater_id INTEGER NOT NULL",
    "merge_theirs": "rater_id INTEGER, response_id TEXT, rubric TEXT, criterion TEXT, "
                    "value INTEGER, note TEXT, updated_at TEXT, "
                    "PRIMARY KEY (rater_id, response_id, rubric, criterion)",
    "merge_keys": "rater_id INTEGER, response_id TEXT, rubric TEXT, criterion TEXT, "
                  "base_given INTEGER, base_value INTEGER, base_note TEXT, "
                  "their_given INTEGER, their_value INTEGER, their_note TEXT, their_time TEXT, "
                  "our_given INTEGER, our_value INTEGER, our_note TEXT, our_time TEXT, "
                  "action TEXT, PRIMARY KEY (rater_id, response_id, rubric, criterion)",
    # Each value a criterion takes, and whether a multiple-choice question's response may take
    # it too (those are a subset). value NULL is N/A: a rowid table, since a WITHOUT ROWID key
    # takes no NULL.
    "merge_allowed": "rubric TEXT, criterion TEXT, value INTEGER, with_options INTEGER",
}


def _create_work_tables(conn: sqlite3.Connection) -> None:
    _drop_work_tables(conn)
    for name, columns in _WORK_TABLES.items():
        rowid = "" if name == "merge_allowed" else " WITHOUT ROWID"
        conn.execute(f"CREATE TEMP TABLE {name} ({columns}){rowid}")
    conn.execute("CREATE INDEX temp.merge_history_key ON merge_history (pack, name, "
                 "response_id)")
    conn.execute("CREATE INDEX temp.merge_allowed_key ON merge_allowed (rubric, criterion, "
                 "value)")
    conn.executemany("INSERT INTO temp.merge_allowed VALUES (?, ?, ?, ?)",
                     [(rubric.key, criterion.key, value, value in criterion.choices(True))
                      for rubric in RUBRICS.values() for criterion in rubric.criteria
                      for value in criterion.choices(False)])


def _drop_work_tables(conn: sqlite3.Connection) -> None:
    for name in _WORK_TABLES:
        conn.execute(f"DROP TABLE IF EXISTS temp.{name}")


# -- 1. reading a pack, writing nothing ---------------------------------------------------------


def _read_pack(project: Project, path: Path, index: int) -> _Read:
    """Check that ``path`` is a pack of this project and copy what the merge needs into the
    temporary tables (the pack is attached to the project's connection meanwhile)."""
    name = path.name
    if not path.is_file():
        raise ProjectError(f"no pack file at {path}; nothing merged")
    conn = project.conn
    try:
        conn.execute(f"ATTACH ? AS {_SCHEMA}", (str(path.resolve()),))
    except sqlite3.Error as exc:
        raise ProjectError(f"cannot open {name}: {exc}; nothing merged") from exc
    try:
        pack_origin = _check_pack(project, name)
        row = conn.execute("SELECT history_merged FROM packs WHERE id = ?",
                           (pack_origin.pack_id,)).fetchone()
        if row is None:
            raise ProjectError(f"{name} is a pack of this project that the project has no "
                               f"record of (pack {pack_origin.pack_id[:8]}, made from a copy "
                               "of it?); nothing merged")
        conn.execute("BEGIN")  # one snapshot of the pack for every statement; no write lock
        try:
            last_history = _copy_pack(conn, index, row[0])
            merged_mark, last_mark = (_mark(conn, f"{_SCHEMA}.score_history", row[0]),
                                      _mark(conn, f"{_SCHEMA}.score_history", last_history))
            sha256 = _sha256(path)  # while the snapshot is read: the file as copied
        finally:
            conn.execute("COMMIT")  # of the temporary tables alone
    except sqlite3.Error as exc:
        raise ProjectError(f"cannot read {name} as a pack: {exc}; nothing merged") from exc
    finally:
        conn.execute(f"DETACH {_SCHEMA}")
    return _Read(index, path, pack_origin, last_history, row[0], merged_mark, last_mark, sha256)


def _mark(conn: sqlite3.Connection, table: str, history_id: int, *where: str) -> str | None:
    """A pack's history row ``history_id`` (in ``table``, narrowed by ``where``) in one line,
    None where there is none: what the project remembers of the last row it merged, to know
    the same pack again."""
    row = conn.execute(
        "SELECT changed_at || '|' || response_id || '|' || rubric || '|' || criterion || '|' "
        f"|| action || '|' || coalesce(new_value, '') FROM {table} "
        f"WHERE {' AND '.join(['id = ?', *where])}", (history_id,)).fetchone()
    return None if row is None else row[0]


def _check_pack(project: Project, name: str) -> PackOrigin:
    conn = project.conn
    try:
        tables = {t for (t,) in conn.execute(f"SELECT name FROM {_SCHEMA}.sqlite_master "
                                             "WHERE type = 'table'")}
    except sqlite3.DatabaseError as exc:
        raise ProjectError(f"{name} is not a physgrade pack (not an SQLite file: {exc}); "
                           "nothing merged") from exc
    version = conn.execute(f"PRAGMA {_SCHEMA}.user_version").fetchone()[0]
    if version > len(migrations()):
        raise ProjectError(f"{name} was made by a newer physgrade (schema {version}, this "
                           f"version knows {len(migrations())}); please upgrade")
    rows = (conn.execute(f"SELECT {PackOrigin.COLUMNS} FROM {_SCHEMA}.pack_origin").fetchall()
            if "pack_origin" in tables and version >= FIRST_PACK_SCHEMA else [])
    if len(rows) != 1:
        what = "a project, not a pack" if "questions" in tables else "no physgrade file"
        raise ProjectError(f"{name} is not a physgrade pack ({what}); nothing merged")
    found = PackOrigin.from_row(rows[0])
    own_id = project_id(project)
    if found.project_id != own_id:
        # Told apart by id and where this one lies: two projects may share a file name.
        other = (f"another project also named {found.project_name}"
                 if found.project_name == project.path.name
                 else f"another project, {found.project_name}")
        made = found.made_at[:16].replace("T", " ")
        raise ProjectError(f"{name} is a pack of {other} (project id {found.project_id[:8]}; "
                           f"this one, {project.path}, is {own_id[:8]}), made for "
                           f"{found.grader} at {made} UTC: merge it into the project it was "
                           "made from; nothing merged")
    return found


def _copy_pack(conn: sqlite3.Connection, index: int, history_merged: int) -> int:
    """People's scores and assessments and the history rows not merged yet, by person name;
    returns the pack's last history id."""
    p = _SCHEMA
    people = f"JOIN {p}.raters r ON r.id = t.rater_id WHERE {is_person()}"
    conn.execute(f"INSERT INTO temp.merge_scores SELECT ?, r.name, t.response_id, t.rubric, "
                 f"t.criterion, t.value, t.note, t.updated_at FROM {p}.scores t {people}",
                 (index,))
    conn.execute(f"INSERT INTO temp.merge_assessments SELECT ?, r.name, t.response_id, "
                 f"t.rubric, t.comment, t.assessed_at FROM {p}.assessments t {people}",
                 (index,))
    conn.execute(f"INSERT INTO temp.merge_history SELECT ?, t.id, r.name, t.response_id, "
                 "t.rubric, t.criterion, t.action, t.old_value, t.new_value, t.changed_by, "
                 f"t.changed_at FROM {p}.score_history t {people} AND t.id > ?",
                 (index, history_merged))
    return conn.execute(f"SELECT coalesce(max(id), 0) FROM {p}.score_history").fetchone()[0]


# -- 2. merging one pack, inside the merge's transaction ----------------------------------------

_KEY_COLUMNS = "rater_id, response_id, rubric, criterion"


def _key(a: str, b: str = "k") -> str:
    """SQL: rows ``a`` and ``b`` are of one person, response, rubric and criterion."""
    return " AND ".join(f"{a}.{column} = {b}.{column}" for column in _KEY_COLUMNS.split(", "))


def _same(a: str, b: str) -> str:
    """SQL: sides ``a`` and ``b`` of a key in merge_keys hold the same (given, value, note);
    an absent side's value and note are NULL."""
    return f"({a}_given = {b}_given AND {a}_value IS {b}_value AND {a}_note IS {b}_note)"


#: The decision per key changed in the pack since the base.
_ACTION = (f"CASE WHEN {_same('our', 'base')} THEN 'apply' "
           f"WHEN {_same('our', 'their')} THEN 'agree' ELSE 'conflict' END")


def _merge_pack(project: Project, pack: _Read, task: Task) -> tuple[PackMerged, Changes]:
    conn = project.conn
    pack_id, name = pack.origin.pack_id, pack.path.name
    task.report(0, None, f"comparing {name}")
    history_merged, history_mark = conn.execute(
        "SELECT history_merged, history_mark FROM packs WHERE id = ?", (pack_id,)).fetchone()
    if pack.last_history < history_merged:
        # A pack's history only grows: this file is an older copy, whose grades would
        # silently take back the later ones merged already.
        raise ProjectError(f"{name} is an older copy of a pack merged already (it holds "
                           f"{count(pack.last_history, 'change')} of the "
                           f"{history_merged:,} merged): merge the grader's latest copy; "
                           "nothing merged")
    merged_mark = (pack.merged_mark if history_merged == pack.read_from else  # or merged
                   _mark(conn, "temp.merge_history", history_merged,  # just now in this call
                         f"pack = {pack.index}"))
    if history_mark is not None and merged_mark != history_mark:
        # Another copy of the same pack was graded and merged: this one's grades would
        # silently take back that copy's.
        raise ProjectError(f"{name} is a copy of a pack whose other copy, graded elsewhere, "
                           "was merged already: their histories part. Merge one copy only, "
                           "or ask the grader which is right; nothing merged")
    changes = _map_people(project, pack, history_merged)
    _classify(conn, pack, pack_id)
    counts = dict(conn.execute("SELECT action, count(*) FROM temp.merge_keys GROUP BY action"))
    task.report(1, None, f"checking {name}")
    _validate(conn, name)
    task.report(2, None, f"merging {name}")
    applied = counts.get("apply", 0)
    if applied:
        _apply(project, pack, history_merged)
        changes |= _touched(conn, "'apply'", RecordKind.SCORES)
    conflicts = counts.get("conflict", 0)
    if conflicts:
        _record_conflicts(conn, pack_id)
        changes |= _touched(conn, "'conflict'", RecordKind.CONFLICTS)
    settled = _settle_outdated(conn, pack_id, name)
    changes |= settled
    agreed = applied + counts.get("agree", 0)
    if agreed:
        _advance_base(conn, pack_id)
    task.report(3, None, f"bringing the history of {name}")
    history = _bring_history(conn, pack, history_merged)
    changed = bool(agreed or conflicts or settled or history)
    if changed:
        conn.execute("INSERT INTO merges (pack_id, file_name, sha256, merged_at, applied, "
                     "conflicts) VALUES (?, ?, ?, ?, ?, ?)",
                     (pack_id, name, pack.sha256, now_iso(), applied, conflicts))
    return PackMerged(name, pack.origin.grader, applied, conflicts, history, not changed), changes


def _map_people(project: Project, pack: _Read, history_merged: int) -> Changes:
    """The project's rater id of each person of the pack with scores or new history (made
    where the project has none: such a person's work is new, so the merge writes anyway)."""
    conn = project.conn
    conn.execute("DELETE FROM temp.merge_raters")
    names = [n for (n,) in conn.execute(
        "SELECT name FROM temp.merge_scores WHERE pack = ? UNION SELECT name FROM "
        "temp.merge_history WHERE pack = ? AND id > ?", (pack.index, pack.index, history_merged))]
    changes = NOTHING
    for name in names:
        try:
            rater, made = ensure_rater(project, name, HUMAN)
        except ProjectError as exc:
            raise ProjectError(f"{pack.path.name}: {exc}; nothing merged") from exc
        changes |= made
        conn.execute("INSERT INTO temp.merge_raters VALUES (?, ?)", (name, rater))
    return changes


def _classify(conn: sqlite3.Connection, pack: _Read, pack_id: str) -> None:
    """merge_keys: every key the pack changed since the base, its three sides and action."""
    conn.execute("DELETE FROM temp.merge_theirs")
    conn.execute("INSERT INTO temp.merge_theirs SELECT m.rater_id, s.response_id, s.rubric, "
                 "s.criterion, s.value, s.note, s.updated_at FROM temp.merge_scores s "
                 "JOIN temp.merge_raters m ON m.name = s.name WHERE s.pack = ?", (pack.index,))
    conn.execute("DELETE FROM temp.merge_keys")
    sides = ("b.rater_id IS NOT NULL AS base_given, b.value AS base_value, b.note AS base_note, "
             "t.rater_id IS NOT NULL AS their_given, t.value AS their_value, "
             "t.note AS their_note, t.updated_at AS their_time, "
             "o.rater_id IS NOT NULL AS our_given, o.value AS our_value, o.note AS our_note, "
             "o.updated_at AS our_time")
    # The keys the pack has a score for, then those it had one for in the base and has no more.
    conn.execute(
        f"INSERT INTO temp.merge_keys SELECT *, {_ACTION} FROM (SELECT t.rater_id, "
        f"t.response_id, t.rubric, t.criterion, {sides} FROM temp.merge_theirs t "
        f"LEFT JOIN main.pack_base b ON b.pack_id = ? AND {_key('b', 't')} "
        f"LEFT JOIN main.scores o ON {_key('o', 't')}) "
        f"WHERE NOT {_same('their', 'base')}", (pack_id,))
    conn.execute(
        f"INSERT INTO temp.merge_keys SELECT *, {_ACTION} FROM (SELECT b.rater_id, "
        f"b.response_id, b.rubric, b.criterion, {sides} FROM main.pack_base b "
        f"LEFT JOIN temp.merge_theirs t ON {_key('t', 'b')} "
        f"LEFT JOIN main.scores o ON {_key('o', 'b')} "
        "WHERE b.pack_id = ? AND t.rater_id IS NULL)", (pack_id,))
    # A side without a score: the time it was last changed there, from the history. Only the
    # pack's history not merged yet is read: a removal merged before with no change since is
    # one an open conflict holds already, with its time.
    conn.execute(
        "UPDATE temp.merge_keys AS k SET their_time = coalesce((SELECT max(h.changed_at) "
        "FROM temp.merge_history h JOIN temp.merge_raters m ON m.name = h.name "
        "WHERE h.pack = ? AND m.rater_id = k.rater_id "
        "AND h.response_id = k.response_id AND h.rubric = k.rubric "
        "AND h.criterion = k.criterion), (SELECT c.pack_time FROM main.merge_conflicts c "
        f"WHERE c.pack_id = ? AND c.resolution IS NULL AND NOT c.pack_given AND {_key('c')})) "
        "WHERE action = 'conflict' AND NOT their_given", (pack.index, pack_id))
    conn.execute(
        "UPDATE temp.merge_keys AS k SET our_time = (SELECT max(h.changed_at) "
        f"FROM main.score_history h WHERE {_key('h')} AND {is_applied('h')}) "
        "WHERE action = 'conflict' AND NOT our_given")
    # A conflict already open with the same two sides is not found again.
    conn.execute(
        "UPDATE temp.merge_keys AS k SET action = 'known' WHERE action = 'conflict' AND EXISTS ("
        "SELECT 1 FROM main.merge_conflicts c WHERE c.pack_id = ? AND c.resolution IS NULL "
        f"AND {_key('c')} AND c.pack_given = k.their_given AND c.pack_value IS k.their_value "
        "AND c.pack_note IS k.their_note AND c.pack_time IS k.their_time "
        "AND c.project_given = k.our_given AND c.project_value IS k.our_value "
        "AND c.project_note IS k.our_note AND c.project_time IS k.our_time)", (pack_id,))


def _validate(conn: sqlite3.Connection, name: str) -> None:
    """Refuse the merge if a pack value to apply or to offer is not one the rubric allows."""
    options = ("SELECT q.options IS NOT NULL FROM main.responses r JOIN main.questions q "
               "ON q.id = r.question_id WHERE r.id = {}")
    wrong = conn.execute(
        "SELECT k.response_id, k.rubric, k.criterion, k.their_value FROM temp.merge_keys k "
        "LEFT JOIN temp.merge_allowed a ON a.rubric = k.rubric AND a.criterion = k.criterion "
        "AND a.value IS k.their_value WHERE k.their_given AND k.action IN ('apply', 'conflict') "
        "AND (a.rubric IS NULL OR NOT EXISTS (SELECT 1 FROM main.responses r WHERE "
        f"r.id = k.response_id) OR (NOT a.with_options AND ({options.format('k.response_id')})))"
        " LIMIT 1").fetchone()
    if wrong is None:
        return
    response_id, rubric, criterion, value = wrong
    where = f"{name}, response {response_id}, criterion {criterion}"
    multiple_choice = conn.execute(options.format("?"), (response_id,)).fetchone()
    if multiple_choice is None:
        raise ProjectError(f"{where}: the response is not in this project; nothing merged")
    if rubric not in RUBRICS:
        raise ProjectError(f"{where}: unknown rubric {rubric!r}; nothing merged")
    try:
        RUBRICS[rubric].validate_one(criterion, value, bool(multiple_choice[0]))
    except ScoreError as exc:
        raise ProjectError(f"{where}: {exc}; nothing merged") from exc
    raise AssertionError(f"{where}: refused by SQL, allowed by the rubric")  # pragma: no cover


def _apply(project: Project, pack: _Read, history_merged: int) -> None:
    """Write the pack's side of every key changed in the pack alone, the history triggers quiet:
    the pack's history rows of that change tell what happened. Where those rows came before, as
    the pack's side of a conflict still open that the project has since given up (it went back
    on its own change), the triggers first record the change, as the merge's."""
    conn = project.conn
    told_before = (
        "EXISTS (SELECT 1 FROM main.merge_conflicts c WHERE c.pack_id = ? "
        f"AND c.resolution IS NULL AND {_key('c')}) AND (k.rater_id, k.response_id, k.rubric, "
        "k.criterion) NOT IN (SELECT m.rater_id, h.response_id, h.rubric, h.criterion "
        "FROM temp.merge_history h JOIN temp.merge_raters m ON m.name = h.name "
        "WHERE h.pack = ? AND h.id > ?)")
    with attributed(project, merged_from(pack.path.name, pack.origin.pack_id)):
        _write_theirs(conn, told_before, (pack.origin.pack_id, pack.index, history_merged))
    conn.execute("INSERT INTO score_history_quiet (reason) VALUES ('merging a pack')")
    _write_theirs(conn)  # those written just now again, unchanged
    conn.execute("DELETE FROM score_history_quiet")
    # Every grade has its assessment row (exports and counts read them): made where missing,
    # with the pack's overall comment unless the project has one.
    conn.execute(
        "INSERT INTO main.assessments (rater_id, response_id, rubric, comment, assessed_at) "
        "SELECT k.rater_id, k.response_id, k.rubric, a.comment, "
        "coalesce(a.assessed_at, max(k.their_time)) FROM temp.merge_keys k "
        "JOIN temp.merge_raters m ON m.rater_id = k.rater_id "
        "LEFT JOIN temp.merge_assessments a ON a.pack = ? AND a.name = m.name "
        "AND a.response_id = k.response_id AND a.rubric = k.rubric "
        "WHERE k.action = 'apply' AND k.their_given GROUP BY k.rater_id, k.response_id, k.rubric "
        "ON CONFLICT DO UPDATE SET assessed_at = max(assessed_at, excluded.assessed_at), "
        "comment = coalesce(comment, excluded.comment)", (pack.index,))


def _write_theirs(conn: sqlite3.Connection, which: str = "TRUE",
                  parameters: tuple[object, ...] = ()) -> None:
    """Write the pack's side of the keys to apply (those that ``which``, SQL over merge_keys
    ``k`` taking ``parameters``, selects)."""
    conn.execute(
        f"INSERT INTO main.scores ({_KEY_COLUMNS}, value, note, updated_at) "
        f"SELECT {_KEY_COLUMNS}, their_value, their_note, their_time FROM temp.merge_keys k "
        f"WHERE action = 'apply' AND their_given AND {which} ON CONFLICT ({_KEY_COLUMNS}) "
        "DO UPDATE SET value = excluded.value, note = excluded.note, "
        "updated_at = excluded.updated_at", parameters)
    conn.execute(
        f"DELETE FROM main.scores WHERE ({_KEY_COLUMNS}) IN (SELECT {_KEY_COLUMNS} "
        f"FROM temp.merge_keys k WHERE action = 'apply' AND NOT their_given AND {which})",
        parameters)


def _record_conflicts(conn: sqlite3.Connection, pack_id: str) -> None:
    """New conflicts, or an open one of the same key brought up to date."""
    sides = ("project_value, project_given, project_note, project_time, pack_value, "
             "pack_given, pack_note, pack_time")
    conn.execute(
        f"INSERT INTO main.merge_conflicts (pack_id, {_KEY_COLUMNS}, {sides}, found_at) "
        f"SELECT ?, {_KEY_COLUMNS}, our_value, our_given, our_note, our_time, their_value, "
        "their_given, their_note, their_time, ? FROM temp.merge_keys WHERE action = 'conflict' "
        f"ON CONFLICT (pack_id, {_KEY_COLUMNS}) WHERE resolution IS NULL DO UPDATE SET "
        + ", ".join(f"{column} = excluded.{column}" for column in sides.split(", ")),
        (pack_id, now_iso()))


def _settle_outdated(conn: sqlite3.Connection, pack_id: str, name: str) -> Changes:
    """Open conflicts of this pack that the two sides no longer disagree on: the pack went back
    to the base (the project's value stands) or the two now agree or the project went back (the
    pack's stands). Returns the conflicts changed, of their responses and questions."""
    outdated = ("pack_id = ? AND resolution IS NULL AND NOT EXISTS (SELECT 1 FROM "
                f"temp.merge_keys k WHERE {_key('merge_conflicts')} "
                "AND k.action IN ('conflict', 'known'))")
    rows = conn.execute(
        "SELECT DISTINCT merge_conflicts.response_id, r.question_id FROM merge_conflicts "
        f"JOIN main.responses r ON r.id = merge_conflicts.response_id WHERE {outdated}",
        (pack_id,)).fetchall()
    if not rows:
        return NOTHING
    conn.execute(
        "UPDATE merge_conflicts SET resolution = CASE WHEN EXISTS (SELECT 1 FROM "
        f"temp.merge_keys k WHERE {_key('merge_conflicts')}) THEN ? ELSE ? END, "
        f"resolved_by = ?, resolved_at = ? WHERE {outdated}",
        (KEEP_PACK, KEEP_PROJECT, f"merge of {name}", now_iso(), pack_id))
    return Changes.of(RecordKind.CONFLICTS, responses=[r for r, _ in rows],
                      questions=[q for _, q in rows])


def _advance_base(conn: sqlite3.Connection, pack_id: str) -> None:
    """The pack and the project now agree on every key applied or agreed on."""
    agreed = "action IN ('apply', 'agree')"
    conn.execute(
        f"INSERT INTO main.pack_base (pack_id, {_KEY_COLUMNS}, value, note) "
        f"SELECT ?, {_KEY_COLUMNS}, their_value, their_note FROM temp.merge_keys "
        f"WHERE {agreed} AND their_given ON CONFLICT DO UPDATE SET value = excluded.value, "
        "note = excluded.note", (pack_id,))
    conn.execute(
        f"DELETE FROM main.pack_base WHERE pack_id = ? AND ({_KEY_COLUMNS}) IN (SELECT "
        f"{_KEY_COLUMNS} FROM temp.merge_keys WHERE {agreed} AND NOT their_given)", (pack_id,))


def _bring_history(conn: sqlite3.Connection, pack: _Read, history_merged: int) -> int:
    """Copy the pack's history rows not merged yet, saying where they came from. The rows of a
    score whose pack value the project does not hold now (a conflict's pack side) are
    proposals: the project's history replays to the project's scores."""
    if pack.last_history <= history_merged:
        return 0
    same_score = ("{0}.rater_id = m.rater_id AND {0}.response_id = h.response_id "
                  "AND {0}.rubric = h.rubric AND {0}.criterion = h.criterion")
    brought = conn.execute(
        "INSERT INTO main.score_history (rater_id, response_id, rubric, criterion, action, "
        "old_value, new_value, changed_by, changed_at, source, proposed) SELECT m.rater_id, "
        "h.response_id, h.rubric, h.criterion, h.action, h.old_value, h.new_value, "
        "h.changed_by, h.changed_at, ?, NOT ((o.rater_id IS NOT NULL) = (t.rater_id IS NOT NULL) "
        "AND o.value IS t.value) FROM temp.merge_history h JOIN temp.merge_raters m "
        f"ON m.name = h.name LEFT JOIN main.scores o ON {same_score.format('o')} "
        f"LEFT JOIN temp.merge_theirs t ON {same_score.format('t')} "
        "WHERE h.pack = ? AND h.id > ? ORDER BY h.id",
        (merged_from(pack.path.name, pack.origin.pack_id), pack.index, history_merged)).rowcount
    conn.execute("UPDATE packs SET history_merged = ?, history_mark = ? WHERE id = ?",
                 (pack.last_history, pack.last_mark, pack.origin.pack_id))
    return brought


def _touched(conn: sqlite3.Connection, actions: str, kind: RecordKind) -> Changes:
    """``kind`` changed for the responses (and their questions) of keys with ``actions``."""
    rows = conn.execute(
        "SELECT DISTINCT k.response_id, r.question_id FROM temp.merge_keys k "
        f"JOIN main.responses r ON r.id = k.response_id WHERE k.action IN ({actions})").fetchall()
    return Changes.of(kind, responses=[r for r, _ in rows], questions=[q for _, q in rows])


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as data:
        for block in iter(lambda: data.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# -- conflicts -----------------------------------------------------------------------------------

#: A conflict's fields, in :class:`Conflict`'s order, and the tables they come from.
_CONFLICT_FIELDS = (
    "c.id, p.file_name, r.name, c.response_id, c.rubric, c.criterion, c.project_value, "
    "c.project_given, c.project_note, c.project_time, c.pack_value, c.pack_given, c.pack_note, "
    "c.pack_time")
_CONFLICT_TABLES = ("merge_conflicts c JOIN packs p ON p.id = c.pack_id "
                    "JOIN raters r ON r.id = c.rater_id")


def _conflict(row: Sequence) -> Conflict:
    values = list(row)
    values[7], values[11] = bool(values[7]), bool(values[11])
    return Conflict(*values)


def open_conflicts(project: Project) -> list[Conflict]:
    """Every conflict waiting for a person, oldest first."""
    return [_conflict(row) for row in project.conn.execute(
        f"SELECT {_CONFLICT_FIELDS} FROM {_CONFLICT_TABLES} WHERE c.resolution IS NULL "
        "ORDER BY c.id")]


def resolve(project: Project, conflict_ids: Iterable[int], keep: str, by: str) -> Changes:
    """Settle open conflicts, keeping the pack's side or the project's, as ``by`` decided.

    Keeping the pack writes its value and note (or removes the score the pack did not have) as
    any grade is written, with a history row that says so. Either way the pack and the project
    then agree on the pack's side, so merging that pack again does not raise it again.
    """
    if keep not in KEEPS:
        raise ValueError(f"keep must be {' or '.join(KEEPS)}, not {keep!r}")
    by = by.strip()
    if not by:
        raise ValueError("say who settles the conflicts")
    ids = list(dict.fromkeys(int(i) for i in conflict_ids))
    if not ids:
        raise ValueError("no conflict named")
    conn = project.conn
    changes = NOTHING
    with project.transaction():  # read under the write lock: nobody settles them meanwhile
        # The ids as one JSON parameter: any number of them, past SQLite's variable limit.
        found = {row[3]: row for row in conn.execute(
            f"SELECT c.resolution, c.pack_id, c.rater_id, {_CONFLICT_FIELDS} FROM "
            f"{_CONFLICT_TABLES} WHERE c.id IN (SELECT value FROM json_each(?))",
            (json.dumps(ids),))}
        unknown = [i for i in ids if i not in found]
        if unknown:
            raise ProjectError(f"no conflict {', '.join(map(str, unknown))} in this project")
        settled = [i for i in ids if found[i][0] is not None]
        if settled:
            raise ProjectError(f"conflict {', '.join(map(str, settled))} "
                               f"{'is' if len(settled) == 1 else 'are'} already resolved")
        for conflict_id in ids:
            _, pack_id, rater, *fields = found[conflict_id]
            conflict = _conflict(fields)
            response = scored(project, conflict.response_id)
            if keep == KEEP_PACK and _keep_pack(project, response, conflict, rater, by):
                changes |= response.changes()
            changes |= Changes.of(RecordKind.CONFLICTS, responses=[response.response_id],
                                  questions=[response.question_id])
            conn.execute("UPDATE merge_conflicts SET resolution = ?, resolved_by = ?, "
                         "resolved_at = ? WHERE id = ?", (keep, by, now_iso(), conflict_id))
            _agree_on_pack(conn, pack_id, rater, conflict)
    return changes


def _keep_pack(project: Project, response: Scored, conflict: Conflict, rater: int,
               by: str) -> bool:
    """Write the pack's side of ``conflict`` through the ordinary path (history by trigger);
    False where the project has it already."""
    conn = project.conn
    key = (rater, conflict.response_id, conflict.rubric, conflict.criterion)
    where = "rater_id = ? AND response_id = ? AND rubric = ? AND criterion = ?"
    now = conn.execute(f"SELECT value, note FROM scores WHERE {where}", key).fetchone()
    if (now is not None) == conflict.pack_given and (
            now is None or tuple(now) == (conflict.pack_value, conflict.pack_note)):
        return False
    with attributed(project, kept_from_pack(conflict.id, by, conflict.pack_file)):
        if conflict.pack_given:
            value = RUBRICS[conflict.rubric].validate_one(conflict.criterion, conflict.pack_value,
                                                          response.multiple_choice)
            write(project, rater, response, {conflict.criterion: value},
                  {conflict.criterion: conflict.pack_note or ""}, rubric=conflict.rubric)
        else:
            conn.execute(f"DELETE FROM scores WHERE {where}", key)
    return True


def _agree_on_pack(conn: sqlite3.Connection, pack_id: str, rater: int,
                   conflict: Conflict) -> None:
    """The pack's side becomes the base the next merge of that pack compares with."""
    key = (pack_id, rater, conflict.response_id, conflict.rubric, conflict.criterion)
    if conflict.pack_given:
        conn.execute(f"INSERT INTO pack_base (pack_id, {_KEY_COLUMNS}, value, note) VALUES "
                     "(?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET value = excluded.value, "
                     "note = excluded.note", (*key, conflict.pack_value, conflict.pack_note))
    else:
        conn.execute("DELETE FROM pack_base WHERE pack_id = ? AND rater_id = ? AND "
                     "response_id = ? AND rubric = ? AND criterion = ?", key)
