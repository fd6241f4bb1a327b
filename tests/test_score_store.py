"""The project's scores held in memory (physgrade.scoring.store, physgrade.scoring.cache).

Reports are computed from a :class:`ScoreStore` read once and narrowed in memory, and the app
keeps it up to date from the changes it broadcasts instead of reading the project again. A store
that missed a change, or was changed under a report computing from it, would give plausible
numbers that are wrong; so every test here compares what is held with what the project file
says, after changes written through the core.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import PREFS_FULL, question, response, write_jsonl
from physgrade.annotation.labels import set_bloom_final
from physgrade.changes import Changes, RecordKind
from physgrade.importer import import_file
from physgrade.project import Project
from physgrade.raters import HUMAN, HUMAN_CONSENSUS, NEW_RATER, ensure_rater, rater_label
from physgrade.scores import clear_score, set_score
from physgrade.scoring import tables as score_tables
from physgrade.scoring.cache import ScoreCache
from physgrade.scoring.store import KEYS, MISSING, NA, ScoreStore, StoreOutdated
from physgrade.scoring.tables import ScoreData
from physgrade.selection import ResponseFilter
from physgrade.tasks import Cancelled, Task
from physgrade.team.adjudication import set_decision

CONCEPTUAL_FULL = {"SET": 1, "CON": 1, "EXE": 1, "COH": 1, "ANS": 1}
#: A response text whose length in characters is not its length in bytes.
OPTICS_TEXT = "λ = 500 nm, so E = hc/λ ≈ 2.5 eV.\nFinal Answer: 2.5 eV"
#: Every response of ``graded``, in id order.
ALL = ["r-0", "r-1", "r-2", "r-3"]


@pytest.fixture
def graded(loaded: Project, tmp_path: Path) -> Project:
    """``loaded`` and r-0 (an Optics question, Bloom level Analyze), imported after the rest.

    ann: r-1 in full, r-2's INT, r-3 with EXE N/A; bob: r-1 with CAL 0, r-0 with ANS 0; the
    judge arb [v1]: r-1 and r-0 with INT 0; the judge sage [v1]: r-1; idle: a person who
    never scored.
    """
    import_file(loaded, write_jsonl(tmp_path / "q2.jsonl", [
        question("q-2", topic="Optics", bloom_cognitive="Analyze",
                 question="Light of wavelength 500 nm: what is the energy of one photon?")]),
        "questions")
    import_file(loaded, write_jsonl(tmp_path / "r2.jsonl", [
        response("r-0", "q-2", model="helix-2", text=OPTICS_TEXT)]), "responses")
    import_file(loaded, write_jsonl(tmp_path / "g.jsonl", [
        {"response_id": "r-1", "grader": "ann", "scores": PREFS_FULL},
        {"response_id": "r-3", "grader": "ann", "scores": {**CONCEPTUAL_FULL, "EXE": None}},
        {"response_id": "r-1", "grader": "bob", "scores": {**PREFS_FULL, "CAL": 0}},
        {"response_id": "r-0", "grader": "bob", "scores": {**PREFS_FULL, "ANS": 0}}]), "grades")
    set_score(loaded, "ann", "r-2", "INT", 1)
    import_file(loaded, write_jsonl(tmp_path / "v.jsonl", [
        {"response_id": rid, "judge": "arb", "prompt_version": "v1",
         "scores": {**PREFS_FULL, "INT": 0}} for rid in ("r-1", "r-0")] + [
        {"response_id": "r-1", "judge": "sage", "prompt_version": "v1", "scores": PREFS_FULL}]),
        "verdicts")
    ensure_rater(loaded, "idle", HUMAN)
    return loaded


def in_file(project: Project) -> dict[tuple[str, str, str, str], int | None]:
    """Every score of the project file: (rater label, response, rubric, criterion) → value."""
    return {(rater_label(name, version), rid, rubric, criterion): value
            for name, version, rid, rubric, criterion, value in project.conn.execute(
                "SELECT r.name, r.prompt_version, s.response_id, s.rubric, s.criterion, s.value "
                "FROM scores s JOIN raters r ON r.id = s.rater_id")}


def held(store: ScoreStore) -> dict[tuple[str, str, str, str], int | None]:
    """Every score ``store`` holds, keyed as :func:`in_file`."""
    labels, ids = list(store.raters["label"]), list(store.responses.index)
    return {(labels[c], ids[r], *KEYS[k]): None if store.codes[k, r, c] == NA
            else int(store.codes[k, r, c])
            for k, r, c in zip(*np.nonzero(store.codes != MISSING))}


def code(store: ScoreStore, rater: str, rid: str, rubric: str, criterion: str) -> int:
    """The code ``store`` holds for one criterion of one rater's score of a response."""
    return int(store.codes[KEYS.index((rubric, criterion)), store.responses.index.get_loc(rid),
                           list(store.raters["label"]).index(rater)])


