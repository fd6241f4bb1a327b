"""The dialogs that call a judge model, and the Run judge dialog: choose a model and which
responses to judge, see what it will cost, run it off the GUI thread, and see what it did.

:class:`JudgeCallsDialog` is what they share (the Refine judge dialog,
:mod:`physgrade_ui.refine_dialog`, is the other): the API key row, the estimate card, a run
through the operations with its progress and Cancel, the banner of a run that stopped early,
and closing that stops a run first.

Run judge's estimate is the core's :func:`~physgrade.judge.verdicts.plan`, made on the GUI
thread with the window's connection (it only reads, in a few indexed queries); the run itself is
:func:`run_judge` (the core's :func:`~physgrade.judge.purposes.run_plan`), a long run of the
operations whose progress the dialog shows itself. Verdicts are stored as they arrive, so even
a run that stops early broadcasts what it stored. The API key row says where the key comes from
(:func:`~physgrade.judge.credentials.find`); a key typed here lives in the line edit and the
run's arguments only, unless the user asks to remember it in the system keyring: it is never
written to the settings, the project or a log.
"""

from __future__ import annotations

import os
from functools import partial
from typing import Any, Callable

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from physgrade import facets
from physgrade.changes import Changes, RecordKind
from physgrade.judge import credentials, verdicts
from physgrade.judge.client import connect
from physgrade.judge.pricing import Price, dollars, known_models, price_for
from physgrade.judge.prompts import PromptError, Prompts, for_project
from physgrade.judge.purposes import run_plan
from physgrade.judge.runner import DEFAULT_CONCURRENCY, Estimate, Plan, RunSummary, StopReason
from physgrade.judge.scope import Scope
from physgrade.project import Project
from physgrade.selection import RESPONSE_FACETS, ResponseFilter, filter_choices
from physgrade.tasks import Task
from physgrade.wording import count
from physgrade_ui import preferences, style
from physgrade_ui.dialogs import fit_screen, fitted_layout
from physgrade_ui.facet_bar import DeclaredFacets
from physgrade_ui.operations import Operations
from physgrade_ui.widgets import FacetButton, label
from physgrade_ui.workers import Worker

DEFAULT_MODEL = preferences.JUDGE_MODEL.default
MAX_CONCURRENCY = 32
MAX_LIMIT = 1_000_000
#: The estimate waits for typing to pause this long (milliseconds) before planning again.
ESTIMATE_DELAY_MS = 250
#: The response facets a judge run can be narrowed by: ResponseFilter field and button title.
FACETS = tuple((facet.key, facet.title) for facet in RESPONSE_FACETS)
BASE_URL_VARIABLE = "ANTHROPIC_BASE_URL"
BANNER = ("QLabel {{ background: {background}; color: {color}; border: 1px solid {color}; "
          "border-radius: 4px; padding: 8px 10px; }}")
#: What a judge run stores: verdicts, and the judge as a rater.
JUDGED = Changes.of(RecordKind.SCORES, RecordKind.RATERS)


def run_judge(plan: Plan, prompts: Prompts, price: Price | None, concurrency: int,
              api_key: str | None, project: Project, task: Task) -> RunSummary:
    """Judge ``plan`` (on a worker); ``api_key`` None means the key found where
    :func:`~physgrade.judge.credentials.find` looks."""
    return run_plan(project, connect(api_key=api_key), plan, prompts, price, concurrency, task)


def cost_text(amount: float | None, price: Price | None) -> str:
    if amount is None or price is None:
        return f"cost {dollars(None)}"
    if amount == 0:
        return "nothing"
    return f"{dollars(amount)} (at ${price.input:g} in, ${price.output:g} out per million tokens)"


