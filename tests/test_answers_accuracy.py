"""Final answers judged to the seeds' standard (:mod:`physgrade.answers.accuracy`): per-part
counts stored with each check, strict / liberal / unjudgeable rates per model, agreement with the
experts' ANS, the ``answers`` command and the report's "Final answers" section, on real projects
checked by real worker processes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import question, response, write_jsonl
from physgrade.answers import Check, Outcome, accuracy, verify
from physgrade.answers.accuracy import ALL, classify, measures, read_checks, reference_unreadable
from physgrade.answers.compare import check
from physgrade.answers.sandbox import Checker
from physgrade.cli import main
from physgrade.importer import import_file
from physgrade.project import Project
from physgrade.raters import HUMAN, rater_id
from physgrade.report import final_answers
from physgrade.rubric import FINAL_ANSWER
from physgrade.scores import scored, write
from physgrade.scoring.tables import load

COMPOUND = r"\boxed{3 m}, \boxed{4 s}"
#: A reference the rules cannot read (an unknown LaTeX command).
UNREADABLE = r"\foo{2}"

#: (id, question, model, response text, class it must fall in)
RESPONSES = [
    ("a-1", "q-1", "alpha", "Final Answer: 10.0 m/s", "correct"),
    ("a-2", "q-2", "alpha", "Final Answer: 3 m, 5 s", "partial"),
    ("a-3", "q-3", "alpha", "Final Answer: 2", "unjudgeable"),
    ("a-4", "q-2", "alpha", "Final Answer: 3 m, 4 s", "correct"),
    ("b-1", "q-1", "beta", "Final Answer: 12 m/s", "incorrect"),
    ("b-2", "q-2", "beta", "Final Answer: 3 m, 4 s", "correct"),
    ("b-3", "q-1", "beta", "Final Answer: 10.0 s", "incorrect"),  # wrong dimension
    ("b-4", "q-1", "beta", "Final Answer: 9^{9^{9^{9}}}", "unchecked"),
    ("c-1", "q-4", "beta", "Final Answer: 10 m/s", None),  # no reference answer: not counted
]


@pytest.fixture
def checked(project: Project, tmp_path: Path) -> Project:
    """Three questions with a reference (one simple, one of two parts, one unreadable), one
    without, eight responses of two models with a reference, all checked by ``verify``."""
    import_file(project, write_jsonl(tmp_path / "q.jsonl", [
        question(), question("q-2", answer=COMPOUND, answer_type="NV, NV", unit=None),
        question("q-3", answer=UNREADABLE, answer_type="NV", unit=None),
        question("q-4", answer="")]), "questions")
    import_file(project, write_jsonl(tmp_path / "r.jsonl", [
        response(rid, qid, model, text) for rid, qid, model, text, _ in RESPONSES]), "responses")
    with Checker(workers=2) as checker:
        verify.verify(project, checker)
    return project


def grade_ans(project: Project, values: dict[str, int], grader: str = "expert-1") -> None:
    """A person's ANS scores (the rest of the rubric left unscored)."""
    with project.transaction():
        rater = rater_id(project, grader, HUMAN)
        for response_id, value in values.items():
            write(project, rater, scored(project, response_id), {FINAL_ANSWER: value})


def test_a_check_counts_the_sub_answers_it_found_right() -> None:
    partly = check(COMPOUND, "Final Answer: 3 m, 5 s")
    assert partly.outcome == Outcome.NOT_EQUIVALENT and partly.parts() == (1, 2)
    assert check(COMPOUND, "Final Answer: 3 m, 4 s").parts() == (2, 2)
    assert check("10.0 m/s", "Final Answer: 12 m/s").parts() == (0, 1)
    assert check("10.0 m/s", "Final Answer: 10 m/s").parts() == (1, 1)
    assert check(COMPOUND, "Final Answer: 3 m").parts() == (0, 2)  # a part missing
    # A check stored before the counts were kept: one part, right if equivalent.
    assert Check(Outcome.EQUIVALENT, "equal").parts() == (1, 1)
    assert Check(Outcome.NOT_EQUIVALENT, "off").parts() == (0, 1)


