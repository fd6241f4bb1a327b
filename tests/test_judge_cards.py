"""Judge cards: the measures on projects whose truth is known, the verdict rules, the section."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import question, response, write_jsonl
from physgrade import raters, scores
from physgrade.cli import main
from physgrade.importer import import_file
from physgrade.judge.client import connect
from physgrade.judge.prompts import Prompts
from physgrade.project import Project
from physgrade.refinement import refine
from physgrade.report.judge_cards import (
    CAUTION,
    LENGTH_SLOPE_CAUTION,
    MIN_GRADED_BY_BOTH,
    REVIEW,
    TRUSTWORTHY,
    Agreement,
    JudgeCard,
    LengthBias,
    StageLeniency,
    findings,
    judge_cards,
    judge_cards_section,
    read_versions,
    stage_shares,
)
from physgrade.report.model import Report
from physgrade.report.writers import report_html
from physgrade.rubric import CONCEPTUAL, PREFS
from physgrade.scoring import tables as score_tables
from physgrade.selection import ResponseFilter
from physgrade.stats.describe import proportion
from physgrade.stats.estimate import Estimate
from physgrade.tasks import Task

#: Responses of the generated project; response i has length level i % 5 (250 · 2^level
#: characters) and group i // 5, which sets the expert's scores independently of the length.
RESPONSES = 100
EXPERT = "expert-1"


def level(i: int) -> int:
    return i % 5


def group(i: int) -> int:
    return i // 5


def expert_scores(i: int) -> dict[str, int]:
    """INT is 0 on 40% of responses (groups 0, 1, 5, 6, ...), evenly over the lengths."""
    return {"INT": 0 if group(i) % 5 in (0, 1) else 1, "MOD": group(i) % 2, "CON": 1, "APP": 1,
            "CAL": 0, "COH": 0, "COR": 2, "ANS": 2 if i % 2 == 0 else 0}


def formulation_lenient(i: int) -> dict[str, int]:
    """The expert's scores but INT always 1: lenient on the formulation stage only."""
    return expert_scores(i) | {"INT": 1}


def favours_length(i: int) -> dict[str, int]:
    """Gives the step-by-step stage (level - 2) points more than the expert (so the total
    difference is (level - 2) / 10, 0 on average), and MOD where the expert did not on groups
    0 and 10 (+0.1 on every length alike, so that the fit has residuals but the slope stays
    exactly 0.1 per doubling)."""
    steps = {0: (0, 0, 0, 0), 1: (0, 1, 0, 0), 2: (1, 1, 0, 0), 3: (1, 1, 1, 0),
             4: (1, 1, 1, 1)}[level(i)]
    mine = expert_scores(i) | dict(zip(("CON", "APP", "CAL", "COH"), steps))
    if group(i) % 10 == 0:
        mine["MOD"] = 1
    return mine


def flips_answers(i: int) -> dict[str, int]:
    """Reverses the final answer on 30% of responses, half of them up and half down."""
    mine = expert_scores(i)
    if group(i) % 10 in (0, 1, 2):
        mine["ANS"] = 2 - mine["ANS"]
    return mine


def steady(i: int) -> dict[str, int]:
    """The expert's scores but MOD reversed on every seventh response."""
    mine = expert_scores(i)
    if i % 7 == 0:
        mine["MOD"] = 1 - mine["MOD"]
    return mine


def generous(i: int) -> dict[str, int]:
    """Full marks everywhere."""
    return {criterion.key: criterion.maximum for criterion in PREFS.criteria}


def write_verdicts(project: Project, name: str, version: str, stamp: str, scoring,
                   kind: str = raters.LLM, ids: range = range(RESPONSES)) -> None:
    with project.transaction():
        rater, _ = raters.ensure_rater(project, name, kind, version)
        for i in ids:
            scores.write(project, rater, scores.scored(project, f"r-{i}"), scoring(i),
                         stamp=stamp)


