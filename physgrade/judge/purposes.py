"""What a judge can be asked for, and running a planned job of any kind.

Each purpose (P-REFS verdicts, Bloom suggestions, duplicate-pair labels, final-answer checks
of what the rules left open) says how its prompt version is derived, how its requests are built
and how its answers are stored; the runner and the batches need nothing else, so a further
purpose plugs in here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator

from physgrade.answers import model_stage
from physgrade.changes import Changes
from physgrade.judge import bloom, duplicates, runs, verdicts, versions
from physgrade.judge.pricing import Price
from physgrade.judge.prompts import Prompts
from physgrade.judge.runner import Job, Plan, RunSummary, run
from physgrade.judge.scope import Scope
from physgrade.project import Project
from physgrade.tasks import Task

if TYPE_CHECKING:
    import anthropic


@dataclass(frozen=True, slots=True)
class Purpose:
    version: Callable[[Prompts], str]
    plan: Callable[[Project, str, Prompts, Scope, Price | None, bool], Plan]
    jobs: Callable[[Project, Prompts, tuple[str, ...]], Iterator[Job[Any]]]
    store: Callable[..., Changes]  # what storing one answer changed (NOTHING: nothing written)
    stored: Callable[..., dict[str, str]]  # (project, model, version[, run=]): status by item
    texts: Callable[[Prompts], tuple[str, ...]]  # the texts a version is built from

    def record(self, project: Project, plan: Plan, prompts: Prompts) -> None:
        """Record the texts of the version ``plan`` is about to ask under (see
        :mod:`physgrade.judge.versions`)."""
        versions.record(project, plan.purpose, plan.prompt_version,
                        {text: prompts.texts[text] for text in self.texts(prompts)})


PURPOSES = {verdicts.PURPOSE: Purpose(verdicts.prompt_version, verdicts.plan, verdicts.jobs,
                                      verdicts.store, verdicts.stored, verdicts.texts),
            bloom.PURPOSE: Purpose(bloom.prompt_version, bloom.plan, bloom.jobs, bloom.store,
                                   bloom.stored, lambda prompts: bloom.TEMPLATES),
            duplicates.PURPOSE: Purpose(duplicates.prompt_version, duplicates.plan,
                                        duplicates.jobs, duplicates.store, duplicates.stored,
                                        lambda prompts: duplicates.TEMPLATES),
            model_stage.PURPOSE: Purpose(model_stage.prompt_version, model_stage.plan,
                                         model_stage.jobs, model_stage.store, model_stage.stored,
                                         lambda prompts: model_stage.TEMPLATES)}


def by_run(plan: Plan) -> dict[str, str]:
    """The keyword that names ``plan``'s run to its purpose's ``stored`` and ``store`` (none for
    the default run: only verdicts have further runs)."""
    return {"run": plan.run} if plan.run else {}


def stored_by(project: Project, plan: Plan) -> dict[str, str]:
    """The status of each answer stored by the rater ``plan`` asks for."""
    return PURPOSES[plan.purpose].stored(project, plan.model, plan.prompt_version, **by_run(plan))


def run_plan(project: Project, client: "anthropic.Anthropic", plan: Plan, prompts: Prompts,
             price: Price | None, concurrency: int, task: Task | None = None) -> RunSummary:
    """Ask ``plan.model`` about every pending item, committing each answer as it arrives. The
    summary's ``changes``: scores and raters for verdicts, Bloom labels for suggestions, pairs
    for duplicate labels."""
    purpose = PURPOSES[plan.purpose]
    if purpose.version(prompts) != plan.prompt_version:
        raise ValueError("the prompts changed since the run was planned; plan it again")
    if plan.pending:
        purpose.record(project, plan, prompts)
    _, jobs = runs.recorded_jobs(project, plan, purpose.jobs(project, prompts, plan.pending),
                                 runs.DIRECT)
    return run(client, plan, jobs,
               lambda job, outcome: purpose.store(project, plan.model, plan.prompt_version,
                                                  job.item_id, outcome, **by_run(plan)),
               price, concurrency, task)