def test_verify_stores_the_part_counts_with_each_check(checked: Project) -> None:
    stored = {rid: json.loads(extra) for rid, extra in checked.conn.execute(
        "SELECT response_id, extra FROM assessments")}
    assert (stored["a-2"]["parts_right"], stored["a-2"]["parts_total"]) == (1, 2)
    assert (stored["b-2"]["parts_right"], stored["b-2"]["parts_total"]) == (2, 2)
    assert (stored["a-1"]["parts_right"], stored["a-1"]["parts_total"]) == (1, 1)
    assert verify.stored(checked, "a-2").parts() == (1, 2)


def test_each_response_falls_in_the_class_the_hand_made_project_says(checked: Project) -> None:
    rows = read_checks(checked).of("rules")
    assert rows["class"].to_dict() == {rid: cls for rid, _, _, _, cls in RESPONSES if cls}
    assert rows.loc["a-3", "outcome"] == "unparseable"
    assert rows.loc["a-3", "reason"].startswith("reference answer: ")


def test_strict_liberal_and_unjudgeable_per_model(checked: Project) -> None:
    alpha, beta, every = accuracy.accuracy(read_checks(checked))
    assert (alpha.model, beta.model, every.model) == ("alpha", "beta", ALL)
    # alpha: 2 correct, 1 partial, 1 unjudgeable of 4
    assert alpha.n == 4 and alpha.strict.value == 0.5 and alpha.liberal.value == 0.625
    assert alpha.unjudgeable.value == 0.25 and alpha.counts["partial"] == 1
    # beta: 1 correct, 2 incorrect (a wrong number, a wrong unit), 1 unchecked of 4
    assert beta.n == 4 and beta.strict.value == 0.25 and beta.liberal.value == 0.25
    assert beta.unjudgeable.value == 0 and beta.unchecked.value == 0.25
    assert every.n == 8 and every.strict.value == 3 / 8 and every.liberal.value == 3.5 / 8
    assert every.unjudgeable.value == 1 / 8
    for row in (alpha, beta, every):
        for rate in (row.strict, row.liberal, row.unjudgeable):
            low, high = rate.ci95
            assert low <= rate.value <= high and high - low > 0.1  # Wilson's, at small n


def test_a_response_the_rater_has_not_checked_counts_as_missing(checked: Project,
                                                                 tmp_path: Path) -> None:
    import_file(checked, write_jsonl(tmp_path / "more.jsonl", [
        response("a-5", "q-1", "alpha", "Final Answer: 10.0 m/s")]), "responses")
    alpha = accuracy.accuracy(read_checks(checked))[0]
    assert alpha.n == 5 and alpha.counts["missing"] == 1 and alpha.strict.value == 2 / 5


def test_the_physics_r1_worked_example() -> None:
    """Appendix H.7, Estonian originals: 18 correct, 9 partial, 27 incorrect, 5 unjudgeable of
    59 → strict 30.5%, liberal 38.1%; English: 8, 8, 43, 0 → 13.6%, 20.3%."""
    estonian = measures("et", {"correct": 18, "partial": 9, "incorrect": 27, "unjudgeable": 5})
    assert estonian.n == 59
    assert round(estonian.strict.value * 100, 1) == 30.5
    assert round(estonian.liberal.value * 100, 1) == 38.1
    assert round(estonian.unjudgeable.value * 100, 1) == 8.5
    english = measures("en", {"correct": 8, "partial": 8, "incorrect": 43})
    assert (round(english.strict.value * 100, 1), round(english.liberal.value * 100, 1)) == (
        13.6, 20.3)


