"""Marking where a response's reasoning breaks, on the Grade page, as a grader types it: the keys
move between the steps (template steps, or paragraphs outside the template), mark the first
wrong one or none, rate steps and give a category; each mark is in the project file at once,
kept in its history, undone by Ctrl+Z, and drawn on the reading."""

from __future__ import annotations

import json
import sqlite3
from functools import partial
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QLabel  # noqa: E402

from conftest import (  # noqa: E402
    PREFS_FULL,
    REFERENCE,
    grading_window,
    page_json,
    press,
    question,
    response,
    write_jsonl,
)
from physgrade import scores, step_marks  # noqa: E402
from physgrade.importer import import_file  # noqa: E402
from physgrade.project import Project  # noqa: E402
from physgrade.raters import LLM, ensure_rater  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_settings")
WAIT_MS = 10_000

THREE_STEPS = REFERENCE.replace("Final Answer: 10.0 m/s\n", """Step 2:
Reasoning: check the units.
Result: m/s
Step 3:
Reasoning: state it.
Result: $v = 10.0$ m/s
Final Answer: 10.0 m/s
""")
#: Outside the template: three paragraphs, one with markup that must stay text.
PARAGRAPHS = ("The speed grows by 2 m/s each second.\n\nAfter 5 s: <b>v</b> = $2 \\times 5$ = "
              "12 m/s.\n\nSo she goes 12 m/s.")

#: Each step element of the response in the reading: number, label, classes, tags' texts; and
#: whether any <b> element exists (a response's markup must stay text).
STEPS = """JSON.stringify({steps: [...document.querySelectorAll('#response .step')].map((box) => ({
  n: Number(box.dataset.step), label: box.querySelector('h3').firstChild.textContent,
  classes: [...box.classList].filter((name) => name !== 'step').sort(),
  tags: [...box.querySelectorAll('.step-tags .tag')].map((tag) => tag.textContent)})),
  bold: document.querySelectorAll('#response b').length})"""


@pytest.fixture
def marked(tmp_path: Path) -> Path:
    """A project with one question, a template response of three steps (model alpha) and a
    response of three paragraphs outside the template (model beta)."""
    path = tmp_path / "steps.physgrade"
    with Project.create(path) as project:
        import_file(project, write_jsonl(tmp_path / "q.jsonl", [question()]), "questions")
        import_file(project, write_jsonl(tmp_path / "r.jsonl", [
            response("r-a", model="alpha", text=THREE_STEPS),
            response("r-b", model="beta", text=PARAGRAPHS)]), "responses")
    return path


def steps_shown(qtbot, window, wanted) -> dict:
    """The reading's steps, once ``wanted`` (a test of them) holds."""
    found: list[dict] = []
    qtbot.waitUntil(lambda: bool(found.append(page_json(qtbot, window.grading.reader, STEPS))
                                 or wanted(found[-1]["steps"])), timeout=WAIT_MS)
    return found[-1]


def stored(path: Path) -> tuple | None:
    """expert-1's mark of r-a as the project file holds it (read on a connection of its own,
    so only what was committed is seen), its ratings as {step: rating}."""
    with sqlite3.connect(path) as conn:
        row = conn.execute(
            "SELECT m.first_wrong, m.taxonomy, m.category, m.ratings FROM step_marks m "
            "JOIN raters r ON r.id = m.rater_id WHERE r.name = 'expert-1' "
            "AND m.response_id = 'r-a'").fetchone()
    return None if row is None else (*row[:3], json.loads(row[3] or "{}"))


