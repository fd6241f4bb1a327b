"""Scores as tables, for reports: who scored what, joined with what was scored.

A report works on a *selection* of a :class:`~physgrade.scoring.store.ScoreStore`: the responses
and raters its filter lets through (:func:`select`, arrays only: no database read). From there
come the scores of one criterion side by side for every rater (what agreement is computed on)
and a *sheet* per rater, with one row per response and the study's per-response measures
(score, final answer correct, fully correct). People's grades are also merged into one *human
consensus* rater, so that a judge can be compared with the experts as a group; where an
adjudicator decided a criterion (:mod:`physgrade.team.adjudication`), the decision is the
consensus.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from physgrade.project import Project
from physgrade.raters import CONSENSUS_KIND, HUMAN, HUMAN_CONSENSUS
from physgrade.rubric import FINAL_ANSWER, GRADED_RUBRICS, Rubric
from physgrade.scoring.store import KEY_AT, KEYS, MISSING, NA, ScoreStore, consensus
from physgrade.selection import NONE, RESPONSE_FACETS, ResponseFilter, shown
from physgrade.tasks import Task

#: Every criterion of those rubrics, in rubric order, each once.
SHEET_CRITERIA = tuple(dict.fromkeys(key for rubric in GRADED_RUBRICS for key in rubric.keys))


@dataclass(frozen=True, eq=False)
class ScoreData:
    """The scores a report covers.

    ``responses``: one row per response, indexed by response id, with question_id, model,
    topic, kind, bloom_cognitive, bloom_knowledge, compliant, multiple_choice, variant_of,
    region. ``lengths``: their lengths in characters. ``judges`` and ``graders``: the raters
    with a score among them (labels, sorted); ``kinds``: every rater's kind, the consensus's
    :data:`~physgrade.raters.CONSENSUS_KIND`. ``ids``: the responses in id order, the rows of ``codes``
    (criterion of :data:`~physgrade.scoring.store.KEYS` × response × rater of ``columns``: the
    value, :data:`~physgrade.scoring.store.NA` or :data:`~physgrade.scoring.store.MISSING`).
    ``adjudicated``: how many of the consensus values are an adjudicator's decisions.

    Each rater's :func:`sheet` is made once, on first use.
    """

    responses: pd.DataFrame
    lengths: pd.Series
    judges: list[str]
    graders: list[str]
    kinds: dict[str, str]
    ids: pd.Index
    columns: list[str]
    codes: np.ndarray
    adjudicated: int = 0
    #: rater -> :func:`sheet`, filled as sections ask for them
    _sheets: dict[str, pd.DataFrame] = dataclasses.field(default_factory=dict, init=False,
                                                         repr=False, compare=False)

    def raters(self) -> list[str]:
        """The judges, the people, and the consensus if there is one, in report order."""
        has_consensus = self.consensus_values() > 0
        return self.judges + self.graders + ([HUMAN_CONSENSUS] if has_consensus else [])

    def consensus_values(self) -> int:
        """How many criterion values the human consensus holds."""
        return int((self.codes[:, :, self.columns.index(HUMAN_CONSENSUS)] != MISSING).sum())

    def consensus_stands_apart(self) -> bool:
        """Whether the consensus can differ from every grader, and so is a reference of its
        own: several people graded, or an adjudicator decided."""
        return len(self.graders) > 1 or self.adjudicated > 0

    @cached_property
    def criteria(self) -> list[tuple[str, str]]:
        """The (rubric, criterion) pairs somebody scored here, in rubric order."""
        scored = (self.codes != MISSING).any(axis=(1, 2))
        return [key for key, found in zip(KEYS, scored) if found]

    def rows(self, rater: str) -> pd.DataFrame:
        """``rater``'s scores one per row (response_id, rubric, criterion, value; NaN for N/A),
        by criterion in rubric order, then by response: for reading a few scores out."""
        if rater not in self.columns:
            return pd.DataFrame(columns=["response_id", "rubric", "criterion", "value"])
        codes = self.codes[:, :, self.columns.index(rater)]
        at_key, at_response = np.nonzero(codes != MISSING)
        return pd.DataFrame({"response_id": self.ids[at_response].to_numpy(),
                             "rubric": [KEYS[k][0] for k in at_key],
                             "criterion": [KEYS[k][1] for k in at_key],
                             "value": _values(codes[at_key, at_response])})

    def rubric_scores(self, rater: str, rubric: Rubric) -> tuple[pd.DataFrame, pd.DataFrame]:
        """``rater``'s scores with ``rubric``: a row per response it scored on any of the
        rubric's criteria (in id order), a column per criterion; the values (NaN for N/A or
        none), and whether each was given (N/A counts)."""
        keys = [KEY_AT[rubric.key, key] for key in rubric.keys]
        if rater not in self.columns:
            given = np.zeros((0, len(keys)), dtype=bool)
            values = np.empty((0, len(keys)))
            ids = self.ids[:0]
        else:
            codes = self.codes[keys, :, self.columns.index(rater)].T
            scored = (codes != MISSING).any(axis=1)
            codes, ids = codes[scored], self.ids[scored]
            given, values = codes != MISSING, _values(codes)
        return (pd.DataFrame(values, index=ids, columns=list(rubric.keys)),
                pd.DataFrame(given, index=ids, columns=list(rubric.keys)))


def load(project: Project, report_filter: ResponseFilter = ResponseFilter(),
         task: Task | None = None) -> ScoreData:
    """Every score of the responses and raters the filter lets through, and the consensus
    (reads the whole project: several selections of one store read it once)."""
    return select(ScoreStore.read(project, task), report_filter)


def select(store: ScoreStore, report_filter: ResponseFilter = ResponseFilter()) -> ScoreData:
    """The responses and raters of ``store`` that the filter lets through, and the people's
    consensus among them: an adjudicator's decision where there is one, else the majority
    (:func:`~physgrade.scoring.store.consensus`). Adjudicators' decisions on the responses
    covered stand whichever graders the filter lets through: a decision is the people's final
    value, even where nobody scored the criterion."""
    responses = store.responses
    keep = np.ones(len(responses), dtype=bool)
    for facet in RESPONSE_FACETS:
        wanted = getattr(report_filter, facet.key)
        if wanted:
            keep &= responses[facet.attribute].isin(wanted).to_numpy()
    for name, values in report_filter.fields:  # declared facets: a missing value is NONE's
        if name not in responses:
            raise ValueError(f"{name!r} is not a declared facet of this project")
        keep &= responses[name].fillna(NONE).map(shown).isin(values).to_numpy()
    raters = store.raters
    people = (raters["kind"] == HUMAN).to_numpy()
    wanted_raters = np.ones(len(raters), dtype=bool)
    if report_filter.graders:
        wanted_raters &= ~people | raters["label"].isin(report_filter.graders).to_numpy()
    if report_filter.judges:
        wanted_raters &= people | raters["label"].isin(report_filter.judges).to_numpy()
    rows = store.by_id[keep[store.by_id]]  # in id order: the order report tables list them
    codes = store.codes[:, rows][:, :, wanted_raters]
    chosen = raters[wanted_raters]
    present = (codes != MISSING).any(axis=(0, 1))
    codes, chosen = codes[:, :, present], chosen[present]
    agreed = consensus(codes[:, :, (chosen["kind"] == HUMAN).to_numpy()])
    decisions = store.decisions
    at = pd.Series(np.arange(len(rows)), index=rows)
    decided = decisions[decisions["response"].isin(rows)]
    known = decided[decided["key"] >= 0]
    decided_values = known["value"].to_numpy()
    agreed[known["key"].to_numpy(), at[known["response"]].to_numpy()] = np.where(
        np.isnan(decided_values), NA, decided_values).astype(np.int8)
    codes = np.concatenate([codes, agreed[:, :, None]], axis=2)
    labels = [*chosen["label"], HUMAN_CONSENSUS]
    kinds = dict(zip(chosen["label"], chosen["kind"])) | {HUMAN_CONSENSUS: CONSENSUS_KIND}
    judges = sorted(label for label, kind in kinds.items() if kind not in (HUMAN, CONSENSUS_KIND))
    graders = sorted(label for label, kind in kinds.items() if kind == HUMAN)
    selected = responses[keep]
    return ScoreData(selected, pd.Series(store.lengths[keep], index=selected.index), judges,
                     graders, kinds, responses.index[rows], labels, codes, len(decided))


def _values(codes: np.ndarray) -> np.ndarray:
    """Codes as numbers: the value, NaN for N/A or no score."""
    return np.where(codes >= 0, codes, np.nan)


def criterion_ratings(data: ScoreData, rubric: str, criterion: str,
                      raters: list[str], complete: bool = False) -> pd.DataFrame:
    """One criterion side by side: a row per response any of ``raters`` scored with a number
    (``complete``: all of them), in id order, a column per rater (in the order given), NaN
    where a rater gave no score or N/A."""
    at = [data.columns.index(rater) if rater in data.columns else -1 for rater in raters]
    if (rubric, criterion) in KEY_AT:
        side = _values(data.codes[KEY_AT[rubric, criterion]][:, at])
    else:
        side = np.full((len(data.ids), len(raters)), np.nan)
    side[:, [i for i, column in enumerate(at) if column < 0]] = np.nan
    missing = np.isnan(side)
    scored = ~(missing.any(axis=1) if complete else missing.all(axis=1))
    return pd.DataFrame(side[scored], index=data.ids[scored], columns=raters)


def final_correct(data: ScoreData, rater: str) -> pd.Series:
    """Whether ``rater`` found each final answer right (ANS at its maximum), wherever it scored
    ANS, whether or not it scored the rest: the rules rater scores ANS alone."""
    return pd.concat([
        criterion_ratings(data, rubric.key, FINAL_ANSWER, [rater])[rater].dropna()
        == rubric.criterion(FINAL_ANSWER).maximum for rubric in GRADED_RUBRICS])


def sheet(data: ScoreData, rater: str) -> pd.DataFrame:
    """One rater's complete assessments, made once per ``data`` (not to be changed in place):
    a row per response the rater scored on every criterion of its rubric (N/A counts as
    scored), with the response's attributes, the ``rubric``, a column per criterion of
    :data:`SHEET_CRITERIA` (NaN where the rubric has no such criterion or for N/A), and the
    study's measures:

    ``score`` and ``possible`` points (an N/A criterion leaves the maximum), ``score_pct``
    (0..1), ``final_correct`` (ANS at its maximum) and ``fully_correct`` (every scored
    criterion at its maximum).
    """
    if rater not in data._sheets:
        data._sheets[rater] = _sheet(data, rater)
    return data._sheets[rater]


def _sheet(data: ScoreData, rater: str) -> pd.DataFrame:
    parts = []
    for rubric in GRADED_RUBRICS:
        wide, given = data.rubric_scores(rater, rubric)
        wide = wide[given.all(axis=1)]
        maxima = pd.Series({c.key: float(c.maximum) for c in rubric.criteria})
        scored = wide.notna()
        wide["score"] = wide.sum(axis=1, min_count=0)
        wide["possible"] = scored.mul(maxima).sum(axis=1)
        wide["final_correct"] = wide[FINAL_ANSWER] == maxima[FINAL_ANSWER]
        wide["fully_correct"] = (wide[list(rubric.keys)].ge(maxima) | ~scored).all(axis=1)
        wide["rubric"] = rubric.key
        parts.append(wide)
    combined = pd.concat(parts)
    combined = combined.reindex(columns=["rubric", *SHEET_CRITERIA, "score", "possible",
                                         "final_correct", "fully_correct"])
    combined["score_pct"] = combined["score"] / combined["possible"].where(combined["possible"] > 0)
    combined = data.responses.join(combined, how="inner")
    combined.index.name = "response_id"
    return combined