def test_only_a_reference_that_cannot_be_read_is_unjudgeable() -> None:
    assert reference_unreadable("unparseable", "reference answer: \\foo is not supported")
    assert reference_unreadable("unparseable", "part 2: reference answer: \\foo is not supported")
    assert reference_unreadable("not_checked", "the reference has 2 answers; the response gives "
                                               "3, but the reference's 'x' cannot be read")
    assert not reference_unreadable("unparseable", "response answer: 'x' is a word")
    assert not reference_unreadable("not_checked", "the reference has 2 answers; the response "
                                                   "gives 3, but the response's 'x' cannot be read")
    assert not reference_unreadable("not_equivalent", "reference answer: 3 vs 4")
    # an older check without counts, and a not-checked one with a part surely right
    assert classify("not_equivalent", "off", None, None) == "incorrect"
    assert classify("not_checked", "part 2: no direction", 1, 2) == "partial"
    assert classify("timeout", "the check took longer than 2 s", None, None) == "unchecked"


def test_any_rater_that_stores_the_same_fields_is_measured(checked: Project) -> None:
    """A ``rules+<model>`` rater (the model stage) stores outcome, parts and a stage."""
    with checked.transaction():
        rater = rater_id(checked, "rules+haiku", "rules")
        for rid, outcome, right in [("a-1", "equivalent", 1), ("b-1", "equivalent", 1),
                                    ("b-4", "not_equivalent", 0)]:
            write(checked, rater, scored(checked, rid), {}, comment="model said so",
                  status="failed", extra=json.dumps({"outcome": outcome, "parts_right": right,
                                                     "parts_total": 1, "stage": "model"}))
    found = read_checks(checked)
    assert found.raters() == ["rules", "rules+haiku"]
    beta = accuracy.accuracy(found, "rules+haiku")[1]
    assert beta.counts == {"correct": 1, "partial": 0, "incorrect": 1, "unchecked": 0,
                           "unjudgeable": 0, "missing": 2}
    assert found.of("rules+haiku").loc["b-1", "stage"] == "model"


