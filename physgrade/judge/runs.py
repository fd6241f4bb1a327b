"""The record of judge runs: which judge each run asked (model, prompt version, run label) and how
it decoded (temperature, top_p, max_tokens).

Agreement between two runs of one judge (Physics-R1) reads differently at temperature 0 than at
the API's default of 1.0, so every run records its decoding, defaults included (P-REFS v2 states
its judge's decoding with its results). A run label keeps one decoding: resuming a run with
other settings is refused, so that each rater has one decoding to report.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Iterator, TypeVar

from physgrade.judge.client import Decoding
from physgrade.judge.runner import Job, Plan
from physgrade.project import Project, ProjectError, now_iso
from physgrade.raters import rater_label

if TYPE_CHECKING:
    import sqlite3

T = TypeVar("T")

#: Where a run's verdicts came from.
DIRECT, BATCH, IMPORT = "direct", "batch", "import"


@dataclass(frozen=True, slots=True)
class JudgeRun:
    """One recorded run; temperature and top_p None where nothing was sent (the API's default)
    or an import did not say, max_tokens None where an import did not say."""

    purpose: str
    model: str
    prompt_version: str
    run: str
    temperature: float | None
    top_p: float | None
    max_tokens: int | None
    source: str
    requests: int
    started_at: str

    @property
    def rater(self) -> str:
        """The label of the rater whose answers the run made."""
        return rater_label(self.model, self.prompt_version, self.run)

    @property
    def decoding(self) -> Decoding:
        return Decoding(self.temperature, self.top_p)


def record(project: Project, purpose: str, model: str, prompt_version: str, run: str,
           decoding: Decoding, max_tokens: int | None, source: str, requests: int) -> int:
    """Record a run that is about to ask ``requests`` items, in a transaction of its own;
    returns its id."""
    with project.transaction():
        return insert(project.conn, purpose, model, prompt_version, run, decoding, max_tokens,
                      source, requests)


def insert(conn: "sqlite3.Connection", purpose: str, model: str, prompt_version: str, run: str,
           decoding: Decoding, max_tokens: int | None, source: str, requests: int) -> int:
    """Record a run inside the caller's transaction (an import's); returns its id."""
    recorded = conn.execute(
        "INSERT INTO judge_runs (purpose, model, prompt_version, run, temperature, top_p, "
        "max_tokens, source, requests, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (purpose, model, prompt_version, run, decoding.temperature, decoding.top_p, max_tokens,
         source, requests, now_iso())).lastrowid
    assert recorded is not None  # an INSERT sets it
    return recorded


def recorded_jobs(project: Project, plan: Plan, jobs: Iterator[Job[T]],
                  source: str) -> tuple[int | None, Iterator[Job[T]]]:
    """The id of ``plan``'s run, recorded with the output tokens its requests allow (read from
    the first job), and ``jobs``; a plan with no job records nothing (id None)."""
    first = next(jobs, None)
    if first is None:
        return None, iter(())
    run_id = record(project, plan.purpose, plan.model, plan.prompt_version, plan.run,
                    plan.decoding, first.request.max_tokens, source, len(plan.pending))
    return run_id, chain((first,), jobs)


def runs(project: Project, purpose: str | None = None) -> list[JudgeRun]:
    """Every recorded run (of ``purpose``, if given), oldest first."""
    where, params = ("WHERE purpose = ?", (purpose,)) if purpose else ("", ())
    return [JudgeRun(*row) for row in project.conn.execute(
        "SELECT purpose, model, prompt_version, run, temperature, top_p, max_tokens, source, "
        f"requests, started_at FROM judge_runs {where} ORDER BY started_at, id", params)]


def check_decoding(project: Project, purpose: str, model: str, prompt_version: str, run: str,
                   decoding: Decoding) -> None:
    """Refuse to add to a run that decoded otherwise: one rater, one decoding."""
    for earlier in runs(project, purpose):
        if (earlier.model, earlier.prompt_version, earlier.run) == (model, prompt_version, run) \
                and earlier.source != IMPORT and earlier.decoding != decoding:
            raise ProjectError(
                f"{earlier.rater} was asked with {earlier.decoding.text()}, not "
                f"{decoding.text()}: give the same settings to continue that run, or "
                "another run label (--run) for a run of its own")