def consensus_of(data: ScoreData, rubric: str, criterion: str) -> dict[str, float]:
    wide = score_tables.criterion_ratings(data, rubric, criterion, [HUMAN_CONSENSUS])
    return wide[HUMAN_CONSENSUS].to_dict()


# -- reading -------------------------------------------------------------------------------------


def test_a_store_holds_every_score_of_the_project(graded: Project) -> None:
    store = ScoreStore.read(graded)
    assert held(store) == in_file(graded)
    assert len(held(store)) == (8 + 1 + 5) + (8 + 8) + 2 * 8 + 8  # ann, bob, arb, sage
    assert code(store, "bob", "r-1", "prefs", "CAL") == 0
    assert code(store, "ann", "r-1", "prefs", "CAL") == 1
    assert code(store, "arb [v1]", "r-0", "prefs", "INT") == 0
    assert code(store, "ann", "r-3", "conceptual", "EXE") == NA
    assert code(store, "ann", "r-2", "prefs", "MOD") == MISSING  # ann scored INT alone
    assert store.codes.dtype == np.int8 and store.codes.shape == (len(KEYS), 4, 4)
    # Raters that never scored have no column.
    assert sorted(store.raters["label"]) == ["ann", "arb [v1]", "bob", "sage [v1]"]
    assert dict(zip(store.raters["label"], store.raters["kind"])) == {
        "ann": "human", "bob": "human", "arb [v1]": "llm", "sage [v1]": "llm"}
    assert sorted(store.responses.index) == ALL
    assert store.responses.loc["r-0", ["model", "topic", "kind", "bloom_cognitive"]].tolist() == [
        "helix-2", "Optics", "problem", "Analyze"]
    assert store.responses.loc["r-3", "multiple_choice"]
    assert not store.responses.loc["r-1", "multiple_choice"]


def test_lengths_are_the_responses_lengths_in_characters(graded: Project) -> None:
    store = ScoreStore.read(graded)
    texts = dict(graded.conn.execute("SELECT id, response FROM responses"))
    assert store.lengths.tolist() == [len(texts[rid]) for rid in store.responses.index]
    at = store.responses.index.get_loc("r-0")
    assert store.lengths[at] == len(OPTICS_TEXT) < len(OPTICS_TEXT.encode("utf-8"))


def test_a_store_holds_the_adjudicators_decisions(graded: Project) -> None:
    set_decision(graded, "dora", "r-1", "CAL", 0)
    set_decision(graded, "dora", "r-3", "EXE", None)
    store = ScoreStore.read(graded)
    found = {(store.responses.index[r], KEYS[k], None if np.isnan(v) else v)
             for r, k, v in zip(store.decisions["response"], store.decisions["key"],
                                store.decisions["value"])}
    assert found == {("r-1", ("prefs", "CAL"), 0.0), ("r-3", ("conceptual", "EXE"), None)}


# -- patching ------------------------------------------------------------------------------------


def test_updated_reads_the_changed_responses_and_leaves_the_old_store_as_it_was(
        graded: Project) -> None:
    old = ScoreStore.read(graded)
    before, codes_before = in_file(graded), old.codes.copy()
    report = score_tables.select(old)  # a report computing from the old store
    set_score(graded, "bob", "r-1", "CAL", 1)
    clear_score(graded, "ann", "r-1", "INT")
    set_score(graded, "ann", "r-3", "EXE", 1)
    new = old.updated(graded, ["r-1", "r-3"])
    assert held(new) == in_file(graded) != before
    assert code(new, "bob", "r-1", "prefs", "CAL") == 1
    assert code(new, "ann", "r-1", "prefs", "INT") == MISSING
    assert code(new, "ann", "r-3", "conceptual", "EXE") == 1
    # Copy on write: the old store, and what was selected from it, keep their view.
    assert np.array_equal(old.codes, codes_before) and held(old) == before
    assert code(old, "bob", "r-1", "prefs", "CAL") == 0
    assert score_tables.criterion_ratings(report, "prefs", "CAL", ["bob"]).loc["r-1", "bob"] == 0
    assert score_tables.criterion_ratings(score_tables.select(new), "prefs", "CAL",
                                          ["bob"]).loc["r-1", "bob"] == 1


