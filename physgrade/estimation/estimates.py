"""Model scores corrected by expert grades, and how many grades a wanted precision needs.

A judge scores every response; experts grade a random estimation sample
(:mod:`physgrade.estimation.sample`). For each model, and for all models together, and for each
measure of :data:`MEASURES`, :func:`estimate` gives three numbers side by side: the judge's own
mean over every response it scored (biased when it is lenient), the experts' mean over the
sample (honest but wide), and the judge's mean corrected by its error on the sample
(:func:`physgrade.stats.ppi.ppi_mean`: honest, and narrower whenever the judge is informative).
:func:`plan` turns the spreads seen so far into the number of expert grades a 95% interval of a
given half-width needs, corrected and from the experts alone.

The *labelled* responses of a model are those of the sample that the reference graded and the
judge scored; every other response the judge scored is *judge-only*. A stratified sample is
weighted by 1 / each response's inclusion probability, so that a stratum drawn more densely
counts no more than its share. Grades of responses outside the sample are not used: they were
not drawn at random.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from physgrade.analyses import ALL_MODELS
from physgrade.estimation import sample as samples
from physgrade.estimation.sample import STRATIFIED, Drawn, EstimationSample
from physgrade.project import Project
from physgrade.raters import CONSENSUS, HUMAN_CONSENSUS, judge_label, reference_label
from physgrade.scoring import tables as score_tables
from physgrade.scoring.tables import ScoreData
from physgrade.selection import ResponseFilter
from physgrade.stats import ppi
from physgrade.stats.estimate import Estimate
from physgrade.stats.ppi import Corrected, Needed
from physgrade.tasks import Task
from physgrade.wording import count

#: The measures estimated, by key (as in the JSON), with how they are shown.
MEASURES = {"final_answer_correct": "Final answer correct", "score_share": "Mean score share"}
#: The fewest expert grades a corrected estimate is given from. Its interval is a large-sample
#: one: from a handful of grades that happen to agree with the judge it would come out as
#: narrow as if the judge were known to be exact. (A plan needs only 2: it says how many more.)
MIN_GRADES = 10


# -- results ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Row:
    """One model's (or :data:`ALL_MODELS`') three estimates of one measure. ``unlabeled``
    counts the judge-only responses; ``reason`` says why ``corrected`` is None.
    ``corrected`` is as the estimator computes it (as ppi_py would); what readers see
    (:meth:`corrected_estimate`, ``experts_only``) is cut to 0..1, the range a share takes."""

    model: str
    measure: str
    judge_only: Estimate
    experts_only: Estimate
    corrected: Corrected | None
    unlabeled: int
    reason: str | None = None

    def corrected_estimate(self) -> Estimate:
        """The corrected value with its interval, or why there is none."""
        if self.corrected is None:
            return Estimate.unavailable(self.experts_only.n, self.reason or "not computed")
        return self.corrected.estimate().within(0.0, 1.0)

    def as_dict(self) -> dict:
        shown = self.corrected_estimate()
        return {"model": self.model, "measure": self.measure,
                "judge_only": {"value": self.judge_only.value, "n": self.judge_only.n,
                               "reason": self.judge_only.reason},
                "experts_only": self.experts_only.as_dict(),
                "corrected": {"value": shown.value, "ci95": list(shown.ci95) if shown.ci95
                              else None, "n": shown.n, "n_unlabeled": self.unlabeled,
                              "lambda": self.corrected.lam if self.corrected else None,
                              "effective_n": self.corrected.effective_n if self.corrected
                              else None, "se": self.corrected.se if self.corrected else None,
                              "reason": shown.reason}}


@dataclass(frozen=True, slots=True)
class Difference:
    """The corrected difference ``models[0] − models[1]`` of one measure, with its interval."""

    measure: str
    models: tuple[str, str]
    estimate: Estimate

    def as_dict(self) -> dict:
        return {"measure": self.measure, "models": list(self.models)} | self.estimate.as_dict()


@dataclass(frozen=True, slots=True)
class Estimates:
    """What :func:`estimate` found: ``rows`` by measure, then models by name, then all
    models; ``differences`` for each pair of models in that order; ``notes`` to print with
    them (how much of the sample is graded, weights, assumptions)."""

    judge: str
    reference: str
    sample: EstimationSample
    rows: tuple[Row, ...]
    differences: tuple[Difference, ...]
    notes: tuple[str, ...]

    def models(self) -> list[str]:
        """The models, by name, then :data:`ALL_MODELS`."""
        return list(dict.fromkeys(row.model for row in self.rows))

    def row(self, model: str, measure: str) -> Row:
        return next(r for r in self.rows if r.model == model and r.measure == measure)

    def as_dict(self) -> dict:
        return {"judge": self.judge, "reference": self.reference,
                "sample": _sample_dict(self.sample),
                "estimates": [row.as_dict() for row in self.rows],
                "differences": [difference.as_dict() for difference in self.differences],
                "notes": list(self.notes)}


@dataclass(frozen=True, slots=True)
class PlanRow:
    """How many expert grades one model's (or all models') measure needs. ``graded``: the
    labelled responses so far; ``left``: sampled responses the judge scored that the reference
    has not graded yet (what this sample can still give); ``needed`` None says why in
    ``reason``."""

    model: str
    measure: str
    graded: int
    left: int
    needed: Needed | None
    reason: str | None = None

    @property
    def more_corrected(self) -> int | None:
        """Expert grades still to give for the corrected interval (0 when already there)."""
        return _more(self.needed.corrected if self.needed else None, self.graded)

    @property
    def more_experts_only(self) -> int | None:
        """Expert grades still to give for the experts' own interval."""
        return _more(self.needed.experts_only if self.needed else None, self.graded)

    @property
    def why(self) -> str | None:
        """Why a number is missing, if one is."""
        return self.reason or (self.needed.reason if self.needed else None)

    def as_dict(self) -> dict:
        needed = self.needed or Needed(None, None)
        return {"model": self.model, "measure": self.measure, "graded": self.graded,
                "left_in_sample": self.left,
                "corrected": {"needed": needed.corrected, "more": self.more_corrected},
                "experts_only": {"needed": needed.experts_only, "more": self.more_experts_only},
                "reason": self.why}


