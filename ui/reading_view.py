"""A locked-down web view for reading untrusted text with its mathematics rendered.

Chromium renders the MathML that :mod:`physgrade.maths` produces, natively. Nothing in the
page can act: JavaScript is off for page content, plugins do not load, every request other than
for the page itself and its ``data:`` images (the project's own figures, which the reading
embeds) is blocked, and no navigation is allowed (a click on anything that looks like a link goes
nowhere). The HTML it shows has been escaped by the core in any case.

The page shell (style sheet, empty body) is loaded once; later content replaces the body from
the application's own script world, which page content cannot reach. That swap takes a few
milliseconds where reloading a page takes tens, which keeps moving between items instant.
"""

from __future__ import annotations

import atexit
import base64
import json
import os
import sys
from functools import partial
from importlib import resources
from typing import Callable

# Text and MathML render as fast in software, and Chromium's GPU process crashes on displays
# without a suitable OpenGL configuration (16-bit virtual displays, some remote sessions).
# Chromium's own log is kept to fatal errors: what it says otherwise (a system D-Bus it cannot
# reach, and the like) is nothing the person at the terminal can act on. Flags the user set
# are theirs.
_flags = os.environ.get("QTWEBENGINE_CHROMIUM_FLAGS", "--disable-gpu --log-level=3")
if hasattr(os, "geteuid") and os.geteuid() == 0 and "--no-sandbox" not in _flags.split():
    # Chromium's sandbox refuses to start as root (containers, CI). Content is escaped and
    # script-free, so the sandbox guards nothing here that the settings below do not. Turned off
    # by flag: QTWEBENGINE_DISABLE_SANDBOX would print "Sandboxing disabled by user." each start.
    _flags += " --no-sandbox"
os.environ["QTWEBENGINE_CHROMIUM_FLAGS"] = _flags

import shiboken6  # noqa: E402
from PySide6.QtCore import QMessageLogContext, Qt, QTimer, QtMsgType, QUrl, Signal, qFormatLogMessage  # noqa: E402
from PySide6.QtGui import QResizeEvent  # noqa: E402
from PySide6.QtWebEngineCore import (  # noqa: E402
    QWebEnginePage,
    QWebEngineProfile,
    QWebEngineScript,
    QWebEngineSettings,
    QWebEngineUrlRequestInfo,
    QWebEngineUrlRequestInterceptor,
)
from PySide6.QtWebEngineWidgets import QWebEngineView  # noqa: E402
from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402

#: What QtWebEngine says on every start where it finds no GPU it knows (virtual displays, remote
#: sessions, software OpenGL: it probes OpenGL, then Vulkan) and, under --disable-gpu, that it
#: has no GPU information: nothing to act on, as the reading renders in software by design.
NOISE = ("Failed to load vulkan:", "initInstance: No Vulkan library available",
         "Failed to create platform Vulkan instance", "Unable to detect GPU vendor",
         "GPUInfo not initialized on GpuInfoUpdate")


def print_unless_noise(kind: QtMsgType, context: QMessageLogContext, message: str) -> None:
    """A Qt message handler: every message printed as Qt's own handler prints it, but for
    QtWebEngine's :data:`NOISE`."""
    if not message.startswith(NOISE):
        sys.stderr.write(qFormatLogMessage(kind, context, message) + "\n")


def _release_pages() -> None:
    """Delete the web pages still alive while their profile is: Qt warns "Release of profile
    requested but WebEnginePage still not deleted" when the application goes first, as it does
    at exit after a window was closed but not deleted."""
    for widget in QApplication.allWidgets():
        if isinstance(widget, QWebEngineView):
            # A page answers its pending scripts as it goes: nobody is listening any more.
            widget.blockSignals(True)
            shiboken6.delete(widget.page())


atexit.register(_release_pages)  # before PySide's own clean-up, which ends the application

_APP_WORLD = QWebEngineScript.ScriptWorldId.ApplicationWorld
_SHELL_URL = QUrl("about:blank")
#: The maths font, bundled because few systems have a font with an OpenType MATH table (without
#: one, Chromium barely moves scripts: E_n reads "En"); a ``data:`` URL, as the page may load
#: nothing else. Style sheets name it as "DejaVu Math TeX Gyre".
_MATH_FONT_FACE = ('@font-face { font-family: "DejaVu Math TeX Gyre"; src: url(data:font/ttf;base64,'
                   + base64.b64encode((resources.files("physgrade_resources") / "fonts"
                                       / "DejaVuMathTeXGyre.ttf").read_bytes()).decode("ascii")
                   + "); }")


