"""A Bloom annotation session: which questions an annotator labels next, and what they see.

People label each question on both dimensions of Bloom's revised taxonomy (cognitive level and
knowledge type, :mod:`physgrade.taxonomy`); a language model's labels (stored by
:mod:`physgrade.judge.bloom` as that model's labels, rater kind ``llm``) may be shown as a
suggestion. Labels are written with :func:`physgrade.annotation.labels.set_bloom_label` and
adjudications with :func:`~physgrade.annotation.labels.set_bloom_final`; the final label rule is
in :mod:`physgrade.annotation.adjudication`. Everything here only reads.

A label is *complete* when it has both dimensions; only complete labels count as done for
the annotator's queue, for the people's consensus and for disagreements.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from physgrade.project import Project
from physgrade.raters import LLM, is_kind, is_named_person, is_person, rater_label
from physgrade.taxonomy import TOPICS, in_vocabulary_order

#: The queues a session can walk: questions the annotator has not labelled completely, every
#: question, and questions people disagree on that nobody has adjudicated yet.
FILTERS = ("unlabelled", "all", "disagreements")

_COMPLETE = "b.cognitive IS NOT NULL AND b.knowledge IS NOT NULL"


@dataclass(frozen=True)
class Label:
    """One annotator's (or the final) Bloom label; a dimension not given is None."""

    cognitive: str | None
    knowledge: str | None

    @property
    def complete(self) -> bool:
        return self.cognitive is not None and self.knowledge is not None


@dataclass(frozen=True)
class BloomItem:
    """A question as an annotation session shows it.

    ``mine`` is the annotator's own label, ``suggestion`` the chosen model's (with its
    rationale when it gave one), ``others`` the other people's labels by name, ``final`` the
    question's final label (``questions.bloom_*``) and ``adjudicated`` whether someone decided
    it. A label nobody gave is None.
    """

    question_id: str
    kind: str
    topic: str | None
    question: str
    options: dict[str, str] | None
    mine: Label | None
    suggestion: Label | None
    suggestion_rationale: str | None
    others: dict[str, Label]
    final: Label | None
    adjudicated: bool


def annotators(project: Project) -> list[str]:
    """The people who have given at least one Bloom label, by name."""
    return [name for (name,) in project.conn.execute(
        f"SELECT r.name FROM raters r WHERE {is_person()} AND EXISTS (SELECT 1 FROM "
        "bloom_labels b WHERE b.annotator_id = r.id) ORDER BY r.name, r.prompt_version")]


def suggesters(project: Project) -> list[str]:
    """The models with Bloom labels, as rater labels (``name [prompt version]``)."""
    return [rater_label(name, version) for name, version in _suggester_rows(project)]


def _suggester_rows(project: Project) -> list[tuple[str, str]]:
    return project.conn.execute(
        f"SELECT r.name, r.prompt_version FROM raters r WHERE {is_kind(LLM)} AND EXISTS "
        "(SELECT 1 FROM bloom_labels b WHERE b.annotator_id = r.id) "
        "ORDER BY r.name, r.prompt_version").fetchall()


def _suggester_id(project: Project, suggester: str) -> int:
    for rid, name, version in project.conn.execute(
            f"SELECT r.id, r.name, r.prompt_version FROM raters r WHERE {is_kind(LLM)}"):
        if rater_label(name, version) == suggester:
            return int(rid)
    raise ValueError(f"no model {suggester!r} has Bloom labels in this project")


