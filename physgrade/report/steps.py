"""The report's "Where reasoning breaks" section: where each rater places the first wrong step
and in which category, per model (with a figure), how far experts agree with each other and
judges with experts on it, per model and per stage, and the marks at odds with their rater's
own stage scores (:mod:`physgrade.studies.step_agreement`).

Shown only when some response of the report has a first wrong step (or "no error") marked, so
that a project without step marks reports as before.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from physgrade.report import plots
from physgrade.report.model import PENDING, Cell, Figure, Section, Table
from physgrade.report.options import ReportOptions
from physgrade.scoring.tables import ScoreData
from physgrade.stats.agreement import NO_RESAMPLES
from physgrade.stats.estimate import Estimate
from physgrade.studies.step_agreement import (
    EXPERTS,
    JUDGE_EXPERT,
    NO_CATEGORY,
    Breaks,
    Marks,
    PairAgreement,
    measure,
)
from physgrade.studies.step_agreement import read_marks as read_marks  # the report reads it

TITLE = "Where reasoning breaks"
AGREEMENT_COLUMNS = ("n", "Exact first error", "Within one step", "Localisation F1",
                     "ProcessBench F1", "Category n", "Cohen's κ", "Krippendorff α")
AGREEMENT_NOTE = (
    f"Pair: {EXPERTS}, or an {JUDGE_EXPERT} (the expert is the reference, and listed "
    "first). n: responses both marked (a first wrong step, or no error). Exact first "
    "error: the same step, or both no error; within one step: also a step one away. "
    "Localisation F1: of \"this step is wrong\" over the steps both marks label (before and at "
    "the first wrong step), which leaves out the steps both call right; ProcessBench F1: the "
    "harmonic mean of the exact matches on the responses the reference marked wrong and on "
    "those it marked right. Category n: responses both marked wrong with a category of one "
    "taxonomy, on which Cohen's κ and Krippendorff's α (nominal) are computed. Shares with "
    "their Wilson 95% interval, κ its normal-theory one, the F1s and α a bootstrap over "
    "responses.")


def steps_section(marks: Marks, data: ScoreData, options: ReportOptions, number: int,
                  complete: bool = True) -> Section | None:
    """The section for the report's responses; None when none of them is marked. A draft
    (not ``complete``) has its bootstrap intervals :data:`PENDING`."""
    mine = marks.among(data.responses.index, options.filter.graders, options.filter.judges)
    if not mine.placed:
        return None
    found = measure(mine, data.responses, options.resamples if complete else 0, options.seed)
    tables = [
        Table("step_breaks", "Where each rater places the first wrong step, per model",
              ("Rater", "Model", "Marked", "No error", "Marked wrong"),
              [(b.rater, b.model, b.marked, b.no_error, b.wrong) for b in found.breaks],
              "Marked: responses whose first wrong step (or no error) the rater marked; no "
              "error: their share with every step right, with its Wilson 95% interval.",
              frozenset({"No error"}))]
    categories: list[tuple[Cell, ...]] = [
        (b.rater, b.model, taxonomy or "—", category, criteria or "—", count, share)
        for b in found.breaks for taxonomy, category, criteria, count, share in b.categories]
    if categories:
        tables.append(Table(
            "step_categories", "Categories of the first wrong step, per model",
            ("Rater", "Model", "Taxonomy", "Category", "Criteria", "Responses", "Share"),
            categories, "Share: of the responses the rater marked wrong, with its Wilson 95% "
            "interval; every category of a taxonomy the rater used is listed. Criteria: the "
            f"rubric criteria the category belongs to. {NO_CATEGORY}: marked wrong without a "
            "category.", frozenset({"Share"})))
    agreement: list[tuple[str, str, list[PairAgreement]]] = [
        ("step_agreement", "Model", found.by_model),
        ("step_agreement_stages", "Stage", found.by_stage)]
    for name, group, rows in agreement:
        if rows:
            tables.append(Table(
                name, f"Agreement on the first wrong step, per {group.lower()}",
                ("Rater", "Other rater", "Pair", group, *AGREEMENT_COLUMNS),
                [_agreement_row(row, complete) for row in rows],
                AGREEMENT_NOTE + (" A response counts in each stage (a criterion of its "
                                  "rubric) that either rater's category belongs to."
                                  if group == "Stage" else ""),
                frozenset({"Exact first error", "Within one step"})))
    if mine.inconsistencies:
        tables.append(Table(
            "step_inconsistencies", "Marks at odds with the rater's own stage scores",
            ("Rater", "Response", "First wrong step", "Taxonomy", "Category", "Criterion",
             "Score"),
            [(i.rater, i.response_id, i.first_wrong, i.taxonomy, i.category, i.criterion,
              i.value) for i in mine.inconsistencies],
            "The category belongs to a criterion the same rater scored at its maximum on the "
            "same response: listed for a second look, not forbidden."))
    intro = ("Where the reasoning of a response first goes wrong, as experts and judges mark "
             "it: the step and the kind of error (a category of a failure taxonomy). P-REFS "
             "(§3.6) names the stage at which reasoning broke down and Physics-R1 (App. H.1) "
             "tallies failure categories without measuring how far annotators agree; here "
             "both are measured, per model and per rubric stage.")
    return Section(f"{number}. {TITLE}", intro, tables, _figures(found.breaks),
                   short=f"{number}. Reasoning breaks")


def _agreement_row(row: PairAgreement, complete: bool) -> tuple[Cell, ...]:
    def shown(value: Estimate) -> Estimate:
        return (replace(value, reason=PENDING)
                if not complete and value.reason == NO_RESAMPLES else value)

    return (row.first, row.second, row.pair, row.group, row.n, row.exact, row.within_one,
            shown(row.f1), shown(row.processbench_f1), row.categorised, row.kappa,
            shown(row.alpha))


def _figures(breaks: list[Breaks]) -> list[Figure]:
    """Stacked bars of each rater's categories per model (shares of the responses marked
    wrong), a panel per rater that marked some response wrong; a category has one colour in
    every panel, and only the categories some bar has are drawn (the table lists them all)."""
    shown = [b for b in breaks if b.wrong]
    several = len({t for b in shown for t, *_ in b.categories if t}) > 1
    shares: dict[tuple[str, str], dict[str, float]] = {}
    for b in shown:
        for taxonomy, category, _, count, share in b.categories:
            if count:
                label = f"{taxonomy}/{category}" if several and taxonomy else category
                shares.setdefault((b.rater, b.model), {})[label] = share.value or 0.0
    labels = list(dict.fromkeys(label for found in shares.values() for label in found))
    panels: dict[str, tuple[list[str], dict[str, list[float | None]]]] = {}
    for rater in dict.fromkeys(b.rater for b in shown):
        models = [b.model for b in shown if b.rater == rater]
        panels[rater] = (models, {label: [shares.get((rater, model), {}).get(label)
                                          for model in models] for label in labels})
    if not panels:
        return []
    return [Figure("step_categories", "Categories of the first wrong step, per model",
                   partial(plots.stacked_bars, panels, "share of wrong marks (%)"),
                   "A panel per rater, a bar per model: the categories of the first wrong "
                   "steps the rater marked, as shares of the responses marked wrong (the "
                   "categories no bar has are left out).", "step_categories")]
