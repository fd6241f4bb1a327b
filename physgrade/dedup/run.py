"""The audit of a project, end to end: texts, cached embeddings, stages 1 and 2, the figure
stage (cached image hashes), stored pairs.

Stage 3, the judge's reading of each stored pair, is a judge purpose
(:mod:`physgrade.judge.duplicates`) run afterwards on the pairs this leaves in the project.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

from physgrade.changes import NOTHING, Changes, RecordKind
from physgrade.dedup import figures, pairs, vectors
from physgrade.dedup.audit import Result, Thresholds, compare
from physgrade.dedup.engine import Embedder
from physgrade.dedup.texts import TextSet, project_questions
from physgrade.project import Project
from physgrade.tasks import Task


@dataclass(frozen=True, slots=True)
class Audit:
    """A finished audit: where it ran, what it compared and found, and its stored id."""

    id: int
    source: str
    model: str
    provider: str
    result: Result
    changes: Changes = Changes.of(RecordKind.PAIRS, RecordKind.EMBEDDINGS)

    def as_json(self) -> dict[str, object]:
        """The shape ``physgrade dedup --json`` prints."""
        return {"provider": self.provider, "n_a": self.result.n_a, "n_b": self.result.n_b,
                "pairs": [pair.as_json() for pair in self.result.pairs]}


class Embedded(NamedTuple):
    """What :func:`embed_project` did: the questions it covered and the texts newly embedded."""

    questions: int
    embedded: int

    @property
    def changes(self) -> Changes:
        return Changes.of(RecordKind.EMBEDDINGS) if self.embedded else NOTHING


def embed_project(project: Project, embedder: Embedder,
                  task: Task | None = None) -> Embedded:
    """Embed every question not embedded yet; returns (questions, texts newly embedded)."""
    def count() -> int:
        return project.conn.execute("SELECT count(*) FROM embeddings WHERE model = ?",
                                    (embedder.model.key,)).fetchone()[0]

    texts = project_questions(project).texts
    before = count()
    vectors.embeddings(project, embedder, texts, task)
    return Embedded(len(texts), count() - before)


def audit_project(project: Project, embedder: Embedder, against: TextSet | None = None,
                  thresholds: Thresholds = Thresholds(), task: Task | None = None) -> Audit:
    """Audit the project's questions among themselves, or against another set, and store the
    pairs (judge labels and decisions of pairs found before are kept)."""
    task = task or Task()
    own = project_questions(project)
    total = len(own) + (len(against) if against else 0)
    vectors_a = vectors.embeddings(project, embedder, own.texts, task.part(0, total))
    vectors_b = None if against is None else vectors.embeddings(
        project, embedder, against.texts, task.part(len(own), total))
    figures_a = figures.project_figures(project, own.ids, task)
    figures_b = None if against is None else against.figures
    result = compare(own, vectors_a, against, vectors_b, thresholds, task, figures_a, figures_b)
    source = "" if against is None else against.source
    texts_b = None if against is None else dict(zip(against.ids, against.texts))
    audit_id = pairs.save(project, result, source, texts_b, embedder.model.name,
                          embedder.provider)
    return with_labels(project, Audit(audit_id, source, embedder.model.name, embedder.provider,
                                      result))


def with_labels(project: Project, audit: Audit) -> Audit:
    """``audit`` with the judge labels its pairs have in the project now."""
    found = pairs.labels(project, audit.source, ((p.a, p.b) for p in audit.result.pairs))
    result = audit.result
    labelled = [replace(p, label=found.get((p.a, p.b))) for p in result.pairs]
    return replace(audit, result=Result(result.thresholds, result.n_a, result.n_b, labelled,
                                        result.summary))
