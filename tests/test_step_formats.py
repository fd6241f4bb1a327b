"""ProcessBench, PRM800K and TRL stepwise files in and out of step marks (physgrade.step_formats)."""

import json

import pytest

from conftest import REFERENCE, question, response, write_jsonl
from physgrade.cli import main
from physgrade.formats import FormatError
from physgrade.importer import import_file
from physgrade.project import Project
from physgrade.step_formats import STEP_FORMATS, export_steps, import_steps
from physgrade.step_marks import all_marks, mark_first_wrong, rate_step, set_category
from physgrade.steps import steps_of

#: A response in the template with three numbered steps, and one in three paragraphs.
TEMPLATED = REFERENCE.replace("Final Answer", "Step 2:\nReasoning: check the units.\nResult: "
                              "m/s\nStep 3:\nReasoning: round to three figures.\nFinal Answer")
PARAGRAPHS = "The cyclist starts from rest.\n\nSo v = a t = 2.0 x 5.0.\n\nThat is 12 m/s."


def make_project(path, folder) -> Project:
    project = Project.create(path)
    import_file(project, write_jsonl(folder / "q.jsonl", [question()]), "questions")
    import_file(project, write_jsonl(folder / "r.jsonl", [
        response("r-1", text=TEMPLATED), response("r-2", text=PARAGRAPHS),
        response("r-3", model="quark-lm-3", text="The speed is 10 m/s.")]), "responses")
    return project


@pytest.fixture
def marked(tmp_path):
    """A project whose expert marked three responses: a wrong step with ratings that agree,
    no error, and a one-step response wrong at once."""
    with make_project(tmp_path / "marked.physgrade", tmp_path) as project:
        mark_first_wrong(project, "expert-1", "r-1", 2)
        set_category(project, "expert-1", "r-1", "p-refs", "units")
        rate_step(project, "expert-1", "r-1", 1, 1)
        rate_step(project, "expert-1", "r-1", 2, -1)
        mark_first_wrong(project, "expert-1", "r-2", 0)
        rate_step(project, "expert-1", "r-3", 1, -1)
        mark_first_wrong(project, "expert-1", "r-3", 1)
        mark_first_wrong(project, "expert-2", "r-1", 3)  # another rater: not exported
        yield project


def marks(project, rater="expert-1"):
    return {m.response_id: (m.first_wrong, m.ratings) for m in all_marks(project)
            if m.rater == rater}


def lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("fmt", STEP_FORMATS)
def test_export_then_import_into_a_fresh_copy_gives_back_what_the_format_holds(
        marked, tmp_path, fmt):
    first = tmp_path / f"{fmt}.jsonl"
    assert export_steps(marked, first, fmt, "expert-1") == 3
    (tmp_path / "copy").mkdir()
    with make_project(tmp_path / "copy.physgrade", tmp_path / "copy") as copy:
        result = import_steps(copy, first, fmt, "expert-1")
        assert (result.records, result.added, result.unchanged) == (3, 3, 0)
        second = tmp_path / f"{fmt}-again.jsonl"
        export_steps(copy, second, fmt, "expert-1")
        assert second.read_text(encoding="utf-8") == first.read_text(encoding="utf-8")
        back = marks(copy)
        again = import_steps(copy, first, fmt, "expert-1")  # what it holds already
        assert (again.added, again.unchanged) == (0, 3)
    before = marks(marked)
    assert {rid: first_wrong for rid, (first_wrong, _) in back.items()} == \
        {rid: first_wrong for rid, (first_wrong, _) in before.items()}
    if fmt == "processbench":  # it holds the first wrong step alone
        assert all(ratings == {} for _, ratings in back.values())
    elif fmt == "prm800k":  # a rating per step, and where the labeller stopped
        assert back == before
    else:  # a right/wrong label per step, up to the first wrong one
        assert back == {"r-1": (2, {1: 1, 2: -1}), "r-2": (0, {1: 1, 2: 1, 3: 1}),
                        "r-3": (1, {1: -1})}


