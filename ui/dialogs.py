"""Dialogs that fit the screen (issue 31, "Nothing cut"): the content scrolls inside, the
buttons stay below it in view, and the dialog is never bigger than the screen's free room nor
outside it. An expert's Run judge dialog grew past a 900-pixel screen after a failed run and
took its Run and Close buttons with it.

:func:`fitted_layout` lays a dialog out as its content in a :class:`Scrolled` above its buttons
and fits it each time it is shown (:func:`fit_on_show`); a dialog whose content grows while it
is open fits it again: :func:`fit_screen` (a run's summary), :func:`fit_to_show` (a refusal,
scrolled into view). The room is read in one place, :func:`available_room`, so that a test
can play a smaller screen.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QFrame, QLayout, QScrollArea, QVBoxLayout, QWidget

#: Room kept for the title bar before the window manager has drawn one (pixels).
TITLE_BAR_ROOM = 40


def available_room(widget: QWidget) -> QRect:
    """The part of ``widget``'s screen a window may take (the desktop's panels left out)."""
    return widget.screen().availableGeometry()


class Scrolled(QScrollArea):
    """``content`` scrolled up and down, hinting at its whole height (a plain scroll area's
    hint stops at 24 lines), so that a dialog around it is only as short as the screen
    makes it."""

    def __init__(self, content: QWidget, parent: QWidget) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # Tab goes from field to field (each scrolled into view), never to the area itself.
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setWidgetResizable(True)
        self.setWidget(content)

    def content_widget(self) -> QWidget:
        """The content given at construction (never taken out)."""
        content = self.widget()
        assert content is not None
        return content

    def sizeHint(self) -> QSize:
        return self.content_widget().sizeHint()

    def minimumSizeHint(self) -> QSize:
        """As narrow as the content allows, with room for the scroll bar beside it."""
        return QSize(self.content_widget().minimumSizeHint().width()
                     + self.verticalScrollBar().sizeHint().width(),
                     super().minimumSizeHint().height())


def fitted_layout(dialog: QWidget, body: QLayout, buttons: QWidget,
                  margins: tuple[int, int, int, int] = (20, 20, 20, 16),
                  spacing: int = 14) -> Scrolled:
    """Lay ``dialog`` out as ``body`` (everything but the buttons), scrolled where the screen
    is too short for it, above ``buttons``, which stay in view; fitted to the screen each time
    it is shown. Returns the scrolled part."""
    content = QWidget(dialog)
    body.setContentsMargins(0, 0, 0, 0)
    content.setLayout(body)
    scrolled = Scrolled(content, dialog)
    layout = QVBoxLayout(dialog)
    layout.setContentsMargins(*margins)
    layout.setSpacing(spacing)
    layout.addWidget(scrolled, 1)
    layout.addWidget(buttons)
    fit_on_show(dialog)
    return scrolled


def fit_screen(window: QWidget, centre: bool = False) -> None:
    """Make ``window`` as big as its content asks (never smaller than it is: the size it chose,
    or the user's) but no bigger than the room, its frame included, and move it into the room
    (``centre``: over its parent first). Scrolled content asks for its whole height, so what
    does not fit scrolls and the buttons below it stay in view."""
    for scrolled in window.findChildren(Scrolled):
        scrolled.updateGeometry()  # the layout asks the content's height again
    room = available_room(window)
    # geometry(), not size(): a dialog may name a field "size" (the Estimation dialog does)
    frame, inner = window.frameGeometry(), window.geometry()
    border = QSize(frame.width() - inner.width(),
                   max(frame.height() - inner.height(), TITLE_BAR_ROOM))
    hint = window.sizeHint()
    window.resize(min(max(inner.width(), hint.width()), room.width() - border.width()),
                  min(max(inner.height(), hint.height()), room.height() - border.height()))
    frame = QRect(window.frameGeometry().topLeft(), window.geometry().size() + border)
    parent = window.parentWidget()
    if centre:
        frame.moveCenter((parent.window().frameGeometry() if parent else room).center())
    window.move(max(room.left(), min(frame.left(), room.right() + 1 - frame.width())),
                max(room.top(), min(frame.top(), room.bottom() + 1 - frame.height())))


def fit_to_show(widget: QWidget) -> None:
    """Fit ``widget``'s dialog to the screen again now that ``widget`` says more (a refusal,
    what a merge brought), and scroll it into view where the screen is too short for it: its
    beginning, and as much of the rest as there is room for."""
    window = widget.window()
    fit_screen(window)
    QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)  # placed where it goes
    for scrolled in window.findChildren(Scrolled):
        if scrolled.isAncestorOf(widget):
            top = widget.mapTo(scrolled.content_widget(), QPoint(0, 0))
            half = min(widget.height(), scrolled.viewport().height()) // 2
            scrolled.ensureVisible(top.x(), top.y() + half, 0, half)


class _FitOnShow(QObject):
    """Fits the window it belongs to as it is shown, before it is drawn; one never moved yet
    is centred over its parent first (in place of Qt's own placing, which knows only the
    whole screen)."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (event.type() == QEvent.Type.Show and not event.spontaneous()
                and isinstance(watched, QWidget)):
            try:
                fit_screen(watched, centre=not watched.testAttribute(Qt.WidgetAttribute.WA_Moved))
            except Exception:  # leaving an event filter, it would end the process (PySide 6.11)
                sys.excepthook(*sys.exc_info())  # the app's one error path (physgrade_ui.app)
        return False


def fit_on_show(window: QWidget) -> None:
    """Fit ``window`` to the screen (:func:`fit_screen`) each time it is shown."""
    window.installEventFilter(_FitOnShow(window))
