"""The grader's core: one item, the blind comparison, the queue, its filters and positions."""

from __future__ import annotations

import pytest

from conftest import PREFS_FULL
from physgrade.changes import NOTHING, Changes, RecordKind
from physgrade.grading import Given, compare, graders, grading_item
from physgrade.project import Project
from physgrade.queries import graded_responses, question_rows
from physgrade.queue import (
    BY_NO_OTHER,
    BY_OTHERS,
    GRADED,
    NOT_COMPLIANT,
    NOT_STARTED,
    STARTED,
    Position,
    QueueFilter,
    facet_values,
    load_position,
    load_queue,
    save_position,
    search,
)
from physgrade.raters import is_named_person, is_person, person_id, rater_id
from physgrade.rubric import ScoreError
from physgrade.scores import clear_score, set_note, set_score
from physgrade.team.progress import grader_progress


def grade(project: Project, grader: str, response_id: str, scores: dict) -> None:
    for criterion, value in scores.items():
        set_score(project, grader, response_id, criterion, value)


def test_grading_item_holds_question_rubric_and_my_scores(loaded):
    set_score(loaded, "ana", "r-1", "CAL", 0, note="slip in step 2")
    item = grading_item(loaded, "r-1", "ana")
    assert item.question.id == "q-1" and item.rubric.key == "prefs"
    assert item.sections.compliant and item.compliant
    assert item.mine == {"CAL": Given(0, "slip in step 2")}
    assert not item.complete
    assert grading_item(loaded, "r-3", "ana").rubric.key == "conceptual"
    assert grading_item(loaded, "r-3", "ana").question.multiple_choice
    assert grading_item(loaded, "r-404", "ana") is None
    assert grading_item(loaded, "r-1", "ben").mine == {}


def test_others_stay_hidden_until_every_criterion_is_scored(loaded):
    judge = rater_id(loaded, "arbiter", "llm", "v1")
    loaded.conn.executemany(
        "INSERT INTO scores VALUES (?, 'r-1', 'prefs', ?, ?, NULL, '2026-01-01')",
        [(judge, key, value) for key, value in PREFS_FULL.items()])
    grade(loaded, "ben", "r-1", {**PREFS_FULL, "CAL": 0})
    partial = dict(PREFS_FULL)
    partial.pop("ANS")
    grade(loaded, "ana", "r-1", {**partial, "COR": 1})
    assert compare(loaded, grading_item(loaded, "r-1", "ana"), "ana") is None

    set_score(loaded, "ana", "r-1", "ANS", 2)
    item = grading_item(loaded, "r-1", "ana")
    verdicts = {v.rater: v for v in compare(loaded, item, "ana")}
    assert set(verdicts) == {"arbiter", "ben"}
    assert list(verdicts["arbiter"].scores) == list(item.rubric.keys)  # in rubric order
    assert verdicts["arbiter"].disagreements(item.values) == ["COR"]
    assert verdicts["ben"].disagreements(item.values) == ["CAL", "COR"]
    assert graders(loaded) == ["ana", "ben"]


def test_na_counts_as_given_for_completeness(loaded):
    grade(loaded, "ana", "r-3", {"SET": 1, "CON": 1, "EXE": None, "COH": 1, "ANS": 1})
    item = grading_item(loaded, "r-3", "ana")
    assert item.complete and item.values["EXE"] is None
    assert compare(loaded, item, "ana") == []  # finished, and nobody else has scored it


def test_notes_need_a_score_and_empty_removes_them(loaded):
    with pytest.raises(ScoreError, match="score CAL before"):
        set_note(loaded, "ana", "r-1", "CAL", "too early")
    set_score(loaded, "ana", "r-1", "CAL", 1)
    set_note(loaded, "ana", "r-1", "CAL", "  fine  ")
    assert grading_item(loaded, "r-1", "ana").mine["CAL"] == Given(1, "fine")
    set_score(loaded, "ana", "r-1", "CAL", 0)  # a new value keeps the note
    assert grading_item(loaded, "r-1", "ana").mine["CAL"] == Given(0, "fine")
    set_note(loaded, "ana", "r-1", "CAL", "")
    assert grading_item(loaded, "r-1", "ana").mine["CAL"] == Given(0, None)


