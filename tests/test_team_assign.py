"""Assignments: who grades what, with overlap, stratified and reproducible; the queue's facet."""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path

import pytest

from physgrade.changes import Changes, RecordKind
from physgrade.cli import main
from physgrade.project import Project, ProjectError
from physgrade.queries import graded_sql
from physgrade.queue import (
    ASSIGNED,
    ASSIGNMENT,
    NOT_ASSIGNED,
    Position,
    QueueFilter,
    facet_values,
    load_position,
    load_queue,
    save_position,
)
from physgrade.raters import is_person
from physgrade.selection import ResponseFilter
from physgrade.team.assign import AssignmentPlan, apply, assigned, assignees, plan

TEAM = ("ana", "ben", "cyd")


@pytest.fixture
def study(demo: Path) -> Project:
    """The demo project (126 responses of 3 models over 7 topics), open, its experts' grades
    taken out: every response is there to deal (a graded one is not, unless asked for:
    :func:`test_responses_a_person_graded_are_left_out_unless_included`)."""
    with Project.open(demo) as opened:
        opened.conn.execute("DELETE FROM scores WHERE rater_id IN "
                            f"(SELECT r.id FROM raters r WHERE {is_person()})")
        yield opened


def graded(project: Project) -> set[str]:
    """The responses some person has finished grading."""
    return {response for (response,) in project.conn.execute(graded_sql())}


def graders_of(made: AssignmentPlan) -> dict[str, set[str]]:
    """Response -> the graders a plan gives it to."""
    found: dict[str, set[str]] = defaultdict(set)
    for response, grader in made.rows:
        found[response].add(grader)
    return found


def stored(project: Project) -> set[tuple[str, str]]:
    """Every (response, grader) assignment in the project."""
    return set(project.conn.execute("SELECT a.response_id, r.name FROM assignments a "
                                    "JOIN raters r ON r.id = a.grader_id"))


def table_counts(project: Project) -> tuple[int, ...]:
    return tuple(project.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                 for table in ("assignments", "assignment_runs", "raters"))


def test_the_same_seed_gives_the_same_rows_and_another_seed_others(study: Project) -> None:
    first = plan(study, TEAM, 0.2, seed=11)
    assert plan(study, TEAM, 0.2, seed=11).rows == first.rows
    assert plan(study, TEAM, 0.2, seed=12).rows != first.rows
    assert table_counts(study)[:2] == (0, 0)  # planning reads only


@pytest.mark.parametrize("seed", range(6))
def test_overlap_is_exact_and_every_grader_gets_each_model_in_proportion(
        study: Project, seed: int) -> None:
    made = plan(study, TEAM, 0.2, seed=seed)
    assert made.responses() == 126
    assert made.doubled() == math.floor(126 * 0.2)
    given = graders_of(made)
    assert sorted(Counter(len(g) for g in given.values()).items()) == [(1, 101), (2, 25)]
    assert len(made.rows) == len(set(made.rows))  # a doubled response has two graders
    counts = made.counts()
    assert sum(counts.values()) == 151 and max(counts.values()) - min(counts.values()) <= 1

    by_model = made.by_facet("model")
    models: Counter[str] = Counter()
    for per in by_model.values():
        models.update(per)
    assert max(models.values()) - min(models.values()) <= 2  # the doubles too are stratified
    for grader in TEAM:
        for model, rows in models.items():
            proportional = counts[grader] * rows / len(made.rows)
            assert abs(by_model[grader].get(model, 0) - proportional) <= 1, (grader, model)
    # the topics are spread over everyone too
    by_topic = made.by_facet("topic")
    topics = {value for per in by_topic.values() for value in per}
    assert len(topics) == 7 and all(set(per) == topics for per in by_topic.values())


