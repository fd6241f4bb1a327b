"""The grading workbench, driven like an expert drives it: by keyboard, on the demo project."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication, QLabel  # noqa: E402

from conftest import page_dom, page_text, shot, wait_for, write_jsonl  # noqa: E402
from physgrade import scores  # noqa: E402
from physgrade.grading import grading_item  # noqa: E402
from physgrade.project import Project  # noqa: E402
from physgrade.queue import GRADED, NOT_STARTED  # noqa: E402
from physgrade_ui import grader, transfer  # noqa: E402
from physgrade_ui.main_window import MainWindow  # noqa: E402
from physgrade_ui.reading_view import blocked_requests  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_settings")
WAIT_MS = 10_000


def open_window(qtbot, path: Path) -> MainWindow:
    window = MainWindow(path)
    qtbot.addWidget(window)
    window.resize(1600, 1000)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()  # shortcuts go to the active window (or its first-start dialog)
    qtbot.waitUntil(lambda: window.grader_dialog is not None or window.grading.panel.hasFocus(),
                    timeout=WAIT_MS)
    return window


def press(qtbot, window: MainWindow, *keys: Qt.Key | str) -> None:
    """Type keys where the keyboard focus is, as a person would."""
    for key in keys:
        qtbot.keyClick(QApplication.focusWidget() or window, key)


def scores_of(path: Path, grader_name: str) -> dict[str, dict[str, int | None]]:
    with Project.open(path) as project:
        rows = project.conn.execute(
            "SELECT s.response_id, s.criterion, s.value FROM scores s JOIN raters r "
            "ON r.id = s.rater_id WHERE r.name = ?", (grader_name,)).fetchall()
    found: dict[str, dict[str, int | None]] = {}
    for response, criterion, value in rows:
        found.setdefault(response, {})[criterion] = value
    return found


@pytest.fixture
def graded_by_expert(qtbot, demo: Path) -> MainWindow:
    grader.remember("expert-1")
    return open_window(qtbot, demo)


def test_keyboard_only_grading_is_there_after_close_and_reopen(qtbot, demo: Path) -> None:
    window = open_window(qtbot, demo)
    dialog = window.grader_dialog  # first start: who is grading?
    assert dialog is not None and dialog.isVisible()
    qtbot.keyClicks(dialog.name.lineEdit(), "tess")
    qtbot.keyClick(dialog.name.lineEdit(), Qt.Key.Key_Return)
    page = window.grading
    qtbot.waitUntil(lambda: page.item is not None and page.panel.hasFocus(), timeout=WAIT_MS)
    assert grader.remembered() == "tess"

    graded = []
    for _ in range(3):
        graded.append(page.item.response_id)
        press(qtbot, window, *["1"] * len(page.item.rubric.criteria))
        assert page.item.complete
        press(qtbot, window, "C")  # the other raters, in place of the reading
        assert page.reading.currentWidget() is page.comparison and page.comparison.revealed
        press(qtbot, window, Qt.Key.Key_Right)  # moving on brings the reading back
        assert page.reading.currentWidget() is page.reader
    resume_at = page.item.response_id
    assert page.progress_bar.text() == "3 of 126 graded"
    window.close()

    stored = scores_of(demo, "tess")
    assert sorted(stored) == sorted(graded)
    assert all(set(values.values()) == {1} and len(values) == 8 for values in stored.values())

    reopened = open_window(qtbot, demo)
    assert reopened.grader_dialog is None  # remembered
    again = reopened.grading
    assert again.item.response_id == resume_at
    progress = {i.response_id: i.progress for i in again.queue.model.items}
    assert [progress[r] for r in graded] == [GRADED] * 3
    assert progress[resume_at] == NOT_STARTED
    with qtbot.waitSignal(again.shown, timeout=WAIT_MS):
        press(qtbot, reopened, Qt.Key.Key_Left)
    assert again.item.response_id == graded[-1] and again.item.complete


def test_digits_follow_the_rubric_and_undo_takes_back_the_last_change(
        qtbot, graded_by_expert: MainWindow, demo: Path) -> None:
    window = graded_by_expert
    page = window.grading
    page.select("r-0002")
    assert page.panel.current_criterion.key == "INT"
    press(qtbot, window, "3")  # INT takes 0 or 1
    assert page.panel.rows[page.panel.current].refusal.text() == "INT takes 0, 1."
    assert "INT" not in page.item.mine
    press(qtbot, window, "0", Qt.Key.Key_Down, "1")  # a score moves on; Down skips MOD
    assert page.item.values == {"INT": 0, "CON": 1}
    assert page.panel.current_criterion.key == "APP"
    press(qtbot, window, "E")  # the note of CON, just scored; the cursor stays on APP
    assert QApplication.focusWidget() is page.panel.rows[page.item.rubric.keys.index("CON")].note
    qtbot.keyClicks(QApplication.focusWidget(), "right principle, wrong sign")
    press(qtbot, window, Qt.Key.Key_Return)
    assert page.item.mine["CON"].note == "right principle, wrong sign"
    assert page.panel.current_criterion.key == "APP" and page.panel.hasFocus()

    qtbot.keyClick(page.panel, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert page.item.mine["CON"].note is None  # the note went first
    qtbot.keyClick(page.panel, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(page.panel, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert page.item.mine == {} and scores_of(demo, "expert-1").get("r-0002") is None
    with Project.open(demo) as project:
        actions = [a for (a,) in project.conn.execute(
            "SELECT action FROM score_history WHERE response_id = 'r-0002' ORDER BY id")]
    assert actions == ["set", "set", "clear", "clear"]


def stored_grade(path: Path, response_id: str) -> dict[str, tuple[int | None, str | None]]:
    """expert-1's scores and notes of ``response_id`` as the file holds them, read by a
    connection of the test's own (not through physgrade)."""
    conn = sqlite3.connect(path)
    try:
        return {criterion: (value, note) for criterion, value, note in conn.execute(
            "SELECT s.criterion, s.value, s.note FROM scores s JOIN raters r "
            "ON r.id = s.rater_id WHERE r.name = 'expert-1' AND s.response_id = ?",
            (response_id,))}
    finally:
        conn.close()


