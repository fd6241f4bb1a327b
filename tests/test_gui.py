"""The desktop app on a real demo project: real widgets, real imports on the worker thread."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWebEngineWidgets import QWebEngineView  # noqa: E402
from PySide6.QtWidgets import QApplication, QMessageBox, QPushButton, QWidget  # noqa: E402

from conftest import page_dom, page_text, question, shot, wait_for, write_jsonl  # noqa: E402
from physgrade.project import Project  # noqa: E402
from physgrade.queries import project_info  # noqa: E402
from physgrade.tasks import Task  # noqa: E402
from physgrade_ui import transfer  # noqa: E402
from physgrade_ui.main_window import GRADE, QUESTIONS, MainWindow  # noqa: E402
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
    assert kinds == {"Person", "LLM"}
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


def test_only_the_page_on_show_is_built_at_start(window: MainWindow, qtbot) -> None:
    """Start-up builds the Grade page alone: the other pages (and their web views) wait in the
    stack as empty stand-ins until first shown."""
    pages = window.pages
    assert [type(pages.widget(i)) for i in range(pages.count()) if i != GRADE] == \
        [QWidget] * (pages.count() - 1)
    assert {view.window() for view in window.findChildren(QWebEngineView)} == {window}
    assert all(view.parent() is not None for view in window.findChildren(QWebEngineView))
    views = len(window.findChildren(QWebEngineView))

    window.questions_action.trigger()
    qtbot.waitUntil(lambda: pages.currentWidget() is window.questions, timeout=WAIT_MS)
    assert type(pages.widget(QUESTIONS)).__name__ == "QuestionsPage"
    assert window.navigation.currentRow() == QUESTIONS
    assert window.questions.model.rowCount() == 42  # opened on the project when first shown
    assert len(window.findChildren(QWebEngineView)) == views + 1


def test_a_status_message_goes_when_the_page_changes(window: MainWindow, qtbot) -> None:
    window.ops.say("Queue hidden: Q shows it again.", 0)  # as the Grade page says it
    assert window.statusBar().currentMessage().startswith("Queue hidden")
    window.overview_action.trigger()
    qtbot.waitUntil(lambda: window.pages.currentIndex() == 0, timeout=WAIT_MS)
    assert window.statusBar().currentMessage() == ""
    window.ops.say("Exported 3 records", 0)  # said on the page on show: it stays
    qtbot.wait(50)
    assert window.statusBar().currentMessage() == "Exported 3 records"


def stored_scores(path: Path) -> int:
    with Project.open(path) as project:
        return project.conn.execute("SELECT count(*) FROM scores").fetchone()[0]


def open_file_menu(window: MainWindow, how: str) -> None:
    bar = window.menuBar()
    if how == "Alt+F":
        QTest.keyClick(window.windowHandle(), Qt.Key.Key_F, Qt.KeyboardModifier.AltModifier)
    else:
        QTest.mouseClick(bar, Qt.MouseButton.LeftButton,
                         pos=bar.actionGeometry(bar.actions()[0]).center())


@pytest.mark.parametrize("how", ["Alt+F", "a click"])
def test_the_key_after_esc_closes_a_menu_reaches_the_page(window: MainWindow, demo: Path,
                                                         qtbot, how: str) -> None:
    """Esc on a menu used to leave the keyboard in the menu bar, which swallowed the next key:
    the grader's score was lost. Keys go to the window as the window system sends them."""
    from physgrade.queries import graded_sql

    with Project.open(demo) as project:
        ungraded = project.conn.execute(
            f"SELECT id FROM responses WHERE id NOT IN ({graded_sql()}) ORDER BY id"
        ).fetchone()[0]
    page = window.grading
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=WAIT_MS)
    assert page.select(ungraded)
    page.panel.set_current(0)
    qtbot.waitUntil(page.panel.hasFocus, timeout=WAIT_MS)
    before = stored_scores(demo)

    open_file_menu(window, how)
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is not None, timeout=WAIT_MS)
    QTest.keyClick(window.windowHandle(), Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is None, timeout=WAIT_MS)
    qtbot.wait(50)  # the moment a person takes between two keys
    QTest.keyClick(window.windowHandle(), Qt.Key.Key_1)
    assert stored_scores(demo) == before + 1
    assert page.panel.hasFocus() and window.menuBar().activeAction() is None


def test_a_menu_entry_that_moves_the_keyboard_keeps_it_there(window: MainWindow,
                                                             qtbot) -> None:
    """Giving the keyboard back after a menu closes must not undo what the entry chose: View >
    Search puts it in the search field."""
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=WAIT_MS)
    QTest.keyClick(window.windowHandle(), Qt.Key.Key_V, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is not None, timeout=WAIT_MS)
    QTest.keyClick(window.windowHandle(), Qt.Key.Key_S)  # &Search
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is None, timeout=WAIT_MS)
    qtbot.wait(50)  # past the zero timers of the menu closing
    assert QApplication.focusWidget() is window.grading.queue.search


def test_the_grade_pages_entries_are_in_the_menus(window: MainWindow) -> None:
    menus = {menu.title(): menu for menu in (a.menu() for a in window.menuBar().actions())}
    assert set(window.grading.view_actions) <= set(menus["&View"].actions())
    assert set(window.grading.menu_actions) <= set(menus["&Grading"].actions())
    assert window.grading.zoom_in_action in menus["&View"].actions()


#: What QtWebEngine and Chromium printed on every start and exit (issue 18).
NOISE = ("Sandboxing disabled by user", "vulkan", "Vulkan", "Unable to detect GPU vendor",
         "Failed to connect to the bus", "GPUInfo not initialized",
         "Release of profile requested")

START_AND_QUIT = """
import sys
from pathlib import Path


def main() -> int:
    import physgrade_ui.app
    from PySide6.QtCore import QCoreApplication, QSettings, QTimer
    from PySide6.QtWidgets import QApplication
    from physgrade_ui import grader

    app = QApplication(sys.argv)
    QCoreApplication.setOrganizationName("physgrade")
    QCoreApplication.setApplicationName("physgrade")
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, sys.argv[2])
    grader.remember("expert-1")

    def started() -> None:
        window = next(w for w in app.topLevelWidgets() if hasattr(w, "grading"))
        window.grading.shown.connect(lambda _: print("shown", flush=True))
        window.grading.shown.connect(lambda _: QTimer.singleShot(1500, window.close))

    QTimer.singleShot(0, started)
    QTimer.singleShot(30_000, app.closeAllWindows)  # a failure, not a hang
    return physgrade_ui.app.run(Path(sys.argv[1]))


if __name__ == "__main__":
    sys.exit(main())
"""


def test_starting_and_quitting_the_app_prints_nothing(demo: Path, tmp_path: Path) -> None:
    """The terminal the app starts from stays clean: no sandbox notice, no GPU probing, no
    Chromium log, and no warning about pages outliving their profile at exit."""
    script = tmp_path / "start_and_quit.py"
    script.write_text(START_AND_QUIT, encoding="utf-8")
    # As a user starts it: with none of the settings this test process has made for QtWebEngine.
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("QTWEBENGINE_")}
    done = subprocess.run([sys.executable, str(script), str(demo), str(tmp_path / "settings")],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["shown"]  # the first response was on screen
    assert not [line for line in done.stderr.splitlines()
                if any(noise in line for noise in NOISE)], done.stderr

