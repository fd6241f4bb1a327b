"""The figures of a judge audit: how experts rated the verdicts of each LLM judge.

Experts review judge verdicts blind (``judge_reviews`` and ``judge_review_criteria``): for each
criterion 2 = full agreement with the judge, 1 = partial, 0 = disagreement, and for the verdict
as a whole a label, correct / lenient / strict. :func:`read_reviews` reads them all once (never
writes); these functions narrow them to a report's filter in memory, so that a filter change
reads nothing, and return plain dataclasses that the report turns into tables:

- :func:`reviewer_agreement`: two reviewers against each other, per judge and criterion;
- :func:`full_agreement`: each reviewer's share of 2s, per judge and criterion;
- :func:`verdict_distribution`: each judge's correct / lenient / strict shares;
- :func:`recommendation`: which judge to use, with a paired test against the runner-up.

Judges are named by their real rater label: a report is where the blind aliases are revealed,
as ``Judge A = arbiter-large [prefs-v1]`` when the project's ``judge_aliases`` table names one.
Statistics come from :mod:`physgrade.stats`; nothing is re-implemented here.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations
from typing import Mapping, TypeVar

import numpy as np

from physgrade.facets import by_question
from physgrade.project import Project
from physgrade.raters import rater_label
from physgrade.rubric import RUBRICS
from physgrade.selection import ResponseFilter
from physgrade.stats.agreement import gwet_ac2, percent_agreement
from physgrade.stats.describe import proportion
from physgrade.stats.estimate import Estimate
from physgrade.stats.paired import mcnemar_exact
from physgrade.validation.reviews import AGREEMENT_LEVELS, CORRECT, FULL, VERDICTS

#: Fewer (reviewer, response) pairs than this and no test is run between two judges.
MIN_PAIRS = 10
#: The significance level of the recommendation's test.
ALPHA = 0.05


# -- results ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReviewerAgreement:
    """Two reviewers on the same criterion of the same judge's verdicts."""

    reviewers: tuple[str, str]
    judge: str          # shown name (see :func:`judge_names`)
    rubric: str         # rubric title, e.g. "P-REFS"
    criterion: str      # criterion key, e.g. "ANS"
    n: int              # verdicts both reviewed on this criterion
    exact: Estimate     # share of identical 0/1/2 values
    ac2: Estimate       # Gwet's AC2, linear weights over 0, 1, 2


@dataclass(frozen=True, slots=True)
class FullAgreement:
    """One reviewer's share of full agreement (2) with one judge on one criterion."""

    reviewer: str
    judge: str
    rubric: str
    criterion: str
    n: int
    rate: Estimate      # share of 2s, Wilson interval


@dataclass(frozen=True, slots=True)
class VerdictDistribution:
    """How the reviewers labelled one judge's verdicts.

    Each share is the mean over reviewers of that reviewer's share; its interval is the Wilson
    interval of the counts pooled over reviewers (with every reviewer on the same sample, the
    pooled share and the mean of shares coincide). ``n`` counts labelled verdicts, pooled.
    """

    judge: str
    reviewers: int
    n: int
    correct: Estimate
    lenient: Estimate
    strict: Estimate

    def share(self, verdict: str) -> Estimate:
        if verdict not in VERDICTS:
            raise KeyError(verdict)
        return getattr(self, verdict)


@dataclass(frozen=True, slots=True)
class Recommendation:
    """The judge with the highest correct share (ties: the lowest lenient share), and whether it
    beats the runner-up by McNemar's exact test on paired "labelled correct" outcomes, a pair
    being one reviewer's labels of both judges' verdicts on the same response."""

    judge: str
    correct: float
    lenient: float
    runner_up: str | None
    runner_up_correct: float | None
    pairs: int                          # (reviewer, response) pairs with both judges labelled
    table: list[list[int]] | None       # rows judge correct yes/no, columns runner-up yes/no
    p_value: float | None               # None: no runner-up, or fewer than MIN_PAIRS pairs
    significant: bool | None
    text: str


