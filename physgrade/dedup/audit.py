"""The audit's stages over two sets (or one against itself), and their figures.

Stage 1 (word 5-gram Jaccard), stage 2 (embedding cosine) and the figure stage (stage 4:
perceptual hashes of the questions' images, :mod:`physgrade.dedup.figures`) each propose pairs;
every pair gets both text scores, how close its figures come (when both questions have some),
and the list of stages whose threshold it reaches. The stages run once at the lax thresholds,
so the counts at the lax, default and strict settings come from one pass. Stage 3, the judge,
reads the stored pairs afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from physgrade.dedup import lexical, semantic
from physgrade.dedup.figures import (
    BITS,
    DEFAULT_FIGURE_BITS,
    FIGURE_STEP,
    FigureSet,
    Match,
    close_pairs,
    match,
)
from physgrade.dedup.texts import TextSet
from physgrade.tasks import Task

DEFAULT_JACCARD = 0.4
#: Calibrated for the embedded all-MiniLM-L6-v2 on benchmarks/data/dedup_set.jsonl (see the
#: README): the paper's 0.85 suits its larger model, which scores paraphrases higher.
DEFAULT_COSINE = 0.78
#: How far the lax and strict settings move each threshold.
JACCARD_STEP = 0.1
COSINE_STEP = 0.05
#: The figure stage's number in a pair's stages (3 is the judge, which reads the pairs found).
FIGURE_STAGE = 4
HISTOGRAM_BINS = 20


@dataclass(frozen=True, slots=True)
class Thresholds:
    jaccard: float = DEFAULT_JACCARD
    cosine: float = DEFAULT_COSINE
    #: The most bits two figures' perceptual hashes may differ by (one image in common always
    #: counts).
    figure: int = DEFAULT_FIGURE_BITS

    def __post_init__(self) -> None:
        for name, value in (("Jaccard", self.jaccard), ("cosine", self.cosine)):
            if not 0 < value <= 1:
                raise ValueError(f"the {name} threshold must be in (0, 1], not {value}")
        if not 0 <= self.figure <= BITS:
            raise ValueError(f"the figure threshold must be 0 to {BITS} bits, not "
                             f"{self.figure}")

    def moved(self, steps: int) -> "Thresholds":
        """Laxer (negative ``steps``) or stricter (positive) thresholds, never laxer than 0.05
        unless already so."""
        def move(value: float, step: float) -> float:
            return round(min(1.0, max(min(0.05, value), value + steps * step)), 6)
        return Thresholds(move(self.jaccard, JACCARD_STEP), move(self.cosine, COSINE_STEP),
                          min(BITS, max(0, self.figure - steps * FIGURE_STEP)))

    def stages(self, jaccard: float, cosine: float,
               figure: Match | None = None) -> tuple[int, ...]:
        return tuple(stage for stage, hit in (
            (1, jaccard >= self.jaccard), (2, cosine >= self.cosine),
            (FIGURE_STAGE, figure is not None and (figure.same_image
                                                   or figure.distance <= self.figure))) if hit)


@dataclass(frozen=True, slots=True)
class Pair:
    """Item ``a`` of the audited set and item ``b`` of the other (or the same) set."""

    a: str
    b: str
    jaccard: float
    cosine: float
    stages: tuple[int, ...]
    label: str | None = None
    #: How close the two questions' figures come (None: either has none).
    figure: Match | None = None

    def as_json(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "jaccard": round(self.jaccard, 4),
                "cosine": round(self.cosine, 4),
                "figure_distance": None if self.figure is None else self.figure.distance,
                "same_image": self.figure is not None and self.figure.same_image,
                "stages": list(self.stages), "label": self.label}


@dataclass(frozen=True, slots=True)
class Flagged:
    """How many audited items a setting flags: by stage 1, added by stage 2, added by the
    figure stage (flagged by neither text stage), in all."""

    lexical: int
    added: int
    joint: int
    figures: int = 0


@dataclass(frozen=True, slots=True)
class Summary:
    audited: int
    lax: Flagged
    default: Flagged
    strict: Flagged
    #: Best cosine of each audited item against the other set, counted in equal bins over 0..1.
    histogram: list[int] = field(default_factory=list)
    #: Audited items with figures (the figure stage says nothing of the others).
    with_figures: int = 0

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Summary":
        """The inverse of :meth:`as_json` (how an audit's summary is stored)."""
        def flagged(name: str) -> Flagged:
            found = data[name]
            return Flagged(found["lexical"], found["added_by_cosine"], found["joint"],
                           found.get("added_by_figures", 0))
        return cls(data["audited"], flagged("lax"), flagged("default"), flagged("strict"),
                   list(data.get("best_cosine_histogram", [])), data.get("with_figures", 0))

    def as_json(self) -> dict[str, Any]:
        flagged = {name: {"lexical": f.lexical, "added_by_cosine": f.added,
                          "added_by_figures": f.figures, "joint": f.joint}
                   for name, f in (("lax", self.lax), ("default", self.default),
                                   ("strict", self.strict))}
        return {"audited": self.audited, **flagged, "best_cosine_histogram": self.histogram,
                "with_figures": self.with_figures}

    def text(self) -> str:
        def share(n: int) -> str:
            return f"{n:,} ({100 * n / self.audited:.1f}%)" if self.audited else "0"
        f = self.default
        figures = (f", {share(f.figures)} more by figures (of {self.with_figures:,} with "
                   "figures)" if self.with_figures else "")
        return (f"items flagged: {share(f.lexical)} by word 5-grams, {share(f.added)} more by "
                f"embeddings{figures}, {share(f.joint)} jointly; {self.lax.joint:,} at the lax "
                f"and {self.strict.joint:,} at the strict thresholds")


@dataclass(frozen=True, slots=True)
class Result:
    thresholds: Thresholds
    n_a: int
    n_b: int
    pairs: list[Pair]
    summary: Summary


def compare(a: TextSet, vectors_a: np.ndarray, b: TextSet | None, vectors_b: np.ndarray | None,
            thresholds: Thresholds, task: Task | None = None, figures_a: FigureSet | None = None,
            figures_b: FigureSet | None = None) -> Result:
    """Stages 1, 2 and the figure stage over ``a`` against ``b`` (or ``a`` against itself when
    ``b`` is None); the figure stage runs where the sets' figures are given."""
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
    figures_a = figures_a or FigureSet()
    others_figures = figures_a if b is None else figures_b or FigureSet()
    figured = close_pairs(figures_a, None if b is None else others_figures, lax.figure)
    for key in figured:
        scores.setdefault(key, [-1.0, -2.0])
    for (i, j), pair in scores.items():  # the score a stage did not reach its threshold for
        if pair[0] < 0:
            pair[0] = lexical.jaccard(sets_a[i], others_sets[j])
        if pair[1] < -1:
            pair[1] = float(vectors_a[i] @ others_vectors[j])
    if len(figures_a) and len(others_figures):  # how close the figures of text pairs come
        rows_a, rows_b = figures_a.by_owner(), others_figures.by_owner()
        for i, j in scores.keys() - figured.keys():
            found = match(figures_a, others_figures, rows_a.get(i, []), rows_b.get(j, []))
            if found is not None:
                figured[i, j] = found
    pairs = []
    for (i, j), (jac, cos) in scores.items():
        stages = thresholds.stages(jac, cos, figured.get((i, j)))
        if stages:
            pairs.append(Pair(a.ids[i], others.ids[j], jac, cos, stages,
                              figure=figured.get((i, j))))
    pairs.sort(key=lambda p: (-p.cosine, -p.jaccard, p.a, p.b))
    laxly, by_default, strictly = (_flagged(scores, figured, setting, within)
                                   for setting in (lax, thresholds, thresholds.moved(1)))
    summary = Summary(len(a), laxly, by_default, strictly, _histogram(matches.best),
                      figures_a.questions)
    return Result(thresholds, len(a), len(others), pairs, summary)


def _flagged(scores: dict[tuple[int, int], list[float]], figured: dict[tuple[int, int], Match],
             thresholds: Thresholds, within: bool) -> Flagged:
    flagged: dict[int, set[int]] = {1: set(), 2: set(), FIGURE_STAGE: set()}
    for (i, j), (jac, cos) in scores.items():
        for stage in thresholds.stages(jac, cos, figured.get((i, j))):
            flagged[stage].update((i, j) if within else (i,))
    lexical_items, semantic_items, figure_items = flagged.values()
    texts = lexical_items | semantic_items
    return Flagged(len(lexical_items), len(semantic_items - lexical_items),
                   len(texts | figure_items), len(figure_items - texts))


def _histogram(best: np.ndarray) -> list[int]:
    counts, _ = np.histogram(np.clip(best, 0.0, 1.0), bins=HISTOGRAM_BINS, range=(0.0, 1.0))
    return counts.tolist()