def test_updated_refuses_a_response_new_to_the_store(graded: Project, tmp_path: Path) -> None:
    store = ScoreStore.read(graded)
    import_file(graded, write_jsonl(tmp_path / "r5.jsonl", [response("r-5")]), "responses")
    set_score(graded, "ann", "r-5", "INT", 1)
    with pytest.raises(StoreOutdated):
        store.updated(graded, ["r-1", "r-5"])


@pytest.mark.parametrize("newcomer", ["cat", "idle"])  # a new rater, and one that never scored
def test_updated_refuses_a_rater_scoring_for_the_first_time(graded: Project,
                                                             newcomer: str) -> None:
    store = ScoreStore.read(graded)
    set_score(graded, newcomer, "r-1", "INT", 1)
    with pytest.raises(StoreOutdated):
        store.updated(graded, ["r-1"])
    assert held(store.updated(graded, ["r-2"])) == held(store)  # r-1 not asked for


# -- selecting -----------------------------------------------------------------------------------


FACETS = {
    "models": (ResponseFilter(models=frozenset({"quark-lm-3"})), ["r-2"], [], ["ann"]),
    "topics": (ResponseFilter(topics=frozenset({"Optics"})), ["r-0"], ["arb [v1]"], ["bob"]),
    "kinds": (ResponseFilter(kinds=frozenset({"conceptual"})), ["r-3"], [], ["ann"]),
    "bloom": (ResponseFilter(bloom=frozenset({"Apply", "Remember"})), ["r-1", "r-2", "r-3"],
              ["arb [v1]", "sage [v1]"], ["ann", "bob"]),
    "judges": (ResponseFilter(judges=frozenset({"arb [v1]"})), ALL, ["arb [v1]"], ["ann", "bob"]),
    "graders": (ResponseFilter(graders=frozenset({"ann"})), ALL, ["arb [v1]", "sage [v1]"],
                ["ann"]),
}


def assert_same(got: ScoreData, want: ScoreData) -> None:
    assert list(got.ids) == list(want.ids) and got.columns == want.columns
    assert (got.judges, got.graders, got.kinds) == (want.judges, want.graders, want.kinds)
    assert got.adjudicated == want.adjudicated
    assert np.array_equal(got.codes, want.codes)
    pd.testing.assert_frame_equal(got.responses, want.responses)
    pd.testing.assert_series_equal(got.lengths, want.lengths)


@pytest.mark.parametrize("facet", list(FACETS))
def test_select_equals_load_and_narrows_exactly(graded: Project, facet: str) -> None:
    report_filter, ids, judges, graders = FACETS[facet]
    store = ScoreStore.read(graded)
    set_score(graded, "bob", "r-1", "CAL", 1)   # the store patched, as the app keeps it
    set_decision(graded, "dora", "r-3", "SET", 0)
    store = store.updated(graded, ["r-1"]).with_decisions(graded)
    data = score_tables.select(store, report_filter)
    assert_same(data, score_tables.load(graded, report_filter))
    assert (list(data.ids), data.judges, data.graders) == (ids, judges, graders)
    assert data.columns[-1] == HUMAN_CONSENSUS
    assert sorted(data.columns[:-1]) == sorted(judges + graders)
    # Each rater's values are the store's, response by response.
    rows = store.responses.index.get_indexer(data.ids)
    raters = pd.Index(store.raters["label"]).get_indexer(data.columns[:-1])
    codes = store.codes[:, rows][:, :, raters]
    assert np.array_equal(data.codes[:, :, :-1], codes)
    assert sorted(data.responses.index) == ids
    assert data.lengths.to_dict() == {rid: store.lengths[store.responses.index.get_loc(rid)]
                                      for rid in ids}


