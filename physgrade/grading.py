"""One grader's view of one response: what they read, what they gave, what others said.

The blind rule lives here, not in the app: other graders' scores and judge verdicts are
returned only once this grader has scored every criterion of the item.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from physgrade import step_marks
from physgrade.images import CheckedImage, images_of
from physgrade.levels import Levels, levels_of
from physgrade.project import Project
from physgrade.queries import Question, question
from physgrade.raters import is_grader, is_named_person
from physgrade.rubric import Rubric, rubric_for_kind
from physgrade.steps import response_steps
from physgrade.template import ParsedSolution, from_stored


@dataclass(frozen=True, slots=True)
class Given:
    """A score a rater gave one criterion; ``value`` None is N/A."""

    value: int | None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class GradingItem:
    """A response with its question, the rubric it is graded with (and what each of its levels
    means, as the project words it), and this grader's scores."""

    response_id: str
    model: str
    text: str
    sections: ParsedSolution
    compliant: bool
    question: Question
    rubric: Rubric
    mine: dict[str, Given] = field(default_factory=dict)
    levels: Levels = field(default_factory=dict)
    #: The response's own figures (a model may answer with a sketch), in order.
    images: tuple[CheckedImage, ...] = ()

    @property
    def complete(self) -> bool:
        """Every criterion has a value (N/A counts as given)."""
        return all(key in self.mine for key in self.rubric.keys)

    @property
    def values(self) -> dict[str, int | None]:
        return {key: given.value for key, given in self.mine.items()}


@dataclass(frozen=True, slots=True)
class OtherVerdict:
    """Another rater's scores of the same response (a judge, a rule checker or a colleague).

    ``notes`` holds, per criterion that has one, why the rater gave that value: a judge's
    rationale, the rule checker's reason, a colleague's note; ``comment`` is the overall one.
    """

    rater: str
    kind: str
    prompt_version: str
    scores: dict[str, int | None]
    comment: str | None
    notes: dict[str, str] = field(default_factory=dict)
    #: Where the rater says the reasoning breaks ("Step 3 · Calculation error", "No error"; ""
    #: where it says nothing), hidden as the scores are.
    step: str = ""

    def disagreements(self, mine: dict[str, int | None]) -> list[str]:
        """Criteria both scored, with different values."""
        return [key for key, value in self.scores.items() if key in mine and mine[key] != value]


def graders(project: Project) -> list[str]:
    """The people who have graded or labelled anything in the project, by name."""
    return [name for (name,) in project.conn.execute(
        f"SELECT r.name FROM raters r WHERE {is_grader()} "
        "ORDER BY r.name")]


def my_scores(project: Project, response_id: str, grader: str, rubric: Rubric) -> dict[str, Given]:
    """The scores ``grader`` has given ``response_id`` under ``rubric``, by criterion."""
    return {criterion: Given(value, note) for criterion, value, note in project.conn.execute(
        "SELECT s.criterion, s.value, s.note FROM scores s JOIN raters r ON r.id = s.rater_id "
        f"WHERE {is_named_person()} AND s.response_id = ? AND s.rubric = ?",
        (grader, response_id, rubric.key))}


def grading_item(project: Project, response_id: str, grader: str) -> GradingItem | None:
    """Everything the workbench shows of one response, or None if there is no such response."""
    row = project.conn.execute(
        "SELECT question_id, model, response, sections, compliant FROM responses WHERE id = ?",
        (response_id,)).fetchone()
    if row is None:
        return None
    question_id, model, text, sections, compliant = row
    asked = question(project, question_id)
    assert asked is not None, "responses.question_id references questions (id)"
    rubric = rubric_for_kind(asked.kind)
    return GradingItem(response_id, model, text, from_stored(text, sections), bool(compliant),
                       asked, rubric, my_scores(project, response_id, grader, rubric),
                       levels_of(project, rubric),
                       tuple(images_of(project.conn, "response", response_id)))


def compare(project: Project, item: GradingItem, grader: str) -> list[OtherVerdict] | None:
    """Every other rater's scores of the item, or None while the grader has not finished it.

    Returning None (not an empty list) keeps "hidden" apart from "nobody else scored it".
    """
    if not item.complete:
        return None
    order = {key: i for i, key in enumerate(item.rubric.keys)}
    rows = project.conn.execute(
        "SELECT r.id, r.name, r.kind, r.prompt_version, s.criterion, s.value, s.note, a.comment "
        "FROM scores s JOIN raters r ON r.id = s.rater_id "
        "LEFT JOIN assessments a ON a.rater_id = s.rater_id "
        "AND a.response_id = s.response_id AND a.rubric = s.rubric "
        "WHERE s.response_id = ? AND s.rubric = ? "
        f"AND NOT ({is_named_person()})",
        (item.response_id, item.rubric.key, grader)).fetchall()
    # Raters by kind, name and prompt version; each one's criteria in rubric order.
    rows.sort(key=lambda row: (row[2], row[1], row[3], order.get(row[4], len(order))))
    marks = step_marks.response_marks(project, item.response_id)
    steps = response_steps(item.text, item.sections)
    verdicts: dict[int, OtherVerdict] = {}
    for rater_id, name, kind, version, criterion, value, note, comment in rows:
        if rater_id not in verdicts:
            verdicts[rater_id] = OtherVerdict(name, kind, version, {}, comment, step=(
                step_marks.describe(project, steps, marks.get(rater_id))))
        verdict = verdicts[rater_id]
        verdict.scores[criterion] = value
        if note:
            verdict.notes[criterion] = note
    return list(verdicts.values())

