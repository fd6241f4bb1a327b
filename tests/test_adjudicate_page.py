"""The Adjudicate page on the real demo project, whose expert-1 and expert-2 disagree on four
responses: disputes settled with the keyboard only, refusals that write nothing, the list kept
current by the broadcast, and a report that takes the decisions as its consensus; every
decision read back from the project file through a fresh connection."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from conftest import shot  # noqa: E402
from physgrade.project import Project  # noqa: E402
from physgrade.raters import HUMAN_CONSENSUS  # noqa: E402
from physgrade.report.build import build_report  # noqa: E402
from physgrade.report.options import ReportOptions  # noqa: E402
from physgrade.scores import set_score  # noqa: E402
from physgrade.scoring import tables as score_tables  # noqa: E402
from physgrade.team.adjudication import Decision, clear_decision, decisions, set_decision  # noqa: E402
from physgrade_ui import adjudicate  # noqa: E402
from physgrade_ui.adjudicate import AdjudicatePage  # noqa: E402
from physgrade_ui.main_window import MainWindow  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_settings")

ME = "expert-1"
#: The demo's disputes in the list's order (question, then model) and what each disputes.
DISPUTES = {"r-0019": ("COR",), "r-0044": ("CON",), "r-0069": ("COH",), "r-0068": ("ANS",)}


def keys(qtbot, window: MainWindow, *pressed: object) -> None:
    """Keys as a person types them, to whatever has the keyboard (the window made active
    again first: a virtual display can take that from it between two keys)."""
    for key in pressed:
        if not window.isActiveWindow():
            window.activateWindow()
            qtbot.waitUntil(window.isActiveWindow, timeout=5_000)
        if isinstance(key, tuple):
            qtbot.keyClick(QApplication.focusWidget() or window, *key)
        else:
            qtbot.keyClick(QApplication.focusWidget() or window, key)


def show_page(window: MainWindow, qtbot) -> AdjudicatePage:
    """Ctrl+8, then wait until the disputes are read and the table holds the keyboard."""
    keys(qtbot, window, (Qt.Key.Key_8, Qt.KeyboardModifier.ControlModifier))
    page = window.adjudicate
    qtbot.waitUntil(lambda: window.pages.currentWidget() is page, timeout=5_000)
    qtbot.waitUntil(lambda: page.loaded and (page.list.count() == 0 or
                                             QApplication.focusWidget() is page.table),
                    timeout=10_000)
    return page


def stored(path: Path, response_id: str) -> dict[str, Decision]:
    """The decisions on a response as the project file holds them."""
    with Project.open(path) as project:
        return decisions(project, response_id)


def listed(page: AdjudicatePage) -> list[str]:
    return [page.list.item(row).text() for row in range(page.list.count())]


def current(page: AdjudicatePage) -> str:
    criterion = page.table.current_criterion
    assert criterion is not None
    return criterion.key


def status(window: MainWindow) -> str:
    return window.statusBar().currentMessage()


def test_keys_decide_refuse_clear_and_move_between_disputes(window: MainWindow, demo: Path,
                                                            qtbot, monkeypatch) -> None:
    # expert-2 also gives r-0019 INT 0 (expert-1 gave 1): a second disputed criterion there
    assert window.ops.write(partial(set_score, grader="expert-2", response_id="r-0019",
                                    criterion="INT", value=0))
    page = show_page(window, qtbot)
    assert page.adjudicator_label.text() == f"Adjudicating as {ME}"
    assert [d.response_id for d in page.listed] == list(DISPUTES)
    assert [d.disputed for d in page.listed][1:] == list(DISPUTES.values())[1:]
    assert listed(page)[0] == "q-0007 · orbit-7b\nINT, COR  ·  0 of 2 decided"
    assert page.stats.text().startswith("4 disputed responses")
    assert page.dispute.response_id == "r-0019" and current(page) == "INT"
    heads = [head.text() for head in page.table.heads]
    assert heads == ["Criterion", f"{ME} (you)", "expert-2", "Final"]
    cor = page.table.rows[page.item.rubric.keys.index("COR")]
    assert "½kx has units of newtons" in cor.cells[2].text()  # expert-2's note, side by side
    assert "to decide" in cor.cells[3].text()
    shot(window, "adjudicate-dispute.png")

    keys(qtbot, window, "5")                     # INT takes 0 or 1: refused, nothing written
    assert "INT takes 0, 1" in status(window) and stored(demo, "r-0019") == {}
    assert page._editor.refusal.isVisible()
    reads: list[str] = []                        # a key's decision reads its decisions only
    for name in ("_read", "_reread"):
        monkeypatch.setattr(page, name, partial(lambda read, name, *args, **kwargs: (
            reads.append(name), read(*args, **kwargs)), getattr(page, name), name))
    keys(qtbot, window, "1")                     # INT decided; on to the next disputed one
    assert reads == []
    assert stored(demo, "r-0019")["INT"] == Decision(1, ME, None,
                                                     stored(demo, "r-0019")["INT"].decided_at)
    assert current(page) == "COR" and "final INT = 1" in status(window)
    assert listed(page)[0].endswith("1 of 2 decided")
    keys(qtbot, window, "2")                     # COR decided: the dispute is settled
    assert {k: d.value for k, d in stored(demo, "r-0019").items()} == {"INT": 1, "COR": 2}
    assert "Settled" in status(window) and page.state.text() == "✓ Settled"
    assert "decided by you" in cor.cells[3].text()
    qtbot.waitUntil(lambda: listed(page)[0].endswith("✓ settled"), timeout=5_000)

    assert current(page) == "INT"                # round to the first disputed criterion
    keys(qtbot, window, "j", Qt.Key.Key_Down)
    assert current(page) == "CON"
    keys(qtbot, window, "k", Qt.Key.Key_Up, Qt.Key.Key_Up)
    assert current(page) == "INT"                # the first row stays the first
    keys(qtbot, window, Qt.Key.Key_Backspace)     # the final INT withdrawn
    assert "INT" not in stored(demo, "r-0019") and "cleared" in status(window)
    assert listed(page)[0].endswith("1 of 2 decided")
    keys(qtbot, window, Qt.Key.Key_Delete)        # nothing left to clear: nothing written
    assert "no final value to clear" in status(window)

    keys(qtbot, window, Qt.Key.Key_Return)        # the next unsettled dispute
    assert page.dispute.response_id == "r-0044" and current(page) == "CON"
    assert "multiple choice" in page.facts.text()
    keys(qtbot, window, "n")                      # CON has no N/A: refused, nothing written
    assert "has no N/A" in status(window) and stored(demo, "r-0044") == {}
    keys(qtbot, window, "j", "n")                 # EXE takes N/A
    assert stored(demo, "r-0044")["EXE"].value is None
    assert current(page) == "CON"                 # back to the disputed criterion
    keys(qtbot, window, "0")
    assert stored(demo, "r-0044")["CON"].value == 0
    keys(qtbot, window, "e")                      # a note on the final value
    qtbot.waitUntil(lambda: page._editor.note.hasFocus(), timeout=2_000)
    qtbot.keyClicks(page._editor.note, "the Lenz argument is reversed")
    qtbot.keyClick(page._editor.note, Qt.Key.Key_Return)
    assert stored(demo, "r-0044")["CON"] == Decision(0, ME, "the Lenz argument is reversed",
                                                     stored(demo, "r-0044")["CON"].decided_at)
    assert QApplication.focusWidget() is page.table

    keys(qtbot, window, Qt.Key.Key_PageDown)      # r-0069, then back where we came from
    assert page.dispute.response_id == "r-0069"
    keys(qtbot, window, Qt.Key.Key_Left)
    assert page.dispute.response_id == "r-0044"
    keys(qtbot, window, Qt.Key.Key_PageUp)
    assert page.dispute.response_id == "r-0019"
    assert "_read" not in reads                   # each dispute read as shown; the list never

    # a decision on the response on show made elsewhere (another page): the table shows it
    assert window.ops.write(partial(set_decision, adjudicator="expert-2",
                                    response_id="r-0019", criterion="INT", value=0))
    int_ = page.table.rows[page.item.rubric.keys.index("INT")]
    assert "decided by expert-2" in int_.cells[3].text() and page.state.text() == "✓ Settled"
    assert listed(page)[0].endswith("✓ settled")
    # one by a command, then F5: the page reads it all again
    with Project.open(demo) as project:
        clear_decision(project, "r-0019", "INT")
    window.refresh()
    assert "to decide" in int_.cells[3].text() and "INT" not in page.table.decisions
    qtbot.waitUntil(lambda: listed(page)[0].endswith("1 of 2 decided"), timeout=5_000)

    window.show_shortcuts()                       # F1: this page's keys, not the workbench's
    texts = [window.help.grid.itemAt(i).widget().text() for i in range(window.help.grid.count())]
    assert "Adjudicate" in texts and "Grading" not in texts
    assert all(keys in texts and what in texts for keys, what in adjudicate.KEYS)
    window.help.hide()


def test_a_note_typed_after_each_decision_never_decides(window: MainWindow, demo: Path,
                                                        qtbot) -> None:
    """Decide, E, the note, Enter: the note's digits are its text, it lands on the final value
    just set, and the cursor is back where the decision had moved it."""
    assert window.ops.write(partial(set_score, grader="expert-2", response_id="r-0019",
                                    criterion="INT", value=0))  # INT and COR disputed
    page = show_page(window, qtbot)
    assert page.dispute.response_id == "r-0019" and current(page) == "INT"
    note = "80*45 fine; 12 checking 0 1 2"
    for key, value, then in (("INT", 1, "COR"), ("COR", 2, "INT")):
        keys(qtbot, window, str(value))
        assert current(page) == then             # a decision moves on to the next dispute
        keys(qtbot, window, "e")
        assert current(page) == key and page._editor.note.hasFocus()
        qtbot.keyClicks(QApplication.focusWidget(), note)
        keys(qtbot, window, Qt.Key.Key_Return)
        assert current(page) == then and QApplication.focusWidget() is page.table
    assert {k: (d.value, d.note) for k, d in stored(demo, "r-0019").items()} == {
        "INT": (1, note), "COR": (2, note)}


def test_the_list_follows_the_broadcast_and_the_report_takes_the_decisions(
        window: MainWindow, demo: Path, qtbot) -> None:
    with Project.open(demo) as project:   # before: the two graders tie, so no consensus
        before = score_tables.load(project)
    consensus = before.rows(HUMAN_CONSENSUS)
    assert consensus[(consensus["response_id"] == "r-0019")
                     & (consensus["criterion"] == "COR")].empty
    page = show_page(window, qtbot)
    assert all(text.endswith("0 of 1 decided") for text in listed(page))

    # a decision made elsewhere (another page, a command): the list hears of it
    assert window.ops.write(partial(set_decision, adjudicator="expert-2",
                                    response_id="r-0069", criterion="COH", value=1))
    qtbot.waitUntil(lambda: listed(page)[2].endswith("✓ settled"), timeout=5_000)
    assert page.stats.text() == "4 disputed responses   ·   1 settled   ·   3 to settle"

    for _ in range(3):                            # the three left, each with the first value
        keys(qtbot, window, "1", Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: all(text.endswith("✓ settled") for text in listed(page)),
                    timeout=5_000)
    assert {rid: {k: d.value for k, d in stored(demo, rid).items()} for rid in DISPUTES} == {
        "r-0019": {"COR": 1}, "r-0044": {"CON": 1}, "r-0069": {"COH": 1}, "r-0068": {"ANS": 1}}
    assert "Every dispute in the list is settled" in status(window)
    shot(window, "adjudicate-settled.png")

    # read afresh, the Open filter lets the settled ones go; All shows them again
    page.filter.setCurrentIndex(page.filter.findData("all"))
    assert page.list.count() == 4
    page.filter.setCurrentIndex(page.filter.findData("open"))
    assert page.body.currentWidget() is page.empty and page.empty.title.text() == "All settled"
    page.empty_button.click()
    assert page.filter.currentData() == "all" and page.list.count() == 4
    page.difference.setValue(2)                   # the demo's graders differ by 1 at most
    qtbot.waitUntil(lambda: page.empty.title.text() == "Nothing to adjudicate", timeout=5_000)
    assert page.empty_button.text() == "Show every difference"
    page.empty_button.click()
    qtbot.waitUntil(lambda: page.list.count() == 4, timeout=5_000)

    with Project.open(demo) as project:
        report = build_report(project, ReportOptions(resamples=20))
        after = score_tables.load(project)
    assert report.settings["consensus_adjudicated"] == 4
    consensus = after.rows(HUMAN_CONSENSUS)
    cor = consensus[(consensus["response_id"] == "r-0019") & (consensus["criterion"] == "COR")]
    assert cor["value"].tolist() == [1]


def test_a_project_nobody_disputes_says_so(qtbot, tmp_path: Path) -> None:
    from physgrade_ui import grader

    path = tmp_path / "agreed.physgrade"
    Project.create(path).close()
    grader.remember(ME)
    window = MainWindow(path)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5_000)
    page = show_page(window, qtbot)
    assert page.body.currentWidget() is page.empty
    assert page.empty.texts[0].text() == adjudicate.NO_DISPUTES
    assert not page.empty_button.isVisible() and not page.hint.isVisible()


def test_the_panes_open_as_the_adjudicator_left_them(qtbot, demo: Path) -> None:
    from physgrade_ui import grader

    grader.remember(ME)
    sizes = []
    for _ in range(2):
        window = MainWindow(demo)
        qtbot.addWidget(window)
        window.resize(1440, 900)
        window.show()
        qtbot.waitExposed(window)
        page = show_page(window, qtbot)
        qtbot.waitUntil(lambda: page.panes.laid_out, timeout=5_000)  # noqa: B023
        sizes.append(page.session.sizes())
        if len(sizes) == 1:
            page.session.setSizes([300, sizes[0][1] + sizes[0][0] - 300, sizes[0][2]])
            page.session.splitterMoved.emit(300, 1)  # as a drag of the first handle ends
            sizes[0] = page.session.sizes()
        window.close()
    assert sizes[1] == sizes[0] and sizes[1][0] == 300


def test_each_project_keeps_its_own_pane_sizes(qtbot, demo: Path, tmp_path: Path) -> None:
    from physgrade.demo import build_demo
    from physgrade_ui import grader

    other = tmp_path / "other.physgrade"
    build_demo(other)
    grader.remember(ME)
    window = MainWindow(demo)
    qtbot.addWidget(window)
    window.resize(1440, 900)
    window.show()
    qtbot.waitExposed(window)

    def list_width(path: Path, dragged_to: int | None = None) -> int:
        """The list's width in the project at ``path``, after a drag to ``dragged_to``."""
        assert window.open_project(path)
        page = show_page(window, qtbot)
        qtbot.waitUntil(lambda: page.panes.laid_out, timeout=5_000)
        if dragged_to is not None:
            page.session.moveSplitter(dragged_to, 1)
        return page.session.sizes()[0]

    assert list_width(demo, 300) == 300
    assert list_width(other) == 300  # first opened: the sizes last used anywhere
    assert list_width(other, 220) == 220
    assert list_width(demo) == 300
    assert list_width(other) == 220