def test_doubles_go_to_two_graders_and_every_pair_shares_some(study: Project) -> None:
    for graders in (TEAM, ("ana", "ben", "cyd", "dan")):
        made = plan(study, graders, 0.3, seed=5)
        pairs = Counter(tuple(sorted(g)) for g in graders_of(made).values() if len(g) == 2)
        assert set(pairs) == {tuple(sorted(p)) for p in combinations(graders, 2)}
        assert max(pairs.values()) - min(pairs.values()) <= 2, pairs  # they rotate
        assert sum(pairs.values()) == made.doubled() == math.floor(126 * 0.3)


def test_per_grader_caps_the_new_rows_and_takes_every_stratum(study: Project) -> None:
    made = plan(study, TEAM, 0.2, per_grader=10, seed=3)
    assert made.responses() == math.floor(3 * 10 / 1.2) == 25
    assert made.doubled() == 5 and made.counts() == {"ana": 10, "ben": 10, "cyd": 10}
    models = Counter(made.strata[response][0] for response in graders_of(made))
    assert sorted(models.values()) == [8, 8, 9]  # the first of the stratified order
    assert made.text() == "25 responses to 3 graders, 5 of them twice: 10 each"
    single = plan(study, ["ana"], 0, per_grader=1000)
    assert single.responses() == 126 and single.text() == "126 responses to ana"


def test_assigning_again_adds_new_responses_and_never_moves_one(study: Project) -> None:
    orbit = ResponseFilter(models=frozenset({"orbit-7b"}))
    first = plan(study, TEAM, 0.2, seed=1, report_filter=orbit)
    assert first.by_facet("model") == {g: {"orbit-7b": n} for g, n in first.counts().items()}
    changes = apply(study, first)
    assert changes.touches(RecordKind.ASSIGNMENTS, RecordKind.RATERS)
    assert changes.responses == {response for response, _ in first.rows}
    before = stored(study)
    assert before == set(first.rows) and len({r for r, _ in before}) == 42

    # A fourth grader joins: new responses only, and the newcomer catches up first.
    second = plan(study, [*TEAM, "dan"], 0.2, seed=1)
    assert second.responses() == 84
    assert second.before == {**first.counts(), "dan": 0}  # what the newcomer catches up on
    assert not {response for response, _ in second.rows} & {response for response, _ in before}
    assert second.counts()["dan"] > max(n for g, n in second.counts().items() if g != "dan")
    for grader, per_model in second.by_facet("model").items():  # catching up over all models
        assert set(per_model) == {"helix-14b-instruct", "quark-lm-3"}
        assert abs(per_model["quark-lm-3"] - per_model["helix-14b-instruct"]) <= 2, grader
    assert apply(study, second) == Changes.of(RecordKind.ASSIGNMENTS, RecordKind.RATERS, responses={
        response for response, _ in second.rows})
    after = stored(study)
    assert before <= after and len({r for r, _ in after}) == 126

    runs = study.conn.execute("SELECT graders, overlap, per_grader, seed, filter, added "
                              "FROM assignment_runs ORDER BY id").fetchall()
    assert runs == [(json.dumps(list(TEAM)), 0.2, None, 1,
                     '{"models": ["orbit-7b"], "graded": "left out"}', len(first.rows)),
                    (json.dumps([*TEAM, "dan"]), 0.2, None, 1, '{"graded": "left out"}',
                     len(second.rows))]
    assert assignees(study) == ["ana", "ben", "cyd", "dan"]
    assert assigned(study, "dan") == {r for r, g in second.rows if g == "dan"}
    assert assigned(study, "nobody") == frozenset()
    with pytest.raises(ProjectError, match="every response the filter matches is already "
                                           "assigned"):
        plan(study, TEAM, 0.2)


