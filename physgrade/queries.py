"""Read models of a project: what the command line, the app and reports show.

Nothing here writes. Every function answers from indexed queries so that it stays fast on a
project of the real size (58,000 responses, 8 criteria each).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from physgrade.images import CheckedImage, images_of
from physgrade.project import Project
from physgrade.raters import is_person
from physgrade.rubric import GRADED_RUBRICS
from physgrade.selection import NONE
from physgrade.template import ParsedSolution, from_stored

#: Tables counted by :func:`project_info`, with the names users see.
COUNTED = {"questions": "questions", "responses": "responses", "raters": "raters",
           "assessments": "verdicts and grades", "scores": "criterion scores",
           "judge_reviews": "judge reviews", "bloom_labels": "Bloom labels",
           "imports": "imports"}


@dataclass(frozen=True, slots=True)
class RaterInfo:
    name: str
    kind: str
    prompt_version: str
    responses: int   # responses scored
    questions: int   # questions given Bloom labels
    run: str = ""    # a further run of a judge (see physgrade.raters.rater_label)


@dataclass(frozen=True, slots=True)
class ProjectInfo:
    path: str
    schema_version: int
    counts: dict[str, int]
    models: dict[str, int]
    compliant_by_model: dict[str, int]
    topics: dict[str, int]
    raters: list[RaterInfo]
    compliant_responses: int
    graded_responses: int
    candidate_pairs: int   # near-duplicate pairs the audits stored
    decided_pairs: int     # of those, confirmed or rejected by a reviewer

    @property
    def graded_share(self) -> float:
        """Share of responses that at least one person has graded on every criterion."""
        total = self.counts["responses"]
        return self.graded_responses / total if total else 0.0

    def as_dict(self) -> dict:
        data = asdict(self)
        data["graded_share"] = round(self.graded_share, 4)
        return data


def project_info(project: Project) -> ProjectInfo:
    """Counts per table, models, topics, raters, the graded share and the duplicate pairs
    decided."""
    conn = project.conn
    counts = {table: conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
              for table in COUNTED}
    per_model = conn.execute("SELECT model, COUNT(*), SUM(compliant) FROM responses "
                             "GROUP BY model ORDER BY model").fetchall()
    models = {model: count for model, count, _ in per_model}
    compliant_by_model = {model: compliant for model, _, compliant in per_model}
    topics = dict(conn.execute("SELECT coalesce(topic, ?), COUNT(*) FROM questions "
                               "GROUP BY topic ORDER BY topic", (NONE,)))
    raters = [RaterInfo(*row) for row in conn.execute(
        "SELECT r.name, r.kind, r.prompt_version, (SELECT COUNT(*) FROM assessments a "
        "WHERE a.rater_id = r.id), (SELECT COUNT(*) FROM bloom_labels b WHERE b.annotator_id = "
        "r.id), r.run FROM raters r ORDER BY r.kind, r.name, r.prompt_version, r.run")]
    candidate_pairs, decided_pairs = conn.execute(
        "SELECT COUNT(*), COUNT(decision) FROM duplicate_pairs").fetchone()
    return ProjectInfo(str(project.path), project.schema_version, counts, models,
                       compliant_by_model, topics, raters, sum(compliant_by_model.values()),
                       graded_responses(project), candidate_pairs, decided_pairs)


def finished_sql(raters: str) -> str:
    """A query of (rater_id, response_id) for each finished grade of the raters the SQL
    ``raters`` selects: a response scored on every criterion of its rubric.

    The one rule of "graded" for the project's counts and each grader's progress. A response
    is scored under its question kind's rubric, so the rubric's key and size tell without
    reading the question; the first study's coarse verdicts are no grade
    (:data:`~physgrade.rubric.GRADED_RUBRICS`), as the grading queue sees them too.
    """
    sizes = " ".join(f"WHEN '{r.key}' THEN {len(r.criteria)}" for r in GRADED_RUBRICS)
    # Raters first: the scores' key starts with the rater, so only their rows are read
    # (judges' verdicts are most of the table).
    return (f"SELECT s.rater_id, s.response_id FROM scores s WHERE s.rater_id IN ({raters}) "
            "GROUP BY s.rater_id, s.response_id, s.rubric "
            f"HAVING COUNT(*) = CASE s.rubric {sizes} END")


def graded_sql() -> str:
    """The responses some person has finished grading (:func:`finished_sql`), as a query."""
    people = f"SELECT r.id FROM raters r WHERE {is_person()}"
    return f"SELECT DISTINCT response_id FROM ({finished_sql(people)})"


def graded_responses(project: Project) -> int:
    """Responses that some person has scored on every criterion of their rubric."""
    return project.conn.execute(f"SELECT COUNT(*) FROM ({graded_sql()})").fetchone()[0]


@dataclass(frozen=True, slots=True)
class QuestionRow:
    """One line of the question list."""

    id: str
    kind: str
    topic: str | None
    bloom_cognitive: str | None
    bloom_knowledge: str | None
    variant_of: str | None
    region: str | None
    responses: int
    graded: int  # responses some person has graded in full
    preview: str


def question_rows(project: Project) -> list[QuestionRow]:
    """Every question with its counts of responses and of graded responses, in id order.

    The graded responses are counted from the few people's grades towards their questions (a
    key lookup each), never by reading every response row: 30 ms on 58,000 responses."""
    return [QuestionRow(*row) for row in project.conn.execute(
        "SELECT q.id, q.kind, q.topic, q.bloom_cognitive, q.bloom_knowledge, q.variant_of, "
        "q.region, (SELECT COUNT(*) FROM responses r WHERE r.question_id = q.id), "
        "coalesce(g.done, 0), substr(q.question, 1, 160) FROM questions q LEFT JOIN "
        f"(SELECT r.question_id, COUNT(*) AS done FROM ({graded_sql()}) d JOIN responses r "
        "ON r.id = d.response_id GROUP BY r.question_id) g ON g.question_id = q.id ORDER BY q.id")]


@dataclass(frozen=True, slots=True)
class ResponseSummary:
    """A model's response with the template parts found in it."""

    id: str
    model: str
    compliant: bool
    text: str
    sections: ParsedSolution
    images: tuple[CheckedImage, ...] = ()


