"""The rubrics as data: the one place that knows criteria, their ranges and how they add up.

Every score written anywhere (imports, the grading panel, judges) is checked by
:func:`Rubric.validate`, so nothing out of range reaches a project.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

#: The key of the final-answer criterion, the one every graded rubric ends with.
FINAL_ANSWER = "ANS"
#: How "does not apply" is written wherever a criterion's value is text (files, buttons, levels).
NA = "N/A"


def value_text(value: int | None) -> str:
    """A criterion's value as text: the number, or N/A for None."""
    return NA if value is None else str(value)


@dataclass(frozen=True, slots=True)
class Criterion:
    key: str
    name: str
    stage: str
    maximum: int
    help: str
    allows_na: bool = False

    def allowed_values(self, multiple_choice: bool = False) -> tuple[int, ...]:
        """The values a grader may give; a multiple-choice final answer is all or nothing."""
        if multiple_choice and self.key == FINAL_ANSWER:
            return (0, self.maximum)
        return tuple(range(self.maximum + 1))

    def choices(self, multiple_choice: bool = False) -> tuple[int | None, ...]:
        """The allowed values and, where the criterion may not apply, N/A (None) last."""
        return self.allowed_values(multiple_choice) + ((None,) if self.allows_na else ())


class ScoreError(ValueError):
    """A score that the rubric does not allow; ``field`` names the offending key."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True, slots=True)
class Rubric:
    key: str
    title: str
    criteria: tuple[Criterion, ...]

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(c.key for c in self.criteria)

    @property
    def maximum(self) -> int:
        return sum(c.maximum for c in self.criteria)

    @property
    def stages(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.stage for c in self.criteria))

    def criterion(self, key: str) -> Criterion:
        for c in self.criteria:
            if c.key == key:
                return c
        raise ScoreError(key, f"{key!r} is not a criterion of the {self.title} rubric "
                              f"({', '.join(self.keys)})")

    def validate_one(self, key: str, value: object, multiple_choice: bool = False) -> int | None:
        """Check one criterion's value and return it as stored (None means N/A)."""
        criterion = self.criterion(key)
        if value is None:
            if criterion.allows_na:
                return None
            raise ScoreError(key, f"{key} ({criterion.name}) has no N/A; give one of "
                                  f"{_values_text(criterion.allowed_values(multiple_choice))}")
        if isinstance(value, str) and value.strip().upper() in {NA, "NA"} and criterion.allows_na:
            return None
        number = _whole_number(value)
        if number is None:
            raise ScoreError(key, f"{key} must be a whole number, not {_shown(value)}")
        allowed = criterion.allowed_values(multiple_choice)
        if number not in allowed:
            why = " (multiple choice: all or nothing)" if multiple_choice and key == FINAL_ANSWER else ""
            raise ScoreError(key, f"{key} = {_shown(value)} is outside the rubric: "
                                  f"{criterion.name} takes {_values_text(allowed)}{why}")
        return number

    def validate(self, scores: Mapping[str, object], multiple_choice: bool = False,
                 complete: bool = True) -> dict[str, int | None]:
        """Check a set of scores; with ``complete`` every criterion must be present."""
        checked = {key: self.validate_one(key, value, multiple_choice)
                   for key, value in scores.items()}
        if complete:
            missing = [k for k in self.keys if k not in checked]
            if missing:
                raise ScoreError(missing[0], f"missing criteria of the {self.title} rubric: "
                                             f"{', '.join(missing)}")
        return checked

    def total(self, scores: Mapping[str, int | None]) -> tuple[int, int]:
        """Points earned and points possible; an N/A criterion leaves the maximum."""
        earned = sum(v for v in scores.values() if v is not None)
        possible = sum(c.maximum for c in self.criteria
                       if c.key in scores and scores[c.key] is not None)
        return earned, possible

    def out_of(self, scores: Mapping[str, int | None]) -> int:
        """The points a response can still reach: the maximum less the criteria marked N/A.

        Unlike :meth:`total`'s possible points it counts criteria not scored yet, so a partly
        scored response reads as a running total ("4 / 10").
        """
        return self.maximum - sum(c.maximum for c in self.criteria
                                  if c.key in scores and scores[c.key] is None)

    def errors(self, scores: Mapping[str, int | None]) -> list[str]:
        """The error categories a set of scores implies: criteria below their maximum."""
        return [c.key for c in self.criteria
                if (score := scores.get(c.key)) is not None and score < c.maximum]


