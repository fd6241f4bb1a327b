"""The Audit page on the real demo project: a sample drawn from its dialog, then judges'
verdicts reviewed blind with the keyboard only, every change read back from the project file
through a fresh connection."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QPoint, QRect, QSize, Qt  # noqa: E402
from PySide6.QtWidgets import (  # noqa: E402
    QAbstractButton,
    QApplication,
    QComboBox,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

from conftest import page_dom, press, shot  # noqa: E402
from physgrade.demo import DEMO_FILES, demo_data_dir  # noqa: E402
from physgrade.importer import import_file  # noqa: E402
from physgrade.project import Project  # noqa: E402
from physgrade.validation import sampling, session  # noqa: E402
from physgrade.validation.reviews import set_review_agreement, set_review_verdict  # noqa: E402
from physgrade_ui import audit  # noqa: E402
from physgrade_ui.audit import AuditPage, NewSampleDialog  # noqa: E402
from physgrade_ui.main_window import MainWindow  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_settings")

JUDGES = ["arbiter-large [prefs-v1]", "arbiter-mini [prefs-v1]"]
REAL_NAMES = ("arbiter-large", "arbiter-mini", "arbiter", "prefs-v1")
REVIEWER = "expert-1"






def show_audit(window: MainWindow, qtbot) -> AuditPage:
    window.activateWindow()  # shortcuts go to the active window
    qtbot.waitUntil(window.isActiveWindow, timeout=5_000)
    window.audit_action.trigger()
    page = window.audit
    qtbot.waitUntil(lambda: QApplication.focusWidget() is page.panel or
                    page.body.currentWidget() is page.empty, timeout=5_000)
    return page


def draw(qtbot, dialog: NewSampleDialog) -> None:
    """Press the dialog's Draw sample button."""
    button = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)
    assert button.text() == "Draw sample"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def draw_in_dialog(page: AuditPage, qtbot, name: str, per_stratum: int = 1,
                   seed: int = 7) -> None:
    dialog = page.new_sample()
    assert isinstance(dialog, NewSampleDialog)
    dialog.name.setText(name)
    dialog.per_stratum.setValue(per_stratum)
    dialog.seed.setValue(seed)
    draw(qtbot, dialog)
    qtbot.waitUntil(lambda: page.dialog is None, timeout=5_000)


@pytest.fixture
def drawn(window: MainWindow, qtbot) -> AuditPage:
    """The Audit page on show with a sample of the demo drawn from its dialog."""
    page = show_audit(window, qtbot)
    draw_in_dialog(page, qtbot, "Pilot")
    qtbot.waitUntil(lambda: QApplication.focusWidget() is page.panel, timeout=5_000)
    return page


def reviews(path: Path, reviewer: str = REVIEWER) -> tuple[dict, dict]:
    """What the project file holds for ``reviewer``: criteria agreements and verdict labels."""
    with Project.open(path) as project:
        conn = project.conn
        (rid,) = conn.execute("SELECT id FROM raters WHERE name = ? AND kind = 'human'",
                              (reviewer,)).fetchone()
        criteria: dict[tuple[str, int], dict[str, int]] = {}
        for judge, response, criterion, agreement in conn.execute(
                "SELECT judge_id, response_id, criterion, agreement FROM judge_review_criteria "
                "WHERE reviewer_id = ?", (rid,)):
            criteria.setdefault((response, judge), {})[criterion] = agreement
        labels = {(response, judge): verdict for judge, response, verdict in conn.execute(
            "SELECT judge_id, response_id, verdict FROM judge_reviews WHERE reviewer_id = ?",
            (rid,))}
    return criteria, labels


def shown_agreements(page: AuditPage) -> dict[str, int]:
    shown = {}
    for row in page.panel.rows:
        checked = row.buttons.checkedButton()
        if checked is not None:
            shown[row.key] = checked.property("value")
    return shown


def shown_label(page: AuditPage) -> str | None:
    checked = [b for b in page.panel.verdict_buttons.buttons() if b.isChecked()]
    return checked[0].property("verdict") if checked else None


def page_texts(page: QWidget) -> list[str]:
    """Every text a widget of the page shows or tells (labels, buttons, fields, drop-downs,
    tool tips)."""
    texts = []
    for widget in [page, *page.findChildren(QWidget)]:
        texts.append(widget.toolTip())
        if isinstance(widget, (QLabel, QAbstractButton, QLineEdit)):
            texts.append(widget.text())
        if isinstance(widget, QComboBox):
            for i in range(widget.count()):
                texts += [widget.itemText(i),
                          str(widget.itemData(i, Qt.ItemDataRole.ToolTipRole) or "")]
    return texts


