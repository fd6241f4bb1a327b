"""Refining a judge from expert corrections, measured on responses it has not seen.

The responses a judge and a reference (the experts' consensus, or one grader) both assessed are
split into a calibration part and a held-out part (:mod:`~physgrade.refinement.split`). Up to K
calibration responses where the reference corrected the judge become examples in its prompt
(:mod:`~physgrade.refinement.examples`), which makes a new prompt version, a rater of its own.
The model then judges the held-out part under it ("after"), through the normal judge runner.

"Before" isolates the effect of the examples: it is the judge's own verdicts when physgrade ran
that judge (the same model, under a prompt whose texts it knows), and otherwise the model under
the judge's known prompt, or the bundled one for an imported judge, judged on the held-out part
too. Both are then measured against the reference there (:mod:`~physgrade.refinement.measures`).

Everything a run makes is stored: the split, the examples and the refined prompt's texts. A
second identical run reads them back and finds every verdict cached, so it makes no call.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from physgrade.changes import NOTHING, Changes, RecordKind
from physgrade.judge import verdicts, versions
from physgrade.judge.pricing import Price
from physgrade.judge.prompts import Prompts
from physgrade.judge.purposes import run_plan
from physgrade.judge.runner import DEFAULT_CONCURRENCY, Estimate, Plan, RunSummary
from physgrade.judge.scope import Scope
from physgrade.project import Project, now_iso
from physgrade.raters import CONSENSUS, HUMAN_CONSENSUS, judge_label, rater_label, reference_label
from physgrade.refinement import examples as chosen_examples
from physgrade.refinement import split as splits
from physgrade.refinement.examples import Disagreement, Example
from physgrade.refinement.measures import Comparison, compare
from physgrade.refinement.split import Split
from physgrade.scoring import tables as score_tables
from physgrade.scoring.tables import ScoreData
from physgrade.selection import ResponseFilter
from physgrade.tasks import Task
from physgrade.wording import count

if TYPE_CHECKING:
    import anthropic

DEFAULT_EXAMPLES = 4
#: Each example goes with every request; beyond this many a prompt grows long and dear.
MAX_EXAMPLES = 20
DEFAULT_HOLDOUT = 0.5
#: The held-out share a split may have: each part must keep enough responses to matter.
HOLDOUT_RANGE = (0.1, 0.9)
DEFAULT_SEED = 0


@dataclass(frozen=True, slots=True)
class Settings:
    """What a refinement is asked to do; ``criteria`` are keys the examples aim at (none:
    every criterion)."""

    judge: str
    model: str
    reference: str = CONSENSUS
    examples: int = DEFAULT_EXAMPLES
    holdout: float = DEFAULT_HOLDOUT
    seed: int = DEFAULT_SEED
    criteria: tuple[str, ...] = ()

    def check(self) -> None:
        """Raise ValueError naming the first setting out of range."""
        if not self.model.strip():
            raise ValueError("name the model to refine with")
        if not 1 <= self.examples <= MAX_EXAMPLES:
            raise ValueError(f"--examples must be between 1 and {MAX_EXAMPLES}, not "
                             f"{self.examples}")
        low, high = HOLDOUT_RANGE
        if not low <= self.holdout <= high:
            raise ValueError(f"--holdout must be between {low:g} and {high:g}, not "
                             f"{self.holdout:g}")
        unknown = [key for key in self.criteria if key not in chosen_examples.criterion_keys()]
        if unknown:
            raise ValueError(f"unknown criteria {', '.join(unknown)}; the criteria are "
                             f"{', '.join(chosen_examples.criterion_keys())}")


@dataclass(frozen=True, slots=True)
class RefinementPlan:
    """What a refinement will do and cost: its split, its examples, and the two judge runs on
    the held-out part (``before`` has nothing pending when it is the judge's own verdicts).
    ``refinement_id`` is the stored refinement's (None until it is run)."""

    settings: Settings
    judge: str
    reference: str
    split: Split
    examples: tuple[Example, ...]
    disagreements: tuple[Disagreement, ...]
    before_prompts: Prompts
    refined_prompts: Prompts
    before: Plan
    after: Plan
    own_verdicts: bool
    refinement_id: int | None = None

    @property
    def steps(self) -> tuple[Plan, ...]:
        """The judge runs a refinement makes: before and after; none without an example."""
        return (self.before, self.after) if self.examples else ()

    @property
    def estimate(self) -> Estimate:
        """The runs' calls together."""
        parts = [step.estimate for step in self.steps]
        return Estimate(sum(p.calls for p in parts), sum(p.input_tokens for p in parts),
                        sum(p.output_tokens for p in parts), self.after.estimate.price,
                        self.after.estimate.batch)

    @property
    def pending(self) -> int:
        return sum(len(step.pending) for step in self.steps)

    def before_text(self) -> str:
        if self.own_verdicts:
            return f"{self.before.rater}: the judge's own verdicts (no call)"
        return f"{self.before.rater}: {self._calls(self.before)}"

    def after_text(self) -> str:
        if not self.examples:
            return "no refined prompt: there is no example to give it"
        return f"{self.after.rater}: {self._calls(self.after)}"

    @staticmethod
    def _calls(plan: Plan) -> str:
        return (f"{count(len(plan.pending), 'call')} to make, {plan.cached:,} already done"
                + (f", {plan.failed_before:,} failed before" if plan.failed_before else "")
                + (f", {plan.in_batches:,} waiting in batches" if plan.in_batches else ""))

    def split_text(self) -> str:
        return (f"{count(len(self.split.calibration), 'response')} for calibration, "
                f"{len(self.split.heldout):,} held out (about {self.split.holdout:.0%}, by "
                f"question; seed {self.split.seed}"
                + (", as stored" if self.split.id is not None else "") + ")")

    def examples_text(self) -> str:
        if not self.examples:
            return "none: the reference never corrected the judge on the calibration part"
        aims = pd.Series([e.chosen_for for e in self.examples]).value_counts(sort=False)
        return (f"{count(len(self.examples), 'example')} from the calibration part, for "
                + ", ".join(f"{key}" + (f" ×{n}" if n > 1 else "") for key, n in aims.items()))

    def text(self) -> str:
        """The plan as the command line prints it before any call."""
        return "\n".join([
            f"refining {self.judge} with {self.settings.model}, against {self.reference}",
            f"  split: {self.split_text()}",
            f"  examples: {self.examples_text()}",
            f"  before: {self.before_text()}",
            f"  after: {self.after_text()}",
            f"  estimate: {self.estimate.text()}"])

    def as_dict(self) -> dict:
        return {"judge": self.judge, "model": self.settings.model, "reference": self.reference,
                "split": self.split.as_dict(), "heldout": list(self.split.heldout),
                "examples": [e.response_id for e in self.examples],
                "example_details": [e.as_dict() for e in self.examples],
                "disagreements": [d.as_dict() for d in self.disagreements],
                "criteria": list(self.settings.criteria),
                "before_rater": self.before.rater, "after_rater": self.after.rater,
                "own_verdicts": self.own_verdicts,
                "calls": {"before": len(self.before.pending) if self.steps else 0,
                          "after": len(self.after.pending) if self.steps else 0}}


@dataclass(frozen=True, slots=True)
class Refined:
    """What a run did: the plan as stored, each judge run's summary, the comparison on the
    held-out part (None when a run stopped early: ``stopped`` says why), and what changed."""

    plan: RefinementPlan
    runs: tuple[RunSummary, ...]
    comparison: Comparison | None
    stopped: str | None
    changes: Changes

    def as_dict(self) -> dict:
        found = self.plan.as_dict()
        found["stopped"] = self.stopped
        for side in ("before", "after", "difference"):
            found[side] = (self.comparison.side(side) if self.comparison is not None else None)
        return found


@dataclass(frozen=True, slots=True)
class Refinement:
    """A stored refinement, as the judge cards read it."""

    id: int
    judge: str
    reference: str
    model: str
    before: str            # rater labels
    after: str
    before_version: str    # the prompt version the refined one was made from
    examples: tuple[str, ...]
    heldout: tuple[str, ...]
    created_at: str


def plan(project: Project, settings: Settings, prompts: Prompts, price: Price | None = None,
         batch: bool = False, task: Task | None = None) -> RefinementPlan:
    """Everything a refinement will do, read or drawn but not stored, and its cost; a stored
    refinement of the same settings is read back as it is. ``prompts`` are the templates to
    refine when the judge's own are unknown (the bundled ones, or ``--prompts``). Raises
    ValueError for settings, a judge or a reference the project refuses."""
    task = task or Task()
    settings.check()
    judge = judge_label(project, settings.judge)
    reference = reference_label(project, settings.reference)
    name, version = _name_and_version(project, judge)
    data = _scores(project, {judge}, reference, task)
    task.report(0, None, "splitting")
    split = (splits.find(project, judge, reference, settings.holdout, settings.seed)
             or splits.draw(judge, reference, _population(data, judge, reference),
                            settings.holdout, settings.seed))
    ranked = tuple(chosen_examples.disagreements(data, judge, reference, split.calibration,
                                                 settings.criteria))
    stored = _stored(project, split, settings)
    judge_prompts = _known_prompts(project, version, prompts)
    own = judge_prompts is not None and name == settings.model
    if stored is not None:
        refinement_id, chosen, before_version, after_version = stored
        before_prompts = _recorded(project, before_version) or judge_prompts or prompts
        refined = _recorded(project, after_version)
        if refined is None:
            raise ValueError(f"the texts of refined prompt {after_version} are missing from "
                             "the project")
    else:
        refinement_id = None
        task.report(0, None, "choosing examples")
        lengths = pd.read_sql_query("SELECT id, length(response) AS chars FROM responses",
                                    project.conn, index_col="id")["chars"]
        chosen = chosen_examples.choose(data, judge, reference, split.calibration,
                                        settings.examples, settings.criteria, settings.seed,
                                        lengths)
        before_prompts = judge_prompts or prompts
        refined = before_prompts.without_examples().with_examples(chosen_examples.block(
            project, prompts, data, judge, reference, chosen)) if chosen else before_prompts
    heldout = Scope(responses=frozenset(split.heldout))
    before = verdicts.plan(project, settings.model, before_prompts, heldout, price, batch)
    after = verdicts.plan(project, settings.model, refined, heldout, price, batch)
    return RefinementPlan(settings, judge, reference, split, chosen, ranked, before_prompts,
                          refined, before, after, own, refinement_id)


def save(project: Project, planned: RefinementPlan) -> tuple[RefinementPlan, Changes]:
    """Store the split, the refined prompt's texts and the refinement (once: a stored plan is
    returned as it is), before anything is judged, so the held-out part is fixed first."""
    if planned.refinement_id is not None:
        return planned, NOTHING
    if not planned.examples:
        raise ValueError(f"no example to give: {planned.reference} agreed with {planned.judge} "
                         "on every criterion of the calibration part")
    ids = tuple(example.response_id for example in planned.examples)
    for prompts, version, base in ((planned.before_prompts, planned.before.prompt_version, None),
                                   (planned.refined_prompts, planned.after.prompt_version,
                                    planned.before.prompt_version)):
        versions.record(project, verdicts.PURPOSE, version,
                        {name: prompts.texts[name] for name in verdicts.texts(prompts)},
                        base=base, examples=ids if base else ())
    settings = planned.settings
    with project.transaction():
        split = splits.save(project, planned.split)
        cursor = project.conn.execute(
            "INSERT INTO refinements (split_id, model, examples, chosen, criteria, before_name, "
            "before_version, after_version, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (split.id, settings.model, settings.examples,
             json.dumps([example.as_dict() for example in planned.examples]),
             json.dumps(sorted(settings.criteria)), planned.before.model,
             planned.before.prompt_version, planned.after.prompt_version, now_iso()))
    return (dataclasses.replace(planned, split=split, refinement_id=int(cursor.lastrowid or 0)),
            Changes.of(RecordKind.REFINEMENTS, responses=(), questions=()))


