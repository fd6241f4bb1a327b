"""Where a response's reasoning breaks: each rater's first wrong step, its category, step ratings.

A mark says which step (numbered by :mod:`physgrade.steps`) is the first wrong one, 0 when every
step is right, with the error's category in a taxonomy (:mod:`physgrade.taxonomies`), and may
rate single steps -1/0/+1 (as PRM800K does). A person's mark changes one thing at a time, each
committed at once, with every change kept in ``step_mark_history`` by trigger, as scores are;
judges and imports write whole marks with :func:`write_mark` inside their own transactions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Mapping

from physgrade.changes import Changes, RecordKind
from physgrade.project import Project, ProjectError, now_iso
from physgrade.raters import HUMAN, ensure_rater, is_named_person, rater_label
from physgrade.rubric import RUBRICS, ScoreError
from physgrade.steps import ResponseStep, step_label, steps_of
from physgrade.taxonomies import taxonomies

#: The ratings a single step may get: wrong, neutral (neither helps nor hurts), right.
RATINGS = (-1, 0, 1)
#: The first wrong step's value when no step is wrong.
NO_ERROR = 0

_FIELDS = ("r.name, r.prompt_version, r.run, r.kind, m.response_id, m.first_wrong, m.taxonomy, "
           "m.category, m.ratings, m.note, m.updated_at")
_FROM = "FROM step_marks m JOIN raters r ON r.id = m.rater_id"
_COLUMNS = f"SELECT {_FIELDS} {_FROM}"


@dataclass(frozen=True, slots=True)
class StepMark:
    """One rater's mark of one response; ``rater`` is its label (a judge's names its prompt
    version and run: two of them are two raters)."""

    rater: str
    kind: str
    response_id: str
    first_wrong: int | None
    taxonomy: str | None
    category: str | None
    ratings: dict[int, int]
    note: str | None
    updated_at: str

    @property
    def empty(self) -> bool:
        """Nothing is said: the row is removed rather than kept."""
        return (self.first_wrong is None and self.category is None and not self.ratings
                and not self.note)


def _mark(row: tuple) -> StepMark:
    name, version, run, kind, response_id, first_wrong, taxonomy, category, ratings, note, \
        stamp = row
    return StepMark(rater_label(name, version, run), kind, response_id, first_wrong, taxonomy,
                    category,
                    {int(step): value for step, value in json.loads(ratings or "{}").items()},
                    note, stamp)


# -- reading ------------------------------------------------------------------------------------

def my_mark(project: Project, grader: str, response_id: str) -> StepMark | None:
    """The person ``grader``'s mark of a response, or None."""
    row = project.conn.execute(f"{_COLUMNS} WHERE {is_named_person()} AND m.response_id = ?",
                               (grader, response_id)).fetchone()
    return None if row is None else _mark(row)


def marks_of(project: Project, response_id: str) -> list[StepMark]:
    """Every rater's mark of a response, by rater name."""
    return [_mark(row) for row in project.conn.execute(
        f"{_COLUMNS} WHERE m.response_id = ? ORDER BY r.name, r.prompt_version, r.run",
        (response_id,))]


def marks_by_rater(project: Project, rater_id: int) -> dict[str, StepMark]:
    """Every mark of the rater ``rater_id`` (one prompt version of a judge), by response."""
    return {row[4]: _mark(row) for row in project.conn.execute(
        f"{_COLUMNS} WHERE m.rater_id = ? ORDER BY m.response_id", (rater_id,))}


def response_marks(project: Project, response_id: str) -> dict[int, StepMark]:
    """Every rater's mark of a response, by rater id (two runs of a judge are two raters)."""
    return {row[0]: _mark(row[1:]) for row in project.conn.execute(
        f"SELECT m.rater_id, {_FIELDS} {_FROM} WHERE m.response_id = ?",
        (response_id,))}


def category_title(project: Project, mark: StepMark | None) -> str:
    """The title of ``mark``'s category as the project words it ("" for none; its key where
    the taxonomy no longer has it)."""
    if mark is None or mark.taxonomy is None or mark.category is None:
        return ""
    known = taxonomies(project).get(mark.taxonomy)
    try:
        return known.category(mark.category).title if known else mark.category
    except KeyError:
        return mark.category


