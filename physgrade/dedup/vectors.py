"""Embeddings kept in the project, so that no text is embedded twice by the same model.

Vectors are stored as float32 blobs keyed by the model's cache key and the SHA-256 of the text;
a text that appears in two sets, or in the same set twice, is embedded once.
"""

from __future__ import annotations

import hashlib
from typing import Sequence

import numpy as np

from physgrade.dedup.engine import Embedder
from physgrade.project import Project
from physgrade.tasks import Task

#: Texts embedded between commits: a cancelled or killed run keeps what it finished.
COMMIT_EVERY = 2000
_LOOKUP = 500


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def embeddings(project: Project, embedder: Embedder, texts: Sequence[str],
               task: Task | None = None) -> np.ndarray:
    """One unit row per text: from the project's store where present, else embedded and
    stored (committed every :data:`COMMIT_EVERY` texts)."""
    key = embedder.model.key
    hashes = [text_hash(text) for text in texts]
    found = stored(project, key, hashes)
    missing: dict[str, str] = {}
    for digest, text in zip(hashes, texts):
        if digest not in found:
            missing.setdefault(digest, text)
    pending = list(missing.items())
    for start in range(0, len(pending), COMMIT_EVERY):
        chunk = pending[start:start + COMMIT_EVERY]
        vectors = embedder.encode([text for _, text in chunk],
                                  task and task.part(start, len(pending)))
        with project.transaction():
            project.conn.executemany(
                "INSERT OR REPLACE INTO embeddings (model, text_hash, vector) VALUES (?, ?, ?)",
                [(key, digest, vector.astype("<f4").tobytes())
                 for (digest, _), vector in zip(chunk, vectors)])
        found.update((digest, vector) for (digest, _), vector in zip(chunk, vectors))
    if not texts:
        return np.zeros((0, embedder.dimension), dtype=np.float32)
    return np.stack([found[digest] for digest in hashes])


def stored_count(project: Project, model_key: str) -> int:
    """How many texts have a stored embedding from ``model_key``: a run that stops says how
    many it added (they are kept)."""
    return project.conn.execute("SELECT count(*) FROM embeddings WHERE model = ?",
                                (model_key,)).fetchone()[0]


def stored_hashes(project: Project, model_key: str) -> set[str]:
    """The :func:`text_hash` of every text with a stored embedding from ``model_key``: those
    a new run does not embed again."""
    return {digest for (digest,) in project.conn.execute(
        "SELECT text_hash FROM embeddings WHERE model = ?", (model_key,))}


def stored(project: Project, model_key: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
    """The stored vectors of ``model_key`` among ``hashes``."""
    found: dict[str, np.ndarray] = {}
    unique = list(dict.fromkeys(hashes))
    for start in range(0, len(unique), _LOOKUP):
        chunk = unique[start:start + _LOOKUP]
        for digest, blob in project.conn.execute(
                "SELECT text_hash, vector FROM embeddings WHERE model = ? AND text_hash IN "
                f"({', '.join('?' * len(chunk))})", (model_key, *chunk)):
            found[digest] = np.frombuffer(blob, dtype="<f4").astype(np.float32)
    return found
