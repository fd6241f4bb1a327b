"""The one way the app runs core work (ui/operations.py), end to end: real widgets, real project
files, and a real second process holding the project's write lock."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QMessageBox, QProgressDialog  # noqa: E402

from conftest import press  # noqa: E402
from physgrade.project import ProjectError  # noqa: E402
from physgrade_ui.main_window import MainWindow  # noqa: E402
from physgrade_ui.progress import SHOW_AFTER_MS  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_settings")
WAIT_MS = 10_000
#: How long a key press may keep the window busy while the project is locked: a press that waited
#: for the lock would wait until the other program lets go, which it does only when told; a busy
#: 2-core machine can take a second to handle a key under Xvfb, so the bound is set well above.
RESPONSIVE_S = 5.0

#: A second program: takes the project's write lock, says so, and keeps it until told.
HOLD_LOCK = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.readline()
conn.execute("ROLLBACK")
conn.close()
"""


class Locker:
    """The second process holding the lock; :meth:`release` lets go of it."""

    def __init__(self, path: Path) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(path)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout.readline().strip() == "locked"

    def release(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.write("\n")
            self.process.stdin.flush()
            assert self.process.wait(timeout=10) == 0

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def warned(monkeypatch) -> list[str]:
    """What the window says, in a blocking warning, when it closes with changes unsaved (a
    test that fails while the lock is held closes the window that way)."""
    said: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning",
                        lambda parent, title, text, *args: said.append(text))
    return said


@pytest.fixture
def lock(demo: Path, warned: list[str]):
    """Take the demo project's write lock in another process (call it once the app is up)."""
    held: list[Locker] = []

    def take() -> Locker:
        held.append(Locker(demo))
        return held[-1]

    yield take
    for locker in held:
        locker.kill()


@pytest.fixture
def grading(qtbot, window: MainWindow) -> MainWindow:
    """The window with the Grade page on show, r-0002 (nothing scored yet) in front of
    expert-1, and the keyboard on the scoring panel."""
    window.resize(1500, 940)
    window.activateWindow()
    page = window.grading
    qtbot.waitUntil(lambda: page.panel.hasFocus(), timeout=WAIT_MS)
    assert page.select("r-0002")
    assert page.item.mine == {} and page.panel.current_criterion.key == "INT"
    return window


def stored(path: Path, response_id: str) -> dict[str, int | None]:
    """expert-1's scores of ``response_id`` as the file holds them, read by a connection of
    the test's own (not through physgrade)."""
    conn = sqlite3.connect(path)
    try:
        return dict(conn.execute(
            "SELECT s.criterion, s.value FROM scores s JOIN raters r ON r.id = s.rater_id "
            "WHERE r.name = 'expert-1' AND s.response_id = ?", (response_id,)).fetchall())
    finally:
        conn.close()


def status(window: MainWindow) -> str:
    return window.statusBar().currentMessage()


def timed_press(qtbot, window: MainWindow, *keys) -> float:
    started = time.monotonic()
    press(qtbot, window, *keys)
    return time.monotonic() - started


def close_box(qtbot, box: QMessageBox) -> None:
    """Close a message box as a person does: Enter."""
    qtbot.waitUntil(box.isVisible, timeout=WAIT_MS)
    qtbot.keyClick(box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: box.isHidden(), timeout=WAIT_MS)


# -- a locked project ----------------------------------------------------------------------------


