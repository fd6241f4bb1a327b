"""The one way the app runs core work: writes that commit and broadcast, reads in the background.

Every change a person makes goes through :meth:`Operations.write` (quick, on the GUI thread's
connection) or :meth:`Operations.run` (long, on a worker with its own connection, progress and
Cancel). Either way the core call commits and returns a :class:`~physgrade.changes.Changes`,
which :attr:`Operations.changed` broadcasts so every page re-reads what it shows. Slow reads go
through :meth:`Operations.read`. Every failure a user can meet ends in :meth:`Operations.fail`:
one message, never an exception escaping a slot, never a dialog left behind.

A write that finds the project locked by another program is kept, in order, and retried until
the project is free; the user is told once, and again when it is saved (or, at close, that it
was not).
"""

from __future__ import annotations

import os
import sqlite3
from collections import deque
from dataclasses import dataclass
from enum import Enum
from functools import partial
from pathlib import Path
from typing import Any, Callable, TypeVar

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QMessageBox, QWidget

from physgrade import failures
from physgrade.changes import NOTHING, Changes
from physgrade.formats import FormatError, ImportErrors
from physgrade.project import Project, ProjectError
from physgrade.rubric import ScoreError
from physgrade.tasks import Task
from physgrade.wording import sentence
from physgrade_ui.progress import ProgressDialog
from physgrade_ui.workers import Worker

R = TypeVar("R")
Write = Callable[[Project], Changes]
Work = Callable[[Any, Task], Any]  # (the project, or None for work that needs none; the task)

#: How long a write on the GUI thread waits for another program's lock before it is queued.
GUI_BUSY_TIMEOUT_MS = 250
RETRY_MS = 500
STATUS_MS = 6000

#: Failures that are the user's input, not the program's: a status line, not a box.
REFUSALS = (ScoreError,)
#: The most of a message a box shows, in characters and in lines: the rest is in its details.
BOX_CHARACTERS = 800
BOX_LINES = 16


class WriteOutcome(Enum):
    """What became of one attempt at a write."""

    SAVED = "saved"      # committed; ``done`` and every page heard its changes
    LOCKED = "locked"    # another program holds the project: keep the write and retry it
    REFUSED = "refused"  # the user was told why it was not saved


def explain(error: BaseException, project: Path | None = None) -> str:
    """What went wrong, as a sentence a user can act on (:func:`physgrade.failures.explain`);
    an SQLite failure names ``project``, the file of the open project."""
    if isinstance(error, (ProjectError, ScoreError, FormatError, ImportErrors)):
        return str(error)
    if isinstance(error, sqlite3.Error):
        return sentence(failures.explain(error, project))
    if isinstance(error, OSError):
        return sentence(failures.explain(error))
    return f"{type(error).__name__}: {error}"


def beginning(text: str) -> str:
    """What a message box shows of ``text``: all of it where it is short, else its first
    lines, cut at a word, and where the rest is."""
    lines = text.splitlines()
    if len(text) <= BOX_CHARACTERS and len(lines) <= BOX_LINES:
        return text
    start = "\n".join(lines[:BOX_LINES])[:BOX_CHARACTERS]
    cut = start.rfind(" ")
    if cut > BOX_CHARACTERS // 2:
        start = start[:cut]
    return f"{start.rstrip()}…\n\nThe whole message is under Show Details."


@dataclass(slots=True)
class _Pending:
    """A write waiting for the project to be free, with what to call once it is saved."""

    write: Write
    done: Callable[[Changes], None] | None
    what: str


