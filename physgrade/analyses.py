"""The study's measures, computed from one rater's sheet (see :func:`physgrade.scoring.tables.sheet`).

Every function takes a sheet and returns a DataFrame ready to show: label and count columns as
plain values, and every estimated share or mean as an :class:`~physgrade.stats.Estimate`, so that
each carries its n and 95% interval. Shares are 0..1. Per-model tables list the models by name
and end with an :data:`ALL_MODELS` row over every response of the sheet (also when the sheet
holds one model, so a report can always find the total). N/A is never an error: a criterion
scored N/A counts as error-free. An empty sheet gives an empty table with the same columns.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

import numpy as np
import pandas as pd
from scipy import stats

from physgrade.rubric import GRADED_RUBRICS, PREFS, Rubric
from physgrade.selection import NONE
from physgrade.stats.describe import mean, mean_difference, proportion, welch_difference
from physgrade.stats.estimate import Estimate
from physgrade.stats.paired import spearman
from physgrade.taxonomy import (
    BLOOM_COGNITIVE,
    BLOOM_KNOWLEDGE,
    QUESTION_KINDS,
    REGIONS,
    TOPICS,
    in_vocabulary_order,
)

#: The label of the row over every model.
ALL_MODELS = "all models"
#: The range of a mean score_pct and of a difference of two (intervals are cut to it).
SHARE, SHARE_DIFFERENCE = (0.0, 1.0), (-1.0, 1.0)
#: What :func:`heatmap` can break scores down by, with the order its values are shown in.
HEATMAP_BY = {"topic": TOPICS, "bloom_cognitive": BLOOM_COGNITIVE, "bloom_knowledge": BLOOM_KNOWLEDGE}
#: The stage label of a response's whole score, after its rubric's own stages.
OVERALL = "Overall"
#: The question field that names the prompt condition of the formulation-scaffold ablation
#: (seed 001, App. I): a scaffolded question is imported as a question of its own, carrying it.
SCAFFOLD_FIELD = "scaffold"
#: The points of each graded rubric's scale (P-REFS: 10, the conceptual rubric: 5).
SCALE = {rubric.key: float(rubric.maximum) for rubric in GRADED_RUBRICS}


def score_by_model(sheet: pd.DataFrame) -> pd.DataFrame:
    """Per model: ``model, n, mean_score`` (mean score_pct), ``final_correct, fully_correct``
    (shares of responses)."""
    return as_table([{"model": model, "n": len(rows), "mean_score": mean(rows["score_pct"], SHARE),
                    "final_correct": _share(rows["final_correct"]),
                    "fully_correct": _share(rows["fully_correct"])}
                   for model, rows in each_model(sheet)],
                  ["model", "n", "mean_score", "final_correct", "fully_correct"])


def reasoning_gap(sheet: pd.DataFrame) -> pd.DataFrame:
    """Per model and question kind: ``model, kind, n, final_correct, fully_correct`` (counts) and
    ``reasoning_gap``: the share of the final-answer-correct responses that are not fully correct
    (its n is the final_correct count). Kinds are not pooled: their rubrics differ."""
    rows = []
    for model, mine in each_model(sheet):
        for kind, part in each_value(mine, "kind", QUESTION_KINDS):
            final = part["final_correct"]
            rows.append({"model": model, "kind": kind, "n": len(part), "final_correct": int(final.sum()),
                         "fully_correct": int(part["fully_correct"].sum()),
                         "reasoning_gap": proportion(int((final & ~part["fully_correct"]).sum()),
                                                     int(final.sum()))})
    return as_table(rows, ["model", "kind", "n", "final_correct", "fully_correct", "reasoning_gap"])


def degradation(sheet: pd.DataFrame, rubric: Rubric) -> pd.DataFrame:
    """Progressive degradation over the responses graded with ``rubric``, in WIDE format:
    ``model, n``, then a column per criterion in rubric order holding the share of responses
    with no error on that criterion and every one before it. The last column is the
    fully-correct rate."""
    rows, errors = _errors(sheet, rubric)
    error_free = pd.DataFrame(~np.logical_or.accumulate(errors.to_numpy(), axis=1),
                              index=errors.index, columns=errors.columns)
    return _shares_by_model(rows["model"], error_free)


def error_prevalence(sheet: pd.DataFrame, rubric: Rubric) -> pd.DataFrame:
    """Error prevalence over the responses graded with ``rubric``, in WIDE format: ``model, n``,
    then a column per error category (criterion key, rubric order) holding the share of the n
    responses with that error. Categories overlap; N/A counts in n as no error."""
    rows, errors = _errors(sheet, rubric)
    return _shares_by_model(rows["model"], errors)


def heatmap(sheet: pd.DataFrame, by: str) -> pd.DataFrame:
    """Mean score_pct per model and value of ``by`` (one of :data:`HEATMAP_BY`): ``model, n``,
    then a column per value present, in taxonomy order, then other values, then
    :data:`~physgrade.selection.NONE`. A model with no responses of a value gets an unavailable
    estimate there. It pools the question kinds of the sheet (give it one kind's rows);
    :func:`stage_heatmap` splits them, as the report does."""
    labels, values = _heatmap_labels(sheet, by)
    labelled = sheet.assign(_cell=labels)
    empty = pd.Series(dtype=float)
    rows = []
    for model, mine in each_model(labelled):
        cells = dict(list(mine.groupby("_cell")["score_pct"]))
        rows.append({"model": model, "n": len(mine)} | {v: mean(cells.get(v, empty), SHARE) for v in values})
    return as_table(rows, ["model", "n", *values])


def stage_scores(sheet: pd.DataFrame) -> pd.DataFrame:
    """Per model, question kind and stage of the rubric (seed 001, Fig 3): ``model, kind,
    part`` (the stage's place in its rubric from 1; :data:`OVERALL` last), ``stage`` (its
    name), ``n`` (responses), ``share`` (mean over the responses of the stage's points over
    its possible points) and ``contribution`` (mean of the stage's points over the response's
    possible points: a model's contributions in a kind add up to its Overall, the stacked bar
    of Fig 3). Overall is the mean score_pct in both. Kinds are not pooled."""
    share, contribution, stages = _stage_values(sheet)
    cells = _with_all_models(_factorized(sheet["model"], _labels(sheet["kind"]), sheet["rubric"]))
    rows = []
    for model, kind, rubric in _sorted_cells(cells, [QUESTION_KINDS, _RUBRIC_KEYS]):
        at = cells[model, kind, rubric]
        for part, stage in enumerate(stages[rubric]):
            rows.append({"model": model, "kind": kind, "part": part + 1, "stage": stage, "n": len(at),
                         "share": mean(share[at, part], SHARE),
                         "contribution": mean(contribution[at, part], SHARE)})
    return as_table(rows, ["model", "kind", "part", "stage", "n", "share", "contribution"])


def stage_heatmap(sheet: pd.DataFrame, by: str) -> pd.DataFrame:
    """Seed 001's four-panel heatmaps (Figs 15-18) per question kind: ``kind, part, stage,
    model, n``, then a column per value of ``by`` (as :func:`heatmap` orders them) holding the
    mean stage share (see :func:`stage_scores`; Overall: the mean score_pct) of the model's
    responses of that kind and value; a model with none there gets an unavailable estimate.
    Rows go by kind, then stage, then model (a panel each)."""
    labels, values = _heatmap_labels(sheet, by)
    share, _, stages = _stage_values(sheet)
    kinds = _labels(sheet["kind"])
    keys = _factorized(sheet["model"], kinds, sheet["rubric"], labels)
    panels, cells = _with_all_models(keys[:3]), _with_all_models(keys)
    ordered = _sorted_cells(panels, [QUESTION_KINDS, _RUBRIC_KEYS], model_last=True)
    none = np.array([], dtype=int)
    rows = []
    for kind, rubric in dict.fromkeys((kind, rubric) for _, kind, rubric in ordered):
        models = [model for model, *key in ordered if key == [kind, rubric]]
        for part, stage in enumerate(stages[rubric]):
            for model in models:
                rows.append({"kind": kind, "part": part + 1, "stage": stage, "model": model,
                             "n": len(panels[model, kind, rubric])}
                            | {value: mean(share[cells.get((model, kind, rubric, value), none), part],
                                           SHARE) for value in values})
    return as_table(rows, ["kind", "part", "stage", "model", "n", *values])


def compliance_effect(sheet: pd.DataFrame) -> pd.DataFrame:
    """Template compliance against score per model: ``model, n_compliant, n_noncompliant``,
    ``mean_score_compliant, mean_score_noncompliant`` (mean score_pct) and ``difference``
    (compliant minus not, Welch interval; its n counts both groups)."""
    rows = [{"model": model} | _compliance(mine["compliant"].to_numpy(dtype=bool),
                                           mine["score_pct"].to_numpy(dtype=float), SHARE)
            for model, mine in each_model(sheet)]
    return as_table(rows, ["model", "n_compliant", "n_noncompliant", "mean_score_compliant",
                         "mean_score_noncompliant", "difference"])


def compliance_by_kind(sheet: pd.DataFrame) -> pd.DataFrame:
    """Seed 001's Table 8, per question kind (the seed's is for problem-solving questions):
    ``kind, model, n``, ``compliance_rate`` (share of template-compliant responses),
    ``mean_score`` (every response), ``n_compliant, n_noncompliant, mean_score_compliant,
    mean_score_noncompliant`` and ``difference`` (compliant minus not, Welch interval). Scores
    are points of the scale of the rubric each response was graded with (score_pct × 10 for
    P-REFS, × 5 for the conceptual rubric), as the seed reports them."""
    scales = sheet["rubric"].map(SCALE)
    points = (sheet["score_pct"] * scales).to_numpy(dtype=float)
    compliant = sheet["compliant"].to_numpy(dtype=bool)
    kinds = _labels(sheet["kind"])
    top = scales.groupby(kinds.to_numpy()).max()
    cells = _with_all_models(_factorized(sheet["model"], kinds))
    rows = []
    for model, kind in _sorted_cells(cells, [QUESTION_KINDS], model_last=True):
        at, scale = cells[model, kind], (0.0, float(top[kind]))
        rows.append({"kind": kind, "model": model, "n": len(at),
                     "compliance_rate": proportion(int(compliant[at].sum()), len(at)),
                     "mean_score": mean(points[at], scale)}
                    | _compliance(compliant[at], points[at], scale))
    return as_table(rows, ["kind", "model", "n", "compliance_rate", "mean_score", "n_compliant",
                         "n_noncompliant", "mean_score_compliant", "mean_score_noncompliant",
                         "difference"])


def compliance_correlation(by_kind: pd.DataFrame) -> pd.DataFrame:
    """Across the models of each kind of a :func:`compliance_by_kind` table (seed 001, App. H):
    ``kind, models``, ``spearman`` (ρ between compliance rate and mean score, with its interval),
    ``p_value`` (two-sided, scipy's t approximation, as the seed's ρ = 0.079, p = 0.83 is
    reproduced from its Table 8) and ``p_value_reason``, and ``mean_abs_difference``,
    ``median_abs_difference``: the mean and median of the models' |compliant − not| (points;
    over the models that have both groups)."""
    rows = []
    for kind, part in each_value(by_kind[by_kind["model"] != ALL_MODELS], "kind", QUESTION_KINDS):
        rate = [_value(cell) for cell in part["compliance_rate"]]
        score = [_value(cell) for cell in part["mean_score"]]
        rho = spearman(rate, score)
        p_value, why = _spearman_p(rate, score) if rho.value is not None else (None, rho.reason)
        gaps = np.abs([value for cell in part["difference"] if (value := cell.value) is not None])
        rows.append({"kind": kind, "models": len(part), "spearman": rho, "p_value": p_value,
                     "p_value_reason": why,
                     "mean_abs_difference": float(gaps.mean()) if len(gaps) else None,
                     "median_abs_difference": float(np.median(gaps)) if len(gaps) else None})
    return as_table(rows, ["kind", "models", "spearman", "p_value", "p_value_reason",
                         "mean_abs_difference", "median_abs_difference"])


def scaffold_ablation(sheet: pd.DataFrame, conditions: Mapping[str, str | None]) -> pd.DataFrame:
    """The formulation-scaffold ablation (seed 001, App. I) over the responses graded with
    P-REFS, per model and prompt condition (``conditions``: each question's value of
    :data:`SCAFFOLD_FIELD`, :data:`~physgrade.selection.NONE` where it has none): ``model,
    condition, n``, ``final_correct``, ``fully_correct`` (every criterion at its maximum) and
    ``stages_2_3_correct`` (the seed's "fully correct" of the ablation: every criterion after
    the problem formulation at its maximum, the formulation treated as satisfied; N/A counts as
    right) as shares, and ``reasoning_gap``: the share of the final-answer-correct responses
    that are not stages_2_3_correct."""
    rows = sheet[sheet["rubric"] == PREFS.key]
    later = [c.key for c in PREFS.criteria if c.stage != PREFS.stages[0]]
    maxima = [float(c.maximum) for c in PREFS.criteria if c.key in later]
    later_right = ~rows[later].astype(float).lt(maxima).any(axis=1).to_numpy()
    final = rows["final_correct"].to_numpy(dtype=bool)
    fully = rows["fully_correct"].to_numpy(dtype=bool)
    cells = _with_all_models(_factorized(rows["model"], _labels(rows["question_id"].map(conditions))))
    found = []
    for model, condition in _sorted_cells(cells, [()]):
        at = cells[model, condition]
        found.append({"model": model, "condition": condition, "n": len(at),
                      "final_correct": proportion(int(final[at].sum()), len(at)),
                      "fully_correct": proportion(int(fully[at].sum()), len(at)),
                      "stages_2_3_correct": proportion(int(later_right[at].sum()), len(at)),
                      "reasoning_gap": proportion(int((final[at] & ~later_right[at]).sum()),
                                                  int(final[at].sum()))})
    return as_table(found, ["model", "condition", "n", "final_correct", "fully_correct",
                          "stages_2_3_correct", "reasoning_gap"])


def response_lengths(responses: pd.DataFrame, lengths: pd.Series) -> pd.DataFrame:
    """The distribution of response lengths (characters) per model and dataset split (seed
    001, App. C.2 and Fig 10, where splits are the contextual regions; the base questions'
    region is :data:`~physgrade.selection.NONE`): ``model, region, n, minimum, q25, median, q75,
    maximum, mean``; quantiles interpolate linearly between the sorted lengths (numpy's
    default). ``lengths`` is indexed like ``responses``. The all-models rows pool every model."""
    columns = ["model", "region", "n", "minimum", "q25", "median", "q75", "maximum", "mean"]
    if responses.empty:
        return as_table([], columns)
    frame = pd.DataFrame({"model": responses["model"], "region": _labels(responses["region"]),
                          "length": lengths.reindex(responses.index).astype(float)})
    frame = pd.concat([frame, frame.assign(model=ALL_MODELS)], ignore_index=True)
    grouped = frame.groupby(["model", "region"], sort=False)["length"]
    quantiles = grouped.quantile(np.array([0.25, 0.5, 0.75])).unstack()
    found = pd.DataFrame({"n": grouped.size(), "minimum": grouped.min(), "q25": quantiles[0.25],
                          "median": quantiles[0.5], "q75": quantiles[0.75], "maximum": grouped.max(),
                          "mean": grouped.mean()}).reset_index()
    models = sorted(set(found["model"]) - {ALL_MODELS}) + [ALL_MODELS]
    found["_model"] = found["model"].map({m: i for i, m in enumerate(models)})
    found["_region"] = found["region"].map({r: i for i, r in enumerate(_order(found["region"], REGIONS))})
    found = found.sort_values(["_model", "_region"], ignore_index=True)
    return found[columns].astype({"n": "int64"})


def variant_pairs(sheet: pd.DataFrame) -> pd.DataFrame:
    """Contextual variants against their base questions, paired, per model and region:
    ``model, region, n_pairs, base_score, variant_score`` (mean score_pct over the pairs),
    ``difference`` (mean of variant minus base, paired t interval), ``p_value`` (Wilcoxon
    signed-rank, two-sided) and ``p_value_reason`` (why p_value is None, else None).

    A pair is a model's response to a variant and the same model's response to its base
    question; a variant whose base response is not in the sheet is left out. Several responses
    of a model to one question are averaged first. The all-models rows pool the pairs of every
    model, as if independent.
    """
    scores = sheet.groupby(["model", "question_id"])["score_pct"].mean()
    variants = (sheet[sheet["variant_of"].notna()]
                .assign(region=lambda rows: _labels(rows["region"]))
                .groupby(["model", "question_id"])
                .agg(base=("variant_of", "first"), region=("region", "first"),
                     variant_score=("score_pct", "mean"))
                .reset_index())
    base_keys = pd.MultiIndex.from_arrays([variants["model"], variants["base"]])
    variants["base_score"] = scores.reindex(base_keys).to_numpy()
    pairs = variants[variants["base_score"].notna()]
    rows = []
    for model, mine in each_model(pairs):
        for region, part in each_value(mine, "region", REGIONS):
            p_value, why = _signed_rank(part["variant_score"].to_numpy() - part["base_score"].to_numpy())
            rows.append({"model": model, "region": region, "n_pairs": len(part),
                         "base_score": mean(part["base_score"], SHARE),
                         "variant_score": mean(part["variant_score"], SHARE),
                         "difference": mean_difference(part["variant_score"], part["base_score"],
                                                       SHARE_DIFFERENCE),
                         "p_value": p_value, "p_value_reason": why})
    return as_table(rows, ["model", "region", "n_pairs", "base_score", "variant_score", "difference",
                         "p_value", "p_value_reason"])


def _compliance(compliant: np.ndarray, scores: np.ndarray, bounds: tuple[float, float]) -> dict[str, object]:
    """Scores of the compliant responses against the others, means cut to ``bounds``."""
    yes, no = scores[compliant], scores[~compliant]
    low, high = bounds
    return {"n_compliant": len(yes), "n_noncompliant": len(no), "mean_score_compliant": mean(yes, bounds),
            "mean_score_noncompliant": mean(no, bounds),
            "difference": welch_difference(yes, no, (low - high, high - low))}


def _heatmap_labels(sheet: pd.DataFrame, by: str) -> tuple[pd.Series, list[str]]:
    """Each row's value of ``by`` as a label, and the values in the order a heatmap shows them."""
    if by not in HEATMAP_BY:
        raise ValueError(f"a heatmap is by one of {', '.join(HEATMAP_BY)}, not {by!r}")
    labels = _labels(sheet[by])
    return labels, _order(labels.unique(), HEATMAP_BY[by])


