"""The value every core write returns: which kinds of records changed, and where."""

from __future__ import annotations

import pytest

from physgrade.changes import EVERYTHING, NOTHING, Changes, RecordKind


def test_of_names_kinds_and_ids():
    changed = Changes.of(RecordKind.SCORES, responses=["r-1", "r-1"], questions=("q-1",))
    assert changed.kinds == {RecordKind.SCORES}
    assert changed.responses == frozenset({"r-1"}) and changed.questions == frozenset({"q-1"})
    assert Changes.of(RecordKind.PAIRS).responses is None  # not said: possibly any
    assert Changes.of(RecordKind.BLOOM, questions=[]).questions == frozenset()


def test_nothing_is_false_and_the_identity_of_union():
    changed = Changes.of(RecordKind.REVIEWS, responses=["r-1"])
    assert not NOTHING and changed and EVERYTHING
    assert NOTHING | changed is changed and changed | NOTHING is changed
    assert NOTHING | NOTHING == NOTHING
    assert Changes.of(responses=["r-1"]) == Changes(frozenset(), frozenset({"r-1"}), None)
    assert not Changes.of(responses=["r-1"])  # no kind: nothing changed


def test_union_joins_kinds_and_ids_and_any_stays_any():
    a = Changes.of(RecordKind.SCORES, responses=["r-1"], questions=["q-1"])
    b = Changes.of(RecordKind.SCORES, RecordKind.RATERS, responses=["r-2"], questions=["q-1"])
    assert a | b == Changes.of(RecordKind.SCORES, RecordKind.RATERS, responses=["r-1", "r-2"],
                               questions=["q-1"])
    anywhere = a | Changes.of(RecordKind.BLOOM)
    assert anywhere.kinds == {RecordKind.SCORES, RecordKind.BLOOM}
    assert anywhere.responses is None and anywhere.questions is None
    total = NOTHING
    for rid in ("r-1", "r-2", "r-3"):
        total |= Changes.of(RecordKind.SCORES, responses=[rid])
    assert total.responses == {"r-1", "r-2", "r-3"}


def test_touches_any_of_the_kinds_asked():
    changed = Changes.of(RecordKind.SCORES, RecordKind.RATERS)
    assert changed.touches(RecordKind.SCORES) and changed.touches(RecordKind.BLOOM, RecordKind.RATERS)
    assert not changed.touches(RecordKind.BLOOM, RecordKind.PAIRS) and not changed.touches()
    assert not NOTHING.touches(*RecordKind)
    assert all(EVERYTHING.touches(kind) for kind in RecordKind)


def test_text_is_a_short_account():
    assert NOTHING.text() == "nothing"
    assert Changes.of(RecordKind.SCORES, responses=["r-1"]).text() == "scores (1 response)"
    assert Changes.of(RecordKind.SCORES, RecordKind.RATERS, responses=["r-1", "r-2"],
                      questions=["q-1"]).text() == "raters, scores (2 responses, 1 question)"
    assert Changes.of(RecordKind.PAIRS).text() == "pairs"


def test_a_value_compares_and_hashes_by_content_and_cannot_change():
    assert Changes.of(RecordKind.BLOOM, questions=["q-1"]) == Changes.of(RecordKind.BLOOM, questions={"q-1"})
    assert len({Changes.of(RecordKind.BLOOM), Changes.of(RecordKind.BLOOM), NOTHING}) == 2
    with pytest.raises(AttributeError):
        NOTHING.kinds = frozenset({RecordKind.SCORES})  # type: ignore[misc]


def test_kinds_are_one_vocabulary_of_strings():
    assert RecordKind("scores") is RecordKind.SCORES and RecordKind.BLOOM == "bloom"
    assert EVERYTHING.kinds == frozenset(RecordKind)
    with pytest.raises(ValueError):
        RecordKind("grades")
