import json

import pytest

from conftest import PREFS_FULL, mc_question, question, response, write_jsonl
from physgrade.changes import NOTHING, Changes, RecordKind
from physgrade.formats import FormatError, ImportErrors
from physgrade.importer import import_file
from physgrade.scores import set_score
from physgrade.tasks import Cancelled, Task
from physgrade.template import from_stored


def count(project, table):
    return project.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


def snapshot(project):
    """Every row of every table, to prove an import changed nothing."""
    tables = [r[0] for r in project.conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    return {t: project.conn.execute(f"SELECT * FROM {t}").fetchall() for t in tables}


def test_questions_are_imported_with_parsed_reference_and_extra_fields(project, tmp_path):
    path = write_jsonl(tmp_path / "q.jsonl", [question(source="chapter 2", difficulty=3),
                                              mc_question()])
    result = import_file(project, path, "questions")
    assert (result.added, result.unchanged) == (2, 0)
    row = project.db["questions"].get("q-1")
    assert row["kind"] == "problem" and row["topic"] == "Mechanics"
    assert json.loads(row["extra"]) == {"difficulty": 3, "source": "chapter 2"}
    reference = from_stored(row["reference_solution"], row["reference_sections"])
    assert reference.compliant and len(reference.steps) == 1
    mc = project.db["questions"].get("q-mc")
    assert json.loads(mc["options"])["C"] == "both" and mc["answer"] == "C"


def test_imports_say_what_they_changed(project, tmp_path):
    questions = import_file(project, write_jsonl(tmp_path / "q.jsonl", [question()]), "questions")
    responses = import_file(project, write_jsonl(tmp_path / "r.jsonl", [response()]), "responses")
    grades = import_file(project, write_jsonl(tmp_path / "g.jsonl", [
        {"response_id": "r-1", "grader": "expert-1", "scores": PREFS_FULL}]), "grades")
    assert [r.changes for r in (questions, responses, grades)] == [  # answer_type: a facet now
        Changes.of(RecordKind.QUESTIONS, RecordKind.BLOOM, RecordKind.SETTINGS),
        Changes.of(RecordKind.RESPONSES),
        Changes.of(RecordKind.SCORES, RecordKind.RATERS)]


def test_responses_record_template_compliance(loaded):
    rows = dict(loaded.conn.execute("SELECT id, compliant FROM responses"))
    assert rows == {"r-1": 1, "r-2": 0, "r-3": 0}


def test_the_same_file_twice_adds_nothing(project, tmp_path):
    path = write_jsonl(tmp_path / "q.jsonl", [question(), mc_question()])
    import_file(project, path, "questions")
    before = snapshot(project)
    again = import_file(project, path, "questions")
    assert again.already_imported and again.added == 0 and again.changes == NOTHING
    assert snapshot(project) == before


def test_same_records_in_another_file_are_unchanged_not_duplicated(project, tmp_path):
    import_file(project, write_jsonl(tmp_path / "a.jsonl", [question()]), "questions")
    result = import_file(project, write_jsonl(tmp_path / "b.jsonl",
                                              [question(), mc_question()]), "questions")
    assert (result.added, result.unchanged) == (1, 1)
    assert result.changes == Changes.of(RecordKind.QUESTIONS, RecordKind.BLOOM)
    assert count(project, "questions") == 2
    unchanged = import_file(project, write_jsonl(tmp_path / "c.jsonl", [question()]), "questions")
    assert unchanged.added == 0 and unchanged.changes == NOTHING


def test_a_conflicting_record_is_refused_and_nothing_changes(project, tmp_path):
    import_file(project, write_jsonl(tmp_path / "a.jsonl", [question()]), "questions")
    before = snapshot(project)
    path = write_jsonl(tmp_path / "b.jsonl", [mc_question(), question(answer="12 m/s")])
    with pytest.raises(ImportErrors, match=r"b.jsonl line 2, field 'answer'.*already in the "
                                           r"project") as err:
        import_file(project, path, "questions")
    assert err.value.errors[0].line == 2
    assert snapshot(project) == before


def test_one_bad_record_aborts_the_whole_import(project, tmp_path):
    records = [question(f"q-{i}") for i in range(50)] + [question("q-bad", kind="essay")]
    with pytest.raises(ImportErrors, match=r"q.jsonl line 51, field 'kind': 'essay' is not one "
                                           r"of problem, conceptual"):
        import_file(project, write_jsonl(tmp_path / "q.jsonl", records), "questions")
    assert count(project, "questions") == 0 and count(project, "imports") == 0


def test_several_problems_are_all_reported(project, tmp_path):
    records = [question("q-1", kind="essay"), {"id": "q-2"}, question("q-3")]
    with pytest.raises(ImportErrors) as err:
        import_file(project, write_jsonl(tmp_path / "q.jsonl", records), "questions")
    assert [(e.line, e.field) for e in err.value.errors] == [(1, "kind"), (2, "question")]
    assert "and 1 more problem" in str(err.value)


def test_a_response_to_an_unknown_question_is_an_error(loaded, tmp_path):
    path = write_jsonl(tmp_path / "r2.jsonl", [response("r-9", "q-404")])
    with pytest.raises(ImportErrors, match=r"line 1, field 'question_id': no question 'q-404'"):
        import_file(loaded, path, "responses")


def test_duplicate_ids_in_one_file(project, tmp_path):
    path = write_jsonl(tmp_path / "q.jsonl", [question("q-1"), mc_question(), question("q-1")])
    with pytest.raises(ImportErrors, match=r"line 3: duplicate of line 1 \(q-1\)"):
        import_file(project, path, "questions")


def test_non_utf8_input_names_line_and_column(project, tmp_path):
    path = tmp_path / "latin1.jsonl"
    good = json.dumps(question()) + "\n"
    path.write_bytes(good.encode() + '{"id": "q-2", "question": "caf\xe9"}\n'.encode("latin-1"))
    with pytest.raises(FormatError, match=r"latin1.jsonl line 2: not valid UTF-8 \(byte 0xe9 at "
                                          r"column 31\)"):
        import_file(project, path, "questions")
    assert count(project, "questions") == 0


def test_a_truncated_last_line_is_named_as_such(project, tmp_path):
    path = tmp_path / "cut.jsonl"
    path.write_text(json.dumps(question()) + "\n" + json.dumps(mc_question())[:40],
                    encoding="utf-8")
    with pytest.raises(FormatError, match="cut.jsonl line 2: the last line is cut off"):
        import_file(project, path, "questions")


def test_invalid_json_in_the_middle(project, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(question()) + "\n{not json}\n" + json.dumps(mc_question()) + "\n")
    with pytest.raises(FormatError, match=r"bad.jsonl line 2: not valid JSON"):
        import_file(project, path, "questions")


def test_field_mapping_renames_and_nests(project, tmp_path):
    foreign = [{"problem_id": 7, "problem": "Which is a vector?", "A": "mass", "B": "force",
                "gold": "B", "subject": "mechanics", "type": "conceptual", "year": 2021}]
    path = write_jsonl(tmp_path / "bench.jsonl", foreign)
    mapping = {"problem_id": "id", "problem": "question", "A": "options.A", "B": "options.B",
               "gold": "answer", "subject": "topic", "type": "kind"}
    import_file(project, path, "questions", mapping)
    row = project.db["questions"].get("7")
    assert row["topic"] == "Mechanics" and row["kind"] == "conceptual"
    assert json.loads(row["options"]) == {"A": "mass", "B": "force"} and row["answer"] == "B"
    assert json.loads(row["extra"]) == {"year": 2021, "subject": "mechanics"}  # kept as given


def test_a_mapping_naming_no_field_is_an_error(project, tmp_path):
    path = write_jsonl(tmp_path / "q.jsonl", [question()])
    with pytest.raises(FormatError, match="--map problem=question: no record has a field"):
        import_file(project, path, "questions", {"problem": "question"})


def test_csv_with_nested_json_cells_and_flat_scores(loaded, tmp_path):
    path = tmp_path / "grades.csv"
    path.write_text(
        "response_id,grader,INT,MOD,CON,APP,CAL,COR,COH,ANS,rationale,graded_at\n"
        "r-1,expert-1,1,1,1,1,0,2,1,2,\"{\"\"CAL\"\": \"\"5 x 2 = 12\"\"}\",2026-10-03T14:21:00Z\n",
        encoding="utf-8")
    result = import_file(loaded, path, "grades")
    assert result.added == 1
    rows = dict(loaded.conn.execute("SELECT criterion, value FROM scores"))
    assert rows["CAL"] == 0 and rows["COR"] == 2
    note = loaded.conn.execute("SELECT note FROM scores WHERE criterion = 'CAL'").fetchone()[0]
    assert note == "5 x 2 = 12"
    assert count(loaded, "score_history") == 8  # every score a person gives is in the history


def test_scores_outside_the_rubric(loaded, tmp_path):
    bad = dict(PREFS_FULL, CAL=3)
    path = write_jsonl(tmp_path / "v.jsonl", [
        {"response_id": "r-1", "judge": "arbiter", "scores": bad}])
    with pytest.raises(ImportErrors, match=r"line 1, field 'scores.CAL': CAL = 3 is outside the "
                                           r"rubric"):
        import_file(loaded, path, "verdicts")


def test_multiple_choice_answer_is_all_or_nothing(loaded, tmp_path):
    loaded_mc = write_jsonl(tmp_path / "q2.jsonl", [mc_question("q-mcp", kind="problem")])
    import_file(loaded, loaded_mc, "questions")
    import_file(loaded, write_jsonl(tmp_path / "r2.jsonl", [response("r-mcp", "q-mcp")]),
                "responses")
    path = write_jsonl(tmp_path / "v.jsonl", [
        {"response_id": "r-mcp", "judge": "arbiter", "scores": dict(PREFS_FULL, ANS=1)}])
    with pytest.raises(ImportErrors, match="all or nothing"):
        import_file(loaded, path, "verdicts")


def test_verdicts_with_rationale_and_conceptual_na(loaded, tmp_path):
    path = write_jsonl(tmp_path / "v.jsonl", [
        {"response_id": "r-1", "judge": "arbiter", "prompt_version": "prefs-v1",
         "scores": dict(PREFS_FULL, CAL=0), "rationale": {"CAL": "2 x 5 written as 12"}},
        {"response_id": "r-3", "judge": "arbiter", "prompt_version": "prefs-v1",
         "scores": {"SET": 1, "CON": 1, "EXE": None, "COH": 1, "ANS": 1}}])
    result = import_file(loaded, path, "verdicts")
    assert result.added == 2 and result.changes == Changes.of(RecordKind.SCORES, RecordKind.RATERS)
    na = loaded.conn.execute("SELECT value FROM scores WHERE response_id = 'r-3' AND "
                             "criterion = 'EXE'").fetchone()
    assert na == (None,)
    assert count(loaded, "score_history") == 0  # judges are not people


def test_verdict_rubric_must_match_the_question_kind(loaded, tmp_path):
    path = write_jsonl(tmp_path / "v.jsonl", [
        {"response_id": "r-3", "judge": "arbiter", "scores": PREFS_FULL}])
    with pytest.raises(ImportErrors, match="uses the P-REFS rubric but the question is graded "
                                           "with conceptual"):
        import_file(loaded, path, "verdicts")


def test_coarse_verdicts_of_the_first_study(loaded, tmp_path):
    path = write_jsonl(tmp_path / "v.jsonl", [
        {"response_id": "r-1", "judge": "old-judge", "answer": 1, "reasoning": 2,
         "calculations": 1, "explanation": "fine"}])
    import_file(loaded, path, "verdicts")
    rows = dict(loaded.conn.execute("SELECT criterion, value FROM scores WHERE rubric = 'coarse'"))
    assert rows == {"answer": 1, "reasoning": 2, "calculations": 1}


def test_judge_reviews_need_the_verdict_they_review(loaded, tmp_path):
    review = {"response_id": "r-1", "judge": "arbiter", "reviewer": "expert-1",
              "criteria": {"INT": 2, "CAL": 0}, "verdict": "lenient"}
    with pytest.raises(ImportErrors, match="no verdict by 'arbiter' on 'r-1'"):
        import_file(loaded, write_jsonl(tmp_path / "jr.jsonl", [review]), "judge_reviews")
    import_file(loaded, write_jsonl(tmp_path / "v.jsonl", [
        {"response_id": "r-1", "judge": "arbiter", "scores": PREFS_FULL}]), "verdicts")
    assert import_file(loaded, write_jsonl(tmp_path / "jr2.jsonl", [review]),
                       "judge_reviews").added == 1
    bad = dict(review, criteria={"INT": 3})
    with pytest.raises(ImportErrors, match=r"field 'criteria.INT': 3 is not 2"):
        import_file(loaded, write_jsonl(tmp_path / "jr3.jsonl", [bad]), "judge_reviews")


def test_bloom_labels_by_person_and_model(loaded, tmp_path):
    path = write_jsonl(tmp_path / "b.jsonl", [
        {"question_id": "q-1", "annotator": "tagger", "annotator_kind": "model",
         "cognitive": "applying", "knowledge": "procedural"},
        {"question_id": "q-1", "annotator": "expert-2", "cognitive": "Analyze",
         "knowledge": "Procedural"}])
    assert import_file(loaded, path, "bloom").changes == Changes.of(RecordKind.BLOOM, RecordKind.RATERS)
    rows = loaded.conn.execute("SELECT r.name, r.kind, b.cognitive FROM bloom_labels b JOIN "
                               "raters r ON r.id = b.annotator_id ORDER BY r.name").fetchall()
    assert rows == [("expert-2", "human", "Analyze"), ("tagger", "llm", "Apply")]
    with pytest.raises(ImportErrors, match="'Memorise' is not one of Remember"):
        import_file(loaded, write_jsonl(tmp_path / "b2.jsonl", [
            {"question_id": "q-1", "annotator": "x", "cognitive": "Memorise"}]), "bloom")


def test_variants_must_point_at_a_known_question(project, tmp_path):
    ok = [question("q-base"), question("q-var", variant_of="q-base", region="Africa")]
    import_file(project, write_jsonl(tmp_path / "q.jsonl", ok), "questions")
    with pytest.raises(ImportErrors, match="field 'variant_of': no question 'q-nowhere'"):
        import_file(project, write_jsonl(tmp_path / "q2.jsonl", [
            question("q-v2", variant_of="q-nowhere")]), "questions")


def test_import_log_records_file_hash_and_counts(loaded):
    rows = loaded.conn.execute("SELECT file_name, length(sha256), kind, added FROM imports "
                               "ORDER BY id").fetchall()
    assert rows == [("q.jsonl", 64, "questions", 2), ("r.jsonl", 64, "responses", 3)]


def test_imported_grades_name_their_file_and_import_in_the_history(loaded, tmp_path):
    """Told apart from a grade typed in the app: the file and the imports row it came with."""
    path = write_jsonl(tmp_path / "grades.jsonl", [
        {"response_id": "r-1", "grader": "expert-1", "scores": PREFS_FULL}])
    assert import_file(loaded, path, "grades").added == 1
    import_id, added = loaded.conn.execute(
        "SELECT id, added FROM imports WHERE file_name = 'grades.jsonl'").fetchone()
    assert added == 1
    assert loaded.conn.execute("SELECT source, count(*) FROM score_history GROUP BY source"
                               ).fetchall() == [
        (f"imported from grades.jsonl (import {import_id})", len(PREFS_FULL))]
    set_score(loaded, "expert-1", "r-1", "INT", 0)
    assert loaded.conn.execute("SELECT source FROM score_history ORDER BY id DESC LIMIT 1"
                               ).fetchone() == (None,)


def test_cancelling_an_import_changes_nothing(project, tmp_path):
    path = write_jsonl(tmp_path / "q.jsonl", [question(f"q-{i}") for i in range(10)])
    task = Task(lambda done, total, stage: task.cancel() if stage == "writing" else None)
    with pytest.raises(Cancelled):
        import_file(project, path, "questions", task=task)
    assert count(project, "questions") == 0 and count(project, "imports") == 0


def test_a_public_benchmark_layout_imports_with_a_mapping(project, tmp_path):
    """Answers and units wrapped in lists, one per sub-question, as in UGPhysics-style files."""
    path = tmp_path / "bench.json"
    path.write_text(json.dumps({"data": [
        {"index": 1, "problem": "Find the period.", "answers": ["\\pi \\sqrt{2m/k}"],
         "unit": [None], "answer_type": ["EX"], "subject": "Classical Mechanics"},
        {"index": 2, "problem": "Two parts.", "answers": ["0.511", "8.2e-14"],
         "unit": ["MeV", "J"], "answer_type": ["NV", "NV"], "subject": "Relativity"}]}))
    mapping = {"index": "id", "problem": "question", "answers": "answer", "subject": "topic"}
    import_file(project, path, "questions", mapping)
    rows = project.conn.execute("SELECT id, topic, answer, answer_type, unit FROM questions "
                                "ORDER BY id").fetchall()
    assert rows == [("1", "Mechanics", "\\pi \\sqrt{2m/k}", "EX", None),
                    ("2", "Modern Physics", "0.511, 8.2e-14", "compound", "MeV, J")]


def test_responses_without_ids_get_stable_ones(loaded, tmp_path):
    path = write_jsonl(tmp_path / "r.jsonl", [{"question_id": "q-1", "model": "helix",
                                               "response": "v = 10 m/s"}])
    assert import_file(loaded, path, "responses").added == 1
    assert loaded.db["responses"].get("q-1@helix")["model"] == "helix"
    path.write_text(path.read_text() + "\n")  # a different file, the same record
    assert import_file(loaded, path, "responses").unchanged == 1


def test_csv_problems_are_located(project, tmp_path):
    path = tmp_path / "q.csv"
    path.write_text("id,question,options\nq-1,Which?,\"{\"\"A\"\": 1\"\n", encoding="utf-8")
    with pytest.raises(ImportErrors, match=r"q.csv line 2, field 'options': cell is not valid JSON"):
        import_file(project, path, "questions")
    path.write_text("id,question\nq-1,Which?,extra cell\n", encoding="utf-8")
    with pytest.raises(ImportErrors, match=r"q.csv line 2: 3 cells but the header names 2 columns"):
        import_file(project, path, "questions")
    assert count(project, "questions") == 0


GRADE_HEADER = "response_id,grader,INT,MOD,CON,APP,CAL,COR,COH,ANS"


@pytest.mark.parametrize("header, message", [
    ("response_id,grader,INT,INT,CON,APP,CAL,COR,COH,ANS",
     r"g.csv line 1, field 'INT': the header names column 'INT' twice \(columns 3 and 4\)"),
    ("response_id,grader,INT,MOD,CON,,CAL,COR,COH,ANS",
     r"g.csv line 1: column 6 of the header has no name"),
    ("response_id,grader,INT,MOD,CON,APP,CAL,COR,COH,ANS, ",
     r"g.csv line 1: column 11 of the header has no name"),
])
def test_a_header_with_a_column_twice_or_unnamed_is_refused(loaded, tmp_path, header, message):
    """A reader keeps one of two cells under the same name: the second INT stood in for MOD."""
    path = tmp_path / "g.csv"
    path.write_text(f"{header}\nr-1,tester,1,0,1,1,1,2,1,1\n", encoding="utf-8")
    before = snapshot(loaded)
    with pytest.raises(FormatError, match=message):
        import_file(loaded, path, "grades")
    assert snapshot(loaded) == before


def test_a_row_cut_short_is_named_as_such_not_as_a_missing_field(loaded, tmp_path):
    path = tmp_path / "g.csv"
    path.write_text(f"{GRADE_HEADER}\nr-1,tester,1,1,1,1,1,2,1,1\nr-2,tester,1,0\n", encoding="utf-8")
    with pytest.raises(ImportErrors, match=r"g.csv line 3: 4 cells but the header names 10 "
                                           r"columns; every row needs one cell per column"):
        import_file(loaded, path, "grades")
    assert count(loaded, "scores") == 0


def test_an_unclosed_quote_is_located_on_the_row_that_opens_it(project, tmp_path):
    path = tmp_path / "q.csv"
    path.write_text('id,question\nq-1,Fine\nq-2,"Which way\nq-3,Later\n', encoding="utf-8")
    with pytest.raises(FormatError, match=r"q.csv line 3: a quoted cell in the row that begins "
                                          r"here is never closed"):
        import_file(project, path, "questions")
    path.write_text('id,question\nq-1,Fine\nq-2,"Which" way\n', encoding="utf-8")
    with pytest.raises(FormatError, match=r"q.csv line 3: malformed CSV in the row that begins "
                                          r"here: ',' expected after '\"'"):
        import_file(project, path, "questions")
    assert count(project, "questions") == 0


@pytest.mark.parametrize("name, text", [
    ("g.csv", f"{GRADE_HEADER}\nr-1,tester,1,1,1,1,1,2,1,{'7' * 320}\n"),
    ("g.jsonl", json.dumps({"response_id": "r-1", "grader": "tester",
                            "scores": dict(PREFS_FULL, ANS=int("7" * 320))}) + "\n"),
])
def test_a_score_of_hundreds_of_digits_is_outside_the_rubric_not_a_crash(loaded, tmp_path, name,
                                                                          text):
    """As a float such a number is infinity: it was called "not a number" (CSV) or crashed the
    import with an OverflowError (JSON)."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ImportErrors, match=rf"{name} line \d, field 'scores.ANS': ANS = a number of "
                                           r"320 digits is outside the rubric: Final answer takes 0-2"):
        import_file(loaded, path, "grades")


def test_a_number_past_the_json_parsers_limit_is_located(loaded, tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text('{"response_id": "r-1", "grader": "t", "scores": {"INT": ' + "7" * 5000 + "}}\n",
                    encoding="utf-8")
    with pytest.raises(FormatError, match=r"g.jsonl line 1: holds a number of more than 4,300 "
                                          r"digits"):
        import_file(loaded, path, "grades")


@pytest.mark.parametrize("name, text", [("g.jsonl", ""), ("g.jsonl", "\n\n"),
                                        ("g.csv", f"{GRADE_HEADER}\n"), ("g.json", "[]")])
def test_a_file_without_records_is_refused_not_imported_as_nothing(loaded, tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    before = snapshot(loaded)
    with pytest.raises(FormatError, match=rf"{name}: holds no records \(the file is empty, or has "
                                          r"only a header\); nothing to import"):
        import_file(loaded, path, "grades")
    assert snapshot(loaded) == before  # not even the import log notes it


def test_tsv_and_json_arrays(project, tmp_path):
    tsv = tmp_path / "q.tsv"
    tsv.write_text("id\tquestion\tkind\nq-1\tWhy is the sky blue?\tconceptual\n", encoding="utf-8")
    assert import_file(project, tsv, "questions").added == 1
    array = tmp_path / "more.json"
    array.write_text(json.dumps([question("q-2"), "not an object"]), encoding="utf-8")
    with pytest.raises(ImportErrors, match=r"more.json item 2: not a JSON object but str"):
        import_file(project, array, "questions")
    assert count(project, "questions") == 1


def test_records_without_ids_can_be_numbered_by_line(project, tmp_path):
    path = tmp_path / "mmlu_physics.csv"
    path.write_text("question,A,B,answer\nWhich is a vector?,mass,force,B\n"
                    "Which is a scalar?,energy,velocity,A\n", encoding="utf-8")
    with pytest.raises(ImportErrors, match="field 'id': is required.*--map @line=id"):
        import_file(project, path, "questions")
    mapping = {"@line": "id", "A": "options.A", "B": "options.B"}
    assert import_file(project, path, "questions", mapping).added == 2
    assert project.db["questions"].get("mmlu_physics:3")["answer"] == "A"
    assert import_file(project, path, "questions", mapping).already_imported
