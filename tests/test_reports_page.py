"""The Reports page on the real demo project: a draft of the core's report at once, computed off
the GUI thread from the scores the page keeps, its intervals and figures section by section
after it; a filter change computes it again by itself, a newer request cancels the older, Stop
and Finish, errors, export."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Iterator

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

import physgrade.report.build  # noqa: E402
from conftest import press, shot, wait_for  # noqa: E402
from physgrade import scores  # noqa: E402
from physgrade.project import Project  # noqa: E402
from physgrade.report.build import Draft, build_report  # noqa: E402
from physgrade.report.model import (  # noqa: E402
    PENDING,  # noqa: E402
    Report,
    Section,
)
from physgrade.report.options import ReportOptions  # noqa: E402
from physgrade.rubric import PREFS  # noqa: E402
from physgrade.scoring.readings import Readings  # noqa: E402
from physgrade.scoring.store import ScoreStore  # noqa: E402
from physgrade.selection import ResponseFilter  # noqa: E402
from physgrade.stats.estimate import Estimate  # noqa: E402
from physgrade.tasks import Task  # noqa: E402
from physgrade_ui import reports, style  # noqa: E402
from physgrade_ui.main_window import MainWindow  # noqa: E402
from physgrade_ui.reports import ExportReportDialog, FigurePlaceholder, FigureView, ReportsPage, ReportTable  # noqa: E402
from physgrade_ui.workers import Worker  # noqa: E402

WAIT_MS = 120_000  # a report bootstraps every interval
ROWS_CHECKED = 3
#: A response graded by both judges, not yet by expert-1.
UNGRADED = "r-0002"

pytestmark = pytest.mark.usefixtures("app_settings")


def complete(qtbot, page: ReportsPage) -> ReportsPage:
    """Wait until the report on show has every interval and figure, and nothing is under way."""
    qtbot.waitUntil(lambda: page.complete and page.worker is None, timeout=WAIT_MS)
    return page


def shown_report(window: MainWindow, qtbot) -> ReportsPage:
    """The Reports page, once the report it computes on first show is complete."""
    window.reports_action.trigger()
    return complete(qtbot, window.reports)


def drafted(window: MainWindow, qtbot) -> ReportsPage:
    """The Reports page, once the draft it computes on first show is there."""
    window.reports_action.trigger()
    wait_for(qtbot, window.reports.worker, "finished", WAIT_MS)
    return window.reports


def core_report(path: Path, options: ReportOptions) -> Report:
    with Project.open(path) as project:
        return build_report(project, options)


def assert_shows(page: ReportsPage, report: Report) -> None:
    """Every table of ``report`` is on the page as readers see it (people with few grades
    folded), its first rows reading as the core writes them."""
    assert [page.tabs.tabText(i) for i in range(page.tabs.count())] == [
        section.tab for section in report.sections]
    assert [page.tabs.tabToolTip(i) for i in range(page.tabs.count())] == [
        section.title for section in report.sections]
    for table in (t.shown() for t in report.tables()):
        if not table.rows:
            assert table.name not in page.tables
            continue
        view = page.tables[table.name]
        assert view.rowCount() == len(table.rows), table.name
        for r in range(min(ROWS_CHECKED, len(table.rows))):
            # An estimate that could not be computed reads n/a, with the reason in its tooltip.
            assert [view.text(r, c) for c in range(len(table.columns))] == [
                "n/a" if table.text(r, c).startswith("n/a") else table.text(r, c)
                for c in range(len(table.columns))], table.name


def cells(page: ReportsPage) -> dict[str, list[str]]:
    return {name: [view.text(r, c) for r in range(view.rowCount())
                   for c in range(view.columnCount())] for name, view in page.tables.items()}


def pending(report: Report) -> list[tuple[str, int, int]]:
    """(table, row, column) of every estimate whose interval is still being computed."""
    return [(table.name, r, c) for table in report.tables() for r, row in enumerate(table.rows)
            for c, cell in enumerate(row) if isinstance(cell, Estimate) and cell.reason == PENDING]


def choose(page: ReportsPage, facet: str, value: str) -> None:
    action = next(a for a in page.facets[facet].menu().actions() if a.text() == value)
    action.setChecked(True)


@pytest.fixture
def held_finishing(monkeypatch) -> Iterator[tuple[threading.Event, list[int]]]:
    """Every section's finishing held until the gate is set (at the latest when the test ends),
    and the sections in the order they were asked for."""
    gate, order = threading.Event(), []
    real_finish = reports.finish_work

    def held(draft: Draft, index: int, project: None, task: Task) -> Section:
        order.append(index)
        gate.wait(WAIT_MS / 1000)
        return real_finish(draft, index, project, task)

    monkeypatch.setattr(reports, "finish_work", held)
    yield gate, order
    gate.set()


def test_the_page_shows_the_cores_report_computed_off_the_gui_thread(
        window: MainWindow, demo: Path, qtbot, monkeypatch) -> None:
    threads: list[threading.Thread] = []
    real_draft, real_finish = physgrade.report.build.draft_report, physgrade.report.build.finish_section

    def recorded_draft(project: Project, options: ReportOptions, store: ScoreStore,
                       task: Task, readings: Readings) -> Draft:
        threads.append(threading.current_thread())
        return real_draft(project, options, store, task, readings)

    def recorded_finish(draft: Draft, index: int, task: Task) -> Section:
        threads.append(threading.current_thread())
        return real_finish(draft, index, task)

    monkeypatch.setattr(physgrade.report.build, "draft_report", recorded_draft)
    monkeypatch.setattr(physgrade.report.build, "finish_section", recorded_finish)
    page = shown_report(window, qtbot)

    report = core_report(demo, page.options())
    assert len(threads) == 1 + len(report.sections)  # the draft, then each section once
    assert threading.main_thread() not in threads
    assert_shows(page, report)
    assert page.report.settings["filter"] == report.settings["filter"]
    assert not pending(page.report) and all(figure.drawn for figure in page.report.figures())
    assert page.summary.text().startswith(f"{report.settings['responses']:,} responses · ")
    assert "no filter" in page.summary.text() and "intervals" not in page.summary.text()
    assert f"analyses for {page.rater.currentText()}" in page.summary.text()
    assert page.export_button.isEnabled()
    assert page.stop_button.isHidden() and page.finish_button.isHidden()

    assert window.size().width() == 1440 and window.size().height() == 900
    qtbot.wait(200)  # let the layout settle before looking
    shot(window, "reports.png")
    figure = page.findChild(FigureView, "score_differences")
    scroller = next(page.tabs.widget(i) for i in range(page.tabs.count())
                    if page.tabs.widget(i).isAncestorOf(figure))
    page.tabs.setCurrentWidget(scroller)
    qtbot.wait(200)
    assert scroller.widget().width() == scroller.viewport().width()  # no sideways scrolling
    scroller.verticalScrollBar().setValue(figure.y() - 200)
    shot(window, "reports_figure.png")


def test_the_draft_marks_what_is_pending_until_the_finished_sections_replace_it(
        window: MainWindow, demo: Path, qtbot, held_finishing, tmp_path: Path) -> None:
    gate, order = held_finishing
    page = drafted(window, qtbot)
    qtbot.waitUntil(lambda: order == [0], timeout=WAIT_MS)  # the section on show comes first

    marked = pending(page.report)
    assert marked and page.worker is not None and not page.complete
    for name, r, c in marked:
        item = page.tables[name].item(r, c)
        value = page.report.tables()[[t.name for t in page.report.tables()].index(name)].rows[r][c]
        assert item.text() == f"{value.value:.3f} …"
        assert item.toolTip() == "Interval still being computed"
        assert item.foreground().color().name() == style.MUTED
    figures = page.report.figures()
    assert figures and not any(figure.drawn for figure in figures)
    assert not page.findChildren(FigureView)
    assert sorted(card.objectName() for card in page.findChildren(FigurePlaceholder)) == sorted(
        figure.name for figure in figures)
    assert {card.text.text() for card in page.findChildren(FigurePlaceholder)} == {"Drawing…"}
    sections = len(page.report.sections)
    assert page.summary.text().endswith(f" · intervals and figures: 0 of {sections} sections…")
    assert page.stop_button.isVisible() and page.finish_button.isHidden()
    assert not page.export_button.isEnabled() and "once its intervals" in (
        page.export_button.toolTip())
    assert page.start_export(reports.ReportExport(tmp_path / "out", ("json",))) is None
    assert window.statusBar().currentMessage() == (
        "The report can be exported once its intervals and figures are computed.")
    shot(window, "reports_draft.png")

    # The reader scrolls down the section on show, then moves to the third before it is done.
    first = page.tabs.widget(0)
    first.verticalScrollBar().setValue(300)
    page.tabs.setCurrentIndex(2)
    gate.set()
    complete(qtbot, page)
    assert order[:3] == [0, 2, 1] and sorted(order) == list(range(sections))
    assert page.tabs.widget(0) is first and first.verticalScrollBar().value() == 300
    assert page.tabs.currentIndex() == 2
    assert_shows(page, core_report(demo, page.options()))
    assert not any(item.text().endswith(" …") for view in page.tables.values()
                   for item in (view.item(r, c) for r in range(view.rowCount())
                                for c in range(view.columnCount())))
    assert len(page.findChildren(FigureView)) == len(figures)
    assert page.export_button.isEnabled() and "intervals" not in page.summary.text()


def test_a_filter_change_computes_the_filtered_report_by_itself(window: MainWindow, demo: Path,
                                                               qtbot, monkeypatch) -> None:
    page = shown_report(window, qtbot)
    everything = cells(page)
    drafts: list[ReportOptions] = []
    real_draft = reports.draft_work

    def recorded(cache, options: ReportOptions, project: Project, task: Task) -> Draft:
        drafts.append(options)
        return real_draft(cache, options, project, task)

    monkeypatch.setattr(reports, "draft_work", recorded)
    rater = next(page.rater.itemText(i) for i in range(page.rater.count())
                 if i != page.rater.currentIndex())
    first, second = (a.text() for a in page.facets["models"].menu().actions()[:2])
    page.rater.setCurrentText(rater)  # hands on its index: it must not become the wait
    for model in (first, second):  # in quick succession: one report for all three clicks
        qtbot.wait(20)
        choose(page, "models", model)
    assert page.worker is None and page._settle.interval() == reports.SETTLE_MS
    qtbot.waitUntil(lambda: page.worker is not None, timeout=5_000)
    complete(qtbot, page)

    chosen = ResponseFilter(models=frozenset({first, second}))
    assert [(options.filter, options.rater) for options in drafts] == [(chosen, rater)]
    assert page.report_options == page.options() and page.options().filter == chosen
    report = core_report(demo, page.options())
    assert_shows(page, report)
    assert cells(page) != everything
    assert page.summary.text().startswith(f"{report.settings['responses']:,} responses · ")
    assert f"Model: {', '.join(sorted((first, second)))}" in page.summary.text()


def test_a_newer_request_cancels_the_computation_it_supersedes(window: MainWindow, demo: Path,
                                                               qtbot, monkeypatch) -> None:
    page = shown_report(window, qtbot)
    gate, shown = threading.Event(), []
    real_draft, real_show = reports.draft_work, ReportsPage._show_draft

    def held_draft(cache, options: ReportOptions, project: Project, task: Task) -> Draft:
        gate.wait(WAIT_MS / 1000)  # hold both until the second has superseded the first
        return real_draft(cache, options, project, task)

    def recorded_show(self: ReportsPage, options: ReportOptions, draft: Draft) -> None:
        shown.append(options)
        real_show(self, options, draft)

    monkeypatch.setattr(reports, "draft_work", held_draft)
    monkeypatch.setattr(ReportsPage, "_show_draft", recorded_show)
    first_model, second_model = (a.text() for a in page.facets["models"].menu().actions()[:2])
    choose(page, "models", first_model)
    first = page.update_report()
    page.facets["models"].clear()
    choose(page, "models", second_model)
    second = page.update_report()
    assert isinstance(first, Worker) and isinstance(second, Worker) and page.worker is second
    # Asked while the outcome is delivered: the operations delete a worker soon after.
    ended: list[bool] = []
    first.cancelled.connect(lambda: ended.append(not first.is_running()))

    with qtbot.waitSignal(first.cancelled, timeout=WAIT_MS):
        gate.set()
    complete(qtbot, page)
    assert ended == [True]
    assert [options.filter.models for options in shown] == [frozenset({second_model})]
    assert page.report_options.filter == ResponseFilter(models=frozenset({second_model}))
    assert_shows(page, core_report(demo, page.options()))
    qtbot.waitUntil(lambda: not window.ops._reads, timeout=WAIT_MS)


def assert_stopped(page: ReportsPage) -> None:
    """Stopped with no section finished: the marks stay, the summary says so, Finish offered."""
    name, r, c = pending(page.report)[0]
    assert page.tables[name].text(r, c).endswith(" …")
    sections = len(page.report.sections)
    assert page.summary.text().endswith(f" · intervals and figures stopped: 0 of {sections} "
                                        "sections")
    assert page.stop_button.isHidden() and page.finish_button.isVisible()
    assert {card.text.text() for card in page.findChildren(FigurePlaceholder)} == {
        "Not drawn: Finish draws it"}


def test_stop_leaves_the_marks_and_finish_completes_the_report(window: MainWindow, demo: Path,
                                                               qtbot, held_finishing) -> None:
    gate, order = held_finishing
    page = drafted(window, qtbot)
    qtbot.waitUntil(lambda: order == [0], timeout=WAIT_MS)
    marked, finishing = pending(page.report), page.worker

    page.stop_button.click()
    with qtbot.waitSignal(finishing.cancelled, timeout=WAIT_MS):
        gate.set()
    assert page.worker is None and pending(page.report) == marked
    assert_stopped(page)
    sections = len(page.report.sections)
    assert not page.export_button.isEnabled()

    page.finish_button.click()
    assert page.worker is not None and page.stop_button.isVisible()
    complete(qtbot, page)
    assert sorted(order) == [0] + list(range(sections))  # the stopped one again, then the rest
    assert_shows(page, core_report(demo, page.options()))
    assert page.finish_button.isHidden() and page.export_button.isEnabled()


def test_stop_holds_when_the_project_changes_until_the_bar_does(window: MainWindow, demo: Path,
                                                               qtbot, held_finishing) -> None:
    gate, order = held_finishing
    page = drafted(window, qtbot)
    qtbot.waitUntil(lambda: order == [0], timeout=WAIT_MS)
    page.stop_button.click()
    gate.set()
    qtbot.waitUntil(lambda: page.worker is None, timeout=WAIT_MS)
    before = graded_by(page, "expert-1")

    for criterion in PREFS.criteria:
        assert window.ops.write(lambda project, key=criterion.key: scores.set_score(
            project, "expert-1", UNGRADED, key, 1))
    wait_for(qtbot, page.worker, "finished", WAIT_MS)  # the page drafts the change by itself
    qtbot.wait(300)  # nothing more is started
    assert graded_by(page, "expert-1") == {judge: n + 1 for judge, n in before.items()}
    assert page.worker is None and order == [0] and pending(page.report)
    assert_stopped(page)

    choose(page, "models", page.facets["models"].menu().actions()[0].text())
    qtbot.waitUntil(lambda: page.worker is not None and page.stop_button.isVisible(),
                    timeout=WAIT_MS)  # a report the user asks for is finished
    complete(qtbot, page)
    assert_shows(page, core_report(demo, page.options()))
    assert page.finish_button.isHidden() and "intervals" not in page.summary.text()


def test_the_keyboard_goes_from_stop_to_finish_and_stays_in_a_finished_section(
        window: MainWindow, qtbot, held_finishing) -> None:
    gate, order = held_finishing
    page = drafted(window, qtbot)
    qtbot.waitUntil(lambda: order == [0], timeout=WAIT_MS)
    window.activateWindow()  # keys go to the active window (none may be, without a manager)
    page.stop_button.setFocus()
    qtbot.waitUntil(page.stop_button.hasFocus, timeout=10_000)

    qtbot.keyClick(page.stop_button, Qt.Key.Key_Space)
    assert page.stop_button.isHidden() and page.finish_button.hasFocus()
    qtbot.keyClick(page.finish_button, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: order == [0, 0], timeout=WAIT_MS)  # the section on show again
    table = page.tabs.widget(0).widget().findChild(ReportTable)
    table.setFocus()
    assert table.hasFocus()
    gate.set()
    qtbot.waitUntil(lambda: 0 not in page._unfinished, timeout=WAIT_MS)
    assert page.tabs.hasFocus()  # not lost with the table it replaced
    complete(qtbot, page)


def test_finishing_pauses_while_another_page_is_shown(window: MainWindow, demo: Path, qtbot,
                                                      held_finishing) -> None:
    gate, order = held_finishing
    page = drafted(window, qtbot)
    qtbot.waitUntil(lambda: order == [0], timeout=WAIT_MS)
    paused = page.worker

    window.grade_action.trigger()
    window.reports_action.trigger()  # back before the paused section has stopped
    with qtbot.waitSignal(paused.cancelled, timeout=WAIT_MS):
        gate.set()
    qtbot.waitUntil(lambda: page.worker is not None, timeout=WAIT_MS)  # it goes on

    window.grade_action.trigger()
    qtbot.waitUntil(lambda: page.worker is None, timeout=WAIT_MS)
    qtbot.wait(300)
    assert page.worker is None and not page.complete  # nothing while hidden
    window.reports_action.trigger()
    complete(qtbot, page)
    assert_shows(page, core_report(demo, page.options()))


def test_closing_the_window_ends_the_section_being_finished(window: MainWindow, qtbot,
                                                            held_finishing) -> None:
    gate, order = held_finishing
    page = drafted(window, qtbot)
    qtbot.waitUntil(lambda: order == [0], timeout=WAIT_MS)
    finishing = page.worker
    threading.Timer(0.2, gate.set).start()  # it is busy a while yet when the window closes
    window.close()
    assert not finishing.is_running()  # it reads no project: the page, not the operations


def test_a_filter_change_after_a_new_grade_shows_the_new_grade(window: MainWindow, demo: Path,
                                                               qtbot) -> None:
    page = shown_report(window, qtbot)
    (model,) = window.ops.project.conn.execute("SELECT model FROM responses WHERE id = ?",
                                               (UNGRADED,)).fetchone()
    filtered = ReportOptions(ResponseFilter(models=frozenset({model})), page.options().rater)
    before = graded_in(core_report(demo, filtered), "expert-1")
    for criterion in PREFS.criteria:
        assert window.ops.write(lambda project, key=criterion.key: scores.set_score(
            project, "expert-1", UNGRADED, key, 1))

    choose(page, "models", model)
    qtbot.waitUntil(lambda: page.report_options == filtered, timeout=WAIT_MS)
    assert graded_by(page, "expert-1") == {judge: n + 1 for judge, n in before.items()}
    complete(qtbot, page)
    assert_shows(page, core_report(demo, filtered))


def test_export_writes_html_csv_and_json(window: MainWindow, tmp_path: Path, qtbot) -> None:
    page = shown_report(window, qtbot)
    gate = threading.Event()
    held = window.ops.run("Holding", lambda project, task: gate.wait(WAIT_MS / 1000),
                          progress_dialog=False)
    assert not page.export_button.isEnabled()  # one long run at a time
    assert page.export_button.toolTip() == "Wait for the work under way to finish"
    with qtbot.waitSignal(held.finished, timeout=WAIT_MS):
        gate.set()
    assert page.export_button.isEnabled()
    out = tmp_path / "out"
    dialog = ExportReportDialog(out, page)
    assert all(box.isChecked() for box in dialog.formats.values())
    dialog.accept()

    wait_for(qtbot, page.start_export(dialog.request()), "finished", WAIT_MS)
    assert (out / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert {path.stem for path in (out / "csv").glob("*.csv")} == {
        table.name for table in page.report.tables()}
    assert (out / "report.json").stat().st_size > 0
    message = window.statusBar().currentMessage()
    assert message.startswith(f"Report written to {out}: report.html, csv/ (")
    assert message.endswith("report.json")


def test_the_export_dialog_wants_a_folder_and_a_format(tmp_path: Path, qtbot) -> None:
    dialog = ExportReportDialog(tmp_path / "out")
    qtbot.addWidget(dialog)
    for box in dialog.formats.values():
        box.setChecked(False)
    dialog.accept()
    assert dialog.error.text() == "Tick at least one format."
    dialog.formats["json"].setChecked(True)
    dialog.folder.edit.setText(str(tmp_path / "missing" / "out"))
    dialog.accept()
    assert "does not exist" in dialog.error.text()
    dialog.folder.edit.setText(str(tmp_path / "out"))
    dialog.accept()
    assert dialog.request() == reports.ReportExport(tmp_path / "out", ("json",))


def test_a_report_the_core_refuses_says_why_and_the_one_shown_is_finished(
        window: MainWindow, qtbot, errors: list[str]) -> None:
    page = drafted(window, qtbot)
    before, options = page.report, page.report_options
    page.rater.setCurrentText("expert-2")
    choose(page, "graders", "expert-1")  # leaves expert-2 out, so there is nothing to analyse
    wait_for(qtbot, page.update_report(), "failed", WAIT_MS)

    assert len(errors) == 1 and "no grades by 'expert-2'" in errors[0]
    assert errors[0].startswith("The report could not be computed. The report shown is unchanged.")
    assert page.report.settings is before.settings and page.report_options == options
    assert page.worker is not None  # the report shown goes on being finished
    complete(qtbot, page)
    assert page.report_options == options and "no filter" in page.summary.text()
    assert len(errors) == 1

    grader = next(a for a in page.facets["graders"].menu().actions() if a.text() == "expert-1")
    grader.setChecked(False)
    grader.setChecked(True)  # the same choice again tries again
    qtbot.waitUntil(lambda: len(errors) == 2, timeout=WAIT_MS)
    assert page.report.settings is before.settings and page.report_options == options


def test_a_section_that_cannot_be_finished_says_why_once_and_keeps_its_marks(
        window: MainWindow, qtbot, monkeypatch, errors: list[str]) -> None:
    def broken(draft: Draft, index: int, project: None, task: Task) -> Section:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(reports, "finish_work", broken)
    page = drafted(window, qtbot)
    wait_for(qtbot, page.worker, "failed", WAIT_MS)
    qtbot.wait(200)  # nothing more is tried
    assert len(errors) == 1 and "is full; free some space and try again" in errors[0]
    assert errors[0].startswith("The intervals and figures still marked could not be computed")
    assert page.worker is None and pending(page.report) and page.finish_button.isVisible()
    assert "stopped: 0 of" in page.summary.text() and not page.export_button.isEnabled()


def graded_in(report: Report, grader: str) -> dict[str, int]:
    """Per judge, how many responses ``report`` compares with ``grader``'s totals."""
    table = next(t for t in report.tables() if t.name == "total_score")
    judge, reference, n = (table.columns.index(name) for name in ("Judge", "Reference", "n"))
    return {row[judge]: row[n] for row in table.rows if row[reference] == grader}


