"""Adjudication: disputes between people, an adjudicator's decisions, and the consensus reports
use (physgrade.team.adjudication, physgrade.scoring.tables, physgrade.report)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from conftest import PREFS_FULL, response, write_jsonl
from physgrade.changes import NOTHING, Changes, RecordKind
from physgrade.cli import main
from physgrade.importer import import_file
from physgrade.project import Project, ProjectError
from physgrade.raters import HUMAN_CONSENSUS
from physgrade.report.build import build_report
from physgrade.report.options import ReportOptions
from physgrade.report.writers import HTML_NAME, JSON_NAME, write_report
from physgrade.rubric import ScoreError
from physgrade.scores import set_score
from physgrade.scoring import tables as score_tables
from physgrade.selection import ResponseFilter
from physgrade.team.adjudication import Decision, clear_decision, decisions, disputes, scorings, set_decision

CONCEPTUAL_FULL = {"SET": 1, "CON": 1, "EXE": 1, "COH": 1, "ANS": 1}


def grade(project: Project, folder: Path, *records: tuple[str, str, dict]) -> None:
    """Import people's grades: (response, grader, scores)."""
    import_file(project, write_jsonl(folder / "grades.jsonl", [
        {"response_id": rid, "grader": grader, "scores": scores}
        for rid, grader, scores in records]), "grades")


@pytest.fixture
def team(loaded: Project, tmp_path: Path) -> Project:
    """Two people, ann and bob, and a judge:

    - r-1 (problem): CAL 1 against 0, COR 2 against 0; the judge disagrees with both on INT;
    - r-2 (problem): both agree on everything;
    - r-3 (conceptual, multiple choice): EXE N/A against 1;
    - r-4 (conceptual, multiple choice): EXE N/A against N/A.
    """
    import_file(loaded, write_jsonl(tmp_path / "more.jsonl", [
        response("r-4", "q-mc", model="helix-2", text="C")]), "responses")
    grade(loaded, tmp_path,
          ("r-1", "ann", PREFS_FULL), ("r-1", "bob", {**PREFS_FULL, "CAL": 0, "COR": 0}),
          ("r-2", "ann", PREFS_FULL), ("r-2", "bob", PREFS_FULL),
          ("r-3", "ann", {**CONCEPTUAL_FULL, "EXE": None}), ("r-3", "bob", CONCEPTUAL_FULL),
          ("r-4", "ann", {**CONCEPTUAL_FULL, "EXE": None}),
          ("r-4", "bob", {**CONCEPTUAL_FULL, "EXE": None}))
    import_file(loaded, write_jsonl(tmp_path / "verdicts.jsonl", [
        {"response_id": rid, "judge": "arb", "prompt_version": "v1",
         "scores": {**PREFS_FULL, "INT": 0}} for rid in ("r-1", "r-2")]), "verdicts")
    return loaded


def history(project: Project) -> list[tuple]:
    return project.conn.execute(
        "SELECT response_id, criterion, action, old_value, new_value, adjudicator "
        "FROM adjudication_history ORDER BY id").fetchall()


# -- disputes ------------------------------------------------------------------------------------


def test_disputes_find_differences_of_at_least_the_amount_asked(team: Project) -> None:
    found = disputes(team)
    assert [(d.response_id, d.disputed) for d in found] == [
        ("r-1", ("CAL", "COR")),   # q-1 before q-mc; the judge's INT is no dispute
        ("r-3", ("EXE",))]         # N/A against a number; r-4's N/A against N/A is none
    first = found[0]
    assert (first.question_id, first.model, first.topic, first.rubric) == (
        "q-1", "orbit-7b", "Mechanics", "prefs")
    assert first.graders == ("ann", "bob") and first.decided == () and not first.settled
    assert [(d.response_id, d.disputed) for d in disputes(team, min_difference=2)] == [
        ("r-1", ("COR",)), ("r-3", ("EXE",))]  # N/A against a number counts at any amount
    assert [d.response_id for d in disputes(team, min_difference=3)] == ["r-3"]