def test_rows_are_in_id_order(graded: Project) -> None:
    store = ScoreStore.read(graded)
    assert list(store.responses.index).index("r-0") > 0  # imported last: not first in the store
    data = score_tables.select(store)
    assert list(data.ids) == ALL
    bob = data.columns.index("bob")
    ans = KEYS.index(("prefs", "ANS"))
    assert data.codes[ans, :, bob].tolist()[:2] == [0, 2]  # r-0's ANS 0, r-1's ANS 2
    assert consensus_of(data, "prefs", "ANS") == {"r-0": 0, "r-1": 2}


# -- the cache -----------------------------------------------------------------------------------


def reading(stages: list[str]) -> Task:
    """A task that records the stages of a read."""
    return Task(lambda done, total, stage: stages.append(stage))


def test_the_cache_reads_once(graded: Project) -> None:
    cache, stages = ScoreCache(), []
    first = cache.store(graded, reading(stages))
    assert stages and held(first) == in_file(graded)
    stages.clear()
    assert cache.store(graded, reading(stages)) is first and stages == []
    cache.note(Changes.of(RecordKind.REVIEWS, RecordKind.SAMPLES))  # nothing the store holds
    assert cache.store(graded, reading(stages)) is first and stages == []


def test_a_noted_score_change_is_read_again(graded: Project) -> None:
    cache = ScoreCache()
    old = cache.store(graded)
    cache.note(set_score(graded, "bob", "r-1", "CAL", 1))
    cache.note(clear_score(graded, "ann", "r-3", "EXE"))
    new = cache.store(graded)
    assert new is not old and held(new) == in_file(graded)
    assert code(new, "bob", "r-1", "prefs", "CAL") == 1
    assert code(new, "ann", "r-3", "conceptual", "EXE") == MISSING
    assert code(old, "bob", "r-1", "prefs", "CAL") == 0  # read before: as it was
    assert code(old, "ann", "r-3", "conceptual", "EXE") == NA


def test_the_cache_follows_only_what_was_noted(graded: Project) -> None:
    cache = ScoreCache()
    cache.store(graded)
    set_score(graded, "bob", "r-1", "CAL", 1)
    cache.note(set_score(graded, "ann", "r-1", "CAL", 0))  # bob's change goes unannounced
    store = cache.store(graded)
    assert code(store, "ann", "r-1", "prefs", "CAL") == 0
    assert code(store, "bob", "r-1", "prefs", "CAL") == 1  # the response is read again whole
    set_score(graded, "bob", "r-0", "CAL", 0)  # not noted: a patch does not read r-0
    cache.note(set_score(graded, "ann", "r-2", "INT", 0))
    assert code(cache.store(graded), "bob", "r-0", "prefs", "CAL") == 1


@pytest.mark.parametrize("changes", [
    NEW_RATER, Changes.of(RecordKind.QUESTIONS), Changes.of(RecordKind.BLOOM),
    Changes.of(RecordKind.RESPONSES), Changes.of(RecordKind.SCORES)],
    ids=["raters", "questions", "bloom", "responses", "any scores"])
def test_changes_a_patch_cannot_follow_read_the_store_whole(graded: Project,
                                                            changes: Changes) -> None:
    cache = ScoreCache()
    old = cache.store(graded)
    set_score(graded, "cat", "r-2", "INT", 0)  # a new rater's first score: not noted as such
    cache.note(changes)
    new = cache.store(graded)
    assert new is not old and "cat" in list(new.raters["label"])
    assert held(new) == in_file(graded)
    assert "cat" not in list(old.raters["label"])


def test_a_response_new_to_the_store_reads_it_whole(graded: Project, tmp_path: Path) -> None:
    cache = ScoreCache()
    cache.store(graded)
    import_file(graded, write_jsonl(tmp_path / "r5.jsonl", [response("r-5")]), "responses")
    set_score(graded, "ann", "r-5", "INT", 1)
    cache.note(Changes.of(RecordKind.SCORES, responses=["r-5"]))  # as if the responses were known
    store = cache.store(graded)
    assert "r-5" in store.responses.index and held(store) == in_file(graded)