def graded_by(page: ReportsPage, grader: str) -> dict[str, int]:
    """Per judge, how many responses the page's report compares with ``grader``'s totals."""
    view = page.tables["total_score"]
    columns = list(view.titles)
    judge, reference, n = (columns.index(name) for name in ("Judge", "Reference", "n"))
    return {view.text(r, judge): int(view.text(r, n).replace(",", ""))
            for r in range(view.rowCount()) if view.text(r, reference) == grader}


def test_a_grade_given_on_the_grade_page_is_in_the_report_when_it_is_shown_again(
        window: MainWindow, demo: Path, qtbot) -> None:
    page = shown_report(window, qtbot)
    before = graded_by(page, "expert-1")
    assert before and page.report_options == page.options()
    # Keys go to the active window; without a window manager (Xvfb) none may be active.
    window.activateWindow()

    window.grade_action.trigger()
    grading = window.grading
    qtbot.waitUntil(lambda: grading.panel.hasFocus(), timeout=10_000)
    assert grading.select(UNGRADED)
    press(qtbot, window, *["1"] * len(grading.item.rubric.criteria))
    assert grading.item.complete

    qtbot.keyClick(QApplication.focusWidget() or window, Qt.Key.Key_4,
                   Qt.KeyboardModifier.ControlModifier)  # no F5: showing the page is enough
    assert window.pages.current is page
    wait_for(qtbot, page.worker, "finished", WAIT_MS)  # the draft has every count already
    assert graded_by(page, "expert-1") == {judge: n + 1 for judge, n in before.items()}
    complete(qtbot, page)
    assert_shows(page, core_report(demo, page.options()))