@pytest.fixture(scope="module")
def known(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """A project whose judges each carry one known fault, graded by one expert (read only)."""
    tmp_path = tmp_path_factory.mktemp("known")
    with Project.create(tmp_path / "known.physgrade") as project:
        import_file(project, write_jsonl(tmp_path / "q.jsonl", [
            question(f"q-{i}") for i in range(RESPONSES)]), "questions")
        import_file(project, write_jsonl(tmp_path / "r.jsonl", [
            response(f"r-{i}", f"q-{i}", text=("The speed is 10 m/s. " * 200)[:250 * 2 ** level(i)])
            for i in range(RESPONSES)]), "responses")
        import_file(project, write_jsonl(tmp_path / "g.jsonl", [
            {"response_id": f"r-{i}", "grader": EXPERT, "scores": expert_scores(i),
             "graded_at": "2025-12-01T09:00:00Z"} for i in range(RESPONSES)]), "grades")
        # Versions made in an order their names do not sort in: zeta first, alpha later.
        write_verdicts(project, "steady", "zeta", "2026-01-01T09:00:00.000Z", steady)
        write_verdicts(project, "steady", "alpha", "2026-03-01T09:00:00.000Z", formulation_lenient)
        for name, scoring in (("formulation", formulation_lenient), ("long", favours_length),
                              ("flipper", flips_answers), ("generous", generous)):
            write_verdicts(project, name, "v1", "2026-02-01T09:00:00.000Z", scoring)
        write_verdicts(project, "few", "v1", "2026-02-01T09:00:00.000Z", expert_scores,
                       ids=range(MIN_GRADED_BY_BOTH - 10))
        # The rule checker scores final answers only: it gets no card.
        write_verdicts(project, "rules", "exact", "2026-02-01T09:00:00.000Z",
                       lambda i: {"ANS": expert_scores(i)["ANS"]}, kind=raters.RULES)
        yield project


@pytest.fixture(scope="module")
def cards(known: Project) -> dict[str, JudgeCard]:
    data = score_tables.load(known)
    return {card.judge: card for card in judge_cards(read_versions(known), data)}


def stage(card: JudgeCard, name: str) -> StageLeniency:
    return next(s for s in card.stages if s.stage == name and s.rubric is PREFS)


def test_every_llm_judge_gets_a_card_against_the_expert(cards: dict[str, JudgeCard]) -> None:
    assert sorted(cards) == ["few [v1]", "flipper [v1]", "formulation [v1]", "generous [v1]",
                             "long [v1]", "steady [alpha]", "steady [zeta]"]
    assert {card.reference for card in cards.values()} == {EXPERT}


def test_leniency_is_measured_stage_by_stage(cards: dict[str, JudgeCard]) -> None:
    card = cards["formulation [v1]"]
    # INT goes 0 -> 1 on 40 of 100 responses: +1/2 of the formulation stage there.
    formulation = stage(card, "Problem formulation")
    assert formulation.difference.value == pytest.approx(0.2)
    assert formulation.difference.n == RESPONSES
    assert formulation.higher.value == pytest.approx(0.4)
    assert formulation.lower.value == 0
    spread = 0.5 * np.sqrt(0.4 * 0.6 * RESPONSES / (RESPONSES - 1)) / np.sqrt(RESPONSES)
    low, high = formulation.difference.ci95
    assert (high - low) / 2 == pytest.approx(1.984 * spread, rel=1e-3)
    for other in ("Step-by-step solution", "Final answer"):
        assert stage(card, other).difference.value == 0
        assert stage(card, other).higher.value == 0
    # Only P-REFS was scored: no conceptual stages.
    assert {s.rubric for s in card.stages} == {PREFS}
    assert card.verdict == CAUTION
    assert card.reasons == ["Lenient on Problem formulation (P-REFS): +20.0 points "
                            f"[{low * 100:.1f}, {high * 100:.1f}]."]
    overall = next(f for f in card.findings if f.check == "Overall leniency")
    assert overall.verdict == TRUSTWORTHY and overall.result.value == pytest.approx(0.04)


def test_a_judge_that_favours_long_responses_is_caught(cards: dict[str, JudgeCard]) -> None:
    card = cards["long [v1]"]
    slope = card.length.slope
    assert slope.n == RESPONSES
    assert slope.value == pytest.approx(0.1)
    assert 0 < slope.ci95[0] < 0.1 < slope.ci95[1]
    assert card.length.spearman.value > 0.8
    assert sorted(set(card.length.lengths)) == [250, 500, 1000, 2000, 4000]
    assert card.verdict == CAUTION
    assert len(card.reasons) == 1 and card.reasons[0].startswith(
        f"Favours long responses more than {EXPERT} does: +10.0 points per doubling")
    # The others show no such slope, and none is flagged for it.
    for judge in ("formulation [v1]", "steady [zeta]"):
        other = cards[judge]
        assert other.length.slope.ci95 is None or other.length.slope.ci95[0] <= 0
        assert next(f for f in other.findings if f.check.startswith("Length")).verdict \
            == TRUSTWORTHY


def test_prompt_versions_keep_the_order_they_were_made_in(cards: dict[str, JudgeCard]) -> None:
    for judge in ("steady [alpha]", "steady [zeta]"):
        versions = cards[judge].versions
        assert [v.version for v in versions] == ["zeta", "alpha"]
        assert [v.first_assessed[:10] for v in versions] == ["2026-01-01", "2026-03-01"]
    zeta, alpha = cards["steady [zeta]"].versions
    assert zeta.final_answer.value == alpha.final_answer.value == 1
    assert alpha.leniency.value == pytest.approx(0.04)  # alpha is the formulation-lenient prompt
    assert zeta.graded_by_both == RESPONSES
    assert cards["long [v1]"].versions == [cards["long [v1]"].versions[0]]


def test_each_verdict_says_why(cards: dict[str, JudgeCard]) -> None:
    steady = cards["steady [zeta]"]
    assert steady.verdict == TRUSTWORTHY
    assert steady.reasons[:2] == [f"{RESPONSES} responses graded by both the judge and {EXPERT}.",
                                  f"Agrees with {EXPERT} on 100% of final answers (n = 100)."]
    few = cards["few [v1]"]
    assert few.verdict == REVIEW
    # Its 20 agreeing final answers could still be 84% (Wilson), below the caution line.
    assert few.reasons == [f"Only 20 responses graded by both the judge and {EXPERT}: too few "
                           f"to vouch for it ({MIN_GRADED_BY_BOTH} needed).",
                           f"Agrees with {EXPERT} on 100% of final answers (n = 20); it could "
                           "be as low as 84%."]
    flipper = cards["flipper [v1]"]
    assert flipper.verdict == REVIEW
    final = flipper.versions[0].final_answer
    assert final.value == pytest.approx(0.7) and final.n == RESPONSES
    assert flipper.reasons[0].startswith(f"Agrees with {EXPERT} on 70% of final answers")
    generous = cards["generous [v1]"]
    assert generous.verdict == REVIEW
    assert generous.versions[0].leniency.value == pytest.approx(1 - 0.61)
    assert any(r.startswith("Lenient overall: +39.0 points") for r in generous.reasons)


def estimate(value: float, half: float, n: int = 200) -> Estimate:
    return Estimate(value, (value - half, value + half), n)


def verdicts(graded: int = 200, final: Estimate = estimate(0.95, 0.02),
             leniency: Estimate = estimate(0.0, 0.02), stage_difference: Estimate =
             estimate(0.0, 0.03), slope: Estimate = estimate(0.0, 0.01)) -> dict[str, str]:
    """The verdict each rule gives a judge with these measures."""
    share = estimate(0.1, 0.05)
    stages = [StageLeniency(PREFS, "Final answer", stage_difference, share, share)]
    length = LengthBias(slope, 0.0, estimate(0.0, 0.1), np.ones(1), np.zeros(1))
    mine = Agreement("j [v1]", "v1", "2026-01-01", graded, final, estimate(0.9, 0.02), leniency)
    return {f.check: f.verdict for f in findings(mine, stages, length, "expert")}


def test_the_rules_draw_their_lines_where_they_say() -> None:
    assert set(verdicts().values()) == {TRUSTWORTHY}
    assert verdicts(graded=29)["Responses graded by both"] == REVIEW
    assert verdicts(graded=30)["Responses graded by both"] == TRUSTWORTHY
    final = "Final-answer agreement"
    assert verdicts(final=estimate(0.93, 0.02))[final] == TRUSTWORTHY
    assert verdicts(final=estimate(0.90, 0.02))[final] == CAUTION
    assert verdicts(final=estimate(0.81, 0.02))[final] == REVIEW
    assert verdicts(final=Estimate.unavailable(0, "none"))[final] == REVIEW
    # A value alone cannot pass as its own lower end.
    assert verdicts(final=Estimate(1.0, None, 200, "no interval"))[final] == REVIEW
    # Every final answer agreeing: Wilson's lower end decides (88.6% at 30, 90.1% at 35).
    assert verdicts(final=proportion(30, 30))[final] == CAUTION
    assert verdicts(final=proportion(35, 35))[final] == TRUSTWORTHY
    overall = "Overall leniency"
    assert verdicts(leniency=estimate(0.07, 0.01))[overall] == CAUTION
    assert verdicts(leniency=estimate(-0.07, 0.01))[overall] == CAUTION  # strict counts too
    assert verdicts(leniency=estimate(0.07, 0.08))[overall] == TRUSTWORTHY  # could be 0
    assert verdicts(leniency=estimate(0.12, 0.01))[overall] == REVIEW
    stages = "Leniency per stage (largest)"
    assert verdicts(stage_difference=estimate(0.14, 0.03))[stages] == CAUTION
    assert verdicts(stage_difference=estimate(-0.14, 0.03))[stages] == CAUTION
    assert verdicts(stage_difference=estimate(0.14, 0.05))[stages] == TRUSTWORTHY
    length = "Length bias (per doubling)"
    assert verdicts(slope=estimate(LENGTH_SLOPE_CAUTION, 0.01))[length] == CAUTION
    assert verdicts(slope=estimate(0.01, 0.005))[length] == TRUSTWORTHY  # too small to matter
    assert verdicts(slope=estimate(-0.05, 0.01))[length] == TRUSTWORTHY  # favours short ones


@pytest.fixture(scope="module")
def few_agreeing(tmp_path_factory: pytest.TempPathFactory) -> dict[str, JudgeCard]:
    """Cards of two judges that agree with the expert on every final answer, one on 30
    responses and one on 38."""
    tmp_path = tmp_path_factory.mktemp("few_agreeing")
    graded = range(38)
    with Project.create(tmp_path / "few.physgrade") as project:
        import_file(project, write_jsonl(tmp_path / "q.jsonl", [
            question(f"q-{i}") for i in graded]), "questions")
        import_file(project, write_jsonl(tmp_path / "r.jsonl", [
            response(f"r-{i}", f"q-{i}") for i in graded]), "responses")
        import_file(project, write_jsonl(tmp_path / "g.jsonl", [
            {"response_id": f"r-{i}", "grader": EXPERT, "scores": expert_scores(i),
             "graded_at": "2025-12-01T09:00:00Z"} for i in graded]), "grades")
        for name, ids in (("thirty", range(30)), ("thirty-eight", graded)):
            write_verdicts(project, name, "v1", "2026-02-01T09:00:00.000Z", expert_scores, ids=ids)
        return {card.judge: card for card in judge_cards(read_versions(project),
                                                         score_tables.load(project))}


def test_all_final_answers_agreeing_is_judged_by_wilsons_lower_end(
        few_agreeing: dict[str, JudgeCard]) -> None:
    """At 30 of 30 the agreement could still be 88.6%, below the caution line of 90%; at 38
    of 38 it is surely above it (90.8%). A t interval would have read 100% for both."""
    for judge, n, low, verdict in (("thirty [v1]", 30, 0.88649, CAUTION),
                                   ("thirty-eight [v1]", 38, 0.90819, TRUSTWORTHY)):
        card = few_agreeing[judge]
        final = next(f for f in card.findings if f.check == "Final-answer agreement")
        assert final.result.value == 1.0 and final.result.n == n
        assert final.result.ci95 == pytest.approx((low, 1.0), abs=1e-5)
        assert final.verdict == verdict
        exact = card.versions[0].exact
        assert exact.value == 1.0 and exact.ci95 == pytest.approx((low, 1.0), abs=1e-5)
    assert few_agreeing["thirty [v1]"].reasons == [
        f"Agrees with {EXPERT} on 100% of final answers (n = 30); it could be as low as 89%."]


def test_a_stage_counts_only_where_scored_whole(loaded: Project) -> None:
    """N/A leaves the stage's maximum; a stage scored in part is left out."""
    scores.set_score(loaded, EXPERT, "r-1", "INT", 1)  # formulation half scored
    for key, value in {"SET": 1, "CON": 1, "EXE": None, "COH": 0, "ANS": 1}.items():
        scores.set_score(loaded, EXPERT, "r-3", key, value)
    data = score_tables.load(loaded)
    conceptual = stage_shares(data, EXPERT, CONCEPTUAL)
    assert conceptual.loc["r-3"].to_dict() == {"Setup": 1.0, "Reasoning": 0.5,
                                                "Final answer": 1.0}
    prefs = stage_shares(data, EXPERT, PREFS)
    assert prefs.loc["r-1"].isna().all()


def test_no_section_without_a_judge_or_an_expert(known: Project, loaded: Project) -> None:
    empty = score_tables.load(loaded)
    assert judge_cards_section(read_versions(loaded), empty, 7, Task()) is None
    no_expert = score_tables.load(known, ResponseFilter(graders=frozenset({"nobody"})))
    assert not no_expert.graders and no_expert.judges
    assert judge_cards_section(read_versions(known), no_expert, 7, Task()) is None
    rules_only = score_tables.load(known, ResponseFilter(judges=frozenset({"rules [exact]"})))
    assert rules_only.judges == ["rules [exact]"] and rules_only.graders == [EXPERT]
    assert judge_cards_section(read_versions(known), rules_only, 7, Task()) is None


def test_the_section_reads_in_html(known: Project, tmp_path: Path) -> None:
    data = score_tables.load(known)
    section = judge_cards_section(read_versions(known), data, 7, Task())
    assert section is not None and section.title == "7. Judge cards"
    names = [table.name for table in section.tables]
    assert len(names) == len(set(names)) == 2 + 4 * 7  # verdicts, rules, 4 per card
    assert all(name.replace("_", "").isalnum() for name in names)
    verdicts_table = section.tables[0]
    assert [row[:2] for row in verdicts_table.rows][:2] == [("few [v1]", REVIEW),
                                                            ("flipper [v1]", REVIEW)]
    cards = [t for t in section.tables if t.name.startswith("judge_card_") and
             not t.name.endswith(("_stages", "_length", "_versions"))]
    assert [t.title for t in cards][-2:] == ["steady [alpha]: use with caution",
                                             "steady [zeta]: trustworthy"]
    assert all(f.table in names and f.png.startswith(b"\x89PNG") for f in section.figures)
    page = report_html(Report("cards", {}, [section]))
    assert "steady [zeta]: agreement per prompt version" in page
    assert page.index("<td>zeta</td>") < page.index("<td>alpha</td>")
    assert "Lenient on Problem formulation (P-REFS)" in page
    assert EXPERT in section.intro
    rules = next(t for t in section.tables if t.name == "judge_verdict_rules")
    assert [row[0] for row in rules.rows] == ["trustworthy", "use with caution", "needs review"]
    assert "fewer than 30 responses graded by both" in rules.rows[2][2]


def test_demo_cards_compare_judges_with_the_consensus(demo: Path) -> None:
    with Project.open(demo) as project:
        data = score_tables.load(project)
        versions = read_versions(project)
    section = judge_cards_section(versions, data, 7, Task())  # the project is closed
    assert section is not None
    summary = section.tables[0]
    assert [row[0] for row in summary.rows] == ["arbiter-large [prefs-v1]",
                                                "arbiter-mini [prefs-v1]"]
    assert "human consensus" in section.intro
    stages = next(t for t in section.tables if t.name.endswith("large__prefs_v1_stages"))
    assert [(row[0], row[1]) for row in stages.rows] == [
        ("P-REFS", stage) for stage in PREFS.stages] + [
        ("conceptual", stage) for stage in CONCEPTUAL.stages]
    assert all(row[2] > 0 for row in stages.rows)


def test_a_judge_whose_scores_came_without_assessments_still_has_a_card(demo: Path) -> None:
    # Scores written directly (as a bench project or an old tool leaves them) have no
    # assessment row, so no time of first use: the card is there, its version undated.
    with Project.open(demo) as project:
        with project.transaction():
            project.conn.execute("DELETE FROM assessments WHERE rater_id = (SELECT id FROM "
                                 "raters WHERE name = 'arbiter-mini')")
        data = score_tables.load(project)
        section = judge_cards_section(read_versions(project), data, 7, Task())
    assert section is not None
    assert [row[0] for row in section.tables[0].rows] == ["arbiter-large [prefs-v1]",
                                                          "arbiter-mini [prefs-v1]"]
    versions = next(t for t in section.tables if t.name.endswith("mini__prefs_v1_versions"))
    assert [row[:2] for row in versions.rows] == [("prefs-v1", "—")]


# -- refined versions ------------------------------------------------------------------------------

MODEL = "claude-haiku-4-5"


def exact_by_hand(data: score_tables.ScoreData, judge: str, reference: str,
                  ids: set[str]) -> tuple[float, int]:
    """Exact agreement on ``ids`` from the score rows: per response, the share of criteria both
    scored with the same number; then the mean over responses, and how many there are."""
    keys = ["response_id", "rubric", "criterion"]
    both = pd.concat({side: data.rows(rater).set_index(keys)["value"]
                      for side, rater in (("judge", judge), ("reference", reference))},
                     axis=1, join="inner").dropna()
    both = both[both.index.get_level_values("response_id").isin(ids)]
    per_response = (both["judge"] == both["reference"]).groupby(level="response_id").mean()
    return float(per_response.mean()), len(per_response)


def test_a_refined_version_says_what_it_came_from_and_how_it_did_on_held_out_grades(
        demo: Path, fake) -> None:
    # The model judges every demo response under the bundled prompt, then is refined from its
    # own verdicts: "before" is that version, measured on the held-out half only.
    assert main(["judge", str(demo), "--model", MODEL]) == 0
    with Project.open(demo) as project:
        planned = refine.plan(project, refine.Settings(MODEL, MODEL), Prompts.load())
        done = refine.run(project, connect(), planned, None, 4)
        data = score_tables.load(project)
        versions = read_versions(project)
    cards = {card.judge: card for card in judge_cards(versions, data)}
    section = judge_cards_section(versions, data, 7, Task())
    assert done.stopped is None and planned.own_verdicts
    before, after = planned.before.rater, planned.after.rater
    heldout = set(done.plan.split.heldout)
    card = cards[after]
    assert [v.judge for v in card.versions] == [before, after]
    assert [v.judge for v in cards[before].versions] == [before, after]
    base, refined = card.versions
    assert base.made_from() == "—"
    assert refined.made_from() == f"{planned.before.prompt_version} + 4 examples"
    for version in card.versions:
        value, n = exact_by_hand(data, version.judge, card.reference, heldout)
        assert version.heldout.value == pytest.approx(value) and version.heldout.n == n
    # The base judged every response the consensus covers; held out, it is measured on part.
    assert base.heldout.n == len(heldout) < base.exact.n
    for judge in ("arbiter-large [prefs-v1]", "arbiter-mini [prefs-v1]"):
        untouched = cards[judge].versions[0]
        assert untouched.made_from() == "—"
        assert untouched.heldout.value is None
        assert untouched.heldout.reason == "not part of a refinement"
    table = next(t for t in section.tables if t.title == f"{after}: agreement per prompt version")
    rows = [[table.text(i, j) for j in range(len(table.columns))] for i in range(len(table.rows))]
    made, held = table.columns.index("Made from"), table.columns.index("Held-out exact")
    assert [row[made] for row in rows] == ["—", f"{planned.before.prompt_version} + 4 examples"]
    assert rows[0][held] == base.heldout.text(percent=True) != "n/a"
    assert "held out by the latest refinement" in table.note
    mini = next(t for t in section.tables if t.name.endswith("mini__prefs_v1_versions"))
    assert mini.rows[0][mini.columns.index("Held-out exact")].reason == \
        "not part of a refinement"


def test_a_refinement_of_another_judge_is_measured_on_its_held_out_part(
        demo: Path, fake) -> None:
    with Project.open(demo) as project:
        planned = refine.plan(project, refine.Settings("arbiter-mini", MODEL), Prompts.load())
        refine.run(project, connect(), planned, None, 4)
        data = score_tables.load(project)
        card = next(c for c in judge_cards(read_versions(project), data)
                    if c.judge == planned.after.rater)
    base, refined = card.versions
    assert refined.made_from() == f"{planned.before.prompt_version} + 4 examples"
    # Before and after judged the held-out part alone: there, both are measured whole.
    for version in card.versions:
        assert version.heldout == version.exact
        assert version.heldout.n == len(planned.split.heldout)