def test_a_new_bloom_level_moves_responses_between_filters(graded: Project) -> None:
    cache = ScoreCache()
    analyze = ResponseFilter(bloom=frozenset({"Analyze"}))
    assert list(score_tables.select(cache.store(graded), analyze).ids) == ["r-0"]
    cache.note(set_bloom_final(graded, "q-mc", "Analyze", "Conceptual", "dora"))
    assert list(score_tables.select(cache.store(graded), analyze).ids) == ["r-0", "r-3"]


def test_noted_decisions_are_read_again(graded: Project) -> None:
    cache = ScoreCache()
    old = cache.store(graded)
    # r-1: ann 1 against bob 0, a tie; r-0: bob alone
    assert consensus_of(score_tables.select(old), "prefs", "CAL") == {"r-0": 1}
    cache.note(set_decision(graded, "dora", "r-1", "CAL", 0))
    new = cache.store(graded)
    assert consensus_of(score_tables.select(new), "prefs", "CAL") == {"r-0": 1, "r-1": 0}
    assert score_tables.select(new).adjudicated == 1
    assert len(old.decisions) == 0
    assert consensus_of(score_tables.select(old), "prefs", "CAL") == {"r-0": 1}


def cancel_on_scores(stages: list[str]) -> Task:
    """A task cancelled part-way, when the read comes to the scores; records the stages."""
    def progress(done: int, total: int | None, stage: str) -> None:
        stages.append(stage)
        if done == 1:
            task.cancel()
    task = Task(progress)
    return task


@pytest.mark.parametrize("when", ["before", "part-way"])
def test_a_cancelled_store_keeps_what_was_noted(graded: Project, when: str) -> None:
    cache, stages = ScoreCache(), []
    old = cache.store(graded)
    cache.note(set_score(graded, "cat", "r-1", "CAL", 0))  # a new rater: read whole
    cache.note(set_score(graded, "bob", "r-1", "CAL", 1))
    if when == "before":
        task = Task()
        task.cancel()
    else:
        task = cancel_on_scores(stages)
    with pytest.raises(Cancelled):
        cache.store(graded, task)
    assert when == "before" or len(stages) == 2  # it had begun
    new = cache.store(graded)
    assert new is not old and held(new) == in_file(graded)
    assert code(new, "bob", "r-1", "prefs", "CAL") == 1
    assert code(new, "cat", "r-1", "prefs", "CAL") == 0


def test_a_first_store_cancelled_is_read_by_the_next(graded: Project) -> None:
    cache = ScoreCache()
    with pytest.raises(Cancelled):
        cache.store(graded, cancel_on_scores([]))
    assert held(cache.store(graded)) == in_file(graded)


@pytest.mark.parametrize("grader", ["bob", "cat"])  # a patch, and a rater new to the store
def test_a_change_noted_while_the_store_is_read_is_not_lost(graded: Project, grader: str) -> None:
    """The app notes changes on the GUI thread while a worker reads the store: a change written
    after the worker read the scores must come in with the next store."""
    cache = ScoreCache()
    scores_read, go_on = threading.Event(), threading.Event()
    result: list[ScoreStore | BaseException] = []

    def progress(done: int, total: int | None, stage: str) -> None:
        if total is not None and done == total - 1:  # the last step: the scores are read
            scores_read.set()
            assert go_on.wait(10)

    def work() -> None:
        with Project.open(graded.path) as own:  # a worker has a connection of its own
            try:
                result.append(cache.store(own, Task(progress)))
            except BaseException as error:  # handed to the test's thread
                result.append(error)

    worker = threading.Thread(target=work)
    worker.start()
    try:
        assert scores_read.wait(10), "the read never reached its last step"
        noting = threading.Thread(target=cache.note,
                                  args=(set_score(graded, grader, "r-1", "CAL", 1),))
        noting.start()
        noting.join(5)
        assert not noting.is_alive(), "note waited for the read under way"
    finally:
        go_on.set()
        worker.join(10)
    stale = result[0]
    assert isinstance(stale, ScoreStore)
    assert held(stale) != in_file(graded)  # the read was over before the change
    fresh = cache.store(graded)
    assert held(fresh) == in_file(graded)
    assert code(fresh, grader, "r-1", "prefs", "CAL") == 1