def test_people_who_agree_have_no_dispute(loaded: Project, tmp_path: Path) -> None:
    grade(loaded, tmp_path, ("r-1", "ann", PREFS_FULL), ("r-1", "bob", PREFS_FULL),
          ("r-2", "ann", {**PREFS_FULL, "ANS": 0}))  # one grader alone disputes nothing
    assert disputes(loaded) == []


def test_a_minimum_difference_below_one_is_refused(team: Project) -> None:
    for bad in (0, -1):
        with pytest.raises(ValueError, match="at least 1"):
            disputes(team, bad)


def test_disputes_on_the_demo_match_the_file(demo: Path) -> None:
    with sqlite3.connect(demo) as conn:
        pairs = conn.execute(
            "SELECT a.response_id, a.criterion, a.value, b.value FROM scores a JOIN scores b "
            "ON b.response_id = a.response_id AND b.rubric = a.rubric "
            "AND b.criterion = a.criterion AND b.rater_id > a.rater_id "
            "JOIN raters ra ON ra.id = a.rater_id JOIN raters rb ON rb.id = b.rater_id "
            "WHERE ra.kind = 'human' AND rb.kind = 'human'").fetchall()
    assert len({rid for rid, *_ in pairs}) > 10  # the demo's people overlap

    def expected(amount: int) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        for rid, criterion, a, b in pairs:
            if (a is None) != (b is None) or (a is not None and abs(a - b) >= amount):
                found.setdefault(rid, set()).add(criterion)
        return found

    with Project.open(demo) as project:
        for amount in (1, 2):
            got = disputes(project, amount)
            assert {d.response_id: set(d.disputed) for d in got} == expected(amount)
            assert all(d.graders == ("expert-1", "expert-2") for d in got)
        assert expected(1)  # the demo's people do differ somewhere
        order = [(d.question_id, d.model, d.response_id) for d in disputes(project)]
        assert order == sorted(order)


# -- what the adjudicator reads ------------------------------------------------------------------


def test_scorings_are_each_persons_values_notes_and_comment(team: Project) -> None:
    set_score(team, "bob", "r-1", "CAL", 0, note="4 + 5 written as 8")
    team.conn.execute("UPDATE assessments SET comment = 'careless' WHERE response_id = 'r-1' "
                      "AND rater_id = (SELECT id FROM raters WHERE name = 'bob')")
    ann, bob = scorings(team, "r-1")
    assert (ann.grader, ann.values, ann.notes, ann.comment) == ("ann", PREFS_FULL, {}, None)
    assert bob.grader == "bob" and list(bob.values) == list(PREFS_FULL)  # rubric order
    assert bob.values == {**PREFS_FULL, "CAL": 0, "COR": 0}
    assert bob.notes == {"CAL": "4 + 5 written as 8"} and bob.comment == "careless"
    assert scorings(team, "r-3")[0].values["EXE"] is None
    with pytest.raises(ProjectError, match="no response 'r-9'"):
        scorings(team, "r-9")


# -- decisions -----------------------------------------------------------------------------------


def test_set_change_and_clear_a_decision_keep_history(team: Project) -> None:
    made = set_decision(team, "dora", "r-1", "CAL", 1, note="the slip is in the last line")
    assert made == Changes.of(RecordKind.ADJUDICATIONS, responses=["r-1"], questions=["q-1"])
    decided = decisions(team, "r-1")["CAL"]
    assert (decided.value, decided.adjudicator, decided.note) == (
        1, "dora", "the slip is in the last line")
    assert team.conn.execute("SELECT count(*) FROM raters WHERE name = 'dora'").fetchone() == (0,)
    dispute = disputes(team)[0]
    assert dispute.decided == ("CAL",) and not dispute.settled

    set_decision(team, "eve", "r-1", "CAL", 0)            # changed; no note given keeps it
    assert decisions(team, "r-1")["CAL"].note == "the slip is in the last line"
    set_decision(team, "eve", "r-1", "COR", 1, note="")
    assert disputes(team)[0].settled
    set_decision(team, "eve", "r-1", "COR", 1, note="")   # the same value: no history row
    set_decision(team, "eve", "r-3", "EXE", None)         # N/A where the rubric allows it
    na = decisions(team, "r-3")["EXE"]
    assert na == Decision(None, "eve", None, na.decided_at) and na.decided_at.endswith("Z")

    assert clear_decision(team, "r-1", "CAL") == made
    assert clear_decision(team, "r-1", "CAL") is NOTHING
    assert set(decisions(team, "r-1")) == {"COR"}
    assert history(team) == [
        ("r-1", "CAL", "set", None, 1, "dora"), ("r-1", "CAL", "change", 1, 0, "eve"),
        ("r-1", "COR", "set", None, 1, "eve"), ("r-3", "EXE", "set", None, None, "eve"),
        ("r-1", "CAL", "clear", 0, None, "eve")]