# -- reading ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Judge:
    """A reviewed judge: its rater label and the blind alias reviewers saw it under, if any."""

    label: str
    alias: str | None

    @property
    def name(self) -> str:
        return f"{self.alias} = {self.label}" if self.alias else self.label


@dataclass(frozen=True, slots=True)
class Review:
    """Who reviewed which judge's verdict on which response, with the response's facets (by
    which a report's filter narrows the reviews; ``fields``: its question's values of the
    declared facets, :func:`physgrade.facets.by_question`)."""

    reviewer: str
    judge: Judge
    response_id: str
    model: str
    topic: str | None
    kind: str
    bloom_cognitive: str | None
    fields: Mapping[str, str | None] = field(default_factory=dict, kw_only=True, compare=False)


@dataclass(frozen=True, slots=True)
class CriterionReview(Review):
    """A reviewer's agreement with the judge's score of one criterion: 2, 1 or 0."""

    rubric: str         # the rubric key of the judge's assessment, "" when it has none
    criterion: str
    agreement: int


@dataclass(frozen=True, slots=True)
class VerdictReview(Review):
    """A reviewer's label of the judge's verdict as a whole: correct, lenient or strict."""

    verdict: str


@dataclass(frozen=True, slots=True)
class Reviews:
    """A project's judge audit read whole (:func:`read_reviews`), so that a report's filter
    narrows it in memory, in the order read, and a filter change reads nothing."""

    judges: tuple[Judge, ...]               # every reviewed judge
    criteria: tuple[CriterionReview, ...]
    verdicts: tuple[VerdictReview, ...]     # the reviews with a verdict label


#: What every review read starts with, from a review table aliased ``v``, and the joins it needs.
_REVIEW_COLUMNS = ("rv.name, rv.prompt_version, v.judge_id, v.response_id, r.model, q.topic, "
                   "q.kind, q.bloom_cognitive, q.id")
_REVIEW_JOINS = ("JOIN raters rv ON rv.id = v.reviewer_id JOIN responses r ON r.id = "
                 "v.response_id JOIN questions q ON q.id = r.question_id")


def read_reviews(project: Project) -> Reviews:
    """Every review of the project's judge verdicts, unfiltered."""
    judges = _judges(project)
    fields = by_question(project)
    criteria = tuple(
        CriterionReview(rater_label(name, version), judges[int(judge_id)], response_id, model,
                        topic, kind, bloom, rubric or "", criterion, int(value),
                        fields=fields.get(qid, {}))
        for name, version, judge_id, response_id, model, topic, kind, bloom, qid, rubric,
        criterion, value in project.conn.execute(
            f"SELECT {_REVIEW_COLUMNS}, (SELECT MIN(a.rubric) FROM assessments a WHERE "
            "a.rater_id = v.judge_id AND a.response_id = v.response_id), v.criterion, "
            f"v.agreement FROM judge_review_criteria v {_REVIEW_JOINS}"))
    verdicts = tuple(
        VerdictReview(rater_label(name, version), judges[int(judge_id)], response_id, model,
                      topic, kind, bloom, verdict, fields=fields.get(qid, {}))
        for name, version, judge_id, response_id, model, topic, kind, bloom, qid, verdict in
        project.conn.execute(f"SELECT {_REVIEW_COLUMNS}, v.verdict FROM judge_reviews v "
                             f"{_REVIEW_JOINS} WHERE v.verdict IS NOT NULL"))
    return Reviews(tuple(judges.values()), criteria, verdicts)


def _judges(project: Project) -> dict[int, Judge]:
    aliases = {int(judge_id): str(alias) for judge_id, alias in
               project.conn.execute("SELECT judge_id, alias FROM judge_aliases")}
    return {int(rid): Judge(rater_label(name, version, run), aliases.get(int(rid)))
            for rid, name, version, run in project.conn.execute(
                "SELECT id, name, prompt_version, run FROM raters r WHERE EXISTS (SELECT 1 FROM "
                "judge_reviews v WHERE v.judge_id = r.id) OR EXISTS (SELECT 1 FROM "
                "judge_review_criteria c WHERE c.judge_id = r.id)")}


