"""What every page is to the window, and the stack that keeps hidden pages current.

A page is a view over the open project. The window knows pages only through :class:`Page`: it
opens the project in them, hands them the :class:`~physgrade.changes.Changes` that
:class:`~physgrade_ui.operations.Operations` broadcasts, asks for their help section and the
widget that takes the keyboard, and stops them when it closes. :class:`PageStack` does the
bookkeeping: the page on show hears a change at once; a hidden page collects what changed and
re-reads it when it is next shown, only that, and a page first shown after a project opened is
opened then, so opening a large project waits for one page only. A page is even built only when
it is first shown (or asked for): until then the stack holds an empty stand-in, so start-up
builds the page on show alone, with none of the others' web views.
"""

from __future__ import annotations

from typing import Callable, Protocol, runtime_checkable

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QStackedWidget, QWidget

from physgrade.changes import Changes
from physgrade.project import Project

#: A help overlay section: its title and (keys, what they do) rows.
Section = tuple[str, list[tuple[str, str]]]


@runtime_checkable
class Page(Protocol):
    """A page of the window (a QWidget that also has these)."""

    #: its name in the navigation and the View menu ("Grade")
    page_title: str

    def open(self, project: Project | None, person: str | None) -> None:
        """Show ``project`` (None: none is open) for ``person`` (None: nobody said who they are
        yet), keeping what the user chose (filters, the item on show) where it still applies."""

    def apply(self, changes: Changes) -> None:
        """Re-read what ``changes`` touched of what the page shows, and nothing else."""

    def stop(self) -> None:
        """The window is closing: end what the page has under way."""

    def help_section(self) -> Section | None:
        """The page's keys for the help overlay (None: it has none of its own)."""

    def focus_widget(self) -> QWidget:
        """The widget that takes the keyboard when the page is shown."""

    def focus_search(self) -> bool:
        """Put the keyboard in the page's search field (Ctrl+F); False if it has none."""


class _Open:
    """Pending state of a page that must be opened before it can take changes."""


OPEN = _Open()


class PageStack(QStackedWidget):
    """The window's pages, one on show; each built when first needed and brought up to date
    when it is shown."""

    #: the page on show changed; emitted before that page is brought up to date, so what it
    #: says while it opens is not taken for what the page before it said
    switched = Signal()

    def __init__(self, pages: list[tuple[str, Callable[[], Page]]],
                 parent: QWidget | None = None) -> None:
        """``pages``: each page's title (for the navigation, before the page exists) and the
        function that builds it."""
        super().__init__(parent)
        self.titles = [title for title, _ in pages]
        self._factories = [make for _, make in pages]
        self._built: dict[int, Page] = {}
        for _ in pages:
            self.addWidget(QWidget())
        self.project: Project | None = None
        self.person: str | None = None
        self._pending: dict[int, Changes | _Open] = {}
        self.currentChanged.connect(self._switched)

    def page(self, index: int) -> Page:
        """Page ``index``, built (in place of its stand-in) the first time it is asked for."""
        built = self._built.get(index)
        if built is None:
            built = self._built[index] = self._factories[index]()
            assert isinstance(built, Page) and isinstance(built, QWidget), built
            assert built.page_title == self.titles[index], built.page_title
            stand_in, current = self.widget(index), self.currentIndex()
            assert stand_in is not None  # every index holds a stand-in until it is built
            # Swapping moves the current index about for a moment: nobody need hear of it.
            blocked = self.blockSignals(True)
            self.insertWidget(index, built)
            self.removeWidget(stand_in)
            self.setCurrentIndex(current)
            self.blockSignals(blocked)
            stand_in.deleteLater()
        return built

    @property
    def current(self) -> Page:
        return self.page(self.currentIndex())

    def set_context(self, project: Project | None, person: str | None) -> None:
        """A project opened or closed, or somebody else said who they are: every page is
        (re)opened, the one on show now, the others when shown."""
        self.project, self.person = project, person
        if project is None:
            # Closing is at once for every page built: none may keep reading a closed connection.
            self._pending = {}
            for page in self._built.values():
                page.open(None, person)
            return
        self._pending = {index: OPEN for index in range(self.count())}
        self._bring_up_to_date()

    def broadcast(self, changes: Changes) -> None:
        """A write committed: the page on show re-reads now, the others when next shown."""
        if not changes:
            return
        for index in range(self.count()):
            pending = self._pending.get(index)
            if isinstance(pending, _Open):
                continue
            self._pending[index] = changes if pending is None else pending | changes
        self._bring_up_to_date()

    def show_page(self, index: int, focus: bool = True) -> None:
        """Show page ``index`` (built first if it is new), up to date, with the keyboard in its
        main widget."""
        self.page(index)
        self.setCurrentIndex(index)
        self._bring_up_to_date()
        if focus:
            # After the event loop has handed focus back (a menu or a shortcut may hold it).
            QTimer.singleShot(0, self.focus_current)

    def focus_current(self) -> None:
        widget = self.current.focus_widget()
        if widget.isVisible():
            widget.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def stop(self) -> None:
        for page in self._built.values():
            page.stop()

    def _switched(self, _index: int) -> None:
        self.switched.emit()
        self._bring_up_to_date()

    def _bring_up_to_date(self) -> None:
        index = self.currentIndex()
        if index < 0:
            return
        pending = self._pending.pop(index, None)
        if isinstance(pending, _Open):
            self.current.open(self.project, self.person)
        elif pending is not None and self.project is not None:
            self.current.apply(pending)
