"""Variant groups as SymPyBench measures them (seed 003): consistency, complete failure and
confusion per model over templates with and without a base and over contextual variants, the
confusion band as a project setting, accuracy by format, parameter variants that
check-variants does not call drift, and the template id through import and export."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from conftest import PREFS_FULL, question, response, write_jsonl
from physgrade.analyses import ALL_MODELS
from physgrade.changes import Changes, RecordKind
from physgrade.cli import main
from physgrade.exporter import export_kind
from physgrade.importer import import_file
from physgrade.project import Project
from physgrade.report.build import build_report
from physgrade.report.options import ReportOptions
from physgrade.scoring import tables as score_tables
from physgrade.studies import variant_groups
from physgrade.variants import CONTEXTUAL, PARAMETER, check_variants

GRADER = "expert"
ROLL = ("A {m} kg cart rolls from rest down a {h} m high frictionless ramp. How fast is it "
        "going at the bottom?")
RETOLD = ("In Nairobi, Wanjiru lets a 2.0 kg toy cart roll from rest down a 5.0 m high "
          "frictionless ramp. How fast is it going at the bottom?")
FALL = "A stone is dropped from a {h} m tall tower. How long does it take to reach the ground?"


def template(qid: str, group: str | None, fmt: str | None, mass: float, height: float,
             **fields) -> dict:
    text = ROLL.format(m=mass, h=height) if group != "T2" else FALL.format(h=height)
    record = {"question": text, "answer": f"{(2 * 9.8 * height) ** 0.5:.2f} m/s",
              "variant_group": group, **({"format": fmt} if fmt else {})}
    return question(qid, **(record | fields))


#: The questions: T1, four parameter variants of a template with no base (MC-Symbolic); T2,
#: five (MC-Numerical, spelled otherwise); C, a base with two contextual variants (free-form:
#: the seed's "free form"); T3, a base of a template with two parameter variants (free form);
#: x, a question of no group and no format.
QUESTIONS = [
    *(template(f"t1-{n}", "T1", "MC-Symbolic", 1.0 + n, 2.0 * n) for n in range(1, 5)),
    *(template(f"t2-{n}", "T2", "mc_numerical", 1.0, 10.0 * n) for n in range(1, 6)),
    template("c-0", None, "free-form", 2.0, 5.0),
    question("c-1", question=RETOLD, answer="9.90 m/s", variant_of="c-0", region="Africa",
             format="free-form"),
    question("c-2", question=RETOLD.replace("Nairobi, Wanjiru", "Lima, Rosa"),
             answer="9.90 m/s", variant_of="c-0", region="South America", format="free-form"),
    template("b3", "T3", "free form", 3.0, 4.0),
    template("p3-1", "T3", "free form", 3.0, 6.0, variant_of="b3"),
    template("p3-2", "T3", "free form", 4.0, 8.0, variant_of="b3"),
    question("x"),
]
#: Whether each model's final answer is right (a question left out was not answered).
#:            T1       T2         C      T3     x
#:   alpha  4 of 4   2 of 5    0 of 3  2 of 3  right   groups T1 all, T2 40%, C none, T3 67%
#:   beta   3 (of 4) 3 of 5    3 of 3  0 of 3  wrong   T1 incomplete, T2 60%, C all, T3 none
RIGHT = {
    "alpha": {"t1-1": 1, "t1-2": 1, "t1-3": 1, "t1-4": 1, "t2-1": 1, "t2-2": 1, "t2-3": 0,
              "t2-4": 0, "t2-5": 0, "c-0": 0, "c-1": 0, "c-2": 0, "b3": 1, "p3-1": 1, "p3-2": 0,
              "x": 1},
    "beta": {"t1-1": 1, "t1-2": 1, "t1-3": 1, "t2-1": 1, "t2-2": 0, "t2-3": 1, "t2-4": 0,
             "t2-5": 1, "c-0": 1, "c-1": 1, "c-2": 1, "b3": 0, "p3-1": 0, "p3-2": 0, "x": 0},
}


@pytest.fixture
def study(project: Project, tmp_path: Path) -> Project:
    import_file(project, write_jsonl(tmp_path / "q.jsonl", QUESTIONS), "questions")
    import_file(project, write_jsonl(tmp_path / "r.jsonl", [
        response(f"{qid}@{model}", qid, model, f"{model} on {qid}")
        for model, answers in RIGHT.items() for qid in answers]), "responses")
    import_file(project, write_jsonl(tmp_path / "g.jsonl", [
        {"response_id": f"{qid}@{model}", "grader": GRADER,
         "scores": PREFS_FULL | {"ANS": 2 if right else 0}}
        for model, answers in RIGHT.items() for qid, right in answers.items()]), "grades")
    return project


def sheet(project: Project) -> pd.DataFrame:
    return score_tables.sheet(score_tables.load(project), GRADER)


def rows(table: pd.DataFrame, key: str = "model") -> dict:
    return {row[key]: row for row in table.to_dict("records")}


def test_groups_are_templates_with_or_without_a_base_and_contextual_variants(study: Project):
    keys, named_by_base = variant_groups.group_keys(sheet(study))
    assert keys.dropna().to_dict() == {
        **{f"t1-{n}": "T1" for n in range(1, 5)}, **{f"t2-{n}": "T2" for n in range(1, 6)},
        "c-0": "c-0", "c-1": "c-0", "c-2": "c-0", "b3": "T3", "p3-1": "T3", "p3-2": "T3"}
    assert named_by_base == {"c-0"}


def test_a_group_named_by_its_base_needs_the_base(study: Project):
    without_base = sheet(study).query("question_id != 'c-0'")
    table = rows(variant_groups.consistency(without_base))
    # C (c-1 and c-2 without c-0) counts for nobody: alpha keeps T1, T2, T3; beta T2, T3.
    assert [table[m]["groups"] for m in table] == [3, 2, 5]


def test_consistency_complete_failure_and_confusion_per_model(study: Project):
    table = rows(variant_groups.consistency(sheet(study)))
    assert list(table) == ["alpha", "beta", ALL_MODELS]
    counts = {model: (row["groups"], row["n"], row["consistent"], row["failed"], row["confused"])
              for model, row in table.items()}
    # alpha: T1 right, C wrong, T2 at 40% (the band's lower edge), T3 at 67% (outside).
    # beta: T1 lacks t1-4 (not counted); C right, T3 wrong, T2 at 60% (the upper edge).
    assert counts == {"alpha": (4, 15, 1, 1, 1), "beta": (3, 11, 1, 1, 1),
                      ALL_MODELS: (7, 26, 2, 2, 2)}
    alpha, beta, every = table["alpha"], table["beta"], table[ALL_MODELS]
    assert alpha["consistency"].value == pytest.approx(0.25, abs=5e-4)
    assert alpha["complete_failure"].value == pytest.approx(0.25, abs=5e-4)
    assert alpha["confusion"].value == pytest.approx(0.25, abs=5e-4)
    assert alpha["confusion"].n == 4
    assert beta["consistency"].value == pytest.approx(0.333, abs=5e-4)
    assert beta["confusion"].value == pytest.approx(0.333, abs=5e-4)
    assert every["consistency"].value == pytest.approx(0.286, abs=5e-4)
    assert every["complete_failure"].value == pytest.approx(0.286, abs=5e-4)
    assert every["confusion"].value == pytest.approx(0.286, abs=5e-4)
    # Wilson's interval of 1 of 4.
    assert alpha["consistency"].ci95 == pytest.approx((0.046, 0.699), abs=5e-4)


def test_the_confusion_band_decides_which_groups_are_confused(study: Project):
    assert variant_groups.confusion_band(study) == variant_groups.DEFAULT_CONFUSION_BAND == 0.1
    assert variant_groups.set_confusion_band(study, 0.2) == Changes.of(RecordKind.SETTINGS)
    band = variant_groups.confusion_band(study)
    assert band == 0.2
    wide = rows(variant_groups.consistency(sheet(study), band))
    # alpha's T3 at 67% is within 30%..70% now; beta's groups are as before.
    assert [wide[m]["confused"] for m in wide] == [2, 1, 3]
    assert wide[ALL_MODELS]["confusion"].value == pytest.approx(0.429, abs=5e-4)
    narrow = rows(variant_groups.consistency(sheet(study), 0.05))
    # 45%..55%: neither 40% nor 60% is "about half" any more.
    assert [narrow[m]["confused"] for m in narrow] == [0, 0, 0]
    # Consistency and complete failure do not depend on the band.
    assert [narrow[m]["consistent"] for m in narrow] == [1, 1, 2]
    for wrong in (0.5, -0.1, float("nan")):
        with pytest.raises(ValueError, match="half-width around 50%"):
            variant_groups.set_confusion_band(study, wrong)
    assert variant_groups.confusion_band(study) == 0.2
    assert variant_groups.band_in_words(0.1) == "40% to 60%"


def test_accuracy_by_format(study: Project):
    setup = variant_groups.read_setup(study)
    assert setup.formats["t2-1"] == "MC-Numerical" and setup.formats["c-1"] == "free form"
    assert setup.formats["x"] is None
    table = variant_groups.accuracy_by_format(sheet(study), setup.formats)
    got = {(row["model"], row["format"]): (row["n"], row["accuracy"].value)
           for row in table.to_dict("records")}
    assert list(got) == [(model, fmt) for model in ("alpha", "beta", ALL_MODELS)
                         for fmt in ("MC-Symbolic", "MC-Numerical", "free form", "(none)")]
    expected = {("alpha", "MC-Symbolic"): (4, 1.0), ("alpha", "MC-Numerical"): (5, 0.4),
                ("alpha", "free form"): (6, 0.333), ("alpha", "(none)"): (1, 1.0),
                ("beta", "MC-Symbolic"): (3, 1.0), ("beta", "MC-Numerical"): (5, 0.6),
                ("beta", "free form"): (6, 0.5), ("beta", "(none)"): (1, 0.0),
                (ALL_MODELS, "MC-Symbolic"): (7, 1.0), (ALL_MODELS, "MC-Numerical"): (10, 0.5),
                (ALL_MODELS, "free form"): (12, 0.417), (ALL_MODELS, "(none)"): (2, 0.5)}
    for key, (n, accuracy) in expected.items():
        assert got[key][0] == n and got[key][1] == pytest.approx(accuracy, abs=5e-4), key


def test_the_report_has_the_tables_with_the_issues_columns(study: Project):
    variant_groups.set_confusion_band(study, 0.2)
    report = build_report(study, ReportOptions(rater=GRADER))
    [section] = [s for s in report.sections if "Variant groups" in s.title]
    consistency, by_format = section.tables
    assert consistency.columns == ("Model", "Groups", "n", "Consistency", "Complete failure",
                                   "Confusion")
    assert "30% to 70%" in consistency.note
    everyone = consistency.rows[-1]
    assert everyone[:3] == (ALL_MODELS, 7, 26)
    assert everyone[5].value == pytest.approx(0.429, abs=5e-4)
    assert by_format.columns == ("Model", "Format", "n", "Accuracy")
    assert by_format.rows[0][:3] == ("alpha", "MC-Symbolic", 4)
    # The study's analyses no longer count every mixed group.
    assert not any(t.name == "variant_consistency" for s in report.sections for t in s.tables
                   if s is not section)


def test_a_project_without_groups_or_formats_has_no_such_section(loaded: Project,
                                                                 tmp_path: Path):
    import_file(loaded, write_jsonl(tmp_path / "g.jsonl", [
        {"response_id": "r-1", "grader": GRADER, "scores": PREFS_FULL}]), "grades")
    report = build_report(loaded, ReportOptions(rater=GRADER))
    assert not any("Variant groups" in s.title for s in report.sections)


def test_check_variants_tells_parameter_variants_from_contextual_ones(study: Project,
                                                                      tmp_path: Path, capsys):
    # A contextual variant of the template's base that changed a number: drift.
    import_file(study, write_jsonl(tmp_path / "more.jsonl", [
        question("c-3", question=RETOLD.replace("5.0 m", "6.0 m"), answer="9.90 m/s",
                 variant_of="c-0"),
        # The template's own variant that kept the base's numbers is held to its answer.
        template("p3-3", "T3", "free form", 3.0, 4.0, variant_of="b3", answer="1 m/s")]),
        "questions")
    checks = {check.id: check for check in check_variants(study)}
    # The templates without a base (T1, T2) have nothing to be compared with.
    assert sorted(checks) == ["c-1", "c-2", "c-3", "p3-1", "p3-2", "p3-3"]
    assert {qid: (c.kind, c.ok) for qid, c in checks.items()} == {
        "c-1": (CONTEXTUAL, True), "c-2": (CONTEXTUAL, True), "c-3": (CONTEXTUAL, False),
        "p3-1": (PARAMETER, True), "p3-2": (PARAMETER, True), "p3-3": (CONTEXTUAL, False)}
    assert checks["c-3"].differences == ["statement: 5.0 m in the base, 6.0 m in the variant"]
    assert checks["p3-1"].differences == []
    assert main(["check-variants", str(study.path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == ["4 variants checked: 2 faithful, 2 drifted",
                        "2 parameter variants of their base's template (other numbers by "
                        "design): not checked"]
    assert main(["check-variants", str(study.path), "--json"]) == 0
    printed = {v["id"]: v for v in json.loads(capsys.readouterr().out)["variants"]}
    assert printed["p3-1"] == {"id": "p3-1", "base": "b3", "kind": "parameter", "ok": True,
                               "differences": []}


def test_variant_group_goes_through_import_and_export(study: Project, tmp_path: Path):
    exported = tmp_path / "out.jsonl"
    export_kind(study, "questions", exported)
    records = {r["id"]: r for r in map(json.loads, exported.read_text().splitlines())}
    assert records["t1-1"]["variant_group"] == "T1" and records["x"]["variant_group"] is None
    assert records["t2-1"]["format"] == "mc_numerical"  # kept as given among the other fields
    assert "variant_group" not in (study.conn.execute(
        "SELECT extra FROM questions WHERE id = 't1-1'").fetchone()[0] or "")
    with Project.create(tmp_path / "again.physgrade") as again:
        import_file(again, exported, "questions")
        assert dict(again.conn.execute("SELECT id, variant_group FROM questions")) == dict(
            study.conn.execute("SELECT id, variant_group FROM questions"))
    # A number as template id is kept as written.
    import_file(study, write_jsonl(tmp_path / "n.jsonl", [question("n-1", variant_group=7)]),
                "questions")
    assert study.conn.execute("SELECT variant_group FROM questions WHERE id = 'n-1'"
                              ).fetchone()[0] == "7"


def test_the_command_keeps_the_band_and_prints_the_measures(study: Project, capsys):
    assert main(["variant-groups", str(study.path), "--confusion-band", "0.2", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert (printed["rater"], printed["confusion_band"], printed["band"]) == (
        GRADER, 0.2, "30% to 70%")
    every = printed["models"][-1]
    assert (every["model"], every["groups"], every["confused"]) == (ALL_MODELS, 7, 3)
    assert every["confusion"]["value"] == pytest.approx(0.429, abs=5e-4)
    assert printed["formats"][0] | {"accuracy": None} == {
        "model": "alpha", "format": "MC-Symbolic", "n": 4, "accuracy": None}
    # The band stays: a later run without the option uses it.
    assert main(["variant-groups", str(study.path)]) == 0
    text = capsys.readouterr().out
    assert "accuracy 30% to 70%" in text and "alpha: 4 groups, 15 responses" in text
    assert main(["variant-groups", str(study.path), "--confusion-band", "0.7"]) == 1
    assert "--confusion-band" in capsys.readouterr().err
    assert variant_groups.confusion_band(study) == 0.2
