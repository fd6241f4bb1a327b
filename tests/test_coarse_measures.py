"""P-REFS v1's measures (seed 000, §3.5, Table 1, Figs 7–9) from coarse verdicts imported as a
judge's file: answer accuracy, fully correct reasoning, calculation accuracy and WRA per model and
by topic, Bloom level and notation, the mapping from P-REFS scores, and the report's section."""

from __future__ import annotations

import csv
import dataclasses
import json
import math
from pathlib import Path

import pytest

from conftest import PREFS_FULL, question, response, write_jsonl
from physgrade.analyses import ALL_MODELS
from physgrade.cli import main
from physgrade.importer import import_file
from physgrade.project import Project
from physgrade.report import coarse as coarse_report
from physgrade.report.build import build_report
from physgrade.rubric import CONCEPTUAL, PREFS
from physgrade.scoring import tables as score_tables
from physgrade.studies import coarse

JUDGE, GRADER = "gem-flash", "expert-1"
#: Eight questions: topic × Bloom level (cognitive and knowledge together) × notation.
QUESTIONS = {
    "q1": ("Mechanics", "Apply", "Procedural", "latex"),
    "q2": ("Mechanics", "Apply", "Procedural", "plain"),
    "q3": ("Mechanics", "Remember", "Factual", "latex"),
    "q4": ("Mechanics", "Remember", "Factual", "plain"),
    "q5": ("Optics", "Apply", "Procedural", "latex"),
    "q6": ("Optics", "Apply", "Procedural", "plain"),
    "q7": ("Optics", "Remember", "Factual", "latex"),
    "q8": ("Optics", "Remember", "Factual", "plain"),
}
#: The judge's (answer, reasoning, calculations) per model and question; "gamma" has none.
VERDICTS = {
    "alpha": {"q1": (1, 2, 1), "q2": (1, 2, 1), "q3": (1, 1, 2), "q4": (1, 2, 2),
              "q5": (1, 1, 0), "q6": (0, 0, 0), "q7": (1, 2, 2), "q8": (0, 1, 2)},
    "beta": {"q1": (0, 1, 0), "q2": (1, 1, 0), "q3": (0, 0, 2), "q4": (1, 1, 2),
             "q5": (0, 0, 0), "q6": (1, 2, 1), "q7": (0, 1, 2), "q8": (0, 0, 2)},
}
Z = 1.959963984540054  # the normal quantile of a two-sided 95% interval
T7 = 2.364624251592785  # the t quantile of a two-sided 95% interval, 7 degrees of freedom


def rid(model: str, qid: str) -> str:
    return f"{qid}@{model}"


@pytest.fixture
def study(project: Project, tmp_path: Path) -> Project:
    """The questions, responses of three models, the judge's coarse verdicts on two of them,
    and one person's P-REFS grades of alpha's q1 and q2."""
    import_file(project, write_jsonl(tmp_path / "q.jsonl", [
        question(qid, topic=topic, bloom_cognitive=cognitive, bloom_knowledge=knowledge,
                 notation=notation)
        for qid, (topic, cognitive, knowledge, notation) in QUESTIONS.items()]), "questions")
    import_file(project, write_jsonl(tmp_path / "r.jsonl", [
        response(rid(model, qid), qid, model, f"{model} on {qid}")
        for model in ("alpha", "beta", "gamma") for qid in QUESTIONS]), "responses")
    import_file(project, write_jsonl(tmp_path / "v.jsonl", [
        {"response_id": rid(model, qid), "judge": JUDGE, "answer": answer,
         "reasoning": reasoning, "calculations": calculations, "explanation": "checked"}
        for model, found in VERDICTS.items()
        for qid, (answer, reasoning, calculations) in found.items()]), "verdicts")
    import_file(project, write_jsonl(tmp_path / "g.jsonl", [
        {"response_id": rid("alpha", "q1"), "grader": GRADER, "scores": PREFS_FULL},
        {"response_id": rid("alpha", "q2"), "grader": GRADER,
         "scores": PREFS_FULL | {"COR": 1, "ANS": 1}}]), "grades")
    return project


def judged(project: Project, rater: str = JUDGE):
    data = score_tables.load(project)
    return coarse.verdicts(data, rater, coarse_report.read_notation(project))


