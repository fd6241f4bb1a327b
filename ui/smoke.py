"""``physgrade demo --smoke PNG``: start the app on the demo, show a response with mathematics,
save a screenshot of the window and quit; exit 0 only when the mathematics is on screen.

Why it exists: a build can lack a Qt library, a plugin or a data file that the development
environment has, and only starting the app finds out. A PyInstaller bundle above all: the part
most likely to go missing there is QtWebEngine (its helper process, its resources, the libraries
it loads at run time), and that is the part that renders the mathematics. So the check goes as
far as a grader's first look: the Grade page's own signal that a response is laid out
(:attr:`~physgrade_ui.workbench.GradingPage.shown`), the page's document holding MathML, and the
reading's part of a grab of the screen neither blank nor still changing. It lives in the app,
not in the tests, so that a bundle, which has no pytest, runs exactly this (``packaging/bundle.sh
--smoke``; tests/test_smoke.py runs it from the virtual environment).

Every step is bounded: what does not happen within :data:`TIMEOUT_MS` ends the run with a
message and exit status 1. Nothing of the user's is touched: the settings (recent projects, the
grader's name, the window's place) are kept in a temporary folder for the run.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QObject, QPoint, QSettings, QSize, QTimer
from PySide6.QtGui import QImage, QPixmap
from PySide6.QtWebEngineCore import QWebEnginePage, QWebEngineScript
from PySide6.QtWidgets import QApplication

from physgrade.grading import grading_item
from physgrade_ui import grader, reading

if TYPE_CHECKING:
    from physgrade_ui.main_window import MainWindow

#: who grades in the smoke run: one of the demo's graders
PERSON = "expert-1"
#: the window's size, a common laptop's screen
SIZE = QSize(1440, 900)
#: how long the whole run may take, start-up included, before it counts as failed
TIMEOUT_MS = 90_000
#: how often the screen is grabbed while the reading settles
GRAB_EVERY_MS = 100
#: responses looked through for one with mathematics
LOOK_AT = 50
#: the share of the reading's pixels that must differ from its background: text is there
INKED = 0.002


@contextmanager
def own_settings() -> Iterator[Path]:
    """The app's settings in a temporary folder for the run (the user's own are neither read
    nor written), with :data:`PERSON` as the grader, so that no dialog asks who grades."""
    with tempfile.TemporaryDirectory(prefix="physgrade-smoke-") as folder:
        QSettings.setDefaultFormat(QSettings.Format.IniFormat)
        QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, folder)
        grader.remember(PERSON)
        yield Path(folder)


def check(app: QApplication, window: MainWindow, target: Path,
          timeout_ms: int = TIMEOUT_MS) -> int:
    """Show ``window``, run the event loop until the screenshot is saved to ``target`` (or the
    run failed), and return the exit status; what happened is printed."""
    smoke = Smoke(app, window, target, timeout_ms)
    app.setQuitOnLastWindowClosed(False)  # the status is the smoke's, not a closed window's
    QTimer.singleShot(0, smoke.start)
    app.exec()
    return smoke.status


class Smoke(QObject):
    """One smoke run: choose a response with mathematics, wait for it to render, grab, check,
    save, quit."""

    def __init__(self, app: QApplication, window: MainWindow, target: Path,
                 timeout_ms: int) -> None:
        super().__init__(window)
        self.app, self.window, self.target = app, window, target
        self.status = 1
        self.response_id: str | None = None
        self.formulas = 0
        self.previous: QImage | None = None
        self.done = False
        self.grabber = QTimer(self)
        self.grabber.setInterval(GRAB_EVERY_MS)
        self.grabber.timeout.connect(self._grab)
        self.deadline = QTimer(self)
        self.deadline.setSingleShot(True)
        self.deadline.timeout.connect(self._timed_out)
        self.deadline.start(timeout_ms)
        self.timeout_ms = timeout_ms
        self.stage = "the app starting"
        default_hook = sys.excepthook

        def on_error(*error) -> None:  # a bug of ours fails the run rather than opening a box
            default_hook(*error)
            self.fail("an unexpected error (above)")
        sys.excepthook = on_error
        for view in window.grading.reader.views:
            view.page().renderProcessTerminated.connect(self._renderer_died)
        window.grading.shown.connect(self._shown)
        window.resize(SIZE)
        window.show()

    def start(self) -> None:
        page = self.window.grading
        if self.window.project is None or page.project is None or page.grader is None:
            self.fail("the demo project did not open on the Grade page")
            return
        model = page.queue.model
        for row in range(min(model.rowCount(), LOOK_AT)):
            response_id = model.item(row).response_id
            item = grading_item(page.project, response_id, page.grader)
            if item is not None and "<math" in reading.grading_html(item):
                self.response_id = response_id
                break
        else:
            self.fail(f"none of the first {LOOK_AT} responses in the queue has mathematics")
            return
        self.stage = f"response {self.response_id} to render"
        if page.item is None or page.item.response_id != self.response_id:
            page.select(self.response_id)  # else it is on its way: shown comes when it is laid out

    def _shown(self, response_id: str) -> None:
        if self.done or response_id != self.response_id or self.grabber.isActive():
            return
        self.stage = f"the MathML of response {response_id} to be counted"
        self.window.grading.reader.page().runJavaScript(
            "document.querySelectorAll('math').length",
            QWebEngineScript.ScriptWorldId.ApplicationWorld, self._counted)

    def _counted(self, formulas: object) -> None:
        if self.done:
            return
        self.formulas = int(formulas) if isinstance(formulas, (int, float)) else 0
        if self.formulas == 0:
            self.fail(f"response {self.response_id} shows no rendered mathematics "
                      f"(the page answered {formulas!r})")
            return
        self.stage = "the reading to be painted"
        self.grabber.start()

    def _grab(self) -> None:
        """Grab the window from the screen (a widget's own grab misses what Chromium paints)
        until the reading's part has ink and is the same as 100 ms before: painted, settled."""
        shot = self._screenshot()
        reading_part = self._reading_part(shot)
        settled = self.previous is not None and reading_part == self.previous
        self.previous = reading_part
        if not settled or inked_share(reading_part) < INKED:
            return
        self.grabber.stop()
        if inked_share(shot.toImage()) < INKED:
            self.fail("the window's screenshot is blank")
            return
        self.target.parent.mkdir(parents=True, exist_ok=True)
        if not shot.save(str(self.target), "PNG"):
            self.fail(f"cannot write the screenshot to {self.target}")
            return
        print(f"smoke: saved {self.target} ({shot.width()}×{shot.height()}): response "
              f"{self.response_id} on the Grade page with {self.formulas} formulas rendered",
              flush=True)
        self.finish(0)

    def _screenshot(self) -> QPixmap:
        screen = self.window.screen() or QApplication.primaryScreen()
        return screen.grabWindow(self.window.winId())

    def _reading_part(self, shot: QPixmap) -> QImage:
        reader = self.window.grading.reader
        corner = reader.mapTo(self.window, QPoint(0, 0))
        ratio = shot.devicePixelRatio()
        return shot.toImage().copy(int(corner.x() * ratio), int(corner.y() * ratio),
                                   int(reader.width() * ratio), int(reader.height() * ratio))

    def _renderer_died(self, status: QWebEnginePage.RenderProcessTerminationStatus,
                       code: int) -> None:
        self.fail(f"QtWebEngine's render process ended ({status.name}, exit code {code})")

    def _timed_out(self) -> None:
        self.fail(f"timed out after {self.timeout_ms / 1000:g} s waiting for {self.stage}")

    def fail(self, why: str) -> None:
        if not self.done:
            print(f"physgrade: smoke test failed: {why}", file=sys.stderr, flush=True)
            self.finish(1)

    def finish(self, status: int) -> None:
        self.done = True
        self.status = status
        self.grabber.stop()
        self.deadline.stop()
        self.window.close()
        self.app.exit(status)


def inked_share(image: QImage) -> float:
    """The share of ``image``'s pixels that differ from its commonest colour (0 for a blank
    image)."""
    if image.isNull() or image.width() == 0 or image.height() == 0:
        return 0.0
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    rows = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(),
                                                                image.bytesPerLine())
    pixels = rows[:, :image.width() * 4].view(np.uint32).ravel() & 0xFFFFFF
    colours, counts = np.unique(pixels, return_counts=True)
    return 1.0 - counts.max() / pixels.size