class RequestBlocker(QWebEngineUrlRequestInterceptor):
    """Lets only ``data:`` URLs through (the page's own document and the figures it embeds);
    remembers what it blocked."""

    def __init__(self) -> None:
        super().__init__()
        self.blocked: list[str] = []

    def interceptRequest(self, info: QWebEngineUrlRequestInfo) -> None:
        url = info.requestUrl()
        if url.scheme() not in ("data", "about"):
            self.blocked.append(url.toString())
            info.block(True)


class SafePage(QWebEnginePage):
    """A page that never navigates away from the document the application set."""

    def acceptNavigationRequest(self, url: QUrl | str, navigation: QWebEnginePage.NavigationType,
                                is_main_frame: bool) -> bool:
        return (QUrl(url).scheme() in ("data", "about")
                and navigation != QWebEnginePage.NavigationType.NavigationTypeLinkClicked)


def _profile() -> QWebEngineProfile:
    """The profile every reading view shares: Qt's default one, which keeps nothing on disk
    (no cache, cookies or storage), with the request blocker installed once."""
    global _blocker
    profile = QWebEngineProfile.defaultProfile()
    if _blocker is None:
        _blocker = RequestBlocker()
        profile.setUrlRequestInterceptor(_blocker)
    return profile


_blocker: RequestBlocker | None = None


def blocked_requests() -> list[str]:
    """Every request any reading view has refused (tests look here)."""
    return list(_blocker.blocked) if _blocker else []


