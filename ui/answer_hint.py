"""The rules' hint beside the ANS criterion: what the answer checker makes of the final answer.

A hint only: it never scores, takes no focus and leaves the panel's keys alone. Its source is
the ``rules`` rater's stored check when ``physgrade verify`` has been run, else a live check of
the response against the question's reference answer, run off the GUI thread (as a read of
:class:`~physgrade_ui.operations.Operations`) by one :class:`~physgrade.answers.sandbox.Checker`
that the workbench keeps for as long as the window is open. The checker is created on the
worker thread at first use, so neither it nor sympy and pint (which only its worker processes
import) cost the app anything at start-up.

A hint that is wrong biases the grader, so it shows a mark only for a verdict the rules are sure
of (✓ equivalent, ✗ not equivalent); "not checked", "no answer found", an unreadable answer and a
timeout carry none. In blind studies the grader may keep the hint hidden until they have scored
ANS themselves (:data:`~physgrade_ui.preferences.HINT_AFTER_ANSWER`).
"""

from __future__ import annotations

import html
from functools import partial

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from physgrade.answers import tolerance
from physgrade.answers.outcome import Check, Outcome, Settings
from physgrade.answers.sandbox import Checker, Request
from physgrade.answers.verify import request_for, stored
from physgrade.grading import GradingItem
from physgrade.project import Project
from physgrade.rubric import FINAL_ANSWER
from physgrade.tasks import Task
from physgrade_ui import preferences, style
from physgrade_ui.operations import Operations
from physgrade_ui.workers import Worker

BAD = "#b3261e"  # the style's error colour, kept to the one-character mark
MARKS = {Outcome.EQUIVALENT: ("✓", style.GOOD), Outcome.NOT_EQUIVALENT: ("✗", BAD)}
CHECKING = "checking…"
HIDDEN = "hidden until you score ANS"


def summary(check: Check) -> str:
    """The hint's line after "Rules:", e.g. "equivalent — 15.2 m/s vs 15.0 m/s: 1.3% within 2%"."""
    if check.outcome is Outcome.EQUIVALENT:
        return f"equivalent — {check.reason}"
    if check.outcome is Outcome.NOT_EQUIVALENT:
        return f"not equivalent — {check.reason}"
    if check.outcome is Outcome.NOT_CHECKED:
        return f"not checked — {check.reason}"
    if check.outcome is Outcome.NO_ANSWER:
        return "no answer found"
    if check.outcome is Outcome.UNPARSEABLE:
        return f"could not be read: {check.reason}"
    return "timed out"


def details(check: Check, gold: str, was_stored: bool) -> str:
    """The tooltip: where the check comes from, the answer found, the full reason."""
    source = ("stored by <i>physgrade verify</i>" if was_stored
              else "checked now, not stored")
    rows = [("Outcome", check.outcome.value.replace("_", " ")), ("Reason", check.reason),
            ("Answer found", check.answer if check.answer is not None else "none"),
            ("Reference", gold)]
    lines = [f"<b>Rules</b> — {source}"]
    lines += [f"{name}: {html.escape(value)}" for name, value in rows]
    lines.append("<i>A hint only: it never sets a score.</i>")
    return "<p style='white-space:pre-wrap'>" + "<br>".join(lines) + "</p>"


