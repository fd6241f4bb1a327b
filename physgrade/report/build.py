"""The project report: human grades against judge verdicts, and the study's own analyses.

:func:`build_report` narrows the project's scores to the report's filter (a selection of a
:class:`~physgrade.scoring.store.ScoreStore`, read once), computes every number with
:mod:`physgrade.stats` and :mod:`physgrade.analyses`, and returns a plain
:class:`~physgrade.report.model.Report` that the writers and the app present.

The app shows a report in two steps, so that a filter change is answered at once: a
:func:`draft_report` holds every value but the bootstrap intervals (marked :data:`PENDING`) and
draws no figure; :func:`finish_section` then completes one section at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timezone
from functools import partial
from itertools import combinations
from typing import AbstractSet, Any, Callable, Iterator, Mapping, TypeVar, cast

import numpy as np
import pandas as pd

import physgrade
from physgrade import analyses, facets, question_fields
from physgrade.annotation import figures as bloom
from physgrade.answers import accuracy as answer_checks
from physgrade.changes import RecordKind
from physgrade.estimation import sample as samples
from physgrade.project import Project
from physgrade.raters import HUMAN_CONSENSUS
from physgrade.report import coarse as prefs_v1
from physgrade.report import conditions as paired_conditions
from physgrade.report import corrected, final_answers, folding, judge_cards, plots
from physgrade.report import reliability as judge_reliability
from physgrade.report import steps as step_study
from physgrade.report import variant_groups as variant_study
from physgrade.report.bloom_labels import bloom_section
from physgrade.report.common import main_reference, paired, slug
from physgrade.report.folding import NOBODY, FoldedRows, Folding
from physgrade.report.model import PENDING, Cell, Figure, Report, Section, Table
from physgrade.report.options import ReportOptions
from physgrade.rubric import GRADED_RUBRICS, Criterion, Rubric
from physgrade.scoring import tables as score_tables
from physgrade.scoring.readings import Readings
from physgrade.scoring.store import ScoreStore
from physgrade.scoring.tables import ScoreData
from physgrade.selection import ResponseFilter
from physgrade.stats.agreement import (
    NO_RESAMPLES,
    cohen_kappa,
    gwet_ac2,
    krippendorff_alpha,
    percent_agreement,
)
from physgrade.stats.estimate import Estimate
from physgrade.stats.paired import (
    bias,
    confusion_matrix,
    mcnemar_exact,
    mean_absolute_difference,
    pearson,
    sign_test,
    spearman,
)
from physgrade.tasks import Task
from physgrade.validation import figures as audit
from physgrade.validation.reviews import VERDICTS, agreements_text

T = TypeVar("T")
NA_NOTE = ("N/A (a criterion the rubric lets a rater skip, such as EXE on a purely conceptual "
           "item) is left out of every comparison: a pair counts only when both raters gave a "
           "number.")


# -- helpers -------------------------------------------------------------------------------------


def _categories(criterion: Criterion) -> tuple[int, ...]:
    return tuple(range(criterion.maximum + 1))


def _pairs(data: ScoreData, folded: Folding = NOBODY) -> list[tuple[str, str]]:
    """(judge, reference) pairs: every judge against every grader, the folded graders together
    (where any are; ``data`` :func:`~physgrade.report.folding.with_others`), and the consensus
    (when it stands apart from every grader)."""
    references = (data.graders + folded.others
                  + ([HUMAN_CONSENSUS] if data.consensus_stands_apart() else []))
    return [(judge, reference) for judge in data.judges for reference in references]


def _criteria(data: ScoreData) -> Iterator[tuple[Rubric, Criterion]]:
    """The rubric criteria that have scores in this report, in rubric order."""
    present = set(data.criteria)
    for rubric in GRADED_RUBRICS:
        for criterion in rubric.criteria:
            if (rubric.key, criterion.key) in present:
                yield rubric, criterion


def _rubric_criterion(rubric: Rubric, criterion: Criterion) -> str:
    return f"{criterion.key} ({rubric.title})"


def frame_table(frame: pd.DataFrame, name: str, title: str, headers: dict[str, str],
                percent: AbstractSet[str] = frozenset(), note: str = "") -> Table:
    """A table from an analysis frame: the columns named in ``headers``, renamed for readers;
    ``percent`` names (by header) the columns of shares."""
    rows = [tuple(_cell(value) for value in row)
            for row in frame[list(headers)].itertuples(index=False, name=None)]
    return Table(name, title, tuple(headers.values()), rows, note, frozenset(percent))


def _cell(value: object) -> Cell:
    """Plain Python values for the report (no numpy scalars, no NaN)."""
    if value is None or isinstance(value, (str, Estimate)):
        return value
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if np.isnan(value) else float(value)
    # pandas-stubs type isna for pandas' own scalars; at run time it takes any object.
    return None if pd.isna(cast(Any, value)) else str(value)


def _alpha(ratings: np.ndarray, categories: tuple[int, ...], options: ReportOptions,
           complete: bool) -> Estimate:
    """Krippendorff's alpha (ordinal) with its bootstrap interval; a draft has the value alone
    (the bootstrap is most of a report's arithmetic)."""
    if complete:
        return krippendorff_alpha(ratings, "ordinal", categories, options.resamples, options.seed)
    found = krippendorff_alpha(ratings, "ordinal", categories, 0)
    return replace(found, reason=PENDING) if found.reason == NO_RESAMPLES else found


# -- 1. criterion by criterion --------------------------------------------------------------------


def criterion_section(data: ScoreData, options: ReportOptions, task: Task,
                      complete: bool = True, folded: Folding = NOBODY) -> Section:
    agreement_rows, confusion_rows = FoldedRows(folded), FoldedRows(folded)
    panels: dict[str, dict[str, tuple[tuple[int, ...], np.ndarray]]] = {}
    pairs = _pairs(data, folded)
    main = main_reference(data)
    criteria = list(_criteria(data))
    for step, (rubric, criterion) in enumerate(criteria):
        task.report(step, len(criteria), f"comparing {criterion.key} ({rubric.title})")
        categories = _categories(criterion)
        given = score_tables.criterion_ratings(data, rubric.key, criterion.key, data.judges).notna()
        for judge, reference in pairs:
            if not given[judge].any():
                continue  # a judge that never scores this criterion (the rules rater scores ANS)
            both = score_tables.criterion_ratings(data, rubric.key, criterion.key,
                                                  [reference, judge], complete=True)
            ratings = both.to_numpy(dtype=float)
            human, machine = ratings[:, 0], ratings[:, 1]
            leaning = bias(human, machine)
            agreement_rows.add((
                judge, reference, _rubric_criterion(rubric, criterion), len(ratings),
                percent_agreement(ratings, categories),
                cohen_kappa(ratings, "linear", categories),
                gwet_ac2(ratings, "linear", categories),
                _alpha(ratings, categories, options, complete),
                leaning.difference, leaning.lenient, leaning.strict), reference)
            matrix = confusion_matrix(human, machine, categories)
            for (h, j), count in np.ndenumerate(matrix):
                confusion_rows.add((judge, reference, rubric.title, criterion.key,
                                    categories[h], categories[j], int(count)), reference)
            if reference == main:
                panels.setdefault(judge, {})[_rubric_criterion(rubric, criterion)] = (
                    categories, matrix)
    figures = [Figure(f"confusion_{slug(judge)}", f"Confusion matrices: {judge} against {main}",
                      partial(plots.confusion_grid, grid, main, judge),
                      "Rows are the people's scores, columns the judge's; each cell counts "
                      "responses. Cells above the diagonal are lenient verdicts.",
                      "confusion_matrices")
               for judge, grid in panels.items() if main is not None]  # panels exist only then
    return Section(
        "1. Judges against people, criterion by criterion",
        "Each judge is compared with each grader and with the human consensus on every "
        "criterion both scored. Weighted kappa and Gwet's AC2 use linear weights over the "
        "criterion's points; Krippendorff's alpha uses its ordinal metric. Bias is the mean of "
        "judge − human; lenient and strict are the shares of responses the judge scored above "
        "and below the person. " + NA_NOTE,
        [agreement_rows.table(Table(
            "criterion_agreement", "Agreement per criterion",
            ("Judge", "Reference", "Criterion", "n", "Exact agreement", "Weighted kappa",
             "Gwet AC2", "Krippendorff α", "Bias", "Lenient", "Strict"),
            agreement_rows.every, "Values with their 95% confidence interval.",
            frozenset({"Exact agreement", "Lenient", "Strict"}))),
         confusion_rows.table(Table(
             "confusion_matrices", "Confusion matrices (long form)",
             ("Judge", "Reference", "Rubric", "Criterion", "Human score", "Judge score",
              "Responses"), confusion_rows.every,
             "One row per cell: how many responses the reference scored as the row value "
             "and the judge as the column value."))],
        figures, "1. Criteria")


# -- 2. total score and 3. final answer -----------------------------------------------------------


def total_section(data: ScoreData, folded: Folding = NOBODY) -> Section:
    rows = FoldedRows(folded)
    panels: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for judge, reference in _pairs(data, folded):
        both = paired(data, judge, reference, "score_pct")
        human, machine = both["reference"].to_numpy(float), both["judge"].to_numpy(float)
        leaning = bias(human, machine)
        signs = sign_test(human, machine)
        rows.add((judge, reference, len(both), pearson(human, machine),
                  spearman(human, machine), mean_absolute_difference(human, machine),
                  leaning.difference, signs.above, signs.below, signs.p_value), reference)
        if len(both) and not folded.left_out(reference):
            panels[f"{judge} − {reference}"] = (human, machine)
    figures = [Figure("score_differences", "Difference plots of the total score",
                      partial(plots.difference_plots, panels, "scores (%)"),
                      "Each dot is a response (jittered slightly): the mean of the two totals "
                      "against their difference. The solid line is the mean difference, the "
                      "dashed lines its 95% limits of agreement." + folded.caption(),
                      "total_score")] if panels else []
    return Section(
        "2. Total score",
        "Totals are compared as a share of the points possible (an N/A criterion leaves the "
        "maximum), so problem-solving and conceptual items can be pooled. Only responses both "
        "raters scored on every criterion count. The sign test asks whether the judge scores "
        "higher or lower than the reference more often than chance would.",
        [rows.table(Table(
            "total_score", "Total score, judge against reference",
            ("Judge", "Reference", "n", "Pearson r", "Spearman ρ", "Mean absolute difference",
             "Mean difference", "Judge higher", "Judge lower", "Sign test p"), rows.every,
            "Differences are judge − reference, in shares of the maximum score.",
            frozenset({"Mean absolute difference", "Mean difference"})))],
        figures, "2. Totals")


def final_answer_section(data: ScoreData, folded: Folding = NOBODY) -> Section:
    rows = FoldedRows(folded)
    for judge, reference in _pairs(data, folded):
        both = pd.concat({"reference": score_tables.final_correct(data, reference),
                          "judge": score_tables.final_correct(data, judge)}, axis=1,
                         join="inner")
        test = mcnemar_exact(both["reference"].to_numpy(bool), both["judge"].to_numpy(bool))
        (yes_yes, yes_no), (no_yes, no_no) = test.table
        rows.add((judge, reference, test.n, yes_yes, yes_no, no_yes, no_no,
                  percent_agreement(both.to_numpy(float)) if test.n else
                  Estimate.unavailable(0, "no response assessed by both"), test.p_value),
                 reference)
    return Section(
        "3. Final answer correct",
        "Whether the final answer is right (ANS at its maximum), by the reference and by the "
        "judge, on the responses both scored on ANS. McNemar's exact test asks whether "
        "the judge accepts answers the reference rejects more often than the reverse.",
        [rows.table(Table(
            "final_answer", "Final answer correct: reference against judge",
            ("Judge", "Reference", "n", "Both correct", "Only reference correct",
             "Only judge correct", "Both wrong", "Agreement", "McNemar exact p"),
            rows.every, "'Only judge correct' counts answers the judge accepted and the person "
            "did not: lenient final-answer verdicts.", frozenset({"Agreement"})))],
        short="3. Final answers")


# -- 4. expert against expert ----------------------------------------------------------------------


def experts_section(data: ScoreData, options: ReportOptions, complete: bool = True,
                    folded: Folding = NOBODY) -> Section:
    rows = FoldedRows(folded)
    # Every pair of graders, then (readers' rows) those with the folded ones together.
    pairs = dict.fromkeys([*combinations(data.graders, 2),
                           *combinations(folded.kept(data.graders) + folded.others, 2)])
    groups = [list(pair) for pair in pairs]
    if len(data.graders) > 2:
        groups.append(list(data.graders))
    for rubric, criterion in _criteria(data):
        categories = _categories(criterion)
        for group in groups:
            given = score_tables.criterion_ratings(data, rubric.key, criterion.key, group)
            ratings = given[given.notna().sum(axis=1) >= 2].to_numpy(dtype=float)
            # All the graders together are a group, not a row per person: both keep it.
            rows.add((" · ".join(group), _rubric_criterion(rubric, criterion), len(ratings),
                      percent_agreement(ratings, categories),
                      gwet_ac2(ratings, "linear", categories),
                      _alpha(ratings, categories, options, complete)),
                     *(group if len(group) == 2 else ()))
    intro = ("How far the people agree with each other, criterion by criterion, on the responses "
             "at least two of them graded: the study's inter-rater table. AC2 uses linear "
             "weights over the criterion's points. " + NA_NOTE)
    if len(data.graders) < 2:
        intro += " This report covers fewer than two graders, so there is nothing to compare."
    return Section("4. Experts against each other", intro, [rows.table(Table(
        "expert_agreement", "Agreement between graders",
        ("Graders", "Criterion", "n", "Exact agreement", "Gwet AC2", "Krippendorff α"),
        rows.every, "Values with their 95% confidence interval.",
        frozenset({"Exact agreement"})))], short="4. Experts")


# -- the last section: the study's analyses --------------------------------------------------------


def analyses_section(sheet: pd.DataFrame, rater: str, number: int = 5,
                     data: ScoreData | None = None,
                     scaffold: Mapping[str, str | None] | None = None) -> Section:
    """The study's measures from ``rater``'s ``sheet``; with ``data``, the lengths of its
    responses (whoever scored them), and with ``scaffold`` (each question's value of
    :data:`~physgrade.analyses.SCAFFOLD_FIELD`) the formulation-scaffold ablation where some
    question has one."""
    tables: list[Table] = []
    figures: list[Figure] = []
    by_model = analyses.score_by_model(sheet)
    tables.append(frame_table(by_model, "score_by_model", "Score by model", {
        "model": "Model", "n": "n", "mean_score": "Mean score", "final_correct": "Final answer "
        "correct", "fully_correct": "Fully correct"},
        {"Mean score", "Final answer correct", "Fully correct"}))
    gap = analyses.reasoning_gap(sheet)
    tables.append(frame_table(gap, "reasoning_gap", "Right answer, flawed reasoning", {
        "model": "Model", "kind": "Kind", "n": "n", "final_correct": "Final answer correct",
        "fully_correct": "Fully correct", "reasoning_gap": "Reasoning gap"}, {"Reasoning gap"},
        "The reasoning gap is the share of responses with a correct final answer that are not "
        "correct on every criterion."))
    _add(tables, figures, _stage_analyses(sheet))
    for rubric in GRADED_RUBRICS:
        if not (sheet["rubric"] == rubric.key).any():
            continue
        rubric_tables, rubric_figures = _rubric_analyses(sheet, rubric)
        tables.extend(rubric_tables)
        figures.extend(rubric_figures)
    for by, title in (("topic", "topic"), ("bloom_cognitive", "Bloom cognitive level"),
                      ("bloom_knowledge", "Bloom knowledge type")):
        frame = analyses.stage_heatmap(sheet, by)
        values = [c for c in frame.columns if c not in ("kind", "part", "stage", "model", "n")]
        # A table per kind (their rubrics differ, so kinds are not pooled), as the figure's
        # rows of panels; a value none of the kind's responses has is left out.
        for kind, rows in frame.groupby("kind", sort=False):
            present = [c for c in values if any(_value(cell) is not None for cell in rows[c])]
            tables.append(frame_table(rows, f"score_by_{by}_{slug(str(kind))}",
                                      f"Mean score by stage, model and {title}: {kind} questions",
                                      {"stage": "Stage", "model": "Model", "n": "n",
                                       **{c: c for c in present}}, set(present),
                                      "Each stage's points over its possible points, averaged "
                                      "over the responses; Overall: the mean score."))
        figure = _heatmap_figure(frame, f"score_by_{by}", f"Heatmaps: mean score (%) by stage, "
                                                          f"model and {title}, per question kind")
        if figure is not None:
            figures.append(figure)
    _add(tables, figures, _compliance_analyses(sheet))
    variants = analyses.variant_pairs(sheet)
    tables.append(frame_table(variants, "contextual_variants", "Contextual variants against "
                              "their base questions (paired)", {
                                  "model": "Model", "region": "Region", "n_pairs": "Pairs",
                                  "base_score": "Mean score, base",
                                  "variant_score": "Mean score, variant",
                                  "difference": "Difference", "p_value": "Wilcoxon p",
                                  "p_value_reason": "Note"},
                              {"Mean score, base", "Mean score, variant", "Difference"},
                              "Each variant response is paired with the same model's response "
                              "to its base question; difference = variant − base."))
    if scaffold is not None and any(value is not None for value in scaffold.values()):
        _add(tables, figures, _scaffold_analyses(sheet, scaffold))
    if data is not None:
        _add(tables, figures, _length_analyses(data))
    return Section(f"{number}. The study's analyses, by {rater}",
                   f"The measures of the study, computed from the grades of {rater}. Shares and "
                   "means carry their 95% confidence interval.", tables, figures,
                   f"{number}. Study analyses")


def _rubric_analyses(sheet: pd.DataFrame, rubric: Rubric) -> tuple[list[Table], list[Figure]]:
    keys = list(rubric.keys)
    degradation = analyses.degradation(sheet, rubric)
    prevalence = analyses.error_prevalence(sheet, rubric)
    tables = [
        frame_table(degradation, f"degradation_{rubric.key}", f"Progressive degradation "
                    f"({rubric.title})", {c: c if c != "model" else "Model"
                                          for c in degradation.columns},
                    set(keys), "After each criterion, in rubric order, the share of responses "
                    "still without any error (a score below the maximum; N/A is no error)."),
        frame_table(prevalence, f"error_prevalence_{rubric.key}", f"Error prevalence "
                    f"({rubric.title})", {c: c if c != "model" else "Model"
                                          for c in prevalence.columns},
                    set(keys), "The share of responses with each error category; a response "
                    "may have several.")]
    curve = {str(row["model"]): [_value(row[k]) for k in keys] for _, row in degradation.iterrows()}
    bars = {str(row["model"]): [_value(row[k]) for k in keys] for _, row in prevalence.iterrows()}
    figures = []
    if curve:
        figures.append(Figure(f"degradation_{rubric.key}", f"Degradation curve "
                              f"({rubric.title})", partial(plots.lines, keys, curve, "still error-free (%)"),
                              "Share of responses with no error up to and including each "
                              "criterion.", f"degradation_{rubric.key}"))
    if bars:
        figures.append(Figure(f"error_prevalence_{rubric.key}", f"Error prevalence by model "
                              f"({rubric.title})", partial(plots.grouped_bars,
                                  keys, bars, "responses with the error (%)"),
                              "Categories overlap: a response may have several errors.",
                              f"error_prevalence_{rubric.key}"))
    return tables, figures


def _value(cell: Estimate | float | None) -> float | None:
    return cell.value if isinstance(cell, Estimate) else None if pd.isna(cell) else float(cell)


def _heatmap_figure(frame: pd.DataFrame, name: str, title: str) -> Figure | None:
    """A :func:`~physgrade.analyses.stage_heatmap` as seed 001 draws it (Figs 15-18): a row of
    panels per question kind, a panel per stage and Overall; columns no response of the kind
    has are left out of its panels."""
    columns = [c for c in frame.columns if c not in ("kind", "part", "stage", "model", "n")]
    if frame.empty or not columns:
        return None
    panels: dict[str, tuple[list[str], list[str], np.ndarray]] = {}
    for kind, rows in frame.groupby("kind", sort=False):
        values = np.array([[_number(v) for v in row] for row in rows[columns].itertuples(
            index=False, name=None)], dtype=float)
        present = ~np.isnan(values).all(axis=0)
        for key, at in rows.groupby(["part", "stage"]).indices.items():
            part, stage = cast(tuple[int, str], key)
            label = str(stage) if stage == analyses.OVERALL else f"Part {part}: {stage}"
            panels[f"{kind} · {label}"] = (list(rows["model"].iloc[at]),
                                           [c for c, keep in zip(columns, present) if keep],
                                           values[np.ix_(at, present)])
    per_row = int(frame.groupby("kind")["stage"].nunique().max())
    return Figure(name, title, partial(plots.heatmap_grid, panels, per_row),
                  "Each cell is the mean share of the stage's points of the model's responses "
                  "in that group (Overall: the mean score); a row of panels per question kind.",
                  name)


def _number(cell: Estimate | float | None) -> float:
    """A cell as a number to plot, NaN where there is none."""
    found = _value(cell)
    return np.nan if found is None else found


def _add(tables: list[Table], figures: list[Figure], found: tuple[list[Table], list[Figure]]) -> None:
    tables.extend(found[0])
    figures.extend(found[1])


def read_scaffold(project: Project) -> dict[str, str | None]:
    """Each question's scaffold condition (:data:`~physgrade.analyses.SCAFFOLD_FIELD`)."""
    return question_fields.values(project, analyses.SCAFFOLD_FIELD)


def _stage_analyses(sheet: pd.DataFrame) -> tuple[list[Table], list[Figure]]:
    """Seed 001's Fig 3: each stage's share and its part of the mean score, per model and kind."""
    frame = analyses.stage_scores(sheet)
    table = frame_table(frame, "stage_scores", "Score by stage, model and question kind", {
        "model": "Model", "kind": "Kind", "part": "Part", "stage": "Stage", "n": "n",
        "share": "Stage score", "contribution": "Part of the mean score"},
        {"Stage score", "Part of the mean score"},
        "Stage score: the stage's points over its possible points; part of the mean score: its "
        "points over the response's possible points (a model's parts add up to its Overall, "
        "its mean score). Means over the responses.")
    panels: dict[str, tuple[list[str], dict[str, list[float | None]]]] = {}
    stages = frame[frame["stage"] != analyses.OVERALL]
    for kind, rows in stages.groupby("kind", sort=False):
        models = list(dict.fromkeys(rows["model"]))
        series = {f"Part {part}: {stage}": [_value(c) for c in cells.set_index("model").reindex(
            models)["contribution"]] for (part, stage), cells in rows.groupby(["part", "stage"])}
        panels[str(kind)] = (models, series)
    figures = [Figure("stage_scores", "Mean score by stage, model and question kind",
                      partial(plots.stacked_bars, panels, "mean score (%)"),
                      "The height of a bar is the model's mean score; each layer is one stage's "
                      "part of it.", "stage_scores")] if panels else []
    return [table], figures


def _compliance_analyses(sheet: pd.DataFrame) -> tuple[list[Table], list[Figure]]:
    """Seed 001's Table 8 and Fig 13 per question kind: compliance, score, and their correlation."""
    by_kind = analyses.compliance_by_kind(sheet)
    correlation = analyses.compliance_correlation(by_kind)
    tables = [
        frame_table(by_kind, "template_compliance", "Template compliance and score, per question "
                    "kind", {"kind": "Kind", "model": "Model", "n": "n",
                             "compliance_rate": "Compliance rate", "mean_score": "Mean score",
                             "n_compliant": "n compliant", "n_noncompliant": "n not compliant",
                             "mean_score_compliant": "Mean score, compliant",
                             "mean_score_noncompliant": "Mean score, not compliant",
                             "difference": "Difference"}, {"Compliance rate"},
                    "Scores in points of the rubric's scale (P-REFS: 10, conceptual: 5), as the "
                    "seed's Table 8 gives them; difference = compliant − not compliant (Welch "
                    "interval)."),
        frame_table(correlation, "template_compliance_correlation", "Compliance rate against "
                    "mean score across models, per question kind", {
                        "kind": "Kind", "models": "Models", "spearman": "Spearman ρ",
                        "p_value": "p", "p_value_reason": "Note",
                        "mean_abs_difference": "Mean |difference|",
                        "median_abs_difference": "Median |difference|"}, set(),
                    "ρ between the models' compliance rates and mean scores (Fisher-z interval, "
                    "two-sided p); |difference|: compliant − not compliant per model, in points.")]
    panels = {}
    for kind, rows in by_kind[by_kind["model"] != analyses.ALL_MODELS].groupby("kind", sort=False):
        found = correlation[correlation["kind"] == kind].iloc[0]
        rho, p_value = found["spearman"], found["p_value"]
        title = str(kind) if rho.value is None else f"{kind}: ρ = {rho.value:.3f}" + (
            "" if p_value is None else f", p = {p_value:.2f}")
        panels[title] = (list(rows["model"]), np.array([_number(c) for c in rows["compliance_rate"]]),
                         np.array([_number(c) for c in rows["mean_score"]]))
    figures = [Figure("template_compliance", "Template compliance rate against mean score",
                      partial(plots.scatter, panels, "template compliance (%)",
                              "mean score (points)"),
                      "A dot per model, with the least-squares line.",
                      "template_compliance_correlation")] if panels else []
    return tables, figures


def _scaffold_analyses(sheet: pd.DataFrame,
                       scaffold: Mapping[str, str | None]) -> tuple[list[Table], list[Figure]]:
    """Seed 001's App. I: final answers and stages 2+3 per model and scaffold condition."""
    frame = analyses.scaffold_ablation(sheet, scaffold)
    table = frame_table(frame, "scaffold_ablation", "Formulation scaffold: final answer and "
                        "solution correctness (P-REFS)", {
                            "model": "Model", "condition": analyses.SCAFFOLD_FIELD.capitalize(),
                            "n": "n", "final_correct": "Final answer correct",
                            "fully_correct": "Fully correct",
                            "stages_2_3_correct": "Fully correct (stages 2+3)",
                            "reasoning_gap": "Gap (stages 2+3)"},
                        {"Final answer correct", "Fully correct", "Fully correct (stages 2+3)",
                         "Gap (stages 2+3)"},
                        f"Condition: the question field '{analyses.SCAFFOLD_FIELD}'. Fully correct "
                        "(stages 2+3): every criterion after the problem formulation at its "
                        "maximum, the formulation treated as given; gap: the share of correct "
                        "final answers that are not.")
    labels = [f"{model} · {condition}" for model, condition in zip(frame["model"], frame["condition"])]
    series = {"Final answer correct": [_value(c) for c in frame["final_correct"]],
              "Fully correct (stages 2+3)": [_value(c) for c in frame["stages_2_3_correct"]]}
    figures = [Figure("scaffold_ablation", "Formulation scaffold: final answer against stages 2+3",
                      partial(plots.grouped_bars, labels, series, "responses (%)"),
                      "Per model and scaffold condition.", "scaffold_ablation")] if labels else []
    return [table], figures


def _length_analyses(data: ScoreData) -> tuple[list[Table], list[Figure]]:
    """Seed 001's App. C.2 (Fig 10): how long the responses are, per model and dataset split."""
    frame = analyses.response_lengths(data.responses, data.lengths)
    table = frame_table(frame, "response_lengths", "Response length (characters) by model and "
                        "dataset split", {"model": "Model", "region": "Region", "n": "n",
                                          "minimum": "Minimum", "q25": "Lower quartile",
                                          "median": "Median", "q75": "Upper quartile",
                                          "maximum": "Maximum", "mean": "Mean"}, set(),
                        "Every response of the report, scored or not; lengths in characters (the "
                        "seed counts tokens of each model's own tokenizer). A region is a split "
                        "of contextual variants; (none): the base questions.")
    models = list(dict.fromkeys(frame["model"]))
    series: dict[str, list[plots.Spread | None]] = {}
    for region, rows in frame.groupby("region", sort=False):
        spreads = rows.set_index("model").reindex(models)[["minimum", "q25", "median", "q75",
                                                           "maximum"]]
        series[str(region)] = [None if np.isnan(low) else (low, q25, median, q75, high)
                               for low, q25, median, q75, high in spreads.itertuples(
                                   index=False, name=None)]
    figures = [Figure("response_lengths", "Response length by model and dataset split",
                      partial(plots.ranges, models, series, "characters"),
                      "Thin line: shortest to longest; thick line: the middle half; dot: the "
                      "median.", "response_lengths")] if models else []
    return [table], figures


# -- 5. the experts' audit of the judges -----------------------------------------------------------


def judge_audit_section(reviews: audit.Reviews, options: ReportOptions,
                        folded: Folding = NOBODY) -> Section:
    """The judge audit (:mod:`physgrade.validation.figures`): reviewers against each other,
    their full agreement with each judge, each judge's verdict labels, and the judge to use.
    Readers see the ``folded`` reviewers as one (see :mod:`physgrade.report.folding`)."""
    where = options.filter

    def criterion(rubric: str, key: str) -> str:
        return f"{key} ({rubric})"

    def pair_rows(found: audit.Reviews, where: ResponseFilter) -> list[tuple[Cell, ...]]:
        return [(" · ".join(r.reviewers), r.judge, criterion(r.rubric, r.criterion), r.n,
                 r.exact, r.ac2) for r in audit.reviewer_agreement(found, where)]

    def full_rows(found: audit.Reviews, where: ResponseFilter) -> list[tuple[Cell, ...]]:
        return [(r.judge, criterion(r.rubric, r.criterion), r.reviewer, r.n, r.rate)
                for r in audit.full_agreement(found, where)]

    pairs, full = pair_rows(reviews, where), full_rows(reviews, where)
    together, shown_where = folding.reviews_with_others(reviews, folded), folded.admitted(where)
    verdicts: list[tuple[Cell, ...]] = [
        (d.judge, d.reviewers, d.n, d.correct, d.lenient, d.strict)
        for d in audit.verdict_distribution(reviews, where)]
    chosen = audit.recommendation(reviews, where)
    recommendation: list[tuple[Cell, ...]] = (
        [(chosen.judge, chosen.correct, chosen.lenient, chosen.runner_up,
          chosen.runner_up_correct, chosen.pairs, chosen.p_value, chosen.text)]
        if chosen else [])
    labels = "; ".join(f"{label} ({meaning})" for label, meaning in VERDICTS.items())
    intro = ("Experts reviewed judge verdicts without knowing which judge gave them: for each "
             f"criterion their agreement with the judge's score, {agreements_text()}, and for "
             f"the verdict as a whole a label: {labels}. Judges are named here by their real "
             "label; 'Judge A = ...' reveals a blind alias. ")
    intro += (chosen.text if chosen else "No reviewed verdict in this report has a label, so no "
              "judge is recommended.")
    return Section("5. Judge audit", intro, [
        folded.table(Table(
            "judge_audit_reviewers", "Reviewers against each other, per judge and criterion",
            ("Reviewers", "Judge", "Criterion", "n", "Exact agreement", "Gwet AC2"), pairs,
            "Exact agreement: the share of identical 2/1/0 values; Gwet's AC2 uses linear "
            "weights over 0, 1, 2. Values with their 95% confidence interval.",
            frozenset({"Exact agreement"})), partial(pair_rows, together, shown_where)),
        folded.table(Table(
            "judge_audit_full_agreement", "Full agreement with each judge",
            ("Judge", "Criterion", "Reviewer", "n", "Full agreement"), full,
            "The share of the reviewer's values that are 2 (full agreement), with its Wilson "
            "interval.", frozenset({"Full agreement"})),
            partial(full_rows, together, shown_where)),
        Table("judge_audit_verdicts", "Verdict labels per judge",
              ("Judge", "Reviewers", "n", "Correct", "Lenient", "Strict"), verdicts,
              "Each share is the mean over reviewers of each reviewer's share; the interval is "
              "the Wilson interval of the counts pooled over reviewers, and n counts them.",
              frozenset({"Correct", "Lenient", "Strict"})),
        Table("judge_recommendation", "Recommended judge",
              ("Judge", "Correct", "Lenient", "Runner-up", "Runner-up correct", "Pairs",
               "McNemar exact p", "Recommendation"), recommendation,
              "The judge with the highest correct share (ties: the lowest lenient share). "
              "McNemar's exact test compares it with the runner-up on the same responses, "
              f"paired by reviewer and response; fewer than {audit.MIN_PAIRS} pairs are not "
              "tested.", frozenset({"Correct", "Lenient", "Runner-up correct"}))],
        short="5. Judge audit")


# -- 5 or 6: Bloom's taxonomy labels ---------------------------------------------------------------


#: The tables of the Bloom section with a row per person (first or second rater).
BLOOM_PER_PERSON = ("bloom_agreement", "bloom_confusion")


def bloom_labels_section(labels: bloom.Labels, options: ReportOptions, number: int,
                         folded: Folding = NOBODY) -> Section:
    """The Bloom labels (:mod:`physgrade.annotation.figures`): people and models against each
    other, and the final labels' distribution. Only called when someone has labelled. Readers
    see the ``folded`` people as one (see :mod:`physgrade.report.folding`)."""
    section = bloom_section(labels, number, options.filter)
    assert section is not None  # build_report asks bloom.has_labels first
    if not folded.folded:
        return section
    together = bloom_section(folding.labels_with_others(labels, folded), number,
                             folded.admitted(options.filter))
    assert together is not None  # the same labels, some under another name
    shown = {table.name: table.rows for table in together.tables}
    return replace(section, tables=[
        folded.table(table, partial(shown.__getitem__, table.name))
        if table.name in BLOOM_PER_PERSON else table
        for table in section.tables])


# -- the whole report ------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _Step:
    """How one section is made: ``make(number, complete, task)``, given the number the section
    will have; None when there is nothing to show. Complete means with its bootstrap intervals
    (only a step that ``bootstraps`` makes a draft without them)."""

    stage: str
    make: Callable[[int, bool, Task], Section | None]
    bootstraps: bool = False


@dataclass(frozen=True, eq=False)
class Draft:
    """A report with every value but its bootstrap intervals (:data:`PENDING`) and with no
    figure drawn yet, and how to complete each of its sections (:func:`finish_section`)."""

    report: Report
    #: the step and the number of each section of ``report``, in order
    steps: tuple[tuple[_Step, int], ...]


def build_report(project: Project, options: ReportOptions = ReportOptions(),
                 task: Task | None = None, *, store: ScoreStore | None = None,
                 readings: Readings | None = None) -> Report:
    """Compute the whole report (reads only; cancellable between steps): from ``store`` and
    ``readings`` when given (kept by a :class:`~physgrade.scoring.cache.ScoreCache`: nothing is
    read from the database again), else from the project as it is now."""
    return _report(project, options, task or Task(), store, readings, complete=True).report


def draft_report(project: Project, options: ReportOptions, store: ScoreStore,
                 task: Task | None = None, readings: Readings | None = None) -> Draft:
    """Every value of the report, quickly: the bootstrap intervals are left :data:`PENDING`
    and no figure is drawn; :func:`finish_section` completes a section."""
    return _report(project, options, task or Task(), store, readings, complete=False)


def finish_section(draft: Draft, index: int, task: Task | None = None) -> Section:
    """Section ``index`` of ``draft`` complete, its figures drawn (cancellable between them);
    a section with bootstrap intervals is computed again with them (from the scores and tables
    the draft was made from: nothing is read from the project)."""
    task = task or Task()
    step, number = draft.steps[index]
    section = step.make(number, True, task) if step.bootstraps else draft.report.sections[index]
    assert section is not None  # the step made a section for the draft, from the same scores
    for done, figure in enumerate(section.figures):
        task.report(done, len(section.figures), f"drawing {figure.title}")
        figure.draw()
    return section


def _report(project: Project, options: ReportOptions, task: Task, store: ScoreStore | None,
            readings: Readings | None, complete: bool) -> Draft:
    data = score_tables.select(store or ScoreStore.read(project, task), options.filter)
    rater = options.rater or main_reference(data) or (data.judges[0] if data.judges else None)
    if rater is not None and rater not in data.raters():
        raise ValueError(f"no grades by {rater!r} in this report; choose one of "
                         f"{', '.join(data.raters()) or '(none: nobody has scored anything)'}")
    steps, foldings = _steps(project, readings or Readings(), data, options, rater)
    sections: list[Section] = []
    made: list[tuple[_Step, int]] = []
    for done, step in enumerate(steps):
        task.report(done, len(steps), step.stage)
        # A section's number counts the sections before it that exist, plus one.
        section = step.make(len(sections) + 1, complete, task)
        if section is not None:
            sections.append(section)
            made.append((step, len(sections)))
    settings = {
        "project": str(project.path), "created_at": datetime.now(timezone.utc).isoformat(
            timespec="seconds"), "physgrade": physgrade.__version__,
        "filter": options.filter.describe(), "responses": int(len(data.responses)),
        "judges": data.judges, "graders": data.graders, "analyses_rater": rater,
        "bootstrap_resamples": options.resamples, "seed": options.seed,
        "consensus": "per criterion, the adjudicated value where an adjudicator decided, else "
                     "the value more than half of the graders gave; criteria without a decision "
                     "or a majority (a tie) are left out",
        "consensus_values": data.consensus_values(), "consensus_adjudicated": data.adjudicated,
        "n/a": NA_NOTE, "min_grades": options.min_grades,
        "folded": {f"{found.person}s": list(found.folded) for found in foldings if found.folded}}
    report = Report(f"physgrade report: {project.path.name}", settings, sections)
    return Draft(report, tuple(made))


#: What each table a report reads besides the scores comes from: a change of any of these kinds
#: reads it again (see :class:`~physgrade.scoring.readings.Readings`).
READ_FROM: dict[Callable[[Project], object], tuple[RecordKind, ...]] = {
    read_scaffold: (RecordKind.QUESTIONS,),
    audit.read_reviews: (RecordKind.REVIEWS, RecordKind.SAMPLES, RecordKind.RATERS,
                         RecordKind.SCORES, RecordKind.RESPONSES, RecordKind.QUESTIONS,
                         RecordKind.BLOOM),
    bloom.read_labels: (RecordKind.BLOOM, RecordKind.RATERS, RecordKind.QUESTIONS),
    variant_study.read_setup: (RecordKind.QUESTIONS, RecordKind.SETTINGS),
    samples.read_samples: (RecordKind.ESTIMATION, RecordKind.RESPONSES, RecordKind.QUESTIONS,
                           RecordKind.BLOOM),
    judge_cards.read_versions: (RecordKind.RATERS, RecordKind.SCORES, RecordKind.REFINEMENTS),
    answer_checks.read_checks: (RecordKind.SCORES, RecordKind.RATERS, RecordKind.RESPONSES,
                                RecordKind.QUESTIONS),
    prefs_v1.read_notation: (RecordKind.QUESTIONS,),
    paired_conditions.read_pairings: (RecordKind.SETTINGS, RecordKind.QUESTIONS),
    judge_reliability.read_judges: (RecordKind.RATERS, RecordKind.SCORES),
    step_study.read_marks: (RecordKind.STEPS, RecordKind.TAXONOMIES, RecordKind.RATERS,
                            RecordKind.SCORES),
    facets.declared: (RecordKind.SETTINGS,)}


def _steps(project: Project, readings: Readings, data: ScoreData, options: ReportOptions,
           rater: str | None) -> tuple[list[_Step], list[Folding]]:
    """The report's steps, and who of the people each kind of table folds (graders, then
    reviewers and labellers where there are some); the sections about reviews and Bloom labels
    only when the project has some."""

    def read(what: Callable[[Project], T]) -> T:
        return readings.get(project, what, READ_FROM[what])

    graders = folding.graders(data, options.min_grades)
    compared = folding.with_others(data, graders)
    foldings = [graders]
    steps = [
        _Step("comparing criteria", lambda _n, complete, task: criterion_section(
            compared, options, task, complete, graders), bootstraps=True),
        _Step("comparing totals", lambda _n, _c, _t: total_section(compared, graders)),
        _Step("comparing final answers", lambda _n, _c, _t: final_answer_section(
            compared, graders)),
        _Step("comparing graders", lambda _n, complete, _t: experts_section(
            compared, options, complete, graders), bootstraps=True)]
    reviews = read(audit.read_reviews)
    if audit.has_reviews(reviews):
        reviewers = folding.reviewers(reviews, options.filter, options.min_grades)
        foldings.append(reviewers)
        steps.append(_Step("summarising the judge audit", lambda _n, _c, _t:
                           judge_audit_section(reviews, options, reviewers)))
    labels = read(bloom.read_labels)
    if bloom.has_labels(labels):
        labellers = folding.labellers(labels, options.filter, options.min_grades)
        foldings.append(labellers)
        steps.append(_Step("summarising Bloom labels", lambda number, _c, _t:
                           bloom_labels_section(labels, options, number, labellers)))
    estimation_samples = read(samples.read_samples)
    versions = read(judge_cards.read_versions)
    steps += [_Step("correcting judge scores by expert grades", lambda number, _c, task:
                    corrected.corrected_section(estimation_samples, data, options, number, task)),
              _Step("making the judge cards", lambda number, _c, task:
                    judge_cards.judge_cards_section(versions, data, number, task))]
    checks = read(answer_checks.read_checks)
    declared = read(facets.declared)
    if checks.has_checks():
        steps.append(_Step("judging final answers", lambda number, _c, _t:
                           final_answers.final_answers_section(checks, data, number, declared)))
    if prefs_v1.shown(data):
        # Every rater with coarse verdicts, and the analyses rater's P-REFS scores mapped.
        notation = read(prefs_v1.read_notation)
        steps.append(_Step("computing the P-REFS v1 measures", lambda number, _c, _t:
                           prefs_v1.coarse_section(data, notation, rater, number)))
    pairings = read(paired_conditions.read_pairings)
    if pairings.pairings:
        steps.append(_Step("comparing paired conditions", lambda number, _c, _t:
                           paired_conditions.conditions_section(pairings, data, checks, rater,
                                                                options, number)))
    marks = read(step_study.read_marks)
    if marks.placed:
        steps.append(_Step("finding where reasoning breaks", lambda number, complete, _t:
                           step_study.steps_section(marks, data, options, number, complete),
                           bootstraps=True))
    judges = read(judge_reliability.read_judges)
    steps.append(_Step("comparing judges with judges", lambda number, _c, _t:
                       judge_reliability.reliability_section(judges, data, number)))
    if rater is not None:
        setup = read(variant_study.read_setup)
        steps.append(_Step("measuring variant groups", lambda number, _c, _t:
                           variant_study.variant_groups_section(setup, data, rater, number)))
        # The study's analyses stay last (the app's Reports page says so).
        steps.append(_Step("computing the study's analyses", lambda number, _c, _t:
                           analyses_section(score_tables.sheet(data, rater), rater, number, data,
                                            read(read_scaffold))))
    return steps, foldings
