"""The Bloom page on the real demo project: questions labelled with the keyboard only, a model's
suggestion accepted or hidden (blind), the queue narrowed, a disagreement adjudicated; every
change read back from the project file through a fresh connection."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QAbstractButton, QApplication, QComboBox, QLabel, QWidget  # noqa: E402

from conftest import page_text, press, shot  # noqa: E402
from physgrade.annotation.labels import set_bloom_label  # noqa: E402
from physgrade.project import Project  # noqa: E402
from physgrade_ui.bloom import BloomPage  # noqa: E402
from physgrade_ui.main_window import MainWindow  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_settings")

ME = "expert-1"
TAGGER = "bloom-tagger"
RATIONALE = "Uses v = v0 + at on given numbers: a routine procedure applied once."






def show_bloom(window: MainWindow, qtbot) -> BloomPage:
    window.activateWindow()  # shortcuts go to the active window
    qtbot.waitUntil(window.isActiveWindow, timeout=5_000)
    window.bloom_action.trigger()
    page = window.bloom
    qtbot.waitUntil(lambda: QApplication.focusWidget() is page.pickers or
                    page.body.currentWidget() is page.empty, timeout=5_000)
    return page


def wait_reading(qtbot, page: BloomPage, question_id: str) -> None:
    """Until the reading shows ``question_id`` (the browser lays it out in its own time)."""
    qtbot.waitUntil(lambda: question_id in page_text(qtbot, page.reader.current),
                    timeout=10_000)


def choose(page: BloomPage, combo: QComboBox, data: str | None) -> None:
    """Pick a drop-down entry as a click would (the keys then go back to the session)."""
    combo.setCurrentIndex(combo.findData(data))


def stored(path: Path, annotator: str = ME) -> dict[str, tuple[str | None, str | None]]:
    """The annotator's Bloom labels as the project file holds them."""
    with Project.open(path) as project:
        return {qid: (cognitive, knowledge) for qid, cognitive, knowledge in project.conn.execute(
            "SELECT b.question_id, b.cognitive, b.knowledge FROM bloom_labels b JOIN raters r "
            "ON r.id = b.annotator_id WHERE r.name = ? AND r.kind = 'human'", (annotator,))}


def visible_texts(page: QWidget) -> list[str]:
    """Every text a visible widget of the page shows or tells (drop-downs: the current entry)."""
    texts = []
    for widget in [page, *page.findChildren(QWidget)]:
        if not widget.isVisibleTo(page):
            continue
        texts.append(widget.toolTip())
        if isinstance(widget, (QLabel, QAbstractButton)):
            texts.append(widget.text())
        if isinstance(widget, QComboBox):
            texts.append(widget.currentText())
    return texts


def checked(page: BloomPage) -> tuple[str | None, str | None]:
    return page.cognitive.chosen, page.knowledge.chosen


def suggested(page: BloomPage) -> list[str]:
    return [value for picker in (page.cognitive, page.knowledge)
            for value, button in picker.buttons.items() if button.property("suggested")]


@pytest.fixture
def with_rationale(window: MainWindow) -> MainWindow:
    """The demo with the tagger's reason for its label of q-0001."""
    set_bloom_label(window.project, "q-0001", TAGGER, "Apply", "Procedural", kind="llm",
                                   extra={"rationale": RATIONALE})
    set_bloom_label(window.project, "q-0005", TAGGER, "Apply", "Procedural", kind="llm",
                                   extra={"rationale": "Constant acceleration from rest: the "
                                          "kinematics equations applied to the given values."})
    window.refresh()
    return window


