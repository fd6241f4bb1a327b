"""What the report's sections share: the people's grade the judges are compared with, the
sheets of a judge and that reference side by side, and names after a judge.

The orchestrator (:mod:`physgrade.report.build`) and the sections it calls
(:mod:`physgrade.report.corrected`, :mod:`physgrade.report.judge_cards`) import these from here,
so that no section imports its orchestrator back.
"""

from __future__ import annotations

import pandas as pd

from physgrade.raters import HUMAN_CONSENSUS
from physgrade.scoring import tables as score_tables
from physgrade.scoring.tables import ScoreData


def main_reference(data: ScoreData) -> str | None:
    """The people's grade that stands for them all: the consensus when several people graded
    or an adjudicator decided, else the one grader (None when nobody did). The figures compare
    judges with it, and the study's analyses use it unless told otherwise."""
    if data.consensus_stands_apart():
        return HUMAN_CONSENSUS
    return data.graders[0] if data.graders else None


def slug(text: str) -> str:
    """``text`` as a table or figure name (letters, digits and ``_``): names after a judge."""
    return "".join(ch if ch.isalnum() else "_" for ch in text).strip("_").lower()


def paired(data: ScoreData, judge: str, reference: str, column: str) -> pd.DataFrame:
    """``column`` of the responses both raters assessed completely, as reference / judge."""
    return pd.concat({"reference": score_tables.sheet(data, reference)[column],
                      "judge": score_tables.sheet(data, judge)[column]},
                     axis=1, join="inner").dropna()
