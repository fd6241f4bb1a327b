"""The study's measures, computed from one rater's sheet (see :func:`physgrade.scoring.tables.sheet`).

Every function takes a sheet and returns a DataFrame ready to show: label and count columns as
plain values, and every estimated share or mean as an :class:`~physgrade.stats.Estimate`, so that
each carries its n and 95% interval. Shares are 0..1. Per-model tables list the models by name
and end with an :data:`ALL_MODELS` row over every response of the sheet (also when the sheet
holds one model, so a report can always find the total). N/A is never an error: a criterion
scored N/A counts as error-free. An empty sheet gives an empty table with the same columns.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import pandas as pd
from scipy import stats

from physgrade.rubric import Rubric
from physgrade.selection import NONE
from physgrade.stats.describe import mean, mean_difference, proportion, welch_difference
from physgrade.stats.estimate import Estimate
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


def score_by_model(sheet: pd.DataFrame) -> pd.DataFrame:
    """Per model: ``model, n, mean_score`` (mean score_pct), ``final_correct, fully_correct``
    (shares of responses)."""
    return _table([{"model": model, "n": len(rows), "mean_score": mean(rows["score_pct"], SHARE),
                    "final_correct": _share(rows["final_correct"]),
                    "fully_correct": _share(rows["fully_correct"])}
                   for model, rows in _by_model(sheet)],
                  ["model", "n", "mean_score", "final_correct", "fully_correct"])


def reasoning_gap(sheet: pd.DataFrame) -> pd.DataFrame:
    """Per model and question kind: ``model, kind, n, final_correct, fully_correct`` (counts) and
    ``reasoning_gap``: the share of the final-answer-correct responses that are not fully correct
    (its n is the final_correct count). Kinds are not pooled: their rubrics differ."""
    rows = []
    for model, mine in _by_model(sheet):
        for kind, part in _groups(mine, "kind", QUESTION_KINDS):
            final = part["final_correct"]
            rows.append({"model": model, "kind": kind, "n": len(part), "final_correct": int(final.sum()),
                         "fully_correct": int(part["fully_correct"].sum()),
                         "reasoning_gap": proportion(int((final & ~part["fully_correct"]).sum()),
                                                     int(final.sum()))})
    return _table(rows, ["model", "kind", "n", "final_correct", "fully_correct", "reasoning_gap"])


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
    estimate there."""
    if by not in HEATMAP_BY:
        raise ValueError(f"a heatmap is by one of {', '.join(HEATMAP_BY)}, not {by!r}")
    labelled = sheet.assign(_cell=_labels(sheet[by]))
    values = _order(labelled["_cell"].unique(), HEATMAP_BY[by])
    empty = pd.Series(dtype=float)
    rows = []
    for model, mine in _by_model(labelled):
        cells = dict(list(mine.groupby("_cell")["score_pct"]))
        rows.append({"model": model, "n": len(mine)} | {v: mean(cells.get(v, empty), SHARE) for v in values})
    return _table(rows, ["model", "n", *values])


def compliance_effect(sheet: pd.DataFrame) -> pd.DataFrame:
    """Template compliance against score per model: ``model, n_compliant, n_noncompliant``,
    ``mean_score_compliant, mean_score_noncompliant`` (mean score_pct) and ``difference``
    (compliant minus not, Welch interval; its n counts both groups)."""
    rows = []
    for model, mine in _by_model(sheet):
        compliant = mine["compliant"].to_numpy(dtype=bool)
        yes, no = mine["score_pct"][compliant], mine["score_pct"][~compliant]
        rows.append({"model": model, "n_compliant": len(yes), "n_noncompliant": len(no),
                     "mean_score_compliant": mean(yes, SHARE), "mean_score_noncompliant": mean(no, SHARE),
                     "difference": welch_difference(yes, no, SHARE_DIFFERENCE)})
    return _table(rows, ["model", "n_compliant", "n_noncompliant", "mean_score_compliant",
                         "mean_score_noncompliant", "difference"])


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
    for model, mine in _by_model(pairs):
        for region, part in _groups(mine, "region", REGIONS):
            p_value, why = _signed_rank(part["variant_score"].to_numpy() - part["base_score"].to_numpy())
            rows.append({"model": model, "region": region, "n_pairs": len(part),
                         "base_score": mean(part["base_score"], SHARE),
                         "variant_score": mean(part["variant_score"], SHARE),
                         "difference": mean_difference(part["variant_score"], part["base_score"],
                                                       SHARE_DIFFERENCE),
                         "p_value": p_value, "p_value_reason": why})
    return _table(rows, ["model", "region", "n_pairs", "base_score", "variant_score", "difference",
                         "p_value", "p_value_reason"])


def variant_consistency(sheet: pd.DataFrame) -> pd.DataFrame:
    """Whether a model answers a question and its contextual variants alike, per model:
    ``groups`` (variant groups: a base question and all its variants the sheet knows of, counted
    only where the model has a response to every member), ``all_correct, all_wrong, mixed``
    (counts by final answer) and ``all_correct_share, all_wrong_share, mixed_share``. The
    all-models row counts each model's groups separately."""
    grouped = sheet.assign(group=sheet["variant_of"].fillna(sheet["question_id"]))
    grouped = grouped[grouped["variant_of"].notna().groupby(grouped["group"]).transform("any")]
    members = grouped.groupby("group")["question_id"].nunique()
    per_model = (grouped.assign(is_base=grouped["question_id"] == grouped["group"])
                 .groupby(["model", "group"])
                 .agg(answered=("question_id", "nunique"), has_base=("is_base", "any"),
                      all_correct=("final_correct", "all"), any_correct=("final_correct", "any"))
                 .reset_index())
    complete = per_model[per_model["has_base"]
                         & (per_model["answered"] == members.reindex(per_model["group"]).to_numpy())]
    rows = []
    for model, mine in _by_model(complete):
        groups, right, wrong = len(mine), int(mine["all_correct"].sum()), int((~mine["any_correct"]).sum())
        mixed = groups - right - wrong
        rows.append({"model": model, "groups": groups, "all_correct": right, "all_wrong": wrong,
                     "mixed": mixed, "all_correct_share": proportion(right, groups),
                     "all_wrong_share": proportion(wrong, groups), "mixed_share": proportion(mixed, groups)})
    return _table(rows, ["model", "groups", "all_correct", "all_wrong", "mixed", "all_correct_share",
                         "all_wrong_share", "mixed_share"])


def _by_model(rows: pd.DataFrame) -> Iterator[tuple[str, pd.DataFrame]]:
    """Each model's rows, models by name, then every row as :data:`ALL_MODELS` (if any)."""
    for model, mine in rows.groupby("model", sort=True):
        yield str(model), mine
    if len(rows):
        yield ALL_MODELS, rows


def _groups(rows: pd.DataFrame, column: str, known: tuple[str, ...]) -> Iterator[tuple[str, pd.DataFrame]]:
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
            for model, part in _by_model(flags.assign(model=models))]
    return _table(rows, ["model", "n", *flags.columns])


def _share(flags: pd.Series) -> Estimate:
    return proportion(int(flags.sum()), len(flags))


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


def _table(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    """The rows as a frame whose cells stay as given (None stays None, not NaN), except that
    count columns become int64."""
    frame = pd.DataFrame(rows, columns=columns, dtype=object)
    counts = [c for c in columns if rows and all(type(row[c]) is int for row in rows)]
    return frame.astype(dict.fromkeys(counts, "int64"))