def test_the_answers_command_takes_a_model_stage_rater_by_its_name(checked: Project,
                                                                     capsys) -> None:
    """The model stage's rater is ``rules+MODEL [PROMPT VERSION]``; its name alone will do."""
    with checked.transaction():
        rater = rater_id(checked, "rules+haiku", "rules", "p1a2b3")
        write(checked, rater, scored(checked, "b-4"), {}, comment="", status="failed",
              extra=json.dumps({"outcome": "equivalent", "reason": "the model: same value",
                                "parts_right": 1, "parts_total": 1, "stage": "model"}))
    checked.close()
    assert main(["answers", str(checked.path), "--rater", "rules+haiku", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["rater"] == "rules+haiku [p1a2b3]"
    assert {row["model"]: row["correct"] for row in found["accuracy"]} == {"alpha": 0, "beta": 1,
                                                                          ALL: 1}


def test_agreement_with_the_experts(checked: Project) -> None:
    """The rules' verdicts on a-1 (right), a-4 (right), b-1 (wrong), b-2 (right), b-3 (wrong);
    the expert agrees on all but b-1 (gives full marks) and a-4 (gives 1 of 2)."""
    grade_ans(checked, {"a-1": 2, "a-4": 1, "b-1": 2, "b-2": 2, "b-3": 0, "b-4": 0, "a-3": 2})
    found = accuracy.expert_agreement(read_checks(checked), load(checked))
    # b-4 (unchecked) and a-3 (unjudgeable) give no verdict; a-2 has no expert score.
    assert found.n == 5 and found.exact.value == 3 / 5 and found.exact.ci95 is not None
    assert (found.rater_only, found.reference_only) == (1, 1)
    # kappa of [[1 1],[1 0],[0 1],[1 1],[0 0]]: po 0.6, pe 0.6·0.6 + 0.4·0.4 = 0.52
    assert found.kappa.value == pytest.approx((0.6 - 0.52) / 0.48)
    assert [(d.response_id, d.model, d.outcome, d.expert_score)
            for d in found.differences] == [("a-4", "alpha", "equivalent", 1.0),
                                            ("b-1", "beta", "not_equivalent", 2.0)]
    assert "12 m/s vs 10.0 m/s" in found.differences[1].reason


def test_the_answers_command_prints_the_table_and_the_agreement(checked: Project,
                                                                  capsys) -> None:
    grade_ans(checked, {"a-1": 2, "a-4": 1, "b-1": 2, "b-2": 2, "b-3": 0})
    checked.close()
    assert main(["answers", str(checked.path)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("Final answers judged by rules")
    alpha = next(line for line in lines if line.strip().startswith("alpha"))
    assert alpha.split()[1:4] == ["4", "50.0%", "[15.0,"]  # n, strict and its Wilson interval
    assert "62.5%" in alpha and "25.0%" in alpha  # liberal, unjudgeable
    every = next(line for line in lines if line.strip().startswith(ALL))
    assert every.split()[2:4] == ["8", "37.5%"]
    assert "on 5 responses both judged" in out and "exact agreement  60.0% [" in out
    assert "b-1  beta  not_equivalent: 12 m/s vs 10.0 m/s" in out
    assert "(experts' ANS 2 of 2)" in out

    assert main(["answers", str(checked.path), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["rater"] == "rules"
    by_model = {row["model"]: row for row in found["accuracy"]}
    assert by_model["alpha"]["liberal"]["value"] == 0.625
    assert by_model["beta"]["unchecked_rate"]["value"] == 0.25
    assert by_model[ALL]["unjudgeable_rate"]["ci95"][1] > 0.125
    assert found["agreement"]["n"] == 5 and found["agreement"]["exact_agreement"]["value"] == 0.6
    assert [d["response_id"] for d in found["agreement"]["differences"]] == ["a-4", "b-1"]

    assert main(["answers", str(checked.path), "--rater", "rules [rtol 0.05]"]) == 1
    assert "raters with checks: rules" in capsys.readouterr().err


def test_the_report_shows_final_answers_only_when_there_are_checks(
        checked: Project, tmp_path: Path) -> None:
    from physgrade.report.build import build_report
    from physgrade.report.writers import write_report

    grade_ans(checked, {"a-1": 2, "a-4": 1, "b-1": 2, "b-2": 2, "b-3": 0})
    report = build_report(checked)
    section = next(s for s in report.sections if s.title.endswith(final_answers.TITLE))
    tables = {table.name: table for table in section.tables}
    accuracy_rows = {row[1]: row for row in tables["final_answers_accuracy"].rows}
    rater, model, n, correct, partial, incorrect, unchecked, unjudgeable, missing, strict, \
        liberal, unjudgeable_rate, unchecked_rate = accuracy_rows["alpha"]
    assert (rater, n, correct, partial, unjudgeable) == ("rules", 4, 2, 1, 1)
    assert (strict.value, liberal.value, unjudgeable_rate.value) == (0.5, 0.625, 0.25)
    assert accuracy_rows[ALL][9].value == 3 / 8
    (agreement,) = tables["final_answers_agreement"].rows
    assert agreement[:3] == ("rules", "expert-1", 5) and agreement[3].value == 0.6
    assert [row[1] for row in tables["final_answers_differences"].rows] == ["a-4", "b-1"]
    write_report(report, tmp_path / "out", ["csv", "json"])
    assert (tmp_path / "out" / "csv" / "final_answers_accuracy.csv").read_text().startswith(
        "Rater,Model,n,Correct,Partial")
    exported = json.loads((tmp_path / "out" / "report.json").read_text())
    assert "final_answers_accuracy" in json.dumps(exported)

    without = tmp_path / "without.physgrade"
    with Project.create(without) as bare:
        import_file(bare, write_jsonl(tmp_path / "q2.jsonl", [question()]), "questions")
        import_file(bare, write_jsonl(tmp_path / "r2.jsonl", [response()]), "responses")
        assert not any(s.title.endswith(final_answers.TITLE) for s in build_report(bare).sections)
