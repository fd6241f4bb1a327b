"""The three-way merge, case by case: notes alone, a pack merged while its grader goes on, two
packs of one grader, a pack made with everyone's grades, a conflict settled and raised again,
a person only the pack knows, what a merge says it changed, and a project locked meanwhile."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

import physgrade.project
from conftest import people_scores, replayed_history
from physgrade.changes import RecordKind
from physgrade.cli import main
from physgrade.project import Project, ProjectError
from physgrade.rubric import RUBRICS
from physgrade.score_history import merged_from
from physgrade.scores import clear_score, response_rubric, set_note, set_score
from physgrade.team import assign
from physgrade.team.merge import KEEP_PACK, KEEP_PROJECT, merge, open_conflicts, resolve
from physgrade.team.packs import make_pack
from test_team_merge import GRADERS, Key, dump, expert_scores, grade_all, human_scores, pack_id_of, packed

#: Where merged history rows say they came from.
MERGED = "source LIKE 'merged from %'"


@pytest.fixture
def study(demo: Path, tmp_path: Path) -> dict[str, Path]:
    return packed(demo, tmp_path / "packs")


def value_besides(project: Project, key: Key, *taken: int | None) -> int | None:
    """A value the rubric allows for ``key``'s criterion and response, none of ``taken``."""
    criterion = next(c for c in RUBRICS[key[2]].criteria if c.key == key[3])
    return next(v for v in criterion.choices(response_rubric(project, key[1])[1])
                if v not in taken)


def score(project: Project, key: Key, value: int | None, note: str | None = None) -> None:
    set_score(project, key[0], key[1], key[3], value, note=note, rubric=key[2])


def merged_history(project: Project) -> list[tuple]:
    return project.conn.execute(f"SELECT response_id, criterion, action, new_value, changed_at "
                                f"FROM score_history WHERE {MERGED} ORDER BY id").fetchall()


def pack_history(pack: Path) -> list[tuple]:
    with Project.open(pack) as opened:
        return opened.conn.execute("SELECT response_id, criterion, action, new_value, "
                                   "changed_at FROM score_history ORDER BY id").fetchall()


# -- (1) notes alone -----------------------------------------------------------------------------


def test_a_note_changed_in_the_pack_alone_is_merged(demo, study):
    key = expert_scores(study["expert-1"])[0]
    with Project.open(study["expert-1"]) as pack:
        set_note(pack, key[0], key[1], key[3], "looked again", rubric=key[2])
    with Project.open(demo) as project:
        value = human_scores(project)[key][0]
        result = merge(project, [study["expert-1"]])
        assert (result.packs[0].applied, result.packs[0].history, result.conflicts) == (1, 0, ())
        assert human_scores(project)[key] == (value, "looked again")
        assert merge(project, [study["expert-1"]]).packs[0].already


def test_a_note_changed_in_the_project_alone_stays(demo, study):
    noted, changed = expert_scores(study["expert-1"])[:2]
    with Project.open(demo) as project:
        set_note(project, noted[0], noted[1], noted[3], "project's note", rubric=noted[2])
        old = human_scores(project)[changed][0]
    with Project.open(study["expert-1"]) as pack:  # something else changes in the pack
        score(pack, changed, new := value_besides(pack, changed, old))
    with Project.open(demo) as project:
        result = merge(project, [study["expert-1"]])
        assert (result.packs[0].applied, result.conflicts) == (1, ())
        scores = human_scores(project)
    assert scores[noted][1] == "project's note"
    assert scores[changed][0] == new