def queue(project: Project, annotator: str, filter: str = "unlabelled",
          topic: str | None = None) -> list[str]:
    """The question ids a session walks, ordered by id.

    ``"unlabelled"``: the annotator has no complete label yet; ``"all"``: every question;
    ``"disagreements"``: two or more people gave complete labels that differ on either
    dimension and nobody has adjudicated the question. ``topic`` narrows to one topic.
    """
    if filter not in FILTERS:
        raise ValueError(f"a Bloom queue is one of {', '.join(FILTERS)}, not {filter!r}")
    conditions, params = [], []
    if filter == "unlabelled":
        conditions.append(
            "NOT EXISTS (SELECT 1 FROM bloom_labels b JOIN raters r ON r.id = b.annotator_id "
            f"WHERE b.question_id = q.id AND {is_named_person()} AND {_COMPLETE})")
        params.append(annotator)
    elif filter == "disagreements":
        conditions.append(
            "NOT EXISTS (SELECT 1 FROM bloom_adjudications a WHERE a.question_id = q.id) AND "
            "(SELECT count(DISTINCT b.cognitive || char(31) || b.knowledge) FROM bloom_labels b "
            "JOIN raters r ON r.id = b.annotator_id WHERE b.question_id = q.id AND "
            f"{is_person()} AND {_COMPLETE}) > 1")
    if topic is not None:
        conditions.append("q.topic = ?")
        params.append(topic)
    where = " AND ".join(conditions) or "1"
    return [qid for (qid,) in project.conn.execute(
        f"SELECT q.id FROM questions q WHERE {where} ORDER BY q.id", params)]


def item(project: Project, question_id: str, annotator: str, suggester: str | None) -> BloomItem:
    """What the session shows for one question: the question, the annotator's label, the
    suggester's (a label from :func:`suggesters`; None for no suggestion), the other people's
    labels and the final label."""
    conn = project.conn
    row = conn.execute(
        "SELECT q.kind, q.topic, q.question, q.options, q.bloom_cognitive, q.bloom_knowledge, "
        "EXISTS (SELECT 1 FROM bloom_adjudications a WHERE a.question_id = q.id) "
        "FROM questions q WHERE q.id = ?", (question_id,)).fetchone()
    if row is None:
        raise ValueError(f"no question {question_id!r} in this project")
    kind, topic, text, options, final_cognitive, final_knowledge, adjudicated = row
    mine, others = None, {}
    for name, cognitive, knowledge in conn.execute(
            "SELECT r.name, b.cognitive, b.knowledge FROM bloom_labels b JOIN raters r ON "
            f"r.id = b.annotator_id WHERE b.question_id = ? AND {is_person()} "
            "ORDER BY r.name", (question_id,)):
        if name == annotator:
            mine = Label(cognitive, knowledge)
        else:
            others[name] = Label(cognitive, knowledge)
    suggestion, rationale = None, None
    if suggester is not None:
        found = conn.execute(
            "SELECT cognitive, knowledge, extra FROM bloom_labels WHERE question_id = ? AND "
            "annotator_id = ?", (question_id, _suggester_id(project, suggester))).fetchone()
        if found is not None:
            suggestion = Label(found[0], found[1])
            rationale = _rationale(found[2])
    final = (Label(final_cognitive, final_knowledge)
             if final_cognitive is not None or final_knowledge is not None else None)
    return BloomItem(question_id, kind, topic, text, json.loads(options) if options else None,
                     mine, suggestion, rationale, others, final, bool(adjudicated))


def _rationale(extra: str | None) -> str | None:
    if not extra:
        return None
    try:
        value = json.loads(extra).get("rationale")
    except (ValueError, AttributeError):
        return None
    return str(value) if value else None


def topics(project: Project) -> list[str]:
    """The topics of the project's questions, in the vocabulary's order."""
    return in_vocabulary_order((t for (t,) in project.conn.execute(
        "SELECT DISTINCT topic FROM questions WHERE topic IS NOT NULL")), TOPICS)


def labelled_count(project: Project, annotator: str) -> int:
    """How many questions the annotator has labelled completely."""
    return project.conn.execute(
        "SELECT count(*) FROM bloom_labels b JOIN raters r ON r.id = b.annotator_id WHERE "
        f"{is_named_person()} AND {_COMPLETE}",
        (annotator,)).fetchone()[0]
