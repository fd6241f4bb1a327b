"""People with few grades folded into one "others" row of the tables readers see.

A person with two grades gets an agreement whose interval spans most of the scale; a row of
their own reads as a finding it is not. So the tables on screen and in the HTML report fold
everyone with fewer than :attr:`~physgrade.report.options.ReportOptions.min_grades` grades into
one row, computed as if they were one person, and the per-rater figures leave them out; the CSV
and JSON exports keep everyone's own row (:attr:`~physgrade.report.model.Table.folded`).

A grade is one item a person rated within the report's filter: a response graded on every
criterion of its rubric (graders: the count of the total score's n), a judge's verdict reviewed
(reviewers: one per judge and response), a question labelled (Bloom labellers). Where two folded
people rated the same item, the first by name counts, as one person rates an item once. Judges,
the human consensus and the final Bloom label are never folded.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import Callable, Mapping, Sequence, TypeVar

import numpy as np

from physgrade.annotation import figures as bloom
from physgrade.raters import HUMAN
from physgrade.report.model import Cell, Table
from physgrade.scoring import tables as score_tables
from physgrade.scoring.store import MISSING
from physgrade.scoring.tables import ScoreData
from physgrade.selection import ResponseFilter
from physgrade.validation import figures as audit
from physgrade.wording import count

Review = TypeVar("Review", bound=audit.Review)


@dataclass(frozen=True, slots=True)
class Folding:
    """The people of one kind (``person``: "grader", "reviewer", "labeller") with fewer than
    ``threshold`` grades (``unit``: what one is called) each, folded into the row
    :attr:`label`; ``grades`` counts theirs together."""

    threshold: int
    person: str
    unit: str
    folded: tuple[str, ...] = ()
    grades: int = 0

    @classmethod
    def of(cls, counts: Mapping[str, int], threshold: int, person: str, unit: str) -> Folding:
        """Who of ``counts`` (person -> grades) is folded; nobody under a threshold of 0 or 1
        (a person without a complete grade still has a row of their own then)."""
        folded = tuple(sorted(name for name, n in counts.items() if n < threshold)
                       if threshold > 1 else ())
        return cls(threshold, person, unit, folded, sum(counts[name] for name in folded))

    @property
    def label(self) -> str:
        """The name of the others row: "others (3 graders, 7 grades)"."""
        return (f"others ({count(len(self.folded), self.person)}, "
                f"{count(self.grades, self.unit)})")

    @property
    def others(self) -> list[str]:
        """The others row's rater, where anyone is folded: a list to append to raters."""
        return [self.label] if self.folded else []

    def kept(self, people: Sequence[str]) -> list[str]:
        """Those of ``people`` with rows of their own."""
        return [name for name in people if name not in self.folded]

    def left_out(self, rater: str) -> bool:
        """Whether a per-rater figure leaves ``rater`` out: a folded person, or them together."""
        return rater in self.folded or rater == self.label

    def admitted(self, where: ResponseFilter) -> ResponseFilter:
        """``where``, letting the others row through wherever it lets people through by name."""
        return replace(where, graders=where.graders | {self.label}) if where.graders else where

    def table(self, table: Table, shown: Callable[[], list[tuple[Cell, ...]]]) -> Table:
        """``table`` with the rows readers see (``shown()``, asked only here) and a note saying
        why; unchanged when nobody is folded."""
        if not self.folded:
            return table
        note = (f"{self._who()} {'is' if len(self.folded) == 1 else 'are'} shown as "
                f"'{self.label}', computed as one {self.person} (on an item several of them "
                "rated, the first by name counts); the CSV and JSON exports keep each one's own "
                "row.")
        return replace(table, folded=replace(table, rows=shown(),
                                             note=f"{table.note} {note}".strip()))

    def caption(self) -> str:
        """What a per-rater figure's caption adds: who it leaves out ("" for nobody)."""
        if not self.folded:
            return ""
        return (f" {self._who()} {'is' if len(self.folded) == 1 else 'are'} left out; the "
                f"table has their numbers together, as '{self.label}'.")

    def _who(self) -> str:
        """Who is folded: "2 graders with fewer than 10 grades each"."""
        return (f"{count(len(self.folded), self.person).capitalize()} with fewer than "
                f"{count(self.threshold, self.unit)}{' each' if len(self.folded) > 1 else ''}")


#: No one folded: what a section is computed with when nobody says otherwise.
NOBODY = Folding(0, "person", "grade")