def _stage_values(sheet: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, dict[str, tuple[str, ...]]]:
    """Per response (in sheet order) and part (column p: the (p+1)-th stage of its rubric, then
    :data:`OVERALL`): the stage's points over its possible points (NaN where all its criteria
    are N/A) and over the response's possible points; Overall holds score_pct in both. Also
    each rubric's stages with Overall last."""
    stages = {rubric.key: (*rubric.stages, OVERALL) for rubric in GRADED_RUBRICS}
    shape = (len(sheet), max(len(names) for names in stages.values()))
    share, contribution = np.full(shape, np.nan), np.full(shape, np.nan)
    possible = sheet["possible"].to_numpy(dtype=float)
    possible = np.where(possible > 0, possible, np.nan)
    score = sheet["score_pct"].to_numpy(dtype=float)
    for rubric in GRADED_RUBRICS:
        mine = (sheet["rubric"] == rubric.key).to_numpy()
        for part, stage in enumerate(rubric.stages):
            criteria = [c for c in rubric.criteria if c.stage == stage]
            scores = sheet.loc[mine, [c.key for c in criteria]].to_numpy(dtype=float)
            points = np.nansum(scores, axis=1)
            out_of = (~np.isnan(scores) * np.array([float(c.maximum) for c in criteria])).sum(axis=1)
            out_of[out_of == 0] = np.nan
            share[mine, part] = points / out_of
            contribution[mine, part] = points / possible[mine]
        share[mine, len(rubric.stages)] = contribution[mine, len(rubric.stages)] = score[mine]
    return share, contribution, stages