def judged_only(folder: Path) -> Path:
    """The demo's questions, responses and verdicts, without its reviews: nothing to audit yet."""
    path = folder / "judged.physgrade"
    with Project.create(path) as project:
        for kind, name in DEMO_FILES:
            if kind in ("questions", "responses", "verdicts"):
                import_file(project, demo_data_dir() / name, kind)
    return path


def test_the_empty_state_says_what_to_do(window: MainWindow, tmp_path: Path, qtbot) -> None:
    window.open_project(judged_only(tmp_path))
    page = show_audit(window, qtbot)
    assert page.body.currentWidget() is page.empty
    assert page.empty_title.text() == "No audit sample yet"
    assert "drawing a sample" in page.empty_text.text()
    shot(window, "audit-empty.png")
    assert page.empty_new.isEnabled()
    with Project.create(window.project.path.with_name("bare.physgrade")):
        pass
    window.open_project(window.project.path.with_name("bare.physgrade"))
    window.audit_action.trigger()
    assert page.body.currentWidget() is page.empty
    assert page.empty_title.text() == "No judges to audit yet"
    assert "run a judge first" in page.empty_text.text()
    assert not page.empty_new.isEnabled()


def test_drawing_from_the_dialog_selects_the_sample_and_refusals_stay_in_it(
        window: MainWindow, demo: Path, qtbot) -> None:
    page = show_audit(window, qtbot)
    dialog = page.new_sample()
    assert [dialog.judges.item(i).text() for i in range(dialog.judges.count())] == JUDGES
    for i in range(dialog.judges.count()):
        dialog.judges.item(i).setCheckState(Qt.CheckState.Unchecked)
    dialog.name.setText("Pilot")
    draw(qtbot, dialog)
    assert dialog.isVisible() and "at least one judge" in dialog.error.text()
    dialog.judges.item(0).setCheckState(Qt.CheckState.Checked)
    dialog.name.setText("   ")
    draw(qtbot, dialog)
    assert dialog.isVisible() and "needs a name" in dialog.error.text()
    with Project.open(demo) as project:
        assert [s.name for s in sampling.samples(project)] == ["imported"]  # nothing stored

    before = dialog.seed.value()
    for _ in range(3):
        dialog.seed.new.click()
        if dialog.seed.value() != before:
            break
    assert dialog.seed.value() != before
    dialog.judges.item(1).setCheckState(Qt.CheckState.Checked)
    dialog.facets["model"].setChecked(False)
    dialog.name.setText("Pilot")
    dialog.per_stratum.setValue(1)
    dialog.seed.setValue(11)
    shot(dialog, "audit-new-sample.png")
    draw(qtbot, dialog)
    qtbot.waitUntil(lambda: page.dialog is None, timeout=5_000)

    with Project.open(demo) as project:
        (_, stored) = sampling.samples(project)
    assert (stored.name, stored.seed, stored.per_stratum) == ("Pilot", 11, 1)
    assert stored.strata == ("topic", "bloom") and stored.judges == tuple(JUDGES)
    assert page.body.currentWidget() is page.content
    assert page.sample.currentText() == "Pilot"
    assert stored.text() in window.statusBar().currentMessage()
    total = stored.n_items * 2
    assert page.progress_text.text().endswith(f"of {total} verdicts reviewed")
    assert page.reviewer_label.text() == f"Reviewing as {REVIEWER}"

    # The same name again is refused in the dialog, and the first sample stays as it was.
    dialog = page.new_sample()
    dialog.name.setText("Pilot")
    draw(qtbot, dialog)
    assert dialog.isVisible() and "already a sample named 'Pilot'" in dialog.error.text()
    dialog.reject()
    qtbot.waitUntil(lambda: page.dialog is None, timeout=5_000)
    with Project.open(demo) as project:
        assert [s.name for s in sampling.samples(project)] == ["imported", "Pilot"]