def test_a_keyboard_only_session_labels_accepts_clears_and_counts(
        with_rationale: MainWindow, demo: Path, qtbot) -> None:
    window = with_rationale
    page = show_bloom(window, qtbot)
    page.clock = lambda: page.started + 90  # a minute and a half into the session
    assert page.body.currentWidget() is page.session
    assert page.filter.currentData() == "unlabelled" and page.suggester == TAGGER
    assert page.item.question_id == "q-0001" and page.position.text() == "1 of 42"
    assert page.suggestion.isVisible() and page.suggestion_value.text() == "Apply · Procedural"
    assert page.suggestion_rationale.text() == RATIONALE
    assert sorted(suggested(page)) == ["Apply", "Procedural"]
    assert "Q   Factual" in [b.text() for b in page.knowledge.buttons.values()]
    wait_reading(qtbot, page, "q-0001")
    shot(window, "bloom-session.png")

    press(qtbot, window, "4", "w")               # q-0001: both picked, on to the next
    assert page.item.question_id == "q-0002"
    press(qtbot, window, "a")                    # q-0002: the tagger's Apply · Procedural
    assert page.item.question_id == "q-0003"
    press(qtbot, window, Qt.Key.Key_Return)      # q-0003: the tagger's Analyze · Conceptual
    assert page.item.question_id == "q-0004"
    press(qtbot, window, "2")                    # half a label: stays
    assert page.item.question_id == "q-0004" and checked(page) == ("Understand", None)
    assert page.state.text() == "Half labelled"
    press(qtbot, window, "r")                    # completes it: on to q-0005
    assert page.item.question_id == "q-0005"
    press(qtbot, window, "6", "e")               # q-0005
    assert page.item.question_id == "q-0006" and page.position.text() == "6 of 42"
    press(qtbot, window, "p")
    assert page.item.question_id == "q-0005" and checked(page) == ("Create", "Procedural")
    wait_reading(qtbot, page, "q-0005")
    qtbot.wait(400)  # the browser paints the new frame
    shot(window, "bloom-revising.png")   # mine checked, the tagger's suggested
    press(qtbot, window, "1")                    # changing a complete label stays on it
    assert page.item.question_id == "q-0005" and checked(page) == ("Remember", "Procedural")
    press(qtbot, window, Qt.Key.Key_Left, Qt.Key.Key_Backspace)   # q-0004 cleared
    assert page.item.question_id == "q-0004" and checked(page) == (None, None)
    assert page.state.text() == "Unlabelled"
    press(qtbot, window, "n", Qt.Key.Key_Right)
    assert page.item.question_id == "q-0006"

    assert page.stats.text().startswith("4 labelled this session")
    assert "pace 2.7 / min" in page.stats.text() and "4 labelled in all" in page.stats.text()
    assert stored(demo) == {"q-0001": ("Analyze", "Conceptual"),
                            "q-0002": ("Apply", "Procedural"),
                            "q-0003": ("Analyze", "Conceptual"),
                            "q-0004": (None, None),
                            "q-0005": ("Remember", "Procedural")}
    assert stored(demo, "expert-2")["q-0003"] == ("Create", "Conceptual")  # untouched

    window.refresh()  # the same project and annotator: the session goes on
    window.bloom_action.trigger()
    assert page.stats.text().startswith("4 labelled this session")
    assert page.item.question_id == "q-0006" and page.position.text() == "2 of 38"


def test_blind_hides_the_suggestion_everywhere(with_rationale: MainWindow, demo: Path,
                                               qtbot) -> None:
    page = show_bloom(with_rationale, qtbot)
    assert any(TAGGER in text for text in visible_texts(page.session))
    press(qtbot, with_rationale, "b")
    assert page.blind.isChecked()
    texts = " ".join(visible_texts(page.session))
    assert TAGGER not in texts and RATIONALE not in texts and "Suggested" not in texts
    assert page.suggestion_value.text() == "" and page.suggestion_rationale.text() == ""
    assert suggested(page) == [] and page.item.suggestion is None
    assert "hidden" in page.no_suggestion.text()
    press(qtbot, with_rationale, "a", Qt.Key.Key_Return)   # nothing to accept
    assert page.item.question_id == "q-0001" and stored(demo) == {}
    wait_reading(qtbot, page, "q-0001")
    shot(with_rationale, "bloom-blind.png")
    press(qtbot, with_rationale, "3", "q")
    assert page.item.question_id == "q-0002" and suggested(page) == []
    choose(page, page.source, None)                 # no source: nothing suggested either
    press(qtbot, with_rationale, "b")
    assert not page.blind.isChecked() and not page.suggestion.isVisible()
    assert "No suggestion source" in page.no_suggestion.text()
    choose(page, page.source, TAGGER)
    assert page.suggestion.isVisible() and sorted(suggested(page)) == ["Apply", "Procedural"]
    assert stored(demo) == {"q-0001": ("Apply", "Factual")}


