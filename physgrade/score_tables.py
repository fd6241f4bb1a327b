"""Scores as tables, for reports: who scored what, joined with what was scored.

A report reads every score of the responses it covers once, into pandas, and reshapes from
there: the scores of one criterion side by side for every rater (what agreement is computed
on), and a *sheet* per rater with one row per response and the study's per-response measures
(score, final answer correct, fully correct). People's grades are also merged into one
*human consensus* rater, so that a judge can be compared with the experts as a group; where an
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
from physgrade.report.options import HUMAN_CONSENSUS, ReportFilter, rater_label
from physgrade.rubric import FINAL_ANSWER, GRADED_RUBRICS, RUBRICS
from physgrade.scores import HUMAN
from physgrade.tasks import Task

#: Every criterion of those rubrics, in rubric order, each once.
SHEET_CRITERIA = tuple(dict.fromkeys(key for rubric in GRADED_RUBRICS for key in rubric.keys))
@dataclass(frozen=True)
class ScoreData:
    """The scores a report covers.

    ``responses``: one row per response, indexed by response id, with question_id, model,
    topic, kind, bloom_cognitive, bloom_knowledge, compliant, multiple_choice, variant_of,
    region. ``scores``: one row per score with rater, rater_kind (human, llm, rules or
    consensus), response_id, rubric, criterion and value (NaN for N/A). ``adjudicated``: how
    many of the consensus values are an adjudicator's decisions.

    A report slices the scores by criterion and by rater many times over; both slicings, and
    each rater's :func:`sheet`, are made once, on first use (a real project holds over a million
    scores).
    """

    responses: pd.DataFrame
    scores: pd.DataFrame
    judges: list[str]
    graders: list[str]
    adjudicated: int = 0
    #: rater -> :func:`sheet`, filled as sections ask for them
    _sheets: dict[str, pd.DataFrame] = dataclasses.field(default_factory=dict, init=False,
                                                         repr=False, compare=False)

    def raters(self) -> list[str]:
        """The judges, the people, and the consensus if there is one, in report order."""
        has_consensus = HUMAN_CONSENSUS in self.by_rater
        return self.judges + self.graders + ([HUMAN_CONSENSUS] if has_consensus else [])

    def consensus_values(self) -> int:
        """How many criterion values the human consensus holds."""
        return len(self.by_rater.get(HUMAN_CONSENSUS, ()))

    def consensus_stands_apart(self) -> bool:
        """Whether the consensus can differ from every grader, and so is a reference of its
        own: several people graded, or an adjudicator decided."""
        return len(self.graders) > 1 or self.adjudicated > 0

    @cached_property
    def by_criterion(self) -> dict[tuple[str, str], pd.DataFrame]:
        """(rubric, criterion) → the criterion's scores, a row per response, a column per rater."""
        return {(str(rubric), str(criterion)): rows.pivot(index="response_id", columns="rater",
                                                           values="value")
                for (rubric, criterion), rows in self.scores.groupby(["rubric", "criterion"],
                                                                     observed=True)}

    @cached_property
    def by_rater(self) -> dict[str, pd.DataFrame]:
        """rater → that rater's scores."""
        return {str(rater): rows for rater, rows in self.scores.groupby("rater", observed=True)}


def load(project: Project, report_filter: ReportFilter = ReportFilter(),
         task: Task | None = None) -> ScoreData:
    """Every score of the responses and raters the filter lets through, and the consensus.

    Adjudicators' decisions on the responses covered stand whichever graders the filter lets
    through: a decision is the people's final value.
    """
    task = task or Task()
    task.report(0, None, "reading responses")
    responses = pd.read_sql_query(
        "SELECT r.id AS response_id, r.question_id, r.model, q.topic, q.kind, q.bloom_cognitive, "
        "q.bloom_knowledge, r.compliant, q.options IS NOT NULL AS multiple_choice, q.variant_of, "
        "q.region FROM responses r JOIN questions q ON q.id = r.question_id",
        project.conn, index_col="response_id")
    responses["compliant"] = responses["compliant"].astype(bool)
    responses["multiple_choice"] = responses["multiple_choice"].astype(bool)
    for field, column in (("models", "model"), ("topics", "topic"), ("kinds", "kind"),
                          ("bloom", "bloom_cognitive")):
        wanted = getattr(report_filter, field)
        if wanted:
            responses = responses[responses[column].isin(wanted)]

    raters = pd.read_sql_query("SELECT id, name, kind, prompt_version FROM raters", project.conn)
    raters["label"] = [rater_label(n, v) for n, v in zip(raters["name"], raters["prompt_version"])]
    people = raters["kind"] == HUMAN
    wanted = pd.Series(True, index=raters.index)
    if report_filter.graders:
        wanted &= ~people | raters["label"].isin(report_filter.graders)
    if report_filter.judges:
        wanted &= people | raters["label"].isin(report_filter.judges)
    raters = raters[wanted]

    task.report(0, None, "reading scores")
    scores = pd.read_sql_query(
        "SELECT rater_id, response_id, rubric, criterion, CAST(value AS REAL) AS value "
        "FROM scores WHERE rubric IN (%s)" % ", ".join("?" * len(RUBRICS)),
        project.conn, params=list(RUBRICS))
    task.check()
    scores = scores[scores["response_id"].isin(responses.index)
                    & scores["rater_id"].isin(raters["id"])]
    by_id = raters.set_index("id")
    scores = pd.DataFrame({
        "rater": by_id["label"].reindex(scores["rater_id"]).to_numpy(),
        "rater_kind": by_id["kind"].reindex(scores["rater_id"]).to_numpy(),
        "response_id": scores["response_id"].to_numpy(), "rubric": scores["rubric"].to_numpy(),
        "criterion": scores["criterion"].to_numpy(), "value": scores["value"].to_numpy()})
    present = set(scores["rater"].unique())
    judges = sorted(label for label, kind in zip(raters["label"], raters["kind"])
                    if kind != HUMAN and label in present)
    graders = sorted(label for label, kind in zip(raters["label"], raters["kind"])
                     if kind == HUMAN and label in present)
    task.report(0, None, "merging people's grades")
    decided = pd.read_sql_query(
        "SELECT response_id, rubric, criterion, CAST(value AS REAL) AS value "
        "FROM score_adjudications", project.conn)
    decided = decided[decided["response_id"].isin(responses.index)]
    scores = pd.concat([scores, consensus(scores[scores["rater_kind"] == HUMAN], decided)],
                       ignore_index=True)
    # Few distinct values in a million rows: categories make every comparison cheap.
    for column in ("rater", "rater_kind", "rubric", "criterion"):
        scores[column] = scores[column].astype("category")
    return ScoreData(responses, scores, judges, graders, len(decided))