def test_queue_keeps_a_questions_responses_together_with_my_progress(loaded):
    grade(loaded, "ana", "r-1", PREFS_FULL)
    set_score(loaded, "ana", "r-2", "INT", 1)
    set_score(loaded, "ben", "r-3", "SET", 1)
    items = {i.response_id: i for i in load_queue(loaded, "ana")}
    assert [i.response_id for i in load_queue(loaded, "ana")] == ["r-1", "r-2", "r-3"]
    assert (items["r-1"].progress, items["r-2"].progress, items["r-3"].progress) == (
        GRADED, STARTED, NOT_STARTED)
    assert items["r-3"].criteria == 5 and items["r-3"].others
    assert [i.progress for i in load_queue(loaded, "nobody")] == [NOT_STARTED] * 3


def test_filters_combine_facets_with_and_and_values_with_or(loaded):
    grade(loaded, "ana", "r-1", PREFS_FULL)
    set_score(loaded, "ben", "r-3", "SET", 1)
    items = load_queue(loaded, "ana")

    def shown(**facets) -> list[str]:
        chosen = QueueFilter(**{k: frozenset(v) for k, v in facets.items()})
        return [i.response_id for i in items if chosen.matches(i)]

    assert shown() == ["r-1", "r-2", "r-3"]
    assert shown(models={"orbit-7b"}) == ["r-1", "r-3"]
    assert shown(models={"orbit-7b"}, kinds={"problem"}) == ["r-1"]
    assert shown(mine={NOT_STARTED}) == ["r-2", "r-3"]
    assert shown(others={BY_OTHERS}) == ["r-3"]
    assert shown(others={BY_NO_OTHER}, mine={NOT_STARTED}) == ["r-2"]
    assert shown(compliance={NOT_COMPLIANT}) == ["r-2", "r-3"]
    assert shown(bloom={"Remember", "Apply"}) == ["r-1", "r-2", "r-3"]
    assert shown(bloom={"Remember"}) == ["r-3"]
    assert facet_values(items)["models"] == ["orbit-7b", "quark-lm-3"]


def test_text_search_reads_question_and_response_texts(loaded):
    assert search(loaded, "BOTH are") == {"r-3"}
    assert search(loaded, "cyclist") == {"r-1", "r-2"}  # in the question
    assert search(loaded, "r-2") == {"r-2"}
    assert search(loaded, "100%") == frozenset()  # wildcards are literal
    found = QueueFilter().with_search(loaded, " 10 m/s ")
    assert found.search == "10 m/s" and found.matching == {"r-2"}


def test_position_is_kept_per_grader_with_its_filter(tmp_path, loaded):
    chosen = QueueFilter(models=frozenset({"orbit-7b"}), mine=frozenset({NOT_STARTED}),
                         search="both")
    save_position(loaded, "ana", Position("r-3", chosen))
    save_position(loaded, "ben", Position("r-1", QueueFilter()))
    with Project.open(loaded.path) as reopened:
        assert load_position(reopened, "ana") == Position("r-3", chosen)
        assert load_position(reopened, "ben").response_id == "r-1"
        assert load_position(reopened, "cyd") == Position(None, QueueFilter())
    assert QueueFilter.from_json("{not json") == QueueFilter()


def test_score_writes_say_what_they_changed(loaded):
    on_r3 = Changes.of(RecordKind.SCORES, responses=["r-3"], questions=["q-mc"])
    assert set_score(loaded, "ana", "r-3", "SET", 1) == Changes.of(
        RecordKind.SCORES, RecordKind.RATERS, responses=["r-3"], questions=["q-mc"])
    assert set_score(loaded, "ana", "r-3", "SET", 0, note="no setup") == on_r3
    assert set_note(loaded, "ana", "r-3", "SET", "") == on_r3
    assert clear_score(loaded, "ana", "r-3", "SET") == on_r3
    assert clear_score(loaded, "ana", "r-3", "SET") == NOTHING  # nothing left to clear
    assert set_score(loaded, "ana", "r-1", "ANS", 2).questions == {"q-1"}
    # A grader's place is their own state: only a first move makes the rater.
    assert save_position(loaded, "ana", Position("r-1", QueueFilter())) == NOTHING
    assert save_position(loaded, "cyd", Position("r-1", QueueFilter())).kinds == {RecordKind.RATERS}


