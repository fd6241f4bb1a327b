"""Every dialog of the app fits a 1280 × 800 screen (issue 31, "Nothing cut"): it lies within
the screen's free room, its content scrolls inside, and its buttons stay below the content, in
view, even with the longest content it meets (a failed judge run, a long refusal, forty
graders, a long merge, a 5,000-character error).

The small screen is played by patching :func:`physgrade_ui.dialogs.available_room`, the one
place the dialogs read the room from (the test display itself is 1600 × 1000)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QPoint, QRect  # noqa: E402
from PySide6.QtWidgets import (  # noqa: E402
    QAbstractButton,
    QApplication,
    QDialog,
    QDialogButtonBox,
    QMessageBox,
    QPushButton,
    QWidget,
)

from conftest import grading_window  # noqa: E402
from fake_anthropic import FakeAnthropic  # noqa: E402
from physgrade.project import Project  # noqa: E402
from physgrade.team import assign, packs  # noqa: E402
from physgrade_ui import dialogs, transfer  # noqa: E402
from physgrade_ui.dialogs import Scrolled  # noqa: E402
from physgrade_ui.duplicates import AuditDialog  # noqa: E402
from physgrade_ui.estimation import EstimationDialog  # noqa: E402
from physgrade_ui.judge_dialog import RunJudgeDialog  # noqa: E402
from physgrade_ui.main_window import MainWindow  # noqa: E402
from physgrade_ui.progress import ProgressDialog  # noqa: E402
from physgrade_ui.refine_dialog import RefineJudgeDialog  # noqa: E402
from physgrade_ui.reports import ExportReportDialog  # noqa: E402
from physgrade_ui.team import AssignDialog, ConflictsDialog, PacksDialog  # noqa: E402
from physgrade_ui.workers import Worker  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_settings")

#: The screen's free room the dialogs are fitted to.
ROOM = QRect(0, 0, 1280, 800)
#: A refusal as long as a core's message can be: about 5,000 characters.
LONG = ("The core refused it: "
        + "the judge's API answered that it is overloaded, " * 100).strip()
#: More graders than a study has, each a row of the Assign dialog's preview.
GRADERS = tuple(f"grader-{number:02}" for number in range(1, 41))
WAIT_MS = 10_000
RUN_MS = 30_000


@pytest.fixture
def window(qtbot, demo: Path, monkeypatch) -> MainWindow:
    """The main window on the demo, filling a 1280 × 800 screen the dialogs are fitted to."""
    monkeypatch.setattr(dialogs, "available_room", lambda widget: QRect(ROOM))
    return grading_window(qtbot, demo, ROOM.width(), ROOM.height())


def buttons_of(dialog: QWidget) -> list[QAbstractButton]:
    """The buttons a dialog ends with: its button box's (those not hidden), or its own."""
    boxes = dialog.findChildren(QDialogButtonBox)
    if not boxes:
        return list(dialog.findChildren(QPushButton))
    return [button for box in boxes for button in box.buttons() if not button.isHidden()]


def assert_fits(qtbot, dialog: QWidget, scrolls: bool = False) -> None:
    """``dialog`` lies within the room, and its buttons are visible, whole, inside it and
    outside the scrolled content; ``scrolls``: the content is longer than the room, and
    scrolls."""
    qtbot.waitExposed(dialog)
    if scrolls:  # once the layouts have settled
        qtbot.waitUntil(lambda: any(area.verticalScrollBar().maximum() > 0
                                    for area in dialog.findChildren(Scrolled)), timeout=WAIT_MS)
    QApplication.processEvents()
    title = dialog.windowTitle()
    assert ROOM.contains(dialog.frameGeometry()), (title, dialog.frameGeometry())
    buttons = buttons_of(dialog)
    assert buttons, title
    for button in buttons:
        assert button.isVisible(), (title, button.text())
        placed = QRect(button.mapTo(dialog, QPoint(0, 0)), button.size())
        assert dialog.rect().contains(placed), (title, button.text(), placed, dialog.rect())
        assert not any(area.isAncestorOf(button) for area in dialog.findChildren(Scrolled))


def in_view(widget: QWidget) -> bool:
    """The top of ``widget`` is visible in the scrolled part of its dialog."""
    area = next(area for area in widget.window().findChildren(Scrolled)
                if area.isAncestorOf(widget))
    top = widget.mapTo(area.viewport(), QPoint(0, 0)).y()
    return widget.isVisible() and 0 <= top < area.viewport().height()


@pytest.mark.parametrize("make", [
    transfer.ImportDialog, transfer.ExportDialog,
    lambda window: ExportReportDialog(Path.home(), window),
    lambda window: AuditDialog(None, window)],
    ids=["import", "export", "export report", "duplicate audit"])
def test_a_transfer_dialog_fits_and_a_long_refusal_scrolls_inside_it(
        window: MainWindow, qtbot, make) -> None:
    dialog = make(window)
    qtbot.addWidget(dialog)
    dialog.open()
    assert_fits(qtbot, dialog)
    dialog.refuse(LONG)
    assert_fits(qtbot, dialog, scrolls=True)
    assert in_view(dialog.error)


def test_the_new_audit_sample_dialog_fits(window: MainWindow, qtbot) -> None:
    window.audit_action.trigger()
    dialog = window.audit.new_sample()
    assert dialog is not None
    assert_fits(qtbot, dialog)
    dialog.refuse(LONG)
    assert_fits(qtbot, dialog, scrolls=True)