def test_different_notes_on_one_value_are_a_conflict_the_same_note_is_not(demo, study):
    disputed, agreed = expert_scores(study["expert-1"])[:2]
    with Project.open(demo) as project:
        value = human_scores(project)[disputed][0]
        set_note(project, disputed[0], disputed[1], disputed[3], "ours", rubric=disputed[2])
        set_note(project, agreed[0], agreed[1], agreed[3], "both", rubric=agreed[2])
    with Project.open(study["expert-1"]) as pack:
        set_note(pack, disputed[0], disputed[1], disputed[3], "theirs", rubric=disputed[2])
        set_note(pack, agreed[0], agreed[1], agreed[3], "both", rubric=agreed[2])
    with Project.open(demo) as project:
        result = merge(project, [study["expert-1"]])
        [conflict] = result.conflicts
        assert (conflict.response_id, conflict.criterion, conflict.grader) == \
            (disputed[1], disputed[3], "expert-1")
        assert (conflict.project_value, conflict.project_note) == (value, "ours")
        assert (conflict.pack_value, conflict.pack_note) == (value, "theirs")
        assert "'ours'" in conflict.text() and "'theirs'" in conflict.text()
        assert result.packs[0].applied == 0
        assert human_scores(project)[disputed] == (value, "ours")  # nothing overwritten
        resolve(project, [conflict.id], KEEP_PACK, "dana")
        assert human_scores(project)[disputed] == (value, "theirs")
        assert human_scores(project)[agreed][1] == "both"
        assert open_conflicts(project) == []
        assert merge(project, [study["expert-1"]]).packs[0].already


def test_keeping_a_packs_score_without_a_note_removes_the_projects_note(demo, study):
    key = expert_scores(study["expert-1"])[0]
    with Project.open(demo) as project:
        old = human_scores(project)[key][0]
        set_note(project, key[0], key[1], key[3], "ours", rubric=key[2])
    with Project.open(study["expert-1"]) as pack:
        score(pack, key, new := value_besides(pack, key, old))
        set_note(pack, key[0], key[1], key[3], "", rubric=key[2])
    with Project.open(demo) as project:
        [conflict] = merge(project, [study["expert-1"]]).conflicts
        assert (conflict.project_note, conflict.pack_value, conflict.pack_note) == \
            ("ours", new, None)
        resolve(project, [conflict.id], KEEP_PACK, "dana")
        assert human_scores(project)[key] == (new, None)
        assert merge(project, [study["expert-1"]]).packs[0].already


# -- (2) a pack merged, then graded further ------------------------------------------------------


def test_a_pack_merged_again_after_more_grading_brings_only_the_new_work(demo, study):
    pack_path = study["ann"]
    with Project.open(pack_path) as pack:
        mine = sorted(assign.assigned(pack, "ann"))
    grade_all(pack_path, "ann", mine[:3], 0)
    with Project.open(demo) as project:
        first = merge(project, [pack_path]).packs[0]
        assert first.applied > 0 and first.history == first.applied
        assert merged_history(project) == pack_history(pack_path)
    with Project.open(pack_path) as pack:  # one earlier grade changed, then two more responses
        key = next(k for k in human_scores(pack) if k[1] == mine[0])
        score(pack, key, changed := value_besides(pack, key, human_scores(pack)[key][0]))
    grade_all(pack_path, "ann", mine[3:5], 1)
    with Project.open(pack_path) as pack:
        criteria = sum(len(response_rubric(pack, r)[0].criteria) for r in mine[3:5])
    with Project.open(demo) as project:
        second = merge(project, [pack_path])
        assert second.conflicts == ()
        assert (second.packs[0].applied, second.packs[0].history) == (criteria + 1, criteria + 1)
        assert human_scores(project)[key][0] == changed
        history = merged_history(project)
        assert history == pack_history(pack_path)  # each row once, in order
        assert len(set(history)) == len(history)
        assert merge(project, [pack_path, pack_path]).packs[1].already
        assert merged_history(project) == history


def test_an_older_copy_of_a_pack_merged_after_a_newer_one_is_refused(demo, study, tmp_path):
    """Monday's copy, merged again after Wednesday's, would take back Wednesday's grades."""
    pack_path, monday = study["ann"], tmp_path / "ann-monday.physgrade"
    with Project.open(pack_path) as pack:
        mine = sorted(assign.assigned(pack, "ann"))[:2]
    grade_all(pack_path, "ann", mine, 0)
    shutil.copy(pack_path, monday)
    grade_all(pack_path, "ann", mine, 1)
    with Project.open(demo) as project:
        merge(project, [monday])
    for packs in ([pack_path], [pack_path, monday]):
        with Project.open(demo) as project:
            merge(project, packs[:1])
        before = dump(demo)
        with Project.open(demo) as project, pytest.raises(ProjectError) as refused:
            merge(project, [*packs, monday])
        assert dump(demo) == before
    held, merged = len(pack_history(monday)), len(pack_history(pack_path))
    assert f"ann-monday.physgrade is an older copy of a pack merged already (it holds {held} " \
        f"changes of the {merged} merged)" in str(refused.value)
    with Project.open(pack_path) as pack, Project.open(demo) as project:
        assert human_scores(project).items() >= human_scores(pack).items()