class AnswerHint(QWidget):
    """"Rules: ✓ equivalent — …" in muted text, the details in its tooltip; hidden when idle.

    The text wraps rather than ends in "…": its reason (e.g. a dimension or a direction that
    differs) is what the grader reads it for, and a narrow rubric panel would cut it first.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setAccessibleName("Rule-based check of the final answer (a hint, never a score)")
        self.mark = ""
        self.prefix = QLabel()
        self.prefix.setProperty("role", "muted")
        self.prefix.setTextFormat(Qt.TextFormat.RichText)
        self.prefix.setTextInteractionFlags(Qt.TextInteractionFlag.NoTextInteraction)
        self.text = QLabel()
        self.text.setProperty("role", "muted")
        self.text.setTextFormat(Qt.TextFormat.PlainText)
        self.text.setWordWrap(True)
        for part in (self.prefix, self.text):
            part.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.prefix, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.text, 1)
        self.hide()

    @property
    def line(self) -> str:
        """The whole hint as one line, as a reader reads it (e.g. for tests)."""
        return f"Rules: {self.mark + ' ' if self.mark else ''}{self.text.text()}"

    def show_check(self, check: Check, gold: str, was_stored: bool) -> None:
        mark, colour = MARKS.get(check.outcome, ("", ""))
        self._show(mark, colour, summary(check), details(check, gold, was_stored))

    def show_checking(self) -> None:
        self._show("", "", CHECKING, "The rules are checking the final answer against the "
                   "reference answer. A hint only: it never sets a score.")

    def show_hidden(self) -> None:
        self._show("", "", HIDDEN, "The rules' check of the final answer stays hidden until you "
                   "have scored ANS (the preference “Hide the Rules Hint Until ANS Is Scored”).")

    def show_failure(self, error: BaseException) -> None:
        reason = f"{type(error).__name__}: {error}"
        self._show("", "", f"could not check: {reason}", html.escape(reason))

    def clear(self) -> None:
        self.hide()

    def _show(self, mark: str, colour: str, text: str, tooltip: str) -> None:
        self.mark = mark
        self.prefix.setText("Rules:" + (f" <span style='color:{colour}'>{mark}</span>"
                                        if mark else ""))
        self.text.setText(text)
        self.setToolTip(tooltip)
        self.show()


class AnswerHints(QObject):
    """Where the hint's check comes from: stored, checked earlier this session, or checked now.

    At most one check runs at a time; moving on while it runs queues only the response now on
    show, and a result is shown only if its response is still the one on show.
    """

    #: a check's result is on show for this response id (stored, remembered or just checked)
    shown = Signal(str)

    def __init__(self, ops: Operations, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.ops = ops
        self.view = AnswerHint()
        self.checker: Checker | None = None  # made on the worker thread at first use
        #: the rules' settings, at the project's tolerance (the checks known were made under them)
        self.settings = Settings()
        self.worker: Worker | None = None  # the check under way (a read the operations run)
        self.checks: dict[str, Check] = {}  # live checks of this project session, by response
        self._session = 0  # a new project (or a re-read one) starts a new session
        self._current: tuple[int, str] | None = None
        self._running: tuple[int, str] | None = None
        self._next: tuple[tuple[int, str], Request] | None = None
        self._stopped = False

    def show(self, project: Project, item: GradingItem) -> None:
        """Put the hint for ``item`` on show, starting a live check if nothing is known yet.

        With :data:`~physgrade_ui.preferences.HINT_AFTER_ANSWER` on, a response whose ANS the
        grader has not scored shows only that the hint is hidden, and starts no check (nor shows
        one that comes back meanwhile); the page calls this again after every score.
        """
        self._follow_project(project)
        key = (self._session, item.response_id)
        self._current = key
        gold = item.question.answer
        request = request_for(project, item.response_id)
        if request is None:
            self.view.clear()
            return
        assert gold is not None  # a request is made only where the question has a reference answer
        if preferences.HINT_AFTER_ANSWER.get() and FINAL_ANSWER not in item.mine:
            self._current = self._next = None  # a check under way keeps its result for later
            self.view.show_hidden()
            return
        found = stored(project, item.response_id, self.settings)
        if found is not None:
            self._present(found, gold, True)
        elif item.response_id in self.checks:
            self._present(self.checks[item.response_id], gold, False)
        elif self._stopped:
            self.view.clear()
        else:
            self.view.show_checking()
            if self.worker is None:
                self._start(key, request)
            elif self._running == key:
                self._next = None
            else:
                self._next = (key, request)

    def _follow_project(self, project: Project) -> None:
        """A tolerance changed in the project's settings (the one answer tolerance the rules
        rater and the judge prompt use too) makes the checks known so far stale: a new
        session, whose checks (and checker) use it."""
        settings = tolerance.settings(project)
        if settings != self.settings:
            self.settings = settings
            self._session += 1
            self.checks.clear()

    def show_nothing(self) -> None:
        """No response on show: no hint, nor one that comes back for the response shown last."""
        self._current = self._next = None
        self.view.clear()

    def reset(self) -> None:
        """The project was closed or re-read: forget its checks and show nothing."""
        self._session += 1
        self.checks.clear()
        self._current = self._next = None
        self.view.clear()

    def stop(self) -> None:
        """Let a check under way end (it is bounded by the checker's time limit), then close
        the checker and its worker processes. Called when the window closes."""
        self._stopped = True
        self._next = None
        if self.worker is not None:
            self.worker.wait()
        if self.checker is not None:
            self.checker.close()
            self.checker = None

    # -- the check, off the GUI thread -----------------------------------------------------

    def _start(self, key: tuple[int, str], request: Request) -> None:
        self._running = key
        self.worker = self.ops.read(partial(self._check, request, self.settings),
                                    partial(self._done, key, request), key=self,
                                    failed=partial(self._failed, key), needs_project=False)

    def _check(self, request: Request, settings: Settings, project: None, task: Task) -> Check:
        """On the worker thread: the one checker is made here, never on the GUI thread (and
        made again under new settings)."""
        if self.checker is not None and self.checker.settings != settings:
            self.checker.close()
            self.checker = None
        if self.checker is None:
            self.checker = Checker(settings)
        return self.checker.check(request)

    def _done(self, key: tuple[int, str], request: Request, check: Check) -> None:
        if self._finish():
            return
        if key[0] == self._session:
            self.checks[key[1]] = check
        if key == self._current:
            self._present(check, request.gold, False)
        self._start_next()

    def _failed(self, key: tuple[int, str], error: BaseException) -> None:
        if self._finish():
            return
        if key == self._current:
            self.view.show_failure(error)
        self._start_next()

    def _finish(self) -> bool:
        """The check is done; True if the hints have stopped meanwhile."""
        self.worker = self._running = None
        return self._stopped

    def _start_next(self) -> None:
        if self._next is not None:
            key, request = self._next
            self._next = None
            if key[0] == self._session and key[1] not in self.checks:
                self._start(key, request)

    def _present(self, check: Check, gold: str, was_stored: bool) -> None:
        self.view.show_check(check, gold, was_stored)
        assert self._current is not None  # the check presented is the current response's
        self.shown.emit(self._current[1])
