"""The Grade page's layout and pace, as a grader uses them: keys, kept across restarts."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QPoint, QRect, Qt  # noqa: E402

from conftest import grading_window, people_scores, press  # noqa: E402
from physgrade.demo import build_demo  # noqa: E402
from physgrade.project import Project  # noqa: E402
from physgrade_ui import preferences  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_settings")
WAIT_MS = 10_000


def test_queue_zoom_and_pane_sizes_are_kept_for_the_next_start(qtbot, demo: Path) -> None:
    window = grading_window(qtbot, demo)
    page = window.grading
    reading_width = page.reading.width()
    press(qtbot, window, "Q")
    assert page.queue.isHidden() and page.bar.queue.isChecked()
    qtbot.waitUntil(lambda: page.reading.width() > reading_width + 200)
    qtbot.keyClick(page.panel, Qt.Key.Key_Equal, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(page.panel, Qt.Key.Key_Equal, Qt.KeyboardModifier.ControlModifier)
    assert [view.zoomFactor() for view in page.reader.views] == [1.25, 1.25]
    assert page.bar.zoom_level.text() == "125%"
    sizes = page.sizes()
    page.moveSplitter(sizes[0] + sizes[1] - 60, 2)  # the grader widens the rubric
    moved = page.sizes()
    window.close()

    again = grading_window(qtbot, demo)
    page = again.grading
    assert page.queue.isHidden() and preferences.QUEUE_HIDDEN.get()
    assert [view.zoomFactor() for view in page.reader.views] == [1.25, 1.25]
    assert page.sizes()[2] == moved[2]
    press(qtbot, again, "Q")
    qtbot.keyClick(page.panel, Qt.Key.Key_0, Qt.KeyboardModifier.ControlModifier)
    assert page.queue.isVisible() and page.reader.current.zoomFactor() == 1.0


def test_each_project_keeps_its_own_pane_sizes(qtbot, demo: Path, tmp_path: Path) -> None:
    """The queue's width is the project's; the zoom is the reader's, in every project."""
    other = tmp_path / "other.physgrade"
    build_demo(other)
    window = grading_window(qtbot, demo)
    page = window.grading
    default_width = page.sizes()[0]
    page.moveSplitter(default_width + 120, 1)  # the grader widens the queue in the demo
    widened = page.sizes()[0]
    assert widened > default_width
    qtbot.keyClick(page.panel, Qt.Key.Key_Equal, Qt.KeyboardModifier.ControlModifier)

    assert window.open_project(other)
    assert page.sizes()[0] == widened  # first opened: the sizes last used anywhere
    assert page.reader.current.zoomFactor() == 1.1
    page.moveSplitter(widened - 100, 1)
    narrowed = page.sizes()[0]
    assert narrowed < widened

    assert window.open_project(demo)
    assert page.sizes()[0] == widened
    assert window.open_project(other)
    assert page.sizes()[0] == narrowed
    window.close()

    assert grading_window(qtbot, demo).grading.sizes()[0] == widened