@dataclass(frozen=True, slots=True)
class Planned:
    """What :func:`plan` found, rows in the order of :class:`Estimates`."""

    judge: str
    reference: str
    sample: EstimationSample
    half_width: float
    rows: tuple[PlanRow, ...]
    notes: tuple[str, ...]

    def as_dict(self) -> dict:
        return {"judge": self.judge, "reference": self.reference,
                "sample": _sample_dict(self.sample), "half_width": self.half_width,
                "plans": [row.as_dict() for row in self.rows], "notes": list(self.notes)}


# -- the two questions -----------------------------------------------------------------------


def estimate(project: Project, judge: str, sample: str, reference: str = CONSENSUS,
             assume_random: bool = False, task: Task | None = None,
             data: ScoreData | None = None) -> Estimates:
    """Each model's measures by the judge alone, the experts alone and corrected, and the
    corrected difference of every pair of models.

    ``judge``: a rater label, ``NAME [VERSION]`` (or the name alone when it has one version).
    ``sample``: an estimation sample's name. ``reference``: :data:`CONSENSUS` (the people's
    agreed grades) or a grader's name. A hand-picked sample is refused unless
    ``assume_random``, and the notes then say so. Raises ValueError for a judge or reference
    the project does not have and for a refused sample, ProjectError for an unknown sample.

    ``data``: the scores already read for a report (its filter then narrows the estimates, and
    its graders make the consensus); by default every score of the judge and the reference."""
    task = task or Task()
    return _estimates(_read_inputs(project, judge, sample, reference, assume_random, task, data),
                      task)


def estimate_drawn(drawn: Drawn, data: ScoreData, judge: str, reference: str,
                   task: Task | None = None) -> Estimates:
    """:func:`estimate` from what is read already: the sample as drawn
    (:func:`physgrade.estimation.sample.read_samples`) and a report's scores, ``judge`` and
    ``reference`` rater labels of them. A hand-picked sample is taken as random (the notes say
    so): the caller chose it."""
    task = task or Task()
    return _estimates(_inputs(drawn, data, judge, reference, task), task)


def _estimates(found: _Inputs, task: Task) -> Estimates:
    rows = []
    for part in found.parts:
        task.check()
        rows.append(_row(part))
    models = [model for model in dict.fromkeys(row.model for row in rows) if model != ALL_MODELS]
    by_key = {(row.model, row.measure): row for row in rows}
    differences = tuple(
        Difference(measure, (a, b), _difference(by_key[a, measure], by_key[b, measure]))
        for measure in MEASURES for a, b in combinations(models, 2))
    return Estimates(found.judge, found.reference, found.sample, tuple(rows), differences,
                     found.notes)


