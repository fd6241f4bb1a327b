"""The judge names the first wrong step and its category: asked in the tool, checked against the
response's steps and the project's taxonomy, stored as the judge's step mark, exported and
imported with each verdict and grade."""

from __future__ import annotations

import json

import pytest

from conftest import PREFS_FULL, question, response, write_jsonl
from fake_anthropic import Fault, schema_answer
from physgrade import step_marks, taxonomies
from physgrade.changes import RecordKind
from physgrade.exporter import export_kind
from physgrade.formats import ImportErrors
from physgrade.importer import import_file
from physgrade.judge import batches, verdicts
from physgrade.judge.client import connect
from physgrade.judge.pricing import price_for
from physgrade.judge.prompts import TAXONOMY, Prompts, for_project
from physgrade.judge.purposes import run_plan
from physgrade.judge.scope import Scope
from physgrade.judge.tools import CATEGORY, FIRST_WRONG, InvalidOutput, StepQuestion, read_scores
from physgrade.project import Project
from physgrade.raters import rater_label
from physgrade.rubric import PREFS

MODEL = "claude-haiku-4-5"
#: Three template steps written as 1, 3 and 4 (the judge sees 1, 2 and 3), and brackets of the
#: judge's own kind in the text.
STEPPED = """Problem Formulation:
Given: a = 2.0 m/s^2, t = 5.0 s, from rest
Step-by-step Detailed Solution:
Step 1:
Reasoning: constant acceleration from rest, so v = a t.
Step 3:
Calculation: v = 2.0 x 5.0 = 12 m/s \u27e69\u27e7
Step 4:
Result: v = 12 m/s
Final Answer: 12 m/s
"""
FULL = {key: {"score": value, "rationale": "checked"} for key, value in PREFS_FULL.items()}


@pytest.fixture
def stepped(project: Project, tmp_path) -> Project:
    import_file(project, write_jsonl(tmp_path / "q.jsonl", [question()]), "questions")
    import_file(project, write_jsonl(tmp_path / "r.jsonl", [
        response("r-1", text=STEPPED), response("r-2", model="quark", text="It is 10 m/s.")]),
        "responses")
    return project


def wrong_at_two(body: dict) -> dict:
    """The loopback judge: step 2 of the stepped response is a calculation error; any other
    response is right throughout (the schema's default answer)."""
    answer = schema_answer(body)
    if "\u27e62\u27e7" in body["messages"][0]["content"]:
        answer |= {FIRST_WRONG: 2, CATEGORY: "calculation"}
    return answer


def run(project: Project, prompts: Prompts, scope: Scope = Scope()):
    plan = verdicts.plan(project, MODEL, prompts, scope, price_for(MODEL))
    return plan, run_plan(project, connect(), plan, prompts, price_for(MODEL), 2)


def judge_marks(project: Project) -> dict[str, tuple]:
    return {mark.response_id: (mark.kind, mark.first_wrong, mark.taxonomy, mark.category)
            for mark in step_marks.all_marks(project) if mark.kind == "llm"}


def test_the_request_marks_the_steps_as_physgrade_numbers_them(stepped, fake):
    fake.answer = wrong_at_two
    run(stepped, for_project(stepped))
    body = next(r.body for r in fake.message_requests()
                if "Step 3" in r.body["messages"][0]["content"])
    prompt = body["messages"][0]["content"]
    assert "Step 1:\n\u27e61\u27e7 Reasoning" in prompt and "Step 3:\n\u27e62\u27e7 Calc" in prompt
    assert "\u27e63\u27e7 Result" in prompt and "12 m/s [9]" in prompt  # its own are plain
    assert "- calculation (Calculation error): " in prompt
    schema = body["tools"][0]["input_schema"]
    assert {FIRST_WRONG, CATEGORY} <= set(schema["required"])
    assert schema["properties"][CATEGORY]["enum"] == [*taxonomies.BUILT_IN["p-refs"].keys, None]