def test_a_filter_that_matches_nothing_leaves_nothing_to_score(qtbot, demo: Path) -> None:
    """The rubric of the response shown last is greyed, without its scores or total, and the
    keys score nothing, until a response is on show again."""
    window = grading_window(qtbot, demo)
    page = window.grading
    press(qtbot, window, "U", "1")
    scored = page.item.response_id
    assert page.panel.total.text().startswith("1 / ")
    with Project.open(demo) as project:
        stored = people_scores(project)

    qtbot.keyClick(page.panel, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert page.queue.search.hasFocus()
    qtbot.keyClicks(page.queue.search, "no response says zyzzyva")
    qtbot.keyClick(page.queue.search, Qt.Key.Key_Return)
    assert page.queue.model.rowCount() == 0 and page.item is None
    panel = page.panel
    assert panel.total.text() == "" and panel.stages.text() == ""
    assert panel.scored.text() == "No response matches the filter."
    buttons = [button for row in panel.rows for button in row.buttons.buttons()]
    assert not any(button.isChecked() or button.isEnabled() for button in buttons)
    assert panel.hasFocus()
    press(qtbot, window, "1", "0", "N", Qt.Key.Key_Down, "1", "E")
    qtbot.mouseClick(buttons[0], Qt.MouseButton.LeftButton)
    assert not any(button.isChecked() for button in buttons) and panel.total.text() == ""
    assert page.hints.view.isHidden()  # no rules hint of the response shown last
    assert page.progress_bar.text() == "Nothing to grade"
    with Project.open(demo) as project:
        assert people_scores(project) == stored

    page.focus_search()
    qtbot.keyClick(page.queue.search, Qt.Key.Key_Backspace)
    qtbot.keyClick(page.queue.search, Qt.Key.Key_Return)
    assert page.queue.model.rowCount() == 126 and page.item is not None
    assert page.select(scored) and panel.total.text().startswith("1 / ")
    assert all(button.isEnabled() for row in panel.rows for button in row.buttons.buttons())


def test_the_descriptions_key_hides_what_the_levels_mean(qtbot, demo: Path) -> None:
    window = grading_window(qtbot, demo)
    row = window.grading.panel.rows[window.grading.panel.current]
    meanings = [meaning for _, meaning in row.level_labels.values()]
    assert all(meaning.isVisible() and meaning.text() for meaning in meanings)
    press(qtbot, window, "D")
    assert not any(meaning.isVisible() for meaning in meanings)
    assert preferences.DESCRIPTIONS_HIDDEN.get()
    press(qtbot, window, "D")
    assert all(meaning.isVisible() for meaning in meanings)


def test_progress_and_pace_follow_the_grading(qtbot, demo: Path) -> None:
    window = grading_window(qtbot, demo)
    page = window.grading
    graded = page.queue.model.graded_count()
    assert page.progress_bar.value() == graded and page.progress_bar.maximum() == 126
    assert page.pace_label.text() == "Session: 0"
    for finished in range(1, 5):  # too few for a rate
        press(qtbot, window, "U", *["1"] * len(page.item.rubric.criteria))
        assert page.pace_label.text() == f"Session: {finished}"
    press(qtbot, window, "U", *["1"] * len(page.item.rubric.criteria))
    assert page.progress_bar.value() == graded + 5
    assert page.pace_label.text().startswith("Session: 5 · ")
    assert page.pace_label.text().endswith("/h")


def test_partial_total_runs_out_of_the_rubric_maximum(qtbot, demo: Path) -> None:
    window = grading_window(qtbot, demo)
    page = window.grading
    press(qtbot, window, "U", "1", "0")
    assert page.panel.total.text() == f"1 / {page.item.rubric.maximum}"


def test_auto_advance_moves_on_once_the_last_criterion_is_scored(qtbot, demo: Path) -> None:
    window = grading_window(qtbot, demo)
    page = window.grading
    press(qtbot, window, "U")
    first = page.item.response_id
    press(qtbot, window, *["1"] * (len(page.item.rubric.criteria) - 1))
    qtbot.wait(2 * 400)
    assert page.item.response_id == first  # off by default
    window.grading.menu_actions[0].trigger()  # Grading ▸ Advance When a Response Is Graded
    assert preferences.AUTO_ADVANCE.get()
    press(qtbot, window, "1")
    qtbot.waitUntil(lambda: page.item.response_id != first, timeout=WAIT_MS)
    assert not page.item.complete


def test_comparison_opens_with_c_and_closes_with_escape(qtbot, demo: Path) -> None:
    window = grading_window(qtbot, demo)
    page = window.grading
    press(qtbot, window, "C")
    assert page.reading.currentWidget() is page.comparison
    assert page.bar.compare.isChecked()
    press(qtbot, window, Qt.Key.Key_Escape)
    assert page.reading.currentWidget() is page.reader and not page.bar.compare.isChecked()
    press(qtbot, window, "E")  # Esc is free again for the note once the comparison is closed


def test_the_grade_page_says_who_is_grading(qtbot, demo: Path) -> None:
    """Above the rubric, whole, on the smallest screen the app fits (1280×800)."""
    window = grading_window(qtbot, demo, 1280, 800)
    shown = window.grading.person_label
    assert shown.isVisible() and shown.text() == "Grading as expert-1"
    assert shown.fontMetrics().horizontalAdvance(shown.text()) <= shown.contentsRect().width()
    pane = window.grading.side.viewport()
    assert pane.rect().contains(QRect(shown.mapTo(pane, QPoint(0, 0)), shown.size()))


def test_the_queue_shows_each_models_name_readably_on_the_smallest_screen(qtbot,
                                                                          demo: Path) -> None:
    """The ids and marks take what they need and the model's name the rest: at 1280×800 each
    of the demo's models keeps enough of its name to be read, and its tooltip holds it whole."""
    window = grading_window(qtbot, demo, 1280, 800)
    table = window.grading.queue.table
    model = table.model()
    padding = 14  # the cell's padding (3 px) and the view's text margin (4 px), both sides
    shown: dict[str, str] = {}
    for row in range(model.rowCount()):
        index = model.index(row, 1)
        name = model.data(index)
        shown[name] = table.fontMetrics().elidedText(name, table.textElideMode(),
                                                     table.visualRect(index).width() - padding)
        assert name in model.data(index, Qt.ItemDataRole.ToolTipRole)
    assert set(shown) == {"helix-14b-instruct", "orbit-7b", "quark-lm-3"}
    assert len(set(shown.values())) == 3
    for name, text in shown.items():
        assert text == name or len(text.replace("…", "")) >= 8, (name, text)


def test_the_last_criterion_is_in_view_with_its_levels_on_the_smallest_screen(qtbot,
                                                                            demo: Path) -> None:
    """At 1280×800 the rubric is taller than the panel: scoring down to ANS brings its row,
    the levels it describes and the rules' hint, whole into view."""
    window = grading_window(qtbot, demo, 1280, 800)
    page = window.grading
    assert page.select("r-0002")
    qtbot.waitUntil(page.panel.hasFocus)
    criteria = page.item.rubric.criteria
    assert page.side.widget().height() > page.side.viewport().height()  # the panel scrolls
    press(qtbot, window, *("0" * (len(criteria) - 1)))
    assert page.panel.current_criterion.key == "ANS"
    row = page.panel.rows[page.panel.current]
    top = row.mapTo(page.side.viewport(), QPoint(0, 0)).y()
    assert top >= 0 and top + row.height() <= page.side.viewport().height()
