"""Many judge calls at once, each answer committed as it arrives.

A run is planned first (:class:`Plan`): which items still need an answer from this model under
this prompt version (and run label: a second run of the same judge is a rater of its own), how
it decodes, and what that will cost. What is already stored is never asked again, so a
second run makes no call for it and a run killed half-way resumes where it stopped. Calls go out
on a thread pool; answers are checked on the pool and written on the calling thread, one
transaction each.
"""

from __future__ import annotations

from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Callable, Generic, Iterable, Iterator, TypeVar

from physgrade.changes import NOTHING, Changes
from physgrade.judge.client import CallError, CredentialsError, Decoding, Outcome, Request, ask_checked
from physgrade.judge.pricing import Price, Usage, dollars, tokens_for
from physgrade.raters import rater_label
from physgrade.tasks import Cancelled, Task

if TYPE_CHECKING:
    import anthropic

T = TypeVar("T")

DEFAULT_CONCURRENCY = 8
#: A run stops when this many calls in a row fail: the service is down, not one item bad.
STOP_AFTER_ERRORS = 10
#: How many problems a summary lists.
SHOWN_PROBLEMS = 5


class StopReason(StrEnum):
    """Why a run stopped early on the user's word (any other reason is the failure's text)."""

    CANCELLED = "cancelled"      # the task was cancelled (the app's Cancel)
    INTERRUPTED = "interrupted"  # Ctrl+C


@dataclass(frozen=True, slots=True)
class Job(Generic[T]):
    """One item to ask about, and how to check the answer."""

    item_id: str
    request: Request
    read: Callable[[object], T]


@dataclass(frozen=True, slots=True)
class Estimate:
    calls: int
    input_tokens: int
    output_tokens: int
    price: Price | None
    batch: bool = False

    @property
    def cost(self) -> float | None:
        return Usage(self.input_tokens, self.output_tokens).cost(self.price, self.batch)

    def text(self) -> str:
        priced = (f" at ${self.price.input:g}/${self.price.output:g} per million tokens"
                  f"{', half price in a batch' if self.batch else ''}" if self.price else "")
        return (f"{self.calls:,} calls, about {self.input_tokens:,} input and "
                f"{self.output_tokens:,} output tokens: about {dollars(self.cost)}{priced}")


@dataclass(frozen=True, slots=True)
class Candidate:
    """An item in scope: its id, the characters its prompt adds, the tokens the answer is
    expected to take, and the tokens its images take (:mod:`physgrade.judge.figures`)."""

    item_id: str
    characters: int
    output_tokens: int
    image_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Plan:
    """What a run will do. ``pending`` is in the order the calls go out; ``run`` labels a
    further run of the same judge (its own rater), ``decoding`` is how every call samples."""

    purpose: str
    model: str
    prompt_version: str
    pending: tuple[str, ...]
    cached: int
    failed_before: int
    in_batches: int
    estimate: Estimate
    run: str = ""
    decoding: Decoding = Decoding()

    @property
    def rater(self) -> str:
        return rater_label(self.model, self.prompt_version, self.run)

    def request(self, job: Job[Any]) -> Request:
        """What is sent for ``job``: its request, decoded as this run decodes."""
        return job.request.decoded(self.decoding)

    def text(self) -> str:
        held = [f"{self.cached:,} already done"]
        if self.failed_before:
            held.append(f"{self.failed_before:,} failed before (not asked again unless retried)")
        if self.in_batches:
            held.append(f"{self.in_batches:,} waiting in submitted batches")
        decoded = f" at {self.decoding.text()}" if self.decoding != Decoding() else ""
        return f"{self.rater}{decoded}: {self.estimate.text()}; {', '.join(held)}"