@dataclass(frozen=True, slots=True)
class Question:
    """A question with everything needed to read it: options, answer, reference parts."""

    id: str
    kind: str
    topic: str | None
    question: str
    options: dict[str, str] | None
    answer: str | None
    unit: str | None
    reference_solution: str | None
    reference_sections: ParsedSolution | None
    bloom_cognitive: str | None
    bloom_knowledge: str | None
    variant_of: str | None
    region: str | None
    #: The figures of the statement and of the reference solution, in order.
    images: tuple[CheckedImage, ...] = ()
    reference_images: tuple[CheckedImage, ...] = ()

    @property
    def multiple_choice(self) -> bool:
        return self.options is not None


@dataclass(frozen=True, slots=True)
class QuestionDetail:
    """A question and all its responses (the question list's reading pane)."""

    question: Question
    responses: list[ResponseSummary]


def question(project: Project, question_id: str) -> Question | None:
    """One question, or None if the project has no such question."""
    row = project.conn.execute(
        "SELECT id, kind, topic, question, options, answer, unit, reference_solution, "
        "reference_sections, bloom_cognitive, bloom_knowledge, variant_of, region "
        "FROM questions WHERE id = ?", (question_id,)).fetchone()
    if row is None:
        return None
    (qid, kind, topic, text, options, answer, unit, reference, sections, cognitive, knowledge,
     variant_of, region) = row
    return Question(qid, kind, topic, text, json.loads(options) if options else None, answer,
                    unit, reference, from_stored(reference, sections) if sections else None,
                    cognitive, knowledge, variant_of, region,
                    tuple(images_of(project.conn, "question", qid)),
                    tuple(images_of(project.conn, "reference", qid)))


def question_detail(project: Project, question_id: str) -> QuestionDetail | None:
    """One question and its responses, or None if the project has no such question."""
    found = question(project, question_id)
    if found is None:
        return None
    responses = [ResponseSummary(rid, model, bool(compliant), text,
                                 from_stored(text, sections),
                                 tuple(images_of(project.conn, "response", rid)))
                 for rid, model, compliant, text, sections in project.conn.execute(
                     "SELECT id, model, compliant, response, sections FROM responses "
                     "WHERE question_id = ? ORDER BY model, id", (question_id,))]
    return QuestionDetail(found, responses)