def describe(project: Project, steps: tuple[ResponseStep, ...], mark: StepMark | None) -> str:
    """A mark in a few words: "Step 3 · Calculation error", "No error", "" where it says
    nothing of the first wrong step."""
    if mark is None or mark.first_wrong is None:
        return ""
    if mark.first_wrong == NO_ERROR:
        return "No error"
    where = step_label(steps, mark.first_wrong)
    category = category_title(project, mark)
    return f"{where} · {category}" if category else where


def all_marks(project: Project, response_ids: Iterable[str] | None = None) -> list[StepMark]:
    """Every mark (of ``response_ids`` only, where given), by response and rater."""
    if response_ids is None:
        rows = project.conn.execute(f"{_COLUMNS} ORDER BY m.response_id, r.name, "
                                    "r.prompt_version, r.run").fetchall()
    else:
        wanted = sorted(set(response_ids))
        rows = []
        for start in range(0, len(wanted), 500):
            chunk = wanted[start:start + 500]
            rows += project.conn.execute(
                f"{_COLUMNS} WHERE m.response_id IN ({', '.join('?' * len(chunk))}) "
                "ORDER BY m.response_id, r.name, r.prompt_version, r.run", chunk).fetchall()
    return [_mark(row) for row in rows]


# -- a person's mark, one change at a time -------------------------------------------------------

def mark_first_wrong(project: Project, grader: str, response_id: str, step: int) -> Changes:
    """``step`` is the first wrong step of the response (:data:`NO_ERROR`: none is); a step
    the response does not have is refused. No error has no category."""
    count = len(steps_of(project, response_id))
    if not NO_ERROR <= step <= count:
        raise ScoreError("step", f"the response has {count} step{'s' if count != 1 else ''}; "
                         f"step {step} cannot be its first wrong one")
    return _change(project, grader, response_id, lambda mark: replace(
        mark, first_wrong=step, taxonomy=None if step == NO_ERROR else mark.taxonomy,
        category=None if step == NO_ERROR else mark.category))


def clear_first_wrong(project: Project, grader: str, response_id: str) -> Changes:
    """Withdraw the first wrong step, and its category with it."""
    return _change(project, grader, response_id,
                   lambda mark: replace(mark, first_wrong=None, taxonomy=None, category=None))


def set_category(project: Project, grader: str, response_id: str, taxonomy: str,
                 category: str | None) -> Changes:
    """The first wrong step's category (None removes it); needs a first wrong step."""
    if category is not None:
        known = taxonomies(project)
        if taxonomy not in known:
            raise ScoreError("category", f"no taxonomy {taxonomy!r}")
        if category not in known[taxonomy].keys:
            raise ScoreError("category", f"{taxonomy} has no category {category!r}")

    def categorised(mark: StepMark) -> StepMark:
        if category is not None and not mark.first_wrong:
            raise ScoreError("category", "mark the first wrong step before its category")
        return replace(mark, taxonomy=taxonomy if category else None, category=category)

    return _change(project, grader, response_id, categorised)


def rate_step(project: Project, grader: str, response_id: str, step: int,
              rating: int | None) -> Changes:
    """Rate one step -1, 0 or +1 (None removes its rating)."""
    count = len(steps_of(project, response_id))
    if not 1 <= step <= count:
        raise ScoreError("step", f"the response has no step {step} (it has {count})")
    if rating is not None and rating not in RATINGS:
        raise ScoreError("step", f"a step is rated -1, 0 or +1, not {rating}")

    def rated(mark: StepMark) -> StepMark:
        ratings = dict(mark.ratings)
        if rating is None:
            ratings.pop(step, None)
        else:
            ratings[step] = rating
        return replace(mark, ratings=ratings)

    return _change(project, grader, response_id, rated)