def plan(project: Project, judge: str, sample: str, half_width: float,
         reference: str = CONSENSUS, assume_random: bool = False,
         task: Task | None = None) -> Planned:
    """How many expert grades a 95% interval of ``half_width`` (a share, 0 < H < 1) needs per
    model and measure, corrected and from the experts alone, from the spreads seen in the
    sample so far; the other arguments as for :func:`estimate`."""
    if not 0 < half_width < 1:
        raise ValueError(f"the half-width is a share between 0 and 1 (e.g. 0.05 for ±5 points), "
                         f"not {half_width!r}")
    task = task or Task()
    found = _read_inputs(project, judge, sample, reference, assume_random, task)
    rows = []
    for part in found.parts:
        task.check()
        reason = _not_correctable(part)
        rows.append(PlanRow(part.model, part.measure, len(part.labels), part.left,
                            None if reason else ppi.needed(
                                part.labels, part.judged_labeled, part.judged_unlabeled,
                                half_width, part.weights, part.weights_unlabeled), reason))
    short = sorted({row.model for row in rows if (row.more_corrected or 0) > row.left})
    notes = found.notes + ((f"the sample cannot give all the grades needed for "
                            f"{', '.join(short)}: grade it all, then draw another",) if short
                           else ())
    return Planned(found.judge, found.reference, found.sample, half_width, tuple(rows), notes)


# -- the numbers each estimate is made of ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Part:
    """One model's (or all models') values of one measure, as the estimators take them:
    the judge's on every response it scored, the reference's and the judge's on the labelled
    responses (in the same order) with their inclusion weights (None: all equal), the judge's
    on the judge-only ones with theirs, and how many sampled responses the reference has
    ``left`` to grade."""

    model: str
    measure: str
    judged: np.ndarray
    labels: np.ndarray
    judged_labeled: np.ndarray
    judged_unlabeled: np.ndarray
    weights: np.ndarray | None
    weights_unlabeled: np.ndarray | None
    left: int


@dataclass(frozen=True, slots=True)
class _Inputs:
    judge: str
    reference: str
    sample: EstimationSample
    parts: list[_Part]
    notes: tuple[str, ...]


def _read_inputs(project: Project, judge: str, sample: str, reference: str, assume_random: bool,
                 task: Task, data: ScoreData | None = None) -> _Inputs:
    """Resolve the judge, the reference and the sample as named, refuse a hand-picked sample
    unless ``assume_random``, and read the sample and the scores (unless given) once."""
    judge = judge_label(project, judge)
    reference = reference_label(project, reference)
    chosen = samples.find(project, sample)
    if not chosen.random and not assume_random:
        raise ValueError(f"sample {chosen.name!r} was picked by hand, not drawn at random, so "
                         "its grades give no valid interval; draw a random one (physgrade "
                         "estimate-sample), or assume this one random (--assume-random)")
    drawn = samples.read_sample(project, chosen)
    if data is None:
        graders = frozenset() if reference == HUMAN_CONSENSUS else frozenset({reference})
        data = score_tables.load(project, ResponseFilter(judges=frozenset({judge}),
                                                       graders=graders), task)
    return _inputs(drawn, data, judge, reference, task)


def _inputs(drawn: Drawn, data: ScoreData, judge: str, reference: str, task: Task) -> _Inputs:
    """Cut the scores into :class:`_Part`s on the sample."""
    chosen = drawn.sample
    probability = pd.Series(drawn.inclusion, dtype=float)
    task.report(0, None, "estimating")
    judged, graded = _measures(data, judge), _measures(data, reference)
    weighted = chosen.method == STRATIFIED
    stratum = pd.Series(drawn.stratum) if weighted else None
    models = sorted(data.responses["model"].unique())
    groups = [(str(m), data.responses.index[data.responses["model"] == m]) for m in models]
    groups.append((ALL_MODELS, data.responses.index))
    parts = []
    for measure in MEASURES:
        mine, theirs = judged[measure], graded[measure]
        for model, ids in groups:
            scored = mine[mine.index.isin(ids)]
            in_sample = scored.index.isin(probability.index)
            labelled = in_sample & scored.index.isin(theirs.index)
            ids_labelled = scored.index[labelled]
            parts.append(_Part(
                model, measure, scored.to_numpy(float),
                theirs.reindex(ids_labelled).to_numpy(float),
                scored[labelled].to_numpy(float), scored[~labelled].to_numpy(float),
                1 / probability.reindex(ids_labelled).to_numpy(float) if weighted else None,
                None if stratum is None else _judge_only_weights(stratum, scored.index,
                                                                  labelled),
                int((in_sample & ~labelled).sum())))
    return _Inputs(judge, reference, chosen, parts,
                   _notes(chosen, judge, reference, probability.index, judged, graded,
                          drawn.responses_now))