def test_two_copies_of_one_pack_graded_apart_cannot_both_be_merged(demo, study, tmp_path):
    """The grader copied the pack to a second machine and graded in both: once one copy is
    merged, the other's grades would silently take its place, so it is refused."""
    laptop, desktop = study["ann"], tmp_path / "ann-desktop.physgrade"
    shutil.copy(laptop, desktop)
    with Project.open(laptop) as pack:
        mine = sorted(assign.assigned(pack, "ann"))
    grade_all(laptop, "ann", mine[:2], 0)
    grade_all(desktop, "ann", mine[2:5], 1)  # more changes than the laptop's
    with Project.open(demo) as project:
        merge(project, [laptop])
    before = dump(demo)
    with Project.open(demo) as project, pytest.raises(ProjectError) as refused:
        merge(project, [desktop])
    assert dump(demo) == before
    assert "ann-desktop.physgrade is a copy of a pack whose other copy" in str(refused.value)
    grade_all(laptop, "ann", mine[5:6], 0)  # the laptop's copy goes on merging
    with Project.open(demo) as project:
        assert merge(project, [laptop]).packs[0].applied > 0


def test_one_pack_named_twice_in_one_merge_is_merged_once(demo, study):
    with Project.open(study["ann"]) as pack:
        mine = sorted(assign.assigned(pack, "ann"))[:2]
    grade_all(study["ann"], "ann", mine, 0)
    with Project.open(demo) as project:
        once, twice = merge(project, [study["ann"], study["ann"]]).packs
        assert not once.already and twice.already
        assert merged_history(project) == pack_history(study["ann"])
        assert project.conn.execute("SELECT count(*) FROM merges").fetchone()[0] == 1


# -- (3) two packs of one grader ------------------------------------------------------------------


def test_two_packs_of_one_grader_disagreeing_make_a_conflict_against_the_first(demo, study,
                                                                              tmp_path):
    with Project.open(demo) as project:  # a second pack of the same assignment
        second, _ = make_pack(project, "expert-1", tmp_path / "expert-1-again.physgrade")
        assert project.conn.execute("SELECT count(*) FROM packs WHERE grader_id = (SELECT id "
                                    "FROM raters WHERE name = 'expert-1')").fetchone()[0] == 2
    first = study["expert-1"]
    disputed, only_second = expert_scores(first)[:2]
    with Project.open(demo) as project:
        original = human_scores(project)[disputed][0]
    with Project.open(first) as pack:
        score(pack, disputed, in_first := value_besides(pack, disputed, original))
    with Project.open(second.path) as pack:
        score(pack, disputed, in_second := value_besides(pack, disputed, original, in_first))
        score(pack, only_second, new := value_besides(pack, only_second,
                                                      human_scores(pack)[only_second][0]))
    with Project.open(demo) as project:
        result = merge(project, [first, second.path])
        assert [(p.applied, p.conflicts) for p in result.packs] == [(1, 0), (1, 1)]
        [conflict] = result.conflicts
        assert (conflict.pack_file, conflict.response_id, conflict.criterion) == \
            (second.path.name, disputed[1], disputed[3])
        assert (conflict.project_value, conflict.pack_value) == (in_first, in_second)
        assert human_scores(project)[disputed][0] == in_first
        assert human_scores(project)[only_second][0] == new


# -- (4) a pack with everyone's grades ------------------------------------------------------------


@pytest.fixture
def open_pack(demo: Path, tmp_path: Path) -> Path:
    """ann's pack made with the judges' verdicts and her colleagues' grades."""
    with Project.open(demo) as project:
        assign.apply(project, assign.plan(project, GRADERS, 0.3, seed=2,
                                          include_graded=True))
        made, _ = make_pack(project, "ann", tmp_path / "ann-open.physgrade", blind=False)
    assert not made.blind
    return made.path


