"""Merging packs back: a round trip among three graders with overlap and a deliberate conflict,
merging twice changing nothing, settling conflicts, and the packs a merge refuses."""

from __future__ import annotations

import getpass
import json
import sqlite3
from pathlib import Path

import pytest

from cancelling import cancel_when
from conftest import people_scores, replayed_history
from physgrade.cli import CONFLICTS_WAIT, main
from physgrade.demo import build_demo
from physgrade.project import Project, ProjectError
from physgrade.score_history import kept_from_pack, merged_from
from physgrade.scores import clear_score, response_rubric, set_note, set_score
from physgrade.team import assign
from physgrade.team.merge import KEEP_PACK, KEEP_PROJECT, KEEPS, merge, open_conflicts, resolve
from physgrade.team.packs import make_packs

GRADERS = ("ann", "bob", "expert-1")
Key = tuple[str, str, str, str]   # grader, response, rubric, criterion


def human_scores(project: Project) -> dict[Key, tuple[int | None, str | None]]:
    return {(name, response, rubric, criterion): (value, note)
            for name, response, rubric, criterion, value, note in project.conn.execute(
                "SELECT r.name, s.response_id, s.rubric, s.criterion, s.value, s.note "
                "FROM scores s JOIN raters r ON r.id = s.rater_id WHERE r.kind = 'human'")}


def dump(db: Path) -> str:
    with Project.open(db) as project:
        return "\n".join(project.conn.iterdump())


def grade_all(pack: Path, grader: str, responses: list[str], shift: int) -> None:
    """Score every criterion of ``responses`` in the pack as the grader would, a note on one."""
    with Project.open(pack) as project:
        for n, response in enumerate(responses):
            rubric, multiple_choice = response_rubric(project, response)
            for i, criterion in enumerate(rubric.criteria):
                choices = criterion.choices(multiple_choice)
                set_score(project, grader, response, criterion.key,
                          choices[(n + i + shift) % len(choices)],
                          note=f"{grader} on {criterion.key}" if i == 0 else None)


def packed(demo: Path, folder: Path) -> dict[str, Path]:
    """The demo assigned to ann, bob and expert-1 (who has grades already), a third of the
    responses to two of them, and a blind pack for each in ``folder``: grader -> pack."""
    folder.mkdir()
    with Project.open(demo) as project:
        assign.apply(project, assign.plan(project, GRADERS, 0.3, seed=2,
                                          include_graded=True))
        made, _ = make_packs(project, folder)
    return {pack.grader: pack.path for pack in made}


@pytest.fixture
def study(demo: Path, tmp_path: Path) -> dict[str, Path]:
    return packed(demo, tmp_path / "packs")


def shared_response(db: Path) -> str:
    """A response assigned to both ann and bob."""
    with Project.open(db) as project:
        both = sorted(assign.assigned(project, "ann") & assign.assigned(project, "bob"))
    assert both, "the assignment gave ann and bob no response in common"
    return both[0]


def pack_responses(pack: Path, grader: str, count: int, also: str | None = None) -> list[str]:
    with Project.open(pack) as project:
        mine = sorted(assign.assigned(project, grader) - {also})
    return ([also] if also else []) + mine[:count]


def expert_scores(pack: Path) -> list[Key]:
    """expert-1's grades the pack came with, 0-2 criteria first (room for three values)."""
    with Project.open(pack) as project:
        return [key for key, _ in sorted(human_scores(project).items(),
                                         key=lambda item: (item[0][3] not in ("COR", "ANS"),
                                                           item[0]))]