NOTE = "80*45 fine; 12 checking 0 1 2"


def test_a_note_typed_after_each_score_never_scores(qtbot, graded_by_expert: MainWindow,
                                                     demo: Path) -> None:
    """Score, E, the note, Enter, criterion after criterion: the note's digits, letters and
    spaces are its text, and each note lands on the criterion just scored."""
    window = graded_by_expert
    page = window.grading
    assert page.select("r-0002")
    assert page.item.mine == {} and page.panel.current_criterion.key == "INT"
    typed: dict[str, int] = {}
    for index, criterion in enumerate(page.item.rubric.criteria):
        values = criterion.allowed_values(page.item.question.multiple_choice)
        value = values[index % len(values)]  # 0 on some, more on others: unlike the note's
        press(qtbot, window, str(value), "E")
        typed[criterion.key] = value
        qtbot.keyClicks(QApplication.focusWidget() or window, NOTE)
        press(qtbot, window, Qt.Key.Key_Return)
    assert stored_grade(demo, "r-0002") == {key: (value, NOTE) for key, value in typed.items()}
    assert page.panel.hasFocus()  # the keyboard is back on the scores


def ended(process: subprocess.Popen) -> bool:
    return process.poll() is not None


@pytest.mark.skipif(shutil.which("xdotool") is None, reason="needs xdotool (packaging/setup.sh "
                    "--test installs it)")
def test_a_note_typed_by_the_x_server_never_scores(qtbot, graded_by_expert: MainWindow,
                                                    demo: Path) -> None:
    """The same, with key events from the X server (xdotool's, as a keyboard sends them) on
    the focused window rather than Qt's own: the path a grader's keys take, shortcuts and all."""
    window = graded_by_expert
    page = window.grading
    assert page.select("r-0002")
    qtbot.waitUntil(page.panel.hasFocus, timeout=WAIT_MS)
    typed = {"INT": 1, "MOD": 0, "CON": 1}
    keys = [step for value in typed.values() for step in (
        ["key", str(value), "e"], ["type", "--delay", "20", NOTE], ["key", "Return"])]
    for step in [["windowfocus", "--sync", str(int(window.winId()))]] + keys:
        xdotool = subprocess.Popen(["xdotool", *step])
        qtbot.waitUntil(partial(ended, xdotool), timeout=WAIT_MS)
        assert xdotool.returncode == 0, step
        qtbot.wait(100)  # the events are the window's before the next ones come
    qtbot.waitUntil(lambda: len(stored_grade(demo, "r-0002")) == len(typed), timeout=WAIT_MS)
    qtbot.wait(300)  # nothing more arrives
    assert stored_grade(demo, "r-0002") == {key: (value, NOTE) for key, value in typed.items()}


