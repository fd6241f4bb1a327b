"""Where reasoning breaks, in the core: a response's steps numbered once, a person's marks
committed one change at a time with history and undone whole, taxonomies edited and exported,
and marks held against the same rater's stage scores."""

from __future__ import annotations

import json

import pytest

from conftest import question, response, write_jsonl
from physgrade import scores, step_marks, taxonomies
from physgrade.cli import main
from physgrade.formats import FormatError
from physgrade.grading import compare, grading_item
from physgrade.importer import import_file
from physgrade.project import Project
from physgrade.raters import LLM, ensure_rater
from physgrade.rubric import PREFS, ScoreError
from physgrade.steps import response_steps, steps_of
from physgrade.template import parse_solution

TEMPLATE = """Problem Formulation:
Given: a = 2.0 m/s^2, t = 5.0 s, from rest.
Find: the final speed.

Step-by-step Detailed Solution:
Step 1: Reasoning: uniform acceleration from rest, so v = a t.
Step 3: Calculation: v = 2.0 * 5.0 = 10.0 m/s.

Final Answer:
10.0 m/s"""
PROSE = "The cyclist speeds up evenly.\n\nSo v = at = 10 m/s.\n  \n\nThat is the answer.\n"


@pytest.fixture
def marked(project: Project, tmp_path) -> Project:
    import_file(project, write_jsonl(tmp_path / "q.jsonl", [question("q-1")]), "questions")
    import_file(project, write_jsonl(tmp_path / "r.jsonl", [
        response("r-1", text=TEMPLATE), response("r-2", text=PROSE)]), "responses")
    return project


def history(project: Project) -> list[tuple]:
    return [(action, json.loads(old) if old else None, json.loads(new) if new else None)
            for action, old, new in project.conn.execute(
                "SELECT action, old, new FROM step_mark_history ORDER BY id")]


def test_steps_are_template_steps_by_position_else_paragraphs():
    steps = response_steps(TEMPLATE, parse_solution(TEMPLATE))
    assert [(s.number, s.label) for s in steps] == [(1, "Step 1"), (2, "Step 3")]
    assert steps[1].text.startswith("Calculation: v = 2.0")
    prose = response_steps(PROSE, parse_solution(PROSE))
    assert [(s.number, s.label, s.text) for s in prose] == [
        (1, "Paragraph 1", "The cyclist speeds up evenly."),
        (2, "Paragraph 2", "So v = at = 10 m/s."), (3, "Paragraph 3", "That is the answer.")]
    assert all(PROSE[s.span.start:s.span.end] == s.text for s in prose)


def test_a_persons_mark_is_kept_change_by_change_and_undone_whole(marked: Project):
    assert [s.label for s in steps_of(marked, "r-1")] == ["Step 1", "Step 3"]
    step_marks.mark_first_wrong(marked, "ana", "r-1", 2)
    step_marks.set_category(marked, "ana", "r-1", "p-refs", "calculation")
    before = step_marks.my_mark(marked, "ana", "r-1")
    changes = step_marks.rate_step(marked, "ana", "r-1", 1, 1)
    assert changes.responses == {"r-1"} and changes.questions == {"q-1"}
    mark = step_marks.my_mark(marked, "ana", "r-1")
    assert (mark.first_wrong, mark.taxonomy, mark.category, mark.ratings) == (
        2, "p-refs", "calculation", {1: 1})
    assert [action for action, _, _ in history(marked)] == ["set", "change", "change"]
    assert history(marked)[-1][2] == {"first_wrong": 2, "taxonomy": "p-refs",
                                      "category": "calculation", "ratings": {"1": 1}}
    step_marks.restore(marked, "ana", "r-1", before)  # undo the rating
    assert step_marks.my_mark(marked, "ana", "r-1").ratings == {}
    step_marks.mark_first_wrong(marked, "ana", "r-1", step_marks.NO_ERROR)  # no error: no category
    assert step_marks.my_mark(marked, "ana", "r-1").category is None
    step_marks.restore(marked, "ana", "r-1", None)  # nothing said: the row goes
    assert step_marks.my_mark(marked, "ana", "r-1") is None
    assert history(marked)[-1][0] == "clear"
    assert [m.rater for m in step_marks.marks_of(marked, "r-1")] == []


