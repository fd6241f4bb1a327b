"""Agreement on where reasoning breaks: exact and within-one first-error agreement, localisation
F1, ProcessBench's F1, and κ and α on the category, per model and per stage, checked against
values worked out by hand on a made-up set of marks; the report's "Where reasoning breaks"
section in the JSON and HTML outputs; the command line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import question, response, write_jsonl
from physgrade.analyses import ALL_MODELS
from physgrade.cli import main
from physgrade.importer import import_file
from physgrade.raters import HUMAN, LLM, ensure_rater
from physgrade.report.build import build_report, draft_report
from physgrade.report.model import PENDING
from physgrade.report.options import ReportOptions
from physgrade.report.steps import TITLE
from physgrade.report.writers import write_report
from physgrade.scores import set_score
from physgrade.scoring.store import ScoreStore
from physgrade.scoring.tables import load
from physgrade.selection import ResponseFilter
from physgrade.step_marks import write_mark
from physgrade.studies.step_agreement import (
    EXPERTS,
    JUDGE_EXPERT,
    ONE_SIDED,
    localisation_f1,
    measure,
    processbench_f1,
    read_marks,
)

#: Each rater's first wrong step of responses r-0 .. r-9 (0: no error); r-0..r-4 are model
#: m-a's, r-5..r-9 model m-b's.
ANN = [0, 2, 3, 1, 0, 2, 4, 0, 1, 3]
BOB = [0, 2, 4, 1, 1, 2, 0, 0, 3, 3]
JUDGE = [0, 3, 3, 2, 0, 0, 4, 1, 1, 2]
#: Their categories of the responses marked wrong (P-REFS unless a taxonomy is named).
ANN_CATEGORIES = {1: "calculation", 2: "wrong_model", 3: "misread", 5: "calculation",
                  6: "units", 8: "misread", 9: "units"}
BOB_CATEGORIES = {1: "calculation", 2: "wrong_model", 3: "wrong_model", 4: "calculation",
                  5: "calculation", 8: "misread", 9: ("physics-r1", "calc_error")}
JUDGE_CATEGORIES = {1: "calculation", 2: "wrong_model", 3: "misread", 6: "calculation",
                    7: "units", 8: "misread", 9: "calculation"}
STEPS = "\n\n".join(f"Step {i}: a line of work." for i in range(1, 5))


def kappa_by_hand(first: list[str], second: list[str]) -> float:
    n = len(first)
    observed = sum(a == b for a, b in zip(first, second)) / n
    chance = sum(first.count(c) / n * second.count(c) / n for c in set(first) | set(second))
    return (observed - chance) / (1 - chance)


def alpha_by_hand(first: list[str], second: list[str]) -> float:
    """Krippendorff's nominal α of two coders, nothing missing: 1 − (N − 1) D_o / D_e, with
    D_o twice the disagreeing units and D_e = N² − Σ n_c² over the N = 2n values."""
    values = first + second
    total = len(values)
    observed = 2 * sum(a != b for a, b in zip(first, second))
    expected = total ** 2 - sum(values.count(c) ** 2 for c in set(values))
    return 1 - (total - 1) * observed / expected


def mark(project, rater: int, index: int, steps: list[int], categories: dict) -> None:
    category = categories.get(index)
    taxonomy, key = category if isinstance(category, tuple) else ("p-refs", category)
    write_mark(project, rater, f"r-{index}", steps[index], taxonomy if key else None, key)


@pytest.fixture
def marked(project, tmp_path):
    import_file(project, write_jsonl(tmp_path / "q.jsonl", [question()]), "questions")
    import_file(project, write_jsonl(tmp_path / "r.jsonl", [
        response(f"r-{i}", model="m-a" if i < 5 else "m-b", text=STEPS) for i in range(10)]),
        "responses")
    with project.transaction():
        for name, kind, steps, categories in (("ann", HUMAN, ANN, ANN_CATEGORIES),
                                              ("bob", HUMAN, BOB, BOB_CATEGORIES),
                                              ("claude-x", LLM, JUDGE, JUDGE_CATEGORIES)):
            rater, _ = ensure_rater(project, name, kind)
            for index in range(10):
                mark(project, rater, index, steps, categories)
    # ann scores MOD at its maximum on r-2, whose first wrong step she put under "wrong model".
    set_score(project, "ann", "r-2", "MOD", 1)
    return project


def row(rows, first, second, group):
    return next(r for r in rows if (r.first, r.second, r.group) == (first, second, group))


def test_the_agreement_numbers_match_those_worked_out_by_hand(marked):
    found = measure(read_marks(marked), load(marked).responses, resamples=200)
    pairs = {(r.first, r.second, r.pair) for r in found.by_model}
    assert pairs == {("ann", "bob", EXPERTS), ("ann", "claude-x", JUDGE_EXPERT),
                     ("bob", "claude-x", JUDGE_EXPERT)}
    both = row(found.by_model, "ann", "bob", ALL_MODELS)
    assert both.n == 10
    assert both.exact.value == pytest.approx(6 / 10)  # r-0, 1, 3, 5, 7, 9
    assert both.within_one.value == pytest.approx(7 / 10)  # and r-2 (3 against 4)
    # Same wrong step on r-1, 3, 5, 9; different marks on r-2, 4, 6, 8: 2·4 / (2·4 + 4).
    assert both.f1.value == pytest.approx(8 / 12)
    # ann (the reference) marked 7 wrong, bob matched 4; she marked 3 right, bob matched 2.
    on_wrong, on_right = 4 / 7, 2 / 3
    assert both.processbench_f1.value == pytest.approx(
        2 * on_wrong * on_right / (on_wrong + on_right))
    # Both wrong with a category of one taxonomy: r-1, 2, 3, 5, 8 (r-9: bob used physics-r1).
    ann = ["calculation", "wrong_model", "misread", "calculation", "misread"]
    bob = ["calculation", "wrong_model", "wrong_model", "calculation", "misread"]
    assert both.categorised == 5
    assert both.kappa.value == pytest.approx(kappa_by_hand(ann, bob))
    assert both.alpha.value == pytest.approx(alpha_by_hand(ann, bob))
    assert both.alpha.ci95 is not None and both.f1.ci95 is not None
    assert both.f1.ci95[0] <= both.f1.value <= both.f1.ci95[1]
    judged = row(found.by_model, "ann", "claude-x", ALL_MODELS)
    assert judged.exact.value == pytest.approx(5 / 10)  # r-0, 2, 4, 6, 8
    # r-0..r-4 are m-a's: ann and bob agree on r-0, 1, 3.
    assert row(found.by_model, "ann", "bob", "m-a").exact.value == pytest.approx(3 / 5)
    assert row(found.by_model, "ann", "bob", "m-a").n == 5


def test_a_response_counts_in_each_stage_either_category_maps_to(marked):
    found = measure(read_marks(marked), load(marked).responses, resamples=0)
    stages = [r for r in found.by_stage if (r.first, r.second) == ("ann", "bob")]
    # misread -> INT, wrong_model -> MOD, calculation -> CAL (a problem's rubric), units -> COR.
    assert [r.group for r in stages] == ["INT (P-REFS)", "MOD (P-REFS)", "CAL (P-REFS)",
                                         "COR (P-REFS)"]
    by_stage = {r.group: r for r in stages}
    assert by_stage["CAL (P-REFS)"].n == 3  # r-1, r-4 (bob's), r-5
    assert by_stage["CAL (P-REFS)"].exact.value == pytest.approx(2 / 3)
    assert by_stage["MOD (P-REFS)"].n == 2 and by_stage["INT (P-REFS)"].n == 2  # r-3 in both
    assert by_stage["COR (P-REFS)"].exact.value == pytest.approx(1 / 2)


def test_where_each_rater_places_the_break(marked):
    found = measure(read_marks(marked), load(marked).responses, resamples=0)
    ann = next(b for b in found.breaks if (b.rater, b.model) == ("ann", "m-a"))
    assert (ann.marked, ann.wrong) == (5, 3)
    assert ann.no_error.value == pytest.approx(2 / 5)
    shares = {category: (count, share.value) for _, category, _, count, share in ann.categories}
    assert shares["calculation"] == (1, pytest.approx(1 / 3))
    assert shares["units"] == (0, 0.0)  # every category of the taxonomy is listed
    bob = next(b for b in found.breaks if (b.rater, b.model) == ("bob", ALL_MODELS))
    assert {t for t, *_ in bob.categories} == {"p-refs", "physics-r1"}


def test_the_f1s_on_edge_cases():
    none = np.array([0, 0, 0])
    assert localisation_f1(none, none).value is None  # nobody marked a wrong step
    assert localisation_f1(np.array([2, 0]), np.array([2, 0])).value == 1.0
    assert processbench_f1(np.array([1, 2]), np.array([1, 2])).reason == ONE_SIDED
    # A judge that always says "no error": every error missed, so F1 = 0.
    assert processbench_f1(np.array([1, 0, 3]), np.array([0, 0, 0])).value == 0.0
    assert localisation_f1(np.array([1, 0, 3]), np.array([0, 0, 0])).value == 0.0


def test_the_report_has_the_section_in_json_and_html(marked, tmp_path):
    report = build_report(marked, ReportOptions(resamples=50))
    section = next(s for s in report.sections if TITLE in s.title)
    names = [t.name for t in section.tables]
    assert names == ["step_breaks", "step_categories", "step_agreement", "step_agreement_stages",
                     "step_inconsistencies"]
    inconsistent = next(t for t in section.tables if t.name == "step_inconsistencies")
    assert [r[:6] for r in inconsistent.rows] == [("ann", "r-2", 3, "p-refs", "wrong_model",
                                                   "MOD")]
    assert [f.name for f in section.figures] == ["step_categories"]
    assert section.figures[0].draw().startswith(b"\x89PNG")
    write_report(report, tmp_path / "out", ["json", "html"])
    written = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert any(TITLE in s["title"] for s in written["sections"])
    assert TITLE in (tmp_path / "out" / "report.html").read_text(encoding="utf-8")


def test_a_draft_leaves_the_bootstrap_pending(marked):
    draft = draft_report(marked, ReportOptions(resamples=50), ScoreStore.read(marked))
    section = next(s for s in draft.report.sections if TITLE in s.title)
    agreement = next(t for t in section.tables if t.name == "step_agreement")
    alpha = agreement.columns.index("Krippendorff α")
    assert any(r[alpha].reason == PENDING for r in agreement.rows)


def test_a_project_without_marks_has_no_section(loaded):
    assert not any(TITLE in s.title for s in build_report(loaded).sections)


def test_the_command_prints_the_study(marked, capsys):
    path = marked.path
    marked.close()
    assert main(["step-agreement", str(path), "--json", "--resamples", "20"]) in (0, None)
    found = json.loads(capsys.readouterr().out)
    first = next(r for r in found["by_model"] if (r["rater"], r["other"], r["group"])
                 == ("ann", "bob", ALL_MODELS))
    assert first["exact"]["value"] == pytest.approx(0.6) and first["n"] == 10
    assert main(["step-agreement", str(path)]) in (0, None)
    assert "ann · bob (experts), all models: n = 10" in capsys.readouterr().out


def test_a_report_filtered_to_one_grader_compares_only_her_marks(marked):
    report = build_report(marked, ReportOptions(filter=ResponseFilter(graders=frozenset({"ann"})),
                                                resamples=0))
    section = next(s for s in report.sections if TITLE in s.title)
    agreement = next(t for t in section.tables if t.name == "step_agreement")
    assert {(r[0], r[1]) for r in agreement.rows} == {("ann", "claude-x")}



def test_one_judge_alone_shows_where_it_places_the_break_and_no_agreement(project, tmp_path):
    import_file(project, write_jsonl(tmp_path / "q.jsonl", [question()]), "questions")
    import_file(project, write_jsonl(tmp_path / "r.jsonl", [
        response(f"r-{i}", text=STEPS) for i in range(3)]), "responses")
    with project.transaction():
        rater, _ = ensure_rater(project, "claude-x", LLM)
        for i in range(3):
            write_mark(project, rater, f"r-{i}", 0, None, None)
    section = next(s for s in build_report(project, ReportOptions(resamples=0)).sections
                   if TITLE in s.title)
    assert [t.name for t in section.tables] == ["step_breaks"] and not section.figures
    assert section.tables[0].rows[0][:3] == ("claude-x", "orbit-7b", 3)