#: Stands for N/A while counting votes (NaN never equals itself).
_NA_VOTE = -1.0


def consensus(human: pd.DataFrame, decided: pd.DataFrame | None = None) -> pd.DataFrame:
    """The people's agreed value of each criterion of each response: an adjudicator's decision
    where there is one (``decided``: response_id, rubric, criterion, value), else the value
    more than half of the people who scored it gave (N/A counts as a value). One grader's score
    stands as it is; criteria without a majority (two graders who differ) and without a
    decision are left out, not averaged. A decision stands even where nobody scored the
    criterion: it is the people's final value."""
    keys = ["response_id", "rubric", "criterion"]
    if human.empty:
        agreed = pd.DataFrame(columns=[*keys, "value"])
    else:
        votes = (human.assign(vote=human["value"].fillna(_NA_VOTE))
                 .groupby(keys + ["vote"]).size().rename("count").reset_index())
        totals = votes.groupby(keys)["count"].transform("sum")
        agreed = votes[votes["count"] * 2 > totals].rename(columns={"vote": "value"})
        agreed = agreed.assign(value=agreed["value"].replace(_NA_VOTE, np.nan))
    if decided is not None and not decided.empty:
        overruled = pd.MultiIndex.from_frame(agreed[keys]).isin(
            pd.MultiIndex.from_frame(decided[keys]))
        agreed = pd.concat([agreed[~overruled], decided], ignore_index=True)
    return pd.DataFrame({
        "rater": HUMAN_CONSENSUS, "rater_kind": "consensus",
        "response_id": agreed["response_id"].to_numpy(), "rubric": agreed["rubric"].to_numpy(),
        "criterion": agreed["criterion"].to_numpy(),
        "value": agreed["value"].to_numpy(dtype=float)})


def criterion_ratings(data: ScoreData, rubric: str, criterion: str,
                      raters: list[str]) -> pd.DataFrame:
    """One criterion side by side: a row per response any of ``raters`` scored, a column per
    rater (in the order given), NaN where a rater gave no score or N/A."""
    wide = data.by_criterion.get((rubric, criterion), pd.DataFrame())
    return wide.reindex(columns=raters).dropna(how="all")


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
    mine = data.by_rater.get(rater, data.scores.iloc[:0])
    parts = []
    for rubric in GRADED_RUBRICS:
        rows = mine[mine["rubric"] == rubric.key]
        wide = rows.pivot(index="response_id", columns="criterion", values="value")
        given = rows.groupby("response_id").size()
        wide = wide[given.reindex(wide.index).to_numpy() == len(rubric.keys)]
        wide = wide.reindex(columns=list(rubric.keys))
        maxima = pd.Series({c.key: float(c.maximum) for c in rubric.criteria})
        scored = wide.notna()
        wide["score"] = wide.sum(axis=1, min_count=0)
        wide["possible"] = scored.mul(maxima).sum(axis=1)
        wide["final_correct"] = wide[FINAL_ANSWER] == maxima[FINAL_ANSWER]
        wide["fully_correct"] = (wide[list(rubric.keys)].ge(maxima) | ~scored).all(axis=1)
        wide["rubric"] = rubric.key
        parts.append(wide)
    combined = pd.concat(parts) if parts else pd.DataFrame()
    combined = combined.reindex(columns=["rubric", *SHEET_CRITERIA, "score", "possible",
                                         "final_correct", "fully_correct"])
    combined["score_pct"] = combined["score"] / combined["possible"].where(combined["possible"] > 0)
    combined = data.responses.join(combined, how="inner")
    combined.index.name = "response_id"
    return combined