#: A key's values as codes (positions in its uniques) and the uniques: see :func:`_factorized`.
_Factorized = tuple[np.ndarray, np.ndarray]


def _factorized(*keys: pd.Series) -> list[_Factorized]:
    """Each key's values (labels, no NaN) as codes, once for all the cells made from them."""
    return [pd.factorize(key.to_numpy(dtype=object)) for key in keys]


def _with_all_models(keys: list[_Factorized]) -> dict[tuple[str, ...], np.ndarray]:
    """The row positions of each (model, other keys' values...) that occurs (the first key is
    the model), and of each (other keys' values...) as (:data:`ALL_MODELS`, values...)."""
    return _positions(keys) | {(ALL_MODELS, *key): at for key, at in _positions(keys[1:]).items()}


def _positions(keys: list[_Factorized]) -> dict[tuple[str, ...], np.ndarray]:
    """The row positions of each combination of the keys' values that occurs: one sort, not a
    pandas group per combination (a report draws hundreds of cells from 58,000 responses)."""
    sizes = tuple(max(len(uniques), 1) for _, uniques in keys)
    combined = np.ravel_multi_index([codes for codes, _ in keys], sizes)
    order = np.argsort(combined, kind="stable")
    found, starts = np.unique(combined[order], return_index=True)
    return {tuple(str(uniques[i]) for (_, uniques), i in zip(keys, np.unravel_index(code, sizes))): at
            for code, at in zip(found, np.split(order, starts[1:]))}


