"""The rules rater and the answer-checking commands, on real projects and real worker processes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cancelling import CANCELLED, cancel_when
from conftest import question, response, write_jsonl
from physgrade.answers import Outcome, verify
from physgrade.answers.sandbox import Checker
from physgrade.changes import NOTHING, Changes, RecordKind
from physgrade.cli import main
from physgrade.importer import import_file
from physgrade.project import Project, now_iso

REFERENCE_RATER = "SELECT s.response_id, s.value FROM scores s JOIN raters t ON t.id = s.rater_id " \
                  "WHERE t.name = 'rules' AND t.kind = 'rules' AND t.prompt_version = ? " \
                  "ORDER BY s.response_id"


def test_verify_stores_the_final_answer_score_as_the_rules_rater(loaded: Project, capsys) -> None:
    """r-1 states 10.0 m/s (right), r-2 "10 m/s" in a sentence (right), r-3 option C (right)."""
    import_file(loaded, write_jsonl(loaded.path.parent / "more.jsonl", [
        response("r-4", text="Final Answer: 12 m/s"),
        response("r-5", text="Final Answer: 10.0 s")]), "responses")
    loaded.close()
    assert main(["verify", str(loaded.path), "--workers", "2"]) == 0
    assert "5 responses checked, 3 equivalent, 2 not equivalent" in capsys.readouterr().out
    with Project.open(loaded.path) as project:
        scores = dict(project.conn.execute(REFERENCE_RATER, ("",)).fetchall())
        assert scores == {"r-1": 2, "r-2": 2, "r-3": 1, "r-4": 0, "r-5": 0}
        wrong_unit = verify.stored(project, "r-5")
        assert wrong_unit.outcome == "not_equivalent" and "wrong dimension" in wrong_unit.reason
        assert verify.stored(project, "r-4").answer == "12 m/s"
    assert main(["verify", str(loaded.path)]) == 0
    assert "0 responses checked, 5 already checked" in capsys.readouterr().out


def test_a_verify_run_says_what_it_changed(loaded: Project) -> None:
    with Checker() as checker:
        summary = verify.verify(loaded, checker)
        assert summary.changes == Changes.of(RecordKind.SCORES, RecordKind.RATERS,
                                             responses=["r-1", "r-2", "r-3"],
                                             questions=["q-1", "q-mc"])
        assert verify.verify(loaded, checker).changes == NOTHING  # all checked already
        assert verify.verify(loaded, checker, recheck=True).changes == Changes.of(
            RecordKind.SCORES, responses=["r-1", "r-2", "r-3"], questions=["q-1", "q-mc"])


def test_stored_since_counts_the_checks_of_one_label_stored_from_a_time(loaded: Project) -> None:
    started = now_iso()
    assert verify.stored_since(loaded, "", started) == 0
    with Checker() as checker:
        verify.verify(loaded, checker)
    assert verify.stored_since(loaded, "", started) == 3
    assert verify.stored_since(loaded, "rtol 0.05", started) == 0  # another rules rater
    assert verify.stored_since(loaded, "", "9999-01-01T00:00:00.000Z") == 0


def test_a_looser_tolerance_is_another_rater(loaded: Project, capsys) -> None:
    import_file(loaded, write_jsonl(loaded.path.parent / "more.jsonl", [
        response("r-4", text="Final Answer: 10.4 m/s")]), "responses")
    loaded.close()
    assert main(["verify", str(loaded.path)]) == 0
    assert main(["verify", str(loaded.path), "--rtol", "0.05"]) == 0
    assert "rules [rtol 0.05]" in capsys.readouterr().out
    with Project.open(loaded.path) as project:
        assert dict(project.conn.execute(REFERENCE_RATER, ("",)).fetchall())["r-4"] == 0
        assert dict(project.conn.execute(REFERENCE_RATER, ("rtol 0.05",)).fetchall())["r-4"] == 2


def test_unreadable_answers_are_kept_without_a_score(project: Project, tmp_path: Path) -> None:
    import_file(project, write_jsonl(tmp_path / "q.jsonl", [question()]), "questions")
    import_file(project, write_jsonl(tmp_path / "r.jsonl", [
        response("r-1", text="Final Answer: 9^{9^{9^{9}}}")]), "responses")
    project.close()
    assert main(["verify", str(project.path)]) == 0
    with Project.open(project.path) as reopened:
        assert reopened.conn.execute(REFERENCE_RATER, ("",)).fetchall() == []
        status = reopened.conn.execute("SELECT status FROM assessments").fetchone()[0]
        assert status == "failed"
        assert verify.stored(reopened, "r-1").outcome == "unparseable"


def test_check_answer_prints_one_json_object(capsys) -> None:
    assert main(["check-answer", "--gold", "15.0 m/s", "--pred", "15.1 m/s", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "outcome": "equivalent", "reason": "15.1 m/s vs 15.0 m/s: 0.67% within 1%"}
    assert main(["check-answer", "--gold", "15.0", "--unit", "m/s", "--pred", "15.6 m/s",
                 "--rtol", "0.05"]) == 0
    assert capsys.readouterr().out.startswith("equivalent: ")


def test_check_answers_writes_one_line_per_input_in_order(tmp_path: Path, capsys) -> None:
    lines = [{"id": n, "gold": "\\frac{m v^2}{2}", "pred": "0.5 m v^{2}", "type": "EX"}
             for n in range(20)]
    lines[7] = {"id": "odd", "gold": "3.0 km", "pred": "3000 s"}
    source = write_jsonl(tmp_path / "in.jsonl", lines)
    assert main(["check-answers", str(source), "--out", str(tmp_path / "out.jsonl")]) == 0
    results = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [r["id"] for r in results] == [line["id"] for line in lines]
    assert set(results[0]) == {"id", "outcome", "reason"}
    assert results[7]["outcome"] == "not_equivalent" and "dimension" in results[7]["reason"]
    assert all(r["outcome"] == "equivalent" for i, r in enumerate(results) if i != 7)
    assert "20 answers checked" in capsys.readouterr().out


@pytest.mark.parametrize("line, message", [
    ('{"id": 1, "gold": "5"}', "line 2: field 'pred' is missing"),
    ('{"id": 1, "gold": 5, "pred": "5"}', "line 2: field 'gold' must be text"),
    ('not json', "line 2: not valid JSON"),
    ('{"id": 1, "gold": "\xe3", "pred": "5"}', "line 2: not UTF-8 text"),
])
def test_check_answers_refuses_a_bad_file_before_checking_anything(
        tmp_path: Path, capsys, line: str, message: str) -> None:
    source = tmp_path / "in.jsonl"
    source.write_bytes(('{"id": 0, "gold": "1", "pred": "1"}\n' + line + "\n").encode("latin-1"))
    out = tmp_path / "out.jsonl"
    assert main(["check-answers", str(source), "--out", str(out)]) == 1
    assert f"{source}, {message}" in capsys.readouterr().err
    assert not out.exists()


def test_an_interrupted_verify_says_how_many_checks_it_stored(loaded: Project, monkeypatch,
                                                             capsys) -> None:
    """Checks are committed two by two here; cancelled at the third, the first two stay."""
    import_file(loaded, write_jsonl(loaded.path.parent / "more.jsonl", [
        response("r-4", text="Final Answer: 12 m/s"),
        response("r-5", text="Final Answer: 10.0 s")]), "responses")
    loaded.close()
    monkeypatch.setattr(verify, "_COMMIT_EVERY", 2)
    with monkeypatch.context() as patch:
        cancel_when(patch, lambda done, total, stage: done >= 3)
        assert main(["verify", str(loaded.path), "--workers", "1"]) == 130
    assert capsys.readouterr().err == (f"{CANCELLED}2 checks stored as the rater rules (a new "
                                       "run checks only the rest)\n")
    with Project.open(loaded.path) as project:
        assert verify.assessed(project, verify.Settings()) == {"r-1", "r-2"}
    with monkeypatch.context() as patch:
        cancel_when(patch, lambda done, total, stage: done >= 3)
        assert main(["verify", str(loaded.path), "--workers", "1", "--recheck"]) == 130
    # Rechecked: the two stored again are counted, though the rater had them before.
    assert capsys.readouterr().err == f"{CANCELLED}2 checks stored as the rater rules\n"
    assert main(["verify", str(loaded.path)]) == 0
    assert "3 responses checked, 1 equivalent, 2 not equivalent, 2 already checked" in \
        capsys.readouterr().out


def test_interrupted_check_answers_says_how_many_results_the_file_holds(
        tmp_path: Path, monkeypatch, capsys) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", [{"id": n, "gold": "2 m", "pred": "2.0 m"}
                                                 for n in range(20)])
    out = tmp_path / "out.jsonl"
    with monkeypatch.context() as patch:
        cancel_when(patch, lambda done, total, stage: done >= 3)
        assert main(["check-answers", str(source), "--out", str(out), "--workers", "1"]) == 130
    assert capsys.readouterr().err == f"{CANCELLED}3 of 20 results written to {out}\n"
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == [0, 1, 2]


def test_a_check_the_rules_cannot_decide_is_kept_without_a_score(loaded: Project, capsys) -> None:
    """"Not checked" (the last of several quantities in a worked solution) is neither right nor
    wrong: it is counted apart and stored as a failed assessment, with its reason, and no score."""
    import_file(loaded, write_jsonl(loaded.path.parent / "more.jsonl", [
        response("r-4", text="We find a = 2 m/s^2 and t = 5 s, hence the speed is 12 m/s")]),
        "responses")
    loaded.close()
    assert main(["verify", str(loaded.path)]) == 0
    assert "4 responses checked, 3 equivalent, 1 not checked" in capsys.readouterr().out
    with Project.open(loaded.path) as project:
        assert "r-4" not in dict(project.conn.execute(REFERENCE_RATER, ("",)).fetchall())
        status = project.conn.execute(
            "SELECT a.status FROM assessments a JOIN raters t ON t.id = a.rater_id "
            "WHERE t.name = 'rules' AND a.response_id = 'r-4'").fetchone()[0]
        assert status == "failed"
        kept = verify.stored(project, "r-4")
        assert kept.outcome == Outcome.NOT_CHECKED and "picked out of running text" in kept.reason
        assert kept.answer == "12 m/s"
    assert main(["check-answer", "--gold", "130 m, 22.6° north of east",
                 "--pred", "130 m at 67.4° east of north", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["outcome"] == "equivalent"


def test_the_ugphysics_preset_is_its_own_rater_and_the_project_tolerance_the_default(
        loaded: Project, capsys) -> None:
    """``--preset ugphysics`` stores as ``rules [ugphysics]``; without --rtol, verify checks
    at the project's answer tolerance (1.5% off: wrong at 1%, right once the project says 2%);
    the preset lets a hundredfold error pass, as UGPhysics' rules do."""
    from physgrade.answers.tolerance import set_answer_tolerance

    import_file(loaded, write_jsonl(loaded.path.parent / "more.jsonl", [
        response("r-4", text="Final Answer: 10.15 m/s"),
        response("r-5", text="Final Answer: 1005 m/s")]), "responses")
    assert main(["verify", str(loaded.path), "--preset", "ugphysics"]) == 0
    assert "rules [ugphysics]" in capsys.readouterr().out
    assert main(["verify", str(loaded.path)]) == 0
    with Project.open(loaded.path) as project:
        assert dict(project.conn.execute(REFERENCE_RATER, ("ugphysics",)).fetchall())["r-5"] == 2
        assert dict(project.conn.execute(REFERENCE_RATER, ("",)).fetchall())["r-5"] == 0
        assert dict(project.conn.execute(REFERENCE_RATER, ("",)).fetchall())["r-4"] == 0
        set_answer_tolerance(project, 0.02)
    assert main(["verify", str(loaded.path)]) == 0
    assert "rules [rtol 0.02]" in capsys.readouterr().out
    with Project.open(loaded.path) as project:
        assert dict(project.conn.execute(REFERENCE_RATER, ("rtol 0.02",)).fetchall())["r-4"] == 2
    assert main(["verify", str(loaded.path), "--preset", "ugphysics", "--rtol", "0.05"]) == 1