def test_others_stay_hidden_until_the_grade_is_complete(qtbot, graded_by_expert: MainWindow,
                                                        demo: Path) -> None:
    window = graded_by_expert
    page = window.grading
    page.select("r-0002")  # graded by both judges, not yet by expert-1
    press(qtbot, window, "C")
    assert page.reading.currentWidget() is page.comparison
    assert not page.comparison.revealed and page.comparison.view is None  # blind: no table
    press(qtbot, window, *["0"] * 7)
    assert not page.comparison.revealed  # one criterion to go
    with qtbot.waitSignal(page.comparison.rendered, timeout=WAIT_MS):
        press(qtbot, window, "0")
    assert page.comparison.revealed
    text = page_text(qtbot, page.comparison.view)
    assert "You" in text and "judge" in text
    dom = page_dom(qtbot, page.comparison.view)
    assert 'class="differs"' in dom and "you: 0" in text  # the judges were kinder
    assert page.bar.compared.text() == "2 others, 2 disagree"
    shot(window, "workbench-compare.png")


def test_hostile_response_renders_as_plain_text(qtbot, graded_by_expert: MainWindow) -> None:
    page = graded_by_expert.grading
    with qtbot.waitSignal(page.shown, timeout=WAIT_MS):
        assert page.select("r-0088")
    text = page_text(qtbot, page.reader)
    assert "<script>alert('x')</script>" in text
    assert '<img src="http://example.invalid/a.png">' in text
    assert "Reference solution" in text and "not compliant" in text
    dom = page_dom(qtbot, page.reader)
    assert "<script" not in dom and "<img" not in dom
    assert "<math" in dom  # the LaTeX beside it is rendered as mathematics
    assert blocked_requests() == []  # nothing was even asked for


def test_filters_and_search_narrow_the_queue(qtbot, graded_by_expert: MainWindow) -> None:
    page = graded_by_expert.grading
    model = page.queue.model
    assert model.rowCount() == 126
    kinds = page.queue.facets["kinds"]
    next(a for a in kinds.menu().actions() if a.text() == "conceptual").setChecked(True)
    assert 0 < model.rowCount() < 126
    assert {model.item(r).kind for r in range(model.rowCount())} == {"conceptual"}
    assert kinds.text() == "Kind: conceptual"
    page.queue.search.setText("diamond")
    qtbot.keyClick(page.queue.search, Qt.Key.Key_Return)
    assert {model.item(r).question_id for r in range(model.rowCount())} == {"q-0030"}
    assert page.item.question.id == "q-0030"
    page.queue.clear_filters()
    assert model.rowCount() == 126
    # A value with "&" reads as written, not as an Alt key, and still filters.
    topics = page.queue.facets["topics"]
    electricity = next(a for a in topics.menu().actions()
                       if a.data() == "Electricity & Magnetism")
    assert electricity.text() == "Electricity && Magnetism"  # Qt shows one "&"
    electricity.setChecked(True)
    assert {model.item(r).topic for r in range(model.rowCount())} == {"Electricity & Magnetism"}
    assert topics.text() == "Topic: Electricity && Magnetism"
    page.queue.clear_filters()


def test_a_grader_with_an_assignment_starts_on_it_and_sees_new_ones(qtbot, demo: Path) -> None:
    from physgrade.selection import ResponseFilter
    from physgrade.team import assign

    def only(model: str) -> ResponseFilter:
        return ResponseFilter(models=frozenset({model}))

    with Project.open(demo) as project:
        assign.apply(project, assign.plan(project, ["expert-1"], 0, include_graded=True,
                                          report_filter=only("orbit-7b")))
    grader.remember("expert-1")
    window = open_window(qtbot, demo)
    page = window.grading
    model = page.queue.model
    assert model.rowCount() == 42
    assert {model.item(r).model for r in range(model.rowCount())} == {"orbit-7b"}
    assert page.queue.facets["assignment"].text() == "Assignment: assigned to me"

    # Responses assigned while the page is open join the queue, the filter kept.
    assert window.ops.write(lambda project: assign.apply(project, assign.plan(
        project, ["expert-1"], 0, include_graded=True, report_filter=only("quark-lm-3"))))
    assert model.rowCount() == 84
    page.queue.clear_filters()
    assert model.rowCount() == 126 and page.queue.facets["assignment"].text() == "Assignment"