def test_the_estimation_dialog_fits(window: MainWindow, qtbot) -> None:
    window.estimation_action.trigger()
    qtbot.waitUntil(lambda: window.findChild(EstimationDialog) is not None, timeout=WAIT_MS)
    dialog = window.findChild(EstimationDialog)
    assert_fits(qtbot, dialog)
    dialog.refuse(LONG)
    assert_fits(qtbot, dialog, scrolls=True)


def test_the_grader_dialog_fits(window: MainWindow, qtbot) -> None:
    window.choose_grader()
    assert window.grader_dialog is not None
    assert_fits(qtbot, window.grader_dialog)


def test_run_judge_fits_before_and_after_a_failed_run(window: MainWindow, qtbot,
                                                      fake: FakeAnthropic) -> None:
    window.judge_action.trigger()
    dialog = window.findChild(RunJudgeDialog)
    assert_fits(qtbot, dialog)
    fake.always_status = 500  # every call fails: the longest banner and list of problems
    worker = dialog.start()
    assert worker is not None
    qtbot.waitUntil(lambda: dialog.worker is None, timeout=RUN_MS)
    assert dialog.summary is not None and dialog.summary.problems
    assert dialog.stopped.isVisible() and dialog.summary_view.isVisible()
    assert_fits(qtbot, dialog, scrolls=True)
    assert dialog.run_button in buttons_of(dialog) and dialog.close_button in buttons_of(dialog)
    assert not dialog.content.horizontalScrollBar().isVisible()


def test_refine_judge_fits_before_and_after_a_failed_run(window: MainWindow, qtbot,
                                                         fake: FakeAnthropic) -> None:
    window.refine_action.trigger()
    dialog = window.findChild(RefineJudgeDialog)
    qtbot.waitUntil(lambda: not dialog.planning and dialog.run_button.isEnabled(),
                    timeout=WAIT_MS)
    assert_fits(qtbot, dialog)
    fake.always_status = 500
    worker = dialog.start()
    assert worker is not None
    qtbot.waitUntil(lambda: dialog.worker is None, timeout=RUN_MS)
    assert dialog.refined is not None and dialog.refined.stopped
    assert dialog.stopped.isVisible()
    assert_fits(qtbot, dialog)


def test_assign_fits_with_forty_graders(window: MainWindow, qtbot) -> None:
    dialog = window.assign_responses()
    assert isinstance(dialog, AssignDialog)
    assert_fits(qtbot, dialog)
    dialog.graders.setText(", ".join(GRADERS))
    qtbot.waitUntil(dialog.planned, timeout=WAIT_MS)
    assert dialog.per_grader_table.rowCount() == len(GRADERS)
    assert_fits(qtbot, dialog, scrolls=True)


def test_make_packs_fits_forty_graders_and_the_long_refusal_of_their_packs(
        window: MainWindow, demo: Path, qtbot, tmp_path: Path) -> None:
    with Project.open(demo) as project:
        assign.apply(project, assign.plan(project, GRADERS, 0.2, seed=7))
        for taken in packs.pack_paths(project, tmp_path, GRADERS):
            taken.touch()  # every pack's file is there already: a refusal naming them all
    dialog = window.make_grader_packs()
    assert isinstance(dialog, PacksDialog)
    assert_fits(qtbot, dialog)
    dialog.folder.setText(str(tmp_path))
    dialog.accept()
    assert dialog.isVisible() and "in that folder already" in dialog.error.text()
    assert dialog.error.text().count(".physgrade") >= 30  # lines of file names
    assert_fits(qtbot, dialog)
    assert in_view(dialog.error)


def test_conflicts_fits_under_a_long_merge(window: MainWindow, qtbot) -> None:
    dialog = window.show_conflicts()
    assert isinstance(dialog, ConflictsDialog)
    assert_fits(qtbot, dialog)
    dialog.tell_merged("\n".join(f"grader-{number:02}.physgrade (grader-{number:02}): 3 scores "
                                 "taken into the project" for number in range(1, 61)))
    assert_fits(qtbot, dialog, scrolls=True)


def test_the_progress_dialog_fits(window: MainWindow, qtbot) -> None:
    worker = Worker(lambda task: None, window)
    dialog = ProgressDialog("Importing", worker, window)
    dialog.show()
    worker.progress.emit(3, 10, "reading the file")
    assert_fits(qtbot, dialog)
    worker.cancelled.emit()  # as a run's end dismisses it


def test_a_message_box_with_a_long_error_fits_and_keeps_all_of_it_in_its_details(
        window: MainWindow, qtbot) -> None:
    window.ops.fail("Import failed", ValueError(LONG))
    box = window.ops.boxes[-1]
    assert_fits(qtbot, box)
    assert len(box.text()) < 1_000 and box.text().endswith("Show Details.")
    assert box.detailedText() == f"ValueError: {LONG}"
    details = next(button for button in box.buttons()
                   if box.buttonRole(button) == QMessageBox.ButtonRole.ActionRole)
    details.click()
    assert_fits(qtbot, box)
    window.ops.fail("Import failed", ValueError(LONG))  # the same message: not a second box
    assert window.ops.boxes == [box]
    box.done(QDialog.DialogCode.Accepted)