def run(project: Project, client: "anthropic.Anthropic | None", planned: RefinementPlan,
        price: Price | None, concurrency: int = DEFAULT_CONCURRENCY,
        task: Task | None = None) -> Refined:
    """Store the refinement, judge the held-out part before (unless those are the judge's own
    verdicts) and after, committing each verdict as it arrives, then measure both. A run that
    stops early (cancelled, credentials refused, the service down) keeps every verdict stored
    and returns no comparison; running it again asks only for what is missing. ``client`` may be
    None when nothing is pending."""
    task = task or Task()
    planned, changes = save(project, planned)
    total, done = planned.pending, 0
    runs = []
    for named, step, prompts in (("before", planned.before, planned.before_prompts),
                                 ("after", planned.after, planned.refined_prompts)):
        if not step.pending:
            continue
        if client is None:
            raise ValueError("calls to make, and no client to make them with")
        summary = run_plan(project, client, step, prompts, price, concurrency,
                           task.part(done, total, named))
        done += len(step.pending)
        runs.append(summary)
        changes |= summary.changes
        if summary.stopped:
            return Refined(planned, tuple(runs), None, summary.stopped, changes)
    return Refined(planned, tuple(runs), measure(project, planned, task), None, changes)


def measure(project: Project, planned: RefinementPlan, task: Task | None = None) -> Comparison:
    """Before and after against the reference on the held-out part, as stored now."""
    task = task or Task()
    data = _scores(project, {planned.before.rater, planned.after.rater}, planned.reference,
                   task)
    task.report(0, None, "measuring on the held-out part")
    return compare(data, planned.reference, planned.before.rater, planned.after.rater,
                   planned.split.heldout)