#: The graded rubrics' keys in their order.
_RUBRIC_KEYS = tuple(rubric.key for rubric in GRADED_RUBRICS)


def _sorted_cells(cells: Iterable[tuple[str, ...]], known: list[tuple[str, ...]],
                  model_last: bool = False) -> list[tuple[str, ...]]:
    """The keys of ``cells`` (a model, then values with the ``known`` vocabularies) in report
    order: models by name with :data:`ALL_MODELS` last, values as :func:`_order` has them; by
    model first, or with ``model_last`` by the values first."""
    keys = list(cells)
    places = []
    for column, vocabulary in enumerate([(), *known]):
        present = {key[column] for key in keys}
        ranked = (sorted(present - {ALL_MODELS}) + [ALL_MODELS] if column == 0
                  else _order(present, vocabulary))
        places.append({value: rank for rank, value in enumerate(ranked)})

    def rank(key: tuple[str, ...]) -> tuple[int, ...]:
        ranks = tuple(place[value] for place, value in zip(places, key))
        return (*ranks[1:], ranks[0]) if model_last else ranks
    return sorted(keys, key=rank)


def each_model(rows: pd.DataFrame) -> Iterator[tuple[str, pd.DataFrame]]:
    """Each model's rows, models by name, then every row as :data:`ALL_MODELS` (if any)."""
    for model, mine in rows.groupby("model", sort=True):
        yield str(model), mine
    if len(rows):
        yield ALL_MODELS, rows