def test_a_keyboard_only_session_is_stored_and_shown_again(
        window: MainWindow, drawn: AuditPage, demo: Path, qtbot) -> None:
    page = drawn
    sample_id = page.current_sample_id()
    done_before, total = session.progress(window.project, sample_id, REVIEWER)
    assert page.progress_text.text() == f"{done_before} of {total} verdicts reviewed"
    assert page.progress_bar.value() == done_before and page.progress_bar.maximum() == total

    typed: dict[tuple[str, int], dict[str, int]] = {}
    labels: dict[tuple[str, int], str] = {}
    pattern = ("2", "1", "0")
    for number, verdict_key in enumerate(("C", "L", "S")):
        item = page.items[page.index]
        assert not page.view.done and page.panel.current == 0
        keys = list(page.view.scores)
        given = {}
        for i, key in enumerate(keys):
            # A verdict is correct only with every criterion agreed to in full.
            digit = "2" if verdict_key == "C" else pattern[(i + number) % 3]
            press(qtbot, window, digit)
            given[key] = int(digit)
            # the row moves on, up to the last one
            assert page.panel.current == min(i + 1, len(keys) - 1)
        press(qtbot, window, verdict_key)
        assert page.view.done and "Reviewed" in page.panel.state.text()
        typed[(item.response_id, item.judge_id)] = given
        labels[(item.response_id, item.judge_id)] = {"C": "correct", "L": "lenient",
                                                     "S": "strict"}[verdict_key]
        assert shown_agreements(page) == given and shown_label(page) == labels[
            (item.response_id, item.judge_id)]
        assert page.progress_text.text() == \
            f"{done_before + number + 1} of {total} verdicts reviewed"
        press(qtbot, window, Qt.Key.Key_N if number == 0 else
              Qt.Key.Key_Return if number == 1 else Qt.Key.Key_Right)
        assert (page.items[page.index].response_id, page.items[page.index].judge_id) \
            not in typed

    # Moving between rows (Up, Down, Tab, Shift+Tab) and clearing with Backspace / Delete.
    item = page.items[page.index]
    press(qtbot, window, Qt.Key.Key_Down, Qt.Key.Key_Tab)
    assert page.panel.current == 2
    press(qtbot, window, Qt.Key.Key_Up, Qt.Key.Key_Backtab)
    assert page.panel.current == 0
    press(qtbot, window, "1", "1")
    assert shown_agreements(page) == dict(zip(list(page.view.scores)[:2], (1, 1)))
    press(qtbot, window, Qt.Key.Key_Up, Qt.Key.Key_Backspace)
    assert shown_agreements(page) == {list(page.view.scores)[0]: 1}
    press(qtbot, window, Qt.Key.Key_Up, Qt.Key.Key_Delete)
    assert shown_agreements(page) == {}
    criteria, _ = reviews(demo)
    assert (item.response_id, item.judge_id) not in criteria

    # Back with P and ←: the stored values are shown again.
    reviewed = list(typed)
    for key, expected in ((Qt.Key.Key_P, reviewed[2]), (Qt.Key.Key_Left, reviewed[1]),
                          (Qt.Key.Key_P, reviewed[0])):
        press(qtbot, window, key)
        shown = page.items[page.index]
        assert (shown.response_id, shown.judge_id) == expected
        assert shown_agreements(page) == typed[expected]
        assert shown_label(page) == labels[expected]

    # Read back through a fresh connection: exactly what was typed.
    criteria, stored_labels = reviews(demo)
    for pair in typed:
        assert criteria[pair] == typed[pair]
        assert stored_labels[pair] == labels[pair]
    with Project.open(demo) as project:
        assert session.progress(project, sample_id, REVIEWER) == (done_before + 3, total)


def test_the_judges_real_names_appear_nowhere_on_the_page(
        window: MainWindow, drawn: AuditPage, qtbot) -> None:
    page = drawn
    seen_aliases = set()
    for _ in range(6):
        qtbot.waitUntil(lambda: page.items[page.index].response_id in page_dom(qtbot,
                                                                               page.reader))
        html = page_dom(qtbot, page.reader)
        texts = page_texts(page)
        for name in REAL_NAMES:
            assert name not in html
            assert not any(name in text for text in texts), name
        seen_aliases.add(page.panel.alias.text())
        press(qtbot, window, "2", "2", "2", "2", "2", "2", "2", "2", "C", "N")
    assert seen_aliases <= {"Judge A", "Judge B"} and seen_aliases


def test_finishing_the_sample_says_so(window: MainWindow, drawn: AuditPage, qtbot) -> None:
    page = drawn
    project, reviewer = window.project, REVIEWER
    # Finish every verdict but the one on show through the core, then the last by keys.
    on_show = page.items[page.index]
    for item in page.items:
        if item == on_show:
            continue
        view = session.verdict_view(project, item, reviewer)
        for key in view.scores:
            set_review_agreement(project, reviewer, item.judge_id, item.response_id, key, 2)
        set_review_verdict(project, reviewer, item.judge_id, item.response_id, "correct")
    press(qtbot, window, *["2"] * len(page.view.scores), "C")
    total = len(page.items)
    assert page.progress_text.text() == f"{total} of {total} verdicts reviewed"
    assert page.panel.finished.isVisible()
    assert "Sample finished" in page.panel.finished.text()
    press(qtbot, window, "N")  # every verdict is done: N simply goes on to the next
    assert page.items[page.index] != on_show or total == 1


