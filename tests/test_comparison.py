"""The comparison panel: blind until the grade is complete, then every rater with their reasons."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWebEngineCore import QWebEngineScript  # noqa: E402

from conftest import page_dom, page_text, shot, write_jsonl  # noqa: E402
from physgrade.grading import GradingItem, OtherVerdict, compare, grading_item  # noqa: E402
from physgrade.importer import import_file  # noqa: E402
from physgrade.project import Project  # noqa: E402
from physgrade.scores import set_score  # noqa: E402
from physgrade_ui.comparison import HIDDEN, NOBODY, ComparisonPanel  # noqa: E402
from physgrade_ui.reading_view import blocked_requests  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_settings")
WAIT_MS = 10_000
ME = "expert-1"
#: Graded by expert-2 and both demo judges (each with rationales), not yet by expert-1.
OPEN = "r-0080"
#: expert-1's grade of OPEN: the judges and expert-2 were stricter on INT or ANS.
MINE = {"INT": 1, "MOD": 1, "CON": 1, "APP": 1, "CAL": 1, "COR": 2, "COH": 1, "ANS": 2}


class Cells(HTMLParser):
    """The comparison table as the browser holds it: per row, each cell's class and text."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[tuple[str, str]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = [dict(attrs).get("class") or ""]
        elif self._cell is not None:  # the lines of a cell are elements of their own
            self._cell.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append((self._cell[0], " ".join("".join(self._cell[1:]).split())))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def table(qtbot, panel: ComparisonPanel) -> dict[str, list[tuple[str, str]]]:
    """Rows by their first cell's first word (the criterion key, "Criterion", "Total")."""
    parser = Cells()
    parser.feed(page_dom(qtbot, panel.view))
    return {row[0][1].split()[0]: row[1:] for row in parser.rows if row}


@pytest.fixture
def panel(qtbot) -> ComparisonPanel:
    shown = ComparisonPanel()
    qtbot.addWidget(shown)
    shown.resize(700, 800)
    shown.show()
    qtbot.waitExposed(shown)
    return shown


def reveal(qtbot, panel: ComparisonPanel, item: GradingItem,
           verdicts: list[OtherVerdict] | None) -> None:
    with qtbot.waitSignal(panel.rendered, timeout=WAIT_MS):
        panel.show_verdicts(item, verdicts)
    assert panel.revealed and panel.pages.currentWidget() is panel.view


def graded(project: Project, response_id: str = OPEN) -> tuple[GradingItem, list | None]:
    item = grading_item(project, response_id, ME)
    return item, compare(project, item, ME)


def test_blind_until_the_last_criterion_then_every_rater_with_reasons(qtbot, panel, demo):
    with Project.open(demo) as project:
        panel.show_verdicts(*graded(project))
        for key in list(MINE)[:-1]:
            set_score(project, ME, OPEN, key, MINE[key])
            panel.show_verdicts(*graded(project))
            assert not panel.revealed and panel.view is None  # no browser started while blind
            assert panel.message.text() == HIDDEN and panel.message.isVisible()
        set_score(project, ME, OPEN, "ANS", MINE["ANS"])
        reveal(qtbot, panel, *graded(project))

    text = page_text(qtbot, panel.view)
    assert "Final answer omits that the image is inverted (negative h_i)." in text  # a judge's
    assert "The target quantity is not restated precisely before solving." in text
    assert "final answer omits that the image is inverted" in text  # the colleague's note
    assert "prompt prefs-v1" in text and "Overall comments" in text
    assert "Main issue: final answer omits" in text  # expert-2's overall comment
    rows = table(qtbot, panel)
    assert [text for _, text in rows["Criterion"]] == [
        "You your grade", "expert-2 grader", "arbiter-large judge prompt prefs-v1",
        "arbiter-mini judge prompt prefs-v1"]
    you, colleague, large, mini = rows["INT"]
    assert you == ("you", "1") and colleague == ("", "1") and mini == ("", "1")
    assert large == ("differs", "0 you: 1 The target quantity is not restated precisely "
                                "before solving.")
    assert [cls for cls, _ in rows["ANS"]] == ["you", "differs", "differs", "differs"]
    assert [cls for cls, _ in rows["MOD"]] == ["you", "", "", ""]  # all agree
    assert rows["Total"] == [("you", "10/10"), ("differs", "9/10 you: 10"),
                             ("differs", "8/10 you: 10"), ("differs", "9/10 you: 10")]

    with Project.open(demo) as project:  # the next response: blind again, the table covered
        panel.show_verdicts(*graded(project, "r-0079"))
    assert not panel.revealed and panel.pages.currentWidget() is panel.message_page


