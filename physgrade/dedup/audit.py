"""The audit's first two stages over two text sets (or one against itself), and their figures.

Stage 1 (word 5-gram Jaccard) and stage 2 (embedding cosine) each propose pairs; every pair
gets both scores and the list of stages whose threshold it reaches. Both stages run once at
the lax thresholds, so the counts at the lax, default and strict settings come from one pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from physgrade.dedup import lexical, semantic
from physgrade.dedup.texts import TextSet
from physgrade.tasks import Task

DEFAULT_JACCARD = 0.4
#: Calibrated for the embedded all-MiniLM-L6-v2 on benchmarks/data/dedup_set.jsonl (see the
#: README): the paper's 0.85 suits its larger model, which scores paraphrases higher.
DEFAULT_COSINE = 0.78
#: How far the lax and strict settings move each threshold.
JACCARD_STEP = 0.1
COSINE_STEP = 0.05
HISTOGRAM_BINS = 20


@dataclass(frozen=True, slots=True)
class Thresholds:
    jaccard: float = DEFAULT_JACCARD
    cosine: float = DEFAULT_COSINE

    def __post_init__(self) -> None:
        for name, value in (("Jaccard", self.jaccard), ("cosine", self.cosine)):
            if not 0 < value <= 1:
                raise ValueError(f"the {name} threshold must be in (0, 1], not {value}")

    def moved(self, steps: int) -> "Thresholds":
        """Laxer (negative ``steps``) or stricter (positive) thresholds, never laxer than 0.05
        unless already so."""
        def move(value: float, step: float) -> float:
            return round(min(1.0, max(min(0.05, value), value + steps * step)), 6)
        return Thresholds(move(self.jaccard, JACCARD_STEP), move(self.cosine, COSINE_STEP))

    def stages(self, jaccard: float, cosine: float) -> tuple[int, ...]:
        return tuple(stage for stage, hit in ((1, jaccard >= self.jaccard),
                                              (2, cosine >= self.cosine)) if hit)


@dataclass(frozen=True, slots=True)
class Pair:
    """Item ``a`` of the audited set and item ``b`` of the other (or the same) set."""

    a: str
    b: str
    jaccard: float
    cosine: float
    stages: tuple[int, ...]
    label: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "jaccard": round(self.jaccard, 4),
                "cosine": round(self.cosine, 4), "stages": list(self.stages), "label": self.label}


@dataclass(frozen=True, slots=True)
class Flagged:
    """How many audited items a setting flags: by stage 1, added by stage 2 alone, in all."""

    lexical: int
    added: int
    joint: int


@dataclass(frozen=True, slots=True)
class Summary:
    audited: int
    lax: Flagged
    default: Flagged
    strict: Flagged
    #: Best cosine of each audited item against the other set, counted in equal bins over 0..1.
    histogram: list[int] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Summary":
        """The inverse of :meth:`as_json` (how an audit's summary is stored)."""
        def flagged(name: str) -> Flagged:
            found = data[name]
            return Flagged(found["lexical"], found["added_by_cosine"], found["joint"])
        return cls(data["audited"], flagged("lax"), flagged("default"), flagged("strict"),
                   list(data.get("best_cosine_histogram", [])))

    def as_json(self) -> dict[str, Any]:
        flagged = {name: {"lexical": f.lexical, "added_by_cosine": f.added, "joint": f.joint}
                   for name, f in (("lax", self.lax), ("default", self.default),
                                   ("strict", self.strict))}
        return {"audited": self.audited, **flagged, "best_cosine_histogram": self.histogram}

    def text(self) -> str:
        def share(n: int) -> str:
            return f"{n:,} ({100 * n / self.audited:.1f}%)" if self.audited else "0"
        f = self.default
        return (f"items flagged: {share(f.lexical)} by word 5-grams, {share(f.added)} more by "
                f"embeddings, {share(f.joint)} jointly; {self.lax.joint:,} at the lax and "
                f"{self.strict.joint:,} at the strict thresholds")


@dataclass(frozen=True, slots=True)
class Result:
    thresholds: Thresholds
    n_a: int
    n_b: int
    pairs: list[Pair]
    summary: Summary


def compare(a: TextSet, vectors_a: np.ndarray, b: TextSet | None, vectors_b: np.ndarray | None,
            thresholds: Thresholds, task: Task | None = None) -> Result:
    """Stages 1 and 2 over ``a`` against ``b`` (or ``a`` against itself when ``b`` is None)."""
    within = b is None
    lax = thresholds.moved(-1)
    sets_a = [lexical.shingles(text) for text in a.texts]
    sets_b: list[frozenset[int]] | None = None
    if b is None:
        others, others_sets, others_vectors = a, sets_a, vectors_a
    elif vectors_b is None:
        raise ValueError("comparing with another set needs that set's vectors")
    else:
        sets_b = [lexical.shingles(text) for text in b.texts]
        others, others_sets, others_vectors = b, sets_b, vectors_b
    scores: dict[tuple[int, int], list[float]] = {
        (i, j): [jac, -2.0] for i, j, jac in lexical.similar_pairs(sets_a, sets_b, lax.jaccard,
                                                                   task)}
    matches = semantic.similar_pairs(vectors_a, vectors_b, lax.cosine, task)
    for i, j, cos in zip(matches.first.tolist(), matches.second.tolist(), matches.score.tolist()):
        scores.setdefault((i, j), [-1.0, -2.0])[1] = cos
    for (i, j), pair in scores.items():  # the score a stage did not reach its threshold for
        if pair[0] < 0:
            pair[0] = lexical.jaccard(sets_a[i], others_sets[j])
        if pair[1] < -1:
            pair[1] = float(vectors_a[i] @ others_vectors[j])
    pairs = sorted((Pair(a.ids[i], others.ids[j], jac, cos, thresholds.stages(jac, cos))
                    for (i, j), (jac, cos) in scores.items() if thresholds.stages(jac, cos)),
                   key=lambda p: (-p.cosine, -p.jaccard, p.a, p.b))
    summary = Summary(len(a), _flagged(scores, lax, within), _flagged(scores, thresholds, within),
                      _flagged(scores, thresholds.moved(1), within), _histogram(matches.best))
    return Result(thresholds, len(a), len(others), pairs, summary)


def _flagged(scores: dict[tuple[int, int], list[float]], thresholds: Thresholds,
             within: bool) -> Flagged:
    lexical_items: set[int] = set()
    semantic_items: set[int] = set()
    for (i, j), (jac, cos) in scores.items():
        items = (i, j) if within else (i,)
        if jac >= thresholds.jaccard:
            lexical_items.update(items)
        if cos >= thresholds.cosine:
            semantic_items.update(items)
    return Flagged(len(lexical_items), len(semantic_items - lexical_items),
                   len(lexical_items | semantic_items))


def _histogram(best: np.ndarray) -> list[int]:
    counts, _ = np.histogram(np.clip(best, 0.0, 1.0), bins=HISTOGRAM_BINS, range=(0.0, 1.0))
    return counts.tolist()
