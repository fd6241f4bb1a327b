"""The report's "Variant groups and formats" section: SymPyBench's consistency, complete failure
and confusion over variant groups, and accuracy by question format, per model
(:mod:`physgrade.studies.variant_groups`), from the analyses rater's sheet.

Shown only when some model answered a whole variant group or some question has a format, so
that a project without either reports as before.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from physgrade.report.model import Cell, Section, Table
from physgrade.scoring.tables import ScoreData
from physgrade.scoring.tables import sheet as rater_sheet
from physgrade.studies import variant_groups
from physgrade.studies.variant_groups import Setup, read_setup

__all__ = ["TITLE", "read_setup", "variant_groups_section"]  # read_setup: what the section reads

TITLE = "Variant groups and formats"
#: The measures' column titles (those of issue 35, after the seed's Table 2).
HEADERS = {"consistency": "Consistency", "complete_failure": "Complete failure",
           "confusion": "Confusion"}


def variant_groups_section(setup: Setup, data: ScoreData, rater: str,
                           number: int) -> Section | None:
    """The section for ``rater``'s sheet; None when it has neither a whole group nor formats."""
    found = variant_groups.measure(rater_sheet(data, rater), rater, setup)
    tables = []
    if not found.groups.empty:
        tables.append(Table(
            "variant_consistency", "Consistency over variant groups",
            ("Model", "Groups", "n", *HEADERS.values()),
            _rows(found.groups, ["model", "groups", "n", *HEADERS]),
            "A group is the questions of one template (variant_group), or a base question with "
            "its contextual variants; it counts for a model that answered all of its questions. "
            "Consistency: every answer right; complete failure: every answer wrong; confusion: "
            f"accuracy within {variant_groups.band_in_words(setup.band)} (the project's "
            "confusion band). Correct = final answer correct; n = responses in the groups; "
            "shares of the groups with their Wilson 95% interval.", frozenset(HEADERS.values())))
    if found.formats is not None:
        tables.append(Table(
            "accuracy_by_format", "Accuracy by format", ("Model", "Format", "n", "Accuracy"),
            _rows(found.formats, ["model", "format", "n", "accuracy"]),
            "Accuracy: the share of responses with a correct final answer, with its Wilson 95% "
            "interval; the format is the question field format.", frozenset({"Accuracy"})))
    if not tables:
        return None
    return Section(f"{number}. {TITLE}, by {rater}",
                   f"How alike each model answers the questions of one template, and how it "
                   f"fares by question format (SymPyBench), from the grades of {rater}.",
                   tables, short=f"{number}. Variant groups")


def _rows(frame: pd.DataFrame, columns: list[str]) -> list[tuple[Cell, ...]]:
    """The frame's cells as plain Python values (counts as int, not numpy's)."""
    return [tuple(value.item() if isinstance(value, np.generic) else value for value in row)
            for row in frame[columns].itertuples(index=False, name=None)]