def test_a_change_during_a_long_run_is_reported_at_once(window: MainWindow, qtbot) -> None:
    page = drafted(window, qtbot)
    before = graded_by(page, "expert-1")
    gate = threading.Event()
    held = window.ops.run("Holding", lambda project, task: gate.wait(WAIT_MS / 1000),
                          progress_dialog=False)
    assert held is not None
    for criterion in PREFS.criteria:
        assert window.ops.write(lambda project, key=criterion.key: scores.set_score(
            project, "expert-1", UNGRADED, key, 1))
    assert page.worker is not None and page.worker is not held and page.drafting

    wait_for(qtbot, page.worker, "finished", WAIT_MS)
    assert graded_by(page, "expert-1") == {judge: n + 1 for judge, n in before.items()}
    assert held.is_running()
    with qtbot.waitSignal(held.finished, timeout=WAIT_MS):
        gate.set()


def test_an_unavailable_estimate_reads_na_with_its_reason_at_hand(window: MainWindow,
                                                                   qtbot) -> None:
    page = drafted(window, qtbot)  # the draft has it already: an interval cannot change that
    table = next(t for t in page.report.tables() if t.name == "expert_agreement")
    column = table.columns.index("Krippendorff α")
    row = next(r for r, cells in enumerate(table.rows) if cells[column].value is None)
    item = page.tables["expert_agreement"].item(row, column)
    assert item.text() == "n/a" and table.text(row, column).startswith("n/a (")
    assert item.toolTip() == table.rows[row][column].reason