def make_plan(purpose: str, model: str, prompt_version: str, candidates: Iterable[Candidate],
              done: set[str], failed: set[str], in_batches: set[str], retry_failed: bool,
              limit: int | None, overhead_characters: int, price: Price | None,
              batch: bool, run: str = "", decoding: Decoding = Decoding()) -> Plan:
    """Sort the candidates into done, held back and pending, and estimate the pending calls."""
    pending: list[Candidate] = []
    cached = skipped = waiting = 0
    for candidate in candidates:
        if candidate.item_id in done:
            cached += 1
        elif candidate.item_id in in_batches:
            waiting += 1
        elif candidate.item_id in failed and not retry_failed:
            skipped += 1
        elif limit is None or len(pending) < limit:
            pending.append(candidate)
    estimate = Estimate(len(pending),
                        sum(tokens_for(overhead_characters + c.characters) + c.image_tokens
                            for c in pending),
                        sum(c.output_tokens for c in pending), price, batch)
    return Plan(purpose, model, prompt_version, tuple(c.item_id for c in pending), cached,
                skipped, waiting, estimate, run, decoding)


@dataclass(slots=True)
class RunSummary:
    """What a run did; ``stopped`` says why it ended early, if it did; ``changes`` what the
    stored answers changed in the project."""

    plan: Plan
    price: Price | None
    done: int = 0
    failed: int = 0
    errors: int = 0
    usage: Usage = field(default_factory=Usage)
    stopped: str | None = None
    problems: list[str] = field(default_factory=list)
    changes: Changes = NOTHING

    def count(self, outcome: Outcome[Any]) -> None:
        self.usage.add(outcome.usage)
        if outcome.problem is None:
            self.done += 1
        else:
            self.failed += 1
            self.note(outcome.problem)

    def note(self, problem: str) -> None:
        if len(self.problems) < SHOWN_PROBLEMS:
            self.problems.append(problem)

    @property
    def finished(self) -> int:
        return self.done + self.failed + self.errors

    def text(self) -> str:
        lines = [f"{self.plan.rater}: {self.done:,} done, {self.plan.cached:,} already cached, "
                 f"{self.failed:,} failed (raw answer kept), {self.errors:,} calls not answered "
                 f"(a new run retries them)",
                 f"tokens: {self.usage.input_tokens:,} in, {self.usage.output_tokens:,} out; "
                 f"cost {dollars(self.usage.cost(self.price))}"]
        lines += [f"  problem: {problem}" for problem in self.problems]
        if self.stopped:
            lines.append(f"stopped early: {self.stopped}")
        return "\n".join(lines)


def run(client: "anthropic.Anthropic", plan: Plan, jobs: Iterator[Job[T]],
        store: Callable[[Job[T], Outcome[T]], Changes], price: Price | None,
        concurrency: int = DEFAULT_CONCURRENCY, task: Task | None = None) -> RunSummary:
    """Ask about every job, ``concurrency`` calls at a time, storing each answer as it comes
    (``store`` returns what it changed; the summary collects it).

    Cancelling (or Ctrl+C) stops new calls; answers already on their way are still stored.
    Rejected credentials stop the run at once; so do :data:`STOP_AFTER_ERRORS` failures in a
    row.
    """
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    task = task or Task()
    summary = RunSummary(plan, price)
    total = len(plan.pending)
    running: dict[Future[Outcome[T]], Job[T]] = {}
    in_a_row = 0
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="judge") as pool:
        while True:
            while summary.stopped is None and len(running) < concurrency:
                job = next(jobs, None)
                if job is None:
                    break
                running[pool.submit(ask_checked, client, plan.model, plan.request(job), job.read)] = job
            if not running:
                break
            try:
                finished, _ = wait(running, timeout=0.25, return_when=FIRST_COMPLETED)
                for future in finished:
                    job = running.pop(future)
                    try:
                        outcome = future.result()
                    except CredentialsError as exc:
                        summary.stopped = str(exc)
                        continue
                    except CallError as exc:
                        summary.errors += 1
                        summary.note(f"{job.item_id}: {exc}")
                        in_a_row += 1
                        if in_a_row >= STOP_AFTER_ERRORS and summary.stopped is None:
                            summary.stopped = f"{in_a_row} calls in a row failed; the last: {exc}"
                        continue
                    in_a_row = 0
                    summary.changes |= store(job, outcome)
                    summary.count(outcome)
                task.report(summary.finished, total, f"asking {plan.model}")
            except Cancelled:
                summary.stopped = summary.stopped or StopReason.CANCELLED
            except KeyboardInterrupt:
                summary.stopped = summary.stopped or StopReason.INTERRUPTED
    return summary
