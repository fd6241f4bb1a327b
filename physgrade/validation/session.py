"""What one reviewer works through when auditing judges on a sample: every verdict of every
judge on the sample's responses, under the judges' blind names, in an order of their own.

An item is done once the reviewer has labelled the verdict and recorded an agreement with every
criterion the judge scored (the scales of :mod:`physgrade.validation.reviews`, which also
writes them).
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Sequence

from physgrade.project import Project
from physgrade.raters import person_id
from physgrade.rubric import Rubric, rubric_for_kind
from physgrade.scores import response_rubric
from physgrade.validation import blind, sampling
from physgrade.validation.sampling import Sample

_CHUNK = 500


@dataclass(frozen=True, slots=True)
class ReviewItem:
    """One judge verdict to review; the judge appears by its blind name only."""

    response_id: str
    judge_id: int
    alias: str


@dataclass(frozen=True, slots=True)
class VerdictView:
    """A judge's verdict as a reviewer sees it, with the reviewer's own work on it so far."""

    response_id: str
    alias: str
    rubric: Rubric
    multiple_choice: bool
    scores: dict[str, int | None]        # criterion -> the judge's score (None: N/A)
    rationale: dict[str, str]            # criterion -> the judge's reason, where it gave one
    comment: str | None                  # the judge's overall comment
    agreements: dict[str, int]           # criterion -> the reviewer's agreement (reviews.AGREEMENTS)
    verdict: str | None                  # the reviewer's label (reviews.VERDICTS)

    @property
    def done(self) -> bool:
        return self.verdict is not None and set(self.scores) <= set(self.agreements)


def queue(project: Project, sample_id: int, reviewer: str) -> list[ReviewItem]:
    """Every (response, judge) pair of a sample, in an order of the reviewer's own: the same
    each time they come back, another for another reviewer."""
    chosen = sampling.sample(project, sample_id)
    names = blind.aliases(project, chosen.judge_ids)
    pairs = sorted(verdicts(project, chosen))
    random.Random(f"{sample_id}:{reviewer}").shuffle(pairs)
    return [ReviewItem(rid, judge, names[judge]) for rid, judge in pairs]


def progress(project: Project, sample_id: int, reviewer: str) -> tuple[int, int]:
    """How many of the sample's verdicts the reviewer has finished, and how many there are."""
    pairs = verdicts(project, sampling.sample(project, sample_id))
    return len(finished(project, reviewer, pairs)), len(pairs)


def verdicts(project: Project, chosen: Sample) -> list[tuple[str, int]]:
    """The (response, judge) verdicts of a sample: each of its judges' verdicts on each of its
    responses. A drawn sample has them all; the imported one only those the judges gave."""
    given = set(project.conn.execute(
        "SELECT a.response_id, a.rater_id FROM assessments a JOIN review_sample_items i ON "
        "i.response_id = a.response_id WHERE i.sample_id = ?", (chosen.id,)))
    return [(rid, judge) for rid in sampling.items(project, chosen.id)
            for judge in chosen.judge_ids if (rid, judge) in given]


def next_open(items: Sequence[ReviewItem], project: Project, reviewer: str) -> int | None:
    """The index of the first item of a queue the reviewer has not finished (None: all done)."""
    done = finished(project, reviewer, [(item.response_id, item.judge_id) for item in items])
    for index, item in enumerate(items):
        if (item.response_id, item.judge_id) not in done:
            return index
    return None


def finished(project: Project, reviewer: str,
             pairs: Iterable[tuple[str, int]]) -> set[tuple[str, int]]:
    """The (response, judge) pairs the reviewer has finished: verdict labelled and every
    criterion the judge scored given an agreement."""
    wanted = set(pairs)
    reviewer_id = person_id(project, reviewer)
    if reviewer_id is None or not wanted:
        return set()
    judges = sorted({judge for _, judge in wanted})
    responses = sorted({rid for rid, _ in wanted})
    needed: dict[tuple[str, int], set[str]] = defaultdict(set)
    given: dict[tuple[str, int], set[str]] = defaultdict(set)
    labelled: set[tuple[str, int]] = set()
    conn = project.conn
    judge_marks = ", ".join("?" * len(judges))
    for start in range(0, len(responses), _CHUNK):
        chunk = responses[start : start + _CHUNK]
        marks = ", ".join("?" * len(chunk))
        for judge, rid, rubric, kind, criterion in conn.execute(
                "SELECT s.rater_id, s.response_id, s.rubric, q.kind, s.criterion FROM scores s "
                "JOIN responses r ON r.id = s.response_id JOIN questions q ON q.id = r.question_id "
                f"WHERE s.response_id IN ({marks}) AND s.rater_id IN ({judge_marks})",
                (*chunk, *judges)):
            if rubric == rubric_for_kind(kind).key:
                needed[(rid, judge)].add(criterion)
        for judge, rid, criterion in conn.execute(
                "SELECT judge_id, response_id, criterion FROM judge_review_criteria WHERE "
                f"reviewer_id = ? AND response_id IN ({marks})", (reviewer_id, *chunk)):
            given[(rid, judge)].add(criterion)
        labelled.update((rid, judge) for judge, rid in conn.execute(
            "SELECT judge_id, response_id FROM judge_reviews WHERE reviewer_id = ? AND verdict "
            f"IS NOT NULL AND response_id IN ({marks})", (reviewer_id, *chunk)))
    return {pair for pair in wanted if pair in labelled and needed[pair] <= given[pair]}


def verdict_view(project: Project, item: ReviewItem, reviewer: str) -> VerdictView:
    """The judge's scores, reasons and comment on a response, with the reviewer's agreements
    and label so far."""
    rubric, multiple_choice = response_rubric(project, item.response_id)
    conn = project.conn
    row = conn.execute("SELECT comment FROM assessments WHERE rater_id = ? AND response_id = ? "
                       "AND rubric = ?", (item.judge_id, item.response_id, rubric.key)).fetchone()
    scored = {criterion: (value, note) for criterion, value, note in conn.execute(
        "SELECT criterion, value, note FROM scores WHERE rater_id = ? AND response_id = ? "
        "AND rubric = ?", (item.judge_id, item.response_id, rubric.key))}
    order = [key for key in rubric.keys if key in scored]
    agreements: dict[str, int] = {}
    verdict = None
    reviewer_id = person_id(project, reviewer)
    if reviewer_id is not None:
        agreements = dict(conn.execute(
            "SELECT criterion, agreement FROM judge_review_criteria WHERE reviewer_id = ? AND "
            "judge_id = ? AND response_id = ?", (reviewer_id, item.judge_id, item.response_id)))
        label = conn.execute("SELECT verdict FROM judge_reviews WHERE reviewer_id = ? AND "
                             "judge_id = ? AND response_id = ?",
                             (reviewer_id, item.judge_id, item.response_id)).fetchone()
        verdict = label[0] if label else None
    return VerdictView(
        item.response_id, item.alias, rubric, multiple_choice,
        {key: scored[key][0] for key in order},
        {key: scored[key][1] for key in order if scored[key][1]},
        row[0] if row else None,
        {key: agreements[key] for key in rubric.keys if key in agreements}, verdict)