def test_round_trip_among_three_graders_with_a_conflict(demo, study, capsys):
    both = shared_response(demo)
    grade_all(study["ann"], "ann", pack_responses(study["ann"], "ann", 5, also=both), 0)
    grade_all(study["bob"], "bob", pack_responses(study["bob"], "bob", 3, also=both), 1)
    with Project.open(study["bob"]) as pack:  # set, then cleared: history only
        extra = pack_responses(study["bob"], "bob", 6)[-1]
        set_score(pack, "bob", extra, "ANS", 0)
        clear_score(pack, "bob", extra, "ANS")
    # expert-1 changes a grade, removes one, adds a note, and changes one criterion here AND,
    # differently, in the project: the conflict.
    disputed, changed, removed, noted = expert_scores(study["expert-1"])[:4]
    with Project.open(demo) as project:
        original, note = human_scores(project)[disputed]
        assert original is not None
        project_value = (original + 1) % 3
        set_score(project, "expert-1", disputed[1], disputed[3], project_value)
    with Project.open(study["expert-1"]) as pack:
        pack_value = (original + 2) % 3
        set_score(pack, "expert-1", disputed[1], disputed[3], pack_value, note="second look")
        old = human_scores(pack)[changed][0]
        set_score(pack, "expert-1", changed[1], changed[3], 1 - old if old in (0, 1) else 0)
        clear_score(pack, "expert-1", removed[1], removed[3])
        set_note(pack, "expert-1", noted[1], noted[3], "checked twice")
    before = dump(demo)

    packs = [str(study[g]) for g in GRADERS]
    assert main(["merge", str(demo), *packs]) == CONFLICTS_WAIT
    out = capsys.readouterr().out
    assert f"{study['ann'].name} (ann): " in out and "taken into the project" in out
    conflict_line = next(line for line in out.splitlines() if disputed[1] in line)
    assert disputed[3] in conflict_line and "expert-1" in conflict_line
    project_side, pack_side = conflict_line.split("; pack ")
    assert f"project {project_value}" in project_side and " @ " in project_side
    assert pack_side.startswith(f"{pack_value} ('second look') @ ")

    with Project.open(demo) as project:
        merged = human_scores(project)
        history = project.conn.execute("SELECT source, count(*) FROM score_history "
                                       "WHERE source IS NOT NULL GROUP BY source").fetchall()
        assert project.conn.execute("SELECT count(*) FROM merges").fetchone()[0] == 3
        assert project.conn.execute("PRAGMA foreign_key_check").fetchall() == []
    for path in study.values():
        with Project.open(path) as pack:
            theirs = human_scores(pack)
            pack_history = pack.conn.execute("SELECT count(*) FROM score_history").fetchone()[0]
        for key, value in theirs.items():
            assert merged[key] == (value if key != disputed else (project_value, note)), key
        assert dict(history)[merged_from(path.name, pack_id_of(path))] == \
            pack_history > 0
    assert removed not in merged
    assert merged[noted][1] == "checked twice"
    assert {key[0] for key in merged if key[1] == both} >= {"ann", "bob"}
    assert ("bob", extra, "prefs", "ANS") not in merged
    assert before != dump(demo)

    # The same packs again: nothing at all changes.
    merged_once = dump(demo)
    assert main(["merge", str(demo), *packs]) == CONFLICTS_WAIT
    assert capsys.readouterr().out.count("nothing new") == 3
    assert dump(demo) == merged_once

    assert main(["conflicts", str(demo)]) == 0
    assert disputed[1] in capsys.readouterr().out
    assert main(["conflicts", str(demo), "--json"]) == 0
    [waiting] = json.loads(capsys.readouterr().out)["conflicts"]
    assert (waiting["pack_value"], waiting["project_value"]) == (pack_value, project_value)
    assert waiting["pack_file"] == study["expert-1"].name

    assert main(["resolve", str(demo), str(waiting["id"]), "--keep", "pack", "--by", "dana"]) == 0
    assert "no conflicts wait" in capsys.readouterr().out
    with Project.open(demo) as project:
        assert human_scores(project)[disputed] == (pack_value, "second look")
        source, value = project.conn.execute("SELECT source, new_value FROM score_history "
                                             "ORDER BY id DESC LIMIT 1").fetchone()
        assert (source, value) == (f"conflict {waiting['id']} resolved by dana: kept "
                                   f"{study['expert-1'].name}", pack_value)
        assert open_conflicts(project) == []
    settled = dump(demo)
    assert main(["merge", str(demo), *packs]) == 0
    assert dump(demo) == settled


