"""Examples for a refined judge prompt: responses of the calibration part where the reference
corrected the judge, spread over the criteria where the judge disagrees most.

The criteria are ranked by how often the judge's score differed from the reference's on the
calibration part; examples are then taken in turn for each criterion, most disagreeing first,
each time the response with the largest correction on that criterion (shorter responses first
among equals, then a seeded order), so that K examples cover as many of the judge's weak
criteria as K allows. Each is shown to the judge as its question, the response, and the
reference's score of every criterion with the experts' notes, naming what the judge gave
where it differed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import cycle

import numpy as np
import pandas as pd

from physgrade.judge.prompts import Prompts
from physgrade.project import Project
from physgrade.raters import HUMAN_CONSENSUS, is_grader
from physgrade.rubric import GRADED_RUBRICS, RUBRICS, Rubric, value_text
from physgrade.scoring import tables as score_tables
from physgrade.scoring.tables import ScoreData

#: Responses longer than this (characters) are taken only when no shorter one shows the same
#: correction: each example is sent with every request.
LONG_RESPONSE = 6000


@dataclass(frozen=True, slots=True)
class Example:
    """A calibration response shown to the judge: the criterion it was chosen for, and every
    criterion (of its rubric) on which the reference corrected the judge."""

    response_id: str
    rubric: str
    chosen_for: str
    corrected: tuple[str, ...]

    def as_dict(self) -> dict:
        return {"response_id": self.response_id, "rubric": self.rubric,
                "chosen_for": self.chosen_for, "corrected": list(self.corrected)}


@dataclass(frozen=True, slots=True)
class Disagreement:
    """How often the judge's score of one criterion differed from the reference's on the
    calibration part."""

    rubric: str
    criterion: str
    differing: int
    n: int

    @property
    def share(self) -> float:
        return self.differing / self.n if self.n else 0.0

    def as_dict(self) -> dict:
        return {"rubric": self.rubric, "criterion": self.criterion, "differing": self.differing,
                "n": self.n}


def criterion_keys() -> tuple[str, ...]:
    """Every criterion an example can aim at, each key once, in rubric order."""
    return score_tables.SHEET_CRITERIA


def disagreements(data: ScoreData, judge: str, reference: str, responses: tuple[str, ...],
                  criteria: tuple[str, ...] = ()) -> list[Disagreement]:
    """Per criterion (of ``criteria``; none: all), how often the two differed on
    ``responses``, most often first (then in rubric order)."""
    found = []
    for rubric in GRADED_RUBRICS:
        for criterion in rubric.criteria:
            if criteria and criterion.key not in criteria:
                continue
            both = _both(data, rubric, criterion.key, judge, reference, responses)
            found.append(Disagreement(rubric.key, criterion.key,
                                      int((both[judge] != both[reference]).sum()), len(both)))
    return sorted(found, key=lambda d: -d.share)


def choose(data: ScoreData, judge: str, reference: str, calibration: tuple[str, ...],
           k: int, criteria: tuple[str, ...], seed: int,
           lengths: pd.Series) -> tuple[Example, ...]:
    """Up to ``k`` examples from ``calibration`` (never from anywhere else), where the reference
    corrected the judge, spread over the criteria as the module says."""
    ranked = [d for d in disagreements(data, judge, reference, calibration, criteria)
              if d.differing]
    rank = pd.Series(np.random.default_rng(seed).permutation(len(calibration)),
                     index=list(calibration))
    queues: dict[tuple[str, str], list[str]] = {}
    for d in ranked:
        both = _both(data, RUBRICS[d.rubric], d.criterion, judge, reference, calibration)
        size = (both[judge] - both[reference]).abs()
        size = size[size > 0]
        order = pd.DataFrame({"size": -size, "long": lengths.reindex(size.index).fillna(0)
                              > LONG_RESPONSE, "rank": rank.reindex(size.index)})
        queues[(d.rubric, d.criterion)] = list(order.sort_values(["size", "long", "rank"]).index)
    chosen: dict[str, Example] = {}
    turns = cycle(list(queues))
    while len(chosen) < k and any(queues.values()):
        rubric_key, criterion = next(turns)
        queue = queues[(rubric_key, criterion)]
        while queue and queue[0] in chosen:
            queue.pop(0)
        if queue:
            response_id = queue.pop(0)
            chosen[response_id] = Example(response_id, rubric_key, criterion,
                                          _corrected(data, RUBRICS[rubric_key], judge,
                                                     reference, response_id))
    return tuple(chosen.values())


def block(project: Project, prompts: Prompts, data: ScoreData, judge: str, reference: str,
          examples: tuple[Example, ...]) -> str:
    """The examples as the judge reads them: ``examples.md`` around one ``example.md`` each."""
    ids = [example.response_id for example in examples]
    marks = ", ".join("?" * len(ids))
    texts = {rid: (question, response, options) for rid, question, response, options in
             project.conn.execute(
                 "SELECT r.id, q.question, r.response, q.options FROM responses r JOIN "
                 f"questions q ON q.id = r.question_id WHERE r.id IN ({marks})", ids)}
    notes = _notes(project, reference, ids)
    shown = []
    for example in examples:
        question, response, options = texts[example.response_id]
        if options:
            question += "\n" + "\n".join(f"{letter}. {text}"
                                         for letter, text in json.loads(options).items())
        shown.append(prompts.fill("example.md", question=question, response=response,
                                  grade=_grade(data, RUBRICS[example.rubric], judge, reference,
                                               example.response_id, notes)))
    return prompts.fill("examples.md", examples="\n".join(shown).rstrip("\n"))


def _both(data: ScoreData, rubric: Rubric, criterion: str, judge: str, reference: str,
          responses: tuple[str, ...]) -> pd.DataFrame:
    """The judge's and the reference's scores of one criterion where both gave a number."""
    side = score_tables.criterion_ratings(data, rubric.key, criterion, [reference, judge])
    return side[side.index.isin(responses)].dropna()


def _corrected(data: ScoreData, rubric: Rubric, judge: str, reference: str,
               response_id: str) -> tuple[str, ...]:
    return tuple(c.key for c in rubric.criteria
                 if not (both := _both(data, rubric, c.key, judge, reference,
                                       (response_id,))).empty
                 and both[judge].iloc[0] != both[reference].iloc[0])


def _value(data: ScoreData, rubric: Rubric, criterion: str, rater: str,
           response_id: str) -> float | None:
    """A rater's score (None: N/A or not scored)."""
    column = score_tables.criterion_ratings(data, rubric.key, criterion, [rater])
    value = column[rater].get(response_id) if rater in column else None
    return None if value is None or pd.isna(value) else float(value)