def row(frame, **where):
    found = frame
    for column, value in where.items():
        found = found[found[column] == value]
    assert len(found) == 1, where
    return found.iloc[0]


def assert_measures(found, n, answer, fully, n_calculations, calculation, wra):
    assert found["n"] == n and found["n_calculations"] == n_calculations
    assert found["answer_accuracy"].value == pytest.approx(answer, abs=5e-4)
    assert found["fully_correct_reasoning"].value == pytest.approx(fully, abs=5e-4)
    assert found["wra"].value == pytest.approx(wra, abs=5e-4)
    if calculation is None:
        assert found["calculation_accuracy"].value is None
    else:
        assert found["calculation_accuracy"].value == pytest.approx(calculation, abs=5e-4)


def test_measures_per_model_from_imported_coarse_verdicts(study):
    rows = judged(study)
    assert set(rows["source"]) == {coarse.FROM_COARSE} and len(rows) == 16
    table = coarse.by_model(rows)
    assert list(table["model"]) == ["alpha", "beta", ALL_MODELS]  # gamma has no verdicts
    # alpha: answers 6/8; reasoning 2 on 4; Σw = 11 of 16; calculations needed on q1, q2, q5, q6,
    # right on q1 and q2.
    assert_measures(row(table, model="alpha"), 8, 0.75, 0.5, 4, 0.5, 11 / 16)
    # beta: answers 3/8; reasoning 2 once; Σw = 6; calculations right on q6 alone.
    assert_measures(row(table, model="beta"), 8, 0.375, 0.125, 4, 0.25, 6 / 16)
    assert_measures(row(table, model=ALL_MODELS), 16, 9 / 16, 5 / 16, 8, 3 / 8, 17 / 32)


def test_intervals_are_wilson_for_shares_and_t_for_wra(study):
    alpha = row(coarse.by_model(judged(study)), model="alpha")
    # Wilson's interval of 6 of 8, by its formula.
    p, n = 0.75, 8
    centre = (p + Z ** 2 / (2 * n)) / (1 + Z ** 2 / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z ** 2 / (4 * n ** 2)) / (1 + Z ** 2 / n)
    low, high = alpha["answer_accuracy"].ci95
    assert (low, high) == (pytest.approx(centre - half, abs=5e-4), pytest.approx(centre + half, abs=5e-4))
    assert low == pytest.approx(0.409, abs=5e-4)
    # WRA: the t interval of the eight wᵢ / 2, cut at 100%.
    halves = [1, 1, 0.5, 1, 0.5, 0, 1, 0.5]
    average = sum(halves) / 8
    spread = math.sqrt(sum((x - average) ** 2 for x in halves) / 7)
    wra_low, wra_high = alpha["wra"].ci95
    assert wra_low == pytest.approx(average - T7 * spread / math.sqrt(8), abs=5e-4)
    assert wra_low == pytest.approx(0.376, abs=5e-4)
    assert wra_high == pytest.approx(min(average + T7 * spread / math.sqrt(8), 1.0), abs=5e-4)


def test_measures_by_topic_bloom_level_and_notation(study):
    rows = judged(study)
    by_topic = coarse.by_group(rows, "topic")
    assert list(by_topic["topic"][by_topic["model"] == "alpha"]) == ["Mechanics", "Optics"]
    assert_measures(row(by_topic, model="alpha", topic="Mechanics"), 4, 1.0, 0.75, 2, 1.0, 7 / 8)
    assert_measures(row(by_topic, model="alpha", topic="Optics"), 4, 0.5, 0.25, 2, 0.0, 4 / 8)
    by_bloom = coarse.by_group(rows, "bloom_cognitive")
    assert_measures(row(by_bloom, model="alpha", bloom_cognitive="Apply"), 4, 0.75, 0.5, 4, 0.5, 5 / 8)
    # No Remember question of alpha needed calculations: no accuracy, and no 0 passing for one.
    remember = row(by_bloom, model="alpha", bloom_cognitive="Remember")
    assert_measures(remember, 4, 0.75, 0.5, 0, None, 6 / 8)
    assert remember["calculation_accuracy"].reason == "no cases"
    by_knowledge = coarse.by_group(rows, "bloom_knowledge")
    assert_measures(row(by_knowledge, model="beta", bloom_knowledge="Factual"), 4, 0.25, 0.0, 0,
                    None, 2 / 8)
    by_notation = coarse.by_group(rows, "notation")
    assert list(by_notation["notation"][by_notation["model"] == "alpha"]) == ["latex", "plain"]
    assert_measures(row(by_notation, model="alpha", notation="latex"), 4, 1.0, 0.5, 2, 0.5, 6 / 8)
    assert_measures(row(by_notation, model="alpha", notation="plain"), 4, 0.5, 0.5, 2, 0.5, 5 / 8)
    # plain, both models: answers 2 + 3, reasoning 2 on 2 + 1, calculations right on 1 + 1 of
    # 2 + 2, Σw = 5 + 4.
    assert_measures(row(by_notation, model=ALL_MODELS, notation="plain"), 8, 5 / 8, 3 / 8, 4, 0.5,
                    9 / 16)
    with pytest.raises(ValueError, match="broken down by one of topic"):
        coarse.by_group(rows, "region")