@pytest.mark.parametrize("graders, overlap, options, message", [
    ([], 0.2, {}, "at least one grader"),
    (["ana", " "], 0.2, {}, "blank"),
    (["ana", "ben", "ana"], 0.2, {}, "'ana' is named twice"),
    (TEAM, -0.1, {}, "from 0 to 1"),
    (TEAM, 1.5, {}, "from 0 to 1"),
    (TEAM, float("nan"), {}, "from 0 to 1"),
    (["ana"], 0.2, {}, "at least two graders"),
    (TEAM, 0.2, {"per_grader": 0}, "at least 1"),
    (["ana", "bloom-tagger"], 0.2, {}, "'bloom-tagger' is already a rater of kind 'llm'"),
    (TEAM, 0.2, {"report_filter": ResponseFilter(judges=frozenset({"arbiter-mini [prefs-v1]"}))},
     "not by judge"),
    (TEAM, 0.2, {"report_filter": ResponseFilter(models=frozenset({"no-such-model"}))},
     "no response matches the filter"),
])
def test_refusals_say_why_and_change_nothing(study: Project, graders, overlap, options,
                                             message) -> None:
    before = table_counts(study)
    with pytest.raises(ProjectError, match=message):
        apply(study, plan(study, graders, overlap, **options))
    assert table_counts(study) == before


def test_a_plan_overtaken_by_another_assignment_writes_nothing(study: Project) -> None:
    stale = plan(study, ["dan", "eve"], 0.5, seed=2)
    apply(study, plan(study, TEAM, 0.2, seed=2, report_filter=ResponseFilter(
        topics=frozenset({"Optics"}))))
    before = table_counts(study)
    with pytest.raises(ProjectError, match="assigned since it was made; plan again"):
        apply(study, stale)
    assert table_counts(study) == before
    assert assignees(study) == list(TEAM)  # dan and eve were not even made