def test_the_help_overlay_lists_the_pages_keys(window: MainWindow, drawn: AuditPage,
                                               qtbot) -> None:
    window.show_shortcuts()
    texts = [window.help.grid.itemAt(i).widget().text() for i in range(window.help.grid.count())]
    assert "Judge audit" in texts and "Grading" not in texts
    assert all(keys in texts and what in texts for keys, what in audit.KEYS)
    assert "Ctrl+6" in texts and "Audit" in texts
    window.help.hide()


def test_screenshot(window: MainWindow, drawn: AuditPage, qtbot) -> None:
    """The page as a reviewer sees it, midway through a verdict with the judge's reasons."""
    page = drawn
    project = window.project
    with_reason = next((i for i, item in enumerate(page.items)
                        if session.verdict_view(project, item, REVIEWER).rationale
                        and not session.verdict_view(project, item, REVIEWER).done), page.index)
    page.show_index(with_reason)
    press(qtbot, window, "2", "2", "2", "1")
    qtbot.waitUntil(lambda: page.items[page.index].response_id in page_dom(qtbot, page.reader))
    qtbot.wait(200)
    shot(window, "audit-page.png")


def test_a_review_saved_elsewhere_keeps_the_verdict_on_show(window: MainWindow, drawn: AuditPage,
                                                            qtbot) -> None:
    """A change broadcast by the window's operations (here: another verdict reviewed) updates
    the progress; the sample, the verdict and the criterion on show stay."""
    page = drawn
    press(qtbot, window, Qt.Key.Key_Down)
    shown, current = page.items[page.index], page.panel.current
    done, total = session.progress(window.project, page.current_sample_id(), REVIEWER)
    other = next(item for item in page.items if item != shown)
    for key in session.verdict_view(window.project, other, REVIEWER).scores:
        assert window.ops.write(partial(set_review_agreement, reviewer=REVIEWER,
                                        judge_id=other.judge_id, response_id=other.response_id,
                                        criterion=key, agreement=1))
    assert window.ops.write(partial(set_review_verdict, reviewer=REVIEWER,
                                    judge_id=other.judge_id, response_id=other.response_id,
                                    verdict="strict"))
    assert page.progress_text.text() == f"{done + 1} of {total} verdicts reviewed"
    assert page.items[page.index] == shown and page.panel.current == current
    assert page.sample.currentText() == "Pilot"


# -- the panel in sight at common screen sizes --------------------------------------------------

def first_of_rubric(page: AuditPage, rubric: str) -> int:
    """The index of the first verdict on show with ``rubric``'s criteria."""
    return next(i for i, item in enumerate(page.items) if session.verdict_view(
        page.project, item, REVIEWER).rubric.key == rubric)


@pytest.mark.parametrize("size", [(1280, 800), (1600, 1000)])
def test_every_control_of_the_panel_is_in_sight(window: MainWindow, qtbot,
                                                size: tuple[int, int]) -> None:
    """The panel scrolls only up and down: shown first at the window's own size and then
    resized (as when maximised), every button of it lies inside the panel's visible area and
    the window, for both rubrics' criteria."""
    page = show_audit(window, qtbot)  # on the demo's imported sample
    width, height = size
    window.resize(width, height)
    qtbot.wait(300)
    stack = window.pages
    widest = max((stack.widget(i) for i in range(stack.count())),
                 key=lambda shown: shown.minimumSizeHint().width())
    assert window.size() == QSize(width, height), (
        f"the window cannot be {width} px wide: its {getattr(widest, 'page_title', '?')} page "
        f"needs {widest.minimumSizeHint().width()} px")
    viewport = page.scroller.viewport()
    for rubric in ("prefs", "conceptual"):
        page.show_index(first_of_rubric(page, rubric))
        qtbot.wait(100)
        buttons = [button for button in page.panel.findChildren(QPushButton)
                   if button.isVisibleTo(page.panel)]
        assert len(buttons) == 3 * len(page.view.scores) + len(audit.VERDICTS)
        assert page.scroller.horizontalScrollBar().maximum() == 0  # nothing hidden sideways
        for button in buttons:
            page.scroller.ensureWidgetVisible(button, 0, 0)
            in_viewport = QRect(button.mapTo(viewport, QPoint(0, 0)), button.size())
            assert viewport.rect().contains(in_viewport), (rubric, button.text(), in_viewport)
            in_window = QRect(button.mapTo(window, QPoint(0, 0)), button.size())
            assert window.rect().contains(in_window), (rubric, button.text(), in_window)
        shot(window, f"audit-{rubric}-{width}x{height}.png")