def test_the_exported_records_have_each_formats_fields(marked, tmp_path):
    for fmt in STEP_FORMATS:
        export_steps(marked, tmp_path / f"{fmt}.jsonl", fmt, "expert-1")
    bench = lines(tmp_path / "processbench.jsonl")
    assert [(r["id"], r["label"]) for r in bench] == [("r-1", 1), ("r-2", -1), ("r-3", 0)]
    assert set(bench[0]) == {"id", "generator", "problem", "steps", "final_answer_correct",
                             "label"}
    assert bench[0]["steps"] == [step.text for step in steps_of(marked, "r-1")]
    assert bench[2]["generator"] == "quark-lm-3"
    prm = lines(tmp_path / "prm800k.jsonl")[0]
    assert prm["labeler"] == "expert-1" and prm["label"]["finish_reason"] == "found_error"
    assert [s["completions"][0]["rating"] for s in prm["label"]["steps"]] == [1, -1]
    assert len(prm["question"]["pre_generated_steps"]) == 3
    trl = lines(tmp_path / "trl.jsonl")
    assert [(r["response_id"], r["labels"]) for r in trl] == [
        ("r-1", [True, False]), ("r-2", [True, True, True]), ("r-3", [False])]
    assert trl[0]["prompt"] == question()["question"]


def test_a_prm800k_step_rating_is_that_of_the_completion_that_is_the_responses_step(
        marked, tmp_path):
    steps = [step.text for step in steps_of(marked, "r-2")]
    record = {"response_id": "r-2", "labeler": "340d89bc", "generation": 9,
              "question": {"problem": "...", "pre_generated_steps": steps},
              "label": {"steps": [
                  {"completions": [{"text": steps[0], "rating": 0, "flagged": None}],
                   "human_completion": None, "chosen_completion": 0},
                  {"completions": [{"text": "An alternative step.", "rating": 1, "flagged": False},
                                   {"text": "  " + steps[1].replace(" ", "\n"), "rating": -1,
                                    "flagged": False}],
                   "human_completion": None, "chosen_completion": None},
                  {"completions": None, "human_completion": None, "chosen_completion": None}],
                  "total_time": 278270, "finish_reason": "found_error"}}
    gave_up = {"response_id": "r-1", "label": {"steps": [], "finish_reason": "give_up"}}
    result = import_steps(marked, write_jsonl(tmp_path / "prm.jsonl", [record, gave_up]),
                          "prm800k", "labeller")
    assert (result.added, result.unchanged, result.silent) == (1, 0, 1)
    assert marks(marked, "labeller") == {"r-2": (2, {1: 0, 2: -1})}


def test_a_trl_record_may_label_the_first_steps_only(marked, tmp_path):
    steps = [step.text for step in steps_of(marked, "r-1")]
    import_steps(marked, write_jsonl(tmp_path / "t.jsonl", [
        {"response_id": "r-1", "prompt": "?", "completions": steps[:2], "labels": [True, True]}]),
        "trl", "shepherd", "llm")
    assert marks(marked, "shepherd") == {"r-1": (None, {1: 1, 2: 1})}


def bench(rid="r-1", label=1, steps=None, project=None):
    return {"id": rid, "generator": "g", "problem": "p", "final_answer_correct": False,
            "steps": steps if steps is not None else [s.text for s in steps_of(project, rid)],
            "label": label}


@pytest.mark.parametrize("fmt,bad,field,says", [
    ("processbench", lambda p: bench("r-404", steps=["a", "b"]), "id",
     "no response 'r-404' in this project"),
    ("processbench", lambda p: bench(steps=["one step", "two"], project=p), "steps",
     "gives 2 steps; response r-1 has 3"),
    ("processbench", lambda p: bench(label="1", project=p), "label", "expected a whole number"),
    ("processbench", lambda p: bench(label=3, project=p), "label", "neither -1 nor"),
    ("processbench", lambda p: bench(label=True, project=p), "label", "expected a whole number"),
    ("trl", lambda p: {"response_id": "r-2", "completions": [s.text for s in steps_of(p, "r-2")],
                       "labels": [1, 1, 0]}, "labels[0]", "expected true or false"),
    ("trl", lambda p: {"response_id": "r-2", "completions": ["The cyclist starts from rest.",
                                                             "So v = 12."], "labels": [True, False]},
     "completions[1]", "is not step 2 of response r-2 (Paragraph 2"),
    ("trl", lambda p: {"response_id": "r-2", "completions": ["x"], "labels": []}, "labels",
     "0 labels for 1 completions"),
    ("prm800k", lambda p: {"label": {"steps": []}}, "response_id", "required"),
    ("prm800k", lambda p: {"response_id": "r-3", "label": {"steps": [{"completions": [
        {"text": "The speed is 10 m/s.", "rating": 2}]}]}},
     "label.steps[0].completions[0].rating", "expected -1, 0, 1 or null"),
    ("prm800k", lambda p: {"response_id": "r-3", "label": {"steps": [{"completions": [
        {"text": "The speed is 12 m/s.", "rating": 1}]}]}},
     "label.steps[0].completions", "no completion is step 1 of response r-3"),
])
def test_a_bad_record_is_refused_with_its_line_and_field_and_nothing_changes(
        marked, tmp_path, fmt, bad, field, says):
    good = {"processbench": bench(project=marked, rid="r-3", label=-1),
            "trl": {"response_id": "r-3", "completions": ["The speed is 10 m/s."],
                    "labels": [True]},
            "prm800k": {"response_id": "r-2", "label": {"steps": [], "finish_reason": "give_up"}}}
    path = write_jsonl(tmp_path / "bad.jsonl", [good[fmt], bad(marked)])
    before = (marks(marked, "newcomer"), marked.conn.execute(
        "SELECT count(*) FROM raters").fetchone(), marked.conn.execute(
        "SELECT count(*) FROM step_mark_history").fetchone())
    with pytest.raises(FormatError) as refused:
        import_steps(marked, path, fmt, "newcomer")
    assert (refused.value.line, refused.value.field) == (2, field)
    assert f"bad.jsonl line 2, field '{field}'" in str(refused.value)
    assert says in str(refused.value)
    assert (marks(marked, "newcomer"), marked.conn.execute(
        "SELECT count(*) FROM raters").fetchone(), marked.conn.execute(
        "SELECT count(*) FROM step_mark_history").fetchone()) == before