class Facts(QFrame):
    """A card of name–value rows (the estimate, the last run), names muted, values selectable."""

    def __init__(self, names: tuple[str, ...], parent: QWidget | None = None,
                 name_width: int = 0) -> None:
        super().__init__(parent)
        self.setProperty("role", "card")
        grid = QGridLayout(self)
        grid.setContentsMargins(14, 10, 14, 10)
        grid.setHorizontalSpacing(18)
        grid.setVerticalSpacing(6)
        grid.setColumnStretch(1, 1)
        grid.setColumnMinimumWidth(0, name_width)  # cards one above the other line up
        self.values: dict[str, QLabel] = {}
        self._names: dict[str, QLabel] = {}
        for row, name in enumerate(names):
            title = label(name, "muted", self)
            value = label("", None, self)
            value.setWordWrap(True)
            value.setTextFormat(Qt.TextFormat.PlainText)  # names and messages are data
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            grid.addWidget(title, row, 0, Qt.AlignmentFlag.AlignTop)
            grid.addWidget(value, row, 1)
            self._names[name], self.values[name] = title, value

    def set(self, name: str, text: str | None) -> None:
        """Show ``text`` against ``name``; None hides the row."""
        self._names[name].setVisible(text is not None)
        self.values[name].setVisible(text is not None)
        self.values[name].setText(text or "")


