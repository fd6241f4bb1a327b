"""The report's tables on a 1280×800 screen, on the Reports page and in report.html: no section
scrolls sideways, every column is in view, and a long text wraps onto lines of its own rather
than being cut."""

from __future__ import annotations

import json
from functools import partial

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QRect, Qt, QUrl  # noqa: E402
from PySide6.QtWebEngineCore import QWebEnginePage, QWebEngineProfile, QWebEngineScript  # noqa: E402
from PySide6.QtWebEngineWidgets import QWebEngineView  # noqa: E402
from PySide6.QtWidgets import QScrollArea  # noqa: E402

from conftest import grading_window  # noqa: E402
from physgrade.project import Project  # noqa: E402
from physgrade.report.build import build_report  # noqa: E402
from physgrade.report.options import ReportOptions  # noqa: E402
from physgrade.report.writers import write_report  # noqa: E402
from physgrade_ui import reading_view  # noqa: E402, F401 (Chromium's flags: no sandbox as root)
from physgrade_ui.reports import WORD_ROOM, ReportTable  # noqa: E402
from test_reports_page import shown_report  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_settings")


def fits_sideways(area: QScrollArea) -> bool:
    """Whether the section is without a sideways scroll bar (it may show one for a moment while
    the page lays out)."""
    return not area.horizontalScrollBar().isVisible()


def test_every_table_fits_the_smallest_screen_and_wraps_its_text(qtbot, demo):
    window = grading_window(qtbot, demo, 1280, 800)
    page = shown_report(window, qtbot)
    for index in range(page.tabs.count()):
        page.tabs.setCurrentIndex(index)
        area = page.tabs.widget(index)
        assert area.widget().minimumSizeHint().width() <= area.viewport().width(), \
            page.tabs.tabText(index)
        qtbot.waitUntil(partial(fits_sideways, area))
        for table in area.widget().findChildren(ReportTable):
            columns = sum(table.horizontalHeader().sectionSize(c)
                          for c in range(table.columnCount()))
            assert columns <= table.viewport().width() + 1, table.objectName()
            for r in range(table.rowCount()):
                for c in range(table.columnCount()):  # every line of every cell has room
                    width = table.horizontalHeader().sectionSize(c)
                    needed = table.fontMetrics().boundingRect(
                        QRect(0, 0, width - WORD_ROOM, 0), Qt.TextFlag.TextWordWrap,
                        table.item(r, c).text()).height()
                    assert table.rowHeight(r) >= needed, (table.objectName(), r, c)

    rules = page.tables["judge_verdict_rules"]
    given = rules.titles.index("Given when")
    assert rules.rowHeight(1) > 3 * rules.fontMetrics().height()  # a rule of many lines
    assert "whose interval lies above 0" in rules.text(1, given)  # whole, not cut short

    criteria = page.tables["criterion_agreement"]
    assert [criteria.horizontalHeaderItem(c).text().replace("\n", " ")
            for c in range(criteria.columnCount())] == list(criteria.titles)


#: Whether the page, or any of its tables, is wider than the window (it would scroll sideways).
WIDER_THAN_WINDOW = """JSON.stringify([document.documentElement.scrollWidth >
  document.documentElement.clientWidth].concat([...document.querySelectorAll("table")].map(
  (table) => table.getBoundingClientRect().right > document.documentElement.clientWidth)))"""


def test_the_html_report_fits_a_1280_window(qtbot, demo, tmp_path):
    """The written report.html, opened in a 1280 px browser window, wraps its tables rather
    than scrolling them sideways."""
    with Project.open(demo) as project:
        report = build_report(project, ReportOptions(resamples=20))
    page_file = write_report(report, tmp_path, ["html"])[0]
    view = QWebEngineView()
    qtbot.addWidget(view)
    view.setPage(QWebEnginePage(QWebEngineProfile(view), view))  # its own: files allowed
    view.resize(1280, 800)
    view.show()
    with qtbot.waitSignal(view.loadFinished, timeout=30_000):
        view.load(QUrl.fromLocalFile(str(page_file)))
    found: list[str] = []
    view.page().runJavaScript(WIDER_THAN_WINDOW, QWebEngineScript.ScriptWorldId.ApplicationWorld,
                              found.append)
    qtbot.waitUntil(lambda: bool(found), timeout=10_000)
    wider = json.loads(found[0])
    assert len(wider) > 20 and not any(wider)
