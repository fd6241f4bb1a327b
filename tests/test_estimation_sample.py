"""Estimation samples on the demo project (126 responses: 3 models × 42 questions in 7 topics):
seeded draws, stratified shares and inclusion probabilities, hand-picked samples read from a
file, the ids written back, the ``estimate-sample`` command and the queue's Sample facet."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from conftest import write_jsonl
from physgrade.changes import RecordKind
from physgrade.cli import main
from physgrade.estimation import sample
from physgrade.estimation.sample import HAND_PICKED, RANDOM, STRATIFIED
from physgrade.formats import FormatError
from physgrade.project import Project, ProjectError
from physgrade.queue import QueueFilter, facet_values, load_queue

RESPONSES = 126
MODELS = 3


@pytest.fixture
def demo(unsampled_demo: Path) -> Path:
    """The demo without its own estimation sample: these tests draw theirs."""
    return unsampled_demo


@pytest.fixture
def study(demo: Path) -> Project:
    with Project.open(demo) as opened:
        yield opened


def ids_file(path: Path, *ids: str) -> Path:
    return write_jsonl(path, [{"response_id": rid} for rid in ids])


def some_ids(project: Project, n: int) -> list[str]:
    return [rid for (rid,) in project.conn.execute("SELECT id FROM responses ORDER BY id LIMIT ?",
                                                   (n,))]


# -- drawing ---------------------------------------------------------------------------------


def test_the_same_seed_and_data_give_the_same_sample(study: Project) -> None:
    first = sample.draw(study, "first", 20, seed=11)
    again = sample.draw(study, "again", 20, seed=11)
    other = sample.draw(study, "other", 20, seed=12)
    assert list(sample.inclusion(study, first)) == list(sample.inclusion(study, again))
    assert set(sample.inclusion(study, first)) != set(sample.inclusion(study, other))
    stratified = [sample.draw(study, f"s{n}", 30, seed=5, strata=("model", "topic"))
                  for n in range(2)]
    assert sample.inclusion(study, stratified[0]) == sample.inclusion(study, stratified[1])


def test_a_random_sample_gives_every_response_the_same_chance(study: Project) -> None:
    drawn = sample.draw(study, " main ", 20, seed=3)
    assert (drawn.name, drawn.method, drawn.seed, drawn.size, drawn.strata, drawn.population,
            drawn.source) == ("main", RANDOM, 3, 20, (), RESPONSES, None)
    assert drawn.random
    chances = sample.inclusion(study, drawn)
    assert len(chances) == 20 and set(chances.values()) == {20 / RESPONSES}
    assert drawn.changes.kinds == {RecordKind.ESTIMATION} and drawn.changes.responses == set(chances)
    assert sample.by_stratum(study, drawn) == [
        sample.Stratum("(all)", 20, RESPONSES, 20 / RESPONSES)]
    assert drawn.text() == "20 of 126 responses, drawn at random (seed 3)"
    assert sample.samples(study) == [drawn] and sample.find(study, "main") == drawn


def test_a_stratified_sample_takes_the_same_number_from_each_stratum(study: Project) -> None:
    drawn = sample.draw(study, "by model", 31, seed=1, strata=["model"])
    assert (drawn.method, drawn.strata) == (STRATIFIED, ("model",))
    strata = sample.by_stratum(study, drawn)
    assert [s.drawn for s in strata] == [11, 10, 10]  # the odd one to the first by name
    assert all(s.population == RESPONSES // MODELS for s in strata)
    models = dict(study.conn.execute("SELECT id, model FROM responses"))
    chances = sample.inclusion(study, drawn)
    per_model = Counter(models[rid] for rid in chances)
    assert dict(per_model) == {s.name: s.drawn for s in strata}
    for rid, chance in chances.items():
        assert chance == per_model[models[rid]] / (RESPONSES // MODELS)
    # Weighted by 1 / chance, the sample stands for each stratum's responses, and all of them.
    for stratum in strata:
        weights = sum(1 / chance for rid, chance in chances.items()
                      if models[rid] == stratum.name)
        assert weights == pytest.approx(stratum.population)
    assert sum(1 / chance for chance in chances.values()) == pytest.approx(RESPONSES)
    assert "within each model" in drawn.text()


def test_small_strata_give_all_they_have_and_the_rest_is_shared() -> None:
    assert sample.allocation({"c": 10, "a": 1, "b": 10}, 12) == {"a": 1, "b": 6, "c": 5}
    assert sample.allocation({"a": 2, "b": 2, "c": 9}, 13) == {"a": 2, "b": 2, "c": 9}
    # What does not divide evenly goes to the strata with most responses left.
    assert sample.allocation({"a": 3, "b": 5, "c": 4}, 5) == {"a": 1, "b": 2, "c": 2}
    assert sample.allocation({"only": 7}, 7) == {"only": 7}


@pytest.mark.parametrize(("sizes", "size", "message"), [
    ({"a": 3}, 0, "from 1 to 3"), ({"a": 3}, 4, "from 1 to 3"),
    ({"a": 3, "b": 3, "c": 3}, 2, "3 strata: draw at least 3"),
    ({}, 1, "no responses to draw from")])
def test_an_allocation_that_cannot_be_drawn_is_refused(sizes: dict[str, int], size: int,
                                                        message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sample.allocation(sizes, size)


def test_each_response_of_a_stratum_is_as_likely_to_be_drawn(study: Project) -> None:
    """Over many seeds, how often each response is drawn matches its stored probability."""
    draws = 150
    seen: Counter[str] = Counter()
    chance: dict[str, float] = {}
    for seed in range(draws):
        drawn = sample.draw(study, f"run {seed}", 10, seed, strata=("model",))
        chances = sample.inclusion(study, drawn)
        seen.update(chances)
        chance.update(chances)
    assert len(chance) == RESPONSES  # every response was drawn at least once
    assert sorted(set(chance.values())) == [3 / 42, 4 / 42]
    for rid, probability in chance.items():  # binomial sd about 0.024
        assert abs(seen[rid] / draws - probability) < 0.1, rid


def test_a_sample_is_never_drawn_again(study: Project) -> None:
    first = sample.draw(study, "Main", 10, seed=1)
    before = sample.inclusion(study, first)
    for name in ("Main", "main", " MAIN "):
        with pytest.raises(ValueError, match="never drawn again"):
            sample.draw(study, name, 10, seed=2)
        with pytest.raises(ValueError, match="already an estimation sample named 'Main'"):
            sample.register(study, name, ids_file(study.path.parent / "ids.jsonl", "r-0001"))
    assert sample.samples(study) == [first] and sample.inclusion(study, first) == before


@pytest.mark.parametrize(("name", "size", "seed", "strata", "message"), [
    ("", 5, 1, (), "needs a name"), ("x", 0, 1, (), "from 1 to 126"),
    ("x", 127, 1, (), "from 1 to 126"), ("x", True, 1, (), "whole number"),
    ("x", 5, -1, (), "seed must be"), ("x", 5, 1, ("bloom",), "cannot stratify over 'bloom'"),
    ("x", 5, 1, ("model", "model"), "named twice"),
    ("x", 20, 1, ("model", "topic"), "21 strata: draw at least 21")])
def test_a_draw_the_core_refuses_stores_nothing(study: Project, name: str, size: int, seed: int,
                                                strata: tuple[str, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sample.draw(study, name, size, seed, strata)
    assert sample.samples(study) == []


def test_an_empty_project_has_nothing_to_draw(project: Project) -> None:
    with pytest.raises(ValueError, match="no responses to draw from"):
        sample.draw(project, "x", 1, seed=1)
    with pytest.raises(ProjectError, match="has none yet"):
        sample.find(project, "x")


def test_find_names_the_samples_there_are(study: Project) -> None:
    sample.draw(study, "a", 5, 1)
    sample.draw(study, "b", 5, 1)
    with pytest.raises(ProjectError, match=r"no estimation sample 'c'.*'a', 'b'"):
        sample.find(study, "c")


# -- hand-picked samples and ids files -------------------------------------------------------


def test_a_hand_picked_sample_is_read_from_a_file(study: Project, tmp_path: Path) -> None:
    chosen = some_ids(study, 4)
    picked = sample.register(study, "picked", ids_file(tmp_path / "picked.jsonl",
                                                       chosen[2], chosen[0], chosen[3], chosen[1]))
    assert (picked.method, picked.seed, picked.size, picked.source, picked.random) == (
        HAND_PICKED, None, 4, "picked.jsonl", False)
    assert sample.inclusion(study, picked) == dict.fromkeys(chosen, 4 / RESPONSES)
    assert picked.changes.responses == set(chosen)
    assert "hand-picked in picked.jsonl (not drawn at random)" in picked.text()


@pytest.mark.parametrize(("content", "where"), [
    ('{"response_id": "r-0001"}\n{"response_id": "r-9999"}\n',
     "line 2, field 'response_id': no response 'r-9999'"),
    ('{"response_id": "r-0001"}\n{"response_id": "r-0002"}\n{"response_id": "r-0001"}\n',
     "line 3, field 'response_id': response 'r-0001' is named already on line 1"),
    ('{"response_id": "r-0001"}\n{"response_id": "r-0002"\n', "line 2: not valid JSON"),
    ('{"response_id": "r-0001"}\n{"id": "r-0002"}\n',
     "line 2, field 'response_id': is required but missing"),
    ('{"response_id": "r-0001"}\n[1, 2]\n', "line 2: expected a JSON object"),
    ("", "names no response"), ("\n\n", "names no response")])
def test_a_bad_ids_file_is_refused_naming_where(study: Project, tmp_path: Path, content: str,
                                                where: str) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(content, encoding="utf-8")
    with pytest.raises(FormatError) as refused:
        sample.register(study, "picked", bad)
    assert str(refused.value).startswith("bad.jsonl") and where in str(refused.value)
    assert sample.samples(study) == []


def test_the_ids_are_written_one_per_line_and_read_back(study: Project, tmp_path: Path) -> None:
    drawn = sample.draw(study, "main", 12, seed=4, strata=("topic",))
    folder = tmp_path / "ids"
    folder.mkdir()
    out = folder / "main.jsonl"
    assert sample.write_ids(study, drawn, out) == 12
    lines = out.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [
        {"response_id": rid} for rid in sorted(sample.inclusion(study, drawn))]
    again = sample.register(study, "the same, by hand", out)  # the format register reads
    assert set(sample.inclusion(study, again)) == set(sample.inclusion(study, drawn))

    with pytest.raises(ProjectError, match="already exists"):
        sample.write_ids(study, again, out)
    assert out.read_text(encoding="utf-8").splitlines() == lines  # untouched
    assert [p.name for p in folder.iterdir()] == ["main.jsonl"]  # nothing left aside


# -- the command -----------------------------------------------------------------------------


def run(capsys, *args: str) -> tuple[int, str, str]:
    status = main(["estimate-sample", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_the_command_draws_prints_and_writes_the_ids(demo: Path, tmp_path: Path,
                                                     capsys) -> None:
    out = tmp_path / "main.jsonl"
    status, said, _ = run(capsys, str(demo), "--name", "main", "--size", "30", "--strata",
                          "model, topic", "--out", str(out))
    assert status == 0
    seed = int(re.search(r"seed (\d+)", said).group(1))  # chosen and printed
    assert said.startswith("drew estimation sample 'main': 30 of 126 responses, drawn at "
                           "random within each model × topic (seed")
    assert "stratum" in said and "probability" in said
    assert "helix-14b-instruct / Mechanics" in said and "wrote 30 response ids" in said
    with Project.open(demo) as project:
        expected = sample.draw(project, "again", 30, seed, ("model", "topic"))
        ids = list(sample.inclusion(project, expected))
    assert [json.loads(line)["response_id"] for line in out.read_text().splitlines()] == ids

    status, said, _ = run(capsys, str(demo), "--name", "main")
    assert status == 0 and said.startswith("estimation sample 'main', ")
    second = tmp_path / "again.jsonl"
    assert run(capsys, str(demo), "--name", "main", "--out", str(second))[0] == 0
    assert second.read_text() == out.read_text()

    status, said, _ = run(capsys, str(demo), "--name", "picked", "--from", str(out))
    assert status == 0 and said.startswith("registered estimation sample 'picked': 30 of 126 "
                                           "responses, hand-picked in main.jsonl")
    status, said, _ = run(capsys, str(demo), "--list")
    assert [line.split()[:2] for line in said.splitlines()[1:]] == [
        ["main", "stratified"], ["again", "stratified"], ["picked", "hand-picked"]]


def test_the_command_refuses_changing_nothing(demo: Path, tmp_path: Path, capsys) -> None:
    taken = tmp_path / "taken.jsonl"
    taken.write_text("keep\n")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"response_id": "r-0001"}\n{"response_id": "nope"}\n')
    db = str(demo)
    refusals = [
        (["--name", "x", "--size", "5", "--out", str(taken)], "taken.jsonl already exists"),
        (["--name", "x", "--size", "5", "--from", str(bad)], "--size: cannot go with --from"),
        (["--list", "--name", "x"], "--name: cannot go with --list"),
        (["--name", "x", "--seed", "4"], "--seed: only for drawing a sample, with --size"),
        (["--size", "5"], "name the sample with --name"),
        (["--name", "x", "--size", "500"], "the size must be from 1 to 126"),
        (["--name", "x", "--size", "5", "--strata", "bloom"], "cannot stratify over 'bloom'"),
        (["--name", "x", "--from", str(bad)],
         "bad.jsonl line 2, field 'response_id': no response 'nope'"),
        (["--name", "x"], "no estimation sample 'x': this project has none yet")]
    for args, message in refusals:
        status, _, err = run(capsys, db, *args)
        assert status == 1 and message in err, (args, err)
    assert taken.read_text() == "keep\n"
    assert run(capsys, db, "--list")[1].startswith("no estimation samples yet")

    assert run(capsys, db, "--name", "x", "--size", "5", "--seed", "1")[0] == 0
    status, _, err = run(capsys, db, "--name", "X", "--size", "5", "--seed", "2")
    assert status == 1 and "never drawn again" in err


# -- the queue's facet -----------------------------------------------------------------------


def test_the_queue_filters_by_estimation_sample(study: Project, tmp_path: Path) -> None:
    first = sample.draw(study, "first", 10, seed=1)
    both = sorted(sample.inclusion(study, first))[:2]
    second = sample.register(study, "second", ids_file(tmp_path / "ids.jsonl", *both,
                                                        *some_ids(study, 3)))
    items = load_queue(study, "expert-1")
    held = {item.response_id: item.samples for item in items}
    assert {rid for rid, names in held.items() if "first" in names} == set(
        sample.inclusion(study, first))
    assert all(held[rid][:2] == ("first", "second") for rid in both)  # oldest first
    assert facet_values(items)["samples"] == ["first", "second"]

    def shown(queue_filter: QueueFilter) -> set[str]:
        return {item.response_id for item in items if queue_filter.matches(item)}

    assert shown(QueueFilter(samples=frozenset({"first"}))) == set(sample.inclusion(study, first))
    assert shown(QueueFilter(samples=frozenset({"first", "second"}))) == set(
        sample.inclusion(study, first)) | set(sample.inclusion(study, second))
    model = items[0].model
    narrowed = QueueFilter(models=frozenset({model}), samples=frozenset({"second"}))
    assert shown(narrowed) == {rid for rid in sample.inclusion(study, second)
                               if next(i for i in items if i.response_id == rid).model == model}
    assert len(shown(QueueFilter())) == RESPONSES

    stored = narrowed.to_json()
    assert json.loads(stored)["samples"] == ["second"]
    assert QueueFilter.from_json(stored) == narrowed
    assert QueueFilter.from_json('{"samples": ["first"], "unknown": [1]}') == QueueFilter(
        samples=frozenset({"first"}))


def test_without_samples_the_facet_offers_nothing(study: Project) -> None:
    items = load_queue(study, "expert-1")
    assert facet_values(items)["samples"] == [] and all(item.samples == () for item in items)