def refinements(project: Project) -> list[Refinement]:
    """Every stored refinement, oldest first."""
    found = []
    for rid, split_id, model, chosen, before_name, before_version, after_version, created in \
            project.conn.execute("SELECT id, split_id, model, chosen, before_name, "
                                 "before_version, after_version, created_at FROM refinements "
                                 "ORDER BY created_at, id").fetchall():
        split = splits.read(project, split_id)
        found.append(Refinement(rid, split.judge, split.reference, model,
                                rater_label(before_name, before_version),
                                rater_label(model, after_version), before_version,
                                tuple(example["response_id"] for example in json.loads(chosen)),
                                split.heldout, created))
    return found


def _scores(project: Project, judges: set[str], reference: str, task: Task) -> ScoreData:
    """The scores of ``judges`` and of the reference (the consensus needs every grader)."""
    graders = frozenset() if reference == HUMAN_CONSENSUS else frozenset({reference})
    return score_tables.load(project, ResponseFilter(judges=frozenset(judges), graders=graders),
                             task)


def _population(data: ScoreData, judge: str, reference: str) -> pd.Series:
    """Response id → question id of every response both assessed completely."""
    both = score_tables.sheet(data, judge).index.intersection(
        score_tables.sheet(data, reference).index)
    return data.responses.loc[both, "question_id"]


