"""The final Bloom label of a question, and adjudication of people's disagreements.

``questions.bloom_cognitive`` / ``bloom_knowledge`` hold a question's FINAL label, the one
reports and filters use. The rule, in order:

1. the adjudicated label (table ``bloom_adjudications``, written by
   :func:`physgrade.annotation.labels.set_bloom_final`), if there is one;
2. else the label every human annotator gave, when at least one person gave a complete label
   (both dimensions) and all complete human labels are identical; a label with a dimension
   missing is work in progress and does not count, here or in the disagreements queue;
3. else the label the question came with. The imported value is kept in table
   ``bloom_imported`` (by a trigger on ``questions``) the first time anything replaces it (no
   row there means the question still holds it), so it comes back when the consensus or the
   adjudication goes away.

The rule is written once, as the view ``bloom_final`` (``db/006_bloom_adjudication.sql``).
Triggers on ``bloom_labels`` (human annotators only) and ``bloom_adjudications`` apply it to a
question inside the transaction that writes the label, whichever code writes it (the app,
:func:`~physgrade.annotation.labels.set_bloom_label`, an import); :func:`refresh` applies it on
demand, e.g. to repair a project edited by hand.
"""

from __future__ import annotations

from typing import Iterable

from physgrade.changes import Changes, RecordKind
from physgrade.project import Project

#: Set the question's final label by the rule (a trigger keeps the imported one first).
APPLY_RULE = (
    "UPDATE questions SET (bloom_cognitive, bloom_knowledge) = (SELECT cognitive, knowledge "
    "FROM bloom_final WHERE question_id = questions.id) WHERE id = ?")

#: Where a final label comes from (the view's ``source`` column).
SOURCES = ("adjudicated", "consensus", "imported")


def refresh(project: Project, question_ids: Iterable[str]) -> Changes:
    """Recompute the final label of these questions by the rule. Runs in the caller's
    transaction when there is one (it never commits); unknown ids are ignored."""
    ids = list(dict.fromkeys(question_ids))
    project.conn.executemany(APPLY_RULE, [(qid,) for qid in ids])
    return Changes.of(RecordKind.BLOOM, questions=ids)


def source(project: Project, question_id: str) -> str | None:
    """Where the question's final label comes from (one of :data:`SOURCES`), None for an
    unknown question."""
    row = project.conn.execute("SELECT source FROM bloom_final WHERE question_id = ?",
                               (question_id,)).fetchone()
    return row[0] if row else None


def imported_label(project: Project, question_id: str) -> tuple[str | None, str | None]:
    """The (cognitive, knowledge) label the question came with."""
    row = project.conn.execute(
        "SELECT coalesce(i.question_id IS NOT NULL, 0), i.cognitive, i.knowledge, "
        "q.bloom_cognitive, q.bloom_knowledge FROM questions q LEFT JOIN bloom_imported i "
        "ON i.question_id = q.id WHERE q.id = ?", (question_id,)).fetchone()
    if row is None:
        return None, None
    return (row[1], row[2]) if row[0] else (row[3], row[4])
