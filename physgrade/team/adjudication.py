"""Adjudication: where people scored a response differently, an adjudicator's final values.

A *dispute* is a response that two or more people scored on the same criterion of its rubric
with values at least ``min_difference`` apart; N/A against a number always counts, N/A against
N/A never. An adjudicator (a named person, a role rather than a rater: they need no rater row)
then decides the final value of each disputed criterion. A decision is stored in
``score_adjudications`` (its history kept by the schema's triggers, see ``db/008_team.sql``)
and is the human consensus of that criterion in every report
(:func:`physgrade.scoring.tables.select`), whatever the graders gave. Every write of an
adjudication is here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from physgrade.changes import NOTHING, Changes, RecordKind
from physgrade.project import Project, ProjectError, now_iso
from physgrade.raters import is_grader
from physgrade.rubric import GRADED_RUBRICS, RUBRICS, rubric_for_kind
from physgrade.scores import Scored, scored

#: Separates names inside one grouped SQL value: the unit separator, ``char(31)`` in SQL.
_SEPARATOR = chr(31)


@dataclass(frozen=True)
class Scoring:
    """One person's scoring of a response under its rubric: values (None: N/A), notes by
    criterion, and the overall comment."""

    grader: str
    values: dict[str, int | None]
    notes: dict[str, str]
    comment: str | None


@dataclass(frozen=True)
class Decision:
    """An adjudicator's final value of one criterion (None: N/A)."""

    value: int | None
    adjudicator: str
    note: str | None
    decided_at: str


@dataclass(frozen=True)
class Dispute:
    """A response two or more people scored differently.

    ``disputed`` are the criteria whose values differ by at least the difference asked for, in
    rubric order; ``graders`` the people who scored those criteria, by name; ``decided`` the
    disputed criteria an adjudicator has decided.
    """

    response_id: str
    question_id: str
    model: str
    topic: str | None
    rubric: str
    disputed: tuple[str, ...]
    graders: tuple[str, ...]
    decided: tuple[str, ...]

    @property
    def settled(self) -> bool:
        """Every disputed criterion is decided."""
        return len(self.decided) == len(self.disputed)

    def as_dict(self) -> dict[str, Any]:
        return {"response_id": self.response_id, "question_id": self.question_id,
                "model": self.model, "topic": self.topic, "rubric": self.rubric,
                "disputed": list(self.disputed), "graders": list(self.graders),
                "decided": list(self.decided), "settled": self.settled}


def disputes(project: Project, min_difference: int = 1) -> list[Dispute]:
    """Every response people scored differently, adjudicated or not, by question, model and
    response id.

    One grouped query over people's scores (a study holds tens of thousands of responses with
    eight criteria each); only the rubric a response is graded with counts.
    """
    if not isinstance(min_difference, int) or min_difference < 1:
        raise ValueError(f"the minimum difference must be a whole number of at least 1, "
                         f"not {min_difference!r}")
    graded = [rubric.key for rubric in GRADED_RUBRICS]
    rows = project.conn.execute(
        "WITH cells AS ("
        "  SELECT s.response_id, s.rubric, s.criterion, "
        "         group_concat(r.name, char(31)) AS graders "
        # CROSS JOIN keeps people outermost: their scores are read by the key (rater first),
        # never the judges' millions.
        "  FROM raters r CROSS JOIN scores s ON s.rater_id = r.id "
        f"  WHERE {is_grader()} AND s.rubric IN ({', '.join('?' * len(graded))}) "
        "  GROUP BY s.response_id, s.rubric, s.criterion "
        "  HAVING count(*) >= 2 AND (count(s.value) NOT IN (0, count(*)) "
        "                            OR max(s.value) - min(s.value) >= ?)) "
        "SELECT c.response_id, o.question_id, o.model, q.topic, q.kind, c.rubric, c.criterion, "
        "       c.graders, a.response_id IS NOT NULL "
        "FROM cells c JOIN responses o ON o.id = c.response_id "
        "JOIN questions q ON q.id = o.question_id "
        "LEFT JOIN score_adjudications a ON a.response_id = c.response_id "
        "     AND a.rubric = c.rubric AND a.criterion = c.criterion "
        "ORDER BY o.question_id, o.model, c.response_id",
        (*graded, min_difference)).fetchall()
    heads: dict[str, tuple[str, str, str | None, str]] = {}
    cells: dict[str, list[tuple[str, str, bool]]] = {}
    for response_id, question_id, model, topic, kind, rubric, criterion, names, decided in rows:
        if rubric != rubric_for_kind(kind).key:
            continue  # scores under a rubric the response is not graded with
        heads.setdefault(response_id, (question_id, model, topic, rubric))
        cells.setdefault(response_id, []).append((criterion, names, bool(decided)))
    return [_dispute(response_id, *head, cells[response_id])
            for response_id, head in heads.items()]


