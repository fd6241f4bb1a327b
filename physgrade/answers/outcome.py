"""What a rule-based answer check concludes, and the settings it concludes it under."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Outcome(StrEnum):
    EQUIVALENT = "equivalent"
    NOT_EQUIVALENT = "not_equivalent"
    NO_ANSWER = "no_answer"        # the response states no final answer we can find
    UNPARSEABLE = "unparseable"    # an answer was found (or given) but cannot be read as maths
    NOT_CHECKED = "not_checked"    # read, but the rules cannot tell whether it matches; the reason says why
    TIMEOUT = "timeout"            # the check ran out of its time or memory budget


@dataclass(frozen=True)
class Check:
    """One verdict with a reason a person can read, e.g. "15.2 m/s vs 15.0 m/s: 1.3% within 2%".

    ``answer`` is the final answer found in the response (None if there was none), so the reader
    can see what the rules compared without searching the response for it.

    ``parts_right`` of ``parts_total`` are the reference's sub-answers (one per sub-question of
    a compound answer, else one) that the rules are sure the response got right, so that a
    problem's partial credit can be counted later without checking again. They are None where
    the check never reached the reference's parts (no answer found, the response unreadable);
    :meth:`parts` then counts the answer as one part. They are not part of a check's equality:
    they follow from the verdicts that the reason states.
    """

    outcome: Outcome
    reason: str
    answer: str | None = None
    parts_right: int | None = field(default=None, compare=False)
    parts_total: int | None = field(default=None, compare=False)

    def to_json(self) -> dict[str, str]:
        return {"outcome": self.outcome.value, "reason": self.reason}

    def parts(self) -> tuple[int, int]:
        """(right, total) sub-answers; see :func:`counted_parts`."""
        return counted_parts(self.outcome, self.parts_right, self.parts_total)


def counted_parts(outcome: str, right: int | None, total: int | None) -> tuple[int, int]:
    """How many of a reference's sub-answers a check found right, of how many: the recorded
    counts, or, for a check stored without them (before they were recorded, or one that never
    split the reference), one part, right if the answer is equivalent."""
    if total is None or right is None or total < 1:
        return (1 if outcome == Outcome.EQUIVALENT else 0), 1
    return min(max(right, 0), total), total


#: The relative tolerance for numbers unless a project sets another (``answer_tolerance`` in its
#: ``project_settings``): 1%, the number the judge prompt has always stated ("within 1 percent",
#: resources/prompts/prefs_criteria.md, which now takes it from the project's setting).
#:
#: Why 1% and not the rules' earlier 2%: a prompt version is a digest of the prompt's text as
#: loaded (:meth:`physgrade.judge.prompts.Prompts.version`), so writing 2% into the prompt would
#: have made every judge's next run a new prompt version, a new rater apart from its recorded
#: verdicts. At 1% the loaded text is the same byte for byte and every recorded version stays
#: current. The rules' verdicts stored before (made at 2% under the bare rater ``rules``) are
#: renamed ``rules [rtol 0.02]`` by migration 012, so each stored verdict still names the
#: tolerance it was made under, and ``rules`` now means 1%.
DEFAULT_RTOL = 0.01


@dataclass(frozen=True)
class Settings:
    """How strict the rules are. The defaults follow the field's conventions (answer-checking.md).

    ``mantissa`` compares only the mantissas in scientific notation, as UGPhysics' rule stage does;
    it lets an order-of-magnitude error pass, so it is a compatibility mode that is off by default.
    ``drop_constants`` removes physical constants (:mod:`physgrade.answers.constants`) from both
    sides of an expression or equation before comparing, as UGPhysics does for EX and EQ answers.
    ``preset`` names a set of these taken together (:data:`PRESETS`); the label then names it.
    """

    rtol: float = DEFAULT_RTOL
    mantissa: bool = False
    probes: int = 20
    seed: int = 20250101
    drop_constants: bool = False
    preset: str = ""

    def __post_init__(self) -> None:
        if not 0 <= self.rtol < 1:
            raise ValueError(f"relative tolerance must be at least 0 and below 1, not {self.rtol}")

    @property
    def label(self) -> str:
        """How these settings name the rules rater: "" for the defaults, else what differs
        ("rtol 0.05, mantissa"); a preset's name where the settings are the preset's."""
        if self.preset and PRESETS.get(self.preset) == self:
            return self.preset
        parts = []
        if self.rtol != DEFAULT_RTOL:
            parts.append(f"rtol {self.rtol:g}")
        if self.mantissa:
            parts.append("mantissa")
        if self.drop_constants:
            parts.append("constants removed")
        return ", ".join(parts)


#: UGPhysics' rule stage (MARJ, its §3.3 and appendix B.4), to reproduce that paper's numbers:
#: numbers compared by the mantissas of their scientific notation at a relative 1e-2, the
#: exponent ignored, and physical constants removed from expressions and equations. The
#: paper's convention, never the default: it lets an order-of-magnitude error pass (3000 matches
#: 3.02×10⁶) and cannot tell m c² from m. Stored as the rater ``rules [ugphysics]``.
UGPHYSICS = Settings(rtol=1e-2, mantissa=True, drop_constants=True, preset="ugphysics")
#: The presets ``--preset`` offers, by name.
PRESETS: dict[str, Settings] = {UGPHYSICS.preset: UGPHYSICS}
