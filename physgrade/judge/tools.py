"""The tools a judge must answer through, built from the rubric, and the checks of its answers.

Forcing a tool call makes the model fill in a JSON schema instead of writing prose; the schema
already carries each criterion's range, and :func:`read_scores` checks the answer against the
rubric anyway, because a schema is advice to the model, not a guarantee. A verdict may also name
the response's first wrong step and its category (:class:`StepQuestion`); an answer naming a step
the response does not have, or a category the taxonomy does not have, does not fit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from physgrade.rubric import Rubric, ScoreError
from physgrade.taxonomies import Taxonomy
from physgrade.taxonomy import BLOOM_COGNITIVE, BLOOM_KNOWLEDGE

SCORE_TOOL = "record_scores"
BLOOM_TOOL = "record_bloom"
DUPLICATE_TOOL = "record_duplicate"
DUPLICATE_LABELS = ("close_duplicate", "same_topic")
#: The fields of ``record_scores`` that say where the reasoning first goes wrong.
FIRST_WRONG, CATEGORY = "first_wrong_step", "error_category"
#: How a request marks where step n of the response begins: the number ``first_wrong_step``
#: answers with (brackets the response itself writes are shown as plain ones).
STEP_MARK = "\u27e6{}\u27e7"


class InvalidOutput(ValueError):
    """A model answer that does not fit the tool; the message says what to fix."""


@dataclass(frozen=True, slots=True)
class StepQuestion:
    """What a verdict request asks about the response's steps: how many it has (numbered as
    :mod:`physgrade.steps` numbers them) and the taxonomy the error's category comes from."""

    steps: int
    taxonomy: Taxonomy


@dataclass(frozen=True, slots=True)
class Verdict:
    """A judge's scores (None: N/A), its rationale per criterion and an overall remark; where
    it was asked, the first wrong step (0: none) and that error's category in ``taxonomy``."""

    scores: dict[str, int | None]
    rationale: dict[str, str]
    comment: str | None
    first_wrong: int | None = None
    taxonomy: str | None = None
    category: str | None = None


@dataclass(frozen=True, slots=True)
class BloomSuggestion:
    cognitive: str
    knowledge: str
    rationale: str | None


@dataclass(frozen=True, slots=True)
class DuplicateLabel:
    label: str
    rationale: str | None


def score_tool(rubric: Rubric, multiple_choice: bool,
               taxonomy: Taxonomy | None = None) -> dict[str, Any]:
    """The ``record_scores`` tool for one rubric: one integer and one rationale per criterion,
    and with a ``taxonomy`` the first wrong step and its category in it."""
    properties: dict[str, Any] = {}
    for criterion in rubric.criteria:
        allowed = criterion.allowed_values(multiple_choice)
        score: dict[str, Any] = {"type": ["integer", "null"] if criterion.allows_na else "integer"}
        if allowed != tuple(range(criterion.maximum + 1)):
            score["enum"] = [*allowed, None] if criterion.allows_na else list(allowed)
        else:
            score |= {"minimum": 0, "maximum": criterion.maximum}
        na = " null means not applicable." if criterion.allows_na else ""
        properties[criterion.key] = {
            "type": "object",
            "description": f"{criterion.name}: {criterion.help}{na}",
            "properties": {"score": score,
                           "rationale": {"type": "string",
                                         "description": "One or two sentences; name the error "
                                                        "when points are withheld."}},
            "required": ["score", "rationale"],
        }
    required = list(rubric.keys)
    if taxonomy is not None:
        properties[FIRST_WRONG] = {
            "type": "integer", "minimum": 0,
            "description": f"The number n of the first wrong step, as marked "
                           f"{STEP_MARK.format('n')} in the response; 0 when every step is "
                           "right."}
        properties[CATEGORY] = {
            "type": ["string", "null"], "enum": [*taxonomy.keys, None],
            "description": "The kind of error the first wrong step makes, one of the "
                           "categories the user message lists; null when first_wrong_step "
                           "is 0."}
        required += [FIRST_WRONG, CATEGORY]
    properties["comment"] = {"type": "string", "description": "Optional overall remark."}
    return {"name": SCORE_TOOL,
            "description": f"Record the {rubric.title} score of every criterion of the response.",
            "input_schema": {"type": "object", "properties": properties,
                             "required": required}}