def judge_scores(project: Project) -> list[tuple]:
    return project.conn.execute("SELECT s.* FROM scores s JOIN raters r ON r.id = s.rater_id "
                                "WHERE r.kind = 'llm' ORDER BY 1, 2, 3, 4").fetchall()


def test_an_open_pack_brings_nothing_of_others_unless_their_grades_changed_in_it(demo,
                                                                                open_pack):
    with Project.open(open_pack) as pack:
        colleagues = sorted(k for k in human_scores(pack) if k[0] != "ann")
        assert {k[0] for k in colleagues} == {"expert-1", "expert-2"}
        assert judge_scores(pack), "the open pack holds the judges' verdicts"
    with Project.open(demo) as project:
        before = dump(demo)
        assert merge(project, [open_pack]).packs[0].already
    assert dump(demo) == before

    edited, disputed = colleagues[0], next(k for k in colleagues if k[1] != colleagues[0][1])
    with Project.open(open_pack) as pack:
        # Someone edits the judges' verdicts and two of the colleagues' grades in the pack.
        pack.conn.execute("UPDATE scores SET value = 1 - coalesce(value, 0), note = 'edited' "
                          "WHERE rater_id IN (SELECT id FROM raters WHERE kind = 'llm')")
        score(pack, edited, edited_value := value_besides(pack, edited,
                                                          human_scores(pack)[edited][0]))
        score(pack, disputed, pack_value := value_besides(pack, disputed,
                                                          human_scores(pack)[disputed][0]))
    with Project.open(demo) as project:
        judges = judge_scores(project)
        # The colleague changed the other one differently in the project meanwhile.
        score(project, disputed, project_value := value_besides(
            project, disputed, human_scores(project)[disputed][0], pack_value))
        result = merge(project, [open_pack])
        assert judge_scores(project) == judges
        assert (result.packs[0].applied, result.packs[0].history) == (1, 2)
        assert human_scores(project)[edited][0] == edited_value
        assert human_scores(project)[disputed][0] == project_value
        [conflict] = result.conflicts
        assert (conflict.grader, conflict.response_id, conflict.criterion) == \
            (disputed[0], disputed[1], disputed[3])
        assert (conflict.project_value, conflict.pack_value) == (project_value, pack_value)
        brought = project.conn.execute(
            f"SELECT DISTINCT changed_by FROM score_history WHERE {MERGED}").fetchall()
        assert sorted(brought) == sorted({(edited[0],), (disputed[0],)})


# -- (5) settled for the project, then changed again in the pack ---------------------------------


def changed_on_both_sides(demo: Path, pack_path: Path) -> tuple[tuple, int, int, int]:
    """The pack's first expert score changed one way in the project and another in the pack:
    its key, the value both started from, the project's and the pack's."""
    key = expert_scores(pack_path)[0]
    with Project.open(demo) as project:
        original = human_scores(project)[key][0]
        score(project, key, ours := value_besides(project, key, original))
    with Project.open(pack_path) as pack:
        score(pack, key, theirs := value_besides(pack, key, original, ours))
    return key, original, ours, theirs


def test_a_conflict_kept_for_the_project_comes_back_if_the_pack_changes_again(demo, study):
    pack_path = study["expert-1"]
    key, original, ours, theirs = changed_on_both_sides(demo, pack_path)
    with Project.open(demo) as project:
        [first] = merge(project, [pack_path]).conflicts
        resolve(project, [first.id], KEEP_PROJECT, "dana")
        assert project.conn.execute(
            "SELECT value FROM pack_base WHERE response_id = ? AND criterion = ? AND rater_id = "
            "(SELECT id FROM raters WHERE name = ?)", (key[1], key[3], key[0])).fetchone() == \
            (theirs,)
    with Project.open(pack_path) as pack:  # the grader changes their mind once more
        score(pack, key, original)
    with Project.open(demo) as project:
        [again] = merge(project, [pack_path]).conflicts
        assert again.id != first.id
        assert (again.project_value, again.pack_value) == (ours, original)
        assert human_scores(project)[key][0] == ours
    with Project.open(pack_path) as pack:  # and at last gives the project's value
        score(pack, key, ours)
    with Project.open(demo) as project:
        result = merge(project, [pack_path])
        assert result.conflicts == () and result.packs[0].applied == 0
        assert human_scores(project)[key][0] == ours
        assert project.conn.execute("SELECT id, resolution FROM merge_conflicts ORDER BY id"
                                    ).fetchall() == [(first.id, KEEP_PROJECT),
                                                     (again.id, KEEP_PACK)]
        assert merge(project, [pack_path]).packs[0].already
        assert replayed_history(project) == people_scores(project)


