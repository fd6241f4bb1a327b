"""Scores read as tables: filters, the human consensus, and each rater's sheet."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from conftest import PREFS_FULL, write_jsonl
from physgrade.importer import import_file
from physgrade.project import Project
from physgrade.raters import HUMAN_CONSENSUS
from physgrade.rubric import CONCEPTUAL, PREFS
from physgrade.scores import set_score
from physgrade.scoring import tables as score_tables
from physgrade.scoring.store import MISSING, NA, consensus
from physgrade.selection import ResponseFilter
from physgrade.team.adjudication import clear_decision, set_decision

CONCEPTUAL_FULL = {"SET": 1, "CON": 1, "EXE": 1, "COH": 1, "ANS": 1}


def test_consensus_is_the_majority_and_leaves_ties_out() -> None:
    people = np.array([          # a row per criterion value, a column per person
        [1, 1, MISSING],         # agree
        [1, 0, MISSING],         # tie: no consensus
        [0, MISSING, MISSING],   # one grader stands
        [0, 1, 0],               # two of three
        [NA, NA, 1],             # N/A is a value too
        [1, 0, NA],              # three values, none of them a majority
        [2, 2, 2],               # all three agree
    ], dtype=np.int8)
    agreed = consensus(people)
    assert agreed.dtype == np.int8
    assert agreed.tolist() == [1, MISSING, 0, 0, NA, MISSING, 2]
    # Criterion × response × person: the people's axis is the last, and their order is no matter.
    assert consensus(np.stack([people, people[:, ::-1]])).tolist() == [agreed.tolist()] * 2
    four = np.array([[1, 1, 0, 0], [2, 2, 2, 0], [NA, NA, 1, MISSING]], dtype=np.int8)
    assert consensus(four).tolist() == [MISSING, 2, NA]  # half is no majority


def test_consensus_of_nobody_is_nothing() -> None:
    assert consensus(np.full((2, 3, 0), MISSING, dtype=np.int8)).tolist() == [[MISSING] * 3] * 2
    assert consensus(np.full((4, 2), MISSING, dtype=np.int8)).tolist() == [MISSING] * 4


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
    assert data.kinds == {"arb [v2]": "llm", "ann": "human", "bob": "human",
                          HUMAN_CONSENSUS: "consensus"}
    values, given = data.rubric_scores(HUMAN_CONSENSUS, PREFS)
    on_r1 = {c for c in PREFS.keys if given.loc["r-1", c]}
    assert on_r1 == set(PREFS_FULL) - {"CAL"}  # the two differ on CAL
    assert {c: values.loc["r-1", c] for c in on_r1} == {c: PREFS_FULL[c] for c in on_r1}
    assert values.loc["r-2", "INT"] == 1 and given.loc["r-2"].sum() == 1  # one grader stands
    # 7 agreed on r-1, bob's INT on r-2, ann's five (EXE N/A) on r-3
    assert data.consensus_values() == 7 + 1 + 5 and data.adjudicated == 0


def test_criterion_ratings_side_by_side(scored: Project) -> None:
    data = score_tables.load(scored)
    wide = score_tables.criterion_ratings(data, "prefs", "CAL", ["ann", "bob", "arb [v2]"])
    assert list(wide.columns) == ["ann", "bob", "arb [v2]"]
    assert wide.loc["r-1"].tolist() == [1.0, 0.0, 1.0]
    assert list(wide.index) == ["r-1"]  # nobody else scored CAL
    intake = score_tables.criterion_ratings(data, "prefs", "INT", ["ann", "bob"])
    assert list(intake.index) == ["r-1", "r-2"]
    assert intake.loc["r-2", "bob"] == 1 and math.isnan(intake.loc["r-2", "ann"])
    assert ("prefs", "CAL") in data.criteria and ("coarse", "VERDICT") not in data.criteria


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
    agreed = score_tables.sheet(data, HUMAN_CONSENSUS)
    assert list(agreed.index) == ["r-3"]  # no consensus on r-1's CAL: incomplete


def test_filters_narrow_responses_and_raters(scored: Project) -> None:
    by_model = score_tables.load(scored, ResponseFilter(models=frozenset({"quark-lm-3"})))
    assert list(by_model.responses.index) == ["r-2"] and list(by_model.ids) == ["r-2"]
    assert by_model.criteria == [("prefs", "INT")]  # bob's one score on r-2
    assert (by_model.judges, by_model.graders) == ([], ["bob"])  # only bob scored r-2
    by_kind = score_tables.load(scored, ResponseFilter(kinds=frozenset({"conceptual"})))
    assert list(by_kind.responses.index) == ["r-3"]
    people = score_tables.load(scored, ResponseFilter(graders=frozenset({"ann"}),
                                                    judges=frozenset({"nobody"})))
    assert people.judges == [] and people.graders == ["ann"]
    assert people.columns == ["ann", HUMAN_CONSENSUS]
    # ann alone: her CAL on r-1 is the consensus now that bob is left out
    assert score_tables.criterion_ratings(people, "prefs", "CAL", [HUMAN_CONSENSUS]).loc[
        "r-1", HUMAN_CONSENSUS] == 1


def test_filter_terms_are_parsed_and_bad_ones_named() -> None:
    parsed = ResponseFilter.parse(["model=a,b", "models=c", "bloom=Apply", "judge=x [v1]"])
    assert parsed == ResponseFilter(models=frozenset("abc"), bloom=frozenset({"Apply"}),
                                  judges=frozenset({"x [v1]"}))
    assert parsed.describe() == {"models": ["a", "b", "c"], "bloom": ["Apply"],
                                 "judges": ["x [v1]"]}
    for bad in ("colour=red", "model", "model="):
        with pytest.raises(ValueError, match="FIELD=VALUE"):
            ResponseFilter.parse([bad])


def test_a_project_without_scores_gives_empty_tables(loaded: Project) -> None:
    data = score_tables.load(loaded)
    assert data.raters() == [] and data.criteria == []
    assert list(data.ids) == ["r-1", "r-2", "r-3"] and data.consensus_values() == 0
    assert score_tables.sheet(data, "anyone").empty


@pytest.fixture
def decided(scored: Project, tmp_path: Path) -> Project:
    """``scored`` with bob and cat giving r-3's EXE 1 (a majority over ann's N/A), and an
    adjudicator's decisions: r-1's CAL 0 (settles the tie), r-3's EXE N/A (overrules the
    majority) and r-2's ANS 2 (which nobody scored)."""
    import_file(scored, write_jsonl(tmp_path / "more.jsonl", [
        {"response_id": "r-3", "grader": grader, "scores": CONCEPTUAL_FULL}
        for grader in ("bob", "cat")]), "grades")
    set_decision(scored, "dora", "r-1", "CAL", 0)
    set_decision(scored, "dora", "r-3", "EXE", None)
    set_decision(scored, "dora", "r-2", "ANS", 2)
    return scored


