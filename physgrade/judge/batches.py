"""Large runs through the Message Batches API: submit, remember, collect.

Submitting stores each batch's id and which item each request is about in the project, so
:func:`collect` can pick the results up in any later session, after any restart. Results are
stored one by one (a collection cut short resumes without duplicates); an answer that does not
fit the tool gets its one corrective retry as a direct call. Requests that errored or expired
are not stored, and the next run submits them again. A batch remembers its run label and
decoding, so that its results are stored under its run's rater.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from physgrade.changes import NOTHING, Changes, RecordKind
from physgrade.judge import runs, versions
from physgrade.judge.client import (
    CallError,
    CredentialsError,
    Decoding,
    Outcome,
    Reply,
    api_message,
    ask,
    checked,
)
from physgrade.judge.prompts import Prompts
from physgrade.judge.purposes import PURPOSES
from physgrade.judge.runner import Plan
from physgrade.project import Project, now_iso
from physgrade.tasks import Task

if TYPE_CHECKING:
    import anthropic

#: Kept well inside the API's limits (100,000 requests and 256 MB per batch).
MAX_REQUESTS = 10_000
MAX_BYTES = 150_000_000
#: A batch's run label and decoding, from the run it belongs to (a batch submitted before runs
#: were recorded has none: the default run, sent with the API's defaults).
_RUN_JOIN = ("LEFT JOIN judge_batch_runs br ON br.batch_id = b.id "
             "LEFT JOIN judge_runs jr ON jr.id = br.run_id")
_RUN_COLUMNS = "coalesce(jr.run, ''), jr.temperature, jr.top_p"


@dataclass(slots=True)
class BatchState:
    """One submitted batch as last seen, what collecting it stored, and what that changed."""

    id: str
    purpose: str
    model: str
    prompt_version: str
    requests: int
    status: str
    counts: dict[str, int]
    ingested: bool
    stored: int = 0
    failed: int = 0
    not_answered: int = 0
    changes: Changes = NOTHING
    run: str = ""
    decoding: Decoding = Decoding()

    @property
    def by_run(self) -> dict[str, str]:
        """The keyword that names this batch's run to its purpose (none for the default run)."""
        return {"run": self.run} if self.run else {}

    def text(self) -> str:
        counts = ", ".join(f"{value:,} {key}" for key, value in self.counts.items() if value)
        run = f", run {self.run}" if self.run else ""
        line = (f"{self.id} ({self.purpose}, {self.model} [{self.prompt_version}{run}], "
                f"{self.requests:,} requests): {self.status}" + (f"; {counts}" if counts else ""))
        if self.ingested:
            line += (f"; collected: {self.stored:,} stored, {self.failed:,} failed, "
                     f"{self.not_answered:,} not answered (the next run submits them again)")
        return line


@dataclass(frozen=True, slots=True)
class Submission:
    """The batches a submission made, by id (each recorded in the project)."""

    ids: tuple[str, ...]

    @property
    def changes(self) -> Changes:
        return Changes.of(RecordKind.BATCHES) if self.ids else NOTHING


def submit(project: Project, client: "anthropic.Anthropic", plan: Plan, prompts: Prompts,
           task: Task | None = None) -> Submission:
    """Submit every pending item of ``plan`` in as few batches as the limits allow; returns
    the batch ids (each recorded in the project as soon as the API accepts it)."""
    purpose = PURPOSES[plan.purpose]
    if purpose.version(prompts) != plan.prompt_version:
        raise ValueError("the prompts changed since the run was planned; plan it again")
    if plan.pending:
        purpose.record(project, plan, prompts)
    task = task or Task()
    ids: list[str] = []
    sent = 0
    requests: list[dict[str, Any]] = []
    items: list[tuple[str, str]] = []
    size = 0

    def send() -> None:
        nonlocal requests, items, size, sent
        batch = _call(client.messages.batches.create, requests=requests)
        with project.transaction():
            project.conn.execute(
                "INSERT INTO judge_batches (id, purpose, model, prompt_version, requests, "
                "status, counts, submitted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (batch.id, plan.purpose, plan.model, plan.prompt_version, len(requests),
                 batch.processing_status, json.dumps(batch.request_counts.model_dump()),
                 now_iso()))
            project.conn.execute("INSERT INTO judge_batch_runs (batch_id, run_id) VALUES (?, ?)",
                                 (batch.id, run_id))
            project.conn.executemany("INSERT INTO judge_batch_items (batch_id, custom_id, "
                                     "item_id) VALUES (?, ?, ?)",
                                     [(batch.id, custom, item) for custom, item in items])
        ids.append(batch.id)
        sent += len(requests)
        requests, items, size = [], [], 0
        task.report(sent, len(plan.pending), "submitting batches")

    run_id, jobs = runs.recorded_jobs(project, plan, purpose.jobs(project, prompts, plan.pending),
                                      runs.BATCH)
    for job in jobs:
        params = plan.request(job).params(plan.model)
        length = len(json.dumps(params))
        if requests and (len(requests) >= MAX_REQUESTS or size + length > MAX_BYTES):
            send()
        custom_id = f"i{len(requests)}"
        requests.append({"custom_id": custom_id, "params": params})
        items.append((custom_id, job.item_id))
        size += length
    if requests:
        send()
    return Submission(tuple(ids))


