"""Seed 001's measures by stage and question kind (Fig 3, Figs 15-18), template compliance per
kind with Spearman's ρ (App. H, Table 8, Fig 13), the formulation-scaffold ablation (App. I)
and response lengths (App. C.2), on a small imported study whose numbers are worked out in the
comments, and on the seed's own Table 8."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from conftest import REFERENCE, question, response, write_jsonl
from physgrade import analyses
from physgrade.importer import import_file
from physgrade.project import Project
from physgrade.report.build import build_report, read_scaffold
from physgrade.report.model import Report, Table
from physgrade.report.options import ReportOptions
from physgrade.scoring import tables as score_tables

APPROX = 5e-4
GRADER = "expert"
#: A response in the study's template, and one that is not (free prose).
COMPLIANT, FREE = REFERENCE, "The speed is 10 m/s, since v = at."

# Questions: kind, topic, Bloom cognitive level, scaffold condition.
#   p1 problem    Mechanics  Apply     -        p2 problem    Optics  Analyze  -
#   p3 problem    Mechanics  Apply     yes      p4 problem    Optics  Apply    yes
#   c1 conceptual Mechanics  Remember  -        c2 conceptual Optics  Understand
QUESTIONS = [question("p1"), question("p2", topic="Optics", bloom_cognitive="Analyze"),
             question("p3", scaffold="yes"), question("p4", topic="Optics", scaffold="yes"),
             question("c1", kind="conceptual", bloom_cognitive="Remember"),
             question("c2", kind="conceptual", topic="Optics", bloom_cognitive="Understand")]


def prefs(**changed: int) -> dict[str, int | None]:
    return {"INT": 1, "MOD": 1, "CON": 1, "APP": 1, "CAL": 1, "COR": 2, "COH": 1, "ANS": 2} | changed


def conceptual(**changed: int | None) -> dict[str, int | None]:
    return {"SET": 1, "CON": 1, "EXE": 1, "COH": 1, "ANS": 1} | changed


# (model, question, scores, text). Stages of P-REFS: formulation INT MOD (2 points), solution
# CON APP CAL COR COH (6), final answer ANS (2); of the conceptual rubric: SET (1), CON EXE COH
# (3), ANS (1). Stage shares and score:
#   alpha p1 full                 1, 1, 1        10/10  compliant
#   alpha p2 INT 0, CAL 0         .5, 5/6, 1      8/10  compliant
#   alpha p3 INT 0, MOD 0         0, 1, 1         8/10  free
#   alpha p4 COR 1, ANS 0         1, 5/6, 0       7/10  free
#   alpha c1 full                 1, 1, 1         5/5   compliant
#   alpha c2 CON 0, EXE N/A       1, 1/2, 1       3/4   free
#   beta  p1 ANS 1                1, 1, .5        9/10  compliant
#   beta  p2 full                 1, 1, 1        10/10  free
#   beta  p3 APP 0, ANS 0         1, 5/6, 0       7/10  compliant
#   beta  p4 full                 1, 1, 1        10/10  compliant
#   beta  c1 SET 0, ANS 0         0, 1, 0         3/5   compliant
#   beta  c2 full                 1, 1, 1         5/5   free
GRADED = [
    ("alpha", "p1", prefs(), COMPLIANT), ("alpha", "p2", prefs(INT=0, CAL=0), COMPLIANT),
    ("alpha", "p3", prefs(INT=0, MOD=0), FREE), ("alpha", "p4", prefs(COR=1, ANS=0), FREE + "!"),
    ("alpha", "c1", conceptual(), COMPLIANT), ("alpha", "c2", conceptual(CON=0, EXE=None), FREE * 2),
    ("beta", "p1", prefs(ANS=1), COMPLIANT), ("beta", "p2", prefs(), FREE * 3),
    ("beta", "p3", prefs(APP=0, ANS=0), COMPLIANT), ("beta", "p4", prefs(), COMPLIANT),
    ("beta", "c1", conceptual(SET=0, ANS=0), COMPLIANT), ("beta", "c2", conceptual(), FREE),
]


def build_study(path: Path, questions: list[dict]) -> Path:
    folder = path.parent
    with Project.create(path) as project:
        import_file(project, write_jsonl(folder / "q.jsonl", questions), "questions")
        import_file(project, write_jsonl(folder / "r.jsonl", [
            response(f"{model}-{qid}", qid, model, text) for model, qid, _, text in GRADED]),
                    "responses")
        import_file(project, write_jsonl(folder / "g.jsonl", [
            {"response_id": f"{model}-{qid}", "grader": GRADER, "scores": scores}
            for model, qid, scores, _ in GRADED]), "grades")
    return path


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_study(tmp_path_factory.mktemp("stages") / "study.physgrade", QUESTIONS)


@pytest.fixture(scope="module")
def data(study: Path) -> score_tables.ScoreData:
    with Project.open(study) as project:
        return score_tables.load(project)


@pytest.fixture(scope="module")
def sheet(data: score_tables.ScoreData) -> pd.DataFrame:
    return score_tables.sheet(data, GRADER)


@pytest.fixture(scope="module")
def report(study: Path) -> Report:
    with Project.open(study) as project:
        return build_report(project, ReportOptions(rater=GRADER, resamples=20))


def cell(frame: pd.DataFrame, column: str, **where: object) -> Any:
    rows = frame
    for key, value in where.items():
        rows = rows[rows[key] == value]
    assert len(rows) == 1, where
    return rows.iloc[0][column]


def value(frame: pd.DataFrame, column: str, **where: object) -> float | None:
    return cell(frame, column, **where).value


def test_the_imported_study_is_what_the_comments_say(sheet):
    assert len(sheet) == 12
    assert dict(zip(sheet.index, sheet["compliant"])) == {
        f"{model}-{qid}": text == COMPLIANT for model, qid, _, text in GRADED}


def test_stage_scores_per_model_and_kind(sheet):
    table = analyses.stage_scores(sheet)
    alpha = table[(table["model"] == "alpha") & (table["kind"] == "problem")]
    assert list(alpha["stage"]) == ["Problem formulation", "Step-by-step solution", "Final answer",
                                    analyses.OVERALL]
    assert list(alpha["part"]) == [1, 2, 3, 4] and set(alpha["n"]) == {4}
    # Shares: (1 + .5 + 0 + 1) / 4, (1 + 5/6 + 1 + 5/6) / 4, (1 + 1 + 1 + 0) / 4, mean score.
    assert [c.value for c in alpha["share"]] == pytest.approx([0.625, 11 / 12, 0.75, 0.825], abs=APPROX)
    # Contributions (points over 10): (.2 + .1 + 0 + .2) / 4, (.6 + .5 + .6 + .5) / 4,
    # (.2 + .2 + .2 + 0) / 4; they add up to the mean score.
    contributions = [c.value for c in alpha["contribution"]]
    assert contributions == pytest.approx([0.125, 0.55, 0.15, 0.825], abs=APPROX)
    assert sum(contributions[:3]) == pytest.approx(contributions[3], abs=1e-12)
    # Conceptual, alpha: c1 full; c2 SET 1/1, reasoning 1/2 (EXE N/A), ANS 1/1, 3 of 4 points.
    shares = table[(table["model"] == "alpha") & (table["kind"] == "conceptual")]
    assert list(shares["stage"]) == ["Setup", "Reasoning", "Final answer", analyses.OVERALL]
    assert [c.value for c in shares["share"]] == pytest.approx([1.0, 0.75, 1.0, 0.875], abs=APPROX)
    assert [c.value for c in shares["contribution"]] == pytest.approx(
        [(0.2 + 0.25) / 2, (0.6 + 0.25) / 2, (0.2 + 0.25) / 2, 0.875], abs=APPROX)
    # All models, problem formulation: alpha's 1, .5, 0, 1 and beta's four 1s.
    assert value(table, "share", model=analyses.ALL_MODELS, kind="problem", part=1) == pytest.approx(
        6.5 / 8, abs=APPROX)
    # beta's final answer: .5, 1, 0, 1.
    assert value(table, "share", model="beta", kind="problem", part=3) == pytest.approx(0.625, abs=APPROX)


def test_heatmap_cells_per_kind_and_stage(sheet):
    table = analyses.stage_heatmap(sheet, "topic")
    assert list(table.columns) == ["kind", "part", "stage", "model", "n", "Mechanics", "Optics"]
    assert list(dict.fromkeys(table["kind"])) == ["problem", "conceptual"]

    def at(kind: str, part: int, model: str, topic: str) -> float | None:
        return value(table, topic, kind=kind, part=part, model=model)

    # Problem formulation, alpha: Mechanics p1 1, p3 0; Optics p2 .5, p4 1.
    assert at("problem", 1, "alpha", "Mechanics") == pytest.approx(0.5, abs=APPROX)
    assert at("problem", 1, "alpha", "Optics") == pytest.approx(0.75, abs=APPROX)
    # Final answer, beta: Mechanics p1 .5, p3 0; Optics p2 1, p4 1.
    assert at("problem", 3, "beta", "Mechanics") == pytest.approx(0.25, abs=APPROX)
    assert at("problem", 3, "beta", "Optics") == pytest.approx(1.0, abs=APPROX)
    # Overall, alpha: Mechanics (1 + .8) / 2, Optics (.8 + .7) / 2; conceptual c1 1, c2 .75.
    assert at("problem", 4, "alpha", "Mechanics") == pytest.approx(0.9, abs=APPROX)
    assert at("problem", 4, "alpha", "Optics") == pytest.approx(0.75, abs=APPROX)
    assert at("conceptual", 4, "alpha", "Optics") == pytest.approx(0.75, abs=APPROX)
    # Conceptual reasoning, all models, Optics: alpha's c2 1/2 and beta's c2 1.
    assert at("conceptual", 2, analyses.ALL_MODELS, "Optics") == pytest.approx(0.75, abs=APPROX)
    # Kinds are not pooled: a conceptual cell holds conceptual responses only.
    assert cell(table, "Mechanics", kind="conceptual", part=1, model="beta").n == 1
    bloom = analyses.stage_heatmap(sheet, "bloom_cognitive")
    assert list(bloom.columns)[5:] == ["Remember", "Understand", "Apply", "Analyze"]
    assert value(bloom, "Analyze", kind="problem", part=4, model="alpha") == pytest.approx(0.8, abs=APPROX)
    assert value(bloom, "Analyze", kind="conceptual", part=4, model="alpha") is None


def test_compliance_per_kind_in_points_of_the_rubric(sheet):
    table = analyses.compliance_by_kind(sheet)
    assert list(table["kind"]) == ["problem"] * 3 + ["conceptual"] * 3
    # Problem, alpha: compliant p1 10, p2 8; free p3 8, p4 7 (points of 10).
    alpha = table[(table["kind"] == "problem") & (table["model"] == "alpha")].iloc[0]
    assert alpha["compliance_rate"].value == pytest.approx(0.5, abs=APPROX)
    assert alpha["mean_score"].value == pytest.approx(8.25, abs=APPROX)
    assert alpha["mean_score_compliant"].value == pytest.approx(9.0, abs=APPROX)
    assert alpha["mean_score_noncompliant"].value == pytest.approx(7.5, abs=APPROX)
    welch = stats.ttest_ind([10, 8], [8, 7], equal_var=False).confidence_interval(0.95)
    assert alpha["difference"].value == pytest.approx(1.5, abs=APPROX)
    assert alpha["difference"].ci95 == pytest.approx((max(welch.low, -10), min(welch.high, 10)), abs=APPROX)
    # Problem, beta: compliant p1 9, p3 7, p4 10; free p2 10.
    assert value(table, "mean_score_compliant", kind="problem", model="beta") == pytest.approx(
        26 / 3, abs=APPROX)
    assert value(table, "difference", kind="problem", model="beta") == pytest.approx(26 / 3 - 10, abs=APPROX)
    # Conceptual, points of 5: alpha's free c2 scores 3 of 4 possible (EXE N/A): 3.75.
    assert value(table, "mean_score_noncompliant", kind="conceptual", model="alpha") == pytest.approx(
        3.75, abs=APPROX)
    assert value(table, "mean_score", kind="conceptual", model="beta") == pytest.approx(4.0, abs=APPROX)
    correlation = analyses.compliance_correlation(table)
    problem = correlation[correlation["kind"] == "problem"].iloc[0]
    # Two models: rates .5 and .75, scores 8.25 and 9: ρ = 1, but no p-value from two points.
    assert problem["models"] == 2 and problem["spearman"].value == pytest.approx(1.0)
    assert problem["p_value"] is None and "3 models" in problem["p_value_reason"]
    assert problem["mean_abs_difference"] == pytest.approx((1.5 + 4 / 3) / 2, abs=APPROX)


#: Seed 001, Table 8 (problem-solving questions): model, compliance rate (%), average P-REFS of
#: the compliant and the non-compliant responses (points of 10).
TABLE_8 = [("Gemma3 1B", 83.6, 1.38, 1.37), ("Gemma3 4B", 96.9, 4.93, 2.71),
           ("Llama3.2 1B", 65.4, 1.68, 1.65), ("Llama3.2 3B", 63.2, 3.61, 0.21),
           ("Phi4 Mini", 64.9, 3.92, 2.18), ("Phi4 Reason", 70.3, 7.57, 5.44),
           ("QwenDS 1.5B", 43.4, 6.28, 5.36), ("Qwen2.5 1.5B", 93.7, 4.31, 3.05),
           ("Qwen3 0.6B", 59.6, 3.76, 5.03), ("Qwen3 1.7B", 92.0, 6.78, 3.66)]


def compliance_sheet(models: list[tuple[str, float, float, float]]) -> pd.DataFrame:
    """1,000 problem-solving responses per (model, compliance rate %, average score of the
    compliant and of the other responses): as many compliant as the rate says, each group
    scoring its average (only what the compliance measures read)."""
    parts = []
    for model, rate, compliant, free in models:
        yes = round(rate * 10)
        parts.append(pd.DataFrame({
            "model": model, "kind": "problem", "rubric": "prefs",
            "compliant": [True] * yes + [False] * (1000 - yes),
            "score_pct": [compliant / 10] * yes + [free / 10] * (1000 - yes)}))
    return pd.concat(parts, ignore_index=True)


def test_the_seeds_table_8_gives_its_spearman_rho_and_p():
    table = analyses.compliance_by_kind(compliance_sheet(TABLE_8))
    models = table[table["model"] != analyses.ALL_MODELS].set_index("model")
    for model, rate, compliant, free in TABLE_8:
        assert models.loc[model, "compliance_rate"].value == pytest.approx(rate / 100, abs=APPROX)
        assert models.loc[model, "mean_score_compliant"].value == pytest.approx(compliant, abs=APPROX)
        assert models.loc[model, "difference"].value == pytest.approx(compliant - free, abs=APPROX)
    # Each model's mean over all its responses, and ρ against the rates, computed here.
    averages = [rate / 100 * compliant + (1 - rate / 100) * free for _, rate, compliant, free in TABLE_8]
    expected = stats.spearmanr([rate for _, rate, _, _ in TABLE_8], averages)
    found = analyses.compliance_correlation(table).iloc[0]
    assert found["kind"] == "problem" and found["models"] == 10
    assert found["spearman"].value == pytest.approx(expected.statistic, abs=APPROX)
    assert found["p_value"] == pytest.approx(expected.pvalue, abs=APPROX)
    # The seed (App. H): ρ = 0.079, p = 0.83; mean |Δ| = 1.61, median |Δ| = 1.50 (its Δ column
    # is rounded from unrounded averages: Gemma3 1B's +0.00 is 0.01 here).
    assert found["spearman"].value == pytest.approx(0.079, abs=APPROX)
    assert found["p_value"] == pytest.approx(0.83, abs=0.005)
    assert found["mean_abs_difference"] == pytest.approx(1.61, abs=0.005)
    assert found["median_abs_difference"] == pytest.approx(1.505, abs=APPROX)


def test_a_perfect_rank_correlation_has_rho_but_no_t_p_value():
    # The t approximation would give p = 0 for ρ = 1, on four models as on four thousand.
    table = analyses.compliance_by_kind(compliance_sheet([
        ("a", 20.0, 2.0, 1.0), ("b", 40.0, 3.0, 2.0), ("c", 60.0, 5.0, 4.0), ("d", 80.0, 9.0, 8.0)]))
    found = analyses.compliance_correlation(table).iloc[0]
    assert found["spearman"].value == pytest.approx(1.0) and found["p_value"] is None
    assert "±1" in found["p_value_reason"]


def test_scaffold_ablation_counts_stages_2_and_3(study, sheet):
    with Project.open(study) as project:
        conditions = read_scaffold(project)
    assert conditions == {"p1": None, "p2": None, "p3": "yes", "p4": "yes", "c1": None, "c2": None}
    table = analyses.scaffold_ablation(sheet, conditions)
    assert [(r.model, r.condition, r.n) for r in table.itertuples()] == [
        ("alpha", "yes", 2), ("alpha", "(none)", 2), ("beta", "yes", 2), ("beta", "(none)", 2),
        (analyses.ALL_MODELS, "yes", 4), (analyses.ALL_MODELS, "(none)", 4)]

    def shares(model: str, condition: str) -> list[float | None]:
        row = table[(table["model"] == model) & (table["condition"] == condition)].iloc[0]
        return [row[c].value for c in ("final_correct", "fully_correct", "stages_2_3_correct",
                                       "reasoning_gap")]

    # alpha, scaffolded: p3 (formulation 0, the rest right) counts as right on stages 2+3,
    # p4 (COR 1, ANS 0) not. Not scaffolded: p1 right, p2 (CAL 0) right answer, flawed.
    assert shares("alpha", "yes") == pytest.approx([0.5, 0.0, 0.5, 0.0], abs=APPROX)
    assert shares("alpha", "(none)") == pytest.approx([1.0, 0.5, 0.5, 0.5], abs=APPROX)
    # beta: p3 wrong (APP 0, ANS 0), p4 right; p1 (ANS 1) wrong, p2 right.
    assert shares("beta", "yes") == pytest.approx([0.5, 0.5, 0.5, 0.0], abs=APPROX)
    assert shares(analyses.ALL_MODELS, "(none)") == pytest.approx([0.75, 0.5, 0.5, 1 / 3], abs=APPROX)


def test_length_quantiles_per_model(data):
    table = analyses.response_lengths(data.responses, data.lengths)
    assert list(table["model"]) == ["alpha", "beta", analyses.ALL_MODELS]
    assert set(table["region"]) == {"(none)"}
    for model in ("alpha", "beta", None):
        texts = [text for owner, _, _, text in GRADED if model in (None, owner)]
        lengths = np.array([len(text) for text in texts], dtype=float)
        row = table[table["model"] == (model or analyses.ALL_MODELS)].iloc[0]
        assert row["n"] == len(texts)
        assert [row[c] for c in ("minimum", "q25", "median", "q75", "maximum", "mean")] == pytest.approx(
            [lengths.min(), *np.quantile(lengths, [0.25, 0.5, 0.75]), lengths.max(), lengths.mean()],
            abs=APPROX)
    # alpha's six lengths by hand: three templates, then 34, 35 and 68 characters of prose.
    alpha = table.iloc[0]
    assert (alpha["minimum"], alpha["median"]) == (len(FREE), (len(FREE * 2) + len(COMPLIANT)) / 2)


def test_the_report_shows_each_measure(report):
    section = report.sections[-1]
    tables = {table.name: table for table in section.tables}
    assert {"stage_scores", "score_by_topic_problem", "score_by_bloom_cognitive_problem",
            "score_by_bloom_knowledge_problem", "template_compliance",
            "template_compliance_correlation", "scaffold_ablation", "response_lengths"} <= set(tables)
    assert {"stage_scores", "score_by_topic", "template_compliance", "scaffold_ablation",
            "response_lengths"} <= {figure.name for figure in section.figures}
    drawn = {"stage_scores", "score_by_topic", "template_compliance", "scaffold_ablation",
             "response_lengths"}
    assert all(figure.png.startswith(b"\x89PNG") for figure in section.figures if figure.name in drawn)
    scaffold = row_of(tables["scaffold_ablation"], Model="alpha", Scaffold="yes")
    assert scaffold["Fully correct (stages 2+3)"].value == pytest.approx(0.5, abs=APPROX)
    topic = row_of(tables["score_by_topic_problem"], Stage="Problem formulation", Model="alpha")
    assert topic["Optics"].value == pytest.approx(0.75, abs=APPROX)
    compliance = row_of(tables["template_compliance"], Kind="problem", Model="alpha")
    assert compliance["Difference"].value == pytest.approx(1.5, abs=APPROX)


def test_no_scaffold_field_no_scaffold_table(tmp_path: Path):
    plain = [{key: value for key, value in q.items() if key != "scaffold"} for q in QUESTIONS]
    with Project.open(build_study(tmp_path / "plain.physgrade", plain)) as project:
        section = build_report(project, ReportOptions(rater=GRADER, resamples=20)).sections[-1]
    assert "scaffold_ablation" not in {table.name for table in section.tables}
    assert "response_lengths" in {table.name for table in section.tables}


def row_of(table: Table, **where: object) -> dict[str, object]:
    rows = [dict(zip(table.columns, row)) for row in table.rows]
    found = [row for row in rows if all(row[key] == wanted for key, wanted in where.items())]
    assert len(found) == 1, where
    return found[0]