def test_starting_the_app_loads_no_report_machinery() -> None:
    # The report builder needs pandas, scipy and matplotlib (over a second to import), a judge
    # run the anthropic client; the app loads them when first needed, never at start-up. The
    # answer checker's sympy and pint are imported only by its worker processes, never here;
    # the embedding stack (ONNX Runtime, tokenizers, sentence-transformers, torch) only when an
    # audit runs.
    import subprocess
    import sys

    heavy = ("pandas", "scipy", "matplotlib", "statsmodels", "sklearn", "krippendorff",
             "anthropic", "sympy", "pint", "onnxruntime", "tokenizers",
             "sentence_transformers", "torch")
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, physgrade_ui.main_window; "
         f"print(' '.join(m for m in {heavy!r} if m in sys.modules))"],
        capture_output=True, text=True, check=True).stdout.split()
    assert loaded == []


def test_the_fold_threshold_changes_the_tables_shown_and_is_kept_for_the_project(
        window: MainWindow, demo: Path, qtbot) -> None:
    """expert-2 graded 50 demo responses: under 60 grades, the tables show them as "others",
    the report kept for export still has their rows, and the project keeps the threshold."""
    from physgrade_ui.preferences import REPORT_MIN_GRADES

    page = shown_report(window, qtbot)
    assert page.min_grades.value() == 10 and page.report.settings["folded"] == {}
    page.min_grades.setValue(60)
    qtbot.waitUntil(lambda: page.report_options is not None
                    and page.report_options.min_grades == 60, timeout=WAIT_MS)
    complete(qtbot, page)
    assert page.report.settings["folded"]["graders"] == ["expert-2"]
    view = page.tables["total_score"]
    references = {view.text(r, 1) for r in range(view.rowCount())}
    assert "others (1 grader, 50 grades)" in references and "expert-2" not in references
    kept = next(t for t in page.report.tables() if t.name == "total_score")
    assert "expert-2" in {row[1] for row in kept.rows}
    assert_shows(page, core_report(demo, page.options()))
    assert REPORT_MIN_GRADES.get(demo) == "60"