@pytest.mark.parametrize("adjudicator, response_id, criterion, value, error", [
    ("dora", "r-1", "INT", 2, ScoreError),      # out of range
    ("dora", "r-1", "ANS", 1.5, ScoreError),    # not a whole number
    ("dora", "r-1", "INT", None, ScoreError),   # N/A where the rubric has none
    ("dora", "r-1", "EXE", 1, ScoreError),      # a criterion of the other rubric
    ("dora", "r-1", "XYZ", 1, ScoreError),      # no such criterion
    ("dora", "r-9", "INT", 1, ProjectError),    # no such response
    ("  ", "r-1", "INT", 1, ProjectError),      # nobody decided
])
def test_refused_decisions_change_nothing(team: Project, adjudicator: str, response_id: str,
                                          criterion: str, value: object, error: type) -> None:
    set_decision(team, "dora", "r-1", "CAL", 1)
    before = (history(team), decisions(team, "r-1"))
    with pytest.raises(error):
        set_decision(team, adjudicator, response_id, criterion, value)
    assert (history(team), decisions(team, "r-1")) == before


def test_clearing_refuses_unknown_criteria_and_responses(team: Project) -> None:
    with pytest.raises(ScoreError, match="XYZ"):
        clear_decision(team, "r-1", "XYZ")
    with pytest.raises(ProjectError, match="r-9"):
        clear_decision(team, "r-9", "INT")


# -- the consensus reports use -------------------------------------------------------------------


def consensus_of(project: Project, report_filter: ResponseFilter = ResponseFilter()
                 ) -> tuple[dict[tuple[str, str], float | None], int]:
    """(response, criterion) -> the consensus value (None: N/A), and how many are adjudicated."""
    data = score_tables.load(project, report_filter)
    rows = data.rows(HUMAN_CONSENSUS)
    values = {(str(r), str(c)): (None if v != v else v)
              for r, c, v in zip(rows["response_id"], rows["criterion"], rows["value"])}
    return values, data.adjudicated


def test_a_decision_settles_a_tie(team: Project) -> None:
    values, adjudicated = consensus_of(team)
    assert ("r-1", "CAL") not in values and adjudicated == 0   # 1 against 0: a tie
    set_decision(team, "dora", "r-1", "CAL", 1)
    values, adjudicated = consensus_of(team)
    assert values[("r-1", "CAL")] == 1 and adjudicated == 1
    assert values[("r-1", "INT")] == 1                          # the agreed rest stands


def test_a_decision_overrules_a_majority(team: Project, tmp_path: Path) -> None:
    grade(team, tmp_path, ("r-2", "cat", {**PREFS_FULL, "ANS": 0}))  # 2, 2 and 0: majority 2
    assert consensus_of(team)[0][("r-2", "ANS")] == 2
    set_decision(team, "dora", "r-2", "ANS", 0)
    set_decision(team, "dora", "r-3", "EXE", None)              # N/A decided over a tie
    values, adjudicated = consensus_of(team)
    assert values[("r-2", "ANS")] == 0 and values[("r-3", "EXE")] is None
    assert adjudicated == 2
    by_model = consensus_of(team, ResponseFilter(models=frozenset({"quark-lm-3"})))
    assert by_model == ({(r, c): v for (r, c), v in values.items() if r == "r-2"}, 1)