def test_a_record_that_contradicts_the_raters_mark_is_refused(marked, tmp_path):
    path = write_jsonl(tmp_path / "pb.jsonl", [bench("r-1", label=0, project=marked)])
    with pytest.raises(FormatError, match=r"line 1, field 'label': expert-1 marked response r-1 "
                                          "otherwise already"):
        import_steps(marked, path, "processbench", "expert-1")
    assert marks(marked)["r-1"] == (2, {1: 1, 2: -1})


def test_a_response_given_twice_is_refused(marked, tmp_path):
    record = bench("r-3", label=0, project=marked)
    with pytest.raises(FormatError, match=r"line 2, field 'id': response r-3 is given twice "
                                          r"\(first on line 1\)"):
        import_steps(marked, write_jsonl(tmp_path / "pb.jsonl", [record, record]),
                     "processbench", "newcomer")


def test_the_commands_import_and_export_and_refuse_with_the_place(marked, tmp_path, capsys):
    db = str(marked.path)
    marked.close()
    out = tmp_path / "trl.jsonl"
    assert main(["export-steps", db, "--format", "trl", "--rater", "expert-1",
                 "--out", str(out)]) == 0
    assert "wrote 3 trl records" in capsys.readouterr().out
    assert main(["import-steps", db, str(out), "--format", "trl", "--rater", "student"]) == 0
    assert "3 marks added for student" in capsys.readouterr().out
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"response_id": "r-3", "completions": ["x"],
                                                "labels": [True]}])
    assert main(["import-steps", db, str(bad), "--format", "trl", "--rater", "other"]) == 1
    assert "bad.jsonl line 1, field 'completions[0]'" in capsys.readouterr().err
    assert main(["export-steps", db, "--format", "trl", "--rater", "nobody",
                 "--out", str(out)]) == 1
    assert "'nobody' has marked no steps" in capsys.readouterr().err


def test_a_judge_under_several_prompt_versions_is_named_by_its_label(marked, tmp_path):
    from physgrade.raters import ensure_rater
    from physgrade.step_marks import write_mark

    with marked.transaction():
        for version, step in (("prefs-v1", 1), ("prefs-v2", 2)):
            judge, _ = ensure_rater(marked, "arbiter", "llm", version)
            write_mark(marked, judge, "r-1", step, None, None)
    out = tmp_path / "pb.jsonl"
    with pytest.raises(ValueError, match=r"several prompt versions \(arbiter \[prefs-v1\], "
                                         r"arbiter \[prefs-v2\]\)"):
        export_steps(marked, out, "processbench", "arbiter")
    assert export_steps(marked, out, "processbench", "arbiter [prefs-v2]") == 1
    assert lines(out)[0]["label"] == 1


def test_a_json_array_is_read_and_csv_is_refused(marked, tmp_path):
    path = tmp_path / "pb.json"
    path.write_text(json.dumps([bench("r-3", label=0, project=marked),
                                bench("r-2", label="x", project=marked)]), encoding="utf-8")
    with pytest.raises(FormatError, match=r"pb.json item 2, field 'label'"):
        import_steps(marked, path, "processbench", "newcomer")
    with pytest.raises(ValueError, match="JSON Lines or a JSON array"):
        import_steps(marked, tmp_path / "pb.csv", "processbench", "newcomer")