def _judge_only_weights(stratum: pd.Series, scored: pd.Index, labelled: np.ndarray) -> np.ndarray:
    """Weights that make the judge-only responses of a stratified sample stand for every scored
    response: each stratum's responses / its judge-only ones. A stratum drawn densely leaves
    few judge-only responses, which unweighted would count for less than its share."""
    of = stratum.reindex(scored)
    rest = of[~labelled]
    return (of.value_counts() / rest.value_counts()).reindex(rest).to_numpy(float)


def _measures(data: ScoreData, rater: str) -> dict[str, pd.Series]:
    """A rater's value of each measure per response it assessed (final answer: wherever it
    scored ANS; score share: over its complete assessments)."""
    return {"final_answer_correct": score_tables.final_correct(data, rater).astype(float),
            "score_share": score_tables.sheet(data, rater)["score_pct"].dropna()}


def _notes(chosen: EstimationSample, judge: str, reference: str, sampled: pd.Index,
           judged: dict[str, pd.Series], graded: dict[str, pd.Series],
           responses_now: int) -> tuple[str, ...]:
    """What a reader must know to take the numbers right."""
    notes = []
    if responses_now != chosen.population:
        notes.append(f"the project holds {count(responses_now, 'response')} now, "
                     f"{chosen.population:,} when sample {chosen.name!r} was drawn: responses "
                     "added since had no chance to be drawn, so draw a new sample to cover them")
    if not chosen.random:
        notes.append(f"sample {chosen.name!r} was picked by hand: these estimates assume it "
                     "was drawn at random, and its intervals hold only if it was")
    if chosen.method == STRATIFIED:
        notes.append(f"stratified by {', '.join(chosen.strata)}: each expert grade is weighted "
                     "by 1 / its response's inclusion probability")
    any_graded = _union(graded)
    done = int(sampled.isin(any_graded).sum())
    notes.append(f"{done:,} of {count(len(sampled), 'sampled response')} graded by "
                 f"{reference} so far" + ("" if done == len(sampled) else
                                          ": the estimates take those graded as a random part "
                                          "of the sample"))
    not_judged = int((~sampled.isin(_union(judged))).sum())
    if not_judged:
        notes.append(f"{count(not_judged, 'sampled response')} not scored by {judge}: left out")
    outside = int((~any_graded.isin(sampled)).sum())
    if outside:
        notes.append(f"{count(outside, 'response')} graded by {reference} outside the sample "
                     "not used: they were not drawn at random")
    return tuple(notes)


def _union(values: dict[str, pd.Series]) -> pd.Index:
    """The responses with a value of any measure."""
    return pd.Index(sorted({rid for series in values.values() for rid in series.index}))


def _not_correctable(part: _Part, fewest: int = 2) -> str | None:
    """Why ``part`` gives no corrected estimate (from fewer than ``fewest`` expert grades), or
    None when it does."""
    if len(part.labels) < fewest:
        return (f"{len(part.labels)} sampled response{'' if len(part.labels) == 1 else 's'} "
                f"graded and judged; a corrected estimate needs {fewest}")
    if not len(part.judged_unlabeled):
        return "the judge scored no response beyond the expert-graded ones"
    return None


def _row(part: _Part) -> Row:
    judge_only = (Estimate(float(part.judged.mean()), None, len(part.judged)) if len(part.judged)
                  else Estimate.unavailable(0, "the judge scored none of these responses"))
    reason = _not_correctable(part, MIN_GRADES)
    corrected = None if reason else ppi.ppi_mean(part.labels, part.judged_labeled,
                                                 part.judged_unlabeled, part.weights,
                                                 part.weights_unlabeled)
    return Row(part.model, part.measure, judge_only,
               ppi.classical_mean(part.labels, part.weights).within(0.0, 1.0), corrected,
               len(part.judged_unlabeled), reason)


def _difference(a: Row, b: Row) -> Estimate:
    if a.corrected is None or b.corrected is None:
        missing = a if a.corrected is None else b
        return Estimate.unavailable(0, f"no corrected estimate for {missing.model}")
    return ppi.difference(a.corrected, b.corrected).within(-1.0, 1.0)


def _more(needed: int | None, graded: int) -> int | None:
    return None if needed is None else max(0, needed - graded)


def _sample_dict(chosen: EstimationSample) -> dict:
    return {"name": chosen.name, "method": chosen.method, "size": chosen.size,
            "strata": list(chosen.strata), "seed": chosen.seed}
