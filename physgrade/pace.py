"""A grader's pace in one sitting: how many responses they finished, and how fast.

Graders plan their hours by it, so a coffee break must not drag the rate down: time counts
only between consecutive grading actions, each gap capped at :data:`IDLE_CAP_S`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

#: a longer gap between two grading actions is a pause; it counts as this many seconds
IDLE_CAP_S = 300.0
#: the rate is shown once this many responses are finished: from fewer it says nothing (two
#: quick ones read as 1,409 an hour, the reading before the first score not counted)
RATE_AFTER = 5


@dataclass
class Pace:
    """The responses finished since the session began, and the working time spent on them."""

    clock: Callable[[], float] = time.monotonic
    finished: set[str] = field(default_factory=set)
    working_s: float = 0.0
    _last_action: float | None = None

    def acted(self) -> None:
        """A grading action (a score, a note, an undo): the time since the last one counts."""
        now = self.clock()
        if self._last_action is not None:
            self.working_s += min(now - self._last_action, IDLE_CAP_S)
        self._last_action = now

    def finish(self, response_id: str) -> None:
        """``response_id`` has every criterion scored now."""
        self.finished.add(response_id)

    def reopen(self, response_id: str) -> None:
        """A score of ``response_id`` was taken back: it is no longer finished."""
        self.finished.discard(response_id)

    @property
    def count(self) -> int:
        return len(self.finished)

    @property
    def per_hour(self) -> float | None:
        """Responses finished per working hour, or None until there is enough to tell."""
        if self.count < RATE_AFTER or self.working_s <= 0:
            return None
        return self.count * 3600.0 / self.working_s

    def text(self) -> str:
        """e.g. "Session: 12 · 41/h"."""
        rate = self.per_hour
        return f"Session: {self.count:,}" + (f" · {rate:,.0f}/h" if rate is not None else "")
