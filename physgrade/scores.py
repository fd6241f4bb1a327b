"""Scores and raters: the one module that writes them, and the one place that knows who is a person.

A rater is a person (kind ``human``), a language model under a prompt version (``llm``) or the
rule checker under its settings (``rules``). A person's grade is written one criterion at a
time by :func:`set_score`, :func:`set_note` and :func:`clear_score`, each validated against the
rubric and committed at once (the schema's triggers keep the history); judges and the rule
checker store whole verdicts through :func:`write`, inside their own transactions. Every
``INSERT INTO scores`` of the package is here, but for one: merging a grader pack
(:mod:`physgrade.team.merge`) brings hundreds of thousands of scores in as one set operation,
after checking each against the rubric.

SQL that asks "is this rater a person?" uses :func:`is_person`, :func:`is_grader` or
:func:`is_named_person`, so the condition is written once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from physgrade.changes import NOTHING, Changes, Kind
from physgrade.project import Project, ProjectError, now_iso
from physgrade.rubric import RUBRICS, Rubric, ScoreError, rubric_for_kind

#: The kinds of rater: a person, a language model (per prompt version), the rule checker.
HUMAN, LLM, RULES = "human", "llm", "rules"
RATER_KINDS = (HUMAN, LLM, RULES)
#: A rater was made: a change of the raters alone, of no response or question.
NEW_RATER = Changes.of(Kind.RATERS, responses=(), questions=())


def is_kind(kind: str, alias: str = "r") -> str:
    """The SQL condition "rater ``alias`` is of ``kind``" (one of :data:`RATER_KINDS`)."""
    if kind not in RATER_KINDS:
        raise ValueError(f"rater kind must be one of {', '.join(RATER_KINDS)}, not {kind!r}")
    return f"{alias}.kind = '{kind}'"


def is_person(alias: str = "r") -> str:
    """The SQL condition "rater ``alias`` is a person"."""
    return is_kind(HUMAN, alias)


def is_grader(alias: str = "r") -> str:
    """The SQL condition "rater ``alias`` is a person who grades": a rater of kind human
    without a prompt version."""
    return f"{is_person(alias)} AND {alias}.prompt_version = ''"


def is_named_person(alias: str = "r") -> str:
    """The SQL condition "rater ``alias`` is the person named ``?``" (one parameter: the name)."""
    return f"{alias}.name = ? AND {is_grader(alias)}"


# -- raters -------------------------------------------------------------------------------------


def ensure_rater(project: Project, name: str, kind: str,
                 prompt_version: str = "") -> tuple[int, Changes]:
    """The id of a rater, created on first use (then the changes are :data:`NEW_RATER`). A
    name keeps the kind it was made with."""
    if kind not in RATER_KINDS:
        raise ProjectError(f"rater kind must be one of {', '.join(RATER_KINDS)}, not {kind!r}")
    if not name.strip():
        raise ProjectError("a rater needs a name")
    known = existing_rater(project, name, kind, prompt_version)
    if known is not None:
        return known, NOTHING
    created = project.conn.execute(
        "INSERT INTO raters (name, kind, prompt_version) VALUES (?, ?, ?)",
        (name, kind, prompt_version)).lastrowid
    assert created is not None  # an INSERT sets it
    return created, NEW_RATER


def existing_rater(project: Project, name: str, kind: str, prompt_version: str = "") -> int | None:
    """The id of the rater ``name`` if there is one, without making one; refuses one of
    another kind than ``kind`` (a name keeps the kind it was made with), so that a plan can
    refuse before it writes what :func:`ensure_rater` would refuse."""
    row = project.conn.execute("SELECT id, kind FROM raters WHERE name = ? AND prompt_version = ?",
                               (name, prompt_version)).fetchone()
    if row is None:
        return None
    if row[1] != kind:
        raise ProjectError(f"{name!r} is already a rater of kind {row[1]!r}, not {kind!r}")
    return row[0]


def rater_id(project: Project, name: str, kind: str, prompt_version: str = "") -> int:
    """The id of a rater, created on first use. A name keeps the kind it was made with."""
    return ensure_rater(project, name, kind, prompt_version)[0]


def person_id(project: Project, name: str) -> int | None:
    """A person's rater id, without making one (reading creates no rater)."""
    row = project.conn.execute(f"SELECT r.id FROM raters r WHERE {is_named_person()}",
                               (name,)).fetchone()
    return row[0] if row else None


# -- what is scored -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Scored:
    """A response as a score sees it: its question, rubric and whether it is multiple choice."""

    response_id: str
    question_id: str
    rubric: Rubric
    multiple_choice: bool

    def changes(self, *more: Kind) -> Changes:
        """Scores (and ``more``) changed for this response and its question."""
        return Changes.of(Kind.SCORES, *more, responses=[self.response_id],
                          questions=[self.question_id])


