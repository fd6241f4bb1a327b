"""P-REFS v1's measures (seed 000, §3.5, Table 1, Figs 7–9), from a rater's coarse verdicts.

The first study's judge gave each response three numbers (its Figs 4–6): ``answer`` 1 correct,
0 wrong; ``reasoning`` 2 fully, 1 partially, 0 incorrect; ``calculations`` 2 none needed,
1 correct, 0 incorrect (:data:`~physgrade.rubric.COARSE`). From them, per model and per group:

* answer accuracy: the share with ``answer`` 1;
* fully correct reasoning: the share with ``reasoning`` 2;
* calculation accuracy: the share with ``calculations`` 1 among the responses that needed
  calculations (``calculations`` 1 or 0); its own n;
* WRA, the weighted reasoning accuracy Σwᵢ / 2n (wᵢ the reasoning score): the mean of
  ``reasoning`` / 2, with its t interval.

A rater without coarse verdicts may still have P-REFS (or conceptual) scores; the seed gives no
way from those to its three numbers, so physgrade maps them itself (:func:`map_prefs`), and a
rater with coarse verdicts is always read from them. Every table follows
:mod:`physgrade.analyses`: shares as :class:`~physgrade.stats.Estimate` (0..1), models by name,
then an :data:`~physgrade.analyses.ALL_MODELS` row.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from physgrade.analyses import SHARE, as_table, each_model, each_value
from physgrade.raters import HUMAN_CONSENSUS
from physgrade.rubric import COARSE, CONCEPTUAL, FINAL_ANSWER, GRADED_RUBRICS, PREFS, Rubric
from physgrade.scoring import tables as score_tables
from physgrade.scoring.tables import ScoreData
from physgrade.stats.describe import mean, proportion
from physgrade.taxonomy import BLOOM_COGNITIVE, BLOOM_KNOWLEDGE, TOPICS

#: The values of the question field ``notation`` (seed 000's D_openstax in LaTeX and
#: D_plaintext), in the order tables list them; other spellings follow by name.
NOTATIONS = ("latex", "plain")
#: What the measures can be broken down by, with the order the values are listed in.
BY: dict[str, tuple[str, ...]] = {"topic": TOPICS, "bloom_cognitive": BLOOM_COGNITIVE,
                                  "bloom_knowledge": BLOOM_KNOWLEDGE, "notation": NOTATIONS}
#: The measures, in the order of the seed's Table 1 columns as physgrade shows them.
MEASURES = ("answer_accuracy", "fully_correct_reasoning", "calculation_accuracy", "wra")
#: Where a rater's numbers come from (the ``source`` column of :func:`verdicts`).
FROM_COARSE, FROM_PREFS = "coarse verdicts", "P-REFS scores, mapped"
#: The criterion each graded rubric's calculations are read from by :func:`map_prefs`.
CALCULATION_CRITERION = {PREFS.key: "CAL", CONCEPTUAL.key: "EXE"}

#: The coarse codes (the seed's prompts, Figs 4–6).
_CORRECT, _FULLY, _NOT_NEEDED, _CALCULATED_RIGHT = 1, 2, 2, 1
_COLUMNS = list(COARSE.keys)


def has_coarse(data: ScoreData, rater: str) -> bool:
    """Whether ``rater`` gave a complete coarse verdict on any response of ``data``."""
    _, given = data.rubric_scores(rater, COARSE)
    return bool(given.all(axis=1).any())


def coarse_raters(data: ScoreData) -> list[str]:
    """The raters with coarse verdicts among ``data``'s responses, in report order; the human
    consensus only where it can differ from every grader (else it repeats the one grader)."""
    return [rater for rater in data.raters() if has_coarse(data, rater)
            and (rater != HUMAN_CONSENSUS or data.consensus_stands_apart())]


def verdicts(data: ScoreData, rater: str,
             notation: Mapping[str, str | None] | None = None) -> pd.DataFrame:
    """``rater``'s three numbers per response: its complete coarse verdicts where it has any,
    else its complete P-REFS and conceptual assessments mapped (:func:`map_prefs`). A row per
    response (indexed by id) with the response's attributes, ``notation`` (the responses'
    column where the project declares it a facet, else from ``notation``: the question field
    by question id), ``answer, reasoning, calculations`` (ints) and ``source``
    (:data:`FROM_COARSE` or :data:`FROM_PREFS`)."""
    if has_coarse(data, rater):
        wide, given = data.rubric_scores(rater, COARSE)
        found = wide[given.all(axis=1)].astype(int)
        source = FROM_COARSE
    else:
        sheet = score_tables.sheet(data, rater)
        found = pd.concat([_mapped(sheet[sheet["rubric"] == rubric.key], rubric)
                           for rubric in GRADED_RUBRICS])
        source = FROM_PREFS
    rows = data.responses.join(found, how="inner")
    if "notation" not in rows.columns:
        rows["notation"] = rows["question_id"].map(dict(notation or {}))
    rows["source"] = source
    rows.index.name = "response_id"
    return rows


def map_prefs(rubric: Rubric, scores: Mapping[str, int | None]) -> tuple[int, int, int]:
    """One P-REFS or conceptual assessment as the coarse (answer, reasoning, calculations),
    physgrade's mapping (the seed gives none): answer 1 when ANS is at its maximum; reasoning 2
    when every other criterion given a number is at its maximum, 1 when some are, 0 when none
    is (N/A is left out); calculations from :data:`CALCULATION_CRITERION` (CAL, or EXE on a
    conceptual item): 2 (none needed) when N/A, 1 at its maximum, 0 below it."""
    row = pd.DataFrame([{key: np.nan if scores.get(key) is None else scores[key]
                         for key in rubric.keys}], dtype=float)
    answer, reasoning, calculations = _mapped(row, rubric).iloc[0]
    return int(answer), int(reasoning), int(calculations)


def _mapped(wide: pd.DataFrame, rubric: Rubric) -> pd.DataFrame:
    """:func:`map_prefs` over a frame of ``rubric``'s criteria (NaN for N/A)."""
    maxima = {c.key: float(c.maximum) for c in rubric.criteria}
    reasoning_keys = [key for key in rubric.keys if key != FINAL_ANSWER]
    values = wide[reasoning_keys].astype(float)
    at_maximum = values.ge(pd.Series(maxima)[reasoning_keys])
    every = (at_maximum | values.isna()).all(axis=1)
    calculation = wide[CALCULATION_CRITERION[rubric.key]].astype(float)
    mapped = pd.DataFrame({
        "answer": (wide[FINAL_ANSWER].astype(float) == maxima[FINAL_ANSWER]).astype(int),
        "reasoning": np.where(every, 2, np.where(at_maximum.any(axis=1), 1, 0)),
        "calculations": np.where(calculation.isna(), _NOT_NEEDED,
                                 np.where(calculation >= maxima[CALCULATION_CRITERION[rubric.key]],
                                          _CALCULATED_RIGHT, 0))},
        index=wide.index)
    return mapped[_COLUMNS].astype(int)