def each_value(rows: pd.DataFrame, column: str, known: tuple[str, ...]) -> Iterator[tuple[str, pd.DataFrame]]:
    """The rows by value of ``column`` in the order of :func:`_order`."""
    labels = _labels(rows[column])
    parts = {str(value): part for value, part in rows.groupby(labels.to_numpy())}
    for value in _order(parts, known):
        yield value, parts[value]


def _labels(values: pd.Series) -> pd.Series:
    return values.astype(object).where(values.notna(), NONE)


def _order(values: Iterable[str], known: tuple[str, ...]) -> list[str]:
    """Known values in vocabulary order, then the others by name, then :data:`~physgrade.selection.NONE`."""
    present = set(values)
    return in_vocabulary_order(present - {NONE}, known) + ([NONE] if NONE in present else [])


def _errors(sheet: pd.DataFrame, rubric: Rubric) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows graded with ``rubric`` and, per criterion, whether it is below its maximum
    (N/A, stored as NaN, compares as not below)."""
    rows = sheet[sheet["rubric"] == rubric.key]
    maxima = [float(c.maximum) for c in rubric.criteria]
    return rows, rows[list(rubric.keys)].astype(float).lt(maxima)


def _shares_by_model(models: pd.Series, flags: pd.DataFrame) -> pd.DataFrame:
    """``model, n`` and, per column of ``flags``, the share of the model's rows flagged."""
    rows = [{"model": model, "n": len(part)} | {key: _share(part[key]) for key in flags.columns}
            for model, part in each_model(flags.assign(model=models))]
    return as_table(rows, ["model", "n", *flags.columns])


