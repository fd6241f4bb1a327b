"""Stage 1 of the audit: word 5-gram shingles and their Jaccard similarity, without all pairs.

Candidates come from a prefix-filtered inverted index (the AllPairs set-similarity join): with
every shingle set sorted rarest shingle first, two sets whose Jaccard similarity reaches ``t``
must share a shingle within their first ``|x| - ceil(t |x|) + 1`` shingles. Only those prefixes
are indexed, and sets whose sizes alone rule the threshold out are skipped, so common phrases
("what is the magnitude of") cost nothing and the result is still exact.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from typing import Iterator, Sequence

from physgrade.tasks import Task

SHINGLE_WORDS = 5
_COMMAND = re.compile(r"\\[A-Za-z]+")
_DROPPED = re.compile(r"[${}\[\]()]")
_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """Lower case, without LaTeX commands or ``$ { } [ ] ( )``, white space collapsed."""
    text = _DROPPED.sub(" ", _COMMAND.sub(" ", text.lower()))
    return _SPACE.sub(" ", text).strip()


def shingles(text: str, size: int = SHINGLE_WORDS) -> frozenset[int]:
    """The set of word ``size``-grams of the normalised text (hashed); a shorter text is one."""
    words = normalise(text).split(" ")
    if len(words) <= size:
        return frozenset((hash(tuple(words)),))
    return frozenset(hash(tuple(words[i:i + size])) for i in range(len(words) - size + 1))


def jaccard(x: frozenset[int], y: frozenset[int]) -> float:
    if not x or not y:
        return 0.0
    common = len(x & y)
    return common / (len(x) + len(y) - common)


def similar_pairs(a: Sequence[frozenset[int]], b: Sequence[frozenset[int]] | None,
                  threshold: float, task: Task | None = None
                  ) -> Iterator[tuple[int, int, float]]:
    """Every ``(i, j, jaccard)`` with ``jaccard(a[i], b[j]) >= threshold``; with ``b`` None,
    the pairs ``i < j`` within ``a``."""
    if not 0 < threshold <= 1:
        raise ValueError(f"the Jaccard threshold must be in (0, 1], not {threshold}")
    within = b is None
    others = a if b is None else b
    frequency = Counter(s for group in ((a,) if within else (a, others)) for x in group for s in x)
    rank = {s: (n, s) for s, n in frequency.items()}

    def prefix(x: frozenset[int]) -> list[int]:
        ordered = sorted(x, key=rank.__getitem__)
        return ordered[:len(x) - math.ceil(threshold * len(x) - 1e-9) + 1]

    index: dict[int, list[int]] = defaultdict(list)
    if not within:
        for j, y in enumerate(others):
            for s in prefix(y):
                index[s].append(j)
    for i, x in enumerate(a):
        if i % 1000 == 0 and task is not None:
            task.report(i, len(a), "comparing word 5-grams")
        seen: set[int] = set()
        low, high = threshold * len(x) - 1e-9, len(x) / threshold + 1e-9
        own = prefix(x)
        for s in own:
            for j in index.get(s, ()):
                if j not in seen:
                    seen.add(j)
                    y = others[j]
                    if low <= len(y) <= high:
                        score = jaccard(x, y)
                        if score >= threshold:
                            yield (j, i, score) if within else (i, j, score)
        if within:
            for s in own:
                index[s].append(i)