def test_filters_and_topic_narrow_the_queue_down_to_the_empty_state(
        window: MainWindow, demo: Path, qtbot) -> None:
    page = show_bloom(window, qtbot)
    choose(page, page.topic, "Optics")
    assert len(page.items) == 5 and page.position.text() == "1 of 5"
    for _ in range(5):
        assert page.item.topic == "Optics"
        press(qtbot, window, Qt.Key.Key_Return)   # accept the tagger's label
    assert page.body.currentWidget() is page.empty
    assert page.empty.title.text() == "All labelled"
    assert "in Optics" in page.empty.texts[0].text()
    shot(window, "bloom-all-labelled.png")
    assert page.stats.text().startswith("5 labelled this session")
    assert len(stored(demo)) == 5

    qtbot.mouseClick(page.empty_button, Qt.MouseButton.LeftButton)   # Show all questions
    assert page.filter.currentData() == "all" and page.position.text() == "1 of 5"
    choose(page, page.topic, None)
    assert len(page.items) == 42
    choose(page, page.filter, "unlabelled")
    assert len(page.items) == 37
    choose(page, page.filter, "disagreements")   # expert-2 gave q-0029 Apply, the tagger Analyze
    assert page.items == ["q-0029"] and page.banner.isVisible()


def test_adjudicating_a_disagreement_sets_the_final_label(window: MainWindow, demo: Path,
                                                          qtbot) -> None:
    page = show_bloom(window, qtbot)
    assert not page.banner.isVisible() and not page.others.isVisible()
    press(qtbot, window, "3", "e", "3", "e", "4", "w")   # q-0003: expert-2 says Create
    assert page.item.question_id == "q-0004"
    choose(page, page.filter, "disagreements")
    assert page.items == ["q-0003"] and page.banner.isVisible()
    assert page.banner.text().startswith("Adjudicating: your choice becomes the final label")
    assert page.pickers.property("adjudicating") is True
    others = " ".join(visible_texts(page.others))
    assert "expert-2" in others and "Create · Conceptual" in others
    assert "expert-1 (you)" in others and "Analyze · Conceptual" in others
    assert page.state.text() == "To adjudicate"
    wait_reading(qtbot, page, "q-0003")
    shot(window, "bloom-adjudicating.png")

    press(qtbot, window, "5")            # keeps the final label's knowledge type
    with Project.open(demo) as project:
        final = project.conn.execute("SELECT bloom_cognitive, bloom_knowledge FROM questions "
                                     "WHERE id = 'q-0003'").fetchone()
    assert final[0] == "Evaluate"
    press(qtbot, window, "w")
    assert checked(page) == ("Evaluate", "Conceptual") and page.state.text() == "✓ Adjudicated"
    with Project.open(demo) as project:
        assert project.conn.execute(
            "SELECT bloom_cognitive, bloom_knowledge FROM questions WHERE id = 'q-0003'"
        ).fetchone() == ("Evaluate", "Conceptual")
        assert project.conn.execute(
            "SELECT adjudicator FROM bloom_adjudications WHERE question_id = 'q-0003'"
        ).fetchone() == (ME,)
    assert stored(demo)["q-0003"] == ("Analyze", "Conceptual")   # my own label stays
    assert "1 adjudicated" in page.stats.text()

    press(qtbot, window, Qt.Key.Key_Backspace)   # withdraws the decision
    with Project.open(demo) as project:
        assert project.conn.execute("SELECT count(*) FROM bloom_adjudications").fetchone() == (0,)
    assert page.state.text() == "To adjudicate"


def test_the_empty_states_and_the_help_overlay(window: MainWindow, qtbot) -> None:
    page = show_bloom(window, qtbot)
    window.show_shortcuts()
    texts = [w.text() for w in window.help.findChildren(QLabel)]
    assert "Bloom labels" in texts and "Q  W  E  R" in texts and "Ctrl+7" in texts
    window.help.hide()
    choose(page, page.filter, "disagreements")   # only expert-2 has labelled: none yet
    assert page.body.currentWidget() is page.empty
    assert page.empty.title.text() == "No disagreements"
    shot(window, "bloom-no-disagreements.png")
    with Project.create(window.project.path.with_name("bare.physgrade")):
        pass
    window.open_project(window.project.path.with_name("bare.physgrade"))
    window.bloom_action.trigger()
    assert page.body.currentWidget() is page.empty
    assert page.empty.title.text() == "No questions yet"
    assert "import questions" in page.empty.texts[0].text()
    assert not page.empty_button.isVisible()


def test_labelling_keeps_the_filters_and_the_suggestion_source(window: MainWindow, demo: Path,
                                                                qtbot) -> None:
    page = show_bloom(window, qtbot)
    choose(page, page.topic, "Optics")
    choose(page, page.source, None)   # no suggestions, chosen on purpose
    first = page.item.question_id
    press(qtbot, window, "3", "q")
    assert stored(demo) == {first: ("Apply", "Factual")}
    assert page.topic.currentData() == "Optics" and page.suggester is None
    assert page.position.text() == "2 of 5" and page.item.question_id != first
    assert page.stats.text().startswith("1 labelled this session")