def collect(project: Project, client: "anthropic.Anthropic", prompts: Prompts,
            task: Task | None = None) -> list[BatchState]:
    """Poll every batch not yet collected, and store the results of those that have ended;
    each state's ``changes`` names the batch and what its results changed."""
    task = task or Task()
    states = []
    for bid, purpose, model, version, requests, run, temperature, top_p in project.conn.execute(
            f"SELECT b.id, b.purpose, b.model, b.prompt_version, b.requests, {_RUN_COLUMNS} "
            f"FROM judge_batches b {_RUN_JOIN} WHERE b.ingested_at IS NULL "
            "ORDER BY b.submitted_at").fetchall():
        batch = _call(client.messages.batches.retrieve, bid)
        counts = batch.request_counts.model_dump()
        state = BatchState(bid, purpose, model, version, requests, status=batch.processing_status,
                           counts=counts, ingested=False, changes=Changes.of(RecordKind.BATCHES),
                           run=run, decoding=Decoding(temperature, top_p))
        with project.transaction():
            project.conn.execute("UPDATE judge_batches SET status = ?, counts = ?, ended_at = ? "
                                 "WHERE id = ?", (state.status, json.dumps(counts),
                                                  _iso(batch.ended_at), state.id))
        if state.status == "ended":
            _ingest(project, client, prompts, state, task)
        states.append(state)
    return states


def batch_history(project: Project) -> list[BatchState]:
    """Every batch the project has submitted, as last polled."""
    return [BatchState(bid, purpose, model, version, requests, status,
                       json.loads(counts or "{}"), ingested is not None, run=run,
                       decoding=Decoding(temperature, top_p))
            for bid, purpose, model, version, requests, status, counts, ingested, run, temperature,
            top_p in project.conn.execute(
                "SELECT b.id, b.purpose, b.model, b.prompt_version, b.requests, b.status, "
                f"b.counts, b.ingested_at, {_RUN_COLUMNS} FROM judge_batches b {_RUN_JOIN} "
                "ORDER BY b.submitted_at")]


def batch_items(project: Project, batch_id: str) -> set[str]:
    """The ids of the items batch ``batch_id`` asked about: what an interrupted collect has
    stored of it is counted against them."""
    return {item for (item,) in project.conn.execute(
        "SELECT item_id FROM judge_batch_items WHERE batch_id = ?", (batch_id,))}


def _ingest(project: Project, client: "anthropic.Anthropic", prompts: Prompts,
            state: BatchState, task: Task) -> None:
    purpose = PURPOSES[state.purpose]
    items = dict(project.conn.execute("SELECT custom_id, item_id FROM judge_batch_items "
                                      "WHERE batch_id = ?", (state.id,)))
    already = purpose.stored(project, state.model, state.prompt_version, **state.by_run)
    # The corrective retry resends the original request, which only the same prompts rebuild:
    # those given, or the texts the project recorded when the batch was submitted.
    recorded = versions.find(project, state.prompt_version)
    prompts = (recorded.prompts() if recorded is not None else None) or prompts
    can_retry = purpose.version(prompts) == state.prompt_version
    seen = 0
    for entry in _call(client.messages.batches.results, state.id):
        seen += 1
        item = items.get(entry.custom_id)
        result = entry.result
        if item is None or item in already:
            continue
        if result.type != "succeeded":
            state.not_answered += 1
            continue
        job = next(purpose.jobs(project, prompts, (item,)), None)
        if job is None:  # the item was deleted since
            continue
        again = ((lambda retry, j=job: ask(client, state.model, j.request.decoded(state.decoding),
                                           retry))
                 if can_retry else None)
        try:
            outcome: Outcome[Any] = checked(Reply.of(result.message), job.read, again)
        except CallError:
            state.not_answered += 1
            continue
        state.changes |= purpose.store(project, state.model, state.prompt_version, item,
                                       outcome, state.id, **state.by_run)
        if outcome.problem is None:
            state.stored += 1
        else:
            state.failed += 1
        task.report(seen, state.requests, f"collecting {state.id}")
    with project.transaction():
        project.conn.execute("UPDATE judge_batches SET ingested_at = ? WHERE id = ?",
                             (now_iso(), state.id))
    state.ingested = True


def _call(call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """A batch API call, with rejected credentials reported like the direct calls'."""
    import anthropic
    try:
        return call(*args, **kwargs)
    except (anthropic.AuthenticationError, anthropic.PermissionDeniedError) as exc:
        raise CredentialsError(api_message(exc)) from None


def _iso(moment: Any) -> str | None:
    return moment.isoformat() if moment is not None else None