def history(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [action for (action,) in conn.execute(
            "SELECT action FROM step_mark_history WHERE response_id = 'r-a' ORDER BY id")]


def test_keys_mark_rate_and_categorise_a_step_each_committed_and_undone(qtbot, marked: Path) -> None:
    window = grading_window(qtbot, marked, 1280, 800)
    assert window.grading.item.response_id == "r-a"
    shown = steps_shown(qtbot, window, lambda steps: len(steps) == 3)
    assert [(s["n"], s["label"]) for s in shown["steps"]] == [(1, "Step 1"), (2, "Step 2"),
                                                              (3, "Step 3")]
    press(qtbot, window, Qt.Key.Key_W)  # no step outlined yet: nothing is written
    assert "Go to a step first" in window.statusBar().currentMessage()
    press(qtbot, window, Qt.Key.Key_G)
    assert "Mark the first wrong step first" in window.statusBar().currentMessage()
    assert stored(marked) is None

    press(qtbot, window, Qt.Key.Key_BracketRight, Qt.Key.Key_Plus, Qt.Key.Key_W)
    assert stored(marked) == (2, None, None, {"1": 1})  # + rated step 1 and moved on to 2
    shown = steps_shown(qtbot, window, lambda steps: "first-wrong" in steps[1]["classes"])
    assert [s["classes"] for s in shown["steps"]] == [["right"], ["current", "first-wrong"], []]
    assert shown["steps"][0]["tags"] == ["right", "rated +1"]
    assert shown["steps"][1]["tags"] == ["first wrong step"]
    assert "First wrong: Step 2 · no category yet" in window.grading.marking.summary.mark.text()

    press(qtbot, window, Qt.Key.Key_G)
    picker = window.grading.marking.picker
    assert picker.isVisible() and picker.hasFocus()
    press(qtbot, window, Qt.Key.Key_Down, Qt.Key.Key_Down, Qt.Key.Key_Down, Qt.Key.Key_Down,
          Qt.Key.Key_Return)  # the fifth: calculation
    assert not picker.isVisible() and window.grading.panel.hasFocus()
    assert stored(marked) == (2, "p-refs", "calculation", {"1": 1})
    shown = steps_shown(qtbot, window, lambda steps: len(steps[1]["tags"][0]) > 16)
    assert shown["steps"][1]["tags"] == ["first wrong step · Calculation error"]
    assert window.grading.marking.summary.mark.text() == "First wrong: Step 2 · Calculation error"
    assert history(marked) == ["set", "change", "change"]

    # Ctrl+Z takes back one change at a time: the category, the first wrong step, the rating.
    press(qtbot, window, Qt.Key.Key_Minus)  # step 2 rated −1: the last step is outlined next
    assert stored(marked) == (2, "p-refs", "calculation", {"1": 1, "2": -1})
    for before in ((2, "p-refs", "calculation", {"1": 1}), (2, None, None, {"1": 1}),
                   (None, None, None, {"1": 1}), None):
        qtbot.keyClick(window.focusWidget(), Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
        assert stored(marked) == before
    assert history(marked)[-1] == "clear"
    steps_shown(qtbot, window, lambda steps: all(not s["tags"] for s in steps))

    press(qtbot, window, Qt.Key.Key_O)  # no error: every step right
    assert stored(marked) == (0, None, None, {})
    steps_shown(qtbot, window, lambda steps: all("right" in s["classes"] for s in steps))
    press(qtbot, window, Qt.Key.Key_O)
    assert stored(marked) is None
    with sqlite3.connect(marked) as conn:  # nothing was scored by the keys
        assert conn.execute("SELECT count(*) FROM scores").fetchone() == (0,)


def test_the_picker_takes_its_keys_and_esc_cancels(qtbot, marked: Path) -> None:
    window = grading_window(qtbot, marked)
    steps_shown(qtbot, window, lambda steps: len(steps) == 3)
    press(qtbot, window, Qt.Key.Key_BracketLeft, Qt.Key.Key_W)  # [ first: the last step
    assert stored(marked) == (3, None, None, {})
    press(qtbot, window, Qt.Key.Key_G, Qt.Key.Key_Escape)
    assert not window.grading.marking.picker.isVisible()
    assert stored(marked) == (3, None, None, {})
    press(qtbot, window, Qt.Key.Key_G, Qt.Key.Key_3)  # a digit chooses, and scores nothing
    assert stored(marked) == (3, "p-refs", "wrong_concept", {})
    press(qtbot, window, Qt.Key.Key_G, Qt.Key.Key_0)  # 0: no category
    assert stored(marked) == (3, None, None, {})
    with sqlite3.connect(marked) as conn:
        assert conn.execute("SELECT count(*) FROM scores").fetchone() == (0,)
    keys = [keys for keys, _ in window.grading.help_section()[1]]
    assert {"[  ]", "W", "O", "G", "+  -  =", "Ctrl+Z"} <= set(keys)

    # Scored CAL 0, the grader finds the category it belongs to offered first.
    assert window.ops.write(partial(scores.set_score, grader="expert-1", response_id="r-a",
                                    criterion="CAL", value=0))
    press(qtbot, window, Qt.Key.Key_G)
    picker = window.grading.marking.picker
    assert picker.keys[picker.current] == "calculation"
    assert "you scored CAL low" in [widget.text() for widget in
                                    picker.rows[picker.current].findChildren(QLabel)]
    press(qtbot, window, Qt.Key.Key_Return)
    assert stored(marked) == (3, "p-refs", "calculation", {})


def test_paragraphs_of_a_response_outside_the_template_are_its_steps(qtbot,
                                                                     marked: Path) -> None:
    window = grading_window(qtbot, marked)
    steps_shown(qtbot, window, lambda steps: len(steps) == 3)
    press(qtbot, window, Qt.Key.Key_Right)
    qtbot.waitUntil(lambda: window.grading.item.response_id == "r-b", timeout=WAIT_MS)
    shown = steps_shown(qtbot, window, lambda steps: steps and steps[0]["label"] == "Paragraph 1")
    assert [s["label"] for s in shown["steps"]] == ["Paragraph 1", "Paragraph 2", "Paragraph 3"]
    assert shown["bold"] == 0  # the response's markup is text
    press(qtbot, window, Qt.Key.Key_BracketRight, Qt.Key.Key_BracketRight, Qt.Key.Key_W)
    with sqlite3.connect(marked) as conn:
        assert conn.execute("SELECT first_wrong FROM step_marks WHERE response_id = 'r-b'"
                            ).fetchall() == [(2,)]
    shown = steps_shown(qtbot, window, lambda steps: "first-wrong" in steps[1]["classes"])
    assert shown["steps"][0]["tags"] == ["right"]
    # Back on the first response, its own (empty) mark; the undo goes back to r-b's.
    press(qtbot, window, Qt.Key.Key_Left)
    qtbot.waitUntil(lambda: window.grading.item.response_id == "r-a", timeout=WAIT_MS)
    assert window.grading.marking.summary.mark.text().startswith("Not marked")
    qtbot.keyClick(window.focusWidget(), Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.grading.item.response_id == "r-b", timeout=WAIT_MS)
    with sqlite3.connect(marked) as conn:
        assert conn.execute("SELECT count(*) FROM step_marks").fetchone() == (0,)


def test_the_comparison_shows_each_raters_first_wrong_step_once_revealed(qtbot,
                                                                           marked: Path) -> None:
    with Project.open(marked) as project, project.transaction():
        judge, _ = ensure_rater(project, "arbiter", LLM, "v1")
        scores.write(project, judge, scores.scored(project, "r-a"), PREFS_FULL)
        step_marks.write_mark(project, judge, "r-a", 3, "p-refs", "units")
    window = grading_window(qtbot, marked, 1440, 900)
    page = window.grading
    assert page.item.response_id == "r-a"
    press(qtbot, window, Qt.Key.Key_BracketRight, Qt.Key.Key_BracketRight, Qt.Key.Key_W)
    for digit in "11111212":  # every criterion: the comparison is revealed
        press(qtbot, window, getattr(Qt.Key, f"Key_{digit}"))
    with qtbot.waitSignal(page.comparison.rendered, timeout=WAIT_MS):
        press(qtbot, window, Qt.Key.Key_C)
    cells = page_json(qtbot, page.comparison.view, "JSON.stringify([...document."
                      "querySelectorAll('tr.steps td')].map((td) => [td.className, "
                      "td.textContent]))")
    assert cells == [["you", "Step 2"], ["differs", "Step 3 · Units or consistency"]]