def test_changes_made_elsewhere_refresh_the_queue_and_keep_the_graders_place(
        qtbot, graded_by_expert: MainWindow, tmp_path: Path, monkeypatch) -> None:
    window = graded_by_expert
    page = window.grading
    model = page.queue.model
    models = page.queue.facets["models"]
    next(a for a in models.menu().actions() if a.text() == "quark-lm-3").setChecked(True)
    assert model.rowCount() == 42
    page.select("r-0002")
    press(qtbot, window, "0", Qt.Key.Key_Down)
    assert page.item.values == {"INT": 0} and page.panel.current_criterion.key == "CON"
    # What the page hands its reading from now on (the layouts asked for before, the filter's
    # and the selection's, may still be under way on a busy machine: they do not count).
    laid_out: list[str] = []
    monkeypatch.setattr(page.reader, "show_html", laid_out.append)

    # A score of another response, written elsewhere: its row counts it, nothing else moves.
    other = next(model.item(row).response_id for row in range(model.rowCount())
                 if model.item(row).scored == 0 and model.item(row).response_id != "r-0002")
    assert window.ops.write(partial(scores.set_score, grader="expert-1", response_id=other,
                                    criterion="INT", value=1))
    assert model.index(model.row_of(other), 2).data() == "1/8"
    assert page.item.response_id == "r-0002" and page.item.values == {"INT": 0}
    assert page.panel.current_criterion.key == "CON"
    qtbot.wait(300)  # a layout deferred to the event loop would be asked for by now
    assert laid_out == []  # the reading was not laid out again
    monkeypatch.undo()  # the view's own again

    # New responses: the queue is read again, with the filter and the response on show kept.
    added = write_jsonl(tmp_path / "more.jsonl", [{"id": "r-new", "question_id": "q-0002",
                                                   "model": "quark-lm-3",
                                                   "response": "Final Answer: 3 m/s"}])
    wait_for(qtbot, window.start_import(transfer.ImportRequest(added, "responses", {})),
             "finished")
    assert model.rowCount() == 43 and model.row_of("r-new") is not None
    assert models.text() == "Model: quark-lm-3"
    assert page.item.response_id == "r-0002" and page.item.values == {"INT": 0}
    assert page.panel.current_criterion.key == "CON"  # not the first unscored (MOD)
    assert model.index(model.row_of(other), 2).data() == "1/8"

    # A score another program wrote is not broadcast: F5 reads everything, the item on show too.
    with Project.open(demo_path(window)) as elsewhere:
        scores.set_score(elsewhere, "expert-1", "r-0002", "CON", 1)
    assert page.item.values == {"INT": 0}
    window.refresh()
    assert page.item.response_id == "r-0002" and page.item.values == {"INT": 0, "CON": 1}
    assert model.index(model.row_of("r-0002"), 2).data() == "2/8"


def demo_path(window: MainWindow) -> Path:
    assert window.project is not None
    return window.project.path


def test_help_overlay_lists_every_key(qtbot, graded_by_expert: MainWindow) -> None:
    window = graded_by_expert
    press(qtbot, window, "?")
    assert window.help.isVisible()
    shown = [w.text() for w in window.help.card.findChildren(QLabel)]
    for words in ("Undo the last change", "Next response I have not finished", "Import"):
        assert any(words in text for text in shown), words
    shot(window, "help.png")
    press(qtbot, window, Qt.Key.Key_Escape)
    assert not window.help.isVisible()


KILLED_APP = """
import sys
from pathlib import Path
from PySide6.QtCore import QCoreApplication, QSettings, Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from physgrade_ui import grader
from physgrade_ui.main_window import MainWindow

QCoreApplication.setOrganizationName("physgrade-tests")
QSettings.setDefaultFormat(QSettings.Format.IniFormat)
QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, sys.argv[2])
app = QApplication([])
grader.remember("kim")
window = MainWindow(Path(sys.argv[1]))
window.show()
window.activateWindow()

def score() -> None:
    if not window.grading.panel.hasFocus():
        QTimer.singleShot(50, score)
        return
    QTest.keyClick(QApplication.focusWidget(), "0")
    print("scored", window.grading.item.response_id, flush=True)

QTimer.singleShot(0, score)
app.exec()
"""