class Operations(QObject):
    """The project the window has open, and every way to read or change it."""

    #: a write committed: the :class:`Changes` it made
    changed = Signal(object)
    #: a message for the status bar, and how long to show it (ms; 0 until replaced)
    said = Signal(str, int)
    #: a long run started (True) or ended (False)
    busy_changed = Signal(bool)
    #: the project was opened (the new one) or closed (None)
    project_changed = Signal(object)
    #: a page needs to know who is working (the window asks them)
    ask_person = Signal()

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.window = window
        self.project: Project | None = None
        self._identity: tuple[int, int] | None = None
        self._generation = 0  # a new project invalidates reads under way for the old one
        self._run: Worker | None = None
        self._reads: dict[Worker, bool] = {}  # reads under way: do they hold a connection?
        self._latest: dict[object, int] = {}
        self._newest: dict[object, Worker] = {}  # the read under way for each key
        self._pending: deque[_Pending] = deque()
        self._retry = QTimer(self)
        self._retry.setInterval(RETRY_MS)
        self._retry.timeout.connect(self._flush)
        self.boxes: list[QMessageBox] = []  # open message boxes, for tests and for closing

    # -- the project ---------------------------------------------------------------------------

    def open(self, path: Path, create: bool = False) -> bool:
        """Open (or create) the project at ``path`` in place of the one open; on failure say why
        and keep what was open."""
        try:
            project = Project.create(path) if create else Project.open(path)
        except (ProjectError, OSError, sqlite3.Error) as exc:
            self.fail("Cannot create project" if create else "Cannot open project", exc)
            return False
        self.close()
        project.conn.execute(f"PRAGMA busy_timeout = {GUI_BUSY_TIMEOUT_MS}")
        self.project = project
        self._identity = _identity(project.path)
        self.project_changed.emit(project)
        return True

    def close(self) -> None:
        """Close the project: end the work under way, save or give up waiting writes."""
        if self.project is None:
            return
        self._end_work()
        self._give_up_pending()
        self.project.close()
        self.project = None
        self._generation += 1
        self.project_changed.emit(None)

    # -- quick writes --------------------------------------------------------------------------

    def write(self, write: Write, done: Callable[[Changes], None] | None = None,
              what: str = "change") -> bool:
        """Run a quick core write now on the window's connection; True when it is committed.

        On success ``done`` hears its :class:`Changes`, then every page does. A refusal (a
        score the rubric does not take) is said in the status bar; a locked project keeps the
        write and saves it when it is free (``done`` is called then); anything else is one
        message box. ``what`` names the change in those messages ("score", "review")."""
        if self.project is None:
            self.say("Open a project first.")
            return False
        pending = _Pending(write, done, what)
        if self._pending:  # keep the order in which the user made their changes
            self._keep(pending)
            return False
        outcome = self._attempt(pending)
        if outcome is WriteOutcome.LOCKED:
            self._keep(pending)
        return outcome is WriteOutcome.SAVED

    def _attempt(self, pending: _Pending) -> WriteOutcome:
        """Run one write: ``SAVED`` (then ``done`` and every page hear its changes), ``LOCKED``
        (nothing said: the caller keeps it), or ``REFUSED`` once the user was told why (a
        refusal in the status bar, anything else in the one box)."""
        assert self.project is not None
        try:
            self._check_file()
            changes = pending.write(self.project)
        except REFUSALS as exc:
            self.say(str(exc))
            return WriteOutcome.REFUSED
        except Exception as exc:  # every failure a user can meet: one message
            if failures.is_locked(exc):
                return WriteOutcome.LOCKED
            self.fail(f"Your {pending.what} was not saved", exc)
            return WriteOutcome.REFUSED
        if pending.done is not None:
            pending.done(changes)
        if changes:
            self.changed.emit(changes)
        return WriteOutcome.SAVED

    def _check_file(self) -> None:
        """Refuse to write into a file that was deleted or replaced since it was opened (SQLite
        would write on into the deleted file, and the work would be lost)."""
        assert self.project is not None
        if _identity(self.project.path) != self._identity:
            raise ProjectError(f"The project file {self.project.path} was moved, replaced or "
                               "deleted since it was opened; nothing was saved. Open it again "
                               "(File ▸ Open Project) to go on.")

    def _keep(self, pending: _Pending) -> None:
        first = not self._pending
        self._pending.append(pending)
        self.say(f"The project is locked by another program: {len(self._pending)} change"
                 f"{'' if len(self._pending) == 1 else 's'} waiting to be saved.", 0)
        if first:
            self._retry.start()
            self.inform("Project locked",
                        "Another program holds the project locked, so your change could not be "
                        "saved yet. It is kept, with any you make meanwhile, and saved as soon "
                        "as the project is free; the status bar says when.")

    def _flush(self) -> None:
        """Try the waiting writes again, in order; stop at the first that still finds a lock."""
        saved = 0
        while self._pending and self.project is not None:
            outcome = self._attempt(self._pending[0])
            if outcome is WriteOutcome.LOCKED:
                return
            self._pending.popleft()
            saved += outcome is WriteOutcome.SAVED
        self._retry.stop()
        if saved:
            self.say(f"The project is free again: {saved} waiting change"
                     f"{' was' if saved == 1 else 's were'} saved.")

    @property
    def waiting(self) -> int:
        """How many writes wait for the project to be free."""
        return len(self._pending)

    def _give_up_pending(self) -> None:
        """Closing: one last try, then tell the user what could not be saved."""
        if not self._pending:
            return
        self._flush()
        if self._pending:
            lost = len(self._pending)
            self._pending.clear()
            self._retry.stop()
            # Blocking on purpose: the window (or the project) is going away.
            QMessageBox.warning(self.window, "Changes not saved",
                                f"The project stayed locked by another program: {lost} change"
                                f"{' was' if lost == 1 else 's were'} not saved.")

    # -- long work -----------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """True while a long run is under way (one at a time, app-wide)."""
        return self._run is not None

    @property
    def worker(self) -> Worker | None:
        """The long run under way, if any."""
        return self._run

    def run(self, title: str, work: Work, done: Callable[[Any], None] | None = None, *,
            changes: Callable[[Any], Changes] | None = None, partial_changes: Changes = NOTHING,
            failed: str = "", cancelled: str = "", progress_dialog: bool = True,
            needs_project: bool = True) -> Worker | None:
        """Run ``work(project, task)`` on a worker with a connection of its own; None if a run
        is already under way.

        A progress dialog with Cancel appears if it takes more than a moment (unless the caller
        shows progress itself: ``progress_dialog=False``, and connect to the returned worker's
        ``progress``). On success ``done`` hears the result and ``changes(result)`` is
        broadcast. If it fails or is cancelled, ``partial_changes`` (what a run stopped part-way
        may have stored) is broadcast, and ``failed`` (in a message box with the error) or
        ``cancelled`` is said."""
        if self._run is not None:
            self.say("Wait for the work under way to finish (or cancel it).")
            return None
        if needs_project and self.project is None:
            self.say("Open a project first.")
            return None
        worker = Worker(partial(_with_project, self._path_for(needs_project), work), self)
        if progress_dialog:
            ProgressDialog(title, worker, self.window)
        worker.finished.connect(partial(self._run_finished, done, changes))
        worker.failed.connect(partial(self._run_failed, title, failed, partial_changes))
        worker.cancelled.connect(partial(self._run_cancelled, title, cancelled, partial_changes))
        self._run = worker
        worker.start()
        self.busy_changed.emit(True)
        return worker

    def _run_ended(self) -> None:
        if self._run is not None:
            self._run.deleteLater()
        self._run = None
        self.busy_changed.emit(False)

    def _run_finished(self, done: Callable[[Any], None] | None,
                      changes: Callable[[Any], Changes] | None, result: Any) -> None:
        self._run_ended()
        try:
            if done is not None:
                done(result)
        finally:
            if changes is not None:
                found = changes(result)
                if found:
                    self.changed.emit(found)

    def _run_failed(self, title: str, message: str, partial_changes: Changes,
                    error: BaseException) -> None:
        self._run_ended()
        if partial_changes:
            self.changed.emit(partial_changes)
        self.fail(title, error, message)

    def _run_cancelled(self, title: str, message: str, partial_changes: Changes) -> None:
        self._run_ended()
        if partial_changes:
            self.changed.emit(partial_changes)
        self.say(message or f"{title}: cancelled.")

    # -- reads ---------------------------------------------------------------------------------

    def read(self, work: Work, done: Callable[[Any], None], *, key: object = None,
             failed: Callable[[BaseException], None] | None = None,
             needs_project: bool = True) -> Worker | None:
        """Run ``work(project, task)`` in the background (a read: it broadcasts nothing) and
        hand its result to ``done`` on the GUI thread. A later read with the same ``key``
        supersedes it: the older one is cancelled (it stops at its next progress report) and
        only the newest result is delivered, as closing the project does. A failure goes to
        ``failed`` if given, else to :meth:`fail`."""
        if needs_project and self.project is None:
            return None
        path = self._path_for(needs_project)
        token = self._latest.get(key, 0) + 1
        self._latest[key] = token
        superseded = self._newest.get(key)
        if superseded is not None:
            superseded.cancel()  # harmless once it is done
        worker = Worker(partial(_with_project, path, work), self)
        self._newest[key] = worker
        # A read of the project is stale once another is open; one of no project never is.
        stamp = (self._generation if needs_project else None, key, token)
        worker.finished.connect(partial(self._read_finished, worker, stamp, done))
        worker.failed.connect(partial(self._read_failed, worker, stamp, failed))
        worker.cancelled.connect(partial(self._read_ended, worker))
        self._reads[worker] = needs_project
        worker.start()
        return worker

    def _path_for(self, needs_project: bool) -> Path | None:
        """The project a worker opens a connection of its own to; None for work that needs none."""
        return self.project.path if needs_project and self.project is not None else None

    def _current(self, stamp: tuple[int | None, object, int]) -> bool:
        generation, key, token = stamp
        return generation in (None, self._generation) and self._latest.get(key) == token

    def _read_ended(self, worker: Worker) -> None:
        self._reads.pop(worker, None)
        for key in [key for key, newest in self._newest.items() if newest is worker]:
            del self._newest[key]
        worker.deleteLater()

    def _read_finished(self, worker: Worker, stamp: tuple[int | None, object, int],
                       done: Callable[[Any], None], result: Any) -> None:
        self._read_ended(worker)
        if self._current(stamp):
            done(result)

    def _read_failed(self, worker: Worker, stamp: tuple[int | None, object, int],
                     failed: Callable[[BaseException], None] | None, error: BaseException) -> None:
        self._read_ended(worker)
        if not self._current(stamp):
            return
        if failed is not None:
            failed(error)
        else:
            self.fail("Could not read the project", error)

    def shut_down(self) -> None:
        """The window is closing: end every run and read under way, whatever it reads (a
        thread must not outlive its window), and close the project."""
        self._end_work(every_read=True)
        self.close()

    def _end_work(self, every_read: bool = False) -> None:
        """Cancel the long run and the reads of the project under way (``every_read``: all of
        them), and wait for them to return (their connections go with the project; a read of
        no project goes on unless ``every_read``)."""
        workers = (([self._run] if self._run is not None else [])
                   + [worker for worker, of_project in self._reads.items()
                      if of_project or every_read])
        for worker in workers:
            worker.cancel()
        for worker in workers:
            worker.wait()

    # -- telling the user ----------------------------------------------------------------------

    def say(self, message: str, ms: int = STATUS_MS) -> None:
        """A line in the status bar (``ms`` 0: until the next one)."""
        self.said.emit(message, ms)

    def fail(self, title: str, error: BaseException, context: str = "") -> None:
        """The one error path: a message box (open, not blocking) saying what went wrong."""
        text = explain(error, self.project.path if self.project is not None else None)
        self.say(f"{title}: {text}" if not context else f"{context} {text}")
        self._box(QMessageBox.Icon.Warning, title, f"{context}\n\n{text}".strip())

    def inform(self, title: str, text: str) -> None:
        """A message box that tells, without an error (e.g. the project is locked)."""
        self._box(QMessageBox.Icon.Information, title, text)

    def _box(self, icon: QMessageBox.Icon, title: str, text: str) -> None:
        """A box saying ``text``; a long one in its details, which scroll (a box as tall as
        its text would reach past the screen, its OK button with it)."""
        if any(shown.isVisible()
               and (shown.windowTitle(), shown.detailedText() or shown.text()) == (title, text)
               for shown in self.boxes):
            return  # the same message is on show already (e.g. every move in a deleted file)
        box = QMessageBox(icon, title, beginning(text), QMessageBox.StandardButton.Ok,
                          self.window)
        if box.text() != text:
            box.setDetailedText(text)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.finished.connect(partial(self._box_closed, box))
        self.boxes.append(box)
        box.open()

    def _box_closed(self, box: QMessageBox, result: int) -> None:
        if box in self.boxes:
            self.boxes.remove(box)


def _identity(path: Path) -> tuple[int, int] | None:
    """The file's device and inode, to notice a project deleted or replaced underneath."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def _with_project(path: Path | None, work: Work, task: Task) -> Any:
    """On the worker thread: open a connection of its own (SQLite connections are not shared
    across threads), run the work, close it; work that needs no project gets None."""
    if path is None:
        return work(None, task)
    with Project.open(path) as project:
        return work(project, task)
