"""Answer checks in real worker processes (physgrade.answers.sandbox.Checker).

One checker with two workers serves the module (start-up costs a few tenths of a second per
worker); tests that need another time limit or leave workers killed make their own.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from physgrade.answers import Outcome
from physgrade.answers.sandbox import Checker, Request
from physgrade.tasks import Cancelled, Task

#: Passes every parser guard (small numbers, shallow nesting) but keeps sympy integrating
#: numerically for well over a minute: 20 probes of a wildly oscillating integrand.
SLOW = Request(r"\int_0^{1} \sin(a/x^{9})^{98} dx", r"\int_0^{1} \sin(a/x^{9})^{99} dx", "EX")


#: How soon a hostile answer must be answered: the deadline (2 s) plus replacing the killed worker,
#: with room for a busy machine, still far below the minutes an unguarded check would take.
HOSTILE_WITHIN_S = 15


@pytest.fixture(scope="module")
def checker():
    with Checker(workers=2) as shared:
        warm = shared.check(Request("5", "5"))  # both workers are started by the first map
        assert warm.outcome == Outcome.EQUIVALENT, warm
        yield shared


def pids(checker: Checker) -> list[int]:
    return [worker.process.pid for worker in checker._workers]


def hostile(marker: Path) -> list[tuple[str, str]]:
    return [
        ("os.system", f"__import__('os').system('touch {marker}')"),
        ("power tower", "9**9**9**9"),
        ("factorial", "factorial(10**9)"),
        ("10,000 brackets", "(" * 10000 + "1" + ")" * 10000),
        ("600 brackets", "(" * 600 + "1" + ")" * 600),   # under the length limit: depth guard
        ("1 MB", "9" * 1_000_000),
        ("binomial", r"\binom{10^{6}}{5 \cdot 10^{5}}"),   # not guarded: ends by the deadline
    ]


@pytest.mark.parametrize("index", range(7), ids=[name for name, _ in hostile(Path("m"))])
def test_hostile_input_ends_fast_and_runs_nothing(checker, tmp_path, index):
    """Each hostile answer comes back unparseable (or timed out at the 2 s deadline, where an
    unguarded one would run for minutes or exhaust the memory) and runs no code."""
    marker = tmp_path / "pwned"
    _, pred = hostile(marker)[index]
    started = time.monotonic()
    result = checker.check(Request("5", pred))
    elapsed = time.monotonic() - started
    assert elapsed < HOSTILE_WITHIN_S, (elapsed, result)
    assert result.outcome in (Outcome.UNPARSEABLE, Outcome.TIMEOUT), result
    assert not marker.exists()
    # The worker survived (or was replaced): the next check is answered correctly.
    assert checker.check(Request("5", "5.05")).outcome == Outcome.EQUIVALENT


def test_huge_binomial_is_refused_by_the_parser():
    with Checker(workers=1, time_limit=0.5) as own:
        result = own.check(Request("5", r"\binom{10^{6}}{5 \cdot 10^{5}}"))
        assert result.outcome == Outcome.UNPARSEABLE, result


def test_hostile_reference_runs_nothing(checker, tmp_path):
    marker = tmp_path / "pwned"
    result = checker.check(Request(f"__import__('os').system('touch {marker}')", "5"))
    assert result.outcome == Outcome.UNPARSEABLE, result
    assert result.reason.startswith("reference answer:")
    assert not marker.exists()


def test_deadline_kills_a_slow_check_and_replaces_its_worker():
    """A check that passes the parser's guards but keeps sympy busy ends as timeout at the limit;
    its worker is killed and a fresh one answers the next check."""
    with Checker(workers=1, time_limit=1.0) as own:
        assert own.check(Request("5", "5")).outcome == Outcome.EQUIVALENT
        before = pids(own)
        started = time.monotonic()
        result = own.check(SLOW)
        elapsed = time.monotonic() - started
        assert result.outcome == Outcome.TIMEOUT, result
        assert "longer than 1 s" in result.reason
        assert 0.9 <= elapsed < 30, elapsed  # not before the limit, nor after the minutes SLOW takes
        assert pids(own) != before
        assert own._workers[0].process.is_alive()
        after = own.check(Request(r"\frac{m v^2}{2}", "0.5 m v^2"))
        assert after.outcome == Outcome.EQUIVALENT, after
        assert "equal at 20 random points" in after.reason


def test_tiny_time_limit_times_out_an_ordinary_check():
    """With a 50 ms budget even an ordinary expression check (20 probes) misses the deadline."""
    with Checker(workers=1, time_limit=0.05) as own:
        result = own.check(Request(r"\int_0^{1} \sin(1/x) dx", "0.504"))
        assert result.outcome == Outcome.TIMEOUT, result
        assert "longer than 0.05 s" in result.reason


def mixed(count: int) -> list[tuple[Request, Outcome]]:
    """Requests of every kind, alternating slow (probed expressions) and fast (numbers)."""
    kinds = [
        (lambda i: Request(f"{i + 1}.0 m/s", f"{i + 1} m/s"), Outcome.EQUIVALENT),
        (lambda i: Request(r"\frac{m v^2}{2}", f"{i + 1} m v^2"), Outcome.NOT_EQUIVALENT),
        (lambda i: Request(f"{i + 1}", f"{i + 1}.9"), Outcome.NOT_EQUIVALENT),
        (lambda i: Request(rf"\sqrt{{{i + 2} g h}}", rf"sqrt({i + 2}*g*h)"), Outcome.EQUIVALENT),
        (lambda i: Request("B", "ANSWER: B", "MC"), Outcome.EQUIVALENT),
        (lambda i: Request("True", "The statement is false.", "TF"), Outcome.NOT_EQUIVALENT),
        (lambda i: Request("5", f"__import__('os').system('echo {i}')"), Outcome.UNPARSEABLE),
        (lambda i: Request("15 m/s", "I have not found anything worth saying here, really, " * 5),
         Outcome.NO_ANSWER),
    ]
    return [(make(i), outcome) for i in range(count) for make, outcome in [kinds[i % len(kinds)]]]


@pytest.fixture
def patient_checker():
    """Two workers with a deadline far above any check here: a busy machine times nothing out."""
    with Checker(workers=2, time_limit=60) as own:
        yield own


def test_map_keeps_input_order_and_reports_progress(patient_checker):
    """Results come back in input order although they finish out of it: the second request, a
    numerical integral taking about half a second, holds one worker while the other runs on."""
    checker = patient_checker
    cases = mixed(50)
    cases.insert(1, (Request("0.504", r"\int_0^{1} \sin(1/x) dx"), Outcome.EQUIVALENT))
    seen: list[tuple[int, int | None, str]] = []
    results: list = []
    held: list[int] = []  # finished checks not yet handed out, at each report

    def progress(done, total, stage):
        seen.append((done, total, stage))
        held.append(done - len(results))

    task = Task(progress)
    for pair in checker.map((request for request, _ in cases), task, total=len(cases)):
        results.append(pair)
    assert max(held) >= 2, "no check finished out of order, so order was not tested"
    assert [request for request, _ in results] == [request for request, _ in cases]
    for (request, result), (_, expected) in zip(results, cases):
        assert result.outcome == expected, (request, result)
    # The reasons name each request's own numbers: results were not swapped between requests.
    assert results[1][1].reason.startswith("0.5039 vs 0.504:")
    assert results[9][1].reason == "9 m/s vs 9.0 m/s: equal"
    assert results[11][1].reason.startswith("11.9 vs 11:")
    assert seen, "no progress was reported"
    assert [done for done, _, _ in seen] == sorted(done for done, _, _ in seen)
    assert seen[-1][0] == len(cases) == 51
    assert {total for _, total, _ in seen} == {len(cases)}
    assert {stage for _, _, stage in seen} == {"Checking answers"}


def test_cancelling_from_progress_raises_and_leaves_the_checker_usable(checker):
    cases = mixed(40)
    got = []
    task = Task(lambda done, total, stage: task.cancel() if done >= 3 else None)
    with pytest.raises(Cancelled):
        for request, result in checker.map((request for request, _ in cases), task, len(cases)):
            got.append((request, result))
    # Cancelling stops at once: no more results were handed out than had arrived when it was
    # asked for (3, or 4 when both workers answered together). Fewer may have been, since
    # results come out in order and a slow early check holds the later ones back.
    assert len(got) <= 4
    assert [request for request, _ in got] == [request for request, _ in cases[:len(got)]]
    after = checker.check(Request("15.0 m/s", "54 km/h"))
    assert after.outcome == Outcome.EQUIVALENT, after
    assert "in SI" in after.reason
    again = list(checker.map(request for request, _ in cases[:6]))
    assert [result.outcome for _, result in again] == [outcome for _, outcome in cases[:6]]
