"""The study's measures on hand-made sheets (numbers worked out in the comments), on degenerate
sheets, and on the bundled demo against a computation done here from its database."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from physgrade import analyses
from physgrade.demo import build_demo
from physgrade.project import Project
from physgrade.raters import HUMAN_CONSENSUS
from physgrade.rubric import CONCEPTUAL, PREFS, rubric_for_kind
from physgrade.scoring import tables as score_tables
from physgrade.scoring.store import KEYS, MISSING, NA

RATER = "expert"
T2 = 4.302652729911275  # the t quantile of a 95% interval with 2 degrees of freedom
ATTRIBUTES = ["response_id", "question_id", "model", "topic", "kind", "bloom_cognitive",
              "bloom_knowledge", "compliant", "multiple_choice", "variant_of", "region"]


def prefs(**changed: int) -> dict[str, int | None]:
    return {"INT": 1, "MOD": 1, "CON": 1, "APP": 1, "CAL": 1, "COR": 2, "COH": 1, "ANS": 2} | changed


def conceptual(**changed: int | None) -> dict[str, int | None]:
    return {"SET": 1, "CON": 1, "EXE": 1, "COH": 1, "ANS": 1} | changed


def response(rid: str, model: str, qid: str, scores: dict[str, int | None], topic: str | None = "Mechanics",
             bloom: str = "Apply", compliant: bool = True, variant_of: str | None = None,
             region: str | None = None) -> dict:
    kind = "conceptual" if "SET" in scores else "problem"
    return {"response_id": rid, "question_id": qid, "model": model, "topic": topic, "kind": kind,
            "bloom_cognitive": bloom, "bloom_knowledge": "Procedural", "compliant": compliant,
            "multiple_choice": kind == "conceptual", "variant_of": variant_of, "region": region,
            "scores": scores}


def make_sheet(responses: list[dict]) -> pd.DataFrame:
    """The sheet score_tables builds for these responses, all graded by one rater."""
    attributes = pd.DataFrame([{k: r[k] for k in ATTRIBUTES} for r in responses],
                              columns=ATTRIBUTES).set_index("response_id")
    ids = attributes.index.sort_values()
    codes = np.full((len(KEYS), len(ids), 1), MISSING, dtype=np.int8)
    for r in responses:
        for key, value in r["scores"].items():
            at = KEYS.index((rubric_for_kind(r["kind"]).key, key)), ids.get_loc(r["response_id"]), 0
            codes[at] = NA if value is None else value
    data = score_tables.ScoreData(attributes, pd.Series(0, index=attributes.index), [], [RATER],
                                  {RATER: "human"}, ids, [RATER], codes)
    return score_tables.sheet(data, RATER)


# Sheet A: two models, five responses.
#   r1 alpha q1 problem   full marks                 10/10 = 1.0  final yes  fully yes  compliant
#   r2 alpha q2 problem   CAL 0                       9/10 = 0.9  final yes  fully no   compliant
#   r3 alpha q3 concept.  EXE N/A, rest full          4/4  = 1.0  final yes  fully yes  not compliant
#   r4 beta  q1 problem   INT 0, ANS 0                7/10 = 0.7  final no   fully no   compliant
#   r5 beta  q4 problem   COR 1                       9/10 = 0.9  final yes  fully no   not compliant
SHEET_A = [
    response("r1", "alpha", "q1", prefs()),
    response("r2", "alpha", "q2", prefs(CAL=0), topic="Optics"),
    response("r3", "alpha", "q3", conceptual(EXE=None), topic=None, bloom="Remember", compliant=False),
    response("r4", "beta", "q1", prefs(INT=0, ANS=0)),
    response("r5", "beta", "q4", prefs(COR=1), topic="Astrophysics", bloom="Analyze", compliant=False),
]


@pytest.fixture
def sheet_a() -> pd.DataFrame:
    return make_sheet(SHEET_A)


def by_model(table: pd.DataFrame) -> pd.DataFrame:
    assert table["model"].is_unique
    return table.set_index("model")


def values(row: pd.Series, columns: list[str]) -> list[float | None]:
    return [row[c].value for c in columns]


def test_score_by_model(sheet_a):
    table = by_model(analyses.score_by_model(sheet_a))
    assert list(table.index) == ["alpha", "beta", analyses.ALL_MODELS]
    assert list(table["n"]) == [3, 2, 5]
    # alpha: mean of 1.0, 0.9, 1.0 = 0.9667, sd 0.0577; the t interval's top (1.11) is cut to 1.
    alpha = table.loc["alpha", "mean_score"]
    assert alpha.value == pytest.approx(29 / 30) and alpha.n == 3
    assert alpha.ci95 == pytest.approx((29 / 30 - T2 * math.sqrt(1 / 300) / math.sqrt(3), 1.0))
    # beta: 0.7 and 0.9, mean 0.8, interval 0.8 ± 1.27 cut to 0..1; all: 4.5 / 5.
    assert table.loc["beta", "mean_score"].ci95 == (0.0, 1.0)
    assert table.loc[analyses.ALL_MODELS, "mean_score"].value == pytest.approx(0.9)
    assert [table.loc[m, "final_correct"].value for m in table.index] == pytest.approx([1.0, 0.5, 0.8])
    assert [table.loc[m, "fully_correct"].value for m in table.index] == pytest.approx([2 / 3, 0.0, 0.4])
    assert table.loc["beta", "fully_correct"].n == 2


def test_reasoning_gap_is_the_share_of_right_answers_with_flawed_reasoning(sheet_a):
    table = analyses.reasoning_gap(sheet_a)
    rows = [(r.model, r.kind, r.n, r.final_correct, r.fully_correct, r.reasoning_gap.value, r.reasoning_gap.n)
            for r in table.itertuples()]
    # alpha problem: r1, r2 right, only r1 fully -> 1 of 2. beta problem: only r5 right, not
    # fully -> 1 of 1. All problem: 3 right, 1 fully -> 2 of 3. No conceptual row for beta.
    assert rows == [("alpha", "problem", 2, 2, 1, 0.5, 2), ("alpha", "conceptual", 1, 1, 1, 0.0, 1),
                    ("beta", "problem", 2, 1, 0, 1.0, 1),
                    (analyses.ALL_MODELS, "problem", 4, 3, 1, pytest.approx(2 / 3), 3),
                    (analyses.ALL_MODELS, "conceptual", 1, 1, 1, 0.0, 1)]


def test_degradation_walks_the_prefs_criteria_in_order(sheet_a):
    table = by_model(analyses.degradation(sheet_a, PREFS))
    assert list(table.columns) == ["n", *PREFS.keys]
    # Problem rows only. alpha: r2 slips at CAL. beta: r4 at INT, r5 at COR.
    assert list(table["n"]) == [2, 2, 4]
    assert values(table.loc["alpha"], list(PREFS.keys)) == [1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5]
    assert values(table.loc["beta"], list(PREFS.keys)) == [0.5, 0.5, 0.5, 0.5, 0.5, 0, 0, 0]
    assert values(table.loc[analyses.ALL_MODELS], list(PREFS.keys)) == [
        0.75, 0.75, 0.75, 0.75, 0.5, 0.25, 0.25, 0.25]


def test_error_prevalence_counts_each_category_on_its_own(sheet_a):
    table = by_model(analyses.error_prevalence(sheet_a, PREFS))
    keys = list(PREFS.keys)
    assert values(table.loc["alpha"], keys) == [0, 0, 0, 0, 0.5, 0, 0, 0]
    # r4 has two errors (INT, ANS): categories overlap.
    assert values(table.loc["beta"], keys) == [0.5, 0, 0, 0, 0, 0.5, 0, 0.5]
    assert values(table.loc[analyses.ALL_MODELS], keys) == [0.25, 0, 0, 0, 0.25, 0.25, 0, 0.25]
    assert table.loc[analyses.ALL_MODELS, "ANS"].n == 4


# Three conceptual answers of one model:
#   c1: EXE N/A, rest full.   c2: EXE N/A, COH 0.   c3: CON 0, EXE 0, ANS 0.
SHEET_CONCEPTUAL = [
    response("c1", "gamma", "k1", conceptual(EXE=None)),
    response("c2", "gamma", "k2", conceptual(EXE=None, COH=0)),
    response("c3", "gamma", "k3", conceptual(CON=0, EXE=0, ANS=0)),
]


def test_na_is_not_an_error_in_degradation_or_prevalence():
    sheet = make_sheet(SHEET_CONCEPTUAL)
    keys = list(CONCEPTUAL.keys)
    degraded = by_model(analyses.degradation(sheet, CONCEPTUAL))
    # SET: all clean. CON: c3 fails. EXE: the N/A of c1, c2 keeps them. COH: c2 fails.
    assert values(degraded.loc["gamma"], keys) == pytest.approx([1, 2 / 3, 2 / 3, 1 / 3, 1 / 3])
    prevalence = by_model(analyses.error_prevalence(sheet, CONCEPTUAL))
    # Only c3 has an EXE error; the two N/A answers count in n as error-free.
    assert values(prevalence.loc["gamma"], keys) == pytest.approx([0, 1 / 3, 1 / 3, 1 / 3, 1 / 3])
    assert prevalence.loc["gamma", "EXE"].n == 3


def test_a_sheet_of_conceptual_answers_only():
    sheet = make_sheet(SHEET_CONCEPTUAL)
    assert analyses.degradation(sheet, PREFS).empty
    assert list(analyses.degradation(sheet, PREFS).columns) == ["model", "n", *PREFS.keys]
    gap = analyses.reasoning_gap(sheet)
    assert list(zip(gap["model"], gap["kind"])) == [("gamma", "conceptual"),
                                                    (analyses.ALL_MODELS, "conceptual")]
    # c1 and c2 answer right, only c1 fully.
    assert gap["reasoning_gap"][0].value == 0.5


def test_heatmap_orders_values_as_the_taxonomy_does(sheet_a):
    table = by_model(analyses.heatmap(sheet_a, "topic"))
    # Known topics in taxonomy order, then unknown ones, then the missing topic of r3.
    topics = ["Mechanics", "Optics", "Astrophysics", "(none)"]
    assert list(table.columns) == ["n", *topics]
    assert values(table.loc["alpha"], topics) == [1.0, 0.9, None, 1.0]
    assert values(table.loc["beta"], topics) == [0.7, None, 0.9, None]
    assert table.loc["beta", "Optics"].n == 0
    everyone = table.loc[analyses.ALL_MODELS]
    assert everyone["Mechanics"].value == pytest.approx(0.85) and everyone["Mechanics"].n == 2
    bloom = analyses.heatmap(sheet_a, "bloom_cognitive")
    assert list(bloom.columns) == ["model", "n", "Remember", "Apply", "Analyze"]
    with pytest.raises(ValueError, match="heatmap"):
        analyses.heatmap(sheet_a, "model")


def test_compliance_effect(sheet_a):
    table = by_model(analyses.compliance_effect(sheet_a))
    assert list(table["n_compliant"]) == [2, 1, 3] and list(table["n_noncompliant"]) == [1, 1, 2]
    # alpha: compliant 1.0, 0.9 -> 0.95; not: r3 alone, 1.0; a group of one gives no interval.
    alpha = table.loc["alpha"]
    assert alpha["mean_score_compliant"].value == pytest.approx(0.95)
    assert alpha["difference"].value == pytest.approx(-0.05) and alpha["difference"].ci95 is None
    assert alpha["difference"].n == 3
    # All: compliant 1.0, 0.9, 0.7 against not 1.0, 0.9 -> 0.8667 - 0.95, Welch interval.
    everyone = table.loc[analyses.ALL_MODELS, "difference"]
    assert everyone.value == pytest.approx(-1 / 12)
    welch = stats.ttest_ind([1.0, 0.9, 0.7], [1.0, 0.9], equal_var=False).confidence_interval(0.95)
    assert everyone.ci95 == pytest.approx((welch.low, welch.high))


# Sheet B: variants. Base questions b1, b2, b3; b1 has variants v1a (Asia) and v1f (Africa);
# b2 has v2a (Asia) and v2x (no region); b3 has v3a (Asia). Nobody's answer to b3 is graded.
#          b1         v1a        v1f        b2           v2a        v2x        v3a
#   alpha  1.0 yes    0.9 yes    1.0 yes    0.8 yes      0.9 yes    0.8 no     1.0 yes
#   beta   0.8 no     0.7 no     0.8 no     -            1.0 yes    -          -
# (score, final answer correct)
SHEET_B = [
    response("a-b1", "alpha", "b1", prefs()),
    response("a-v1a", "alpha", "v1a", prefs(CAL=0), variant_of="b1", region="Asia"),
    response("a-v1f", "alpha", "v1f", prefs(), variant_of="b1", region="Africa"),
    response("a-b2", "alpha", "b2", prefs(INT=0, MOD=0)),
    response("a-v2a", "alpha", "v2a", prefs(INT=0), variant_of="b2", region="Asia"),
    response("a-v2x", "alpha", "v2x", prefs(ANS=0), variant_of="b2"),
    response("a-v3a", "alpha", "v3a", prefs(), variant_of="b3", region="Asia"),
    response("b-b1", "beta", "b1", prefs(ANS=0)),
    response("b-v1a", "beta", "v1a", prefs(INT=0, ANS=0), variant_of="b1", region="Asia"),
    response("b-v1f", "beta", "v1f", prefs(ANS=0), variant_of="b1", region="Africa"),
    response("b-v2a", "beta", "v2a", prefs(), variant_of="b2", region="Asia"),
]


def test_variant_pairs_pair_each_variant_with_the_same_models_base_answer():
    table = analyses.variant_pairs(make_sheet(SHEET_B))
    # alpha's v3a (no b3) and beta's v2a (no b2 from beta) have no pair.
    assert [(r.model, r.region, r.n_pairs) for r in table.itertuples()] == [
        ("alpha", "Asia", 2), ("alpha", "Africa", 1), ("alpha", "(none)", 1),
        ("beta", "Asia", 1), ("beta", "Africa", 1),
        (analyses.ALL_MODELS, "Asia", 3), (analyses.ALL_MODELS, "Africa", 2),
        (analyses.ALL_MODELS, "(none)", 1)]
    rows = {(r.model, r.region): r for r in table.itertuples()}
    # alpha Asia: (1.0 -> 0.9), (0.8 -> 0.9): differences -0.1, +0.1, mean 0, se 0.1, t(1) 12.7.
    alpha_asia = rows["alpha", "Asia"]
    assert alpha_asia.base_score.value == pytest.approx(0.9)
    assert alpha_asia.variant_score.value == pytest.approx(0.9)
    assert alpha_asia.difference.value == pytest.approx(0.0, abs=1e-12)
    assert alpha_asia.difference.ci95 == (-1.0, 1.0)
    assert alpha_asia.p_value == pytest.approx(1.0) and alpha_asia.p_value_reason is None
    # One pair: a difference but no interval and no test.
    beta_asia = rows["beta", "Asia"]
    assert beta_asia.difference.value == pytest.approx(-0.1) and beta_asia.difference.ci95 is None
    assert beta_asia.p_value is None and "two pairs" in beta_asia.p_value_reason
    # All models, Asia: bases 1.0, 0.8, 0.8; variants 0.9, 0.9, 0.7; differences -0.1, 0.1, -0.1.
    all_asia = rows[analyses.ALL_MODELS, "Asia"]
    assert all_asia.base_score.value == pytest.approx(2.6 / 3)
    assert all_asia.difference.value == pytest.approx(-0.1 / 3) and all_asia.difference.n == 3
    assert all_asia.p_value == pytest.approx(stats.wilcoxon([-0.1, 0.1, -0.1]).pvalue)
    # All models, Africa: (1.0 -> 1.0), (0.8 -> 0.8): nothing to test.
    all_africa = rows[analyses.ALL_MODELS, "Africa"]
    assert all_africa.difference.value == 0.0 and all_africa.difference.ci95 is None
    assert all_africa.p_value is None and "zero" in all_africa.p_value_reason



EVERY_ANALYSIS = {
    "score_by_model": (analyses.score_by_model,
                       ["model", "n", "mean_score", "final_correct", "fully_correct"]),
    "reasoning_gap": (analyses.reasoning_gap,
                      ["model", "kind", "n", "final_correct", "fully_correct", "reasoning_gap"]),
    "degradation": (lambda s: analyses.degradation(s, PREFS), ["model", "n", *PREFS.keys]),
    "error_prevalence": (lambda s: analyses.error_prevalence(s, CONCEPTUAL),
                         ["model", "n", *CONCEPTUAL.keys]),
    "heatmap": (lambda s: analyses.heatmap(s, "bloom_knowledge"), ["model", "n"]),
    "compliance_effect": (analyses.compliance_effect,
                          ["model", "n_compliant", "n_noncompliant", "mean_score_compliant",
                           "mean_score_noncompliant", "difference"]),
    "variant_pairs": (analyses.variant_pairs, ["model", "region", "n_pairs", "base_score", "variant_score",
                                               "difference", "p_value", "p_value_reason"]),
}


@pytest.mark.parametrize("name", EVERY_ANALYSIS)
def test_an_empty_sheet_gives_an_empty_table_with_the_columns(name):
    compute, columns = EVERY_ANALYSIS[name]
    table = compute(make_sheet([]))
    assert table.empty and list(table.columns) == columns


def test_one_response_gives_values_without_intervals():
    sheet = make_sheet(SHEET_A[:1])
    scores = by_model(analyses.score_by_model(sheet))
    assert list(scores.index) == ["alpha", analyses.ALL_MODELS]
    mean_score = scores.loc["alpha", "mean_score"]
    assert mean_score.value == 1.0 and mean_score.ci95 is None and mean_score.reason
    compliance = by_model(analyses.compliance_effect(sheet)).loc["alpha"]
    assert compliance["mean_score_noncompliant"].value is None
    assert compliance["mean_score_noncompliant"].n == 0
    assert compliance["difference"].value is None and compliance["difference"].n == 1
    wrong = analyses.reasoning_gap(make_sheet([response("x", "alpha", "q1", prefs(ANS=0))]))
    assert wrong["reasoning_gap"][0].value is None and wrong["reasoning_gap"][0].n == 0
    assert analyses.variant_pairs(sheet).empty


def test_a_sheet_filtered_to_one_model(sheet_a):
    beta = sheet_a[sheet_a["model"] == "beta"]
    for compute, _ in EVERY_ANALYSIS.values():
        assert set(compute(beta)["model"]) <= {"beta", analyses.ALL_MODELS}
    table = by_model(analyses.score_by_model(beta))
    assert table.loc["beta", "mean_score"] == table.loc[analyses.ALL_MODELS, "mean_score"]
    assert values(by_model(analyses.degradation(beta, PREFS)).loc["beta"], ["INT", "COR"]) == [0.5, 0.0]


def test_on_the_demo_against_its_database(tmp_path: Path):
    build_demo(tmp_path / "demo.physgrade")
    with Project.open(tmp_path / "demo.physgrade") as project:
        sheet = score_tables.sheet(score_tables.load(project), HUMAN_CONSENSUS)
        graded = set(sheet.index)
        attributes = {rid: (model, kind, question, base) for rid, model, kind, question, base in
                      project.conn.execute("SELECT r.id, r.model, q.kind, q.id, q.variant_of "
                                           "FROM responses r JOIN questions q ON q.id = r.question_id")
                      if rid in graded}
    assert len(attributes) == len(sheet) > 50

    # Final answer and full marks straight from the criteria, against the rubric maxima.
    counts: Counter = Counter()
    for rid, scores in sheet[list(score_tables.SHEET_CRITERIA)].iterrows():
        model, kind, _, _ = attributes[rid]
        rubric = rubric_for_kind(kind)
        final = scores["ANS"] == rubric.criterion("ANS").maximum
        full = all(math.isnan(scores[c.key]) or scores[c.key] == c.maximum for c in rubric.criteria)
        for who in (model, analyses.ALL_MODELS):
            counts[who, kind, "n"] += 1
            counts[who, kind, "final"] += final
            counts[who, kind, "gap"] += final and not full
            counts[who, kind, "full"] += full
    gap = analyses.reasoning_gap(sheet)
    assert len(gap) == len({key[:2] for key in counts})
    for row in gap.itertuples():
        assert row.n == counts[row.model, row.kind, "n"]
        assert row.final_correct == counts[row.model, row.kind, "final"]
        assert row.reasoning_gap.value == pytest.approx(
            counts[row.model, row.kind, "gap"] / counts[row.model, row.kind, "final"])

    # The end of the degradation walk is the fully-correct rate of the problem answers.
    degraded = by_model(analyses.degradation(sheet, PREFS))
    for model in degraded.index:
        assert degraded.loc[model, "ANS"].value == pytest.approx(
            counts[model, "problem", "full"] / counts[model, "problem", "n"])

    # Pairs: a variant answer whose base question the same model answered, both graded.
    answered = {(model, question) for model, _, question, _ in attributes.values()}
    pairs = Counter(model for model, _, _, base in attributes.values()
                    if base is not None and (model, base) in answered)
    table = analyses.variant_pairs(sheet)
    found = table[table["model"] != analyses.ALL_MODELS].groupby("model")["n_pairs"].sum()
    assert dict(found) == dict(pairs) and sum(pairs.values()) > 0
