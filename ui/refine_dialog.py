"""Judge ▸ Refine judge…: give a judge examples of the experts' corrections, and measure on
responses it has not seen whether they help.

The choices are the command line's (``physgrade judge-refine``). The estimate is the core's
:func:`~physgrade.refinement.refine.plan`, read in the background (it loads scores: seconds on a
big project) and made again a moment after a choice changes; only the newest plan is shown,
and Run waits for it. The run is :func:`~physgrade.refinement.refine.run` on a worker, with
progress and Cancel; every verdict is stored as it arrives, so a stopped run loses nothing and
running again asks only for the rest. A refinement whose verdicts are all stored makes no call
and needs no key: Run then only measures, and shows the table again.
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from physgrade.changes import Changes, RecordKind
from physgrade.judge.client import connect
from physgrade.judge.pricing import known_models, price_for
from physgrade.judge.prompts import Prompts
from physgrade.judge.runner import StopReason
from physgrade.project import Project
from physgrade.raters import CONSENSUS
from physgrade.refinement import refine
from physgrade.refinement.examples import criterion_keys
from physgrade.refinement.measures import Comparison
from physgrade.refinement.refine import Refined, RefinementPlan
from physgrade.selection import filter_choices
from physgrade.tasks import Task
from physgrade.wording import count, sentence
from physgrade_ui.dialogs import fit_screen, fitted_layout
from physgrade_ui.judge_dialog import DEFAULT_MODEL, JudgeCallsDialog
from physgrade_ui.operations import Operations, explain
from physgrade_ui.widgets import NUMBER_ALIGNMENT, FacetButton, SeedField, label, list_table
from physgrade_ui.workers import Worker

ESTIMATE_ROWS = ("Split", "Examples", "Before", "After", "Tokens", "Cost")
COLUMNS = ("Measure", "Criterion", "Before", "After", "After − before", "n")
#: The widest cells a comparison has in practice: the table is as wide from the start.
WIDEST_ROW = ("final-answer agreement", "COH (conceptual)", "100.0% [93.0, 100.0]",
              "100.0% [93.0, 100.0]", "-12.5 pts [-25.0, -0.1]", "1,000")
TABLE_ROW_HEIGHT = 28
#: A cell's margins and a little air, in pixels.
CELL_PADDING = 14
#: The width of the settings and the estimate beside the table, in pixels (fixed: wrapped
#: text in the card takes its full height).
SETTINGS_WIDTH = 380
#: The height the dialog takes where the screen has room for it, in pixels.
PREFERRED_HEIGHT = 900
#: What a refinement stores: its split and refined prompt, verdicts, and the new rater.
REFINED = Changes.of(RecordKind.SCORES, RecordKind.RATERS, RecordKind.REFINEMENTS)
#: The key of the background plan: a newer one supersedes it.
PLANNING = "refine-plan"
CONSENSUS_TITLE = "experts' consensus"
UNITS = ("Agreement: the share of responses given the reference's score (all criteria: the share "
         "of criteria, per response). AC2: Gwet's chance-corrected agreement, 1 at best. "
         "Leniency: the mean score share minus the reference's, in points of 100 (0: neither "
         "lenient nor strict). After − before is in points (AC2: in its own units); brackets "
         "hold 95% intervals.")


def plan_refinement(settings: refine.Settings, prompts: Prompts, project: Project,
                    task: Task) -> RefinementPlan:
    """The refinement ``settings`` ask for, planned on a worker; the priced models' cost."""
    return refine.plan(project, settings, prompts, price_for(settings.model), task=task)


def refine_judge(plan: RefinementPlan, concurrency: int, api_key: str | None, project: Project,
                 task: Task) -> Refined:
    """Run ``plan`` (on a worker); ``api_key`` None means the key in ``ANTHROPIC_API_KEY``.
    With every verdict stored already no call is made, so no client (and no key) is needed."""
    client = connect(api_key=api_key) if plan.pending else None
    return refine.run(project, client, plan, plan.after.estimate.price, concurrency, task)


def suggested_model(judge: str) -> str:
    """The model to refine ``judge`` with unless the user picks another: the judge's own where
    the price table knows its name."""
    return next((model for model in known_models()
                 if judge == model or judge.startswith(f"{model} [")), DEFAULT_MODEL)