def has_reviews(reviews: Reviews) -> bool:
    """Whether any expert has reviewed a judge verdict (with or without a label)."""
    return bool(reviews.judges)


def judge_names(reviews: Reviews) -> dict[str, str]:
    """Every reviewed judge's rater label → how the audit figures name it."""
    return {judge.label: judge.name for judge in reviews.judges}


_Row = TypeVar("_Row", bound=Review)


def within_filter(reviews: tuple[_Row, ...], report_filter: ResponseFilter) -> list[_Row]:
    """The reviews within the filter, in the order read: facets combine with AND, values with
    OR; its graders narrow the reviewers and its judges the judges."""
    return [r for r in reviews if report_filter.admits(r)
            and (not report_filter.graders or r.reviewer in report_filter.graders)
            and (not report_filter.judges or r.judge.label in report_filter.judges)]


def _criterion_order(rubric: str, criterion: str) -> tuple[int, int, str]:
    """Rubrics in their registry order, criteria in rubric order; anything unknown last."""
    rubrics = list(RUBRICS)
    if rubric not in RUBRICS:
        return len(rubrics), 0, criterion
    keys = RUBRICS[rubric].keys
    return rubrics.index(rubric), keys.index(criterion) if criterion in keys else len(keys), criterion


def _rubric_title(rubric: str) -> str:
    return RUBRICS[rubric].title if rubric in RUBRICS else rubric or "?"


# -- 1. reviewer against reviewer ---------------------------------------------------------------


def reviewer_agreement(reviews: Reviews, report_filter: ResponseFilter = ResponseFilter()
                       ) -> list[ReviewerAgreement]:
    """Every pair of reviewers, per judge and criterion, on the verdicts both reviewed: exact
    agreement (with its Wilson interval) and Gwet's AC2 with linear weights over 0, 1, 2.
    Combinations nobody reviewed twice are left out."""
    values: dict[tuple[str, str, str], dict[str, dict[str, int]]] = defaultdict(
        lambda: defaultdict(dict))
    names: dict[str, str] = {}
    for r in within_filter(reviews.criteria, report_filter):
        names[r.judge.label] = r.judge.name
        values[(r.judge.label, r.rubric, r.criterion)][r.reviewer][r.response_id] = r.agreement
    reviewers = sorted({r for by_reviewer in values.values() for r in by_reviewer})
    out = []
    for first, second in combinations(reviewers, 2):
        for (label, rubric, criterion) in sorted(values, key=lambda k: (k[0], *_criterion_order(
                k[1], k[2]))):
            a, b = values[(label, rubric, criterion)].get(first, {}), values[
                (label, rubric, criterion)].get(second, {})
            both = sorted(set(a) & set(b))
            if not both:
                continue
            ratings = np.array([[a[r], b[r]] for r in both], dtype=float)
            out.append(ReviewerAgreement(
                (first, second), names[label], _rubric_title(rubric), criterion, len(both),
                percent_agreement(ratings, AGREEMENT_LEVELS),
                gwet_ac2(ratings, "linear", AGREEMENT_LEVELS)))
    return out


# -- 2. full agreement with each judge ----------------------------------------------------------


def full_agreement(reviews: Reviews, report_filter: ResponseFilter = ResponseFilter()
                   ) -> list[FullAgreement]:
    """Per judge, criterion and reviewer: the share of the reviewer's values that are 2 (full
    agreement with the judge), with its Wilson interval."""
    counts: dict[tuple[str, str, str, str], list[int]] = defaultdict(lambda: [0, 0])
    names: dict[str, str] = {}
    for r in within_filter(reviews.criteria, report_filter):
        names[r.judge.label] = r.judge.name
        cell = counts[(r.judge.label, r.rubric, r.criterion, r.reviewer)]
        cell[0] += r.agreement == FULL
        cell[1] += 1
    out = []
    for label, rubric, criterion, reviewer in sorted(
            counts, key=lambda k: (k[0], *_criterion_order(k[1], k[2]), k[3])):
        agreeing, n = counts[(label, rubric, criterion, reviewer)]
        out.append(FullAgreement(reviewer, names[label], _rubric_title(rubric), criterion, n,
                                 proportion(agreeing, n)))
    return out


