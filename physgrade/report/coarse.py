"""The report's "P-REFS v1 measures" section: the first study's answer accuracy, fully correct
reasoning, calculation accuracy and WRA (:mod:`physgrade.studies.coarse`) per model, by topic,
Bloom level and notation, and its heatmaps by model × topic and Bloom level (seed 000, Table 1,
Figs 7–9).

Shown only when some rater has coarse verdicts among the report's responses, so that a project
of the second study reports as before. Each such rater gets its rows; the analyses rater, when it
has no coarse verdicts of its own, gets rows from its P-REFS scores mapped
(:func:`~physgrade.studies.coarse.map_prefs`), so that the judge's coarse verdicts can be read
beside the people's grades.
"""

from __future__ import annotations

from functools import partial
from typing import Mapping

import numpy as np
import pandas as pd

from physgrade import question_fields
from physgrade.analyses import ALL_MODELS
from physgrade.project import Project
from physgrade.report import plots
from physgrade.report.common import slug
from physgrade.report.model import Cell, Figure, Section, Table
from physgrade.scoring.tables import ScoreData
from physgrade.selection import NONE
from physgrade.stats.estimate import Estimate
from physgrade.studies import coarse

TITLE = "P-REFS v1 measures"
#: The measures' column titles (those of issue 35, after the seed's Table 1).
HEADERS = {"answer_accuracy": "Answer accuracy", "fully_correct_reasoning": "Fully correct reasoning",
           "calculation_accuracy": "Calculation accuracy", "wra": "WRA"}
#: The groups, as a column calls them; the seed draws heatmaps of the first three (Figs 7–9).
GROUPS = {"topic": "Topic", "bloom_cognitive": "Bloom cognitive level",
          "bloom_knowledge": "Bloom knowledge type", "notation": "Notation"}
#: How a title's sentence calls each group.
NOUNS = {"topic": "topic", "bloom_cognitive": "Bloom cognitive level",
         "bloom_knowledge": "Bloom knowledge type", "notation": "notation"}
HEATMAPS = ("topic", "bloom_cognitive", "bloom_knowledge")
#: The question field that tells LaTeX from plain-text notation (seed 000, §4.2).
NOTATION_FIELD = "notation"
_COLUMNS = ("Rater", "Source", "Model")
_MEASURE_COLUMNS = ("n", HEADERS["answer_accuracy"], HEADERS["fully_correct_reasoning"],
                    "n calculations", HEADERS["calculation_accuracy"], HEADERS["wra"])
_NOTE = ("Answer accuracy: answer 1 of n. Fully correct reasoning: reasoning 2 of n. "
         "Calculation accuracy: calculations correct among the n calculations responses that "
         "needed them (calculations 1 or 0). WRA = Σ reasoning / 2n. Shares with their Wilson "
         "95% interval, WRA with its t interval.")


def read_notation(project: Project) -> dict[str, str | None]:
    """Every question's notation (``latex``, ``plain``…), by question id."""
    return question_fields.values(project, NOTATION_FIELD)


def shown(data: ScoreData) -> bool:
    """Whether the report has the section: some rater has coarse verdicts in it."""
    return bool(coarse.coarse_raters(data))


def coarse_section(data: ScoreData, notation: Mapping[str, str | None], analyses_rater: str | None,
                   number: int) -> Section | None:
    """The section for every rater with coarse verdicts, and the analyses rater's mapped P-REFS
    scores; None when no rater has coarse verdicts."""
    raters = coarse.coarse_raters(data)
    if not raters:
        return None
    if analyses_rater is not None and analyses_rater not in raters:
        raters.append(analyses_rater)
    sheets = {rater: coarse.verdicts(data, rater, notation) for rater in raters}
    sheets = {rater: rows for rater, rows in sheets.items() if len(rows)}
    model_rows: list[tuple[Cell, ...]] = []
    group_rows: dict[str, list[tuple[Cell, ...]]] = {by: [] for by in GROUPS}
    figures: list[Figure] = []
    for rater, rows in sheets.items():
        source = str(rows["source"].iloc[0])
        model_rows += _rows((rater, source), coarse.by_model(rows))
        for by in GROUPS:
            if rows[by].isna().all():
                continue  # no question has this field: a column of "(none)" tells nothing
            groups = coarse.by_group(rows, by)
            group_rows[by] += _rows((rater, source), groups)
            if by in HEATMAPS:
                figures += _heatmaps(rater, groups, by)
    tables = [Table("prefs_v1_by_model", f"{TITLE} per model", (*_COLUMNS, *_MEASURE_COLUMNS),
                    model_rows, _NOTE, frozenset(HEADERS.values()))]
    tables += [Table(f"prefs_v1_by_{by}", f"{TITLE} by model and {NOUNS[by]}",
                     (*_COLUMNS, title, *_MEASURE_COLUMNS), found, _NOTE,
                     frozenset(HEADERS.values()))
               for by, title in GROUPS.items() if (found := group_rows[by])]
    intro = ("The first study's measures (seed 000, §3.5 and Table 1), from each judge's coarse "
             "verdicts: answer 1 correct / 0 wrong, reasoning 2 fully / 1 partially / 0 "
             "incorrect, calculations 2 not needed / 1 correct / 0 incorrect. The weighted "
             "reasoning accuracy WRA = Σwᵢ / 2n counts partly correct reasoning half. "
             f"Rows marked '{coarse.FROM_PREFS}' are the analyses rater's P-REFS scores read "
             "as coarse verdicts by physgrade's mapping (ANS at its maximum; reasoning 2 when "
             "every other criterion is at its maximum, 1 when some are; calculations from CAL, "
             "or EXE on conceptual items, not needed when N/A). Notation is the question field "
             f"'{NOTATION_FIELD}' (LaTeX or plain text, §4.2).")
    return Section(f"{number}. {TITLE}", intro, tables, figures, f"{number}. P-REFS v1")


def _rows(first: tuple[Cell, ...], frame: pd.DataFrame) -> list[tuple[Cell, ...]]:
    """The frame's rows after ``first``, counts as plain ints."""
    return [(*first, *(_cell(value) for value in row))
            for row in frame.itertuples(index=False, name=None)]


def _cell(value: object) -> Cell:
    if isinstance(value, (np.integer, int)) and not isinstance(value, bool):
        return int(value)
    if value is None or isinstance(value, (str, Estimate, float)):
        return value
    return str(value)


def _heatmaps(rater: str, groups: pd.DataFrame, by: str) -> list[Figure]:
    """A heatmap per measure, models by the values of ``by`` (as the seed's Figs 7–9 draw them:
    the models only, without the all-models row)."""
    figures = []
    for measure in coarse.MEASURES:
        grid = coarse.pivot(groups, by, measure)
        grid = grid[grid["model"] != ALL_MODELS]
        columns = [str(c) for c in grid.columns if c != "model"]
        if grid.empty or columns == [NONE]:
            continue
        values = np.array([[np.nan if not isinstance(cell, Estimate) or cell.value is None
                            else cell.value for cell in row]
                           for row in grid[columns].itertuples(index=False, name=None)],
                          dtype=float)
        title = f"{HEADERS[measure]} (%) by model and {NOUNS[by]}: {rater}"
        figures.append(Figure(f"prefs_v1_{slug(rater)}_{by}_{measure}", title,
                              partial(plots.heatmap, list(grid["model"]), columns, values,
                                      f"{HEADERS[measure]} (%), {rater}"),
                              "Each cell is the measure over the model's responses in that "
                              "group; blank where the model has none (or, for calculation "
                              "accuracy, none that needed calculations).", f"prefs_v1_by_{by}"))
    return figures
