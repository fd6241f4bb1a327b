"""Judge ▸ Refine judge… on the real demo project: the core's plan as its estimate, read in the
background; runs through the real anthropic client against the loopback fake API that fill the
before/after table; cancelling, refused keys, and the core's refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from conftest import TEST_KEY, shot  # noqa: E402
from fake_anthropic import FakeAnthropic, Fault  # noqa: E402
from physgrade.judge import verdicts  # noqa: E402
from physgrade.judge.client import connect  # noqa: E402
from physgrade.judge.pricing import price_for  # noqa: E402
from physgrade.judge.prompts import Prompts  # noqa: E402
from physgrade.judge.purposes import run_plan  # noqa: E402
from physgrade.judge.scope import Scope  # noqa: E402
from physgrade.project import Project  # noqa: E402
from physgrade.refinement import refine  # noqa: E402
from physgrade_ui.judge_dialog import DEFAULT_MODEL  # noqa: E402
from physgrade_ui.main_window import MainWindow  # noqa: E402
from physgrade_ui.refine_dialog import COLUMNS, CONSENSUS_TITLE, RefineJudgeDialog, suggested_model  # noqa: E402

JUDGE = "arbiter-mini [prefs-v1]"
RUN_MS = 30_000

pytestmark = pytest.mark.usefixtures("app_settings")


def opened(window: MainWindow, qtbot, judge: str = JUDGE) -> RefineJudgeDialog:
    """The dialog as the menu opens it, on ``judge``, its estimate shown."""
    window.refine_action.trigger()
    dialog = window.findChild(RefineJudgeDialog)
    assert dialog is not None and dialog.isVisible()
    qtbot.waitExposed(dialog)
    dialog.judge.setCurrentText(judge)
    planned(dialog, qtbot)
    return dialog


def planned(dialog: RefineJudgeDialog, qtbot) -> None:
    """Wait for the newest plan (or the core's refusal) to be shown."""
    qtbot.waitUntil(lambda: not dialog.planning, timeout=10_000)


def run_to_end(qtbot, worker) -> None:
    """Wait for the run to finish; a failure fails the test at once, with its error."""
    outcomes: list[object] = []
    worker.finished.connect(lambda refined: outcomes.append("finished"))
    worker.failed.connect(outcomes.append)
    qtbot.waitUntil(lambda: bool(outcomes), timeout=RUN_MS)
    assert outcomes == ["finished"], outcomes


def estimate(dialog: RefineJudgeDialog, row: str) -> str:
    return dialog.estimate.values[row].text()


def core_plan(path: Path, **chosen) -> refine.RefinementPlan:
    """The plan the core makes for these settings, on a connection of the test's own."""
    settings = refine.Settings(JUDGE, DEFAULT_MODEL, **chosen)
    with Project.open(path) as project:
        return refine.plan(project, settings, Prompts.load(), price_for(DEFAULT_MODEL))


def table(dialog: RefineJudgeDialog) -> list[list[str]]:
    model = dialog.comparison
    return [[model.item(row, column).text() for column in range(model.columnCount())]
            for row in range(model.rowCount())]


def verdicts_of(path: Path, version: str) -> int:
    """How many verdicts the judge under prompt ``version`` has in the project file."""
    with Project.open(path) as project:
        return project.conn.execute(
            "SELECT COUNT(*) FROM assessments a JOIN raters r ON r.id = a.rater_id "
            "WHERE r.name = ? AND r.prompt_version = ?", (DEFAULT_MODEL, version)).fetchone()[0]


def test_the_estimate_is_the_cores_plan_and_follows_the_choices(
        window: MainWindow, demo: Path, qtbot, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    assert window.refine_action.isEnabled()
    assert window.refine_action.shortcut().toString() == "Ctrl+Shift+R"
    dialog = opened(window, qtbot)
    assert [dialog.judge.itemText(i) for i in range(dialog.judge.count())] == [
        "arbiter-large [prefs-v1]", JUDGE]
    assert [(dialog.reference.itemText(i), dialog.reference.itemData(i))
            for i in range(dialog.reference.count())] == [
        (CONSENSUS_TITLE, "consensus"), ("expert-1", "expert-1"), ("expert-2", "expert-2")]
    assert dialog.model.currentText() == DEFAULT_MODEL  # "arbiter-mini" is no model the API has
    assert (dialog.examples.value(), dialog.holdout.value(), dialog.seed.value()) == (4, 50, 0)
    assert dialog.criteria.chosen() == frozenset()

    core = core_plan(demo)
    assert estimate(dialog, "Split") == core.split_text()
    assert estimate(dialog, "Split").startswith("48 responses for calibration, 49 held out")
    assert estimate(dialog, "Examples") == core.examples_text()
    assert estimate(dialog, "Before") == core.before_text()
    assert estimate(dialog, "After") == core.after_text()
    assert "49 calls to make" in estimate(dialog, "After")
    assert estimate(dialog, "Cost").startswith("about $")
    assert dialog.run_button.isEnabled() and dialog.run_button.isDefault()
    assert QApplication.focusWidget() is dialog.judge
    dialog.activateWindow()  # Alt keys go to the active window
    qtbot.waitUntil(dialog.isActiveWindow, timeout=10_000)
    qtbot.keyClick(dialog, Qt.Key.Key_S, Qt.KeyboardModifier.AltModifier)  # Alt+S: the seed
    qtbot.waitUntil(dialog.seed.spin.hasFocus, timeout=10_000)
    shot(dialog, "refine_dialog_estimate.png")

    dialog.examples.setValue(1)
    assert dialog.planning and not dialog.run_button.isEnabled()  # Run waits for the plan
    planned(dialog, qtbot)
    assert estimate(dialog, "Examples") == core_plan(demo, examples=1).examples_text()
    assert estimate(dialog, "Examples").startswith("1 example from the calibration part")
    assert dialog.run_button.isEnabled()

    # Examples aimed at a criterion the experts never corrected: nothing to refine.
    next(a for a in dialog.criteria.menu().actions() if a.text() == "EXE").setChecked(True)
    planned(dialog, qtbot)
    assert estimate(dialog, "Examples").startswith("none")
    assert not dialog.run_button.isEnabled()
    assert dialog.estimate_note.text().startswith("Nothing to refine")

    dialog.model.setCurrentText("")
    planned(dialog, qtbot)
    assert not dialog.run_button.isEnabled()
    assert "model" in dialog.estimate_note.text()


def test_a_run_fills_the_before_and_after_table_and_refreshes_the_window(
        window: MainWindow, demo: Path, qtbot, fake: FakeAnthropic, monkeypatch) -> None:
    window.overview_action.trigger()
    with Project.open(demo) as project:
        assessments = project.conn.execute("SELECT COUNT(*) FROM assessments").fetchone()[0]
    dialog = opened(window, qtbot)
    plan = dialog.plan
    assert plan is not None and plan.pending == 98
    qtbot.keyClick(dialog.examples, Qt.Key.Key_Return)  # Enter runs
    worker = dialog.worker
    assert worker is not None and not dialog.settings.isEnabled() and dialog.progress.isVisible()
    run_to_end(qtbot, worker)

    refined = dialog.refined
    assert refined is not None and refined.stopped is None and refined.comparison is not None
    assert len(fake.message_requests()) == 98
    assert verdicts_of(demo, plan.after.prompt_version) == 49
    comparison = refined.comparison
    assert [dialog.comparison.horizontalHeaderItem(c).text() for c in range(len(COLUMNS))] == \
        list(COLUMNS)
    assert table(dialog) == [[row.title, row.criterion, *row.texts(), f"{row.difference.n:,}"]
                             for row in comparison.rows]
    assert table(dialog)[0][:2] == ["exact agreement", "all criteria"]
    assert table(dialog)[0][2].endswith("]") and "%" in table(dialog)[0][2]
    assert dialog.raters.text() == (f"Before: {plan.before.rater}\nAfter: {plan.after.rater}\n"
                                    "Each against human consensus, on 49 held-out responses.")
    assert not dialog.stopped.isVisible() and dialog.table.isVisible()
    assert dialog.table.horizontalScrollBar().maximum() == 0  # no scrolling sideways
    assert f"Refined {JUDGE}" in window.statusBar().currentMessage()
    # The window re-read its pages from the project.
    qtbot.waitUntil(lambda: window.overview.cards["assessments"].number.text()
                    == f"{assessments + 98:,}")
    shot(dialog, "refine_dialog_done.png")

    # Planned again after the run: the refinement as stored, nothing left to call, no key
    # needed to show its comparison again.
    planned(dialog, qtbot)
    assert "0 calls to make, 49 already done" in estimate(dialog, "After")
    assert "as stored" in estimate(dialog, "Split")
    assert dialog.estimate_note.text().startswith("Every verdict is stored already")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert dialog.run_button.isEnabled()
    dialog.comparison.setRowCount(0)
    run_to_end(qtbot, dialog.start())
    assert len(fake.message_requests()) == 98
    assert len(table(dialog)) == len(comparison.rows)
    dialog.close()
    qtbot.waitUntil(lambda: window.findChild(RefineJudgeDialog) is None)


def test_cancel_stops_early_keeps_the_verdicts_and_leaves_the_dialog_usable(
        window: MainWindow, demo: Path, qtbot, fake: FakeAnthropic) -> None:
    fake.push(*[Fault(delay=0.4) for _ in range(8)])
    dialog = opened(window, qtbot)
    dialog.concurrency.setValue(1)
    plan = dialog.plan
    worker = dialog.start()
    qtbot.waitUntil(lambda: dialog.progress.value() >= 1, timeout=RUN_MS)
    assert dialog.progress_text.text().startswith(f"before: asking {DEFAULT_MODEL}: ")
    shot(dialog, "refine_dialog_running.png")
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    assert dialog.cancel_button.text() == "Stopping…" and not dialog.cancel_button.isEnabled()
    run_to_end(qtbot, worker)

    refined = dialog.refined
    assert refined is not None and refined.stopped == "cancelled" and refined.comparison is None
    arrived = sum(summary.done for summary in refined.runs)
    assert 1 <= arrived < 49
    assert verdicts_of(demo, plan.before.prompt_version) == arrived  # kept, every one
    assert dialog.stopped.isVisible() and "cancelled" in dialog.stopped.text()
    assert f"verdicts stored: {arrived:,}" in dialog.stopped.text()
    assert "running again asks only for the rest" in dialog.stopped.text()
    assert table(dialog) == []
    planned(dialog, qtbot)
    assert f"{arrived:,} already done" in estimate(dialog, "Before")
    assert not dialog.cancel_button.isVisible() and dialog.run_button.isEnabled()
    assert dialog.settings.isEnabled()


def test_a_refused_key_shows_the_stopped_banner(
        window: MainWindow, demo: Path, qtbot, fake: FakeAnthropic) -> None:
    fake.push(Fault(status=401))
    dialog = opened(window, qtbot)
    dialog.concurrency.setValue(1)
    run_to_end(qtbot, dialog.start())
    refined = dialog.refined
    assert refined is not None and "401" in refined.stopped and refined.comparison is None
    assert dialog.stopped.isVisible() and "401" in dialog.stopped.text()
    assert "Nothing stored is lost" in dialog.stopped.text()
    assert table(dialog) == []
    assert "stopped" in window.statusBar().currentMessage()
    shot(dialog, "refine_dialog_401.png")
    planned(dialog, qtbot)
    assert dialog.run_button.isEnabled()


def test_a_judge_the_experts_never_graded_alongside_is_refused_with_the_cores_reason(
        window: MainWindow, demo: Path, qtbot, fake: FakeAnthropic) -> None:
    prompts = Prompts.load()
    with Project.open(demo) as project:  # a judge with one verdict, by the core
        plan = verdicts.plan(project, DEFAULT_MODEL, prompts, Scope(limit=1))
        run_plan(project, connect(), plan, prompts, None, 1)
    dialog = opened(window, qtbot, plan.rater)
    assert dialog.error.isVisible()
    assert dialog.error.text().startswith("Cannot plan this refinement: A split needs")
    assert not dialog.run_button.isEnabled() and dialog.plan is None
    assert estimate(dialog, "Split") == "—"
    dialog.judge.setCurrentText(JUDGE)  # another choice, and it plans again
    planned(dialog, qtbot)
    assert not dialog.error.isVisible() and dialog.run_button.isEnabled()


def test_a_judge_is_refined_with_its_own_model_where_it_names_one() -> None:
    assert suggested_model("claude-sonnet-4-5 [prefs-1a2b]") == "claude-sonnet-4-5"
    assert suggested_model("claude-opus-4-1 [prefs-1a2b]") == "claude-opus-4-1"
    assert suggested_model("claude-haiku-4-5") == "claude-haiku-4-5"
    assert suggested_model(JUDGE) == DEFAULT_MODEL


def test_closing_while_a_plan_is_read_leaves_nothing_behind(
        window: MainWindow, qtbot, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    dialog = opened(window, qtbot)
    dialog.examples.setValue(2)
    assert dialog.update_estimate() is not None  # a read under way
    dialog.close()
    qtbot.waitUntil(lambda: window.findChild(RefineJudgeDialog) is None)
    qtbot.wait(500)  # its plan arrives after the dialog went: nothing may touch it
    assert window.refine_action.isEnabled() and not window.ops.busy
