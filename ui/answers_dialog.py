"""Judge ▸ Check final answers with a model…: the model stage of final-answer checking
(``physgrade verify DB --model MODEL``) from the app.

The estimate is the core's :func:`~physgrade.answers.model_stage.plan`: one call per answer the
rules left unsettled, made on the GUI thread with the window's connection (a few indexed
queries). Responses the rules have not checked yet at the project's answer tolerance are
counted apart: the run checks them first, in the same background work (on this computer, which
may take a while on a big project), and the answers they leave open are asked about too. The
run is :func:`run_answer_check` through the operations, with its progress and Cancel; each
answer is stored as it arrives, as the rater ``rules+MODEL``, and what was stored is broadcast
even when the run stops early. The key row, the estimate card and closing are
:class:`~physgrade_ui.judge_dialog.JudgeCallsDialog`'s.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from functools import partial

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from physgrade.answers import model_stage, verify
from physgrade.answers.sandbox import Checker
from physgrade.answers.tolerance import settings as project_settings
from physgrade.changes import NOTHING, Changes, RecordKind
from physgrade.judge.client import connect
from physgrade.judge.pricing import Price, price_for
from physgrade.judge.prompts import Prompts
from physgrade.judge.purposes import run_plan
from physgrade.judge.runner import Plan, RunSummary, StopReason
from physgrade.judge.scope import Scope
from physgrade.project import Project
from physgrade.tasks import Task
from physgrade.wording import count
from physgrade_ui import preferences
from physgrade_ui.dialogs import fit_screen
from physgrade_ui.judge_dialog import JudgeCallsDialog, cost_text
from physgrade_ui.operations import Operations
from physgrade_ui.widgets import label
from physgrade_ui.workers import Worker

TITLE = "Check final answers with a model"
ESTIMATE_ROWS = ("Rater", "Rules first", "Calls to make", "Already done", "Failed before",
                 "In batches", "Tokens", "Cost")
SUMMARY_ROWS = ("Rater", "Rules checked", "Rules settled", "Model checked", "Failed",
                "Not answered", "Tokens", "Cost", "Problems", "Now stored")
#: What a run stores: the rules' checks and the combined rater's, as scores and raters.
CHECKED = Changes.of(RecordKind.SCORES, RecordKind.RATERS)


@dataclass(slots=True)
class AnswerRun:
    """What one run did: the rules' checks it made first (None: none were needed), the rules'
    settled checks it copied, the model's run (None: no call was needed), and what changed."""

    model: str
    version: str
    rules: verify.Summary | None
    settled: Counter[str]
    summary: RunSummary | None
    tally: str
    changes: Changes = NOTHING

    @property
    def stopped(self) -> str | None:
        return self.summary.stopped if self.summary is not None else None


def run_answer_check(model: str, prompts: Prompts, scope: Scope, price: Price | None,
                     concurrency: int, api_key: str | None, project: Project,
                     task: Task) -> AnswerRun:
    """On a worker: the rules first where they have not checked every answer (cancellable;
    their checks are committed every few hundred), then the rules' settled checks copied and
    the model asked about what they left open, each answer stored as it arrives. ``api_key``
    None means the key found where :func:`~physgrade.judge.credentials.find` looks."""
    client = connect(api_key=api_key)  # a missing key is said before any long work
    changes = NOTHING
    rules = None
    if model_stage.unchecked(project):
        with Checker(project_settings(project), workers=os.cpu_count() or 1) as checker:
            rules = verify.verify(project, checker, task)
        changes |= rules.changes
    task.check()
    plan = model_stage.plan(project, model, prompts, scope, price)
    settled, made = model_stage.settle(project, model, prompts, scope)
    changes |= made
    summary = None
    if plan.pending:
        summary = run_plan(project, client, plan, prompts, price, concurrency, task)
        changes |= summary.changes
    return AnswerRun(model, plan.prompt_version, rules, settled, summary,
                     model_stage.tally(project, model, plan.prompt_version), changes)