def pack_id_of(path: Path) -> str:
    with Project.open(path) as pack:
        return pack.conn.execute("SELECT pack_id FROM pack_origin").fetchone()[0]


def conflict_on_expert_1(demo: Path, pack: Path) -> tuple[Key, int, int]:
    """expert-1 changes one criterion in the project and, differently, in the pack."""
    key = expert_scores(pack)[0]
    with Project.open(demo) as project:
        original = human_scores(project)[key][0]
        assert original is not None
        set_score(project, "expert-1", key[1], key[3], (original + 1) % 3)
    with Project.open(pack) as opened:
        set_score(opened, "expert-1", key[1], key[3], (original + 2) % 3)
    return key, (original + 1) % 3, (original + 2) % 3


def test_keeping_the_projects_value_settles_it_for_good(demo, study):
    key, ours, theirs = conflict_on_expert_1(demo, study["expert-1"])
    with Project.open(demo) as project:
        [conflict] = merge(project, [study["expert-1"]]).conflicts
        with pytest.raises(ValueError, match="keep must be"):
            resolve(project, [conflict.id], "both", "dana")
        with pytest.raises(ProjectError, match="no conflict 999"):
            resolve(project, [conflict.id, 999], KEEP_PROJECT, "dana")
        project.conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 999)  # as old builds
        with pytest.raises(ProjectError, match="no conflict 1000000, 1000001, "):
            resolve(project, [conflict.id, *range(10**6, 10**6 + 1000)], KEEP_PROJECT, "dana")
        changes = resolve(project, [conflict.id], KEEP_PROJECT, "dana")
        assert changes.kinds == {"conflicts"} and changes.responses == {key[1]}
        assert human_scores(project)[key][0] == ours
        assert project.conn.execute("SELECT resolution, resolved_by FROM merge_conflicts"
                                    ).fetchall() == [(KEEP_PROJECT, "dana")]
        with pytest.raises(ProjectError, match="already resolved"):
            resolve(project, [conflict.id], KEEP_PACK, "dana")
        result = merge(project, [study["expert-1"]])
        assert result.conflicts == () and result.packs[0].already
        assert human_scores(project)[key][0] == ours


@pytest.mark.parametrize("keep", KEEPS)
def test_the_history_replays_to_the_projects_scores_through_a_conflict(demo, study, keep):
    """The pack's value of a conflict is proposed, not applied, until a person keeps it."""
    key, ours, theirs = conflict_on_expert_1(demo, study["expert-1"])
    with Project.open(demo) as project:
        assert replayed_history(project) == people_scores(project)
        [conflict] = merge(project, [study["expert-1"]]).conflicts
        assert replayed_history(project) == people_scores(project)
        source = merged_from(study["expert-1"].name, pack_id_of(study["expert-1"]))
        assert project.conn.execute(
            "SELECT action, old_value, new_value, proposed FROM score_history "
            "WHERE source = ? AND response_id = ? AND criterion = ?",
            (source, key[1], key[3])).fetchall() == [("change", 3 - ours - theirs, theirs, 1)]
        last_row = project.conn.execute("SELECT max(id) FROM score_history").fetchone()[0]
        resolve(project, [conflict.id], keep, "dana")
        assert human_scores(project)[key][0] == (theirs if keep == KEEP_PACK else ours)
        assert replayed_history(project) == people_scores(project)
        settled = project.conn.execute(
            "SELECT action, old_value, new_value, source, proposed FROM score_history "
            "WHERE id > ?", (last_row,)).fetchall()
        assert settled == ([("change", ours, theirs, kept_from_pack(
            conflict.id, "dana", study["expert-1"].name), 0)] if keep == KEEP_PACK else [])


