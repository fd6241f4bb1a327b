"""The desktop app on a real demo project: real widgets, real imports on the worker thread."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication, QMessageBox, QPushButton  # noqa: E402

from conftest import page_dom, page_text, question, shot, wait_for, write_jsonl  # noqa: E402
from physgrade.project import Project  # noqa: E402
from physgrade.queries import project_info  # noqa: E402
from physgrade.tasks import Task  # noqa: E402
from physgrade_ui import transfer  # noqa: E402
from physgrade_ui.main_window import MainWindow  # noqa: E402
from physgrade_ui.progress import SHOW_AFTER_MS, ProgressDialog  # noqa: E402
from physgrade_ui.reading_view import blocked_requests  # noqa: E402
from physgrade_ui.workers import Worker  # noqa: E402

WAIT_MS = 10_000


pytestmark = pytest.mark.usefixtures("app_settings")


def counts(path: Path) -> dict[str, int]:
    with Project.open(path) as project:
        return project_info(project).counts



def test_overview_shows_the_projects_numbers(window: MainWindow, demo: Path, qtbot) -> None:
    with Project.open(demo) as project:
        info = project_info(project)
    overview = window.overview
    assert window.windowTitle() == "physgrade — demo.physgrade — expert-1"
    window.overview_action.trigger()
    # The numbers are counted in the background.
    qtbot.waitUntil(lambda: overview.cards["questions"].number.text() == "42", timeout=WAIT_MS)
    assert overview.cards["responses"].number.text() == str(info.counts["responses"])
    assert overview.cards["assessments"].number.text() == str(info.counts["assessments"])
    assert overview.graded.caption.text().startswith(
        f"{info.graded_responses} of {info.counts['responses']} responses graded")
    assert overview.models.rowCount() == len(info.models)
    kinds = {overview.raters.item(r, 1).text() for r in range(overview.raters.rowCount())}
    assert kinds == {"Person", "Language model"}
    assert overview.topics.rowCount() == len(info.topics)
    shot(window, "overview.png")


def test_questions_filter_and_read_hostile_text_as_text(window: MainWindow, demo: Path,
                                                        qtbot) -> None:
    page = window.questions
    window.questions_action.trigger()
    assert page.proxy.rowCount() == 42

    window.activateWindow()  # shortcuts go to the active window
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=WAIT_MS)
    qtbot.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert page.filter.hasFocus()
    qtbot.keyClicks(page.filter, "optics")
    with Project.open(demo) as project:
        assert page.proxy.rowCount() == project_info(project).topics["Optics"] < 42

    with qtbot.waitSignal(page.reader.rendered, timeout=WAIT_MS):
        assert page.select("q-0030")
    plain = page_text(qtbot, page.reader)
    assert "Why does a well-cut diamond sparkle" in plain
    assert "<script>alert('x')</script>" in plain
    assert '<img src="http://example.invalid/a.png">' in plain
    dom = page_dom(qtbot, page.reader)
    assert "<script" not in dom and "<img" not in dom
    assert "not compliant" in plain and "template-compliant" in plain
    assert "Final answer" in plain and "Step 1" in plain
    assert blocked_requests() == []  # the escaped image was never even asked for
    shot(window, "questions.png")

    page.filter.clear()
    assert page.proxy.rowCount() == 42
    assert page.current_id() == "q-0030"


def test_import_on_the_worker_adds_questions_and_refreshes(window: MainWindow, demo: Path,
                                                           tmp_path: Path, qtbot) -> None:
    records = [question(f"q-90{i}", topic="Plasma Physics") for i in (1, 2)]
    for record in records:  # a foreign field name, renamed by the mapping
        record["problem"] = record.pop("question")
    file = write_jsonl(tmp_path / "new_questions.jsonl", records)
    worker = window.start_import(
        transfer.ImportRequest(file, "questions", {"problem": "question"}))
    wait_for(qtbot, worker, "finished")

    assert "2 added" in window.statusBar().currentMessage()
    window.questions_action.trigger()  # pages re-read what changed when next shown
    assert window.questions.model.rowCount() == 44
    window.questions.filter.setText("plasma")
    assert window.questions.proxy.rowCount() == 2
    window.overview_action.trigger()
    qtbot.waitUntil(lambda: window.overview.cards["questions"].number.text() == "44",
                    timeout=WAIT_MS)


def test_a_bad_file_shows_the_located_error_and_changes_nothing(
        window: MainWindow, demo: Path, tmp_path: Path, qtbot, errors: list[str]) -> None:
    before = counts(demo)
    file = tmp_path / "broken.jsonl"
    file.write_text(json.dumps(question("q-9101")) + "\n{not json\n", encoding="utf-8")
    worker = window.start_import(transfer.ImportRequest(file, "questions", {}))
    wait_for(qtbot, worker, "failed")

    assert len(errors) == 1 and "broken.jsonl line 2" in errors[0]
    assert "Nothing was changed" in errors[0]
    assert counts(demo) == before
    window.questions_action.trigger()
    assert window.questions.model.rowCount() == 42


def test_an_import_that_fails_at_once_leaves_one_box_that_enter_closes(
        window: MainWindow, demo: Path, tmp_path: Path, qtbot) -> None:
    """A real error box (not a recorded one): after Enter nothing is left over the window, not
    even a progress dialog popping up late, and the keyboard works on the page again."""
    before = counts(demo)
    file = tmp_path / "broken.jsonl"
    file.write_text(json.dumps(question("q-9101")) + "\n{not json\n", encoding="utf-8")
    worker = window.start_import(transfer.ImportRequest(file, "questions", {}))
    wait_for(qtbot, worker, "failed")
    qtbot.wait(2 * SHOW_AFTER_MS)  # past the moment a progress dialog would show itself

    boxes = [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox)
             and w.isVisible()]
    assert len(boxes) == 1 and "broken.jsonl line 2" in boxes[0].text()
    assert not [w for w in window.findChildren(ProgressDialog) if w.isVisible()]
    qtbot.waitUntil(lambda: QApplication.activeModalWidget() is boxes[0], timeout=WAIT_MS)
    qtbot.keyClick(boxes[0], Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: QApplication.activeModalWidget() is None, timeout=WAIT_MS)
    assert not [w for w in QApplication.topLevelWidgets() if w.isVisible() and w is not window
                and not w.inherits("QMenu")]

    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=WAIT_MS)
    qtbot.keyClick(QApplication.focusWidget() or window, Qt.Key.Key_3,
                   Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.pages.currentWidget() is window.questions, timeout=WAIT_MS)
    assert counts(demo) == before


def test_cancelling_an_import_from_the_progress_dialog(window: MainWindow, demo: Path,
                                                       tmp_path: Path, qtbot,
                                                       monkeypatch) -> None:
    before = counts(demo)
    gate = threading.Event()
    real_import = transfer.import_into

    def held_import(request: transfer.ImportRequest, project: Project, task: Task):
        gate.wait(WAIT_MS / 1000)  # hold the worker until the user has pressed Cancel
        return real_import(request, project, task)

    monkeypatch.setattr(transfer, "import_into", held_import)
    file = write_jsonl(tmp_path / "q.jsonl", [question("q-9201")])
    worker = window.start_import(transfer.ImportRequest(file, "questions", {}))
    dialog = window.findChild(ProgressDialog)
    with qtbot.waitSignal(worker.cancelled, timeout=WAIT_MS):
        dialog.findChild(QPushButton).click()
        gate.set()

    assert window.statusBar().currentMessage().startswith("Import cancelled")
    assert window.worker is None
    assert counts(demo) == before


def test_worker_forwards_progress_and_reports_failure(qtbot) -> None:
    def count_to_three(task: Task) -> str:
        for done in range(1, 4):
            task.report(done, 3, "counting")
        return "done"

    worker = Worker(count_to_three)
    seen: list[tuple[int, int, str]] = []
    worker.progress.connect(lambda *report: seen.append(report))
    with qtbot.waitSignal(worker.finished, timeout=WAIT_MS) as finished:
        worker.start()
    assert finished.args == ["done"]
    qtbot.waitUntil(lambda: len(seen) == 3)
    assert seen[-1] == (3, 3, "counting")

    def broken(task: Task) -> None:
        raise ValueError("bad input")

    worker = Worker(broken)
    with qtbot.waitSignal(worker.failed, timeout=WAIT_MS) as failed:
        worker.start()
    assert str(failed.args[0]) == "bad input"


def test_export_writes_the_chosen_kind(window: MainWindow, tmp_path: Path, qtbot) -> None:
    out = tmp_path / "questions.jsonl"
    worker = window.start_export(transfer.ExportRequest("questions", out))
    wait_for(qtbot, worker, "finished")
    assert len(out.read_text(encoding="utf-8").splitlines()) == 42
    assert window.statusBar().currentMessage().startswith("Exported 42 questions records")


def test_without_a_project_the_window_offers_new_and_open(qtbot) -> None:
    empty = MainWindow(None)
    qtbot.addWidget(empty)
    assert empty.windowTitle() == "physgrade"
    assert empty.screens.currentWidget() is empty.welcome
    assert not empty.import_action.isEnabled()
    buttons = {b.text().split("   ")[0] for b in empty.welcome.findChildren(QPushButton)}
    assert buttons == {"New project…", "Open project…"}


def test_every_action_has_a_shortcut(window: MainWindow) -> None:
    rows = window.shortcut_rows()
    assert all(key for key, _ in rows), rows
    assert ("Ctrl+F", "Search") in rows


def test_signals_from_a_worker_keep_python_intact(qtbot):
    """PySide6 6.12.0 dropped a reference to True on each emission and crashed Python 3.11."""
    before = sys.getrefcount(True)
    worker = Worker(lambda task: [task.report(i, 3000, "counting") for i in range(3000)])
    received = []
    worker.progress.connect(lambda done, total, stage: received.append(done))
    with qtbot.waitSignal(worker.finished, timeout=20000):
        worker.start()
    qtbot.waitUntil(lambda: len(received) == 3000)
    assert abs(sys.getrefcount(True) - before) < 50
