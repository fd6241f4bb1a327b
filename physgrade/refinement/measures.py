"""Agreement with the reference on the held-out part, before and after a refinement.

Both raters are measured on the same responses: those of the held-out part that the reference,
"before" and "after" all assessed (per criterion: all three scored it with a number). So each
difference (after − before) is paired, and its interval allows for that:

- exact agreement per criterion: the share of responses given the reference's value (Wilson
  interval); the difference is the paired mean of the two agreement indicators (t interval);
- AC2 per criterion: Gwet's AC2 with linear weights against the reference; the difference's
  interval comes from the paired linearised values
  (:func:`physgrade.stats.agreement.ac2_difference`);
- exact agreement over all criteria: the share of criteria given the reference's value,
  averaged over responses (Wilson interval at the effective n of criteria clustered in
  responses; the judge cards' measure); the difference is the paired mean of the responses'
  shares (t interval);
- final-answer agreement (ANS): the share of responses whose final answer both call right
  (ANS at its maximum) or both call wrong;
- leniency: the mean score share, rater − reference (above 0: lenient); its difference is the
  paired mean of after − before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np
import pandas as pd

from physgrade.rubric import FINAL_ANSWER, GRADED_RUBRICS
from physgrade.scoring import tables as score_tables
from physgrade.scoring.tables import ScoreData
from physgrade.stats.agreement import ac2_difference, gwet_ac2
from physgrade.stats.describe import clustered_proportion, mean_difference, proportion
from physgrade.stats.estimate import Estimate

#: The measures, as keys (JSON) and as people read them.
EXACT, AC2, FINAL, LENIENCY = "exact_agreement", "ac2", "final_answer_agreement", "leniency"
MEASURES = {EXACT: "exact agreement", AC2: "AC2 (linear)", FINAL: "final-answer agreement",
            LENIENCY: "leniency"}
#: The criterion label of the rows that cover every criterion of a response.
ALL_CRITERIA = "all criteria"


@dataclass(frozen=True, slots=True)
class Compared:
    """One measure on one criterion (or :data:`ALL_CRITERIA`), before and after."""

    measure: str
    criterion: str
    before: Estimate
    after: Estimate
    difference: Estimate   # after − before

    @property
    def title(self) -> str:
        return MEASURES[self.measure]

    def texts(self) -> tuple[str, str, str]:
        """Before, after and the difference as people read them: agreement as a share (%),
        leniency and every change of a share in signed points of 100, AC2 as a coefficient."""
        return (shown(self.before, self.measure), shown(self.after, self.measure),
                shown(self.difference, self.measure, change=True))


def shown(estimate: Estimate, measure: str, change: bool = False) -> str:
    """One value of ``measure`` as :meth:`Compared.texts` shows it (``change``: a difference)."""
    if measure == AC2:
        text = estimate.text(3)
    else:
        text = estimate.text(3, percent=True)
        if estimate.value is not None and (change or measure == LENIENCY):
            text = text.replace("%", " pts", 1)
    signed = change or measure == LENIENCY
    return f"+{text}" if signed and estimate.value is not None and estimate.value > 0 else text


@dataclass(frozen=True, slots=True)
class Comparison:
    """Every measure of "before" and "after" against the reference on the held-out part."""

    reference: str
    before: str
    after: str
    heldout: int
    rows: tuple[Compared, ...]

    def side(self, which: str) -> dict:
        """``before``, ``after`` or ``difference`` as JSON: measure → criterion → estimate."""
        found: dict[str, dict] = {}
        for row in self.rows:
            found.setdefault(row.measure, {})[row.criterion] = getattr(row, which).as_dict()
        return found


def compare(data: ScoreData, reference: str, before: str, after: str,
            heldout: Iterable[str]) -> Comparison:
    """Measure ``before`` and ``after`` against ``reference`` on the ``heldout`` responses."""
    ids = pd.Index(sorted(set(heldout)))
    rows: list[Compared] = []
    same_before: list[pd.Series] = []
    same_after: list[pd.Series] = []
    several = len({rubric for rubric, _ in data.criteria}
                  & {rubric.key for rubric in GRADED_RUBRICS}) > 1
    for rubric in GRADED_RUBRICS:
        for criterion in rubric.criteria:
            side = score_tables.criterion_ratings(data, rubric.key, criterion.key,
                                                  [reference, before, after])
            side = side[side.index.isin(ids)].dropna()
            if side.empty:
                continue
            label = f"{criterion.key} ({rubric.title})" if several else criterion.key
            theirs = side[reference]
            agree_before = side[before] == theirs
            agree_after = side[after] == theirs
            same_before.append(agree_before)
            same_after.append(agree_after)
            rows.append(Compared(EXACT, label, _share(agree_before), _share(agree_after),
                                 _paired(agree_after, agree_before)))
            categories = np.arange(criterion.maximum + 1)
            first = side[[reference, before]].to_numpy(float)
            second = side[[reference, after]].to_numpy(float)
            rows.append(Compared(AC2, label, gwet_ac2(first, "linear", categories),
                                 gwet_ac2(second, "linear", categories),
                                 ac2_difference(first, second, "linear", categories)))
    if same_before:
        # Both sides hold the same criteria of the same responses: one count of criteria.
        criteria = pd.concat(same_before).groupby(level=0).size()
        agreeing_before = pd.concat(same_before).groupby(level=0).sum()
        agreeing_after = pd.concat(same_after).groupby(level=0).sum()
        rows.insert(0, Compared(EXACT, ALL_CRITERIA,
                                clustered_proportion(agreeing_before, criteria),
                                clustered_proportion(agreeing_after, criteria),
                                _paired(agreeing_after / criteria, agreeing_before / criteria)))
    rows.append(_final_answers(data, reference, before, after, ids))
    rows.append(_leniency(data, reference, before, after, ids))
    return Comparison(reference, before, after, len(ids), tuple(rows))


def _share(agrees: pd.Series) -> Estimate:
    return proportion(int(agrees.sum()), len(agrees))


def _paired(after: pd.Series, before: pd.Series) -> Estimate:
    return mean_difference(after.to_numpy(float), before.to_numpy(float), (-1, 1))


def _final_answers(data: ScoreData, reference: str, before: str, after: str,
                   ids: pd.Index) -> Compared:
    right = pd.concat({rater: score_tables.final_correct(data, rater)
                       for rater in (reference, before, after)}, axis=1, join="inner")
    right = right[right.index.isin(ids)]
    agree_before = right[before] == right[reference]
    agree_after = right[after] == right[reference]
    return Compared(FINAL, FINAL_ANSWER, _share(agree_before), _share(agree_after),
                    _paired(agree_after, agree_before))


def _leniency(data: ScoreData, reference: str, before: str, after: str,
              ids: pd.Index) -> Compared:
    shares = pd.concat({rater: score_tables.sheet(data, rater)["score_pct"]
                        for rater in (reference, before, after)}, axis=1, join="inner")
    shares = shares[shares.index.isin(ids)].dropna()
    theirs = shares[reference].to_numpy(float)
    return Compared(LENIENCY, ALL_CRITERIA,
                    mean_difference(shares[before].to_numpy(float), theirs, (-1, 1)),
                    mean_difference(shares[after].to_numpy(float), theirs, (-1, 1)),
                    mean_difference(shares[after].to_numpy(float),
                                    shares[before].to_numpy(float), (-1, 1)))