def test_notation_comes_from_the_facet_or_else_the_question_field(study):
    """A project that declares ``notation`` a facet has it among the responses' columns; one
    that does not has it from the question field, to the same numbers."""
    data = score_tables.load(study)
    undeclared = dataclasses.replace(data, responses=data.responses.drop(columns="notation",
                                                                         errors="ignore"))
    for found in (coarse.verdicts(data, JUDGE, coarse_report.read_notation(study)),
                  coarse.verdicts(undeclared, JUDGE, coarse_report.read_notation(study))):
        assert found.loc[rid("beta", "q2"), "notation"] == "plain"
        by_notation = coarse.by_group(found, "notation")
        assert_measures(row(by_notation, model="beta", notation="latex"), 4, 0.0, 0.0, 2, 0.0,
                        2 / 8)
    assert coarse.verdicts(undeclared, JUDGE)["notation"].isna().all()


def test_heatmap_grid_is_models_by_values(study):
    grid = coarse.pivot(coarse.by_group(judged(study), "topic"), "topic", "wra")
    assert list(grid.columns) == ["model", "Mechanics", "Optics"]
    assert row(grid, model="beta")["Optics"].value == pytest.approx(3 / 8, abs=5e-4)
    with pytest.raises(ValueError, match="a measure is one of"):
        coarse.pivot(coarse.by_group(judged(study), "topic"), "topic", "score")


@pytest.mark.parametrize("rubric, scores, expected", [
    (PREFS, PREFS_FULL, (1, 2, 1)),
    (PREFS, PREFS_FULL | {"COR": 1, "ANS": 1}, (0, 1, 1)),
    (PREFS, PREFS_FULL | {"CAL": 0}, (1, 1, 0)),
    (PREFS, dict.fromkeys(PREFS.keys, 0), (0, 0, 0)),
    (CONCEPTUAL, {"SET": 1, "CON": 1, "EXE": None, "COH": 1, "ANS": 0}, (0, 2, 2)),
    (CONCEPTUAL, {"SET": 0, "CON": 1, "EXE": None, "COH": 0, "ANS": 1}, (1, 1, 2)),
    (CONCEPTUAL, {"SET": 0, "CON": 0, "EXE": 0, "COH": 0, "ANS": 1}, (1, 0, 0)),
])
def test_prefs_scores_map_to_coarse_verdicts(rubric, scores, expected):
    assert coarse.map_prefs(rubric, scores) == expected


def test_a_rater_with_prefs_scores_only_is_mapped(study):
    rows = judged(study, GRADER)
    assert set(rows["source"]) == {coarse.FROM_PREFS}
    assert rows.loc[rid("alpha", "q1"), ["answer", "reasoning", "calculations"]].tolist() == [1, 2, 1]
    assert rows.loc[rid("alpha", "q2"), ["answer", "reasoning", "calculations"]].tolist() == [0, 1, 1]
    assert_measures(row(coarse.by_model(rows), model="alpha"), 2, 0.5, 0.5, 2, 1.0, 3 / 4)