def _grade(data: ScoreData, rubric: Rubric, judge: str, reference: str, response_id: str,
           notes: dict[tuple[str, str], list[str]]) -> str:
    """The reference's grade of one response, criterion by criterion, with the judge's score
    where it differed and the experts' notes."""
    lines = [f"Rubric: {rubric.title}"]
    for criterion in rubric.criteria:
        theirs = _value(data, rubric, criterion.key, reference, response_id)
        mine = _value(data, rubric, criterion.key, judge, response_id)
        line = (f"- {criterion.key} ({criterion.name}, 0-{criterion.maximum}): "
                f"{value_text(None if theirs is None else int(theirs))}.")
        if mine is not None and mine != theirs:
            line += f" The earlier judge gave {int(mine)}."
        said = notes.get((response_id, criterion.key))
        if said:
            line += " Expert's note: " + " / ".join(said)
        lines.append(line)
    overall = notes.get((response_id, ""))
    if overall:
        lines.append("Expert's overall note: " + " / ".join(overall))
    return "\n".join(lines)


def _notes(project: Project, reference: str, ids: list[str]) -> dict[tuple[str, str], list[str]]:
    """The experts' notes on these responses: (response id, criterion) → notes, and
    (response id, "") → overall notes. The consensus's notes are every grader's, and an
    adjudicator's; a grader's are their own."""
    marks = ", ".join("?" * len(ids))
    who = "" if reference == HUMAN_CONSENSUS else " AND r.name = ?"
    extra = [] if reference == HUMAN_CONSENSUS else [reference]
    found: dict[tuple[str, str], list[str]] = {}
    rows = project.conn.execute(
        f"SELECT s.response_id, s.criterion, s.note FROM scores s JOIN raters r ON r.id = "
        f"s.rater_id WHERE {is_grader('r')}{who} AND s.response_id IN ({marks}) AND "
        "coalesce(s.note, '') != '' ORDER BY r.name", [*extra, *ids]).fetchall()
    rows += project.conn.execute(
        f"SELECT a.response_id, '', a.comment FROM assessments a JOIN raters r ON r.id = "
        f"a.rater_id WHERE {is_grader('r')}{who} AND a.response_id IN ({marks}) AND "
        "coalesce(a.comment, '') != '' ORDER BY r.name", [*extra, *ids]).fetchall()
    if reference == HUMAN_CONSENSUS:
        rows += project.conn.execute(
            "SELECT response_id, criterion, note FROM score_adjudications WHERE response_id "
            f"IN ({marks}) AND coalesce(note, '') != ''", ids).fetchall()
    for response_id, criterion, note in rows:
        said = found.setdefault((response_id, criterion), [])
        if note.strip() not in said:
            said.append(note.strip())
    return found