def test_a_score_given_while_another_program_holds_the_lock_is_saved_once_it_is_free(
        qtbot, grading: MainWindow, demo: Path, lock) -> None:
    window, page = grading, grading.grading
    locker = lock()

    assert timed_press(qtbot, window, "1") < RESPONSIVE_S  # INT = 1: it waits for the lock
    # The user is told, once, in a box that does not block the app, and in the status bar.
    assert [box.windowTitle() for box in window.ops.boxes] == ["Project locked"]
    box = window.ops.boxes[0]
    assert "saved as soon as the project is free" in box.text()
    assert "locked by another program: 1 change waiting" in status(window)
    # Nothing is claimed: the file does not hold it, the panel does not show it, it cannot be
    # undone yet.
    assert stored(demo, "r-0002") == {}
    assert page.item.mine == {} and page.undo_stack == []
    close_box(qtbot, box)
    qtbot.waitUntil(page.panel.hasFocus, timeout=WAIT_MS)

    # The app stays usable: the keys move on and a second score waits behind the first.
    assert page.panel.current_criterion.key == "MOD"
    assert timed_press(qtbot, window, Qt.Key.Key_Down) < RESPONSIVE_S
    assert page.panel.current_criterion.key == "CON"
    assert timed_press(qtbot, window, "0") < RESPONSIVE_S
    assert page.panel.current_criterion.key == "APP"
    assert "2 changes waiting" in status(window)
    qtbot.wait(2 * 500)  # retries meanwhile find the lock still held
    assert stored(demo, "r-0002") == {} and window.ops.waiting == 2
    assert window.ops.boxes == []  # told once, not on every retry

    locker.release()
    qtbot.waitUntil(lambda: stored(demo, "r-0002") == {"INT": 1, "CON": 0}, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: "2 waiting changes were saved" in status(window), timeout=WAIT_MS)
    assert window.ops.waiting == 0 and window.ops.boxes == []
    # The page shows what is stored, the queue counts it, and both changes can be undone.
    assert page.item.values == {"INT": 1, "CON": 0}
    assert page.panel.current_criterion.key == "APP"  # the grader keeps their place
    row = page.queue.model.row_of("r-0002")
    assert page.queue.model.item(row).scored == 2
    assert page.queue.model.index(row, 2).data() == "2/8"
    assert len(page.undo_stack) == 2
    qtbot.keyClick(page.panel, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert stored(demo, "r-0002") == {"INT": 1} and page.item.values == {"INT": 1}
    assert "Undone: CON on r-0002." in status(window)


def test_closing_while_the_project_stays_locked_says_the_change_was_not_saved(
        qtbot, grading: MainWindow, demo: Path, lock, warned: list[str]) -> None:
    window = grading
    locker = lock()
    press(qtbot, window, "1")
    assert window.ops.waiting == 1
    window.close()
    assert warned == ["The project stayed locked by another program: 1 change was not saved."]
    locker.release()
    assert stored(demo, "r-0002") == {}


# -- other failures: one message each, nothing claimed ---------------------------------------------


def test_a_score_in_a_project_file_deleted_underneath_gives_one_message(
        qtbot, grading: MainWindow, demo: Path, errors: list[str]) -> None:
    window, page = grading, grading.grading
    demo.unlink()
    press(qtbot, window, "1")
    assert len(errors) == 1 and "deleted since it was opened" in errors[0]
    assert "Open it again" in errors[0]
    assert status(window).startswith("Your score was not saved")
    assert "INT = 1 saved" not in status(window)
    assert page.item.mine == {} and page.undo_stack == [] and window.ops.waiting == 0
    assert page.panel.current_criterion.key == "MOD"  # the app goes on
    press(qtbot, window, Qt.Key.Key_Down)
    assert page.panel.current_criterion.key == "CON" and len(errors) == 1


def test_a_score_in_a_read_only_project_gives_one_message(
        qtbot, grading: MainWindow, demo: Path, errors: list[str]) -> None:
    # The tests run as root, whom a file's mode does not stop; a connection that may only read
    # meets the very error a read-only file gives ("attempt to write a readonly database").
    window, page = grading, grading.grading
    window.ops.project.conn.execute("PRAGMA query_only = ON")
    press(qtbot, window, "1")
    assert len(errors) == 1 and errors[0].startswith(f"{demo} cannot be written: the file or "
                                                     "its folder is read-only"), errors
    assert [box.windowTitle() for box in window.ops.boxes] == ["Your score was not saved"]
    assert status(window).startswith("Your score was not saved")
    assert page.item.mine == {} and page.undo_stack == [] and window.ops.waiting == 0
    assert stored(demo, "r-0002") == {}


def test_a_score_the_rubric_refuses_goes_to_the_status_bar_not_a_box(
        qtbot, grading: MainWindow, demo: Path, errors: list[str]) -> None:
    window, page = grading, grading.grading
    page.panel.value_chosen.emit("INT", 5)  # INT takes 0 or 1
    assert errors == [] and window.ops.boxes == []
    assert "INT" in status(window) and "saved" not in status(window)
    assert page.item.mine == {} and page.undo_stack == []
    assert stored(demo, "r-0002") == {}


# -- long work and reads -------------------------------------------------------------------------


@pytest.mark.parametrize("after_s", [0, 2 * SHOW_AFTER_MS / 1000],
                         ids=["at-once", "after-the-dialog-showed"])
def test_a_run_that_fails_shows_one_box_and_leaves_no_progress_dialog(
        qtbot, window: MainWindow, after_s: float) -> None:
    def broken(project, task):
        time.sleep(after_s)
        raise ProjectError("the work broke")

    busy: list[bool] = []
    window.ops.busy_changed.connect(busy.append)
    worker = window.ops.run("Checking", broken, failed="The check failed.")
    assert worker is not None and window.ops.busy
    assert window.ops.run("Again", broken) is None  # one run at a time
    with qtbot.waitSignal(worker.failed, timeout=WAIT_MS):
        pass
    qtbot.wait(SHOW_AFTER_MS + 200)  # a dialog that was due would be up by now
    assert [box.text() for box in window.ops.boxes] == ["The check failed.\n\nthe work broke"]
    assert window.ops.boxes[0].isVisible()
    assert not [d for d in window.findChildren(QProgressDialog) if d.isVisible()]
    assert busy == [True, False] and not window.ops.busy
    close_box(qtbot, window.ops.boxes[0])
    assert window.ops.boxes == []


def test_a_read_delivers_only_the_newest_result_for_its_key(qtbot, window: MainWindow) -> None:
    ops = window.ops
    gate = threading.Event()
    got: list[object] = []

    def slow(project, task):
        assert gate.wait(WAIT_MS / 1000)
        return "older"

    def count(project, task):
        assert project is not ops.project  # a connection of the worker's own
        return project.conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    first = ops.read(slow, got.append, key="responses")
    ops.read(lambda project, task: "newer", got.append, key="responses")
    ops.read(count, got.append, key="count")
    qtbot.waitUntil(lambda: len(got) == 2, timeout=WAIT_MS)
    with qtbot.waitSignal(first.finished, timeout=WAIT_MS):
        gate.set()
    qtbot.wait(100)
    assert sorted(map(str, got)) == ["126", "newer"]  # "older" came last and was dropped


def test_a_superseded_read_is_cancelled_and_leaves_no_worker_running(qtbot,
                                                                     window: MainWindow) -> None:
    ops = window.ops
    started = threading.Event()
    got: list[object] = []

    def endless(project, task):
        started.set()
        while True:  # only cancelling ends it
            task.report(0, None, "working")
            time.sleep(0.01)

    # Whether each thread has ended, asked as its outcome is delivered: the operations delete
    # a worker soon after.
    ended: list[bool] = []
    first = ops.read(endless, got.append, key="report")
    first.cancelled.connect(lambda: ended.append(not first.is_running()))
    assert started.wait(WAIT_MS / 1000)
    with qtbot.waitSignal(first.cancelled, timeout=WAIT_MS):
        second = ops.read(lambda project, task: "newer", got.append, key="report")
        second.finished.connect(lambda result: ended.append(not second.is_running()))
    qtbot.waitUntil(lambda: got == ["newer"], timeout=WAIT_MS)
    qtbot.waitUntil(lambda: not ops._reads, timeout=WAIT_MS)
    assert ended == [True, True]


def test_the_same_failure_again_shows_no_second_box(qtbot, grading: MainWindow,
                                                    demo: Path) -> None:
    """Every key in a deleted project fails the same way: one box says so, not one per key."""
    window = grading
    demo.unlink()
    press(qtbot, window, "1")
    qtbot.waitUntil(lambda: any(box.isVisible() for box in window.ops.boxes), timeout=5_000)
    window.grading.panel.setFocus()
    press(qtbot, window, "0")
    shown = [box for box in window.ops.boxes if box.isVisible()]
    assert len(shown) == 1 and "deleted since it was opened" in shown[0].text()