def agreed_on(project: Project, rubric: str, criterion: str,
              report_filter: ResponseFilter = ResponseFilter()) -> dict[str, float]:
    """The consensus value of one criterion by response, as a report reads it."""
    data = score_tables.load(project, report_filter)
    wide = score_tables.criterion_ratings(data, rubric, criterion, [HUMAN_CONSENSUS])
    return wide[HUMAN_CONSENSUS].to_dict()


def test_a_decision_is_the_consensus(decided: Project) -> None:
    assert agreed_on(decided, "prefs", "CAL") == {"r-1": 0}          # a tie, decided
    assert agreed_on(decided, "prefs", "ANS") == {"r-1": 2, "r-2": 2}  # r-2: nobody scored
    data = score_tables.load(decided)
    values, given = data.rubric_scores(HUMAN_CONSENSUS, CONCEPTUAL)
    assert given.loc["r-3", "EXE"] and math.isnan(values.loc["r-3", "EXE"])  # N/A over 1 and 1
    assert data.adjudicated == 3
    # 8 on r-1 (CAL decided), INT and the decided ANS on r-2, 5 on r-3
    assert data.consensus_values() == 8 + 2 + 5
    # The graders' own scores are what they gave.
    graders = score_tables.criterion_ratings(data, "conceptual", "EXE", ["ann", "bob", "cat"])
    assert math.isnan(graders.loc["r-3", "ann"])
    assert (graders.loc["r-3", "bob"], graders.loc["r-3", "cat"]) == (1, 1)
    clear_decision(decided, "r-3", "EXE")
    assert agreed_on(decided, "conceptual", "EXE") == {"r-3": 1}  # the majority stands again


def test_without_decisions_ties_stay_out_and_majorities_stand(scored: Project,
                                                               tmp_path: Path) -> None:
    import_file(scored, write_jsonl(tmp_path / "more.jsonl", [
        {"response_id": "r-3", "grader": grader, "scores": CONCEPTUAL_FULL}
        for grader in ("bob", "cat")]), "grades")
    assert agreed_on(scored, "prefs", "CAL") == {}
    assert agreed_on(scored, "conceptual", "EXE") == {"r-3": 1}
    assert score_tables.load(scored).adjudicated == 0


def test_a_decision_stands_whichever_graders_are_let_through(decided: Project) -> None:
    nobody = score_tables.load(decided, ResponseFilter(graders=frozenset({"nobody"})))
    assert nobody.graders == [] and nobody.raters() == ["arb [v2]", HUMAN_CONSENSUS]
    assert nobody.consensus_values() == 3 and nobody.adjudicated == 3
    assert nobody.consensus_stands_apart()
    assert agreed_on(decided, "prefs", "ANS", ResponseFilter(graders=frozenset({"nobody"}))) == {
        "r-2": 2}
    # Decisions on responses a filter leaves out are not the report's.
    by_model = score_tables.load(decided, ResponseFilter(models=frozenset({"quark-lm-3"})))
    assert by_model.adjudicated == 1 and by_model.consensus_values() == 2
