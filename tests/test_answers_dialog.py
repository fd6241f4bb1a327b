"""Judge ▸ Check final answers with a model… on real widgets: the rules run first inside the
background work, the model (the loopback fake API) is asked only about what they left open,
the combined rater is stored and the window is told."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QRect, Qt  # noqa: E402

from fake_anthropic import FakeAnthropic  # noqa: E402
from physgrade.answers import model_stage  # noqa: E402
from physgrade.changes import RecordKind  # noqa: E402
from physgrade.project import Project  # noqa: E402
from physgrade_ui.answers_dialog import AnswerCheckDialog  # noqa: E402
from physgrade_ui.main_window import MainWindow  # noqa: E402
from test_answer_model_stage import (  # noqa: E402
    MODEL,
    RULES,
    TWO_PARTS,
    ans_scores,
    asked_about,
    checks,
    judge,
    make_project,
)

RUN_MS = 60_000

pytestmark = pytest.mark.usefixtures("app_settings")


@pytest.fixture
def answers_window(qtbot, tmp_path: Path):
    from physgrade_ui import grader

    grader.remember("expert-1")
    path = make_project(tmp_path)
    shown = MainWindow(path)
    qtbot.addWidget(shown)
    shown.show()
    qtbot.waitExposed(shown)
    return shown, path


def opened(window: MainWindow, qtbot) -> AnswerCheckDialog:
    window.answers_action.trigger()
    dialog = window.findChild(AnswerCheckDialog)
    assert dialog is not None and dialog.isVisible()
    qtbot.waitExposed(dialog)
    return dialog


def run_to_end(qtbot, worker) -> None:
    outcomes: list[object] = []
    worker.finished.connect(lambda result: outcomes.append("finished"))
    worker.failed.connect(outcomes.append)
    worker.cancelled.connect(lambda: outcomes.append("cancelled"))
    qtbot.waitUntil(lambda: bool(outcomes), timeout=RUN_MS)
    assert outcomes == ["finished"], outcomes


def estimate(dialog: AnswerCheckDialog, row: str) -> str:
    return dialog.estimate.values[row].text()


def test_the_rules_run_first_then_the_model_checks_what_they_left_open(
        answers_window, qtbot, fake: FakeAnthropic) -> None:
    window, path = answers_window
    fake.answer = judge
    assert window.answers_action.shortcut().toString() == "Ctrl+Shift+L"
    judge_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Judge")
    assert window.answers_action in judge_menu.actions()
    broadcast: list[object] = []
    window.ops.changed.connect(broadcast.append)

    dialog = opened(window, qtbot)
    assert dialog.model.currentText() == MODEL
    # Nothing checked by the rules yet: the estimate says they run first.
    assert estimate(dialog, "Rules first").startswith(f"{len(RULES)} answers not checked")
    assert estimate(dialog, "Calls to make").startswith("0 (and those the rules leave open)")
    assert estimate(dialog, "Rater").startswith(f"rules+{MODEL} [answers-")
    assert dialog.run_button.isEnabled()

    qtbot.mouseClick(dialog.run_button, Qt.MouseButton.LeftButton)
    worker = dialog.worker
    assert worker is not None and not dialog.settings.isEnabled()
    assert dialog.progress.isVisible() and dialog.cancel_button.isVisible()
    run_to_end(qtbot, worker)

    assert sorted(asked_about(fake)) == ["12 m/s", TWO_PARTS, "about ten metres per second"]
    found = checks(path)
    assert {rid: c.stage for rid, c in found.items()} == {
        "r-1": "rules", "r-6": "rules", "r-4": "model", "r-5": "model", "r-7": "model"}
    assert ans_scores(path) == {"r-1": 2, "r-4": 0, "r-5": 0, "r-6": 0, "r-7": 2}
    run = dialog.last_run
    assert run is not None and run.rules is not None and run.rules.checked == len(RULES)
    assert run.summary is not None and run.summary.done == 3 and run.stopped is None
    assert dialog.summary_view.values["Model checked"].text() == "3 answers"
    assert "2 equivalent" in dialog.summary_view.values["Now stored"].text()
    assert not dialog.progress.isVisible() and not dialog.stopped.isVisible()
    # The window was told: scores and raters, and the status bar says what is stored.
    assert any(RecordKind.SCORES in changes.kinds for changes in broadcast), broadcast
    assert f"rules+{MODEL}" in window.statusBar().currentMessage()
    # Planned again: nothing left to do.
    assert estimate(dialog, "Calls to make") == "0" and estimate(dialog, "Already done") == "3"
    assert not dialog.estimate.values["Rules first"].isVisible()
    assert not dialog.run_button.isEnabled()
    with Project.open(path) as project:
        assert model_stage.unchecked(project) == 0
    dialog.close()
    qtbot.waitUntil(lambda: window.findChild(AnswerCheckDialog) is None)


def test_without_a_key_the_dialog_asks_for_one_and_uses_it(
        answers_window, qtbot, fake: FakeAnthropic, monkeypatch) -> None:
    window, path = answers_window
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    fake.answer = judge
    dialog = opened(window, qtbot)
    assert dialog.key is not None and dialog.key.isVisible()
    assert not dialog.run_button.isEnabled()
    assert dialog.estimate_note.text() == "Enter an API key to run."
    secret = "sk-typed-in-the-answers-dialog"
    qtbot.keyClicks(dialog.key, secret)
    assert dialog.run_button.isEnabled()
    worker = dialog.start()
    assert worker is not None
    run_to_end(qtbot, worker)
    assert len(fake.message_requests()) == 3
    assert {r.headers.get("x-api-key") or r.headers["authorization"].removeprefix("Bearer ")
            for r in fake.message_requests()} == {secret}
    assert len(checks(path)) == len(RULES)


def test_the_dialog_fits_a_small_screen_before_and_after_a_failed_run(
        answers_window, qtbot, fake: FakeAnthropic, monkeypatch) -> None:
    from physgrade_ui import dialogs
    from test_dialogs_fit import ROOM, assert_fits, buttons_of

    monkeypatch.setattr(dialogs, "available_room", lambda widget: QRect(ROOM))
    window, path = answers_window
    dialog = opened(window, qtbot)
    assert estimate(dialog, "Cost") == "not known until the rules have run"
    assert_fits(qtbot, dialog)
    fake.always_status = 500  # every call fails: the longest banner and list of problems
    worker = dialog.start()
    assert worker is not None
    qtbot.waitUntil(lambda: dialog.worker is None, timeout=RUN_MS)
    run = dialog.last_run
    assert run is not None and run.summary is not None and run.summary.problems
    assert dialog.summary_view.isVisible() and dialog.summary_view.values["Problems"].isVisible()
    assert dialog.summary_view.values["Not answered"].text().startswith("3 ")
    assert_fits(qtbot, dialog)
    assert dialog.run_button in buttons_of(dialog) and dialog.close_button in buttons_of(dialog)
    assert not dialog.content.horizontalScrollBar().isVisible()
    # The rules' checks are stored all the same; the model's are for a later run.
    assert {c.stage for c in checks(path).values()} == {"rules"}


def test_cancel_stops_the_model_early_and_keeps_what_arrived(
        answers_window, qtbot, fake: FakeAnthropic) -> None:
    from fake_anthropic import Fault
    from physgrade.answers.sandbox import Checker
    from physgrade.answers.verify import verify

    window, path = answers_window
    with Project.open(path) as project, Checker() as checker:
        verify(project, checker)  # the rules have run: the run is the model's calls only
    fake.answer = judge
    fake.push(*[Fault(delay=0.5) for _ in range(3)])
    dialog = opened(window, qtbot)
    assert not dialog.estimate.values["Rules first"].isVisible()
    assert estimate(dialog, "Calls to make") == "3"
    dialog.concurrency.setValue(1)
    worker = dialog.start()
    assert worker is not None
    qtbot.waitUntil(lambda: dialog.progress.value() >= 1, timeout=RUN_MS)
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    assert dialog.cancel_button.text() == "Stopping…"
    run_to_end(qtbot, worker)
    run = dialog.last_run
    assert run is not None and run.rules is None and run.stopped == "cancelled"
    assert run.summary is not None and 1 <= run.summary.done < 3
    assert dialog.stopped.isVisible() and "cancelled" in dialog.stopped.text()
    model_checked = {rid for rid, c in checks(path).items() if c.stage == "model"}
    assert len(model_checked) == run.summary.done
    assert estimate(dialog, "Calls to make") == f"{3 - run.summary.done:,}"
    assert dialog.run_button.isEnabled()