def by_model(rows: pd.DataFrame) -> pd.DataFrame:
    """Per model (then :data:`ALL_MODELS`): ``model, n, answer_accuracy,
    fully_correct_reasoning, n_calculations`` (responses that needed calculations),
    ``calculation_accuracy, wra``."""
    return as_table([{"model": model, **_measures(mine)} for model, mine in each_model(rows)],
                  ["model", *_MEASURE_COLUMNS])


def by_group(rows: pd.DataFrame, by: str) -> pd.DataFrame:
    """Per model and value of ``by`` (one of :data:`BY`; a missing value is
    :data:`~physgrade.selection.NONE`, listed last): ``model, <by>``, then the columns of
    :func:`by_model`."""
    if by not in BY:
        raise ValueError(f"the P-REFS v1 measures are broken down by one of {', '.join(BY)}, "
                         f"not {by!r}")
    found = [{"model": model, by: value, **_measures(part)}
             for model, mine in each_model(rows) for value, part in each_value(mine, by, BY[by])]
    return as_table(found, ["model", by, *_MEASURE_COLUMNS])


def pivot(groups: pd.DataFrame, by: str, measure: str) -> pd.DataFrame:
    """A :func:`by_group` table as a heatmap's grid of one ``measure`` (of :data:`MEASURES`):
    ``model``, then a column per value of ``by`` in the table's order; a model with no
    response of a value has None there."""
    if measure not in MEASURES:
        raise ValueError(f"a measure is one of {', '.join(MEASURES)}, not {measure!r}")
    values = list(dict.fromkeys(groups[by]))
    cells = {(row["model"], row[by]): row[measure] for _, row in groups.iterrows()}
    models = list(dict.fromkeys(groups["model"]))
    return as_table([{"model": model} | {value: cells.get((model, value)) for value in values}
                   for model in models], ["model", *values])


_MEASURE_COLUMNS = ["n", "answer_accuracy", "fully_correct_reasoning", "n_calculations",
                    "calculation_accuracy", "wra"]


def _measures(rows: pd.DataFrame) -> dict[str, object]:
    """The measures of some responses' verdicts (§3.5): shares with their Wilson interval, WRA
    as the mean of reasoning / 2 with its t interval cut to 0..1."""
    needed = rows["calculations"] != _NOT_NEEDED
    return {"n": len(rows),
            "answer_accuracy": proportion(int((rows["answer"] == _CORRECT).sum()), len(rows)),
            "fully_correct_reasoning": proportion(int((rows["reasoning"] == _FULLY).sum()),
                                                  len(rows)),
            "n_calculations": int(needed.sum()),
            "calculation_accuracy": proportion(
                int((rows["calculations"][needed] == _CALCULATED_RIGHT).sum()), int(needed.sum())),
            "wra": mean(rows["reasoning"].astype(float) / 2, SHARE)}
