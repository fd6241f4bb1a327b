"""The calibration and held-out parts of the responses a judge and a reference both assessed.

Examples for a refined prompt come from the calibration part only; the held-out part is only
ever judged and measured. The split is by question: every response to a question falls in the
same part, so a held-out response is never judged by a prompt that shows an expert grading
another model's answer to the very same question. A split is drawn once per judge, reference,
share and seed, stored, and read back on every later run: the held-out part never changes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from physgrade.project import Project, now_iso


@dataclass(frozen=True, slots=True)
class Split:
    """A split of responses by question; ``id`` is the stored split's (None: not stored)."""

    judge: str
    reference: str
    holdout: float
    seed: int
    calibration: tuple[str, ...]
    heldout: tuple[str, ...]
    id: int | None = None

    def as_dict(self) -> dict:
        return {"judge": self.judge, "reference": self.reference, "holdout": self.holdout,
                "seed": self.seed, "calibration": len(self.calibration),
                "heldout": len(self.heldout)}


def draw(judge: str, reference: str, questions: pd.Series, holdout: float,
         seed: int) -> Split:
    """Split the responses of ``questions`` (response id → question id) so that about
    ``holdout`` of them are held out: the questions are shuffled with ``seed``, and taken into
    the held-out part while that brings its size closer to the share asked for. Each part gets
    at least one question. Raises ValueError when there are fewer than two questions."""
    if not 0 < holdout < 1:
        raise ValueError(f"the held-out share must lie between 0 and 1, not {holdout:g}")
    sizes = questions.groupby(questions).size().sort_index()
    if len(sizes) < 2:
        raise ValueError(f"a split needs responses to at least two questions that both the "
                         f"judge and {reference} assessed; there are {len(sizes)}")
    order = sizes.index.to_numpy()[np.random.default_rng(seed).permutation(len(sizes))]
    target = holdout * len(questions)
    counts = sizes.reindex(order).to_numpy()
    before = np.concatenate([[0], np.cumsum(counts)[:-1]])
    held = before + counts / 2 <= target  # taking the question gets closer to the target
    held[0], held[-1] = True, False
    held_questions = set(order[held])
    in_heldout = questions.isin(held_questions)
    return Split(judge, reference, holdout, seed, tuple(sorted(questions.index[~in_heldout])),
                 tuple(sorted(questions.index[in_heldout])))


def find(project: Project, judge: str, reference: str, holdout: float,
         seed: int) -> Split | None:
    """The stored split of these settings, if it was drawn before."""
    row = project.conn.execute("SELECT id FROM refinement_splits WHERE judge = ? AND "
                               "reference = ? AND holdout = ? AND seed = ?",
                               (judge, reference, holdout, seed)).fetchone()
    return None if row is None else read(project, row[0])


def read(project: Project, split_id: int) -> Split:
    judge, reference, holdout, seed = project.conn.execute(
        "SELECT judge, reference, holdout, seed FROM refinement_splits WHERE id = ?",
        (split_id,)).fetchone()
    parts: dict[int, list[str]] = {0: [], 1: []}
    for response_id, heldout in project.conn.execute(
            "SELECT response_id, heldout FROM refinement_split_items WHERE split_id = ? "
            "ORDER BY response_id", (split_id,)):
        parts[heldout].append(response_id)
    return Split(judge, reference, holdout, seed, tuple(parts[0]), tuple(parts[1]), split_id)


def save(project: Project, split: Split) -> Split:
    """Store a drawn split (inside the caller's transaction); a stored one is returned as is."""
    if split.id is not None:
        return split
    cursor = project.conn.execute(
        "INSERT INTO refinement_splits (judge, reference, holdout, seed, created_at) "
        "VALUES (?, ?, ?, ?, ?)", (split.judge, split.reference, split.holdout, split.seed,
                                   now_iso()))
    split_id = int(cursor.lastrowid or 0)
    project.conn.executemany(
        "INSERT INTO refinement_split_items (split_id, response_id, heldout) VALUES (?, ?, ?)",
        [(split_id, rid, 0) for rid in split.calibration]
        + [(split_id, rid, 1) for rid in split.heldout])
    return Split(split.judge, split.reference, split.holdout, split.seed, split.calibration,
                 split.heldout, split_id)