def _name_and_version(project: Project, label: str) -> tuple[str, str]:
    found = next((name, version, run) for name, version, run in project.conn.execute(
        "SELECT name, prompt_version, run FROM raters") if rater_label(name, version, run) == label)
    if found[2]:  # its "before" verdicts would be asked again under the default run
        raise ValueError(f"{label!r} is a further run of a judge; refine the judge's own run, "
                         f"{rater_label(found[0], found[1])!r}")
    return found[0], found[1]


def _known_prompts(project: Project, version: str, prompts: Prompts) -> Prompts | None:
    """The prompts a judge's version was made with, when physgrade knows their texts: the ones
    given, or those recorded when physgrade ran it."""
    if verdicts.prompt_version(prompts) == version:
        return prompts
    return _recorded(project, version)


def _recorded(project: Project, version: str) -> Prompts | None:
    found = versions.find(project, version)
    return found.prompts() if found is not None else None


def _stored(project: Project, split: Split,
            settings: Settings) -> tuple[int, tuple[Example, ...], str, str] | None:
    """The refinement of these settings on this split, if it was run before."""
    if split.id is None:
        return None
    row = project.conn.execute(
        "SELECT id, chosen, before_version, after_version FROM refinements WHERE split_id = ? "
        "AND model = ? AND examples = ? AND criteria = ?",
        (split.id, settings.model, settings.examples,
         json.dumps(sorted(settings.criteria)))).fetchone()
    if row is None:
        return None
    chosen = tuple(Example(e["response_id"], e["rubric"], e["chosen_for"],
                           tuple(e["corrected"])) for e in json.loads(row[1]))
    return row[0], chosen, row[2], row[3]
