"""The Run judge dialog on the real demo project: the core's plan as its estimate, runs through
the real anthropic client against the loopback fake API, cancelling, refused keys, no key."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QPoint, QRect, Qt  # noqa: E402
from PySide6.QtWidgets import QLabel, QMessageBox  # noqa: E402

from conftest import TEST_KEY, shot, wait_for  # noqa: E402
from fake_anthropic import FakeAnthropic, Fault  # noqa: E402
from physgrade.answers.tolerance import set_answer_tolerance  # noqa: E402
from physgrade.judge import verdicts  # noqa: E402
from physgrade.judge.pricing import known_models  # noqa: E402
from physgrade.judge.prompts import Prompts  # noqa: E402
from physgrade.judge.runner import RunSummary  # noqa: E402
from physgrade.judge.scope import Scope  # noqa: E402
from physgrade.project import Project  # noqa: E402
from physgrade_ui.judge_dialog import RunJudgeDialog  # noqa: E402
from physgrade_ui.main_window import MainWindow  # noqa: E402

MODEL = "claude-haiku-4-5"
RUN_MS = 30_000

pytestmark = pytest.mark.usefixtures("app_settings")


def opened(window: MainWindow, qtbot) -> RunJudgeDialog:
    """The dialog as the menu opens it, its first estimate shown."""
    window.judge_action.trigger()
    dialog = window.findChild(RunJudgeDialog)
    assert dialog is not None and dialog.isVisible()
    qtbot.waitExposed(dialog)
    return dialog


def run_to_end(qtbot, worker) -> None:
    """Wait for the run to finish; a failure fails the test at once, with its error."""
    outcomes: list[object] = []
    worker.finished.connect(lambda summary: outcomes.append("finished"))
    worker.failed.connect(outcomes.append)
    qtbot.waitUntil(lambda: bool(outcomes), timeout=RUN_MS)
    assert outcomes == ["finished"], outcomes


def settle(dialog: RunJudgeDialog, qtbot) -> None:
    """Wait for the debounced estimate."""
    qtbot.waitUntil(lambda: not dialog.estimate_timer.isActive(), timeout=2000)


def estimate(dialog: RunJudgeDialog, row: str) -> str:
    return dialog.estimate.values[row].text()


def shown(dialog: RunJudgeDialog, row: str) -> str:
    return dialog.summary_view.values[row].text()


def stored(path: Path, model: str = MODEL) -> dict[str, str]:
    """The verdicts ``model`` has in the project file, read through the core."""
    with Project.open(path) as project:
        return verdicts.stored(project, model, verdicts.prompt_version(Prompts.load()))


def count(path: Path, sql: str, *params: str) -> int:
    with Project.open(path) as project:
        return project.conn.execute(sql, params).fetchone()[0]


def sent_keys(fake: FakeAnthropic) -> set[str]:
    """The keys the client sent (as x-api-key, or as a bearer token)."""
    return {r.headers.get("x-api-key") or r.headers["authorization"].removeprefix("Bearer ")
            for r in fake.message_requests()}


def choose(dialog: RunJudgeDialog, facet: str, value: str) -> None:
    next(a for a in dialog.facets[facet].menu().actions() if a.text() == value).setChecked(True)


def test_the_estimate_is_the_cores_plan_and_follows_the_scope(
        window: MainWindow, demo: Path, qtbot, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    dialog = opened(window, qtbot)
    responses = count(demo, "SELECT COUNT(*) FROM responses")
    assert dialog.model.currentText() == MODEL
    assert [dialog.model.itemText(i) for i in range(dialog.model.count())] == list(known_models())
    assert estimate(dialog, "Calls to make") == f"{responses:,}"
    assert estimate(dialog, "Already done") == "0"
    assert estimate(dialog, "Judge").startswith(f"{MODEL} [prefs-")
    assert estimate(dialog, "Cost").startswith("about $")
    assert dialog.run_button.isEnabled() and dialog.run_button.isDefault()
    assert dialog.limit.text() == "all"
    assert dialog.concurrency.value() == 8

    choose(dialog, "models", "orbit-7b")
    settle(dialog, qtbot)
    orbit = count(demo, "SELECT COUNT(*) FROM responses WHERE model = ?", "orbit-7b")
    assert 0 < orbit < responses
    assert estimate(dialog, "Calls to make") == f"{orbit:,}"
    assert dialog.facets["models"].text() == "Model: orbit-7b"

    dialog.limit.setValue(5)
    settle(dialog, qtbot)
    assert estimate(dialog, "Calls to make") == "5"

    dialog.model.setCurrentText("my-own-judge")
    assert dialog.estimate_timer.isActive()  # debounced, not planned at every keystroke
    settle(dialog, qtbot)
    assert estimate(dialog, "Judge").startswith("my-own-judge [")
    assert estimate(dialog, "Cost").startswith("cost unknown")

    dialog.model.setCurrentText("")
    settle(dialog, qtbot)
    assert not dialog.run_button.isEnabled()
    assert "model" in dialog.estimate_note.text()


def test_a_declared_facet_narrows_the_run(window: MainWindow, demo: Path, qtbot,
                                          monkeypatch) -> None:
    """The demo's questions carry an answer type, which its import declared a facet."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    dialog = opened(window, qtbot)
    button = dialog.declared.buttons["answer_type"]
    assert button.isVisible() and button.text().startswith("Answer type")
    numeric = count(demo, "SELECT COUNT(*) FROM responses r JOIN questions q ON q.id = "
                          "r.question_id WHERE q.answer_type = ?", "NV")
    assert 0 < numeric < count(demo, "SELECT COUNT(*) FROM responses")
    next(a for a in button.menu().actions() if a.text() == "NV").setChecked(True)
    settle(dialog, qtbot)
    assert estimate(dialog, "Calls to make") == f"{numeric:,}"