class JudgeCallsDialog(QDialog):
    """What the dialogs that call a judge model share: the settings form with its concurrency
    and API key rows, the estimate card, a run through the operations with its progress and
    Cancel, the banner of a run that stopped early, and closing that stops a run first.

    A subclass adds its own rows to :attr:`form`, then calls :meth:`_add_run_parts` (so that
    the keyboard meets its rows first), lays the parts out, and says in :meth:`_readiness`
    whether Run can start; :attr:`estimate_timer` calls its ``update_estimate``."""

    #: what a run is called where the user is asked to stop it
    RUN_NAME = "judge run"

    def __init__(self, ops: Operations, title: str, estimate_rows: tuple[str, ...],
                 name_rows: tuple[str, ...], parent: QWidget | None = None,
                 prompts: Prompts | None = None) -> None:
        super().__init__(parent)
        self.ops = ops
        self.worker: Worker | None = None
        #: set as the dialog closes: a read that returns later must leave it alone
        self.closed = False
        self._close_when_stopped = False
        self.setWindowTitle(title)
        try:
            self.prompts: Prompts | None = prompts or (
                for_project(ops.project) if ops.project else Prompts.load())
            self._prompt_problem = ""
        except PromptError as exc:
            self.prompts, self._prompt_problem = None, f"The judge prompts cannot be used: {exc}"

        self.settings = QWidget(self)
        self.form = QFormLayout(self.settings)
        self.form.setContentsMargins(0, 0, 0, 0)
        self.form.setHorizontalSpacing(14)
        self.form.setVerticalSpacing(10)
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)

        #: the width of the widest row name, so that cards one above the other line up
        self.name_width = max(self.fontMetrics().horizontalAdvance(name) for name in name_rows)
        self.estimate = Facts(estimate_rows, self, self.name_width)
        self.estimate_note = label("", "muted", self)
        self.estimate_note.setWordWrap(True)
        self.progress = QProgressBar(self)
        self.progress.setTextVisible(False)
        self.progress_text = label("", "muted", self)
        self.progress_row = QHBoxLayout()
        self.progress_row.setSpacing(10)
        self.progress_row.addWidget(self.progress, 1)
        self.progress_row.addWidget(self.progress_text)
        self.stopped = label("", None, self)
        self.stopped.setWordWrap(True)
        self.stopped.setTextFormat(Qt.TextFormat.PlainText)  # the API's message, as it came
        self.stopped.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error = label("", "error", self)
        self.error.setWordWrap(True)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.estimate_timer = QTimer(self)
        self.estimate_timer.setSingleShot(True)
        self.estimate_timer.setInterval(ESTIMATE_DELAY_MS)
        self.estimate_timer.timeout.connect(self.update_estimate)

    def _model_combo(self, model: str) -> QComboBox:
        """The model that judges: the priced models offered, any other name typed."""
        self.model = QComboBox(self.settings)
        self.model.setEditable(True)
        self.model.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.model.addItems(known_models())
        self.model.setCurrentText(model)
        self.model.setToolTip("The model that judges: one of the priced models, or any other "
                              "model name the API accepts")
        line = self.model.lineEdit()
        assert line is not None  # an editable combo box has one
        line.setPlaceholderText("model name")
        self.model.currentTextChanged.connect(self.schedule_estimate)
        return self.model

    def _add_run_parts(self) -> None:
        """The form's last rows (concurrency, the API key, the endpoint), and the buttons."""
        self.concurrency = QSpinBox(self.settings)
        self.concurrency.setRange(1, MAX_CONCURRENCY)
        self.concurrency.setValue(DEFAULT_CONCURRENCY)
        self.concurrency.valueChanged.connect(self._name_concurrency)
        self._name_concurrency(DEFAULT_CONCURRENCY)
        self.concurrency.setToolTip("More calls at a time finish sooner, until the API's rate "
                                    "limits slow them down")
        self.form.addRow(self._buddy("&Concurrency", self.concurrency), self.concurrency)

        self.key: QLineEdit | None = None
        self.remember_key: QCheckBox | None = None
        found = credentials.find()
        if found is not None:
            self.form.addRow(label("API key", None, self.settings),
                             label(found.source, "muted", self.settings))
        else:
            self.key = QLineEdit(self.settings)
            self.key.setEchoMode(QLineEdit.EchoMode.Password)
            self.key.setPlaceholderText("kept in memory for this run only, unless remembered")
            self.key.setToolTip(f"Or set {credentials.KEY_VARIABLE} before starting physgrade")
            self.key.textChanged.connect(self._show_state)
            self.form.addRow(self._buddy("API &key", self.key), self.key)
            self.remember_key = QCheckBox("Remember the key in the system &keyring",
                                          self.settings)
            self.remember_key.setToolTip("The next start finds it there; File ▸ Settings… "
                                         "forgets it")
            self.keyring_note = label("", "muted", self.settings)
            self.keyring_note.setWordWrap(True)
            self.keyring_note.hide()
            self.remember_key.toggled.connect(self._show_keyring_note)
            self.form.addRow("", self.remember_key)
            self.form.addRow("", self.keyring_note)
        endpoint = os.environ.get(BASE_URL_VARIABLE)
        if endpoint:
            shown = label(endpoint, "muted", self.settings)
            shown.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.form.addRow(label("Endpoint", None, self.settings), shown)

        self.buttons = QDialogButtonBox(self)
        self.run_button = QPushButton("&Run", self)
        self.run_button.setDefault(True)
        self.run_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Cancel run", self)
        self.cancel_button.setAutoDefault(False)  # Enter must not stop a run by accident
        self.cancel_button.clicked.connect(self.cancel)
        self.close_button = QPushButton("Close", self)
        self.close_button.setAutoDefault(False)
        self.close_button.clicked.connect(self.reject)
        self.buttons.addButton(self.run_button, QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.addButton(self.cancel_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.buttons.addButton(self.close_button, QDialogButtonBox.ButtonRole.RejectRole)
        for widget in (self.progress, self.progress_text, self.stopped, self.error,
                       self.cancel_button):
            widget.hide()
        self.ops.busy_changed.connect(self._show_state)  # another run under way holds Run back

    def _add_limit_and_retry(self, unit: str, limit_tip: str, retry_text: str,
                             retry_tip: str) -> None:
        """The form's Limit box (0: all of ``unit``) and its box to ask again where an earlier
        answer did not fit, then the rows every run has (concurrency, the key)."""
        self.limit = QSpinBox(self.settings)
        self.limit.setRange(0, MAX_LIMIT)
        self.limit.setSpecialValueText("all")
        self.limit.setSuffix(f" {unit}")
        self.limit.setGroupSeparatorShown(True)
        self.limit.setToolTip(limit_tip)
        self.form.addRow(self._buddy("&Limit", self.limit), self.limit)
        self.retry_failed = QCheckBox(retry_text, self.settings)
        self.retry_failed.setToolTip(retry_tip)
        self.form.addRow("", self.retry_failed)
        self._add_run_parts()
        for spin in (self.limit, self.concurrency):
            spin.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
            spin.setMinimumWidth(190)

    def _lay_out(self, summary_rows: tuple[str, ...], above: QWidget | None = None) -> None:
        """``above`` (an introduction), the form and the estimate, the progress, the last run's
        facts and any error, scrolling above the buttons; then the first estimate, with the
        keyboard on the model."""
        self.summary_title = self._section("Last run")
        self.summary_view = Facts(summary_rows, self, self.name_width)
        parts = QVBoxLayout()
        parts.setSpacing(10)
        if above is not None:
            parts.addWidget(above)
        self._add_settings_and_estimate(parts)
        parts.addLayout(self.progress_row)
        parts.addWidget(self.summary_title)
        parts.addWidget(self.stopped)
        parts.addWidget(self.summary_view)
        parts.addWidget(self.error)
        parts.addStretch(1)
        #: everything but the buttons: it scrolls where the screen is too short for it
        self.content = fitted_layout(self, parts, self.buttons, spacing=10)

        self.limit.valueChanged.connect(self.schedule_estimate)
        self.retry_failed.toggled.connect(self.schedule_estimate)
        self.summary_title.hide()
        self.summary_view.hide()
        self.update_estimate()
        self.model.setFocus()

    def _show_plan_counts(self, plan: Plan) -> None:
        """The estimate's rows on what is done already: cached, failed, waiting in batches."""
        self.estimate.set("Already done", f"{plan.cached:,}")
        self.estimate.set("Failed before", (
            f"{plan.failed_before:,} (not asked again unless the box above is ticked)"
            if plan.failed_before else None))
        self.estimate.set("In batches", (f"{plan.in_batches:,} waiting in submitted batches"
                                         if plan.in_batches else None))

    def _plan_with(self, make: Callable[[Project, str], Plan]) -> Plan | None:
        """``make(project, model)``, the plan the form asks for, or None with the reason said
        (no prompts, no model named, no project, a plan the core refuses)."""
        model = self.model_name()
        if self.prompts is None:
            self._say(self._prompt_problem)
            return None
        if not model or self.ops.project is None:  # the project goes when the window closes
            self._say("")
            return None
        try:
            plan = make(self.ops.project, model)
        except Exception as exc:  # a scope or project the core refuses: say why, stay open
            self._say(f"Cannot estimate this run: {exc}")
            return None
        self._say("")
        return plan

    def _add_settings_and_estimate(self, layout: QVBoxLayout) -> None:
        """The form, then the estimate card and its note, one above the other."""
        layout.addWidget(self.settings)
        layout.addSpacing(4)
        layout.addWidget(self._section("Estimate"))
        layout.addWidget(self.estimate)
        layout.addWidget(self.estimate_note)

    def _name_concurrency(self, value: int) -> None:
        self.concurrency.setSuffix(" call at a time" if value == 1 else " calls at a time")

    def _section(self, text: str) -> QLabel:
        title = label(text, "section", self)
        title.setIndent(0)  # the role's padding would otherwise indent it off the cards' edge
        return title

    def _buddy(self, text: str, widget: QWidget) -> QLabel:
        """A form label whose mnemonic (Alt+letter) moves the focus to ``widget``."""
        title = label(text, None, self.settings)
        title.setBuddy(widget)
        return title

    # -- what a run would do ----------------------------------------------------------------

    def model_name(self) -> str:
        return self.model.currentText().strip()

    def key_for_the_run(self) -> str | None:
        """The key for the run about to start: the one typed here (remembered first where the
        box asks), or None for the one found (read when the run starts)."""
        if self.key is None:
            return None
        typed = self.key.text().strip() or None
        if typed and self.remember_key is not None and self.remember_key.isChecked():
            problem = credentials.remember(typed)
            if problem:
                self._show_keyring_note(True, problem)
        return typed

    def _show_keyring_note(self, remember: bool, problem: str | None = None) -> None:
        """Where the system has no keyring, say so as soon as the user asks to remember."""
        if problem is None and remember and not credentials.has_keyring():
            problem = credentials.NO_KEYRING
        note = f"{problem[0].upper()}{problem[1:]}." if remember and problem else ""
        self.keyring_note.setText(note)
        self.keyring_note.setVisible(bool(note))

    def has_key(self) -> bool:
        """A key to call with: the environment's, or one typed here."""
        return self.key is None or bool(self.key.text().strip())

    def schedule_estimate(self) -> None:
        """Plan again once the user pauses, not at every keystroke of a model name."""
        self.estimate_timer.start()

    def update_estimate(self) -> object:
        """Plan the run the form asks for now and show what it would do and cost."""
        raise NotImplementedError

    def start(self) -> Worker | None:
        """Run what the estimate shows."""
        raise NotImplementedError

    def _readiness(self) -> tuple[bool, str]:
        """Whether Run can start (no run being under way), and a note that says what is
        missing or what Run will do ("" for none)."""
        raise NotImplementedError

    def _show_calls(self, estimate: Estimate) -> None:
        """The tokens and cost of the calls ``estimate`` counts."""
        if not estimate.calls:
            self.estimate.set("Tokens", "none: no call to make")
            self.estimate.set("Cost", "nothing")
            return
        self.estimate.set("Tokens", f"about {estimate.input_tokens:,} in, "
                                    f"{estimate.output_tokens:,} out")
        self.estimate.set("Cost", ("about " if estimate.price else "")
                          + cost_text(estimate.cost, estimate.price))

    def _say(self, error: str) -> None:
        self.error.setText(error)
        self.error.setVisible(bool(error))

    def _show_state(self) -> None:
        """Run is enabled when the form is ready and no run is under way, here or elsewhere in
        the app; nothing can be changed while a run is under way."""
        running = self.worker is not None
        ready, note = self._readiness()
        self.run_button.setEnabled(not running and not self.ops.busy and ready)
        self.settings.setEnabled(not running)
        self.cancel_button.setVisible(running)
        note = "" if running else note
        self.estimate_note.setText(note)
        self.estimate_note.setVisible(bool(note))

    # -- the run ----------------------------------------------------------------------------

    def _start_run(self, title: str, work: Callable[[Project, Task], Any],
                   done: Callable[[Any], None], changes: Callable[[Any], Changes],
                   partial_changes: Changes, failed: str, cancelled: str,
                   calls: int) -> Worker | None:
        """Run ``work`` (``calls`` calls) through the operations, its progress shown here; what
        a stopped run stored (``partial_changes``) is broadcast all the same."""
        self.worker = self.ops.run(title, work, done, changes=changes,
                                   partial_changes=partial_changes, failed=failed,
                                   cancelled=cancelled, progress_dialog=False)
        if self.worker is None:
            return None
        self.worker.progress.connect(self._show_progress)
        for outcome in (self.worker.finished, self.worker.failed, self.worker.cancelled):
            outcome.connect(self._idle)
        self._say("")
        self.cancel_button.setText("Cancel run")
        self.cancel_button.setEnabled(True)
        self.progress.setRange(0, calls)
        self.progress.setValue(0)
        self.progress_text.setText(f"0 of {calls:,}")
        self.progress.show()
        self.progress_text.show()
        self._show_state()
        self.cancel_button.setFocus()
        return self.worker

    def cancel(self) -> None:
        """Stop sending calls; the answers already on their way are still stored."""
        if self.worker is None:
            return
        self.worker.cancel()
        self.cancel_button.setText("Stopping…")
        self.cancel_button.setEnabled(False)
        self.progress_text.setText("stopping: storing the answers on their way…")

    def _show_progress(self, done: int, total: int, stage: str) -> None:
        self.progress.setRange(0, max(total, 0))
        self.progress.setValue(min(done, total) if total > 0 else 0)
        if self.cancel_button.isEnabled():  # "stopping…" stays until the run ends
            self.progress_text.setText(f"{stage}: {done:,} of {total:,}" if total >= 0
                                       else stage)

    def _idle(self) -> None:
        self.worker = None
        self.progress.hide()
        self.progress_text.hide()
        self._show_state()
        (self.run_button if self.run_button.isEnabled() else self.close_button).setFocus()
        if self._close_when_stopped:
            self._close_when_stopped = False
            self.reject()

    def _show_stopped(self, reason: str | None, text: str = "") -> None:
        """The banner of a run that stopped early for ``reason`` (amber when cancelled, red
        otherwise), saying ``text``; hidden for None."""
        if reason is None:
            self.stopped.hide()
            return
        colour, background = ((style.WARN, style.WARN_BACKGROUND) if reason == StopReason.CANCELLED
                              else (style.BAD, style.BAD_BACKGROUND))
        self.stopped.setStyleSheet(BANNER.format(color=colour, background=background))
        self.stopped.setText(text)
        self.stopped.show()

    # -- closing ----------------------------------------------------------------------------

    def reject(self) -> None:
        """Close (Escape, Close, the title bar's button); a run under way is stopped first,
        after the user agrees, and the dialog closes once its answers in flight are stored."""
        if self.worker is None:
            self._closing()
            super().reject()
            return
        if self._close_when_stopped or self._confirm_stop():
            self._close_when_stopped = True
            self.cancel()

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.worker is None:
            self._closing()
            event.accept()
            return
        event.ignore()
        self.reject()

    def _confirm_stop(self) -> bool:
        answer = QMessageBox.question(
            self, f"Stop the {self.RUN_NAME}?", f"A {self.RUN_NAME} is under way. Stop it and "
            "close? The answers already on their way are still stored.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def _closing(self) -> None:
        """The dialog goes, and the key typed in it with it."""
        self.closed = True
        if self.key is not None:
            self.key.clear()


ESTIMATE_ROWS = ("Judge", "Calls to make", "Already done", "Failed before", "In batches",
                 "Tokens", "Cost")
SUMMARY_ROWS = ("Judge", "Stored", "Already done", "Failed", "Not answered", "Tokens", "Cost",
                "Problems")


class RunJudgeDialog(JudgeCallsDialog):
    """Run an LLM judge on the responses of the open project; ``judged`` carries each run's
    :class:`RunSummary` once it has stored what it got, so the window can say so."""

    judged = Signal(object)

    def __init__(self, ops: Operations, parent: QWidget | None = None,
                 prompts: Prompts | None = None) -> None:
        super().__init__(ops, "Run judge", ESTIMATE_ROWS, ESTIMATE_ROWS + SUMMARY_ROWS, parent,
                         prompts)
        self.plan: Plan | None = None
        self.summary: RunSummary | None = None
        self.setMinimumWidth(620)
        form = self.form
        model = self._model_combo(preferences.JUDGE_MODEL.get())
        form.addRow(self._buddy("&Judge model", model), model)
        self.run_label = QLineEdit(self.settings)
        self.run_label.setPlaceholderText("none: the judge's own run")
        self.run_label.setToolTip(
            "Optional. A further run of the same judge and prompt, named by this label (e.g. 2), "
            "is a rater of its own: it asks every response again, so that the report can say how "
            "far two runs agree")
        self.run_label.textChanged.connect(self.schedule_estimate)
        form.addRow(self._buddy("Run la&bel", self.run_label), self.run_label)

        buttons = QHBoxLayout()
        buttons.setSpacing(6)
        self.facets: dict[str, FacetButton] = {}
        assert ops.project is not None
        choices = filter_choices(ops.project)
        for key, title in FACETS:
            button = FacetButton(title, self.settings)
            button.set_values(getattr(choices, key), frozenset())
            button.changed.connect(self.schedule_estimate)
            self.facets[key] = button
            buttons.addWidget(button)
        # The project's declared facets (language, subject...), after the built-in ones.
        self.declared = DeclaredFacets(parent=self.settings)
        self.declared.set_values(facets.choices(ops.project))
        self.declared.changed.connect(self.schedule_estimate)
        buttons.addWidget(self.declared)
        form.addRow(label("Responses", None, self.settings), buttons)

        self._add_limit_and_retry(
            "responses", "Judge at most this many of the responses still to do (0: all of them)",
            "&Ask again where the judge's answer did not fit the rubric",
            "Responses whose earlier verdict from this model was kept as failed are otherwise "
            "left alone")
        self._lay_out(SUMMARY_ROWS)

    # -- what a run would do ----------------------------------------------------------------

    def scope(self) -> Scope:
        """The responses the form asks for."""
        chosen = ResponseFilter.of({key: button.chosen() for key, button in self.facets.items()},
                                   self.declared.chosen())
        return Scope(chosen, self.limit.value() or None, self.retry_failed.isChecked())

    def update_estimate(self) -> Plan | None:
        """Plan the run the form asks for now and show what it would do and cost."""
        self.estimate_timer.stop()
        self.plan = self._make_plan()
        plan = self.plan
        if plan is None:
            for name in ESTIMATE_ROWS:
                self.estimate.set(name, "—" if name in ("Judge", "Calls to make") else None)
        else:
            self.estimate.set("Judge", plan.rater)
            self.estimate.set("Calls to make", f"{plan.estimate.calls:,}")
            self._show_plan_counts(plan)
            self._show_calls(plan.estimate)
        self._show_state()
        return plan

    def _make_plan(self) -> Plan | None:
        def make(project: Project, model: str) -> Plan:
            assert self.prompts is not None
            return verdicts.plan(project, model, self.prompts, self.scope(), price_for(model),
                                 run=self.run_label.text())

        return self._plan_with(make)

    def _readiness(self) -> tuple[bool, str]:
        """Run needs calls to make and a key to make them with."""
        has_key = self.has_key()
        to_do = self.plan is not None and bool(self.plan.pending)
        if self.model_name() == "":
            note = "Enter the name of the model to judge with."
        elif self.plan is not None and not self.plan.pending:
            note = "Nothing to do: every response in scope has a verdict from this judge."
        elif not has_key:
            note = "Enter an API key to run."
        else:
            note = ""
        return to_do and has_key, note

    # -- the run ----------------------------------------------------------------------------

    def start(self) -> Worker | None:
        """Run the judge on what the form asks for now (planned afresh, so a change made in
        the last quarter second counts)."""
        if self.worker is not None:
            return None
        plan = self.update_estimate()
        if plan is None or not plan.pending or not self.run_button.isEnabled():
            return None
        assert self.prompts is not None
        work = partial(run_judge, plan, self.prompts, plan.estimate.price,
                       self.concurrency.value(), self.key_for_the_run())
        return self._start_run("Run judge", work, self._finished,
                               changes=lambda summary: summary.changes, partial_changes=JUDGED,
                               failed="The judge did not run.",
                               cancelled="The judge run was cancelled before it started.",
                               calls=len(plan.pending))

    def _finished(self, summary: RunSummary) -> None:
        self.summary = summary
        self._show_summary(summary)
        self.update_estimate()
        self.judged.emit(summary)

    def _show_summary(self, summary: RunSummary) -> None:
        view = self.summary_view
        view.set("Judge", summary.plan.rater)
        view.set("Stored", count(summary.done, "verdict"))
        view.set("Already done", f"{summary.plan.cached:,}")
        view.set("Failed", f"{summary.failed:,} (the judge's answer did not fit the rubric; "
                           "kept raw)" if summary.failed else "0")
        view.set("Not answered", f"{summary.errors:,} (a new run asks again)" if summary.errors
                 else "0")
        view.set("Tokens", f"{summary.usage.input_tokens:,} in, "
                           f"{summary.usage.output_tokens:,} out")
        view.set("Cost", cost_text(summary.usage.cost(summary.price), summary.price))
        view.set("Problems", "\n".join(summary.problems) if summary.problems else None)
        self.summary_title.show()
        view.show()
        self._show_stopped(summary.stopped, (
            f"Stopped early: cancelled. The {count(summary.done + summary.failed, 'answer')} "
            "that arrived are stored; a new run picks up the rest."
            if summary.stopped == StopReason.CANCELLED else f"Stopped early: {summary.stopped}"))
        fit_screen(self)  # as tall as the last run's card and banner, where the screen has room
