"""Scores: the one module that writes them, but for two bulk paths.

A person's grade is written one criterion at a time by :func:`set_score`, :func:`set_note` and
:func:`clear_score`, each validated against the rubric and committed at once (the schema's
triggers keep the history); judges and the rule checker store whole verdicts through
:func:`write`, inside their own transactions. Two writers bring many scores in at once with SQL
of their own, after checking each against the rubric: the importer
(:mod:`physgrade.importer`), which writes a file's grades and verdicts table by table in bulk,
and merging a grader pack (:mod:`physgrade.team.merge`), one set operation over hundreds of
thousands of scores. Who gives a score, and who is a person, is :mod:`physgrade.raters`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from physgrade.changes import NOTHING, Changes, RecordKind
from physgrade.project import Project, ProjectError, now_iso
from physgrade.raters import HUMAN, ensure_rater, is_named_person
from physgrade.rubric import RUBRICS, Rubric, ScoreError, rubric_for_kind

# -- what is scored -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Scored:
    """A response as a score sees it: its question, rubric and whether it is multiple choice."""

    response_id: str
    question_id: str
    rubric: Rubric
    multiple_choice: bool

    def changes(self, *more: RecordKind) -> Changes:
        """Scores (and ``more``) changed for this response and its question."""
        return Changes.of(RecordKind.SCORES, *more, responses=[self.response_id],
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
