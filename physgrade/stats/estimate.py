"""A statistic as physgrade reports it: value, 95% confidence interval, sample size, and why not."""

from __future__ import annotations

import math
from dataclasses import dataclass

#: Why an agreement coefficient of items that all agree has no interval (its analytic variance or
#: bootstrap is then 0); :meth:`Estimate.text` marks it with its n.
ALL_AGREE = "every item agrees, so the formula gives an interval of no width, which is not certainty"


@dataclass(frozen=True, slots=True)
class Estimate:
    """A statistic with its sample size and 95% confidence interval; value None means it
    cannot be computed, and ``reason`` says why (never report such a case as 0)."""

    value: float | None
    ci95: tuple[float, float] | None
    n: int
    reason: str | None = None

    def __post_init__(self) -> None:
        # Plain floats (not numpy scalars) so that JSON and equality behave; NaN is a bug, not a result.
        if self.value is None:
            if self.ci95 is not None or not self.reason:
                raise ValueError("an unavailable estimate has no interval and must say why")
        elif not math.isfinite(self.value):
            raise ValueError(f"estimate value {self.value!r} is not finite; use Estimate.unavailable")
        object.__setattr__(self, "value", None if self.value is None else float(self.value))
        if self.ci95 is not None:
            low, high = (float(bound) for bound in self.ci95)
            if not (math.isfinite(low) and math.isfinite(high)):
                raise ValueError(f"confidence interval {self.ci95!r} is not finite")
            object.__setattr__(self, "ci95", (low, high))
        object.__setattr__(self, "n", int(self.n))

    @classmethod
    def unavailable(cls, n: int, reason: str) -> Estimate:
        return cls(None, None, n, reason)

    def within(self, low: float, high: float) -> Estimate:
        """This estimate cut to ``low``..``high``, the range the true value cannot leave (a
        share: 0..1). Cutting a normal interval there keeps its coverage and spares readers a
        109% share."""
        if self.value is None:
            return self
        interval = None if self.ci95 is None else (max(self.ci95[0], low),
                                                   min(self.ci95[1], high))
        return Estimate(min(max(self.value, low), high), interval, self.n, self.reason)

    def as_dict(self) -> dict:
        return {"value": self.value, "ci95": list(self.ci95) if self.ci95 else None, "n": self.n,
                "reason": self.reason}

    def text(self, digits: int = 3, percent: bool = False) -> str:
        """``0.743 [0.612, 0.874]``, ``84.7% [80.1, 88.6]``, ``n/a (only one category)``,
        ``1.000 (all agree, n = 5)`` for a coefficient of items that all agree (:data:`ALL_AGREE`:
        its n is what a reader needs to weigh it), or ``1.000 (no interval)`` for another value
        whose interval could not be computed (the reason why is in :attr:`reason`: tables show
        it on demand, not in the column)."""
        if self.value is None:
            return f"n/a ({self.reason})"
        scale, unit = (100.0, "%") if percent else (1.0, "")
        places = max(digits - 2, 0) if percent else digits  # 0.847 and 84.7% say as much
        shown = f"{self.value * scale:.{places}f}{unit}"
        if self.reason == ALL_AGREE:
            return f"{shown} (all agree, n = {self.n:,})"
        if self.ci95 is None:
            return f"{shown} (no interval)" if self.reason else shown
        low, high = (f"{bound * scale:.{places}f}" for bound in self.ci95)
        return f"{shown} [{low}, {high}]"
