"""Stage 2 of the audit: cosine similarity of normalised embeddings, in blocks.

The similarity matrix of 20,000 texts against 5,000 would take 400 MB; it is computed a block
of rows at a time, each block under :data:`BLOCK_BYTES`, and only the pairs above the threshold
and each row's best match are kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from physgrade.tasks import Task

BLOCK_BYTES = 32 << 20


@dataclass(frozen=True, slots=True)
class Matches:
    """Pairs ``(first[k], second[k])`` with cosine ``score[k]``, and each row's best cosine."""

    first: np.ndarray
    second: np.ndarray
    score: np.ndarray
    best: np.ndarray


def similar_pairs(a: np.ndarray, b: np.ndarray | None, threshold: float,
                  task: Task | None = None, block_bytes: int = BLOCK_BYTES) -> Matches:
    """Rows of ``a`` and ``b`` (unit vectors) whose cosine is at least ``threshold``; with ``b``
    None, the pairs ``i < j`` within ``a`` (a row is not its own best match)."""
    within = b is None
    others = a if b is None else b
    rows = max(1, block_bytes // (4 * max(1, len(others))))
    first, second, score = [], [], []
    best = np.full(len(a), -1.0, dtype=np.float32)
    for start in range(0, len(a), rows):
        block = a[start:start + rows] @ others.T
        if within:  # a row is not its own match
            block[np.arange(len(block)), np.arange(start, start + len(block))] = -1.0
        if block.shape[1]:
            best[start:start + rows] = block.max(axis=1)
        i, j = np.nonzero(block >= threshold)
        if within:  # each pair once
            keep = j > i + start
            i, j = i[keep], j[keep]
        first.append(i + start)
        second.append(j)
        score.append(block[i, j])
        if task is not None:
            task.report(min(start + rows, len(a)), len(a), "comparing embeddings")
    return Matches(_joined(first, np.int64), _joined(second, np.int64),
                   _joined(score, np.float32), best)


def _joined(parts: list[np.ndarray], dtype: type) -> np.ndarray:
    return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)
