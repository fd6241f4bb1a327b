"""Paired conditions (:mod:`physgrade.studies.conditions`): Physics-R1's 59 Estonian/English
problem pairs (seeds/002, §5.1, App. H) rebuilt as a project whose grades and answer checks give
the published 2×2 table and rates, the ``compare-conditions`` command, declared pairings, the
report's "Paired conditions" section, and the same study's final answers per language
(``answers --by``, the report's table per declared facet)."""

from __future__ import annotations

import json
from math import comb
from pathlib import Path

import numpy as np
import pytest

from conftest import PREFS_FULL, question, response, write_jsonl
from physgrade.answers import verify
from physgrade.answers.compare import check
from physgrade.answers.tolerance import settings
from physgrade.cli import main
from physgrade.importer import import_file
from physgrade.project import Project
from physgrade.report.build import build_report
from physgrade.selection import NONE, value_order
from physgrade.studies import conditions
from physgrade.studies.conditions import Pairing, paired_bootstrap

COMPOUND = r"\boxed{3 m}, \boxed{4 s}"
UNREADABLE = r"\foo{2}"
#: A response's answer for each class the rules must find in it.
ANSWERS = {"correct": "Final Answer: 3 m, 4 s", "partial": "Final Answer: 3 m, 5 s",
           "incorrect": "Final Answer: 7 m, 9 s", "unjudgeable": "Final Answer: 2"}
#: Physics-R1's pairs, (Estonian class, English class, how many): App. H's table (5 both correct,
#: 13 Estonian only, 3 English only, 38 neither) and per-language counts (Estonian 18 correct, 9
#: partial, 27 incorrect, 5 unjudgeable; English 8 correct, 8 partial, 43 incorrect).
PHYSICS_R1 = [("correct", "correct", 5), ("correct", "partial", 8), ("correct", "incorrect", 5),
              ("incorrect", "correct", 3), ("partial", "incorrect", 9),
              ("unjudgeable", "incorrect", 5), ("incorrect", "incorrect", 24)]
#: A second model on the first ten problems, (Estonian right, English right, how many).
ORBIT = [(True, True, 4), (True, False, 1), (False, True, 2), (False, False, 3)]
#: Exact two-sided binomial p of 3 against 13 (Physics-R1's McNemar and sign test on 16
#: discordant pairs): 2·P(X ≤ 3), X ~ Bin(16, ½).
P_13_3 = 2 * sum(comb(16, k) for k in range(4)) / 2 ** 16


def classes() -> list[tuple[str, str]]:
    return [(et, en) for et, en, many in PHYSICS_R1 for _ in range(many)]


def orbit() -> list[tuple[bool, bool]]:
    return [(et, en) for et, en, many in ORBIT for _ in range(many)]


