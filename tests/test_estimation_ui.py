"""Estimation samples in the app, on the real demo project: Grading ▸ Draw Estimation Sample…
draws one through the operations (a refusal stays in the dialog), and the Grade page's queue
offers it as a filter, refreshed from the broadcast of a sample drawn anywhere."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from shiboken6 import isValid  # noqa: E402

from conftest import press, shot  # noqa: E402
from physgrade.estimation import sample  # noqa: E402
from physgrade.project import Project  # noqa: E402
from physgrade_ui import grader  # noqa: E402
from physgrade_ui.estimation import EstimationDialog  # noqa: E402
from physgrade_ui.main_window import MainWindow  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_settings")

WAIT_MS = 10_000
RESPONSES = 126


@pytest.fixture
def demo(unsampled_demo: Path) -> Path:
    """The demo without its own estimation sample: these tests draw theirs."""
    return unsampled_demo


def queue_ids(window: MainWindow) -> set[str]:
    model = window.grading.queue.model
    return {model.item(row).response_id for row in range(model.rowCount())}


def stored(path: Path, name: str) -> set[str]:
    with Project.open(path) as project:
        return set(sample.inclusion(project, sample.find(project, name)))


def opened_dialog(window: MainWindow, qtbot) -> EstimationDialog:
    """The dialog, once its setup has been read in the background and it has opened."""
    qtbot.waitUntil(lambda: window.findChild(EstimationDialog) is not None, timeout=WAIT_MS)
    return window.findChild(EstimationDialog)


def test_the_dialog_draws_a_sample_and_the_queue_shows_it(window: MainWindow, demo: Path, qtbot,
                                                          errors: list[str]) -> None:
    samples_facet = window.grading.queue.facets["samples"]
    assert not samples_facet.isVisible()  # no sample yet: the bar is as it always was
    window.overview_action.trigger()  # drawn from another page, the queue follows
    window.estimation_action.trigger()
    dialog = opened_dialog(window, qtbot)
    assert dialog.isVisible()
    qtbot.waitExposed(dialog)
    assert dialog.name.text() == "Sample 1" and dialog.size.value() == RESPONSES // 10
    assert dialog.summary.text() == ("Draws 12 of 126 responses at random, each with the same "
                                     "chance (9.5%).")

    dialog.activateWindow()
    qtbot.waitUntil(dialog.name.hasFocus, timeout=WAIT_MS)  # the form first, its name selected
    qtbot.keyClicks(dialog.name, "Pilot")
    for key in (Qt.Key.Key_M, Qt.Key.Key_T):  # Alt+M, Alt+T: by model and topic
        QTest.keyClick(dialog.windowHandle(), key, Qt.KeyboardModifier.AltModifier)
    # 21 strata: 12 is too few (a mnemonic clicks its box after a short animation)
    qtbot.waitUntil(lambda: dialog.chosen_facets() == ("model", "topic"), timeout=WAIT_MS)
    assert "draw at least 21" in dialog.summary.text()
    assert dialog.summary.property("role") == "error"
    dialog.size.setValue(30)
    assert dialog.summary.text() == (
        "Draws 30 of 126 responses at random: 1 to 2 from each of 21 strata (model × topic), "
        "the same number as far as a stratum has responses.")
    assert dialog.summary.property("role") == "muted"
    QTest.keyClick(dialog.windowHandle(), Qt.Key.Key_E, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(dialog.seed.spin.hasFocus, timeout=WAIT_MS)  # Alt+E: the seed
    dialog.seed.setValue(77)
    shot(dialog, "estimation-dialog.png")

    press(qtbot, dialog, Qt.Key.Key_Return)  # Draw sample is the default button
    qtbot.waitUntil(lambda: not (isValid(dialog) and dialog.isVisible()), timeout=WAIT_MS)
    with Project.open(demo) as project:
        drawn = sample.find(project, "Pilot")
        expected = sample.inclusion(project, drawn)
    assert (drawn.seed, drawn.size, drawn.strata) == (77, 30, ("model", "topic"))

    # The Grade page comes up with its queue filtered to the new sample.
    qtbot.waitUntil(lambda: window.pages.currentWidget() is window.grading, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: queue_ids(window) == set(expected), timeout=WAIT_MS)
    assert samples_facet.isVisible() and samples_facet.text() == "Estimation sample: Pilot"
    assert window.statusBar().currentMessage() == f"Estimation sample “Pilot” drawn: {drawn.text()}"
    assert errors == []
    shot(window, "estimation-queue.png")

    window.grading.queue.clear_filters()
    assert window.grading.queue.model.rowCount() == RESPONSES
    assert samples_facet.isVisible() and samples_facet.text() == "Estimation sample"


def test_a_draw_the_core_refuses_stays_in_the_dialog(window: MainWindow, demo: Path,
                                                     qtbot, errors: list[str]) -> None:
    with Project.open(demo) as project:
        sample.draw(project, "Main", 10, seed=1)
    window.refresh()
    window.draw_estimation_sample()
    dialog = opened_dialog(window, qtbot)
    assert dialog.name.text() == "Sample 2"
    dialog.name.setText("main")
    dialog.grade_it.setChecked(False)
    dialog.accept()
    assert dialog.isVisible() and "never drawn again" in dialog.error.text()
    assert "not drawn" in window.statusBar().currentMessage()
    dialog.name.setText("Second")
    dialog.accept()
    assert not dialog.isVisible()
    qtbot.waitUntil(lambda: "“Second” drawn" in window.statusBar().currentMessage(),
                    timeout=WAIT_MS)
    assert window.grading.queue.model.rowCount() == RESPONSES  # not asked to filter
    assert errors == []
    with Project.open(demo) as project:
        assert [s.name for s in sample.samples(project)] == ["Main", "Second"]


def test_the_queue_refreshes_from_the_broadcast_and_filters(window: MainWindow, qtbot,
                                                            demo: Path) -> None:
    queue = window.grading.queue
    assert window.ops.write(lambda project: sample.draw(project, "b-side", 15, seed=3).changes)
    assert window.ops.write(lambda project: sample.draw(project, "a-side", 20, seed=4,
                                                        strata=("model",)).changes)
    facet = queue.facets["samples"]
    assert facet.isVisible()
    assert [action.text() for action in facet.menu().actions()] == ["a-side", "b-side"]
    assert queue.model.rowCount() == RESPONSES  # a new sample filters nothing by itself

    next(a for a in facet.menu().actions() if a.text() == "b-side").setChecked(True)
    assert queue_ids(window) == stored(demo, "b-side")
    next(a for a in facet.menu().actions() if a.text() == "a-side").setChecked(True)
    assert queue_ids(window) == stored(demo, "b-side") | stored(demo, "a-side")
    assert facet.text() == "Estimation sample: 2"

    # The filter is the grader's place: it is there when the project opens again.
    window.close()
    grader.remember("expert-1")
    again = MainWindow(demo)
    qtbot.addWidget(again)
    assert again.grading.queue.facet_filter().samples == {"a-side", "b-side"}
    assert queue_ids(again) == stored(demo, "b-side") | stored(demo, "a-side")


def test_a_project_without_responses_has_nothing_to_draw(qtbot, tmp_path: Path,
                                                         errors: list[str]) -> None:
    grader.remember("expert-1")
    window = MainWindow()
    qtbot.addWidget(window)
    assert window.ops.open(tmp_path / "empty.physgrade", create=True)
    window.draw_estimation_sample()
    qtbot.waitUntil(lambda: bool(errors), timeout=WAIT_MS)
    assert "has none yet" in errors[-1] and window.findChild(EstimationDialog) is None