def test_a_judge_named_like_a_person_is_not_that_person(loaded):
    assert is_person() == "r.kind = 'human'"
    assert is_named_person("t") == "t.name = ? AND t.kind = 'human' AND t.prompt_version = ''"
    judge = rater_id(loaded, "ana", "llm", "v1")  # a model under the same name
    loaded.conn.executemany(
        "INSERT INTO scores VALUES (?, 'r-1', 'prefs', ?, ?, NULL, '2026-01-01')",
        [(judge, key, value) for key, value in PREFS_FULL.items()])
    assert person_id(loaded, "ana") is None
    assert graders(loaded) == [] and graded_responses(loaded) == 0
    assert grading_item(loaded, "r-1", "ana").mine == {}
    assert [(i.progress, i.others) for i in load_queue(loaded, "ana")] == [
        (NOT_STARTED, False)] * 3
    with pytest.raises(ScoreError, match="score CAL before"):
        set_note(loaded, "ana", "r-1", "CAL", "the judge's score is not mine")
    assert clear_score(loaded, "ana", "r-1", "CAL") == NOTHING

    grade(loaded, "ana", "r-1", {**PREFS_FULL, "CAL": 0})  # the person: another rater
    assert person_id(loaded, "ana") not in (None, judge)
    assert grading_item(loaded, "r-1", "ana").mine["CAL"] == Given(0, None)
    assert [v.kind for v in compare(loaded, grading_item(loaded, "r-1", "ana"), "ana")] == ["llm"]
    assert graders(loaded) == ["ana"] and graded_responses(loaded) == 1
    assert [(row.id, row.responses, row.graded) for row in question_rows(loaded)] == [
        ("q-1", 2, 1), ("q-mc", 1, 0)]  # the judge's full verdict on r-1 counts for nobody
    clear_score(loaded, "ana", "r-1", "CAL")
    assert loaded.conn.execute("SELECT value FROM scores WHERE rater_id = ? AND criterion = 'CAL'",
                               (judge,)).fetchone() == (1,)


def test_a_persons_coarse_verdict_is_no_grade_anywhere(loaded):
    """The project's count, the question list, the queue and each grader's progress share one
    rule of a finished grade (queries.finished_sql): the first study's coarse verdicts are none."""
    for criterion, value in {"answer": 1, "reasoning": 2, "calculations": 2}.items():
        set_score(loaded, "ana", "r-1", criterion, value, rubric="coarse")
    assert graded_responses(loaded) == 0
    assert [row.graded for row in question_rows(loaded)] == [0, 0]
    assert {i.response_id: i.progress for i in load_queue(loaded, "ana")}["r-1"] == NOT_STARTED
    assert [(p.grader, p.unassigned_graded) for p in grader_progress(loaded)] == [("ana", 0)]

    grade(loaded, "ana", "r-1", PREFS_FULL)
    assert graded_responses(loaded) == 1
    assert [row.graded for row in question_rows(loaded)] == [1, 0]
    assert {i.response_id: i.progress for i in load_queue(loaded, "ana")}["r-1"] == GRADED
    assert [(p.grader, p.unassigned_graded) for p in grader_progress(loaded)] == [("ana", 1)]


def test_the_comparison_carries_every_raters_reasons(loaded):
    from physgrade.judge.client import Outcome
    from physgrade.judge.tools import Verdict
    from physgrade.judge.verdicts import store

    scored = {**PREFS_FULL, "CAL": 0}
    store(loaded, "arbiter", "v1", "r-1", Outcome(Verdict(
        scored, {"ANS": "right value and unit", "CAL": "5.0 × 2.0 is slipped to 12"},
        "Sound method, one slip."), raw="{}"))
    grade(loaded, "ben", "r-1", PREFS_FULL)
    set_note(loaded, "ben", "r-1", "COR", "units carried throughout")
    grade(loaded, "ana", "r-1", PREFS_FULL)
    set_note(loaded, "ana", "r-1", "INT", "my own note")
    item = grading_item(loaded, "r-1", "ana")
    verdicts = {v.rater: v for v in compare(loaded, item, "ana")}
    assert set(verdicts) == {"arbiter", "ben"} and item.mine["INT"].note == "my own note"
    judge = verdicts["arbiter"]
    assert judge.notes == {"CAL": "5.0 × 2.0 is slipped to 12", "ANS": "right value and unit"}
    assert list(judge.notes) == ["CAL", "ANS"]  # in rubric order, whatever order they came in
    assert judge.comment == "Sound method, one slip." and judge.prompt_version == "v1"
    assert verdicts["ben"].notes == {"COR": "units carried throughout"}
    assert verdicts["ben"].comment is None