def test_the_dialogs_prompt_states_the_projects_answer_tolerance(
        window: MainWindow, qtbot, monkeypatch) -> None:
    """The rules and the judge cannot disagree by construction: the prompt the dialog runs says
    the tolerance the project's rules check with."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    assert window.ops.write(partial(set_answer_tolerance, rtol=0.03))
    dialog = opened(window, qtbot)
    assert dialog.prompts is not None
    assert "within 3 percent of it" in dialog.prompts.texts["prefs_criteria.md"]
    assert "1 percent" not in dialog.prompts.texts["prefs_criteria.md"]


def test_a_run_stores_verdicts_shows_what_it_did_and_refreshes_the_window(
        window: MainWindow, demo: Path, qtbot, fake: FakeAnthropic) -> None:
    window.overview_action.trigger()
    assessments = count(demo, "SELECT COUNT(*) FROM assessments")
    dialog = opened(window, qtbot)
    dialog.limit.setValue(12)
    dialog.concurrency.setValue(4)
    settle(dialog, qtbot)
    qtbot.wait(100)
    shot(dialog, "judge_dialog_estimate.png")

    qtbot.mouseClick(dialog.run_button, Qt.MouseButton.LeftButton)
    worker = dialog.worker
    assert worker is not None and not dialog.run_button.isEnabled()
    assert not dialog.settings.isEnabled() and dialog.progress.isVisible()
    run_to_end(qtbot, worker)

    assert len(stored(demo)) == 12 and set(stored(demo).values()) == {"ok"}
    assert dialog.summary is not None and dialog.summary.stopped is None
    assert shown(dialog, "Stored") == "12 verdicts"
    assert shown(dialog, "Failed") == "0" and shown(dialog, "Not answered") == "0"
    assert shown(dialog, "Cost").startswith("$")
    assert not dialog.stopped.isVisible() and dialog.summary_view.isVisible()
    assert not dialog.progress.isVisible() and dialog.run_button.isEnabled()
    assert estimate(dialog, "Already done") == "12"  # planned again after the run
    assert sent_keys(fake) == {TEST_KEY}
    # The window re-read its pages from the project.
    qtbot.waitUntil(lambda: window.overview.cards["assessments"].number.text()
                    == f"{assessments + 12:,}")
    assert "12 verdicts stored" in window.statusBar().currentMessage()
    qtbot.wait(100)
    shot(dialog, "judge_dialog_done.png")

    # A second run asks only for what is not done yet.
    with Project.open(demo) as project:
        again = verdicts.plan(project, MODEL, Prompts.load(), Scope(limit=12))
    assert again.cached == 12
    dialog.close()
    qtbot.waitUntil(lambda: window.findChild(RunJudgeDialog) is None)


def test_cancel_stops_early_and_keeps_what_arrived(
        window: MainWindow, demo: Path, qtbot, fake: FakeAnthropic) -> None:
    fake.push(*[Fault(delay=0.5) for _ in range(8)])
    dialog = opened(window, qtbot)
    dialog.concurrency.setValue(1)
    total = dialog.plan.estimate.calls
    worker = dialog.start()
    qtbot.waitUntil(lambda: dialog.progress.value() >= 1, timeout=RUN_MS)
    shot(dialog, "judge_dialog_running.png")
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    assert dialog.cancel_button.text() == "Stopping…" and not dialog.cancel_button.isEnabled()
    run_to_end(qtbot, worker)
    qtbot.wait(50)
    shot(dialog, "judge_dialog_cancelled.png")

    summary = dialog.summary
    assert summary is not None and summary.stopped == "cancelled"
    assert 1 <= summary.done < total
    assert len(stored(demo)) == summary.done  # what arrived after the cancel is kept too
    assert dialog.stopped.isVisible() and "cancelled" in dialog.stopped.text()
    assert not dialog.cancel_button.isVisible() and dialog.run_button.isEnabled()
    assert estimate(dialog, "Already done") == f"{summary.done:,}"


def test_a_refused_key_shows_the_apis_message_and_stores_nothing(
        window: MainWindow, demo: Path, qtbot, fake: FakeAnthropic) -> None:
    fake.always_status = 401
    dialog = opened(window, qtbot)
    worker = dialog.start()
    run_to_end(qtbot, worker)
    assert dialog.summary is not None and "401" in dialog.summary.stopped
    assert dialog.stopped.isVisible()
    assert "401" in dialog.stopped.text() and "scripted failure" in dialog.stopped.text()
    assert stored(demo) == {} and shown(dialog, "Stored") == "0 verdicts"
    qtbot.wait(50)
    shot(dialog, "judge_dialog_401.png")
    assert count(demo, "SELECT COUNT(*) FROM raters WHERE name = ?", MODEL) == 0


def test_without_a_key_in_the_environment_the_dialog_asks_for_one(
        window: MainWindow, demo: Path, qtbot, monkeypatch, app_settings: Path) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        dialog = opened(window, qtbot)
        assert dialog.key is not None and dialog.key.isVisible()
        assert dialog.key.echoMode() == dialog.key.EchoMode.Password
        assert not dialog.run_button.isEnabled()
        assert "API key" in dialog.estimate_note.text()
        assert fake.base_url in [w.text() for w in dialog.settings.findChildren(QLabel)]
        shot(dialog, "judge_dialog_no_key.png")
        secret = "sk-typed-in-the-dialog"
        qtbot.keyClicks(dialog.key, secret)
        assert dialog.run_button.isEnabled()
        dialog.limit.setValue(2)
        settle(dialog, qtbot)
        worker = dialog.start()
        run_to_end(qtbot, worker)
        assert sent_keys(fake) == {secret}
        assert len(stored(demo)) == 2
        dialog.close()
        assert dialog.key.text() == ""
    written = "".join(p.read_text(errors="replace") for p in app_settings.rglob("*")
                      if p.is_file() and p.suffix != ".physgrade")
    assert secret not in written
    assert secret.encode() not in demo.read_bytes()


def test_a_run_that_cannot_start_says_why(window: MainWindow, qtbot, monkeypatch,
                                          errors: list[str]) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    dialog = opened(window, qtbot)
    monkeypatch.delenv("ANTHROPIC_API_KEY")  # gone by the time the run starts
    worker = dialog.start()
    wait_for(qtbot, worker, "failed")
    assert len(errors) == 1 and errors[0].startswith("The judge did not run.")
    assert "no API key" in errors[0]
    assert dialog.run_button.isEnabled() and dialog.summary is None and dialog.isVisible()


def test_closing_during_a_run_asks_then_stops_it_and_waits(
        window: MainWindow, demo: Path, qtbot, fake: FakeAnthropic, monkeypatch) -> None:
    asked = []
    monkeypatch.setattr(QMessageBox, "question",
                        lambda *args, **kwargs: asked.append(args) or QMessageBox.StandardButton.Yes)
    fake.push(*[Fault(delay=0.5) for _ in range(6)])
    dialog = opened(window, qtbot)
    summaries: list[RunSummary] = []
    dialog.judged.connect(summaries.append)
    dialog.concurrency.setValue(1)
    assert dialog.start() is not None
    qtbot.waitUntil(lambda: len(fake.message_requests()) >= 1, timeout=RUN_MS)
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert len(asked) == 1 and dialog.isVisible()  # closes once the answers in flight are in
    assert dialog.cancel_button.text() == "Stopping…"
    qtbot.waitUntil(lambda: window.findChild(RunJudgeDialog) is None, timeout=RUN_MS)
    assert len(summaries) == 1 and summaries[0].stopped == "cancelled"
    assert 1 <= len(stored(demo)) == summaries[0].done


def test_the_window_closing_under_a_run_waits_for_it(
        window: MainWindow, demo: Path, qtbot, fake: FakeAnthropic) -> None:
    fake.push(*[Fault(delay=0.5) for _ in range(6)])
    dialog = opened(window, qtbot)
    dialog.concurrency.setValue(1)
    worker = dialog.start()
    qtbot.waitUntil(lambda: len(fake.message_requests()) >= 1, timeout=RUN_MS)
    window.close()
    assert not worker.is_running()
    assert 1 <= len(stored(demo)) < 126


def test_after_a_failed_run_the_dialog_and_its_buttons_stay_on_the_screen(
        window: MainWindow, qtbot, fake: FakeAnthropic) -> None:
    fake.always_status = 500  # every call fails: the longest banner and list of problems
    dialog = opened(window, qtbot)
    run_to_end(qtbot, dialog.start())
    assert dialog.summary is not None and dialog.summary.problems
    qtbot.wait(50)
    room = dialog.screen().availableGeometry()
    assert dialog.frameGeometry().height() <= room.height()
    assert room.contains(dialog.frameGeometry())
    for button in (dialog.run_button, dialog.close_button):
        assert button.isVisible()
        assert room.contains(QRect(button.mapToGlobal(QPoint(0, 0)), button.size()))
    assert not dialog.content.horizontalScrollBar().isVisible()
