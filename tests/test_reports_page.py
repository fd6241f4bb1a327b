"""The Reports page on the real demo project: the core's report, computed on the worker thread,
filtered from the bar, exported, and kept when an update is cancelled."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication, QPushButton  # noqa: E402

from conftest import press, shot, wait_for  # noqa: E402
from physgrade import scores  # noqa: E402
from physgrade.project import Project  # noqa: E402
import physgrade.report.build  # noqa: E402
from physgrade.report.build import build_report  # noqa: E402
from physgrade.report.model import Report  # noqa: E402
from physgrade.report.options import ReportFilter, ReportOptions  # noqa: E402
from physgrade.rubric import PREFS  # noqa: E402
from physgrade.tasks import Task  # noqa: E402
from physgrade_ui import reports  # noqa: E402
from physgrade_ui.main_window import MainWindow  # noqa: E402
from physgrade_ui.progress import ProgressDialog  # noqa: E402
from physgrade_ui.reports import ExportReportDialog, FigureView, ReportsPage  # noqa: E402

WAIT_MS = 120_000  # a report bootstraps every interval
ROWS_CHECKED = 3

pytestmark = pytest.mark.usefixtures("app_settings")


def shown_report(window: MainWindow, qtbot) -> ReportsPage:
    """The Reports page, once the report it computes on first show is there."""
    window.reports_action.trigger()
    page = window.reports
    wait_for(qtbot, page.worker, "finished", WAIT_MS)
    return page


def core_report(path: Path, options: ReportOptions) -> Report:
    with Project.open(path) as project:
        return build_report(project, options)


def assert_shows(page: ReportsPage, report: Report) -> None:
    """Every table of ``report`` is on the page, its first rows reading as the core writes them."""
    assert [page.tabs.tabText(i) for i in range(page.tabs.count())] == [
        section.tab for section in report.sections]
    assert [page.tabs.tabToolTip(i) for i in range(page.tabs.count())] == [
        section.title for section in report.sections]
    for table in report.tables():
        if not table.rows:
            assert table.name not in page.tables
            continue
        view = page.tables[table.name]
        assert view.rowCount() == len(table.rows), table.name
        for r in range(min(ROWS_CHECKED, len(table.rows))):
            # An estimate that could not be computed reads n/a, with the reason in its tooltip.
            assert [view.item(r, c).text() for c in range(len(table.columns))] == [
                "n/a" if table.text(r, c).startswith("n/a") else table.text(r, c)
                for c in range(len(table.columns))], table.name


def cells(page: ReportsPage) -> dict[str, list[str]]:
    return {name: [view.item(r, c).text() for r in range(view.rowCount())
                   for c in range(view.columnCount())] for name, view in page.tables.items()}


def choose(page: ReportsPage, facet: str, value: str) -> None:
    action = next(a for a in page.facets[facet].menu().actions() if a.text() == value)
    action.setChecked(True)


def is_primary(button: QPushButton) -> bool:
    return button.property("role") == "primary"


def test_the_page_shows_the_cores_report_computed_off_the_gui_thread(
        window: MainWindow, demo: Path, qtbot, monkeypatch) -> None:
    threads: list[threading.Thread] = []
    real_build = physgrade.report.build.build_report

    def recorded_build(project: Project, options: ReportOptions, task: Task) -> Report:
        threads.append(threading.current_thread())
        return real_build(project, options, task)

    monkeypatch.setattr(physgrade.report.build, "build_report", recorded_build)
    page = shown_report(window, qtbot)

    assert threads and threads[0] is not threading.main_thread()
    report = core_report(demo, page.options())
    assert_shows(page, report)
    assert page.summary.text().startswith(f"{report.settings['responses']:,} responses · ")
    assert "no filter" in page.summary.text()
    assert f"analyses for {page.rater.currentText()}" in page.summary.text()
    assert not is_primary(page.update_button) and page.export_button.isEnabled()

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


def test_a_filter_and_update_show_the_filtered_report(window: MainWindow, demo: Path,
                                                     qtbot) -> None:
    page = shown_report(window, qtbot)
    everything = cells(page)
    model = page.facets["models"].menu().actions()[0].text()
    choose(page, "models", model)
    assert is_primary(page.update_button)  # the report shown is not what the bar asks for

    page.update_button.click()
    wait_for(qtbot, page.worker, "finished", WAIT_MS)
    assert not is_primary(page.update_button)
    assert page.options().filter == ReportFilter(models=frozenset({model}))
    report = core_report(demo, page.options())
    assert_shows(page, report)
    assert cells(page) != everything
    assert page.summary.text().startswith(f"{report.settings['responses']:,} responses · ")
    assert f"Model: {model}" in page.summary.text()


def test_export_writes_html_csv_and_json(window: MainWindow, tmp_path: Path, qtbot) -> None:
    page = shown_report(window, qtbot)
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


def test_a_cancelled_update_keeps_the_report_shown(window: MainWindow, qtbot,
                                                   monkeypatch) -> None:
    page = shown_report(window, qtbot)
    before, shown = page.report, cells(page)
    gate = threading.Event()
    real_compute = reports.compute_report

    def held_compute(options: ReportOptions, project: Project, task: Task) -> Report:
        gate.wait(WAIT_MS / 1000)  # hold the worker until the user has pressed Cancel
        return real_compute(options, project, task)

    monkeypatch.setattr(reports, "compute_report", held_compute)
    choose(page, "models", page.facets["models"].menu().actions()[0].text())
    page.update_button.click()
    assert not page.update_button.isEnabled()  # one computation at a time
    dialog = window.findChildren(ProgressDialog)[-1]
    with qtbot.waitSignal(page.worker.cancelled, timeout=WAIT_MS):
        dialog.findChild(QPushButton).click()
        gate.set()

    assert page.report is before and cells(page) == shown
    assert page.worker is None and is_primary(page.update_button)
    assert window.statusBar().currentMessage() == ("Computing the report was cancelled. "
                                                   "The report shown is unchanged.")


def test_a_report_the_core_refuses_says_why_and_keeps_the_one_shown(window: MainWindow, qtbot,
                                                                     errors: list[str]) -> None:
    page = shown_report(window, qtbot)
    before = page.report
    page.rater.setCurrentText("expert-2")
    choose(page, "graders", "expert-1")  # leaves expert-2 out, so there is nothing to analyse
    page.update_button.click()
    wait_for(qtbot, page.worker, "failed", WAIT_MS)

    assert len(errors) == 1 and "no grades by 'expert-2'" in errors[0]
    assert errors[0].startswith("The report could not be computed. The report shown is unchanged.")
    assert page.report is before and is_primary(page.update_button)


def graded_by(page: ReportsPage, grader: str) -> dict[str, int]:
    """Per judge, how many responses the report compares with ``grader``'s totals."""
    view = page.tables["total_score"]
    columns = [view.horizontalHeaderItem(c).text() for c in range(view.columnCount())]
    judge, reference, n = (columns.index(name) for name in ("Judge", "Reference", "n"))
    return {view.item(r, judge).text(): int(view.item(r, n).text().replace(",", ""))
            for r in range(view.rowCount()) if view.item(r, reference).text() == grader}


