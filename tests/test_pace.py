"""A grader's pace: finished responses, and a rate over working time only."""

from __future__ import annotations

from physgrade.pace import IDLE_CAP_S, Pace


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_rate_counts_finished_responses_per_working_hour() -> None:
    clock = Clock()
    pace = Pace(clock)
    assert pace.text() == "Session: 0"
    for response in ("r-1", "r-2", "r-3", "r-4", "r-5"):
        for _ in range(8):  # eight criteria, 15 s apart
            clock.now += 15
            pace.acted()
        pace.finish(response)
    # the first action starts the clock: 39 gaps of 15 s are worked
    assert pace.count == 5
    assert pace.per_hour == 5 * 3600 / (39 * 15)
    assert pace.text() == "Session: 5 · 31/h"


def test_a_break_counts_as_a_short_pause_only() -> None:
    clock = Clock()
    pace = Pace(clock)
    pace.acted()
    pace.finish("r-1")
    clock.now += 60
    pace.acted()
    clock.now += 3 * 3600  # lunch
    pace.acted()
    pace.finish("r-2")
    assert pace.working_s == 60 + IDLE_CAP_S


def test_fewer_than_five_responses_give_no_rate_and_an_undo_reopens() -> None:
    """Two responses scored in a minute are no pace: they read as 120 an hour."""
    clock = Clock()
    pace = Pace(clock)
    pace.acted()
    clock.now += 60
    pace.acted()
    for response in ("r-1", "r-2", "r-3", "r-4"):
        pace.finish(response)
        assert pace.per_hour is None and pace.text() == f"Session: {pace.count}"
    pace.finish("r-5")
    assert pace.per_hour == 5 * 60.0
    pace.reopen("r-5")
    assert pace.count == 4 and pace.per_hour is None