def read_scores(rubric: Rubric, multiple_choice: bool, answer: object,
                asked: StepQuestion | None = None) -> Verdict:
    """The verdict in a ``record_scores`` input, checked against the rubric (and, when the
    request ``asked`` for it, the first wrong step against the response's steps)."""
    if not isinstance(answer, dict):
        raise InvalidOutput(f"the answer must be an object with {', '.join(rubric.keys)}")
    fields = {"comment", FIRST_WRONG, CATEGORY} if asked else {"comment"}
    unknown = sorted(set(answer) - set(rubric.keys) - fields)
    if unknown:
        raise InvalidOutput(f"{', '.join(unknown)} not in the {rubric.title} rubric "
                            f"({', '.join(rubric.keys)})")
    scores: dict[str, int | None] = {}
    rationale: dict[str, str] = {}
    for key in rubric.keys:
        if key not in answer:
            raise InvalidOutput(f"criterion {key} is missing")
        entry = answer[key]
        if not isinstance(entry, dict) or "score" not in entry:
            raise InvalidOutput(f"{key} must be an object with a score and a rationale")
        try:
            scores[key] = rubric.validate_one(key, entry["score"], multiple_choice)
        except ScoreError as exc:
            raise InvalidOutput(str(exc)) from None
        text = entry.get("rationale")
        if isinstance(text, str) and text.strip():
            rationale[key] = text.strip()
    comment = answer.get("comment")
    first_wrong, category = _first_wrong(answer, asked) if asked else (None, None)
    return Verdict(scores, rationale,
                   comment.strip() if isinstance(comment, str) and comment.strip() else None,
                   first_wrong, asked.taxonomy.name if asked and category else None, category)


def _first_wrong(answer: dict, asked: StepQuestion) -> tuple[int, str | None]:
    """The first wrong step and its category: a step the response does not have, or a category
    the taxonomy does not have, does not fit. No wrong step has no category (one given anyway
    is dropped); a wrong step may go without one."""
    step = answer.get(FIRST_WRONG)
    if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= asked.steps:
        steps = f"from 1 to {asked.steps}" if asked.steps > 1 else \
            ("1" if asked.steps else "none: the response has no steps")
        raise InvalidOutput(f"{FIRST_WRONG} must be 0 (no wrong step) or a step of the "
                            f"response ({steps}), not {step!r}")
    category = answer.get(CATEGORY)
    if category is not None and category not in asked.taxonomy.keys:
        raise InvalidOutput(f"{CATEGORY} must be one of {', '.join(asked.taxonomy.keys)} or "
                            f"null, not {category!r}")
    return step, category if step else None


def bloom_tool() -> dict[str, Any]:
    """The ``record_bloom`` tool: one cognitive level and one knowledge type."""
    return {"name": BLOOM_TOOL,
            "description": "Record the Bloom's taxonomy classification of the question.",
            "input_schema": {"type": "object", "properties": {
                "cognitive": {"type": "string", "enum": list(BLOOM_COGNITIVE)},
                "knowledge": {"type": "string", "enum": list(BLOOM_KNOWLEDGE)},
                "rationale": {"type": "string", "description": "One or two sentences."}},
                "required": ["cognitive", "knowledge", "rationale"]}}


def read_bloom(answer: object) -> BloomSuggestion:
    """The labels in a ``record_bloom`` input, checked against the vocabularies."""
    if not isinstance(answer, dict):
        raise InvalidOutput("the answer must be an object with cognitive and knowledge")
    found: dict[str, str] = {}
    for field, vocabulary in (("cognitive", BLOOM_COGNITIVE), ("knowledge", BLOOM_KNOWLEDGE)):
        value = answer.get(field)
        if not isinstance(value, str) or value not in vocabulary:
            raise InvalidOutput(f"{field} must be one of {', '.join(vocabulary)}, not {value!r}")
        found[field] = value
    rationale = answer.get("rationale")
    return BloomSuggestion(found["cognitive"], found["knowledge"],
                           rationale.strip() if isinstance(rationale, str) and rationale.strip()
                           else None)


def duplicate_tool() -> dict[str, Any]:
    """The ``record_duplicate`` tool: is a candidate pair one problem or two?"""
    return {"name": DUPLICATE_TOOL,
            "description": "Record whether the two problems are the same problem.",
            "input_schema": {"type": "object", "properties": {
                "label": {"type": "string", "enum": list(DUPLICATE_LABELS)},
                "rationale": {"type": "string", "description": "One or two sentences."}},
                "required": ["label", "rationale"]}}


def read_duplicate(answer: object) -> DuplicateLabel:
    """The label in a ``record_duplicate`` input, checked against the two allowed."""
    answer = answer if isinstance(answer, dict) else {}
    label = answer.get("label")
    if label not in DUPLICATE_LABELS:
        raise InvalidOutput(f"label must be one of {', '.join(DUPLICATE_LABELS)}, not {label!r}")
    rationale = answer.get("rationale")
    return DuplicateLabel(label, rationale.strip() if isinstance(rationale, str)
                          and rationale.strip() else None)
