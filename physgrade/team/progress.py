"""How far each grader has got: assigned, graded, remaining, and their pace.

The study's owner plans the weeks by it. Pace is read from the score history, so work done in
a pack and merged back counts at the times it was done; as in a grading session
(:mod:`physgrade.pace`), only the time between consecutive grading actions counts, each gap
capped, so breaks do not drag the rate down. A handful of queries in all, whatever the size.

A grade finished before its response was assigned is work done, never work remaining: assigned
to the same person later, it counts as graded; left unassigned (assigning leaves graded
responses out unless asked), it counts as graded without an assignment.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from physgrade.pace import IDLE_CAP_S, Pace
from physgrade.project import Project
from physgrade.queries import finished_sql
from physgrade.raters import is_grader


@dataclass(frozen=True)
class GraderProgress:
    """One person's progress on their assignment."""

    grader: str
    assigned: int            # responses assigned
    graded: int              # of those, finished by this grader (queries.finished_sql)
    remaining: int           # assigned - graded
    unassigned_graded: int   # responses they finished that are not assigned to them
    per_hour: float | None   # responses finished per working hour (None: too little to say)


#: The people who are assigned anything or have scored anything.
_PEOPLE = (f"SELECT r.id, r.name FROM raters r WHERE {is_grader()} "
           "AND (EXISTS (SELECT 1 FROM assignments a WHERE a.grader_id = r.id) "
           "OR EXISTS (SELECT 1 FROM scores s WHERE s.rater_id = r.id)) ORDER BY r.name")
#: (person, response) for each grade finished by one of the people in the JSON list ``?``.
_FINISHED = finished_sql("SELECT value FROM json_each(?)")


def _working_seconds(project: Project, ids: str) -> dict[int, float]:
    """Per person, the seconds between consecutive changes in their history, each gap capped
    at :data:`~physgrade.pace.IDLE_CAP_S` (sorted here: SQLite's window functions take three
    times as long on a finished study's million rows)."""
    times: dict[int, list[float]] = defaultdict(list)
    for rater, seconds in project.conn.execute(
            "SELECT rater_id, julianday(changed_at) * 86400.0 FROM score_history "
            "WHERE rater_id IN (SELECT value FROM json_each(?))", (ids,)):
        times[rater].append(seconds)
    working = {}
    for rater, moments in times.items():
        moments.sort()
        working[rater] = sum(min(later - earlier, IDLE_CAP_S)
                             for earlier, later in zip(moments, moments[1:]))
    return working


def grader_progress(project: Project) -> list[GraderProgress]:
    """Every person with an assignment or a score, by name."""
    conn = project.conn
    people = conn.execute(_PEOPLE).fetchall()
    ids = str([rater for rater, _ in people])  # a JSON list of integers
    assigned: dict[int, set[str]] = defaultdict(set)
    for rater, response in conn.execute("SELECT grader_id, response_id FROM assignments"):
        assigned[rater].add(response)
    finished: dict[int, set[str]] = defaultdict(set)
    for rater, response in conn.execute(_FINISHED, (ids,)):
        finished[rater].add(response)
    working = _working_seconds(project, ids)
    progress = []
    for rater, name in people:
        mine, done = assigned[rater], finished[rater]
        graded = len(mine & done)
        pace = Pace(finished=done, working_s=working.get(rater, 0.0))
        progress.append(GraderProgress(name, len(mine), graded, len(mine) - graded,
                                       len(done - mine), pace.per_hour))
    return progress
