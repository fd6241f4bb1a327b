"""Writing Bloom labels: an annotator's label of a question, and the adjudicated final label.

Each write validates against the vocabularies of :mod:`physgrade.taxonomy`, commits at once and
returns its :class:`~physgrade.changes.Changes` (:attr:`~physgrade.changes.RecordKind.BLOOM` for the
question). A question's final label (``questions.bloom_*``) follows in the same transaction, by
the rule of :mod:`physgrade.annotation.adjudication` (applied by the schema's triggers).
"""

from __future__ import annotations

import json

from physgrade.changes import Changes, RecordKind
from physgrade.project import Project, ProjectError, now_iso
from physgrade.raters import HUMAN, ensure_rater
from physgrade.rubric import ScoreError
from physgrade.taxonomy import BLOOM_COGNITIVE, BLOOM_KNOWLEDGE


def _check(cognitive: str | None, knowledge: str | None) -> None:
    if cognitive is not None and cognitive not in BLOOM_COGNITIVE:
        raise ScoreError("cognitive", f"{cognitive!r} is not a Bloom cognitive level")
    if knowledge is not None and knowledge not in BLOOM_KNOWLEDGE:
        raise ScoreError("knowledge", f"{knowledge!r} is not a Bloom knowledge type")


def set_bloom_label(project: Project, question_id: str, annotator: str, cognitive: str | None,
                    knowledge: str | None, kind: str = HUMAN, prompt_version: str = "",
                    extra: dict[str, object] | None = None) -> Changes:
    """Record an annotator's Bloom labels of a question, committed at once. A model annotator
    is named with its prompt version; ``extra`` keeps e.g. its rationale. A person's label also
    updates the question's final label in the same transaction, through the schema's
    triggers."""
    _check(cognitive, knowledge)
    with project.transaction():
        annotator_id, changes = ensure_rater(project, annotator, kind, prompt_version)
        project.conn.execute(
            "INSERT INTO bloom_labels (question_id, annotator_id, cognitive, knowledge, "
            "updated_at, extra) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET "
            "cognitive = excluded.cognitive, knowledge = excluded.knowledge, "
            "updated_at = excluded.updated_at, extra = coalesce(excluded.extra, bloom_labels.extra)",
            (question_id, annotator_id, cognitive, knowledge, now_iso(),
             json.dumps(extra, ensure_ascii=False) if extra else None))
    return changes | Changes.of(RecordKind.BLOOM, questions=[question_id])


def set_bloom_final(project: Project, question_id: str, cognitive: str | None,
                    knowledge: str | None, adjudicator: str) -> Changes:
    """Decide a question's final Bloom label (both dimensions), committed at once; None for
    both withdraws the decision. The final label (``questions.bloom_*``) follows in the same
    transaction, by the rule of :mod:`physgrade.annotation.adjudication` (applied by the
    schema's triggers, which also apply it whenever a person's label changes)."""
    if (cognitive is None) != (knowledge is None):
        raise ScoreError("cognitive" if cognitive is None else "knowledge",
                         "an adjudicated label needs both a cognitive level and a "
                         "knowledge type")
    _check(cognitive, knowledge)
    if not adjudicator.strip():
        raise ProjectError("an adjudication needs the adjudicator's name")
    with project.transaction():
        if not project.conn.execute("SELECT 1 FROM questions WHERE id = ?",
                                    (question_id,)).fetchone():
            raise ProjectError(f"no question {question_id!r} in this project")
        if cognitive is None:
            project.conn.execute("DELETE FROM bloom_adjudications WHERE question_id = ?",
                                 (question_id,))
        else:
            project.conn.execute(
                "INSERT INTO bloom_adjudications (question_id, cognitive, knowledge, "
                "adjudicator, decided_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET "
                "cognitive = excluded.cognitive, knowledge = excluded.knowledge, "
                "adjudicator = excluded.adjudicator, decided_at = excluded.decided_at",
                (question_id, cognitive, knowledge, adjudicator.strip(), now_iso()))
    return Changes.of(RecordKind.BLOOM, questions=[question_id])


def bloom_adjudication(project: Project, question_id: str) -> tuple[str, str, str, str] | None:
    """The decision on a question's final Bloom label: (cognitive, knowledge, adjudicator,
    decided_at), or None when nobody adjudicated it."""
    row = project.conn.execute(
        "SELECT cognitive, knowledge, adjudicator, decided_at FROM bloom_adjudications "
        "WHERE question_id = ?", (question_id,)).fetchone()
    return tuple(row) if row else None