def test_a_conflict_follows_the_pack_and_ends_when_both_sides_agree(demo, study):
    key, ours, theirs = conflict_on_expert_1(demo, study["expert-1"])
    with Project.open(demo) as project:
        merge(project, [study["expert-1"]])
    with Project.open(study["expert-1"]) as pack:
        set_note(pack, "expert-1", key[1], key[3], "on reflection")
    with Project.open(demo) as project:
        [conflict] = merge(project, [study["expert-1"]]).conflicts  # the same one, up to date
        assert (conflict.pack_value, conflict.pack_note) == (theirs, "on reflection")
        assert project.conn.execute("SELECT count(*) FROM merge_conflicts").fetchone()[0] == 1
        set_score(project, "expert-1", key[1], key[3], theirs, note="on reflection")
        assert merge(project, [study["expert-1"]]).conflicts == ()
        settled = project.conn.execute("SELECT resolution, resolved_by FROM merge_conflicts")
        assert settled.fetchone() == (KEEP_PACK, f"merge of {study['expert-1'].name}")


def test_a_pack_gone_back_to_the_base_leaves_the_projects_value(demo, study):
    key, ours, theirs = conflict_on_expert_1(demo, study["expert-1"])
    with Project.open(demo) as project:
        merge(project, [study["expert-1"]])
    with Project.open(study["expert-1"]) as pack:
        set_score(pack, "expert-1", key[1], key[3], 3 - ours - theirs)  # the one they began with
    with Project.open(demo) as project:
        result = merge(project, [study["expert-1"]])
        assert result.conflicts == () and result.packs[0].applied == 0
        assert human_scores(project)[key][0] == ours
        assert project.conn.execute("SELECT resolution FROM merge_conflicts").fetchone() == \
            (KEEP_PROJECT,)
        assert replayed_history(project) == people_scores(project)


def test_a_score_cleared_in_the_pack_is_removed_and_the_history_says_so(demo, study):
    key = expert_scores(study["expert-1"])[0]
    with Project.open(study["expert-1"]) as pack:
        clear_score(pack, "expert-1", key[1], key[3])
    with Project.open(demo) as project:
        result = merge(project, [study["expert-1"]])
        assert (result.packs[0].applied, result.packs[0].history) == (1, 1)
        assert key not in human_scores(project)
        assert project.conn.execute(
            "SELECT action, source FROM score_history ORDER BY id DESC LIMIT 1").fetchone()[0] \
            == "clear"


def test_a_pack_of_another_project_is_refused(demo, study, tmp_path, capsys):
    other = tmp_path / "other.physgrade"
    build_demo(other)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with Project.open(other) as project:
        assign.apply(project, assign.plan(project, ["ann"], 0.0, seed=1,
                                          include_graded=True))
        [foreign], _ = make_packs(project, elsewhere)
    grade_all(study["ann"], "ann", pack_responses(study["ann"], "ann", 2), 0)
    before = dump(demo)
    assert main(["merge", str(demo), str(study["ann"]), str(foreign.path)]) == 1
    error = capsys.readouterr().err
    assert f"{foreign.path.name} is a pack of another project, other.physgrade " in error
    assert "merge it into the project it was made from" in error
    assert dump(demo) == before  # not even the good pack before it


def test_a_pack_of_another_project_with_the_same_file_name_is_told_apart(demo, tmp_path):
    """Two copies of the demo share the name demo.physgrade: their ids and paths differ."""
    elsewhere = tmp_path / "elsewhere"
    namesake = elsewhere / demo.name
    build_demo(namesake)
    with Project.open(namesake) as project:
        assign.apply(project, assign.plan(project, ["ann"], 0.0, seed=1,
                                          include_graded=True))
        [foreign], _ = make_packs(project, elsewhere)
        theirs = project.conn.execute("SELECT id FROM project_identity").fetchone()[0]
    with Project.open(demo) as project:
        ours = project.conn.execute("SELECT id FROM project_identity").fetchone()[0]
        with pytest.raises(ProjectError) as refused:
            merge(project, [foreign.path])
    message = str(refused.value)
    assert message.startswith(f"{foreign.path.name} is a pack of another project also named "
                              f"{demo.name} (project id {theirs[:8]}; this one, {demo}, is "
                              f"{ours[:8]}), made for ann at ")
    assert message.endswith("merge it into the project it was made from; nothing merged")


@pytest.mark.parametrize("criterion, value, why", [
    ("COR", 7, "COR = 7 is outside the rubric"),
    ("ANS", 1, "multiple choice: all or nothing")])