class ReadingView(QWebEngineView):
    """Shows HTML fragments made by the core, in a shell styled with ``css``.

    ``rendered`` is emitted each time new content is in place and laid out.
    """

    rendered = Signal()

    def __init__(self, css: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        page = SafePage(_profile(), self)
        settings = page.settings()
        attribute = QWebEngineSettings.WebAttribute
        for name, on in ((attribute.JavascriptEnabled, False), (attribute.AutoLoadImages, True),
                         (attribute.PluginsEnabled, False), (attribute.LocalStorageEnabled, False),
                         (attribute.LocalContentCanAccessRemoteUrls, False),
                         (attribute.LocalContentCanAccessFileUrls, False),
                         (attribute.JavascriptCanOpenWindows, False),
                         (attribute.NavigateOnDropEnabled, False),
                         (attribute.WebGLEnabled, False), (attribute.PdfViewerEnabled, False)):
            settings.setAttribute(name, on)
        self.setPage(page)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self.addAction(page.action(QWebEnginePage.WebAction.Copy))
        self.addAction(page.action(QWebEnginePage.WebAction.SelectAll))
        self._ready = False
        self._pending: str | None = None
        self.loadFinished.connect(self._shell_loaded)
        self.setHtml("<!DOCTYPE html><html><head><meta charset='utf-8'>"
                     f"<style>{_MATH_FONT_FACE}{css}</style></head><body></body></html>", _SHELL_URL)

    def show_html(self, fragment: str) -> None:
        """Replace what is shown with ``fragment`` (already escaped HTML), scrolled to the top."""
        if not self._ready:
            self._pending = fragment
            return
        self.page().runJavaScript(
            "document.getElementById('enlarged')?.remove(); "
            f"document.body.innerHTML = {json.dumps(fragment)}; window.scrollTo(0, 0); "
            "document.body.offsetHeight", _APP_WORLD, self._swapped)

    def scroll_by_page(self, direction: int) -> None:
        """Scroll the reading by most of a screen, down (1) or up (-1), from the keyboard."""
        self.page().runJavaScript(f"window.scrollBy(0, {direction} * window.innerHeight * 0.85)",
                                  _APP_WORLD)

    def jump_between(self, first: str, second: str, arrived: Callable[[str], None]) -> None:
        """Scroll the element with id ``second`` to the top, or back to ``first`` when
        ``second`` already starts in the upper half of the view; ``arrived`` gets the id
        scrolled to ("" when the page has no such pair)."""
        self.page().runJavaScript(
            f"(() => {{ const first = document.getElementById({json.dumps(first)}), "
            f"second = document.getElementById({json.dumps(second)}); "
            "if (!first || !second) return ''; "
            "const target = second.getBoundingClientRect().top < window.innerHeight / 2 "
            "? first : second; "
            "window.scrollTo(0, window.scrollY + target.getBoundingClientRect().top); "
            "return target.id; })()", _APP_WORLD, lambda found: arrived(str(found or "")))

    def step_figure(self, forward: bool, shown: Callable[[int, int], None]) -> None:
        """Enlarge the reading's next figure to the whole view (after the last one, none: back
        to the reading), or with ``forward`` False only close the enlarged one; ``shown`` gets
        the number of the figure now enlarged (0 for none) and how many the reading has."""
        self.page().runJavaScript(
            "(() => { const all = Array.from(document.body.querySelectorAll('figure.figure')); "
            "const open = document.getElementById('enlarged'); "
            "const at = open ? Number(open.dataset.at) : -1; "
            "if (open) open.remove(); "
            f"const next = {'at + 1' if forward else '-1'}; "
            "if (next < 0 || next >= all.length) return '0 ' + all.length; "
            "const copy = all[next].cloneNode(true); copy.id = 'enlarged'; "
            "copy.dataset.at = String(next); document.documentElement.appendChild(copy); "
            "return (next + 1) + ' ' + all.length; })()",
            _APP_WORLD, lambda found: shown(*map(int, str(found or "0 0").split())))

    def run_script(self, script: str) -> None:
        """Run the application's own ``script`` on the reading (in its script world, which page
        content cannot reach), as the marks of a response's steps are drawn."""
        self.page().runJavaScript(script, _APP_WORLD)

    def _shell_loaded(self, ok: bool) -> None:
        if self._ready:
            return
        self._ready = True
        if self._pending is not None:
            self.show_html(self._pending)
            self._pending = None

    def _swapped(self, _height: object) -> None:
        self.rendered.emit()


class BufferedReadingView(QWidget):
    """Two reading views, one exactly behind the other: the front one on show, the back one
    filling with what will probably be asked for next (the next response). Moving on to
    prepared content only brings the back view to the front, so the grader never waits for
    the browser to lay out a page of mathematics.

    The back view is covered, not hidden: a hidden browser view stops drawing, and when shown
    again it would first show a stale picture of what it held before.
    """

    rendered = Signal()
    #: The view's size changed (the layout of its reading may change with it).
    resized = Signal()

    def __init__(self, css: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.views = (ReadingView(css, self), ReadingView(css, self))
        for view in self.views:
            view.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            view.rendered.connect(partial(self._view_rendered, view))
        self.current = self.views[0]
        self.current.raise_()
        self._preparing: str | None = None
        self._prepared: str | None = None

    @property
    def _spare(self) -> ReadingView:
        return self.views[1] if self.current is self.views[0] else self.views[0]

    def page(self) -> QWebEnginePage:
        """The page on show (tests read its text)."""
        return self.current.page()

    def resizeEvent(self, event: QResizeEvent) -> None:
        for view in self.views:
            view.setGeometry(self.rect())
        super().resizeEvent(event)
        self.resized.emit()

    def show_html(self, fragment: str) -> None:
        """Show ``fragment``: at once if it was prepared, else as :class:`ReadingView` does."""
        if fragment == self._prepared:
            self._preparing = self._prepared = None
            self.current = self._spare
            self.current.raise_()
            QTimer.singleShot(0, self.rendered.emit)  # once the caller's own updates are done
            return
        self.current.show_html(fragment)

    def prepare(self, fragment: str) -> None:
        """Lay ``fragment`` out in the back view, ready for :meth:`show_html`."""
        if fragment not in (self._preparing, self._prepared):
            self._preparing, self._prepared = fragment, None
            self._spare.show_html(fragment)

    def scroll_by_page(self, direction: int) -> None:
        self.current.scroll_by_page(direction)

    def jump_between(self, first: str, second: str, arrived: Callable[[str], None]) -> None:
        self.current.jump_between(first, second, arrived)

    def step_figure(self, forward: bool, shown: Callable[[int, int], None]) -> None:
        self.current.step_figure(forward, shown)

    def run_script(self, script: str) -> None:
        self.current.run_script(script)

    def _view_rendered(self, view: ReadingView) -> None:
        if view is self.current:
            self.rendered.emit()
        elif self._preparing is not None:
            self._prepared, self._preparing = self._preparing, None