def restore(project: Project, grader: str, response_id: str,
            mark: StepMark | None) -> Changes:
    """Put a whole earlier mark back (None: no mark), as undo does."""
    return _change(project, grader, response_id, lambda now: replace(
        now, first_wrong=None, taxonomy=None, category=None, ratings={}, note=None)
        if mark is None else replace(now, first_wrong=mark.first_wrong, taxonomy=mark.taxonomy,
                                     category=mark.category, ratings=dict(mark.ratings),
                                     note=mark.note))


def _change(project: Project, grader: str, response_id: str,
            change: Callable[[StepMark], StepMark]) -> Changes:
    """Apply ``change`` to the person's mark, committed at once."""
    with project.transaction():
        rater, changes = ensure_rater(project, grader, HUMAN)
        before = my_mark(project, grader, response_id) or StepMark(
            grader, HUMAN, response_id, None, None, None, {}, None, "")
        after = change(before)
        if after.empty:
            project.conn.execute("DELETE FROM step_marks WHERE rater_id = ? AND response_id = ?",
                                 (rater, response_id))
            changes |= _changed(project, response_id)
        else:
            changes |= write_mark(project, rater, response_id, after.first_wrong, after.taxonomy,
                                  after.category, after.ratings, after.note)
    return changes


# -- whole marks: judges and imports ----------------------------------------------------------

def write_mark(project: Project, rater_id: int, response_id: str, first_wrong: int | None,
               taxonomy: str | None, category: str | None,
               ratings: Mapping[int, int] | None = None, note: str | None = None,
               stamp: str | None = None) -> Changes:
    """Upsert a rater's whole mark of a response, inside the caller's transaction (the values
    already checked)."""
    stored = json.dumps({str(step): value for step, value in sorted((ratings or {}).items())}) \
        if ratings else None
    project.conn.execute(
        "INSERT INTO step_marks (rater_id, response_id, first_wrong, taxonomy, category, "
        "ratings, note, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (rater_id, "
        "response_id) DO UPDATE SET first_wrong = excluded.first_wrong, taxonomy = "
        "excluded.taxonomy, category = excluded.category, ratings = excluded.ratings, "
        "note = excluded.note, updated_at = excluded.updated_at",
        (rater_id, response_id, first_wrong, taxonomy if category else None, category, stored,
         note, stamp or now_iso()))
    return _changed(project, response_id)


def _changed(project: Project, response_id: str) -> Changes:
    row = project.conn.execute("SELECT question_id FROM responses WHERE id = ?",
                               (response_id,)).fetchone()
    if row is None:
        raise ProjectError(f"no response {response_id!r} in this project")
    return Changes.of(RecordKind.STEPS, responses=[response_id], questions=[row[0]])


# -- consistency with the stage scores -----------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Inconsistency:
    """A category that belongs to a criterion its rater (by label) scored at the maximum."""

    rater: str
    response_id: str
    first_wrong: int
    taxonomy: str
    category: str
    criterion: str
    value: int


def inconsistencies(project: Project) -> list[Inconsistency]:
    """Marks whose category belongs to a rubric criterion the same rater scored at its maximum
    on the same response (listed for a second look, not forbidden)."""
    known = taxonomies(project)
    maxima = {(rubric.key, c.key): c.maximum for rubric in RUBRICS.values()
              for c in rubric.criteria}
    query = ("SELECT r.name, r.prompt_version, r.run, m.response_id, m.first_wrong, "
             "m.taxonomy, m.category, s.rubric, s.criterion, s.value FROM step_marks m "
             "JOIN raters r ON r.id = m.rater_id "
             "JOIN scores s ON s.rater_id = m.rater_id AND s.response_id = m.response_id "
             "WHERE m.category IS NOT NULL ORDER BY m.response_id, r.name, s.criterion")
    found = []
    for name, version, run, response_id, first_wrong, tax, category, rubric, criterion, value \
            in project.conn.execute(query):
        belongs = tax in known and category in known[tax].keys \
            and criterion in known[tax].category(category).criteria
        if belongs and value is not None and value == maxima.get((rubric, criterion)):
            found.append(Inconsistency(rater_label(name, version, run), response_id,
                                       first_wrong, tax, category, criterion, value))
    return found