@dataclass(frozen=True, eq=False)
class FoldedRows:
    """A table's rows as they are computed: ``every`` person's own (the exports) and those
    readers see (``shown``: the others row instead of the folded people's)."""

    folding: Folding
    every: list[tuple[Cell, ...]] = field(default_factory=list)
    shown: list[tuple[Cell, ...]] = field(default_factory=list)

    def add(self, row: tuple[Cell, ...], *raters: str) -> None:
        """``row``, about each of ``raters`` (none: a row about a group as a whole, which both
        keep)."""
        if self.folding.label not in raters:
            self.every.append(row)
        if not set(raters) & set(self.folding.folded):
            self.shown.append(row)

    def table(self, table: Table) -> Table:
        """``table`` (made of :attr:`every`) with the rows readers see."""
        return self.folding.table(table, lambda: self.shown)


# -- graders ------------------------------------------------------------------------------------


def graders(data: ScoreData, threshold: int) -> Folding:
    """The graders of ``data`` folded under ``threshold`` responses graded completely."""
    return Folding.of({grader: len(score_tables.sheet(data, grader)) for grader in data.graders},
                      threshold, "grader", "grade")


def with_others(data: ScoreData, folding: Folding) -> ScoreData:
    """``data`` with one rater more, the folded graders together (:attr:`Folding.label`): for
    each response, the scores of the first of them by name who scored it. Their own columns and
    the consensus stay as they are."""
    if not folding.folded:
        return data
    codes = data.codes
    others = np.full(codes.shape[:2], MISSING, dtype=codes.dtype)
    for grader in folding.folded:
        theirs = codes[:, :, data.columns.index(grader)]
        free = (others == MISSING).all(axis=0) & (theirs != MISSING).any(axis=0)
        others[:, free] = theirs[:, free]
    return ScoreData(data.responses, data.lengths, data.judges, data.graders,
                     data.kinds | {folding.label: HUMAN}, data.ids, [*data.columns, folding.label],
                     np.concatenate([codes, others[:, :, None]], axis=2), data.adjudicated)


# -- reviewers of the judge audit ---------------------------------------------------------------


def reviewers(reviews: audit.Reviews, where: ResponseFilter, threshold: int) -> Folding:
    """The reviewers folded under ``threshold`` judge verdicts reviewed within ``where``."""
    reviewed: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for review in audit.within_filter((*reviews.criteria, *reviews.verdicts), where):
        reviewed[review.reviewer].add((review.judge.label, review.response_id))
    return Folding.of({name: len(items) for name, items in reviewed.items()}, threshold,
                      "reviewer", "review")


def reviews_with_others(reviews: audit.Reviews, folding: Folding) -> audit.Reviews:
    """``reviews`` with the folded reviewers as one: each verdict's reviews by the first of them
    by name who reviewed it, under :attr:`Folding.label`."""
    first: dict[tuple[str, str], str] = {}
    for review in (*reviews.criteria, *reviews.verdicts):
        if review.reviewer in folding.folded:
            item = (review.judge.label, review.response_id)
            first[item] = min(first.get(item, review.reviewer), review.reviewer)

    def fold(found: tuple[Review, ...]) -> tuple[Review, ...]:
        return tuple(replace(r, reviewer=folding.label) if r.reviewer in folding.folded else r
                     for r in found if first.get((r.judge.label, r.response_id), r.reviewer)
                     == r.reviewer)

    return replace(reviews, criteria=fold(reviews.criteria), verdicts=fold(reviews.verdicts))


# -- Bloom labellers ----------------------------------------------------------------------------


def labellers(labels: bloom.Labels, where: ResponseFilter, threshold: int) -> Folding:
    """The people folded under ``threshold`` questions labelled within ``where``."""
    by_annotator, people, _models = bloom.labels_by_annotator(labels, where)
    return Folding.of({person: len(by_annotator[person]) for person in people}, threshold,
                      "labeller", "label")


def labels_with_others(labels: bloom.Labels, folding: Folding) -> bloom.Labels:
    """``labels`` with the folded people as one: each question's label by the first of them by
    name who labelled it, under :attr:`Folding.label`."""
    first: dict[str, str] = {}
    for label in labels.labels:
        if label.kind == HUMAN and label.annotator in folding.folded:
            first[label.question_id] = min(first.get(label.question_id, label.annotator),
                                           label.annotator)
    def folded(label: bloom.Label) -> bool:
        return label.kind == HUMAN and label.annotator in folding.folded

    return replace(labels, labels=tuple(
        replace(label, annotator=folding.label) if folded(label) else label
        for label in labels.labels
        if not folded(label) or label.annotator == first[label.question_id]))