def test_a_value_outside_the_rubric_refuses_the_merge(demo, study, criterion, value, why):
    """Stored in a pack behind the rubric's back (an edited file), e.g. a multiple-choice
    final answer given half marks."""
    with Project.open(demo) as project:
        response, grader = project.conn.execute(
            "SELECT s.id, r.name FROM responses s JOIN questions q ON q.id = s.question_id "
            "JOIN assignments a ON a.response_id = s.id JOIN raters r ON r.id = a.grader_id "
            "WHERE q.kind = 'problem' AND q.options IS NOT NULL ORDER BY s.id").fetchone()
    with Project.open(study[grader]) as pack:
        pack.conn.execute("INSERT OR REPLACE INTO scores VALUES ((SELECT id FROM raters WHERE "
                          "name = ?), ?, 'prefs', ?, ?, NULL, '2025-01-01T00:00:00.000Z')",
                          (grader, response, criterion, value))
    before = dump(demo)
    with Project.open(demo) as project, pytest.raises(ProjectError) as refused:
        merge(project, list(study.values()))
    assert f"{study[grader].name}, response {response}, criterion {criterion}: " in \
        str(refused.value)
    assert why in str(refused.value)
    assert dump(demo) == before


def test_a_cancelled_merge_changes_nothing(demo, study, monkeypatch, capsys):
    grade_all(study["ann"], "ann", pack_responses(study["ann"], "ann", 3), 0)
    before = dump(demo)
    cancel_when(monkeypatch, lambda done, total, stage: stage.startswith("bringing"))
    assert main(["merge", str(demo), str(study["ann"])]) == 130
    assert "nothing changed" in capsys.readouterr().err
    assert dump(demo) == before


def test_files_that_are_no_pack_are_refused(demo, study, tmp_path):
    junk = tmp_path / "junk.physgrade"
    junk.write_bytes(b"not a database at all" * 100)
    with Project.open(demo) as project:
        with pytest.raises(ProjectError, match="junk.physgrade"):
            merge(project, [junk])
        with pytest.raises(ProjectError, match="a project, not a pack"):
            merge(project, [demo])
        with pytest.raises(ProjectError, match="no pack file"):
            merge(project, [tmp_path / "missing.physgrade"])


def test_resolve_by_grader_and_all_from_the_command_line(demo, study, capsys):
    key, ours, theirs = conflict_on_expert_1(demo, study["expert-1"])
    response = pack_responses(study["ann"], "ann", 1)[0]
    with Project.open(demo) as project:  # ann grades one criterion here and in her pack
        set_score(project, "ann", response, "COH", 0)
        rubric = response_rubric(project, response)[0].key
    with Project.open(study["ann"]) as pack:
        set_score(pack, "ann", response, "COH", 1)
    assert main(["merge", str(demo), str(study["ann"]), str(study["expert-1"])]) == \
        CONFLICTS_WAIT
    assert main(["resolve", str(demo), "--keep", "pack"]) == 1
    assert "give --all or --grader" in capsys.readouterr().err
    assert main(["resolve", str(demo), "--grader", "ann", "--keep", "project"]) == 0
    out = capsys.readouterr().out
    assert f"{response} COH ann: kept the project's 0" in out and "1 conflict still open" in out
    assert main(["resolve", str(demo), "--all", "--keep", "pack"]) == 0
    assert f"{key[1]} {key[3]} expert-1: kept the pack's {theirs}" in capsys.readouterr().out
    with Project.open(demo) as project:
        assert project.conn.execute("SELECT rater_id IN (SELECT id FROM raters WHERE name = "
                                    "'ann'), resolution, resolved_by FROM merge_conflicts "
                                    "ORDER BY 1 DESC").fetchall() == [
            (1, KEEP_PROJECT, getpass.getuser()), (0, KEEP_PACK, getpass.getuser())]
        scores = human_scores(project)
    assert scores[("ann", response, rubric, "COH")][0] == 0
    assert scores[key][0] == theirs
    assert main(["merge", str(demo), str(study["ann"]), str(study["expert-1"])]) == 0
