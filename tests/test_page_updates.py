"""Every page stays current without F5: a change made on one page shows on the others as soon
as they are shown (Ctrl+1…), on the real demo project, by keyboard as a person works. No test
here refreshes the window; each reads back what the project file holds through a fresh
connection where it checks a count."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from conftest import press  # noqa: E402
from physgrade.project import Project  # noqa: E402
from physgrade.validation import sampling  # noqa: E402
from physgrade_ui.main_window import MainWindow  # noqa: E402
from physgrade_ui.questions import COLUMNS  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_settings")

JUDGES = ["arbiter-large [prefs-v1]", "arbiter-mini [prefs-v1]"]


def ctrl(qtbot, window: MainWindow, number: int) -> None:
    """Ctrl+``number``: show that page, as a person switches pages."""
    window.activateWindow()  # shortcuts go to the active window
    qtbot.waitUntil(window.isActiveWindow, timeout=5_000)
    qtbot.keyClick(QApplication.focusWidget() or window, getattr(Qt.Key, f"Key_{number}"),
                   Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.pages.currentIndex() == number - 1, timeout=5_000)


def has_keyboard(qtbot, widget) -> None:
    """Wait until ``widget`` has the keyboard."""
    qtbot.waitUntil(lambda: QApplication.focusWidget() is widget, timeout=5_000)


def card(window: MainWindow, key: str) -> int:
    """The number an Overview card shows."""
    return int(window.overview.cards[key].number.text().replace(",", ""))


def wait_card(qtbot, window: MainWindow, key: str, expected: int) -> None:
    """Until the Overview card shows ``expected`` (the page counts in the background)."""
    qtbot.waitUntil(lambda: card(window, key) == expected, timeout=10_000)


def cell(window: MainWindow, question_id: str, column: str) -> str:
    """What the Questions page's list shows for a question in a column."""
    page = window.questions
    number = next(i for i, (title, _) in enumerate(COLUMNS) if title == column)
    for row in range(page.proxy.rowCount()):
        if page.proxy.index(row, 0).data() == question_id:
            return str(page.proxy.index(row, number).data())
    raise AssertionError(f"{question_id} is not listed")


def stored_count(path: Path, table: str) -> int:
    with Project.open(path) as project:
        return project.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


@pytest.fixture
def sampled(demo: Path, request) -> MainWindow:
    """The window on the demo with an audit sample drawn (through the core, before it opened)."""
    with Project.open(demo) as project:
        sampling.draw(project, "Pilot", JUDGES, 1, 7)
    return request.getfixturevalue("window")


def test_a_bloom_label_shows_on_the_overview_and_the_questions(window: MainWindow, demo: Path,
                                                               qtbot) -> None:
    before = stored_count(demo, "bloom_labels")
    ctrl(qtbot, window, 1)   # the Overview and the Questions, read before the label is given
    wait_card(qtbot, window, "bloom_labels", before)
    ctrl(qtbot, window, 3)
    assert (cell(window, "q-0002", "Bloom level"), cell(window, "q-0002", "Knowledge")) == \
        ("Apply", "Procedural")

    ctrl(qtbot, window, 7)
    page = window.bloom
    has_keyboard(qtbot, page.pickers)
    assert page.item.question_id == "q-0001"
    # q-0002 has no other person's label: expert-1's label alone becomes its final label.
    press(qtbot, window, "n", "4", "w")
    assert page.item.question_id == "q-0003"
    assert stored_count(demo, "bloom_labels") == before + 1

    ctrl(qtbot, window, 1)
    wait_card(qtbot, window, "bloom_labels", before + 1)
    ctrl(qtbot, window, 3)
    assert (cell(window, "q-0002", "Bloom level"), cell(window, "q-0002", "Knowledge")) == \
        ("Analyze", "Conceptual")

    # Back on the Bloom page the session goes on where it was.
    ctrl(qtbot, window, 7)
    assert page.item.question_id == "q-0003"
    assert page.stats.text().startswith("1 labelled this session")