def test_a_mark_the_response_cannot_have_is_refused_and_changes_nothing(marked: Project):
    with pytest.raises(ScoreError, match="has 3 steps; step 4"):
        step_marks.mark_first_wrong(marked, "ana", "r-2", 4)
    with pytest.raises(ScoreError, match="before its category"):
        step_marks.set_category(marked, "ana", "r-2", "p-refs", "calculation")
    step_marks.mark_first_wrong(marked, "ana", "r-2", 3)
    with pytest.raises(ScoreError, match="no category 'nonsense'"):
        step_marks.set_category(marked, "ana", "r-2", "p-refs", "nonsense")
    with pytest.raises(ScoreError, match="-1, 0 or \\+1"):
        step_marks.rate_step(marked, "ana", "r-2", 1, 2)
    with pytest.raises(ScoreError, match="no step 9"):
        step_marks.rate_step(marked, "ana", "r-2", 9, 1)
    assert step_marks.my_mark(marked, "ana", "r-2").first_wrong == 3
    assert len(history(marked)) == 1


def test_a_category_against_a_full_stage_score_is_listed(marked: Project):
    scores.set_score(marked, "ana", "r-1", "CAL", 1)  # CAL at its maximum ...
    scores.set_score(marked, "ana", "r-1", "MOD", 0)
    step_marks.mark_first_wrong(marked, "ana", "r-1", 2)
    step_marks.set_category(marked, "ana", "r-1", "p-refs", "calculation")  # ... yet a slip
    found = step_marks.inconsistencies(marked)
    assert [(i.rater, i.response_id, i.category, i.criterion, i.value) for i in found] == [
        ("ana", "r-1", "calculation", "CAL", 1)]
    step_marks.set_category(marked, "ana", "r-1", "p-refs", "wrong_model")  # MOD = 0 agrees
    assert step_marks.inconsistencies(marked) == []
    step_marks.set_category(marked, "ana", "r-1", "physics-r1", "calc_error")  # no stages
    assert step_marks.inconsistencies(marked) == []


def test_taxonomies_are_exported_edited_and_refused_whole(project: Project, tmp_path, capsys):
    path = tmp_path / "p.physgrade"
    project.close()
    with Project.create(path):
        pass
    assert main(["taxonomy", str(path), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["default"] == "p-refs"
    assert [t["name"] for t in document["taxonomies"]] == ["p-refs", "physics-r1"]
    r1 = document["taxonomies"][1]
    assert len(r1["categories"]) == 9 and r1["categories"][8]["key"] == "diagram_misread"
    r1["categories"][0]["description"] = "Answers part (b) where (a) was asked."
    document["taxonomies"].append({"name": "optics-lab", "title": "Optics lab", "categories": [
        {"key": "sign_convention", "title": "Sign convention", "criteria": ["APP"]}]})
    document["default"] = "optics-lab"
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(document), encoding="utf-8")
    assert main(["taxonomy", str(path), "--set", str(edited)]) == 0
    with Project.open(path) as opened:
        assert taxonomies.taxonomy(opened).name == "optics-lab"
        assert taxonomies.taxonomy(opened, "physics-r1").category(
            "wrong_subpart").description == "Answers part (b) where (a) was asked."
        stored = taxonomies.document(opened)
    bad = dict(stored, taxonomies=[dict(stored["taxonomies"][0], categories=[
        {"key": "misread", "title": "Misread", "criteria": ["XYZ"]}])])
    with Project.open(path) as opened, pytest.raises(FormatError) as refused:
        taxonomies.set_taxonomies(opened, bad, "bad.json")
    assert "taxonomies[0].categories[0].criteria" in str(refused.value)
    with Project.open(path) as opened:
        assert taxonomies.document(opened) == stored  # nothing changed


def test_the_comparison_reveals_each_raters_first_wrong_step_with_the_scores(marked: Project):
    judge, _ = ensure_rater(marked, "arbiter", LLM, "v1")
    with marked.transaction():
        scores.write(marked, judge, scores.scored(marked, "r-1"),
                     {key: 1 for key in PREFS.keys} | {"COR": 2, "ANS": 2})
        step_marks.write_mark(marked, judge, "r-1", 2, "p-refs", "calculation")
    item = grading_item(marked, "r-1", "ana")
    assert compare(marked, item, "ana") is None  # blind until ana has scored everything
    for key in PREFS.keys:
        scores.set_score(marked, "ana", "r-1", key, 0)
    [verdict] = compare(marked, grading_item(marked, "r-1", "ana"), "ana")
    assert verdict.step == "Step 3 · Calculation error"  # the second step, written "Step 3"
    step_marks.mark_first_wrong(marked, "ana", "r-1", step_marks.NO_ERROR)
    steps = steps_of(marked, "r-1")
    assert step_marks.describe(marked, steps, step_marks.my_mark(marked, "ana", "r-1")) \
        == "No error"
    assert step_marks.describe(marked, steps, None) == ""