def test_a_decision_stands_where_nobody_scored(team: Project) -> None:
    team.conn.execute("DELETE FROM scores WHERE response_id = 'r-4' AND criterion = 'SET'")
    set_decision(team, "dora", "r-4", "SET", 0)
    assert consensus_of(team)[0][("r-4", "SET")] == 0


def test_the_report_counts_adjudicated_consensus_values(team: Project, tmp_path: Path) -> None:
    options = ReportOptions(resamples=20)
    before = build_report(team, options).settings
    set_decision(team, "dora", "r-1", "CAL", 0)
    set_decision(team, "dora", "r-1", "COR", 0)
    report = build_report(team, options)
    write_report(report, tmp_path / "out", ["json", "html"])
    saved = json.loads((tmp_path / "out" / JSON_NAME).read_text(encoding="utf-8"))["settings"]
    # r-1 ties on CAL and COR, r-3 on EXE; r-2 and r-4 agree throughout.
    assert (before["consensus_values"], before["consensus_adjudicated"]) == (6 + 8 + 4 + 5, 0)
    assert (saved["consensus_values"], saved["consensus_adjudicated"]) == (8 + 8 + 4 + 5, 2)
    assert "adjudicated value" in saved["consensus"]
    page = (tmp_path / "out" / HTML_NAME).read_text(encoding="utf-8")
    assert "<dt>Consensus values adjudicated</dt><dd>2</dd>" in page
    assert saved["analyses_rater"] == HUMAN_CONSENSUS


def test_one_grader_and_a_decision_make_the_consensus_the_reference(loaded: Project,
                                                                    tmp_path: Path) -> None:
    grade(loaded, tmp_path, ("r-1", "ann", PREFS_FULL))
    import_file(loaded, write_jsonl(tmp_path / "v.jsonl", [
        {"response_id": "r-1", "judge": "arb", "prompt_version": "v1", "scores": PREFS_FULL}]),
        "verdicts")
    options = ReportOptions(resamples=20)

    def reference() -> tuple[object, set[object]]:
        """Whose grades the analyses use, and what the judge is compared with."""
        report = build_report(loaded, options)
        table = next(t for t in report.tables() if t.name == "criterion_agreement")
        return report.settings["analyses_rater"], {row[1] for row in table.rows}

    assert reference() == ("ann", {"ann"})
    set_decision(loaded, "dora", "r-1", "ANS", 0)
    assert reference() == (HUMAN_CONSENSUS, {"ann", HUMAN_CONSENSUS})


# -- the command ---------------------------------------------------------------------------------


def test_disputes_command(team: Project, capsys) -> None:
    set_decision(team, "dora", "r-3", "EXE", 1)
    db = str(team.path)
    assert main(["disputes", db, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["disputes"]
    assert [{k: d[k] for k in ("response_id", "question_id", "model", "rubric", "disputed",
                               "graders", "decided")} for d in listed] == [
        {"response_id": "r-1", "question_id": "q-1", "model": "orbit-7b", "rubric": "prefs",
         "disputed": ["CAL", "COR"], "graders": ["ann", "bob"], "decided": []},
        {"response_id": "r-3", "question_id": "q-mc", "model": "orbit-7b",
         "rubric": "conceptual", "disputed": ["EXE"], "graders": ["ann", "bob"],
         "decided": ["EXE"]}]
    assert main(["disputes", db, "--min-difference", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["response", "model", "question", "differ", "on", "graders",
                                "decisions"]
    assert lines[1].split() == ["r-1", "orbit-7b", "q-1", "COR", "ann,", "bob", "0", "of", "1",
                                "decided"]
    assert lines[2].split()[0] == "r-3" and lines[2].endswith("settled")
    assert lines[-1] == "2 disputed responses: 1 settled, 1 open"
    assert main(["disputes", db, "--min-difference", "0"]) == 1
    assert "at least 1" in capsys.readouterr().err