def test_a_score_survives_the_app_being_killed_right_after(demo: Path, tmp_path: Path) -> None:
    process = subprocess.Popen([sys.executable, "-c", KILLED_APP, str(demo), str(tmp_path)],
                               stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    os.kill(process.pid, signal.SIGKILL)  # no chance to close, flush or checkpoint anything
    process.wait()
    assert line.startswith("scored "), line
    response_id = line.split()[1]
    with Project.open(demo) as project:
        assert project.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert grading_item(project, response_id, "kim").values == {"INT": 0}


# -- what each score level means, the running total and refused keys (issue 18) ----------------


@pytest.fixture
def scoring_panel(qtbot, loaded: Project):
    """The rubric panel on its own, 380 px wide as at 1440×900, showing r-1 with INT and COR
    scored by tess."""
    from physgrade_ui.scoring import ScoringPanel

    scores.set_score(loaded, "tess", "r-1", "INT", 1)
    scores.set_score(loaded, "tess", "r-1", "COR", 1)
    panel = ScoringPanel()
    qtbot.addWidget(panel)
    panel.resize(380, 900)
    panel.show_item(grading_item(loaded, "r-1", "tess"))
    panel.show()
    qtbot.waitExposed(panel)
    return panel


def shown_levels(row) -> dict:
    return {value: meaning.text() for value, (_, meaning) in row.level_labels.items()
            if meaning.isVisible()}


def test_the_current_criterion_says_what_each_value_means_beside_its_buttons(scoring_panel,
                                                                             loaded: Project):
    panel = scoring_panel
    described = grading_item(loaded, "r-1", "tess").levels
    mod = panel.rows[panel.current]
    assert mod.criterion.key == "MOD"  # the first one not scored
    assert shown_levels(mod) == described["MOD"] and not mod.help.isVisible()
    for row in panel.rows:
        if row is not mod:  # the others keep to their help line
            assert shown_levels(row) == {} and row.help.isVisible()
    zero = next(b for b in mod.buttons.buttons() if b.property("value") == 0)
    assert described["MOD"][0] in zero.toolTip() and "Key 0" in zero.toolTip()

    panel.move(4)  # to COR, scored 1: its three levels, the chosen one marked
    cor = panel.rows[panel.current]
    assert cor.criterion.key == "COR" and shown_levels(cor) == described["COR"]
    assert shown_levels(mod) == {} and mod.help.isVisible()
    assert [cor.level_labels[v][1].property("chosen") for v in (0, 1, 2)] == [False, True, False]
    meaning = cor.level_labels[0][1]  # wrapped inside the row, never cut off
    assert meaning.wordWrap() and meaning.geometry().right() <= cor.levels.width()
    assert panel.minimumSizeHint().width() <= 360

    panel.set_descriptions_shown(False)
    assert all(shown_levels(row) == {} and not row.help.isVisible() for row in panel.rows)
    panel.set_descriptions_shown(True)
    assert shown_levels(cor) == described["COR"]


def test_a_partly_scored_response_reads_as_a_running_total_out_of_ten(scoring_panel, loaded):
    assert scoring_panel.total.text() == "2 / 10"
    assert scoring_panel.scored.text() == "2 of 8 scored"
    for key, value in (("MOD", 1), ("CON", 1), ("APP", 0), ("CAL", 1), ("COH", 1), ("ANS", 2)):
        scores.set_score(loaded, "tess", "r-1", key, value)
    scoring_panel.show_item(grading_item(loaded, "r-1", "tess"))
    assert scoring_panel.total.text() == "8 / 10"
    assert scoring_panel.scored.text() == "8 of 8 scored"


def test_an_na_takes_its_points_out_of_the_running_total(qtbot, loaded: Project) -> None:
    from physgrade_ui.scoring import ScoringPanel

    scores.set_score(loaded, "tess", "r-3", "EXE", None)
    panel = ScoringPanel()
    qtbot.addWidget(panel)
    panel.show_item(grading_item(loaded, "r-3", "tess"))
    assert (panel.total.text(), panel.scored.text()) == ("0 / 4", "1 of 5 scored")


def test_a_refusal_shows_beside_the_current_criterion_for_a_while(scoring_panel, qtbot,
                                                                  monkeypatch) -> None:
    from physgrade_ui import scoring

    monkeypatch.setattr(scoring, "REFUSAL_MS", 300)  # the real few seconds, shortened
    panel = scoring_panel
    panel.move(4)
    panel.refuse("COR takes 0, 1, 2.")
    cor = panel.rows[panel.current]
    assert cor.refusal.isVisible() and cor.refusal.text() == "COR takes 0, 1, 2."
    assert all(not row.refusal.isVisible() for row in panel.rows if row is not cor)
    qtbot.waitUntil(lambda: not cor.refusal.isVisible(), timeout=2000)
    panel.refuse("COR takes 0, 1, 2.")
    panel.move(1)  # the refusal goes with the criterion it was about
    assert not cor.refusal.isVisible()


def test_a_key_the_criterion_does_not_take_is_refused_in_the_panel(qtbot, graded_by_expert):
    window = graded_by_expert
    page = window.grading
    qtbot.waitUntil(lambda: page.item is not None and page.panel.hasFocus(), timeout=WAIT_MS)
    page.panel.set_current(0)
    press(qtbot, window, "7")
    row = page.panel.rows[0]
    assert row.refusal.isVisible() and row.refusal.text().startswith(row.criterion.key)