def build(project: Project, folder: Path, checked: bool = True) -> None:
    """59 problems in Estonian (``et-NN``) and English (``en-NN``), sharing ``pair_id`` ``p-NN``;
    model ``sonnet`` answers each once, ``orbit`` the first ten; expert-1 grades every response
    (ANS at its maximum where the answer is correct), and the rules check them (``checked``)."""
    pairs = classes()
    questions, responses, grades = [], [], []
    for number, (et, en) in enumerate(pairs):
        for language, cls in (("et", et), ("en", en)):
            qid = f"{language}-{number:02d}"
            questions.append(question(qid, pair_id=f"p-{number:02d}", language=language,
                                      answer=UNREADABLE if cls == "unjudgeable" else COMPOUND,
                                      answer_type="NV, NV", unit=None))
            responses.append(response(f"s-{qid}", qid, "sonnet", ANSWERS[cls]))
            grades.append((f"s-{qid}", cls == "correct"))
    for number, (et, en) in enumerate(orbit()):
        for language, right in (("et", et), ("en", en)):
            qid = f"{language}-{number:02d}"
            responses.append(response(f"o-{qid}", qid, "orbit",
                                      ANSWERS["correct" if right else "incorrect"]))
            grades.append((f"o-{qid}", right))
    import_file(project, write_jsonl(folder / "q.jsonl", questions), "questions")
    import_file(project, write_jsonl(folder / "r.jsonl", responses), "responses")
    import_file(project, write_jsonl(folder / "g.jsonl", [
        {"response_id": rid, "grader": "expert-1", "scores": dict(PREFS_FULL, ANS=2 if right else 0)}
        for rid, right in grades]), "grades")
    if checked:
        # The rules' own check, stored as ``verify`` stores it, run here rather than in its
        # time-limited workers: a loaded machine cannot turn a check into a time-out.
        rules = settings(project)
        todo, _ = verify.requests(project, rules)
        verify.store(project, rules, [(rid, check(asked.gold, asked.pred, asked.answer_type,
                                                  asked.unit, rules)) for rid, asked in todo])


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The study built once; tests work on copies."""
    folder = tmp_path_factory.mktemp("physics_r1")
    path = folder / "study.physgrade"
    with Project.create(path) as project:
        build(project, folder)
    return path


@pytest.fixture
def copy(study: Path, tmp_path: Path) -> Path:
    path = tmp_path / "study.physgrade"
    path.write_bytes(study.read_bytes())
    return path


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]):
    """Run the CLI on arguments; its exit code, stdout and stderr."""
    def call(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err
    return call


def cli_json(run, path: Path, measure: str, *options: str) -> dict:
    code, out, err = run("compare-conditions", str(path), "--pair-by", "pair_id", "--condition",
                         "language=et,en", "--measure", measure, "--json", *options)
    assert code == 0, err
    return json.loads(out)


def by_model(found: dict) -> dict[str, dict]:
    return {row["model"]: row for row in [*found["models"], found["overall"]]}


def test_physics_r1_strict_reproduces_the_published_table_and_tests(copy: Path, run) -> None:
    found = cli_json(run, copy, "strict")
    assert (found["condition"], found["a"], found["b"], found["pair_by"], found["measure"],
            found["rater"]) == ("language", "et", "en", "pair_id", "strict", "rules")
    sonnet = by_model(found)["sonnet"]
    assert sonnet["n_pairs"] == 59
    assert sonnet["table"] == {"both": 5, "only_a": 13, "only_b": 3, "neither": 38}
    assert sonnet["rate_a"] == pytest.approx(18 / 59, abs=5e-4)   # 30.5%
    assert sonnet["rate_b"] == pytest.approx(8 / 59, abs=5e-4)    # 13.6%
    assert sonnet["rate_b"] == pytest.approx(0.136, abs=5e-4)
    assert sonnet["difference"] == pytest.approx(10 / 59, abs=5e-4)
    assert sonnet["mcnemar"]["p_value"] == pytest.approx(0.0213, abs=5e-4)
    assert sonnet["mcnemar"]["p_value"] == pytest.approx(P_13_3, abs=5e-4)
    assert sonnet["mcnemar"]["discordant"] == 16
    assert sonnet["sign_test"] == {"p_value": pytest.approx(P_13_3, abs=5e-4), "a_higher": 13,
                                   "b_higher": 3, "ties": 43}
    low, high = sonnet["ci95"]
    assert low < 10 / 59 < high and low > 0


def test_liberal_gives_half_credit_and_no_mcnemar(copy: Path, run) -> None:
    sonnet = by_model(cli_json(run, copy, "liberal"))["sonnet"]
    assert sonnet["rate_a"] == pytest.approx(0.381, abs=5e-4)   # (18 + 9/2) / 59
    assert sonnet["rate_b"] == pytest.approx(0.203, abs=5e-4)   # (8 + 8/2) / 59
    assert sonnet["table"] is None and sonnet["mcnemar"] is None
    assert "yes/no" in sonnet["mcnemar_reason"]
    # Estonian higher: 8 correct/partial, 5 correct/incorrect, 9 partial/incorrect; English: 3.
    expected = 2 * sum(comb(25, k) for k in range(4)) / 2 ** 25
    assert sonnet["sign_test"] == {"p_value": pytest.approx(expected, abs=5e-4), "a_higher": 22,
                                   "b_higher": 3, "ties": 34}


def test_final_answers_by_grades_per_model_and_overall(copy: Path, run) -> None:
    found = cli_json(run, copy, "final")
    assert found["rater"] == "expert-1"
    rows = by_model(found)
    assert [row["model"] for row in found["models"]] == ["orbit", "sonnet"]
    assert rows["sonnet"]["table"] == {"both": 5, "only_a": 13, "only_b": 3, "neither": 38}
    assert rows["orbit"]["n_pairs"] == 10
    assert rows["orbit"]["table"] == {"both": 4, "only_a": 1, "only_b": 2, "neither": 3}
    assert rows["orbit"]["rate_a"] == pytest.approx(0.5) and rows["orbit"]["rate_b"] == pytest.approx(0.6)
    every = found["overall"]
    assert every["model"] == "all models" and every["n_pairs"] == 69
    assert every["table"] == {"both": 9, "only_a": 14, "only_b": 5, "neither": 41}
    p = 2 * sum(comb(19, k) for k in range(6)) / 2 ** 19
    assert every["mcnemar"]["p_value"] == pytest.approx(p, abs=5e-4)


def test_score_share_has_the_sign_test_only(copy: Path, run) -> None:
    sonnet = by_model(cli_json(run, copy, "score"))["sonnet"]
    full = sum(PREFS_FULL.values())
    right, wrong = 1.0, (full - 2) / full
    assert sonnet["rate_a"] == pytest.approx((18 * right + 41 * wrong) / 59, abs=5e-4)
    assert sonnet["mcnemar"] is None and sonnet["sign_test"]["a_higher"] == 13


def test_the_text_table_names_the_conditions(copy: Path, run) -> None:
    code, out, _ = run("compare-conditions", str(copy), "--pair-by", "pair_id", "--condition",
                       "language=et,en", "--measure", "strict")
    assert code == 0
    assert "language = et (A) against language = en (B)" in out
    sonnet = next(line for line in out.splitlines() if line.strip().startswith("sonnet"))
    assert sonnet.split()[:6] == ["sonnet", "59", "5", "13", "3", "38"]
    assert "0.0213" in sonnet


def test_the_bootstrap_interval_is_the_paired_one() -> None:
    """Physics-R1's differences (13 of +1, 3 of −1, 43 ties): the percentile interval is near
    the normal one of a mean of 59 paired differences, and a fixed seed repeats it."""
    d = np.array([1.0] * 13 + [-1.0] * 3 + [0.0] * 43)
    found = paired_bootstrap(d, np.arange(59), 4000, 7)
    half = 1.96 * d.std() / np.sqrt(59)
    assert found.value == pytest.approx(10 / 59)
    assert found.ci95 == pytest.approx((10 / 59 - half, 10 / 59 + half), abs=0.02)
    assert paired_bootstrap(d, np.arange(59), 4000, 7) == found
    # One problem's pairs go together: two models with the same pairs give the same interval.
    twice = paired_bootstrap(np.repeat(d, 2), np.repeat(np.arange(59), 2), 4000, 7)
    assert twice.ci95 == pytest.approx(found.ci95, abs=1e-9)
    same = paired_bootstrap(np.ones(5), np.arange(5), 100, 0)
    assert same.ci95 is None and "same amount" in (same.reason or "")


def test_several_responses_are_averaged_and_mcnemar_says_why_not(copy: Path, run,
                                                                  tmp_path: Path) -> None:
    with Project.open(copy) as project:
        import_file(project, write_jsonl(tmp_path / "more.jsonl", [
            response("s2-et-00", "et-00", "sonnet", ANSWERS["incorrect"])]), "responses")
        import_file(project, write_jsonl(tmp_path / "g2.jsonl", [
            {"response_id": "s2-et-00", "grader": "expert-1", "scores": dict(PREFS_FULL, ANS=0)}]),
            "grades")
    sonnet = by_model(cli_json(run, copy, "final"))["sonnet"]
    assert sonnet["averaged_pairs"] == 1 and sonnet["mcnemar"] is None
    assert "means of several responses" in sonnet["mcnemar_reason"]
    assert sonnet["rate_a"] == pytest.approx((18 - 0.5) / 59, abs=5e-4)


def test_bad_input_is_refused_with_what_would_do(copy: Path, run) -> None:
    def refused(*options: str) -> str:
        code, out, err = run("compare-conditions", str(copy), *options)
        assert code == 1 and out == ""
        return err

    assert "no question has the field 'pair'" in refused("--pair-by", "pair", "--condition",
                                                         "language=et,en")
    assert "pair_id" in refused("--pair-by", "pair", "--condition", "language=et,en")
    assert "no question has language = 'fi' (values: en, et)" in refused(
        "--pair-by", "pair_id", "--condition", "language=et,fi")
    assert "write FIELD=A,B" in refused("--pair-by", "pair_id", "--condition", "language=et")
    assert "both 'et'" in refused("--pair-by", "pair_id", "--condition", "language=et,et")
    assert "no answer checks by 'judge-x'" in refused(
        "--pair-by", "pair_id", "--condition", "language=et,en", "--measure", "strict",
        "--rater", "judge-x")
    assert "no grades by 'nobody'" in refused("--pair-by", "pair_id", "--condition",
                                              "language=et,en", "--rater", "nobody")
    # Problems paired by their language: the field of the condition itself.
    assert "condition's own field" in refused("--pair-by", "language", "--condition",
                                              "language=et,en")


def test_two_questions_of_one_condition_in_a_problem_are_refused(project: Project,
                                                                  tmp_path: Path) -> None:
    import_file(project, write_jsonl(tmp_path / "q.jsonl", [
        question("a", pair_id="p", language="et"), question("b", pair_id="p", language="et"),
        question("c", pair_id="p", language="en")]), "questions")
    with pytest.raises(ValueError, match=r"problem pair_id = 'p' has two questions with "
                                         r"language = 'et' \(a, b\)"):
        conditions.problems(project, Pairing("pair_id", "language", "et", "en"))


def test_no_pairs_is_refused(project: Project, tmp_path: Path) -> None:
    import_file(project, write_jsonl(tmp_path / "q.jsonl", [
        question("a", pair_id="p", language="et"), question("b", pair_id="r", language="en")]),
        "questions")
    with pytest.raises(ValueError, match="nothing to pair"):
        conditions.problems(project, Pairing("pair_id", "language", "et", "en"))


def test_a_saved_pairing_is_a_report_section(copy: Path, run) -> None:
    with Project.open(copy) as project:
        assert not [s for s in build_report(project).sections if "Paired conditions" in s.title]
    code, out, _ = run("compare-conditions", str(copy), "--pair-by", "pair_id", "--condition",
                       "language=et,en", "--measure", "strict", "--save")
    assert code == 0 and "declared" in out
    with Project.open(copy) as project:
        assert conditions.saved(project) == [Pairing("pair_id", "language", "et", "en", "strict")]
        section = next(s for s in build_report(project).sections if "Paired conditions" in s.title)
    table = section.tables[0]
    row = next(row for row in table.rows if row[0] == "sonnet")
    cells = dict(zip(table.columns, row))
    assert (cells["Pairs"], cells["Both"], cells["et only"], cells["en only"],
            cells["Neither"]) == (59, 5, 13, 3, 38)
    assert cells["McNemar p"] == pytest.approx(0.0213, abs=5e-4)
    code, _, _ = run("compare-conditions", str(copy), "--pair-by", "pair_id", "--condition",
                     "language=et,en", "--measure", "strict", "--forget")
    assert code == 0
    with Project.open(copy) as project:
        assert conditions.saved(project) == []
        assert not [s for s in build_report(project).sections if "Paired conditions" in s.title]
    code, _, err = run("compare-conditions", str(copy), "--pair-by", "pair_id", "--condition",
                       "language=et,en", "--forget")
    assert code == 1 and "is declared (declared: none)" in err
    code, _, err = run("compare-conditions", str(copy), "--pair-by", "pair_id", "--condition",
                       "language=et,en", "--save", "--forget")
    assert code == 1 and "exclude each other" in err


# -- the same study's final answers per language (``answers --by``, the report's facet tables) ----


def answers_by(study: Path, capsys: pytest.CaptureFixture[str], field: str) -> dict:
    assert main(["answers", str(study), "--by", field, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["by"]


def test_rates_per_language_are_physics_r1s(study: Path, capsys) -> None:
    found = answers_by(study, capsys, "language")
    assert found["field"] == "language"
    rows = {(row["language"], row["model"]): row for row in found["rows"]}
    # Physics-R1 §5.1: Sonnet strict 18/59 on the Estonian originals, 8/59 on the English
    # translations; liberal adds half of the 9 and 8 partial answers.
    assert rows["et", "sonnet"]["n"] == rows["en", "sonnet"]["n"] == 59
    assert rows["et", "sonnet"]["strict"]["value"] == pytest.approx(18 / 59, abs=5e-4)
    assert rows["en", "sonnet"]["strict"]["value"] == pytest.approx(0.136, abs=5e-4)
    assert rows["et", "sonnet"]["liberal"]["value"] == pytest.approx(0.381, abs=5e-4)
    assert rows["en", "sonnet"]["liberal"]["value"] == pytest.approx(0.203, abs=5e-4)
    # Each value lists its models, then every model together: orbit answered ten of each.
    assert [key for key in rows if key[0] == "en"] == [("en", "orbit"), ("en", "sonnet"),
                                                       ("en", "all models")]
    assert rows["en", "all models"]["n"] == 69


def test_the_text_names_the_field_and_an_unknown_field_is_refused(study: Path, capsys) -> None:
    assert main(["answers", str(study), "--by", "language"]) == 0
    assert "By language:" in capsys.readouterr().out
    assert main(["answers", str(study), "--by", "skill"]) != 0
    err = capsys.readouterr().err
    assert "no question has a field 'skill'" in err and "pair_id" in err and "language" in err


def test_the_report_has_a_table_per_declared_facet(study: Path) -> None:
    with Project.open(study) as project:
        report = build_report(project)
    tables = {table.name: table for section in report.sections for table in section.tables}
    by_language = tables["final_answers_by_language"]
    assert by_language.columns[:3] == ("Rater", "Language", "Model")
    rows = {(row[1], row[2]): row for row in by_language.rows}
    assert rows["et", "sonnet"][6].value == pytest.approx(18 / 59, abs=5e-4)
    assert "final_answers_by_pair_id" not in tables  # a field, but not a declared facet


def test_numeric_values_sort_by_size() -> None:
    values = ["10", "2", "b", NONE, "1.5", "a"]
    assert sorted(values, key=value_order) == ["1.5", "2", "10", "a", "b", NONE]