class AnswerCheckDialog(JudgeCallsDialog):
    """Ask a model about the final answers the rules did not settle; ``checked`` carries each
    run's :class:`AnswerRun` once it has stored what it got, so the window can say so."""

    RUN_NAME = "answer check"
    checked = Signal(object)

    def __init__(self, ops: Operations, parent: QWidget | None = None,
                 prompts: Prompts | None = None) -> None:
        super().__init__(ops, TITLE, ESTIMATE_ROWS, ESTIMATE_ROWS + SUMMARY_ROWS, parent,
                         prompts)
        self.plan: Plan | None = None
        self.unchecked = 0
        self.last_run: AnswerRun | None = None
        self.setMinimumWidth(640)
        intro = label("The rules check every final answer first; the model is asked, once per "
                      "response, only about the answers they did not settle. The result is "
                      "stored as the rater rules+MODEL.", "muted", self)
        intro.setWordWrap(True)
        model = self._model_combo(preferences.JUDGE_MODEL.get())
        self.form.addRow(self._buddy("&Model", model), model)
        self._add_limit_and_retry(
            "calls", "Ask at most this many of the answers still to check (0: all)",
            "&Ask again where the model's answer did not fit",
            "Answers whose earlier check by this model was kept as failed are otherwise left "
            "alone")
        self._lay_out(SUMMARY_ROWS, intro)

    # -- what a run would do ----------------------------------------------------------------

    def scope(self) -> Scope:
        return Scope(limit=self.limit.value() or None, retry_failed=self.retry_failed.isChecked())

    def update_estimate(self) -> Plan | None:
        """Plan the model stage the form asks for now and show what it would do and cost."""
        self.estimate_timer.stop()
        self.plan = self._make_plan()
        plan = self.plan
        if plan is None:
            for name in ESTIMATE_ROWS:
                self.estimate.set(name, "—" if name in ("Rater", "Calls to make") else None)
        else:
            self.estimate.set("Rater", model_stage.combined_label(plan.model,
                                                                  plan.prompt_version))
            self.estimate.set("Rules first", (
                f"{count(self.unchecked, 'answer')} not checked by the rules yet: checked first, "
                "on this computer; each they leave open is one more call" if self.unchecked
                else None))
            self.estimate.set("Calls to make", f"{plan.estimate.calls:,}"
                              + (" (and those the rules leave open)" if self.unchecked else ""))
            self._show_plan_counts(plan)
            self._show_calls(plan.estimate)
            if self.unchecked:  # the calls for what the rules leave open are not known yet
                later = "until the rules have run" if not plan.estimate.calls else \
                    "and more for the answers the rules leave open"
                for name in ("Tokens", "Cost"):
                    shown = self.estimate.values[name].text()
                    self.estimate.set(name, f"not known {later}" if not plan.estimate.calls
                                      else f"{shown}, {later}")
        self._show_state()
        return plan

    def _make_plan(self) -> Plan | None:
        def make(project: Project, model: str) -> Plan:
            assert self.prompts is not None
            self.unchecked = model_stage.unchecked(project)
            return model_stage.plan(project, model, self.prompts, self.scope(), price_for(model))

        return self._plan_with(make)

    def _readiness(self) -> tuple[bool, str]:
        """Run needs answers to check (or the rules to run first) and a key."""
        has_key = self.has_key()
        to_do = self.plan is not None and (bool(self.plan.pending) or self.unchecked > 0)
        if self.model_name() == "":
            note = "Enter the name of the model to check with."
        elif self.plan is not None and not to_do:
            note = ("Nothing to do: every answer the rules left open has a check from this "
                    "model.")
        elif not has_key:
            note = "Enter an API key to run."
        else:
            note = ""
        return to_do and has_key, note

    # -- the run ----------------------------------------------------------------------------

    def start(self) -> Worker | None:
        """Run the check the form asks for now (planned afresh)."""
        if self.worker is not None:
            return None
        plan = self.update_estimate()
        if plan is None or not self.run_button.isEnabled():
            return None
        assert self.prompts is not None
        work = partial(run_answer_check, plan.model, self.prompts, self.scope(),
                       plan.estimate.price, self.concurrency.value(), self.key_for_the_run())
        return self._start_run(TITLE, work, self._finished,
                               changes=lambda run: run.changes, partial_changes=CHECKED,
                               failed="The final answers were not checked.",
                               cancelled="The answer check was cancelled; the rules' checks "
                                         "committed so far are kept.",
                               calls=max(len(plan.pending) + self.unchecked, 1))

    def _finished(self, run: AnswerRun) -> None:
        self.last_run = run
        self._show_summary(run)
        self.update_estimate()
        self.checked.emit(run)

    def _show_summary(self, run: AnswerRun) -> None:
        view = self.summary_view
        summary = run.summary
        view.set("Rater", model_stage.combined_label(run.model, run.version))
        view.set("Rules checked", run.rules.text() if run.rules is not None else None)
        view.set("Rules settled", ", ".join(f"{n:,} {outcome.replace('_', ' ')}"
                                            for outcome, n in run.settled.items()) or "none new")
        view.set("Model checked", count(summary.done if summary else 0, "answer"))
        view.set("Failed", f"{summary.failed:,} (the model's answer did not fit; kept raw)"
                 if summary and summary.failed else "0")
        view.set("Not answered", f"{summary.errors:,} (a new run asks again)"
                 if summary and summary.errors else "0")
        view.set("Tokens", f"{summary.usage.input_tokens:,} in, "
                           f"{summary.usage.output_tokens:,} out" if summary else "none")
        view.set("Cost", cost_text(summary.usage.cost(summary.price), summary.price)
                 if summary else "nothing")
        view.set("Problems", "\n".join(summary.problems) if summary and summary.problems
                 else None)
        view.set("Now stored", run.tally.split(": ", 1)[-1])
        self.summary_title.show()
        view.show()
        self._show_stopped(run.stopped, (
            f"Stopped early: cancelled. The {count(summary.done + summary.failed, 'answer')} "
            "that arrived are stored; a new run picks up the rest."
            if summary is not None and run.stopped == StopReason.CANCELLED
            else f"Stopped early: {run.stopped}"))
        fit_screen(self)