def test_a_conflict_the_project_goes_back_on_is_applied_with_a_history_row_of_its_own(demo,
                                                                                      study):
    """The pack's rows came as a proposal; the value applied later needs a row that says so."""
    pack_path = study["expert-1"]
    key, original, ours, theirs = changed_on_both_sides(demo, pack_path)
    with Project.open(demo) as project:
        merge(project, [pack_path])
        score(project, key, original)  # the project takes its change back: the pack's stands
        result = merge(project, [pack_path])
        assert (result.conflicts, result.packs[0].applied, result.packs[0].history) == ((), 1, 0)
        assert human_scores(project)[key][0] == theirs
        assert project.conn.execute(
            "SELECT action, old_value, new_value, source, proposed FROM score_history "
            "ORDER BY id DESC LIMIT 1").fetchone() == (
            "change", original, theirs, merged_from(pack_path.name, pack_id_of(pack_path)), 0)
        assert replayed_history(project) == people_scores(project)


def test_a_removal_and_an_na_against_values_are_conflicts_kept_as_the_pack_says(demo, study):
    removed = expert_scores(study["expert-1"])[0]
    with Project.open(study["ann"]) as pack:
        conceptual = next(r for r in sorted(assign.assigned(pack, "ann"))
                          if response_rubric(pack, r)[0].key == "conceptual")
        set_score(pack, "ann", conceptual, "EXE", None)
    with Project.open(study["expert-1"]) as pack:
        clear_score(pack, removed[0], removed[1], removed[3], rubric=removed[2])
    with Project.open(demo) as project:
        set_score(project, "ann", conceptual, "EXE", 1)
        score(project, removed, value_besides(project, removed,
                                              human_scores(project)[removed][0]))
        conflicts = {c.grader: c for c in merge(project, [study["ann"], study["expert-1"]])
                     .conflicts}
        na, gone = conflicts["ann"], conflicts["expert-1"]
        assert (na.project_value, na.pack_given, na.pack_value) == (1, True, None)
        assert f"pack N/A @ {na.pack_time}" in na.text()
        assert (gone.pack_given, gone.pack_value) == (False, None) and gone.pack_time
        assert f"pack not scored @ {gone.pack_time}" in gone.text()
    merged_once = dump(demo)
    with Project.open(demo) as project:  # again: the removal's time is still known
        assert all(p.already for p in merge(project, [study["ann"], study["expert-1"]]).packs)
        assert open_conflicts(project) == [na, gone]
    assert dump(demo) == merged_once
    with Project.open(demo) as project:
        resolve(project, [na.id, gone.id], KEEP_PACK, "dana")
        scores = human_scores(project)
        assert scores[("ann", conceptual, "conceptual", "EXE")] == (None, None)
        assert removed not in scores
        assert project.conn.execute(
            "SELECT action FROM score_history WHERE source = ?",
            (f"conflict {gone.id} resolved by dana: kept {study['expert-1'].name}",)
        ).fetchall() == [("clear",)]
        assert all(p.already for p in merge(project, [study["ann"], study["expert-1"]]).packs)


# -- (6) a person only the pack knows ------------------------------------------------------------