# -- 3. correct, lenient, strict ----------------------------------------------------------------


def verdict_distribution(reviews: Reviews, report_filter: ResponseFilter = ResponseFilter()
                         ) -> list[VerdictDistribution]:
    """Per judge, the correct / lenient / strict shares of its reviewed verdicts: each reviewer's
    shares, then their mean; the 95% interval is Wilson's on the counts pooled over reviewers."""
    counts: dict[str, dict[str, dict[str, int]]] = defaultdict(
        lambda: defaultdict(lambda: dict.fromkeys(VERDICTS, 0)))
    names: dict[str, str] = {}
    for r in within_filter(reviews.verdicts, report_filter):
        names[r.judge.label] = r.judge.name
        counts[r.judge.label][r.reviewer][r.verdict] += 1
    out = []
    for label in sorted(counts):
        by_reviewer = counts[label]
        pooled = {v: sum(c[v] for c in by_reviewer.values()) for v in VERDICTS}
        n = sum(pooled.values())
        shares = {}
        for verdict in VERDICTS:
            mean_share = float(np.mean([c[verdict] / sum(c.values())
                                        for c in by_reviewer.values()]))
            wilson = proportion(pooled[verdict], n)
            shares[verdict] = Estimate(mean_share, wilson.ci95, n)
        out.append(VerdictDistribution(names[label], len(by_reviewer), n, **shares))
    return out


# -- 4. which judge -----------------------------------------------------------------------------


def recommendation(reviews: Reviews, report_filter: ResponseFilter = ResponseFilter()
                   ) -> Recommendation | None:
    """The judge to use, or None when no verdict has a label. See :class:`Recommendation`."""
    distribution = verdict_distribution(reviews, report_filter)
    if not distribution:
        return None
    ranked = sorted(distribution, key=lambda d: (-_value(d.correct), _value(d.lenient), d.judge))
    best = ranked[0]
    head = (f"{best.judge} is recommended: correct on {_value(best.correct):.1%} of its verdicts "
            f"(lenient {_value(best.lenient):.1%})")
    if len(ranked) == 1:
        return Recommendation(best.judge, _value(best.correct), _value(best.lenient), None, None,
                              0, None, None, None, head + "; it is the only judge reviewed.")
    second = ranked[1]
    labelled: dict[str, dict[tuple[str, str], float]] = defaultdict(dict)
    for r in within_filter(reviews.verdicts, report_filter):
        labelled[r.judge.name][(r.reviewer, r.response_id)] = float(r.verdict == CORRECT)
    paired = sorted(set(labelled[best.judge]) & set(labelled[second.judge]))
    head += f", against {_value(second.correct):.1%} for {second.judge}"
    if len(paired) < MIN_PAIRS:
        return Recommendation(
            best.judge, _value(best.correct), _value(best.lenient), second.judge,
            _value(second.correct), len(paired), None, None, None,
            f"{head}; not enough data to test the difference ({len(paired)} paired reviews of "
            f"the same response, at least {MIN_PAIRS} needed).")
    test = mcnemar_exact([labelled[best.judge][k] for k in paired],
                         [labelled[second.judge][k] for k in paired])
    assert test.p_value is not None  # there are pairs
    significant = test.p_value < ALPHA
    verdict = (f"the difference is {'' if significant else 'not '}significant "
               f"(McNemar {_p(test.p_value)})")
    return Recommendation(best.judge, _value(best.correct), _value(best.lenient), second.judge,
                          _value(second.correct), test.n, test.table, test.p_value, significant,
                          f"{head}; {verdict}.")


def _value(estimate: Estimate) -> float:
    return estimate.value if estimate.value is not None else 0.0


def _p(p: float) -> str:
    """``p = 0.003``, ``p = 0.21``, ``p < 0.001``."""
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}" if p < 0.1 else f"p = {p:.2f}"