def test_the_command_prints_the_plan_and_its_tables_and_dry_run_writes_nothing(
        study: Project, demo: Path, capsys) -> None:
    args = ["assign", str(demo), "--graders", " ana, ben,,cyd ", "--overlap", "0.2",
            "--filter", "model=orbit-7b,quark-lm-3"]
    assert main([*args, "--seed", "9", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("would assign (seed 9): 84 responses to 3 graders, 16 of them twice: "
                          "33-34 each\n")
    assert out.rstrip().endswith("dry run: nothing written")
    blocks = [block.splitlines() for block in out.split("\n\n")[1:3]]
    assert blocks[0][0].split() == ["grader", "new", "orbit-7b", "quark-lm-3"]
    assert blocks[1][0].split()[:4] == ["grader", "new", "Electricity", "&"]
    for block in blocks:
        assert [line.split()[0] for line in block[1:]] == list(TEAM)
        assert len({len(line) for line in block}) == 1  # the columns line up
    for line in blocks[0][1:]:
        new, *per_model = map(int, line.split()[1:])
        assert new == sum(per_model)
    with Project.open(demo) as project:
        assert table_counts(project)[:2] == (0, 0)

    assert main(args) == 0  # a random seed, printed: it gives the same plan again
    out = capsys.readouterr().out
    seed = int(re.match(r"assigned \(seed (\d+)\): 84 responses", out).group(1))
    with Project.open(demo) as project:
        rows = stored(project)
        project.conn.execute("DELETE FROM assignments")
        again = plan(project, TEAM, 0.2, seed=seed, report_filter=ResponseFilter(
            models=frozenset({"orbit-7b", "quark-lm-3"})))
    assert set(again.rows) == rows

    assert main(["assign", str(demo), "--graders", "ana,ana", "--overlap", "0"]) == 1
    assert "physgrade: grader 'ana' is named twice" in capsys.readouterr().err


def test_the_queue_knows_my_assignment_and_starts_me_on_it(study: Project) -> None:
    apply(study, plan(study, ["ana", "ben"], 0.0, seed=4))
    mine = assigned(study, "ana")
    items = load_queue(study, "ana")
    assert {item.response_id for item in items if item.assigned} == mine
    assert 0 < len(mine) < 126
    only_mine = QueueFilter(assignment=frozenset({ASSIGNED}))
    assert {item.response_id for item in items if only_mine.matches(item)} == mine
    others = QueueFilter(assignment=frozenset({NOT_ASSIGNED}))
    assert {item.response_id for item in items if others.matches(item)} == assigned(study, "ben")
    assert facet_values(items)["assignment"] == list(ASSIGNMENT)
    assert QueueFilter.from_json(only_mine.to_json()) == only_mine

    # Never moved yet: a grader with an assignment starts on it, anyone else on everything.
    assert load_position(study, "ana") == Position(None, only_mine)
    assert load_position(study, "expert-1") == Position(None, QueueFilter())
    assert not any(item.assigned for item in load_queue(study, "expert-1"))
    # Once they have moved, their own choice stands.
    save_position(study, "ana", Position("r-0001", QueueFilter()))
    assert load_position(study, "ana") == Position("r-0001", QueueFilter())


def test_an_estimation_sample_can_be_assigned_alone(study: Project, demo: Path,
                                                    capsys) -> None:
    from physgrade.demo import DEMO_SAMPLE
    from physgrade.estimation import sample

    drawn = set(sample.inclusion(study, sample.find(study, DEMO_SAMPLE)))
    made = plan(study, TEAM, 0.2, seed=4, sample=DEMO_SAMPLE,
                report_filter=ResponseFilter(models=frozenset({"orbit-7b"})))
    orbit = {r for (r,) in study.conn.execute("SELECT id FROM responses WHERE model = ?",
                                               ("orbit-7b",))}
    assert set(graders_of(made)) == drawn & orbit != set()
    made = plan(study, TEAM, 0.2, seed=4, sample=DEMO_SAMPLE)
    assert set(graders_of(made)) == drawn and made.sample == DEMO_SAMPLE
    apply(study, made)
    (kept,) = study.conn.execute("SELECT filter FROM assignment_runs").fetchone()
    assert json.loads(kept) == {"sample": DEMO_SAMPLE, "graded": "left out"}
    with pytest.raises(ProjectError, match="every response the filter matches is already"):
        plan(study, TEAM, 0.2, sample=DEMO_SAMPLE)
    with pytest.raises(ProjectError, match="no estimation sample 'nope'"):
        plan(study, TEAM, 0.2, sample="nope")

    assert main(["assign", str(demo), "--graders", "dan", "--overlap", "0", "--seed", "1",
                 "--sample", DEMO_SAMPLE]) == 1  # all of it is assigned already
    assert "already assigned" in capsys.readouterr().err


def test_responses_a_person_graded_are_left_out_unless_included(demo: Path) -> None:
    with Project.open(demo) as project:
        done = graded(project)
        judged = {response for (response,) in project.conn.execute(
            "SELECT DISTINCT s.response_id FROM scores s JOIN raters r ON r.id = s.rater_id "
            "WHERE r.kind = 'llm'")}
        everything = {response for (response,) in project.conn.execute(
            "SELECT id FROM responses")}
        assert len(done) == 101 and judged - done  # a judge's scores are no person's grade
        made = plan(project, TEAM, 0.2, seed=3)
        assert set(graders_of(made)) == everything - done and not made.include_graded
        included = plan(project, TEAM, 0.2, seed=3, include_graded=True)
        assert set(graders_of(included)) == everything

        apply(project, made)
        (kept,) = project.conn.execute("SELECT filter FROM assignment_runs").fetchone()
        assert json.loads(kept) == {"graded": "left out"}
        with pytest.raises(ProjectError, match="already assigned or graded by a person: "
                                               "nothing to add"):
            plan(project, TEAM, 0.2)
        assert set(graders_of(plan(project, TEAM, 0.2, include_graded=True))) == done


def test_the_command_leaves_graded_responses_out_unless_told(demo: Path, capsys) -> None:
    args = ["assign", str(demo), "--graders", "ana,ben", "--overlap", "0", "--seed", "5"]
    assert main([*args, "--include-graded", "--dry-run"]) == 0
    assert capsys.readouterr().out.startswith("would assign (seed 5): 126 responses to 2 "
                                              "graders: 63 each\n")
    assert main(args) == 0
    assert capsys.readouterr().out.startswith("assigned (seed 5): 25 responses to 2 graders")
    with Project.open(demo) as project:
        assert {response for response, _ in stored(project)}.isdisjoint(graded(project))