# -- a verdict labelled correct agrees with every criterion ------------------------------------

def test_correct_with_a_partial_agreement_is_refused(window: MainWindow, drawn: AuditPage,
                                                     demo: Path, qtbot) -> None:
    page = drawn
    page.show_index(next(i for i, item in enumerate(page.items) if not session.verdict_view(
        window.project, item, REVIEWER).agreements))
    item = page.items[page.index]
    pair = (item.response_id, item.judge_id)
    keys = list(page.view.scores)
    press(qtbot, window, "2", "1", *["2"] * (len(keys) - 2), "C")
    assert window.statusBar().currentMessage() == (
        f"A verdict of correct needs every criterion to agree fully; {keys[1]} is marked "
        "1 (partial)")
    assert not window.ops.boxes  # a refusal in the status bar, not an error
    assert shown_label(page) is None and page.view.verdict is None
    correct = next(b for b in page.panel.verdict_buttons.buttons()
                   if b.property("verdict") == "correct")
    qtbot.mouseClick(correct, Qt.MouseButton.LeftButton)  # a click is refused alike
    assert not correct.isChecked() and "is marked 1 (partial)" in \
        window.statusBar().currentMessage()
    criteria, labels = reviews(demo)
    assert criteria[pair][keys[1]] == 1 and labels.get(pair) is None  # nothing changed

    # Agreed in full, the verdict is correct; a partial agreement then clears that label.
    press(qtbot, window, *[Qt.Key.Key_Up] * (len(keys) - 2), "2", "C")
    assert shown_label(page) == "correct" and page.view.done
    assert reviews(demo)[1][pair] == "correct"
    press(qtbot, window, Qt.Key.Key_Up, Qt.Key.Key_Up, "0")
    assert shown_label(page) is None and not page.view.done
    assert "the label correct no longer holds and was cleared" in \
        window.statusBar().currentMessage()
    criteria, labels = reviews(demo)
    assert criteria[pair][keys[0]] == 0 and labels[pair] is None
    press(qtbot, window, "S")
    assert reviews(demo)[1][pair] == "strict" and page.view.done


# -- imported reviews ---------------------------------------------------------------------------

def test_the_imported_reviews_are_a_sample_to_go_on_with(window: MainWindow, demo: Path,
                                                         qtbot) -> None:
    page = show_audit(window, qtbot)
    assert [page.sample.itemText(i) for i in range(page.sample.count())] == ["imported"]
    assert page.body.currentWidget() is page.content
    assert page.details.text().startswith("16 responses with imported reviews of 2 judges")
    assert page.progress_text.text() == "32 of 32 verdicts reviewed"  # expert-1's 32 of 64
    criteria, labels = reviews(demo)
    assert len(page.items) == len(labels) == 32
    for index, item in enumerate(page.items):
        page.show_index(index)
        assert shown_agreements(page) == criteria[(item.response_id, item.judge_id)]
        assert shown_label(page) == labels[(item.response_id, item.judge_id)]
    # Changed like any sample's review.
    item = page.items[page.index]
    label = "lenient" if page.view.verdict != "lenient" else "strict"
    press(qtbot, window, label[0].upper())
    assert reviews(demo)[1][(item.response_id, item.judge_id)] == label
    assert shown_label(page) == label


def test_a_project_imported_before_gets_its_imported_sample(demo: Path, request,
                                                            qtbot) -> None:
    with Project.open(demo) as project:  # as imports left a project before they made the sample
        expected = sampling.items(project, sampling.samples(project)[0].id)
        project.conn.execute("DELETE FROM review_sample_items")
        project.conn.execute("DELETE FROM review_samples")
    window = request.getfixturevalue("window")
    page = show_audit(window, qtbot)
    qtbot.waitUntil(lambda: page.sample.currentText() == "imported", timeout=5_000)
    assert page.progress_text.text() == "32 of 32 verdicts reviewed"
    with Project.open(demo) as project:
        [imported] = sampling.samples(project)
        assert imported.imported and sampling.items(project, imported.id) == expected
