"""The report section "Model scores corrected by expert grades": for each language-model judge,
each model's measures by the judge alone, by the experts alone on an estimation sample, and
corrected, with a forest plot.

Every number is :func:`physgrade.estimation.estimates.estimate`'s (on what the report read
already: :func:`~physgrade.estimation.estimates.estimate_drawn`), laid out as tables: the section
computes nothing of its own, so the report, ``physgrade estimate`` and its JSON agree.
"""

from __future__ import annotations

from functools import partial
from typing import Sequence

from physgrade.analyses import ALL_MODELS
from physgrade.estimation import estimates as estimation
from physgrade.estimation import sample as samples
from physgrade.estimation.estimates import MEASURES, Estimates
from physgrade.estimation.sample import Drawn, EstimationSample
from physgrade.raters import HUMAN_CONSENSUS
from physgrade.report import common, plots
from physgrade.report.model import Cell, Figure, Section, Table
from physgrade.report.options import ReportOptions, language_model_judges
from physgrade.scoring.tables import ScoreData
from physgrade.stats.estimate import Estimate
from physgrade.tasks import Task
from physgrade.wording import sentence

TITLE = "Model scores corrected by expert grades"
#: The forest plot's series, in the order of its legend (judge alone, experts alone, corrected).
SERIES = ("Judge alone", "Experts alone", "Corrected")
#: The shares among the estimates table's columns (read as percentages).
_SHARES = frozenset(SERIES)


def corrected_section(drawn: Sequence[Drawn], data: ScoreData, options: ReportOptions,
                      number: int, task: Task) -> Section | None:
    """The section for every language-model judge of the report (the rules rater checks final
    answers only and is left out) against the report's main reference, on the sample
    ``options.sample`` names or else the newest drawn at random, of the project's samples as
    drawn (:func:`physgrade.estimation.sample.read_samples`, read once: a filter narrows them
    in memory). A hand-picked sample is used only when named, assumed random, and the section
    says so first. None when the project has no such sample, or the report has no judge or no
    people's grades. A sample name the project does not have raises ProjectError."""
    judges = language_model_judges(data)
    reference = common.main_reference(data)
    chosen = _chosen_sample(drawn, options.sample)
    if not judges or reference is None or chosen is None:
        return None
    found = []
    for step, judge in enumerate(judges):
        task.report(step, len(judges), f"correcting {judge}'s scores")
        found.append(estimation.estimate_drawn(chosen, data, judge, reference, task))
    tables, figures = [], []
    for result in found:
        judge_tables, figure = _judge_tables(result)
        tables += judge_tables
        figures.append(figure)
    return Section(f"{number}. {TITLE}", _intro(chosen.sample, reference, options), tables,
                   figures, f"{number}. Corrected scores")


def _chosen_sample(drawn: Sequence[Drawn], name: str | None) -> Drawn | None:
    """The sample named, or the newest drawn at random (None when there is none)."""
    if name:
        chosen = samples.named([each.sample for each in drawn], name)
        return next(each for each in drawn if each.sample == chosen)
    random = [each for each in drawn if each.sample.random]
    return random[-1] if random else None


def _intro(chosen: EstimationSample, reference: str, options: ReportOptions) -> str:
    warning = "" if chosen.random else (
        f"CAUTION: sample {chosen.name!r} was picked by hand, not drawn at random. These "
        "numbers assume it random; if it is not, its intervals are not valid and the "
        "corrections may be biased. Draw a random sample for numbers to publish. ")
    which = "the sample named for this report" if options.sample else "the newest random sample"
    return (warning + "A judge scores every response; experts grade only a sample. The judge "
            "alone is often lenient, the experts alone are honest but uncertain. The corrected "
            "estimate takes the judge's mean over every response and corrects it by the "
            "judge's error on the expert-graded sample (prediction-powered inference, tuned by "
            "λ: 0 uses the experts alone, 1 leans on the judge fully), with a 95% interval "
            "that holds whatever the judge's quality and is narrower than the experts' alone "
            "when the judge is informative. The expert grades are those of "
            f"{'the ' if reference == HUMAN_CONSENSUS else ''}{reference} on {which}, "
            f"{chosen.name!r}: {chosen.text()}. The report's filter narrows the estimates "
            "as it narrows every section. "
            "Final answer correct: the share of responses with ANS at its maximum; mean "
            "score share: the mean of each response's points as a share of those possible.")


def _judge_tables(result: Estimates) -> tuple[list[Table], Figure]:
    """One judge's estimates and corrected differences, and its forest plot."""
    name = common.slug(result.judge)
    caveat = "" if result.sample.random else " (hand-picked sample, assumed random)"
    rows: list[tuple[Cell, ...]] = [
        (row.model, MEASURES[row.measure], row.judge_only, row.judge_only.n, row.experts_only,
         row.experts_only.n, row.corrected_estimate(), row.unlabeled,
         row.corrected.lam if row.corrected else None,
         round(row.corrected.effective_n) if row.corrected else None)
        for row in result.rows]
    estimates = Table(
        f"corrected_{name}", f"{result.judge}: judge alone, experts alone and corrected"
        + caveat, ("Model", "Measure", *SERIES[:1], "n judged", SERIES[1], "n graded",
                   SERIES[2], "Judge-only", "λ", "Effective n"), rows,
        "n judged: responses the judge scored; n graded: sampled responses graded by "
        f"{result.reference} and scored by the judge (the experts alone and the corrected "
        "estimate use the same); judge-only: the other responses the judge scored; effective "
        "n: how many expert grades alone would give as narrow an interval. "
        + " ".join(map(sentence, result.notes)), _SHARES)
    differences = Table(
        f"corrected_differences_{name}", f"{result.judge}: corrected differences between "
        "models" + caveat, ("Measure", "Model", "Other model", "Difference"),
        [(MEASURES[d.measure], *d.models, d.estimate) for d in result.differences],
        "Difference = model − other model, each corrected, with its 95% interval (the "
        "models' responses are disjoint, so their errors add).", frozenset({"Difference"}))
    return [estimates, differences], _forest(result, estimates.name, caveat)


def _forest(result: Estimates, table: str, caveat: str) -> Figure:
    models = result.models()
    panels = {}
    for measure, title in MEASURES.items():
        rows = [result.row(model, measure) for model in models]
        panels[title] = dict(zip(SERIES, (
            [_interval(row.judge_only) for row in rows],
            [_interval(row.experts_only) for row in rows],
            [_interval(row.corrected_estimate()) for row in rows])))
    return Figure(
        f"forest_{common.slug(result.judge)}", f"Forest plot: {result.judge}{caveat}",
        partial(plots.forest, models, panels, "estimate (%)"),
        f"Per model and for {ALL_MODELS}: the judge alone (a point: it scores every response), "
        "the experts alone on the sample, and the judge corrected by them, each with its 95% "
        "interval. Where the corrected interval is narrower than the experts', the judge adds "
        "what more expert grades would.", table)


def _interval(estimate: Estimate) -> plots.Interval:
    low, high = estimate.ci95 or (None, None)
    return estimate.value, low, high