def test_the_judge_names_the_step_and_it_is_stored_as_its_mark(stepped, fake):
    fake.answer = wrong_at_two
    plan, summary = run(stepped, for_project(stepped))
    assert summary.done == 2 and RecordKind.STEPS in summary.changes.kinds
    assert judge_marks(stepped) == {"r-1": ("llm", 2, "p-refs", "calculation"),
                                    "r-2": ("llm", 0, None, None)}
    [mark] = [m for m in step_marks.marks_of(stepped, "r-1") if m.kind == "llm"]
    assert mark.rater == rater_label(MODEL, verdicts.prompt_version(for_project(stepped)))
    again, summary = run(stepped, for_project(stepped))  # cached: nothing asked, nothing changed
    assert again.pending == () and summary.changes.kinds == frozenset()


def test_batch_results_store_the_step_too(stepped, fake):
    fake.answer = wrong_at_two
    prompts = for_project(stepped)
    plan = verdicts.plan(stepped, MODEL, prompts, Scope(), price_for(MODEL), batch=True)
    batches.submit(stepped, connect(), plan, prompts)
    fake.finish_batches()
    [ended] = batches.collect(stepped, connect(), prompts)
    assert ended.stored == 2 and RecordKind.STEPS in ended.changes.kinds
    assert judge_marks(stepped)["r-1"] == ("llm", 2, "p-refs", "calculation")


def test_a_step_the_response_lacks_or_an_unknown_category_is_refused(stepped, fake):
    fake.push(Fault(tool_input=FULL | {FIRST_WRONG: 4, CATEGORY: "calculation"}),
              Fault(tool_input=FULL | {FIRST_WRONG: 2, CATEGORY: "sign_error"}))
    prompts = for_project(stepped)
    run(stepped, prompts, Scope(limit=1))
    status, raw = stepped.conn.execute("SELECT status, raw FROM assessments WHERE "
                                       "response_id = 'r-1'").fetchone()
    assert status == "failed" and "sign_error" in raw and judge_marks(stepped) == {}
    retry = fake.message_requests()[1].body["messages"][-1]["content"][0]["content"]
    assert "first_wrong_step must be 0 (no wrong step) or a step of the response (from 1 to 3)" \
        in retry
    asked = StepQuestion(3, taxonomies.BUILT_IN["p-refs"])
    with pytest.raises(InvalidOutput, match="must be one of misread, wrong_model"):
        read_scores(PREFS, False, FULL | {FIRST_WRONG: 1, CATEGORY: "sign_error"}, asked)
    for step in (-1, True, "2", 1.5):
        with pytest.raises(InvalidOutput, match=FIRST_WRONG):
            read_scores(PREFS, False, FULL | {FIRST_WRONG: step, CATEGORY: None}, asked)
    with pytest.raises(InvalidOutput, match=f"{FIRST_WRONG} not in"):  # not asked, not allowed
        read_scores(PREFS, False, FULL | {FIRST_WRONG: 1})
    # No wrong step has no category; a wrong step may go without one.
    assert read_scores(PREFS, False, FULL | {FIRST_WRONG: 0, CATEGORY: "units"}, asked).category \
        is None
    named = read_scores(PREFS, False, FULL | {FIRST_WRONG: 3, CATEGORY: None}, asked)
    assert (named.first_wrong, named.taxonomy, named.category) == (3, None, None)


def test_the_prompt_version_covers_the_step_question_and_the_taxonomy(stepped):
    prompts = for_project(stepped)
    version = verdicts.prompt_version(prompts)
    assert version == verdicts.prompt_version(Prompts.load())  # the default taxonomy
    # Texts recorded before verdicts asked for the step keep their version and their requests.
    before = Prompts.stored({name: text for name, text in prompts.texts.items()
                             if name not in verdicts.STEP_TEXTS})
    assert before.taxonomy() is None and verdicts.prompt_version(before) != version
    item = next(verdicts.items(stepped, ("r-1",)))
    request = verdicts.request_for(before, item)
    assert FIRST_WRONG not in request.tool["input_schema"]["properties"]
    assert "\u27e6" not in request.prompt.replace("\u27e69\u27e7", "")
    assert verdicts.texts(prompts)[-2:] == verdicts.STEP_TEXTS
    # Another default taxonomy, or a reworded category, is another version.
    taxonomies.set_taxonomies(stepped, {"default": "physics-r1"}, "test")
    other = for_project(stepped)
    assert other.taxonomy().name == "physics-r1" and verdicts.prompt_version(other) != version
    document = taxonomies.document(stepped)
    [prefs] = [t for t in document["taxonomies"] if t["name"] == "p-refs"]
    prefs["categories"][0]["description"] = "A given is read wrongly."
    taxonomies.set_taxonomies(stepped, {"default": "p-refs", "taxonomies": [prefs]}, "test")
    reworded = for_project(stepped)
    assert "A given is read wrongly." in reworded.texts[TAXONOMY]
    assert verdicts.prompt_version(reworded) not in (version, verdicts.prompt_version(other))