def test_nobody_else_is_said_without_a_browser(qtbot, panel, loaded):
    for key, value in {"SET": 1, "CON": 1, "EXE": None, "COH": 1, "ANS": 1}.items():
        set_score(loaded, "ana", "r-3", key, value)
    item = grading_item(loaded, "r-3", "ana")
    panel.show_verdicts(item, compare(loaded, item, "ana"))
    assert panel.message.text() == NOBODY and not panel.revealed and panel.view is None


def test_the_browser_waits_until_the_panel_is_shown(qtbot, demo):
    panel = ComparisonPanel()
    qtbot.addWidget(panel)
    panel.set_zoom(1.25)
    with Project.open(demo) as project:
        panel.show_verdicts(*graded(project, "r-0068"))  # graded by expert-1 already
    assert panel.revealed and panel.view is None
    with qtbot.waitSignal(panel.rendered, timeout=WAIT_MS):
        panel.show()
    assert panel.view.zoomFactor() == 1.25
    assert "arbiter-mini" in page_text(qtbot, panel.view)


def test_close_button_says_closed(qtbot, panel):
    assert panel.close_button.text() == "Close  (C)"
    with qtbot.waitSignal(panel.closed, timeout=WAIT_MS):
        qtbot.mouseClick(panel.close_button, Qt.MouseButton.LeftButton)


def test_hostile_rationales_render_inert_and_five_raters_fit(qtbot, panel, demo, tmp_path: Path):
    hostile = {"response_id": OPEN, "judge": "<b>judge</b>", "prompt_version": "v9",
               "scores": {**MINE, "CAL": 0},
               "rationale": {"CAL": "<script>alert('x')</script> so $v = 2.0 \\times 5.0$",
                             "ANS": '<img src="http://example.invalid/a.png" onerror="alert(1)">',
                             "COH": "Unbroken" + "x" * 90},
               "notes": "Overall: <a href='http://example.invalid'>see here</a>"}
    blocked = len(blocked_requests())
    panel.resize(600, 800)
    with Project.open(demo) as project:
        import_file(project, write_jsonl(tmp_path / "v.jsonl", [hostile]), "verdicts")
        for key, value in MINE.items():
            set_score(project, ME, OPEN, key, value)
        reveal(qtbot, panel, *graded(project))

    text = page_text(qtbot, panel.view)
    assert "<script>alert('x')</script>" in text and "<b>judge</b>" in text
    assert '<img src="http://example.invalid/a.png" onerror="alert(1)">' in text
    assert "Overall: <a href='http://example.invalid'>see here</a>" in text
    dom = page_dom(qtbot, panel.view)
    assert "<script" not in dom and "<img" not in dom and "<a " not in dom and "<b>" not in dom
    assert "<math" in dom  # the rationale's formula is real MathML
    assert len(blocked_requests()) == blocked
    assert len(table(qtbot, panel)["Criterion"]) == 5
    # Five raters at 600 px: the table wraps within the panel, nothing to scroll sideways.
    got: list[str] = []
    panel.view.page().runJavaScript(
        "JSON.stringify([document.documentElement.scrollWidth, "
        "document.documentElement.clientWidth, document.querySelector('table.compare').offsetWidth])",
        QWebEngineScript.ScriptWorldId.ApplicationWorld, got.append)
    qtbot.waitUntil(lambda: bool(got), timeout=WAIT_MS)
    scrolled, viewport, table_width = json.loads(got[0])
    assert scrolled <= viewport and 500 < table_width <= viewport


def test_a_screenshot_an_expert_can_read(qtbot, panel, demo):
    with Project.open(demo) as project:
        reveal(qtbot, panel, *graded(project, "r-0068"))  # two judges and expert-2
    qtbot.wait(200)  # the swapped-in table is painted
    shot(panel, "comparison.png")