def test_a_grade_given_on_the_grade_page_is_in_the_report_when_it_is_shown_again(
        window: MainWindow, demo: Path, qtbot) -> None:
    page = shown_report(window, qtbot)
    before = graded_by(page, "expert-1")
    assert before and page.report_options == page.options()
    # Keys go to the active window; without a window manager (Xvfb) the progress dialog that
    # just went leaves none active.
    window.activateWindow()

    window.grade_action.trigger()
    grading = window.grading
    qtbot.waitUntil(lambda: grading.panel.hasFocus(), timeout=10_000)
    assert grading.select("r-0002")  # graded by both judges, not yet by expert-1
    press(qtbot, window, *["1"] * len(grading.item.rubric.criteria))
    assert grading.item.complete

    qtbot.keyClick(QApplication.focusWidget() or window, Qt.Key.Key_4,
                   Qt.KeyboardModifier.ControlModifier)  # no F5: showing the page is enough
    assert window.pages.current is page
    wait_for(qtbot, page.worker, "finished", WAIT_MS)
    assert graded_by(page, "expert-1") == {judge: n + 1 for judge, n in before.items()}
    assert_shows(page, core_report(demo, page.options()))


def test_a_change_during_a_long_run_is_reported_once_the_run_ends(window: MainWindow,
                                                                   qtbot) -> None:
    page = shown_report(window, qtbot)
    before, shown = graded_by(page, "expert-1"), page.report
    gate = threading.Event()
    held = window.ops.run("Holding", lambda project, task: gate.wait(WAIT_MS / 1000),
                          progress_dialog=False)
    assert held is not None and not page.update_button.isEnabled()
    for criterion in PREFS.criteria:  # r-0002: graded by both judges, not yet by expert-1
        assert window.ops.write(lambda project, key=criterion.key: scores.set_score(
            project, "expert-1", "r-0002", key, 1))
    assert page.worker is held and page.report is shown  # one long run at a time

    with qtbot.waitSignal(held.finished, timeout=WAIT_MS):
        gate.set()
    qtbot.waitUntil(lambda: page.worker is not None, timeout=WAIT_MS)
    wait_for(qtbot, page.worker, "finished", WAIT_MS)
    assert graded_by(page, "expert-1") == {judge: n + 1 for judge, n in before.items()}


def test_an_unavailable_estimate_reads_na_with_its_reason_at_hand(window: MainWindow,
                                                                   qtbot) -> None:
    page = shown_report(window, qtbot)
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