def _whole_number(value: object) -> int | None:
    """The whole number ``value`` is or spells (``2``, ``2.0``, ``"2"``), or None. A number of
    any length is read as one (as a float, 400 digits would be infinity); one too long for
    Python to convert is cut to its first digits, which are still far outside every rubric."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.strip()
        if text.lstrip("+-").isdigit():
            return int(text[:_SHOWN_LENGTH])
        try:
            value = float(text)
        except ValueError:
            return None
    return int(value) if math.isfinite(value) and value.is_integer() else None


#: The longest value a message quotes whole.
_SHOWN_LENGTH = 24


def _shown(value: object) -> str:
    """A value as a message quotes it (text in quotes, a number as it is), a long one (a pasted
    paragraph, 400 digits) cut short."""
    text = value.strip() if isinstance(value, str) else repr(value)
    digits = text.lstrip("+-").isdigit()
    if len(text) > _SHOWN_LENGTH:
        if digits:
            return f"a number of {len(text.lstrip('+-')):,} digits"
        return f"{text[:_SHOWN_LENGTH - 1]!r}… ({len(text):,} characters)"
    return text if digits or not isinstance(value, str) else repr(value)


def _values_text(values: tuple[int, ...]) -> str:
    if len(values) > 2 and values == tuple(range(values[0], values[-1] + 1)):
        return f"{values[0]}-{values[-1]}"
    return " or ".join(str(v) for v in values)


PREFS = Rubric("prefs", "P-REFS", (
    Criterion("INT", "Interpretation", "Problem formulation", 1,
              "Givens, constraints and the unknown are read correctly."),
    Criterion("MOD", "Modeling", "Problem formulation", 1,
              "The approach and assumptions suit the physical situation."),
    Criterion("CON", "Concept choice", "Step-by-step solution", 1,
              "The physics principle invoked is the one the problem needs."),
    Criterion("APP", "Concept application", "Step-by-step solution", 1,
              "The principle is used correctly: right formula, quantities in the right roles."),
    Criterion("CAL", "Calculation", "Step-by-step solution", 1,
              "Arithmetic and algebra are carried out without slips."),
    Criterion("COR", "Units and consistency", "Step-by-step solution", 2,
              "Intermediate values and units stay physically consistent throughout."),
    Criterion("COH", "Coherence", "Step-by-step solution", 1,
              "Each step follows from the last, with no leaps or contradictions."),
    Criterion(FINAL_ANSWER, "Final answer", "Final answer", 2,
              "The final value and unit are right and complete (multiple choice: the exact option)."),
))

CONCEPTUAL = Rubric("conceptual", "conceptual", (
    Criterion("SET", "Setup", "Setup", 1,
              "The given information, approach and assumptions are identified."),
    Criterion("CON", "Concepts", "Reasoning", 1,
              "The right physical principles are brought to bear."),
    Criterion("EXE", "Execution", "Reasoning", 1,
              "Formulas, calculations and units are right; N/A when there is nothing to compute.",
              allows_na=True),
    Criterion("COH", "Coherence", "Reasoning", 1,
              "The explanation hangs together without gaps or contradictions."),
    Criterion(FINAL_ANSWER, "Final answer", "Final answer", 1,
              "Exactly the right option; several or ambiguous options score 0."),
))

COARSE = Rubric("coarse", "coarse (first study)", (
    Criterion("answer", "Answer", "Verdict", 1, "1 correct, 0 wrong."),
    Criterion("reasoning", "Reasoning", "Verdict", 2, "2 fully, 1 partially, 0 incorrect."),
    Criterion("calculations", "Calculations", "Verdict", 2,
              "2 none needed, 1 correct, 0 incorrect."),
))

RUBRICS: dict[str, Rubric] = {r.key: r for r in (PREFS, CONCEPTUAL, COARSE)}
#: The rubrics questions are graded with (the first study's coarse verdicts are not grades).
GRADED_RUBRICS: tuple[Rubric, ...] = (PREFS, CONCEPTUAL)


def rubric_for_kind(kind: str) -> Rubric:
    """The rubric a question kind is graded with."""
    return CONCEPTUAL if kind == "conceptual" else PREFS


def detect_rubric(keys: set[str]) -> Rubric | None:
    """Which rubric a set of score keys belongs to, or None if it fits none.

    CON, COH and ANS are shared, so the keys unique to each rubric decide.
    """
    if keys & {"answer", "reasoning", "calculations"}:
        return COARSE
    if keys & {"SET", "EXE"}:
        return CONCEPTUAL
    if keys & {"INT", "MOD", "APP", "CAL", "COR"}:
        return PREFS
    return None
