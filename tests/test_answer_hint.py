"""The rules' hint beside ANS: the real answer checker, run off the GUI thread, never scoring."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QRect, Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from conftest import grading_window, question, response, shot, write_jsonl  # noqa: E402
from physgrade.answers.outcome import Check, Outcome, Settings  # noqa: E402
from physgrade.answers.sandbox import Checker  # noqa: E402
from physgrade.answers.verify import store  # noqa: E402
from physgrade.importer import import_file  # noqa: E402
from physgrade.project import Project  # noqa: E402
from physgrade_ui import answer_hint  # noqa: E402
from physgrade_ui.answer_hint import AnswerHint  # noqa: E402
from physgrade_ui.main_window import MainWindow  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_settings")
WAIT_MS = 30_000  # the first check starts the checker's worker (sympy and pint load there)
WRONG = "v = a t = 2.0 x 7.6\nFinal Answer: 15.2 m/s"


@pytest.fixture
def graded(loaded: Project, tmp_path: Path) -> Project:
    """``loaded`` with a wrong response to q-1 (r-4) and a question without answer (q-2, r-5)."""
    import_file(loaded, write_jsonl(tmp_path / "q2.jsonl", [
        question("q-2", answer=None, answer_type=None, unit=None,
                 question="Explain why the sky looks blue.")]), "questions")
    import_file(loaded, write_jsonl(tmp_path / "r2.jsonl", [
        response("r-4", text=WRONG, model="quark-lm-3"),
        response("r-5", "q-2", text="Rayleigh scattering: blue light scatters more.")]),
        "responses")
    return loaded


class GatedChecker(Checker):
    """The real checker, which records the threads it is made and used on and, while the gate
    is closed, holds each check back (so a test can act while a check is under way)."""

    made: list[threading.Thread] = []
    used: list[threading.Thread] = []
    gate = threading.Event()

    def __init__(self, *args, **kwargs) -> None:
        GatedChecker.made.append(threading.current_thread())
        super().__init__(*args, **kwargs)

    def check(self, request):
        GatedChecker.used.append(threading.current_thread())
        assert GatedChecker.gate.wait(WAIT_MS / 1000)
        return super().check(request)


@pytest.fixture
def gated(monkeypatch) -> type[GatedChecker]:
    GatedChecker.made, GatedChecker.used = [], []
    GatedChecker.gate = threading.Event()
    monkeypatch.setattr(answer_hint, "Checker", GatedChecker)
    yield GatedChecker
    GatedChecker.gate.set()  # never leave a worker thread waiting


def open_window(qtbot, path: Path) -> MainWindow:
    return grading_window(qtbot, path, 1500, 940, WAIT_MS)


def hint_of(window: MainWindow) -> AnswerHint:
    return window.grading.hints.view


def show(qtbot, window: MainWindow, response_id: str) -> None:
    page = window.grading
    if page.item is None or page.item.response_id != response_id:
        assert page.select(response_id)
    assert page.item.response_id == response_id


def wait_idle(qtbot, window: MainWindow) -> None:
    qtbot.waitUntil(lambda: window.grading.hints.worker is None, timeout=WAIT_MS)


def rules_rows(path: Path) -> list[tuple]:
    """Everything the rules rater holds: its assessments and scores."""
    with Project.open(path) as project:
        return project.conn.execute(
            "SELECT 'a', a.response_id, a.status, a.comment, NULL FROM assessments a "
            "JOIN raters t ON t.id = a.rater_id WHERE t.name = 'rules' UNION ALL "
            "SELECT 's', s.response_id, s.criterion, s.note, s.value FROM scores s "
            "JOIN raters t ON t.id = s.rater_id WHERE t.name = 'rules' ORDER BY 1, 2, 3"
        ).fetchall()


def human_scores(path: Path, response_id: str) -> dict[str, int | None]:
    with Project.open(path) as project:
        return dict(project.conn.execute(
            "SELECT s.criterion, s.value FROM scores s JOIN raters t ON t.id = s.rater_id "
            "WHERE t.kind = 'human' AND s.response_id = ?", (response_id,)).fetchall())


def test_a_live_check_runs_off_the_gui_thread_and_shows_its_outcome_and_reason(
        qtbot, graded: Project, gated) -> None:
    window = open_window(qtbot, graded.path)
    show(qtbot, window, "r-1")
    hint = hint_of(window)
    # The check is held back, yet the window goes on: the hint says it is checking.
    assert hint.isVisible() and hint.line == "Rules: checking…"
    qtbot.wait(200)
    assert hint.line == "Rules: checking…" and window.grading.hints.worker.is_running()

    with qtbot.waitSignal(window.grading.hints.shown, timeout=WAIT_MS) as shown:
        gated.gate.set()
    assert shown.args == ["r-1"]
    assert hint.line == "Rules: ✓ equivalent — 10.0 m/s vs 10.0 m/s: equal"
    assert "Answer found: 10.0 m/s" in hint.toolTip() and "not stored" in hint.toolTip()
    assert "never sets a score" in hint.toolTip()
    main = threading.main_thread()
    assert gated.made and all(thread is not main for thread in gated.made + gated.used)
    assert len(gated.made) == 1  # one checker for the window's lifetime

    # The ANS row holds the hint, in the muted style, and it takes no focus.
    ans = next(row for row in window.grading.panel.rows if row.criterion.key == "ANS")
    assert hint.parentWidget() is ans
    assert hint.text.property("role") == "muted" and hint.focusPolicy() == Qt.FocusPolicy.NoFocus

    checker = window.grading.hints.checker
    workers = [worker.process for worker in checker._workers]
    assert workers and all(process.is_alive() for process in workers)
    window.close()  # closing the window closes the checker and its worker processes
    assert window.grading.hints.checker is None
    assert not any(process.is_alive() for process in workers)


def test_a_stored_check_shows_at_once_without_starting_the_checker(
        qtbot, graded: Project, monkeypatch) -> None:
    made = []
    monkeypatch.setattr(answer_hint, "Checker", lambda *a, **k: made.append(1) or Checker())
    store(graded, Settings(), [
        ("r-1", Check(Outcome.EQUIVALENT, "10.0 m/s vs 10.0 m/s: equal", "10.0 m/s")),
        ("r-4", Check(Outcome.NOT_EQUIVALENT, "15.2 m/s vs 10.0 m/s: 52% off, more than 2%",
                      "15.2 m/s"))])
    window = open_window(qtbot, graded.path)  # r-1 first: its stored check is on show at once
    hint = hint_of(window)
    assert window.grading.item.response_id == "r-1"
    assert hint.line == "Rules: ✓ equivalent — 10.0 m/s vs 10.0 m/s: equal"
    show(qtbot, window, "r-4")
    assert hint.line == "Rules: ✗ not equivalent — 15.2 m/s vs 10.0 m/s: 52% off, more than 2%"
    assert "stored by" in hint.toolTip() and "Answer found: 15.2 m/s" in hint.toolTip()
    assert window.grading.hints.worker is None and window.grading.hints.checker is None
    qtbot.wait(300)
    assert made == [] and window.grading.hints.checker is None


def test_each_response_shows_its_own_result_never_a_stale_one(qtbot, graded: Project,
                                                             gated) -> None:
    window = open_window(qtbot, graded.path)
    hints = window.grading.hints
    seen: list[tuple[str, str | None]] = []  # (response on show, answer the hint shows)
    show_check = hints.view.show_check
    hints.view.show_check = lambda check, *rest: (
        seen.append((window.grading.item.response_id, check.answer)), show_check(check, *rest))

    show(qtbot, window, "r-1")       # its check is held back...
    show(qtbot, window, "r-3")       # ...while the grader moves on twice
    show(qtbot, window, "r-4")
    assert hint_of(window).line == "Rules: checking…"
    with qtbot.waitSignal(hints.shown, timeout=WAIT_MS) as shown:
        gated.gate.set()
    assert shown.args == ["r-4"]
    line = hint_of(window).line
    assert line == "Rules: ✗ not equivalent — 15.2 m/s vs 10.0 m/s: 52% off, more than 1%"
    assert seen == [("r-4", "15.2 m/s")]  # r-1's result came back first and was not shown
    assert set(hints.checks) == {"r-1", "r-4"}  # r-3 was skipped over, r-1 kept for later

    window.grading.panel.set_current(7)  # the ANS row, as a grader reaches it
    qtbot.wait(100)
    shot(window, "answer-hint.png")

    show(qtbot, window, "r-1")       # checked earlier this session: at once, no new check
    assert hints.worker is None
    assert hint_of(window).line == "Rules: ✓ equivalent — 10.0 m/s vs 10.0 m/s: equal"
    show(qtbot, window, "r-3")       # multiple choice, checked now
    assert hint_of(window).line == "Rules: checking…"
    qtbot.waitUntil(lambda: "option C vs C" in hint_of(window).line, timeout=WAIT_MS)
    assert hint_of(window).line == "Rules: ✓ equivalent — option C vs C"
    show(qtbot, window, "r-2")
    qtbot.waitUntil(lambda: "10 m/s vs 10.0 m/s" in hint_of(window).line, timeout=WAIT_MS)
    assert seen[-3:] == [("r-1", "10.0 m/s"), ("r-3", "C"), ("r-2", "10 m/s")]
    assert len(gated.made) == 1


def test_keys_score_as_before_and_the_hint_never_scores(qtbot, graded: Project) -> None:
    store(graded, Settings(), [("r-2", Check(Outcome.EQUIVALENT, "10 m/s vs 10.0 m/s: equal",
                                             "10 m/s"))])
    rules_before = rules_rows(graded.path)
    window = open_window(qtbot, graded.path)
    page = window.grading
    show(qtbot, window, "r-1")
    qtbot.waitUntil(lambda: "equivalent" in hint_of(window).line, timeout=WAIT_MS)

    # A click on the hint neither scores nor takes the keyboard from the panel.
    qtbot.mouseClick(hint_of(window).text, Qt.MouseButton.LeftButton)
    assert page.panel.hasFocus() and human_scores(graded.path, "r-1") == {}

    keys = [row.criterion.key for row in page.panel.rows]
    for key in ["1"] * 7:
        qtbot.keyClick(QApplication.focusWidget(), key)
    assert page.panel.current_criterion.key == "ANS" and page.panel.hasFocus()
    qtbot.keyClick(QApplication.focusWidget(), "2")
    assert human_scores(graded.path, "r-1") == {**{key: 1 for key in keys[:7]}, "ANS": 2}
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Right)  # on to r-2, stored: equivalent
    assert page.item.response_id == "r-2" and page.panel.hasFocus()
    assert hint_of(window).line == "Rules: ✓ equivalent — 10 m/s vs 10.0 m/s: equal"
    assert human_scores(graded.path, "r-2") == {}
    qtbot.keyClick(QApplication.focusWidget(), "Z", Qt.KeyboardModifier.ControlModifier)
    wait_idle(qtbot, window)
    assert human_scores(graded.path, "r-1") == {key: 1 for key in keys[:7]}
    window.close()
    assert rules_rows(graded.path) == rules_before  # live checks are never stored


def test_no_hint_for_a_question_without_a_reference_answer(qtbot, graded: Project,
                                                           gated) -> None:
    window = open_window(qtbot, graded.path)
    show(qtbot, window, "r-1")
    assert hint_of(window).isVisible()
    show(qtbot, window, "r-5")       # q-2 has no answer; r-1's check is still under way
    assert hint_of(window).isHidden()
    gated.gate.set()
    wait_idle(qtbot, window)
    assert hint_of(window).isHidden() and window.grading.item.response_id == "r-5"
    show(qtbot, window, "r-1")
    assert hint_of(window).line.startswith("Rules: ✓ equivalent")


def test_switching_project_during_a_check_shows_the_new_projects_result(
        qtbot, graded: Project, demo: Path, gated) -> None:
    window = open_window(qtbot, graded.path)
    show(qtbot, window, "r-1")
    assert hint_of(window).line == "Rules: checking…"
    assert window.open_project(demo)     # the old project closes while its check is under way
    shown = window.grading.item.response_id
    assert hint_of(window).line == "Rules: checking…"
    gated.gate.set()
    qtbot.waitUntil(lambda: window.grading.hints.checks.keys() == {shown}, timeout=WAIT_MS)
    assert hint_of(window).line.startswith("Rules: ") and "checking" not in hint_of(window).line
    assert "r-1" not in window.grading.hints.checks  # the old project's result is dropped
    assert len(gated.made) == 1


# -- issue 18: a hint that does not mislead ----------------------------------------------------

@pytest.mark.parametrize("check, line", [
    (Check(Outcome.NOT_CHECKED, "the response's answer gives no direction"),
     "Rules: not checked — the response's answer gives no direction"),
    (Check(Outcome.UNPARSEABLE, "response answer: 'x' is a word"),
     "Rules: could not be read: response answer: 'x' is a word"),
    (Check(Outcome.NO_ANSWER, "no final answer found in the response"), "Rules: no answer found"),
    (Check(Outcome.TIMEOUT, "the check took longer than 2 s"), "Rules: timed out"),
])
def test_only_a_sure_verdict_carries_a_mark(qtbot, check: Check, line: str) -> None:
    """Not checked, unreadable, no answer and timed out show neither ✓ nor ✗."""
    hint = AnswerHint()
    qtbot.addWidget(hint)
    hint.show_check(check, "10.0 m/s", was_stored=False)
    assert hint.line == line and hint.mark == ""
    assert "✗" not in hint.prefix.text() and "✓" not in hint.prefix.text()
    assert "Outcome: " + check.outcome.value.replace("_", " ") in hint.toolTip()


VECTOR = "130 m, 22.6° north of east"


@pytest.fixture
def vectors(project: Project, tmp_path: Path) -> Project:
    """A displacement question (a vector answer) and three responses to it."""
    import_file(project, write_jsonl(tmp_path / "q.jsonl", [
        question("q-v", answer=VECTOR, answer_type="NV", unit=None,
                 question="A hiker walks 120 m east and then 50 m north. Find the displacement.")
    ]), "questions")
    import_file(project, write_jsonl(tmp_path / "r.jsonl", [
        response("r-right", "q-v", text="Add the legs.\nFinal Answer: **130 m at 22.6° north of east**"),
        response("r-twin", "q-v", text="Add the legs.\nFinal Answer: **130 m at 67.4° north of east**"),
        response("r-bare", "q-v", text="Add the legs.\nFinal Answer: 130 m")]), "responses")
    return project


def test_a_vector_answer_is_hinted_right_and_its_wrong_angle_twin_wrong(qtbot, vectors: Project) -> None:
    """The correct displacement used to show ✗ "the reference has 2 answers; the response gives
    1"; its twin with the complementary angle is wrong, and a magnitude alone is not checked."""
    window = open_window(qtbot, vectors.path)
    hint = hint_of(window)
    lines = {}
    for rid in ("r-right", "r-twin", "r-bare"):
        show(qtbot, window, rid)
        qtbot.waitUntil(lambda: "checking" not in hint.line, timeout=WAIT_MS)
        lines[rid] = hint.line
    assert lines["r-right"].startswith("Rules: ✓ equivalent — magnitude: 130 m vs 130 m: equal; "
                                       "direction: 22.6° north of east vs 22.6° north of east")
    assert lines["r-twin"].startswith("Rules: ✗ not equivalent — magnitude: 130 m vs 130 m: equal; "
                                      "direction: 67.4° north of east vs 22.6° north of east")
    assert lines["r-bare"] == ("Rules: not checked — the response's answer gives no direction "
                               "(magnitude: 130 m vs 130 m: equal)")
    assert "answers" not in "".join(lines.values())