class RefineJudgeDialog(JudgeCallsDialog):
    """Refine one of the project's judges against the experts' consensus or a grader, and show
    how it agrees with them on the held-out responses before and after."""

    RUN_NAME = "refinement"

    def __init__(self, ops: Operations, parent: QWidget | None = None,
                 prompts: Prompts | None = None) -> None:
        super().__init__(ops, "Refine judge", ESTIMATE_ROWS, ESTIMATE_ROWS, parent, prompts)
        self.plan: RefinementPlan | None = None
        #: the last run's outcome
        self.refined: Refined | None = None
        self._reading = False
        assert ops.project is not None
        choices = filter_choices(ops.project)
        form = self.form

        self.judge = QComboBox(self.settings)
        self.judge.addItems(choices.judges)
        self.judge.setToolTip("The judge to refine: a language-model judge with verdicts in "
                              "this project")
        form.addRow(self._buddy("&Judge", self.judge), self.judge)
        self._suggested = suggested_model(self.judge.currentText())
        form.addRow(self._buddy("&Model", self._model_combo(self._suggested)), self.model)
        self.reference = QComboBox(self.settings)
        self.reference.addItem(CONSENSUS_TITLE, CONSENSUS)
        for grader in choices.graders:
            self.reference.addItem(grader, grader)
        self.reference.setToolTip("Whose grades correct the judge, and measure it before and "
                                  "after: the experts' consensus, or one grader")
        form.addRow(self._buddy("Re&ference", self.reference), self.reference)

        self.examples = QSpinBox(self.settings)
        self.examples.setRange(1, refine.MAX_EXAMPLES)
        self.examples.setValue(refine.DEFAULT_EXAMPLES)
        self.examples.setToolTip("Corrected responses shown to the judge in its prompt; each "
                                 "goes with every call, so more make each call dearer")
        self.examples.valueChanged.connect(self._name_examples)
        self._name_examples(refine.DEFAULT_EXAMPLES)
        form.addRow(self._buddy("E&xamples", self.examples), self.examples)
        low, high = refine.HOLDOUT_RANGE
        self.holdout = QSpinBox(self.settings)
        self.holdout.setRange(round(low * 100), round(high * 100))
        self.holdout.setValue(round(refine.DEFAULT_HOLDOUT * 100))
        self.holdout.setSingleStep(5)
        self.holdout.setSuffix("% of the responses")
        self.holdout.setToolTip("The share of the responses both graded that is kept out of the "
                                "examples, whole questions at a time, to measure the judge on "
                                "before and after")
        form.addRow(self._buddy("&Held out", self.holdout), self.holdout)
        self.seed = SeedField("Ne&w seed", "The same seed gives the same split and examples, so "
                              "running a refinement again reuses what it stored", self.settings)
        self.seed.setValue(refine.DEFAULT_SEED)
        form.addRow(self._buddy("&Seed", self.seed), self.seed)
        self.criteria = FacetButton("Criteria", self.settings)
        self.criteria.set_values(list(criterion_keys()), frozenset())
        criteria = self._buddy("Cr&iteria", self.criteria)
        criteria.setToolTip("The criteria the examples aim at (none chosen: every criterion)")
        form.addRow(criteria, self.criteria)
        self._add_run_parts()
        for spin in (self.examples, self.holdout, self.concurrency):
            spin.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
            spin.setMinimumWidth(220)

        self.raters = label("", None, self)
        self.raters.setWordWrap(True)
        self.raters.setTextFormat(Qt.TextFormat.PlainText)  # rater names are the project's data
        self.comparison = QStandardItemModel(0, len(COLUMNS), self)
        self.comparison.setHorizontalHeaderLabels(list(COLUMNS))
        self.table = list_table(self.comparison, TABLE_ROW_HEIGHT)
        self.table.setParent(self)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setMinimumHeight(8 * TABLE_ROW_HEIGHT)
        self._fit_columns()
        for column in range(2, len(COLUMNS)):
            self.comparison.setHeaderData(column, Qt.Orientation.Horizontal, NUMBER_ALIGNMENT,
                                          Qt.ItemDataRole.TextAlignmentRole)
        self.units = label(UNITS, "muted", self)
        self.units.setWordWrap(True)
        self._show_comparison(None)

        side = QScrollArea(self)  # on a short screen the settings scroll, the table stays
        side.setFrameShape(QFrame.Shape.NoFrame)
        side.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        side.setWidgetResizable(True)
        side.setFixedWidth(SETTINGS_WIDTH)
        inner = QWidget(side)
        left = QVBoxLayout(inner)
        left.setContentsMargins(0, 0, 4, 0)
        left.setSpacing(10)
        self._add_settings_and_estimate(left)
        left.addWidget(self.error)
        left.addStretch(1)
        side.setWidget(inner)
        right = QVBoxLayout()
        right.setSpacing(10)
        right.addWidget(self._section("Before and after, on the held-out responses"))
        right.addLayout(self.progress_row)
        right.addWidget(self.stopped)
        right.addWidget(self.raters)
        right.addWidget(self.table, 1)
        right.addWidget(self.units)
        columns = QHBoxLayout()
        columns.setSpacing(20)
        columns.addWidget(side)
        columns.addLayout(right, 1)
        fitted_layout(self, columns, self.buttons, (16, 16, 16, 14), 12)

        self.judge.currentTextChanged.connect(self._judge_chosen)
        for spin in (self.examples, self.holdout, self.seed.spin):
            spin.valueChanged.connect(self.schedule_estimate)
        self.reference.currentIndexChanged.connect(self.schedule_estimate)
        self.criteria.changed.connect(self.schedule_estimate)
        # The table, made before the form was laid out beside it, comes after the form's last
        # field and before the buttons.
        QWidget.setTabOrder(self.concurrency if self.key is None else self.key, self.table)
        # As tall as the screen allows, up to this (the table scrolls within it).
        self.resize(self.sizeHint().width(), PREFERRED_HEIGHT)
        self.update_estimate()
        self.judge.setFocus()

    def _name_examples(self, value: int) -> None:
        self.examples.setSuffix(" example" if value == 1 else " examples")

    def _fit_columns(self) -> None:
        """Columns as wide as the widest cells a comparison has in practice, and the table as
        wide as its columns: it never scrolls sideways."""
        cells, titles = self.table.fontMetrics(), self.table.horizontalHeader().fontMetrics()
        widths = [max(cells.horizontalAdvance(cell), titles.horizontalAdvance(title))
                  + CELL_PADDING for cell, title in zip(WIDEST_ROW, COLUMNS)]
        header = self.table.horizontalHeader()
        for column, width in enumerate(widths):
            header.resizeSection(column, width)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.setMinimumWidth(sum(widths) + self.table.verticalScrollBar().sizeHint().width()
                                   + 2 * self.table.frameWidth())

    # -- what a refinement would do ---------------------------------------------------------

    def chosen(self) -> refine.Settings:
        """The refinement the form asks for."""
        return refine.Settings(self.judge.currentText(), self.model_name(),
                               self.reference.currentData(), self.examples.value(),
                               self.holdout.value() / 100, self.seed.value(),
                               tuple(key for key in criterion_keys()
                                     if key in self.criteria.chosen()))

    @property
    def planning(self) -> bool:
        """A plan is on its way: a choice changed a moment ago, or the read is under way."""
        return self._reading or self.estimate_timer.isActive()

    def _judge_chosen(self, judge: str) -> None:
        """The model follows the judge, unless the user chose one of their own."""
        if self.model_name() == self._suggested:
            self.model.setCurrentText(suggested_model(judge))
        self._suggested = suggested_model(judge)
        self.schedule_estimate()

    def schedule_estimate(self) -> None:
        """Plan again a moment after a choice changed; not for a spin box that emits its
        value again on Enter (so that Enter runs what is shown)."""
        if not self.planning and self.plan is not None and self.chosen() == self.plan.settings:
            return
        super().schedule_estimate()
        self._planning_shown()

    def update_estimate(self) -> Worker | None:
        """Plan what the form asks for now, in the background; the newest plan is shown."""
        self.estimate_timer.stop()
        problem = self._problem()
        if problem is not None:
            self._reading = False
            self._show_plan(None, problem)
            return None
        assert self.prompts is not None
        worker = self.ops.read(partial(plan_refinement, self.chosen(), self.prompts),
                               self._planned, key=PLANNING, failed=self._not_planned)
        self._reading = worker is not None
        self._planning_shown()
        return worker

    def _problem(self) -> str | None:
        """Why nothing can be planned ("" when the note says so), or None."""
        if self.prompts is None:
            return self._prompt_problem
        if not self.judge.count():
            return ("This project has no language-model judge with verdicts to refine: run one "
                    "first (Judge ▸ Run judge…), or import its verdicts.")
        if not self.model_name():
            return ""
        return None

    def _planned(self, plan: RefinementPlan) -> None:
        if not self.closed:
            self._reading = False
            self._show_plan(plan, "")

    def _not_planned(self, error: BaseException) -> None:
        if not self.closed:
            self._reading = False
            reason = sentence(str(error)) if isinstance(error, ValueError) else explain(error)
            self._show_plan(None, f"Cannot plan this refinement: {reason}")

    def _planning_shown(self) -> None:
        """While a plan is on its way the one shown is greyed, and Run waits."""
        self.estimate.setEnabled(not self.planning)
        self._show_state()

    def _show_plan(self, plan: RefinementPlan | None, error: str) -> None:
        self.plan = plan
        if plan is None:
            for name in ESTIMATE_ROWS:
                self.estimate.set(name, "—" if name in ("Split", "Examples") else None)
        else:
            self.estimate.set("Split", plan.split_text())
            self.estimate.set("Examples", plan.examples_text())
            self.estimate.set("Before", plan.before_text())
            self.estimate.set("After", plan.after_text())
            self._show_calls(plan.estimate)
        self._say(error)
        self._planning_shown()

    def _readiness(self) -> tuple[bool, str]:
        """Run needs the newest plan, examples to give, and a key for the calls it makes."""
        plan = self.plan
        if self.judge.count() and not self.model_name():
            return False, "Enter the name of the model to refine with."
        if self.planning or plan is None:
            return False, ""
        if plan.refinement_id is None and not plan.examples:
            return False, ("Nothing to refine: there is no example to give. Aim at other "
                           "criteria, or choose another reference.")
        if not plan.pending:
            return True, ("Every verdict is stored already: Run makes no call, and shows the "
                          "comparison.")
        if not self.has_key():
            return False, "Enter an API key to run."
        return True, ""

    # -- the run ----------------------------------------------------------------------------

    def start(self) -> Worker | None:
        """Refine as the estimate shows (the newest plan: Run waits for it)."""
        plan = self.plan
        if self.worker is not None or plan is None or not self.run_button.isEnabled():
            return None
        return self._start_run("Refine judge", partial(refine_judge, plan,
                                                       self.concurrency.value(), self.key_for_the_run()),
                               self._finished, changes=lambda refined: refined.changes,
                               partial_changes=REFINED, failed="The refinement did not run.",
                               cancelled="The refinement was cancelled before it started.",
                               calls=plan.pending)

    def _finished(self, refined: Refined) -> None:
        self.refined = refined
        self._show_comparison(refined.comparison)
        stored = f"verdicts stored: {sum(run.done + run.failed for run in refined.runs):,}"
        self._show_stopped(refined.stopped, (
            f"Stopped early: cancelled. Nothing stored is lost ({stored}); running again asks "
            "only for the rest." if refined.stopped == StopReason.CANCELLED else
            f"Stopped early: {refined.stopped}\nNothing stored is lost ({stored}); running "
            "again asks only for the rest."))
        fit_screen(self)  # as tall as the banner, where the screen has room
        self.ops.say(f"Refinement of {refined.plan.judge} stopped: {refined.stopped}"
                     if refined.stopped else
                     f"Refined {refined.plan.judge} as {refined.plan.after.rater}: measured on "
                     f"{count(len(refined.plan.split.heldout), 'held-out response')}")
        self.update_estimate()  # the plan as stored now: nothing left to call

    def _show_comparison(self, comparison: Comparison | None) -> None:
        """The table of ``comparison`` (plain text cells, in its order), or an empty one."""
        self.comparison.setRowCount(0)
        if comparison is None:
            self.raters.setText("Run judges the held-out responses before and after the "
                                "examples, then measures both against the reference here.")
            return
        self.raters.setText(f"Before: {comparison.before}\nAfter: {comparison.after}\nEach "
                            f"against {comparison.reference}, on "
                            f"{count(comparison.heldout, 'held-out response')}.")
        for row in comparison.rows:
            cells = [QStandardItem(row.title), QStandardItem(row.criterion)]
            for estimate, text in zip((row.before, row.after, row.difference), row.texts()):
                cell = QStandardItem(text)
                cell.setToolTip(estimate.reason or "")
                cells.append(cell)
            cells.append(QStandardItem(f"{row.difference.n:,}"))
            for cell in cells[2:]:
                cell.setTextAlignment(NUMBER_ALIGNMENT)
            self.comparison.appendRow(cells)
        self.table.resizeColumnsToContents()