def test_verdicts_and_grades_export_and_import_their_step(stepped, fake, tmp_path):
    fake.answer = wrong_at_two
    run(stepped, for_project(stepped))
    grade = {"response_id": "r-1", "grader": "expert-1", "scores": PREFS_FULL | {"CAL": 0},
             FIRST_WRONG: 2, CATEGORY: "calc_error", "error_taxonomy": "physics-r1"}
    import_file(stepped, write_jsonl(tmp_path / "g.jsonl", [grade]), "grades")
    [(source,)] = stepped.conn.execute("SELECT source FROM step_mark_history").fetchall()
    assert source.startswith("imported from g.jsonl")  # not given by hand
    out = tmp_path / "out"
    out.mkdir()
    for kind in ("questions", "responses", "verdicts", "grades"):
        export_kind(stepped, kind, out / f"{kind}.jsonl")
    exported = [json.loads(line) for line in (out / "verdicts.jsonl").read_text().splitlines()]
    assert {(r["response_id"], r.get(FIRST_WRONG), r.get(CATEGORY), r.get("error_taxonomy"))
            for r in exported} == {("r-1", 2, "calculation", "p-refs"), ("r-2", 0, None, None)}
    [graded] = [json.loads(line) for line in (out / "grades.jsonl").read_text().splitlines()]
    assert (graded[FIRST_WRONG], graded[CATEGORY], graded["error_taxonomy"]) == \
        (2, "calc_error", "physics-r1")
    with Project.create(tmp_path / "copy.physgrade") as copy:
        for kind in ("questions", "responses", "verdicts", "grades"):
            import_file(copy, out / f"{kind}.jsonl", kind)
        assert {(m.rater, m.response_id, m.first_wrong, m.taxonomy, m.category)
                for m in step_marks.all_marks(copy)} == \
            {(m.rater, m.response_id, m.first_wrong, m.taxonomy, m.category)
             for m in step_marks.all_marks(stepped)}
        assert copy.conn.execute("SELECT count(*) FROM assessments WHERE extra LIKE "
                                 "'%first_wrong%'").fetchone() == (0,)  # named, not extra
        export_kind(copy, "grades", tmp_path / "again.csv")  # CSV: the step as a cell
        import_file(copy, tmp_path / "again.csv", "grades")  # the same grade: unchanged


@pytest.mark.parametrize("fields, where", [
    ({FIRST_WRONG: 4}, "field 'first_wrong_step': must be 0 (no wrong step) or a step of the "
                       "response, which has 3, not 4"),
    ({FIRST_WRONG: 2, CATEGORY: "calc_error"}, "field 'error_category': p-refs has no category"),
    ({FIRST_WRONG: 0, CATEGORY: "units"}, "field 'error_category': first_wrong_step 0"),
    ({CATEGORY: "units"}, "field 'error_category': a category needs a first_wrong_step"),
    ({FIRST_WRONG: 1, CATEGORY: "units", "error_taxonomy": "mine"},
     "field 'error_taxonomy': no taxonomy 'mine'"),
])
def test_an_imported_step_the_response_lacks_is_refused_by_line_and_field(stepped, tmp_path,
                                                                          fields, where):
    grade = {"response_id": "r-1", "grader": "expert-1", "scores": {"INT": 1}} | fields
    with pytest.raises(ImportErrors) as refused:
        import_file(stepped, write_jsonl(tmp_path / "g.jsonl", [grade]), "grades")
    assert f"g.jsonl line 1, {where}" in str(refused.value)
    assert step_marks.all_marks(stepped) == []
