"""The order of the reading: where the reference and the response stack, each keeps its header
in view and R jumps from one to the other; where they stand side by side, R says so."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWebEngineCore import QWebEngineScript  # noqa: E402

from conftest import grading_window  # noqa: E402
from physgrade_ui import reading  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_settings")

#: Where each part's header and column start, in px from the top of the view.
#: Nothing (null) while the response is not shown yet.
TOPS = """document.getElementById("response") && JSON.stringify(Object.fromEntries(
  ["reference", "response"].flatMap((id) => [
    [id, document.getElementById(id).getBoundingClientRect().top],
    [id + "_header", document.querySelector("#" + id + " > h2").getBoundingClientRect().top]])))"""


def tops(qtbot, window) -> dict[str, float]:
    """The measures of :data:`TOPS`, once the response is shown."""
    got: list[str | None] = []

    def measured() -> bool:
        got.clear()
        window.grading.reader.current.page().runJavaScript(
            TOPS, QWebEngineScript.ScriptWorldId.ApplicationWorld, got.append)
        qtbot.waitUntil(lambda: bool(got), timeout=10_000)
        return bool(got[0])

    qtbot.waitUntil(measured, timeout=10_000)
    return json.loads(str(got[0]))


def press(qtbot, window, key: Qt.Key) -> None:
    """A key on the focused widget of the active window, as the grader types it."""
    qtbot.keyClick(window.focusWidget(), key)


def test_r_jumps_to_the_response_and_back_where_they_stack(qtbot, demo):
    window = grading_window(qtbot, demo, 1440, 900)
    page = window.grading
    qtbot.waitUntil(lambda: tops(qtbot, window)["response"] > 900)  # 1.5 screens down
    assert not page.side_by_side() and page.bar.jump.isVisible()

    press(qtbot, window, Qt.Key.Key_R)
    qtbot.waitUntil(lambda: abs(tops(qtbot, window)["response"]) < 2)
    assert window.statusBar().currentMessage().startswith("Reading the response")

    press(qtbot, window, Qt.Key.Key_R)
    qtbot.waitUntil(lambda: abs(tops(qtbot, window)["reference"]) < 2)
    assert window.statusBar().currentMessage().startswith("Reading the reference")


def test_the_part_being_read_keeps_its_header_in_view(qtbot, demo):
    window = grading_window(qtbot, demo, 1440, 900)
    assert tops(qtbot, window)["reference"] > 0
    press(qtbot, window, Qt.Key.Key_Space)  # a screen down, into the reference
    qtbot.waitUntil(lambda: tops(qtbot, window)["reference"] < -300)
    measured = tops(qtbot, window)
    assert measured["response"] > 0  # still reading the reference, under its header
    assert measured["reference_header"] == pytest.approx(0, abs=1)


def test_side_by_side_the_key_says_so(qtbot, demo):
    window = grading_window(qtbot, demo, 1440, 900)
    page = window.grading
    press(qtbot, window, Qt.Key.Key_Q)  # the queue's width goes to the reading
    qtbot.waitUntil(page.side_by_side)
    assert page.reader.width() >= reading.SIDE_BY_SIDE_FROM
    qtbot.waitUntil(lambda: page.bar.jump.isHidden())
    press(qtbot, window, Qt.Key.Key_R)
    assert window.statusBar().currentMessage() == ("The reference and the response are side by "
                                                   "side.")
    measured = tops(qtbot, window)
    assert measured["response"] == pytest.approx(measured["reference"], abs=1)