def test_one_persons_coarse_grades_are_not_repeated_as_the_consensus(project, tmp_path):
    import_file(project, write_jsonl(tmp_path / "q.jsonl", [question()]), "questions")
    import_file(project, write_jsonl(tmp_path / "r.jsonl", [response()]), "responses")
    import_file(project, write_jsonl(tmp_path / "g.jsonl", [
        {"response_id": "r-1", "grader": GRADER, "answer": 1, "reasoning": 1,
         "calculations": 0}]), "grades")
    data = score_tables.load(project)
    assert coarse.coarse_raters(data) == [GRADER]
    rows = coarse.verdicts(data, GRADER)
    assert rows["notation"].isna().all()  # no question has the field
    assert_measures(row(coarse.by_model(rows), model="orbit-7b"), 1, 1.0, 0.0, 1, 0.0, 0.5)


def test_report_section_with_its_columns_and_heatmaps(study, tmp_path):
    report = build_report(study)
    section = next(s for s in report.sections if s.title.endswith(coarse_report.TITLE))
    by_model = next(t for t in section.tables if t.name == "prefs_v1_by_model")
    assert by_model.columns == ("Rater", "Source", "Model", "n", "Answer accuracy",
                                "Fully correct reasoning", "n calculations", "Calculation accuracy",
                                "WRA")
    alpha = next(r for r in by_model.rows if r[:3] == (JUDGE, coarse.FROM_COARSE, "alpha"))
    assert alpha[3] == 8 and alpha[8].value == pytest.approx(0.6875, abs=5e-4)
    # The analyses rater (the one grader) is there too, from its P-REFS grades mapped.
    assert any(r[:2] == (GRADER, coarse.FROM_PREFS) for r in by_model.rows)
    names = {t.name: t for t in section.tables}
    assert {"prefs_v1_by_topic", "prefs_v1_by_bloom_cognitive", "prefs_v1_by_bloom_knowledge",
            "prefs_v1_by_notation"} <= set(names)
    assert names["prefs_v1_by_notation"].columns[3] == "Notation"
    for table in section.tables:
        assert {"Answer accuracy", "Fully correct reasoning", "Calculation accuracy",
                "WRA"} <= set(table.columns)
    figure = next(f for f in section.figures if f.name == "prefs_v1_gem_flash_topic_wra")
    assert figure.table == "prefs_v1_by_topic"
    png = figure.draw()
    assert png.startswith(b"\x89PNG")
    (tmp_path / "wra_by_topic.png").write_bytes(png)
    # Four measures by three groups for the judge (Figs 7–9).
    assert len([f for f in section.figures if "gem_flash" in f.name]) == 12


def test_report_command_writes_the_measures(study, tmp_path):
    out = tmp_path / "report"
    assert main(["report", str(study.path), "--out", str(out), "--filter", "model=beta",
                 "--resamples", "20"]) == 0
    with open(out / "csv" / "prefs_v1_by_model.csv", encoding="utf-8", newline="") as stream:
        header, *rows = list(csv.reader(stream))
    assert {"Answer accuracy", "Fully correct reasoning", "Calculation accuracy", "WRA",
            "WRA ci95 low"} <= set(header)
    beta = next(r for r in rows if r[:3] == [JUDGE, coarse.FROM_COARSE, "beta"])
    assert float(beta[header.index("Calculation accuracy")]) == pytest.approx(0.25, abs=5e-4)
    assert float(beta[header.index("WRA")]) == pytest.approx(0.375, abs=5e-4)
    assert {r[2] for r in rows} == {"beta", ALL_MODELS}
    saved = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert any(section["title"].endswith(coarse_report.TITLE) for section in saved["sections"])
    assert coarse_report.TITLE in (out / "report.html").read_text(encoding="utf-8")


def test_no_section_without_coarse_verdicts(project, tmp_path):
    import_file(project, write_jsonl(tmp_path / "q.jsonl", [question()]), "questions")
    import_file(project, write_jsonl(tmp_path / "r.jsonl", [response()]), "responses")
    import_file(project, write_jsonl(tmp_path / "g.jsonl", [
        {"response_id": "r-1", "grader": GRADER, "scores": PREFS_FULL}]), "grades")
    report = build_report(project)
    assert not any(coarse_report.TITLE in s.title for s in report.sections)
