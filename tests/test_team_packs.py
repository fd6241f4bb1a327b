"""Grader packs: one grader's assigned responses as a project file of its own, blind by default,
that opens and works like any project."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from physgrade.cli import main
from physgrade.project import Project, ProjectError
from physgrade.queue import ASSIGNED, load_position
from physgrade.raters import HUMAN, ensure_rater
from physgrade.tasks import Cancelled, Task
from physgrade.team import assign
from physgrade.team.packs import make_pack, make_packs, origin, pack_name, project_id

GRADERS = ("expert-1", "expert-2", "carol")


def assign_by_sql(project: Project, grader: str, response_ids: list[str]) -> None:
    """Assign exactly these responses (assign's plan picks its own)."""
    with project.transaction():
        rater, _ = ensure_rater(project, grader, HUMAN)
        project.conn.executemany("INSERT INTO assignments (grader_id, response_id) VALUES (?, ?)",
                                 [(rater, r) for r in response_ids])


@pytest.fixture
def study(demo: Path) -> Path:
    """The demo (two judges on every response, expert-1 and expert-2 with grades), its
    responses assigned to three graders, a fifth of them to two."""
    with Project.open(demo) as project:
        assign.apply(project, assign.plan(project, GRADERS, 0.2, seed=5,
                                          include_graded=True))
    return demo


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Where the packs go (the demo is beside it)."""
    made = tmp_path / "packs"
    made.mkdir()
    return made


def rows(project: Project, sql: str, *params) -> list[tuple]:
    return project.conn.execute(sql, params).fetchall()


def test_a_blind_pack_holds_the_graders_responses_and_grades_and_nothing_of_anyone_else(
        study, folder):
    out = folder / "expert-1.physgrade"
    with Project.open(study) as project:
        project.conn.execute("UPDATE rubric_levels SET description = 'our own wording' "
                             "WHERE rubric = 'prefs' AND criterion = 'COR' AND level = '1'")
        mine = assign.assigned(project, "expert-1")
        made, changes = make_pack(project, "expert-1", out)
        their_scores = set(rows(project, "SELECT s.* FROM scores s JOIN raters r ON "
                                          "r.id = s.rater_id WHERE r.name = 'expert-1'"))
        answered = f"SELECT question_id FROM responses WHERE id IN ({', '.join('?' * len(mine))})"
        questions = {q for (q,) in rows(project, f"{answered} UNION SELECT variant_of FROM "
                                                 f"questions WHERE id IN ({answered}) AND "
                                                 "variant_of IS NOT NULL", *mine, *mine)}
        levels = rows(project, "SELECT * FROM rubric_levels ORDER BY 1, 2, 3")
        identity = project_id(project)
        recorded = rows(project, "SELECT grader_id, file_name, blind, responses, history_merged "
                                 "FROM packs")
        base = rows(project, "SELECT count(*), count(DISTINCT rater_id) FROM pack_base")[0]
    assert made.path == out and made.blind and made.responses == len(mine) > 20
    assert "expert-1" in made.text() and "blind" in made.text()
    assert changes.kinds == {"packs"}
    with Project.open(out) as pack:
        assert {r for (r,) in rows(pack, "SELECT id FROM responses")} == mine
        assert {q for (q,) in rows(pack, "SELECT id FROM questions")} == questions
        assert made.questions == len(questions)
        # No judge, rule checker or colleague: the grader alone, with their own grades.
        assert rows(pack, "SELECT name, kind FROM raters") == [("expert-1", "human")]
        held = set(rows(pack, "SELECT * FROM scores"))
        assert held and held == {s for s in their_scores if s[1] in mine}
        assert rows(pack, "SELECT DISTINCT rater_id FROM assessments") == \
            rows(pack, "SELECT id FROM raters")
        for table in ("score_history", "judge_reviews", "judge_review_criteria", "bloom_labels",
                      "judge_aliases", "review_samples", "embeddings", "imports",
                      "grader_positions", "judge_batches", "duplicate_pairs", "packs"):
            assert rows(pack, f"SELECT count(*) FROM {table}") == [(0,)], table
        assert rows(pack, "SELECT * FROM rubric_levels ORDER BY 1, 2, 3") == levels
        assert ("prefs", "COR", "1", "our own wording") in levels
        assert {r for (r,) in rows(pack, "SELECT response_id FROM assignments")} == mine
        found = origin(pack)
        assert found is not None and found.grader == "expert-1" and found.blind
        assert found.project_id == identity and found.project_name == study.name
        assert project_id(pack) != identity  # a project of its own
        # The Grade page's queue is the assignment.
        assert load_position(pack, "expert-1").filter.assignment == {ASSIGNED}
    # The project remembers the pack and, as the base of a merge, every grade copied into it.
    assert recorded == [(recorded[0][0], out.name, 1, len(mine), 0)]
    assert base == (len(held), 1)
    assert [p.name for p in folder.iterdir()] == [out.name]  # no temporary file left


def test_with_others_the_pack_holds_the_judges_and_colleagues_on_those_responses(
        study, folder, capsys):
    out = folder / "carol.physgrade"
    assert main(["pack", str(study), "--grader", "carol", "--out", str(out),
                 "--with-others"]) == 0
    assert "written to" in capsys.readouterr().out
    with Project.open(study) as project:
        mine = assign.assigned(project, "carol")
        everyone = set(rows(project, "SELECT * FROM scores"))
        people = rows(project, "SELECT count(*) FROM pack_base b JOIN raters r ON "
                               "r.id = b.rater_id WHERE r.kind = 'human'")[0][0]
    with Project.open(out) as pack:
        kinds = dict(rows(pack, "SELECT name, kind FROM raters WHERE name != 'carol'"))
        held = set(rows(pack, "SELECT * FROM scores"))
        pack_people = rows(pack, "SELECT count(*) FROM scores s JOIN raters r ON "
                                 "r.id = s.rater_id WHERE r.kind = 'human'")[0][0]
        assert not origin(pack).blind  # type: ignore[union-attr]
    assert {"arbiter-large", "arbiter-mini"} <= set(kinds) and "llm" in kinds.values()
    assert "human" in kinds.values()  # a colleague's grades of those responses
    assert held == {s for s in everyone if s[1] in mine}
    assert people == pack_people > 0  # the base holds the people's grades, not the judges'


def test_commands_work_on_a_pack(study, folder, capsys):
    out = folder / "pack.physgrade"
    with Project.open(study) as project:
        make_pack(project, "expert-2", out)
    assert main(["info", str(out), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["counts"]["responses"] > 0 and [r["name"] for r in info["raters"]] == ["expert-2"]
    assert info["pack"]["grader"] == "expert-2" and info["pack"]["blind"] is True
    assert info["pack"]["project_name"] == Path(study).name
    assert main(["info", str(out)]) == 0
    assert "grader pack for expert-2, made from " in capsys.readouterr().out
    assert main(["info", str(study), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pack"] is None
    exported = folder / "grades.jsonl"
    assert main(["export", str(out), "--kind", "grades", "--out", str(exported)]) == 0
    graders = {json.loads(line)["grader"] for line in exported.read_text().splitlines()}
    assert graders == {"expert-2"}


def test_a_pack_holds_the_base_question_of_a_variant(demo, folder):
    with Project.open(demo) as project:
        variant, base = rows(project, "SELECT id, variant_of FROM questions "
                                      "WHERE variant_of IS NOT NULL LIMIT 1")[0]
        response = rows(project, "SELECT id FROM responses WHERE question_id = ?", variant)[0][0]
        assign_by_sql(project, "vera", [response])
        made, _ = make_pack(project, "vera", folder / "vera.physgrade")
    with Project.open(made.path) as pack:
        assert {q for (q,) in rows(pack, "SELECT id FROM questions")} == {variant, base}
        assert rows(pack, "PRAGMA foreign_key_check") == []
    assert made.responses == 1 and made.questions == 2


def test_refusals_write_nothing(study, folder):
    taken = folder / "taken.physgrade"
    taken.write_text("someone's file")
    with Project.open(study) as project:
        with pytest.raises(ProjectError, match="nobody-here has no assigned responses"):
            make_pack(project, "nobody-here", folder / "a.physgrade")
        ensure_rater(project, "idle", HUMAN)
        with pytest.raises(ProjectError, match="idle has no assigned responses"):
            make_pack(project, "idle", folder / "b.physgrade")
        with pytest.raises(ProjectError, match="already exists"):
            make_pack(project, "carol", taken)
        with pytest.raises(ProjectError, match="does not exist"):
            make_pack(project, "carol", folder / "no-folder" / "c.physgrade")
        with pytest.raises(ProjectError, match="idle has no assigned responses"):
            make_packs(project, folder, ["carol", "idle"])  # checked before any is written
        assert rows(project, "SELECT count(*) FROM packs") == [(0,)]
    assert taken.read_text() == "someone's file"
    assert [p.name for p in folder.iterdir()] == [taken.name]


def test_a_pack_cancelled_half_way_never_appears(study, folder):
    out = folder / "carol.physgrade"

    def progress(done, total, stage):
        if done == 1:  # the responses are copied, the pack not recorded yet
            task.cancel()

    task = Task(progress)
    with Project.open(study) as project:
        with pytest.raises(Cancelled):
            make_pack(project, "carol", out, task=task)
        assert rows(project, "SELECT count(*) FROM packs") == [(0,)]
        assert rows(project, "SELECT count(*) FROM pack_base") == [(0,)]
    assert list(folder.iterdir()) == []


def test_a_pack_on_a_full_disk_names_the_pack_and_leaves_nothing(study, folder, monkeypatch):
    """SQLite's own "database or disk is full", met while the rows are copied into the pack,
    said of the pack the user asked for (not of the project, nor the hidden part)."""
    from physgrade.team import packs

    copy = packs._copy_rows

    def onto_a_full_disk(project, pack, task):
        project.conn.execute(f"PRAGMA {packs._SCHEMA}.max_page_count = 8")  # the pack may not grow
        return copy(project, pack, task)

    monkeypatch.setattr(packs, "_copy_rows", onto_a_full_disk)
    out = folder / "carol.physgrade"
    with Project.open(study) as project:
        with pytest.raises(ProjectError) as refused:
            make_pack(project, "carol", out)
        assert str(refused.value) == (f"the disk holding {out} is full; free some space and try "
                                      "again; the pack was not written")
        assert rows(project, "SELECT count(*) FROM packs") == [(0,)]
    assert list(folder.iterdir()) == []


def test_packs_for_every_assignee_named_after_them(study, folder):
    reports = []
    with Project.open(study) as project:
        made, changes = make_packs(project, folder, task=Task(lambda *a: reports.append(a)))
        assert [p.grader for p in made] == sorted(GRADERS)
        assert [p.path.name for p in made] == [pack_name(project, g) for g in sorted(GRADERS)]
        assert rows(project, "SELECT count(*) FROM packs") == [(3,)]
    assert made[0].path.name == "demo-carol.physgrade"
    assert sorted(p.name for p in folder.iterdir()) == sorted(p.path.name for p in made)
    assert reports[-1][:2] == (9, 9) and changes.kinds == {"packs"}


def test_cancelling_between_packs_keeps_those_written(study, folder):
    task = Task(lambda done, total, stage: task.cancel() if done == 3 else None)
    with Project.open(study) as project:
        with pytest.raises(Cancelled):
            make_packs(project, folder, task=task)
        [(recorded, grader, name)] = rows(project, "SELECT p.id, r.name, p.file_name FROM packs "
                                                   "p JOIN raters r ON r.id = p.grader_id")
    assert (grader, name) == ("carol", "demo-carol.physgrade")
    assert [p.name for p in folder.iterdir()] == [name]
    with Project.open(folder / name) as pack:
        assert origin(pack).pack_id == recorded  # the pack in the folder is the one recorded


def test_pack_names_are_safe_file_names(project):
    assert pack_name(project, "Zoë O'Brien / team 2") == "test-zoe-o-brien-team-2.physgrade"
    assert pack_name(project, "日本") == "test-grader.physgrade"
    assert pack_name(project, "x" * 300) == f"test-{'x' * 60}.physgrade"