def test_the_hint_waits_for_the_graders_own_ans_score_when_asked(qtbot, graded: Project,
                                                                monkeypatch) -> None:
    """With the blind-study preference on, the hint says it is hidden and no check runs until
    the grader has scored ANS; then the check is shown."""
    from physgrade_ui import preferences

    made = []
    monkeypatch.setattr(answer_hint, "Checker", lambda *a, **k: made.append(1) or Checker())
    preferences.HINT_AFTER_ANSWER.set(True)
    window = open_window(qtbot, graded.path)
    page, hint = window.grading, hint_of(window)
    show(qtbot, window, "r-4")       # wrong: its ✗ must not show before the grader's own score
    assert hint.isVisible() and hint.line == "Rules: hidden until you score ANS"
    assert hint.text.property("role") == "muted" and hint.mark == ""
    keys = [row.criterion.key for row in page.panel.rows]
    for key in ["1"] * 7:            # every criterion but ANS: still hidden
        qtbot.keyClick(QApplication.focusWidget(), key)
    assert page.panel.current_criterion.key == "ANS" and set(page.item.mine) == set(keys[:7])
    qtbot.wait(300)
    assert hint.line == "Rules: hidden until you score ANS"
    assert made == [] and page.hints.worker is None and page.hints.checks == {}

    qtbot.keyClick(QApplication.focusWidget(), "0")   # ANS scored: the check runs and shows
    assert human_scores(graded.path, "r-4")["ANS"] == 0
    qtbot.waitUntil(lambda: "checking" not in hint.line and "hidden" not in hint.line,
                    timeout=WAIT_MS)
    assert hint.line == "Rules: ✗ not equivalent — 15.2 m/s vs 10.0 m/s: 52% off, more than 1%"
    assert made == [1]

    preferences.HINT_AFTER_ANSWER.set(False)   # off again: every response shows its hint at once
    show(qtbot, window, "r-1")
    assert "hidden" not in hint.line
    qtbot.waitUntil(lambda: hint.line.startswith("Rules: ✓ equivalent"), timeout=WAIT_MS)


@pytest.mark.parametrize("width, height", [(1440, 900), (1280, 800)])
def test_the_demos_longest_hints_wrap_whole_beside_ans(qtbot, demo: Path, width: int,
                                                       height: int) -> None:
    """A reason (a wrong dimension, a vector's two parts) is what the grader reads the hint
    for: at the window sizes experts use it wraps in the rubric panel rather than being cut."""
    window = grading_window(qtbot, demo, width, height, WAIT_MS)
    text = hint_of(window).text

    def whole() -> bool:
        """The label's text, wrapped at its width, fits the label as laid out."""
        needed = text.fontMetrics().boundingRect(QRect(0, 0, text.width(), 10_000),
                                                 Qt.TextFlag.TextWordWrap, text.text())
        return (needed.width() <= text.width() and needed.height() <= text.height()
                and text.heightForWidth(text.width()) <= text.height())

    for rid in ("r-0005", "r-0095"):  # the demo's two longest hints
        show(qtbot, window, rid)
        qtbot.waitUntil(lambda: "checking" not in hint_of(window).line, timeout=WAIT_MS)
        qtbot.waitUntil(whole, timeout=2000)  # once the rubric panel is laid out again