def _dispute(response_id: str, question_id: str, model: str, topic: str | None, rubric: str,
             cells: list[tuple[str, str, bool]]) -> Dispute:
    """A dispute from its disputed criteria: (criterion, graders joined, decided)."""
    order = {key: i for i, key in enumerate(RUBRICS[rubric].keys)}
    ranked = sorted(cells, key=lambda cell: order.get(cell[0], len(order)))
    return Dispute(
        response_id, question_id, model, topic, rubric,
        tuple(criterion for criterion, _, _ in ranked),
        tuple(sorted({name for _, names, _ in ranked for name in names.split(_SEPARATOR)})),
        tuple(criterion for criterion, _, decided in ranked if decided))


def scorings(project: Project, response_id: str) -> list[Scoring]:
    """Each person's scoring of a response under its rubric, by name (criteria in rubric
    order); refuses an unknown response."""
    rubric = scored(project, response_id).rubric
    rows = project.conn.execute(
        "SELECT r.name, s.criterion, s.value, s.note, a.comment "
        "FROM raters r JOIN scores s ON s.rater_id = r.id "
        "LEFT JOIN assessments a ON a.rater_id = s.rater_id AND a.response_id = s.response_id "
        "     AND a.rubric = s.rubric "
        f"WHERE {is_grader()} AND s.response_id = ? AND s.rubric = ?",
        (response_id, rubric.key)).fetchall()
    order = {key: i for i, key in enumerate(rubric.keys)}
    rows.sort(key=lambda row: (row[0], order.get(row[1], len(order))))
    found: dict[str, Scoring] = {}
    for name, criterion, value, note, comment in rows:
        scoring = found.setdefault(name, Scoring(name, {}, {}, comment))
        scoring.values[criterion] = value
        if note:
            scoring.notes[criterion] = note
    return list(found.values())


def decisions(project: Project, response_id: str) -> dict[str, Decision]:
    """The adjudicator's decisions on a response, by criterion (none for an unknown one)."""
    return {criterion: Decision(value, adjudicator, note, decided_at)
            for criterion, value, adjudicator, note, decided_at in project.conn.execute(
                "SELECT criterion, value, adjudicator, note, decided_at FROM score_adjudications "
                "WHERE response_id = ?", (response_id,))}


def _changes(response: Scored) -> Changes:
    return Changes.of(RecordKind.ADJUDICATIONS, responses=[response.response_id],
                      questions=[response.question_id])


def set_decision(project: Project, adjudicator: str, response_id: str, criterion: str,
                 value: int | None, note: str | None = None) -> Changes:
    """Decide the final value of one criterion of a response, committed at once (history by
    trigger). ``value`` None is N/A where the rubric allows it; ``note`` None keeps the note
    the decision has, "" removes it."""
    response = scored(project, response_id)
    stored = response.rubric.validate_one(criterion, value, response.multiple_choice)
    who = adjudicator.strip()
    if not who:
        raise ProjectError("a decision needs the adjudicator's name")
    text = None if note is None else note.strip()
    with project.transaction():
        project.conn.execute(
            "INSERT INTO score_adjudications (response_id, rubric, criterion, value, note, "
            "adjudicator, decided_at) VALUES (:response, :rubric, :criterion, :value, "
            "nullif(:note, ''), :who, :now) ON CONFLICT DO UPDATE SET value = excluded.value, "
            "note = iif(:note IS NULL, score_adjudications.note, excluded.note), "
            "adjudicator = excluded.adjudicator, decided_at = excluded.decided_at",
            {"response": response_id, "rubric": response.rubric.key, "criterion": criterion,
             "value": stored, "note": text, "who": who, "now": now_iso()})
    return _changes(response)


def clear_decision(project: Project, response_id: str, criterion: str) -> Changes:
    """Withdraw the decision on one criterion (its graders' majority stands again), committed
    at once; nothing changes where there is none."""
    response = scored(project, response_id)
    response.rubric.criterion(criterion)  # refuses a criterion the rubric lacks, by name
    with project.transaction():
        removed = project.conn.execute(
            "DELETE FROM score_adjudications WHERE response_id = ? AND rubric = ? "
            "AND criterion = ?", (response_id, response.rubric.key, criterion)).rowcount
    return _changes(response) if removed else NOTHING
