"""Scores read as tables: filters, the human consensus, and each rater's sheet."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from conftest import PREFS_FULL, write_jsonl
from physgrade import score_tables
from physgrade.importer import import_file
from physgrade.project import Project
from physgrade.scores import set_score
from physgrade.report.options import HUMAN_CONSENSUS, ReportFilter


def votes(*rows: tuple[str, str, float | None]) -> pd.DataFrame:
    """Human score rows (grader, response, value) of criterion INT."""
    return pd.DataFrame([{"rater": g, "rater_kind": "human", "response_id": r, "rubric": "prefs",
                          "criterion": "INT", "value": math.nan if v is None else v}
                         for g, r, v in rows])


def agreed(frame: pd.DataFrame) -> dict[str, float | None]:
    return {r: (None if math.isnan(v) else v)
            for r, v in zip(frame["response_id"], frame["value"])}


def test_consensus_is_the_majority_and_leaves_ties_out() -> None:
    merged = score_tables.consensus(votes(
        ("a", "r-1", 1), ("b", "r-1", 1),                    # agree
        ("a", "r-2", 1), ("b", "r-2", 0),                    # tie: no consensus
        ("a", "r-3", 0),                                     # one grader stands
        ("a", "r-4", 0), ("b", "r-4", 1), ("c", "r-4", 0),   # two of three
        ("a", "r-5", None), ("b", "r-5", None), ("c", "r-5", 1)))  # N/A is a value too
    assert agreed(merged) == {"r-1": 1, "r-3": 0, "r-4": 0, "r-5": None}
    assert set(merged["rater"]) == {HUMAN_CONSENSUS}
    assert set(merged["rater_kind"]) == {"consensus"}


def test_consensus_of_nobody_is_empty() -> None:
    assert score_tables.consensus(votes()).empty


@pytest.fixture
def scored(loaded: Project, tmp_path: Path) -> Project:
    """r-1 (problem) graded by two people who differ on CAL and by a judge; r-2 graded
    incompletely; r-3 (conceptual, multiple choice) with EXE N/A."""
    import_file(loaded, write_jsonl(tmp_path / "g.jsonl", [
        {"response_id": "r-1", "grader": "ann", "scores": PREFS_FULL},
        {"response_id": "r-1", "grader": "bob", "scores": {**PREFS_FULL, "CAL": 0}},
        {"response_id": "r-3", "grader": "ann",
         "scores": {"SET": 1, "CON": 1, "EXE": None, "COH": 1, "ANS": 1}}]), "grades")
    import_file(loaded, write_jsonl(tmp_path / "v.jsonl", [
        {"response_id": "r-1", "judge": "arb", "prompt_version": "v2",
         "scores": {**PREFS_FULL, "ANS": 0}}]), "verdicts")
    set_score(loaded, "bob", "r-2", "INT", 1)
    return loaded


def test_load_names_raters_and_merges_people(scored: Project) -> None:
    data = score_tables.load(scored)
    assert data.judges == ["arb [v2]"]
    assert data.graders == ["ann", "bob"]
    assert data.raters() == ["arb [v2]", "ann", "bob", HUMAN_CONSENSUS]
    merged = data.scores[data.scores["rater"] == HUMAN_CONSENSUS]
    on_r1 = merged[merged["response_id"] == "r-1"]
    assert set(on_r1["criterion"]) == set(PREFS_FULL) - {"CAL"}  # the two differ on CAL


def test_criterion_ratings_side_by_side(scored: Project) -> None:
    data = score_tables.load(scored)
    wide = score_tables.criterion_ratings(data, "prefs", "CAL", ["ann", "bob", "arb [v2]"])
    assert list(wide.columns) == ["ann", "bob", "arb [v2]"]
    assert wide.loc["r-1"].tolist() == [1.0, 0.0, 1.0]


def test_sheet_holds_complete_assessments_with_the_studys_measures(scored: Project) -> None:
    data = score_tables.load(scored)
    ann = score_tables.sheet(data, "ann")
    assert sorted(ann.index) == ["r-1", "r-3"]
    problem, conceptual = ann.loc["r-1"], ann.loc["r-3"]
    assert (problem["score"], problem["possible"], problem["score_pct"]) == (10, 10, 1.0)
    assert problem["final_correct"] and problem["fully_correct"]
    # EXE N/A: out of 4, not 5, and still fully correct.
    assert (conceptual["score"], conceptual["possible"]) == (4, 4)
    assert conceptual["fully_correct"] and conceptual["multiple_choice"]
    assert math.isnan(conceptual["EXE"])
    bob = score_tables.sheet(data, "bob")
    assert list(bob.index) == ["r-1"]  # r-2 has one criterion only: not a complete grade
    assert not bob.loc["r-1", "fully_correct"] and bob.loc["r-1", "final_correct"]
    judge = score_tables.sheet(data, "arb [v2]")
    assert not judge.loc["r-1", "final_correct"] and judge.loc["r-1", "score"] == 8
    consensus = score_tables.sheet(data, HUMAN_CONSENSUS)
    assert list(consensus.index) == ["r-3"]  # no consensus on r-1's CAL: incomplete


def test_filters_narrow_responses_and_raters(scored: Project) -> None:
    by_model = score_tables.load(scored, ReportFilter(models=frozenset({"quark-lm-3"})))
    assert list(by_model.responses.index) == ["r-2"]
    assert set(by_model.scores["response_id"]) == {"r-2"}
    by_kind = score_tables.load(scored, ReportFilter(kinds=frozenset({"conceptual"})))
    assert list(by_kind.responses.index) == ["r-3"]
    people = score_tables.load(scored, ReportFilter(graders=frozenset({"ann"}),
                                                    judges=frozenset({"nobody"})))
    assert people.judges == [] and people.graders == ["ann"]


def test_filter_terms_are_parsed_and_bad_ones_named() -> None:
    parsed = ReportFilter.parse(["model=a,b", "models=c", "bloom=Apply", "judge=x [v1]"])
    assert parsed == ReportFilter(models=frozenset("abc"), bloom=frozenset({"Apply"}),
                                  judges=frozenset({"x [v1]"}))
    assert parsed.describe() == {"models": ["a", "b", "c"], "bloom": ["Apply"],
                                 "judges": ["x [v1]"]}
    for bad in ("colour=red", "model", "model="):
        with pytest.raises(ValueError, match="FIELD=VALUE"):
            ReportFilter.parse([bad])


def test_a_project_without_scores_gives_empty_tables(loaded: Project) -> None:
    data = score_tables.load(loaded)
    assert data.raters() == [] and data.scores.empty
    assert score_tables.sheet(data, "anyone").empty



def test_a_decision_is_the_consensus() -> None:
    decided = pd.DataFrame({"response_id": ["r-1", "r-2", "r-3"], "rubric": "prefs",
                            "criterion": "INT", "value": [0.0, math.nan, 1.0]})
    merged = score_tables.consensus(votes(
        ("a", "r-1", 1), ("b", "r-1", 0),                  # a tie, decided 0
        ("a", "r-2", 1), ("b", "r-2", 1), ("c", "r-2", 0),  # a majority, overruled by N/A
        ("a", "r-4", 1)), decided)                         # r-3: decided, nobody scored
    assert agreed(merged) == {"r-1": 0, "r-2": None, "r-3": 1, "r-4": 1}
    assert len(merged) == 4 and set(merged["rater"]) == {HUMAN_CONSENSUS}
    assert agreed(score_tables.consensus(votes(), decided)) == {"r-1": 0, "r-2": None, "r-3": 1}