def scored(project: Project, response_id: str) -> Scored:
    """The response ``response_id`` as scored; refuses an unknown response."""
    row = project.conn.execute(
        "SELECT r.question_id, q.kind, q.options IS NOT NULL FROM responses r "
        "JOIN questions q ON q.id = r.question_id WHERE r.id = ?", (response_id,)).fetchone()
    if row is None:
        raise ProjectError(f"no response {response_id!r} in this project")
    return Scored(response_id, row[0], rubric_for_kind(row[1]), bool(row[2]))


def response_rubric(project: Project, response_id: str) -> tuple[Rubric, bool]:
    """The rubric a response is graded with, and whether its question is multiple choice."""
    found = scored(project, response_id)
    return found.rubric, found.multiple_choice


# -- the one writer of score rows ---------------------------------------------------------------


def write(project: Project, rater: int, response: Scored, values: Mapping[str, int | None],
          notes: Mapping[str, str | None] | None = None, *, rubric: str | None = None,
          stamp: str | None = None, replace: bool = False, **assessment: object) -> Changes:
    """Upsert a rater's assessment of a response and score rows, inside the caller's transaction.

    ``values`` are criterion → stored value (already validated); a note given as None keeps the
    note a score has, "" removes it (as :func:`set_note`). ``assessment`` sets the named columns
    of the assessment row (``comment``, ``raw``, ``status``, ``extra``); its time is always set.
    ``replace`` first removes every score the rater gave the response. ``rubric`` defaults to
    the response's own.
    """
    key = rubric or response.rubric.key
    stamp = stamp or now_iso()
    conn = project.conn
    unknown = set(assessment) - {"comment", "raw", "status", "extra"}
    if unknown:
        raise ValueError(f"an assessment has no column {', '.join(sorted(unknown))}")
    columns = ["rater_id", "response_id", "rubric", "assessed_at", *assessment]
    updated = ", ".join(f"{c} = excluded.{c}" for c in ["assessed_at", *assessment])
    conn.execute(f"INSERT INTO assessments ({', '.join(columns)}) VALUES "
                 f"({', '.join('?' * len(columns))}) ON CONFLICT DO UPDATE SET {updated}",
                 (rater, response.response_id, key, stamp, *assessment.values()))
    if replace:
        conn.execute("DELETE FROM scores WHERE rater_id = ? AND response_id = ?",
                     (rater, response.response_id))
    notes = notes or {}
    conn.executemany(
        "INSERT INTO scores (rater_id, response_id, rubric, criterion, value, note, updated_at) "
        "VALUES (?, ?, ?, ?, ?, nullif(?, ''), ?) ON CONFLICT (rater_id, response_id, rubric, "
        "criterion) DO UPDATE SET value = excluded.value, "
        "note = CASE WHEN ? IS NULL THEN scores.note ELSE excluded.note END, "
        "updated_at = excluded.updated_at",
        [(rater, response.response_id, key, criterion, value, notes.get(criterion), stamp,
          notes.get(criterion)) for criterion, value in values.items()])
    return response.changes()


# -- a person's grade, one criterion at a time ---------------------------------------------------


def set_score(project: Project, grader: str, response_id: str, criterion: str,
              value: int | None, note: str | None = None, rubric: str | None = None) -> Changes:
    """Record one criterion of a person's grade, committed at once (history by trigger).

    ``value`` None means N/A where the rubric allows it. The rubric follows the question's
    kind unless named (e.g. ``"coarse"``).
    """
    response = scored(project, response_id)
    chosen = RUBRICS[rubric] if rubric is not None else response.rubric
    stored = chosen.validate_one(criterion, value, response.multiple_choice)
    with project.transaction():
        rater, changes = ensure_rater(project, grader, HUMAN)
        changes |= write(project, rater, response, {criterion: stored}, {criterion: note},
                         rubric=chosen.key)
    return changes


def set_note(project: Project, grader: str, response_id: str, criterion: str, note: str,
             rubric: str | None = None) -> Changes:
    """Attach a note to a criterion the grader has scored ("" removes it), committed at once."""
    response = scored(project, response_id)
    chosen = RUBRICS[rubric] if rubric else response.rubric
    with project.transaction():
        changed = project.conn.execute(
            "UPDATE scores SET note = nullif(?, ''), updated_at = ? WHERE rater_id = "
            f"(SELECT r.id FROM raters r WHERE {is_named_person()}) "
            "AND response_id = ? AND rubric = ? AND criterion = ?",
            (note.strip(), now_iso(), grader, response_id, chosen.key, criterion)).rowcount
        if not changed:
            raise ScoreError(criterion, f"score {criterion} before adding a note to it")
    return response.changes()


def clear_score(project: Project, grader: str, response_id: str, criterion: str,
                rubric: str | None = None) -> Changes:
    """Remove one criterion of a person's grade (e.g. undo), committed at once."""
    response = scored(project, response_id)
    chosen = RUBRICS[rubric] if rubric else response.rubric
    with project.transaction():
        removed = project.conn.execute(
            f"DELETE FROM scores WHERE rater_id = (SELECT r.id FROM raters r WHERE "
            f"{is_named_person()}) AND response_id = ? AND rubric = ? AND criterion = ?",
            (grader, response_id, chosen.key, criterion)).rowcount
    return response.changes() if removed else NOTHING