def test_an_audit_review_shows_on_the_overview(sampled: MainWindow, demo: Path,
                                               qtbot) -> None:
    window = sampled
    before = stored_count(demo, "judge_reviews")
    ctrl(qtbot, window, 1)   # the Overview, read before the review is given
    wait_card(qtbot, window, "judge_reviews", before)

    ctrl(qtbot, window, 6)
    page = window.audit
    has_keyboard(qtbot, page.panel)
    assert page.sample.currentText() == "Pilot" and not page.view.done
    press(qtbot, window, *["2"] * len(page.view.scores), "C")
    assert page.view.done
    assert stored_count(demo, "judge_reviews") == before + 1

    ctrl(qtbot, window, 1)
    wait_card(qtbot, window, "judge_reviews", before + 1)


def test_the_keyboard_goes_to_the_page_shown(sampled: MainWindow, qtbot) -> None:
    window = sampled
    ctrl(qtbot, window, 3)
    page = window.questions
    has_keyboard(qtbot, page.table)
    first = page.current_id()
    press(qtbot, window, Qt.Key.Key_Down)   # moves in the list of questions, not of pages
    assert page.current_id() not in (None, first)
    assert window.pages.currentIndex() == 2 and window.navigation.currentRow() == 2

    ctrl(qtbot, window, 6)
    has_keyboard(qtbot, window.audit.panel)
    ctrl(qtbot, window, 7)
    has_keyboard(qtbot, window.bloom.pickers)


def test_a_grade_shows_on_the_overview_and_the_questions(window: MainWindow, demo: Path,
                                                         qtbot) -> None:
    from physgrade.queries import graded_responses, graded_sql

    with Project.open(demo) as project:
        graded_before = graded_responses(project)
        ungraded = project.conn.execute(
            f"SELECT id FROM responses WHERE id NOT IN ({graded_sql()}) ORDER BY id"
        ).fetchone()[0]
    ctrl(qtbot, window, 1)   # the Overview and the Questions, read before the grade is given
    qtbot.waitUntil(lambda: window.overview.graded.caption.text().startswith(
        f"{graded_before} of "), timeout=10_000)
    ctrl(qtbot, window, 2)
    page = window.grading
    assert page.select(ungraded)
    item = page.item
    assert item is not None and item.response_id == ungraded
    ctrl(qtbot, window, 3)
    question_graded = int(cell(window, item.question.id, "Graded"))

    ctrl(qtbot, window, 2)
    has_keyboard(qtbot, page.panel)
    page.panel.set_current(0)
    press(qtbot, window, *["0"] * len(item.rubric.criteria))
    with Project.open(demo) as project:
        assert graded_responses(project) == graded_before + 1

    ctrl(qtbot, window, 1)
    qtbot.waitUntil(lambda: window.overview.graded.caption.text().startswith(
        f"{graded_before + 1} of "), timeout=10_000)
    ctrl(qtbot, window, 3)
    assert int(cell(window, item.question.id, "Graded")) == question_graded + 1


def test_a_page_first_shown_after_a_grade_shows_it(window: MainWindow, demo: Path,
                                                   qtbot) -> None:
    """Pages other than the Grade page are built when first shown; one built after a grade
    reads the project as it is then."""
    from PySide6.QtWidgets import QWidget

    from physgrade.queries import graded_sql, question_rows

    with Project.open(demo) as project:
        ungraded = project.conn.execute(
            f"SELECT id FROM responses WHERE id NOT IN ({graded_sql()}) ORDER BY id"
        ).fetchone()[0]
        before = {row.id: row.graded for row in question_rows(project)}
    ctrl(qtbot, window, 2)
    page = window.grading
    assert page.select(ungraded)
    has_keyboard(qtbot, page.panel)
    page.panel.set_current(0)
    press(qtbot, window, *["0"] * len(page.item.rubric.criteria))
    assert type(window.pages.widget(2)) is QWidget  # the Questions page: not built yet

    ctrl(qtbot, window, 3)
    question_id = page.item.question.id
    assert int(cell(window, question_id, "Graded")) == before[question_id] + 1