def test_a_person_only_the_pack_knows_is_made_in_the_project(demo, study):
    with Project.open(study["ann"]) as pack:
        response = sorted(assign.assigned(pack, "ann"))[0]
        set_score(pack, "dave", response, "COH", 1, note="dave helped")
    with Project.open(demo) as project:
        assert project.conn.execute("SELECT count(*) FROM raters WHERE name = 'dave'"
                                    ).fetchone() == (0,)
        result = merge(project, [study["ann"]])
        assert RecordKind.RATERS in result.changes.kinds
        assert (result.packs[0].grader, result.packs[0].applied) == ("ann", 1)
        assert project.conn.execute("SELECT kind, prompt_version FROM raters WHERE name = "
                                    "'dave'").fetchall() == [("human", "")]
        rubric = response_rubric(project, response)[0].key
        assert human_scores(project)[("dave", response, rubric, "COH")] == (1, "dave helped")
        assert project.conn.execute(
            f"SELECT h.changed_by, r.name FROM score_history h JOIN raters r ON "
            f"r.id = h.rater_id WHERE {MERGED}").fetchall() == [("dave", "dave")]
        assert project.conn.execute("SELECT count(*) FROM assessments WHERE rater_id = (SELECT "
                                    "id FROM raters WHERE name = 'dave')").fetchone() == (1,)
        assert project.conn.execute("PRAGMA foreign_key_check").fetchall() == []


# -- (7) what a merge says it changed -----------------------------------------------------------


def test_the_changes_name_the_responses_merged_and_those_in_conflict(demo, study):
    with Project.open(study["ann"]) as pack:
        graded = sorted(assign.assigned(pack, "ann"))[:2]
    grade_all(study["ann"], "ann", graded, 0)
    key, original, _, theirs = changed_on_both_sides(demo, study["expert-1"])
    with Project.open(demo) as project:
        questions = {r: q for r, q in project.conn.execute("SELECT id, question_id FROM "
                                                           "responses")}
        changes = merge(project, [study["ann"], study["expert-1"]]).changes
        assert changes.kinds == {RecordKind.SCORES, RecordKind.CONFLICTS}
        assert changes.responses == {*graded, key[1]}
        assert changes.questions == {questions[r] for r in (*graded, key[1])}
        assert not merge(project, [study["ann"], study["expert-1"]]).changes
        [conflict] = open_conflicts(project)
        assert resolve(project, [conflict.id], KEEP_PACK, "dana").kinds == \
            {RecordKind.SCORES, RecordKind.CONFLICTS}
    with Project.open(study["expert-1"]) as pack:  # a conflict alone, brought up to date
        set_note(pack, key[0], key[1], key[3], "later", rubric=key[2])
    with Project.open(demo) as project:
        score(project, key, original)
        changes = merge(project, [study["expert-1"]]).changes
        assert changes.kinds == {RecordKind.CONFLICTS}
        assert (changes.responses, changes.questions) == ({key[1]}, {questions[key[1]]})
        score(project, key, theirs, note="later")  # the two agree now: the conflict settles
        changes = merge(project, [study["expert-1"]]).changes
        assert open_conflicts(project) == []
        assert changes.kinds == {RecordKind.CONFLICTS}
        assert (changes.responses, changes.questions) == ({key[1]}, {questions[key[1]]})


# -- (8) the project locked by another program --------------------------------------------------


def test_a_project_locked_by_another_program_refuses_the_merge_and_changes_nothing(
        demo, study, monkeypatch, capsys):
    monkeypatch.setattr(physgrade.project, "BUSY_TIMEOUT_MS", 100)
    with Project.open(study["ann"]) as pack:
        graded = sorted(assign.assigned(pack, "ann"))[:2]
    grade_all(study["ann"], "ann", graded, 0)
    before = dump(demo)
    other = sqlite3.connect(demo, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        assert main(["merge", str(demo), str(study["ann"])]) == 1
        error = capsys.readouterr().err
        assert f"{demo} is being written by another program" in error
        assert error.rstrip().endswith("the step that failed changed nothing")
        with Project.open(demo) as project, pytest.raises(sqlite3.OperationalError):
            merge(project, [study["ann"]])
        other.execute("ROLLBACK")
    finally:
        other.close()
    assert dump(demo) == before
    with Project.open(demo) as project:  # and once free, the whole pack comes
        assert merge(project, [study["ann"]]).packs[0].applied > 0
        assert merged_history(project) == pack_history(study["ann"])