def _share(flags: pd.Series) -> Estimate:
    return proportion(int(flags.sum()), len(flags))


def _value(cell: Estimate) -> float:
    """An estimate's value, NaN where there is none (a pair the correlation leaves out)."""
    return np.nan if cell.value is None else cell.value


def _spearman_p(x: list[float], y: list[float]) -> tuple[float | None, str | None]:
    """The two-sided p-value of Spearman's ρ by scipy's t approximation (the seed's), or None
    and why: it needs 3 models, and at ρ = ±1 it would say 0 whatever the number of models."""
    found = stats.spearmanr(x, y, nan_policy="omit")
    if np.isnan(found.pvalue):
        return None, "a p-value needs at least 3 models"
    if np.isclose(abs(found.statistic), 1.0):
        return None, "ρ = ±1: the t approximation gives no p-value"
    return float(found.pvalue), None


def _signed_rank(differences: np.ndarray) -> tuple[float | None, str | None]:
    """The two-sided Wilcoxon signed-rank p-value of paired differences (zeros dropped), or
    None and why there is no test. Differences are rounded first so that float noise (0.9 - 1.0
    against 0.8 - 0.7) neither breaks the ties the ranks depend on nor hides a zero."""
    differences = np.round(differences, 12)
    if len(differences) < 2:
        return None, "fewer than two pairs"
    if not np.any(differences):
        return None, "all differences are zero"
    return float(stats.wilcoxon(differences).pvalue), None


def as_table(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    """The rows as a frame whose cells stay as given (None stays None, not NaN), except that
    count columns become int64."""
    frame = pd.DataFrame(rows, columns=columns, dtype=object)
    counts = [c for c in columns if rows and all(type(row[c]) is int for row in rows)]
    return frame.astype(dict.fromkeys(counts, "int64"))
