"""What a rule-based answer check concludes, and the settings it concludes it under."""

from __future__ import annotations

from dataclasses import dataclass
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
    """

    outcome: Outcome
    reason: str
    answer: str | None = None

    def to_json(self) -> dict[str, str]:
        return {"outcome": self.outcome.value, "reason": self.reason}


@dataclass(frozen=True)
class Settings:
    """How strict the rules are. The defaults follow the field's conventions (answer-checking.md).

    ``mantissa`` compares only the mantissas in scientific notation, as UGPhysics' rule stage does;
    it lets an order-of-magnitude error pass, so it is a compatibility mode that is off by default.
    """

    rtol: float = 0.02
    mantissa: bool = False
    probes: int = 20
    seed: int = 20250101

    def __post_init__(self) -> None:
        if not 0 <= self.rtol < 1:
            raise ValueError(f"relative tolerance must be at least 0 and below 1, not {self.rtol}")

    @property
    def label(self) -> str:
        """How these settings name the rules rater: "" for the defaults, else what differs."""
        parts = []
        if self.rtol != Settings.rtol:
            parts.append(f"rtol {self.rtol:g}")
        if self.mantissa:
            parts.append("mantissa")
        return ", ".join(parts)
