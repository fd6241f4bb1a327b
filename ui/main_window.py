"""The main window: menus, the page navigation, and the project the pages read from.

The window owns one :class:`Project` connection for reading on the GUI thread; imports and
exports run on a :class:`~physgrade_ui.workers.Worker` with their own connection, after which
the pages are refreshed from the core's read models.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (QDialog, QFileDialog, QHBoxLayout, QLabel, QListWidget,
                               QListWidgetItem, QMainWindow, QMessageBox, QStackedWidget, QWidget)

import physgrade
from physgrade.importer import ImportResult
from physgrade.judge.runner import RunSummary
from physgrade.project import Project, ProjectError
from physgrade.grading import graders
from physgrade.queries import QuestionDetail, project_info, question_detail, question_rows
from physgrade_ui import grader, recent, transfer
from physgrade_ui.audit import AuditPage
from physgrade_ui.bloom import BloomPage
from physgrade_ui.duplicates import DuplicatesPage
from physgrade_ui.help_overlay import HelpOverlay
from physgrade_ui.judge_dialog import RunJudgeDialog
from physgrade_ui.overview import OverviewPage
from physgrade_ui.progress import SingleRun
from physgrade_ui.questions import QuestionsPage
from physgrade_ui.reports import ReportsPage
from physgrade_ui.welcome import WelcomePage
from physgrade_ui.workbench import GradingPage
from physgrade_ui.workers import Operation, Worker

PROJECT_FILTER = "physgrade projects (*.physgrade);;All files (*)"
PAGES = ("Overview", "Grade", "Questions", "Reports", "Duplicates", "Audit", "Bloom")
GRADE_PAGE = PAGES.index("Grade")


class MainWindow(QMainWindow):
    """The app's one window, on a project at ``path`` or on the empty state."""

    def __init__(self, path: Path | None = None) -> None:
        super().__init__()
        self.project: Project | None = None
        self.runs = SingleRun(self, self.statusBar().showMessage)
        self.resize(1440, 900)
        self._make_actions()
        self._make_menus()

        self.navigation = QListWidget()
        self.navigation.setObjectName("navigation")
        for page in PAGES:
            # An explicit height: the view's lazy layout can ignore stylesheet padding at first.
            QListWidgetItem(page, self.navigation).setSizeHint(QSize(0, 40))
        self.navigation.setFixedWidth(150)
        self.overview = OverviewPage()
        self.grading = GradingPage()
        self.questions = QuestionsPage(self._question_detail)
        self.reports = ReportsPage()
        self.duplicates = DuplicatesPage()
        self.audit = AuditPage()
        self.bloom = BloomPage()
        self.pages = QStackedWidget()
        for page in (self.overview, self.grading, self.questions, self.reports, self.duplicates,
                     self.audit, self.bloom):
            self.pages.addWidget(page)
        self.grading.status.connect(self._status)
        self.reports.status.connect(self.statusBar().showMessage)
        self.duplicates.status.connect(self.statusBar().showMessage)
        self.audit.status.connect(self.statusBar().showMessage)
        self.bloom.status.connect(self._status)
        self.bloom.ask_annotator.connect(self.choose_grader)
        self.grading.progress.connect(self._show_progress)
        self.progress_label = QLabel()
        self.statusBar().addPermanentWidget(self.progress_label)
        self.help = HelpOverlay(self)
        self.grader_dialog: grader.GraderDialog | None = None
        self._stale: set[QWidget] = set()
        self.navigation.currentRowChanged.connect(self._page_chosen)
        self.navigation.setCurrentRow(GRADE_PAGE)

        workspace = QWidget()
        layout = QHBoxLayout(workspace)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.navigation)
        layout.addWidget(self.pages, 1)
        self.welcome = WelcomePage(self.new_action, self.open_action)
        self.screens = QStackedWidget()
        self.screens.addWidget(self.welcome)
        self.screens.addWidget(workspace)
        self.setCentralWidget(self.screens)

        self._fill_recent_menu()
        self._show_project_state()
        if path is not None:
            self.open_project(path)

    # -- actions and menus -------------------------------------------------------------------

    def _action(self, text: str, shortcut: QKeySequence | str, slot: Callable[[], Any],
                needs_project: bool = False) -> QAction:
        action = QAction(text, self)
        action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(slot)
        action.setProperty("needs_project", needs_project)
        self.addAction(action)  # shortcuts work even while the menu bar is hidden
        return action

    def _make_actions(self) -> None:
        keys = QKeySequence.StandardKey
        self.new_action = self._action("&New Project…", keys.New, self.new_project)
        self.open_action = self._action("&Open Project…", keys.Open, self.choose_project)
        self.import_action = self._action("&Import…", "Ctrl+I", self.import_data, True)
        self.export_action = self._action("&Export…", "Ctrl+E", self.export_data, True)
        self.quit_action = self._action("&Quit", "Ctrl+Q", self.close)
        self.overview_action = self._action("&Overview", "Ctrl+1", partial(self.show_page, 0),
                                            True)
        self.grade_action = self._action("&Grade", "Ctrl+2", partial(self.show_page, GRADE_PAGE),
                                         True)
        self.questions_action = self._action("&Questions", "Ctrl+3", partial(self.show_page, 2),
                                             True)
        self.reports_action = self._action("&Reports", "Ctrl+4", partial(self.show_page, 3), True)
        self.duplicates_action = self._action("&Duplicates", "Ctrl+5",
                                              partial(self.show_page, 4), True)
        self.audit_action = self._action("&Audit", "Ctrl+6", partial(self.show_page, 5), True)
        self.bloom_action = self._action("&Bloom labels", "Ctrl+7", partial(self.show_page, 6),
                                         True)
        self.grader_action = self._action("Change &Grader…", "Ctrl+G", self.choose_grader, True)
        self.judge_action = self._action("&Run judge…", "Ctrl+Shift+J", self.run_judge, True)
        self.filter_action = self._action("&Search", keys.Find, self.focus_filter, True)
        self.refresh_action = self._action("&Refresh", keys.Refresh, self.refresh, True)
        self.shortcuts_action = self._action("&Keyboard Shortcuts", "F1", self.show_shortcuts)
        self.help_key = self._action("Keyboard Shortcuts", "?", self.show_shortcuts)
        self.about_action = self._action("&About physgrade", "Ctrl+Shift+F1", self.show_about)

    def _make_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        file_menu.addActions([self.new_action, self.open_action])
        self.recent_menu = file_menu.addMenu("Open &Recent")
        file_menu.addSeparator()
        file_menu.addActions([self.import_action, self.export_action])
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        view_menu = self.menuBar().addMenu("&View")
        view_menu.addActions([self.overview_action, self.grade_action, self.questions_action,
                              self.reports_action, self.duplicates_action, self.audit_action,
                              self.bloom_action, self.filter_action])
        view_menu.addSeparator()
        view_menu.addAction(self.refresh_action)
        grading_menu = self.menuBar().addMenu("&Grading")
        grading_menu.addAction(self.grader_action)
        judge_menu = self.menuBar().addMenu("&Judge")
        judge_menu.addAction(self.judge_action)
        help_menu = self.menuBar().addMenu("&Help")
        help_menu.addActions([self.shortcuts_action, self.about_action])

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        for number, path in enumerate(recent.recent_projects(), start=1):
            action = self.recent_menu.addAction(f"&{number}  {path.name}  —  {path.parent}")
            action.setShortcut(QKeySequence(f"Ctrl+Shift+{number}"))
            action.triggered.connect(partial(self.open_project, path))
        if self.recent_menu.isEmpty():
            self.recent_menu.addAction("No recent projects").setEnabled(False)

    def shortcut_rows(self) -> list[tuple[str, str]]:
        """Every window action as (key, what it does), read from the actions so the list
        cannot go stale."""
        return [(action.shortcut().toString(QKeySequence.SequenceFormat.NativeText),
                 action.text().replace("&", "").rstrip("…"))
                for action in self.actions() if action is not self.help_key]

    # -- the project ------------------------------------------------------------------------

    def open_project(self, path: Path) -> bool:
        """Open ``path`` in this window; on failure say why and keep what was open."""
        try:
            project = Project.open(path)
        except ProjectError as exc:
            QMessageBox.warning(self, "Cannot open project", str(exc))
            return False
        self._set_project(project)
        return True

    def choose_project(self) -> None:
        chosen, _ = QFileDialog.getOpenFileName(self, "Open project", "", PROJECT_FILTER)
        if chosen:
            self.open_project(Path(chosen))

    def new_project(self) -> None:
        chosen, _ = QFileDialog.getSaveFileName(self, "New project", "untitled.physgrade",
                                                PROJECT_FILTER)
        if not chosen:
            return
        path = Path(chosen)
        try:
            project = Project.create(path if path.suffix else path.with_suffix(".physgrade"))
        except ProjectError as exc:
            QMessageBox.warning(self, "Cannot create project", str(exc))
            return
        self._set_project(project)

    def _set_project(self, project: Project) -> None:
        if self.project is not None:
            self.grading.close_project()
            self.audit.close_project()
            self.bloom.close_project()
            self.project.close()
        self.project = project
        recent.remember(project.path)
        self._fill_recent_menu()
        self._show_project_state()
        self.show_page(GRADE_PAGE)
        self.refresh()
        if grader.remembered() is None:
            self.choose_grader()

    def _show_project_state(self) -> None:
        has_project = self.project is not None
        self.setWindowTitle(f"physgrade — {self.project.path.name}" if self.project
                            else "physgrade")
        self.screens.setCurrentIndex(1 if has_project else 0)
        for action in self.actions():
            if action.property("needs_project"):
                action.setEnabled(has_project)

    def refresh(self) -> None:
        """Re-read the pages from the project (after an import, or on F5): the page on show
        now, the others when next shown, so opening a large project waits only for one."""
        if self.project is None:
            return
        self._stale = {self.overview, self.grading, self.questions, self.reports,
                       self.duplicates, self.audit, self.bloom}
        self._refresh_page(self.pages.currentWidget())

    def _refresh_page(self, page: QWidget) -> None:
        if page not in self._stale or self.project is None:
            return
        if page is self.grading:
            name = grader.remembered()
            if name is None:
                return  # opened once the grader has said who they are
            self.grading.open(self.project, name)
            self._show_grader(name)
        elif page is self.overview:
            self.overview.show_info(project_info(self.project))
        elif page is self.reports:
            self.reports.open(self.project)
        elif page is self.duplicates:
            self.duplicates.open(self.project)
        elif page is self.audit:
            self.audit.open(self.project, grader.remembered())
        elif page is self.bloom:
            self.bloom.open(self.project, grader.remembered())
        else:
            self.questions.show_rows(question_rows(self.project))
        self._stale.discard(page)

    def _page_chosen(self, index: int) -> None:
        self.pages.setCurrentIndex(index)
        self._refresh_page(self.pages.currentWidget())

    # -- the grader -------------------------------------------------------------------------

    def choose_grader(self) -> None:
        """Ask who is grading (without blocking); the workbench reopens under the new name."""
        if self.grader_dialog is not None:
            return
        known = graders(self.project) if self.project else []
        self.grader_dialog = grader.GraderDialog(known, grader.remembered(), self)
        self.grader_dialog.accepted.connect(self._grader_chosen)
        self.grader_dialog.finished.connect(self._grader_dialog_closed)
        self.grader_dialog.open()

    def _grader_chosen(self) -> None:
        grader.remember(self.grader_dialog.chosen())
        self._stale.update((self.grading, self.audit, self.bloom))
        self._refresh_page(self.pages.currentWidget())

    def _grader_dialog_closed(self) -> None:
        self.grader_dialog = None
        if self.pages.currentWidget() is self.grading:
            QTimer.singleShot(0, self.grading.focus_panel)  # after Qt hands focus back

    def _show_grader(self, name: str) -> None:
        self.setWindowTitle(f"physgrade — {self.project.path.name} — {name}")

    def _show_progress(self, graded: int, total: int) -> None:
        name = grader.remembered() or ""
        self.progress_label.setText(f"{name}: {graded:,} of {total:,} graded in this view  ")

    def _status(self, message: str) -> None:
        self.statusBar().showMessage(message, 6000)

    def _question_detail(self, question_id: str) -> QuestionDetail | None:
        return question_detail(self.project, question_id) if self.project else None

    # -- the judge --------------------------------------------------------------------------

    def run_judge(self) -> RunJudgeDialog:
        """The Run judge dialog, window-modal but not blocking (so tests and the event loop
        go on); each finished run re-reads the pages."""
        assert self.project is not None
        dialog = RunJudgeDialog(self.project, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.judged.connect(self._judged)
        dialog.open()
        return dialog

    def _judged(self, summary: RunSummary) -> None:
        self.statusBar().showMessage(f"Judge {summary.plan.rater}: {summary.done:,} verdicts "
                                     "stored", 6000)
        self.refresh()

    # -- navigation -------------------------------------------------------------------------

    def show_page(self, index: int) -> None:
        self.navigation.setCurrentRow(index)

    def focus_filter(self) -> None:
        """The search of the page on show (the grading queue's, or the question list's)."""
        if self.pages.currentWidget() is self.grading:
            self.grading.focus_search()
        else:
            self.show_page(PAGES.index("Questions"))
            self.questions.focus_filter()

    # -- import and export ------------------------------------------------------------------

    def import_data(self) -> None:
        dialog = transfer.ImportDialog(self)
        if dialog.exec() == QDialog.DialogCode.Accepted:
            self.start_import(dialog.request())

    def export_data(self) -> None:
        dialog = transfer.ExportDialog(self)
        if dialog.exec() == QDialog.DialogCode.Accepted:
            self.start_export(dialog.request())

    def start_import(self, request: transfer.ImportRequest) -> Worker | None:
        assert self.project is not None
        return self._run("Import", partial(transfer.import_into, self.project.path, request),
                         self._imported, "Nothing was changed.")

    def start_export(self, request: transfer.ExportRequest) -> Worker | None:
        assert self.project is not None
        return self._run("Export", partial(transfer.export_from, self.project.path, request),
                         partial(self._exported, request), "The project is unchanged.")

    def _run(self, what: str, operation: Operation, on_finished: Callable[[Any], None],
             unchanged: str) -> Worker | None:
        """Run a core operation with progress; report failure and cancellation the same way."""
        return self.runs.start(f"{what}ing", operation, on_finished,
                               f"{what} failed. {unchanged}", f"{what} cancelled. {unchanged}")

    @property
    def worker(self) -> Worker | None:
        """The import or export under way, if any."""
        return self.runs.worker

    def _imported(self, result: ImportResult) -> None:
        self.statusBar().showMessage(result.summary())
        self.refresh()

    def _exported(self, request: transfer.ExportRequest, count: int) -> None:
        self.statusBar().showMessage(f"Exported {count:,} {request.kind} records to "
                                     f"{request.file}")

    # -- help -------------------------------------------------------------------------------

    def show_shortcuts(self) -> None:
        """The help overlay: the keys of the workbench (or of the Duplicates, Audit or Bloom page
        while it is on show) and the window's, read from the actions."""
        current = self.pages.currentWidget()
        on_show = (current if current in (self.duplicates, self.audit, self.bloom)
                   else self.grading)
        self.help.open([on_show.help_section(), ("Window", self.shortcut_rows())])

    def show_about(self) -> None:
        QMessageBox.about(self, "About physgrade",
                          f"<b>physgrade {physgrade.__version__}</b><p>Grade language-model "
                          "physics solutions with the P-REFS rubric, and audit LLM judges.</p>")

    def closeEvent(self, event: QCloseEvent) -> None:
        """Stop a running import cleanly (it rolls back), and a report under way, before the
        connection goes away."""
        self.runs.stop()
        self.reports.stop()
        self.duplicates.stop()
        self.audit.stop()
        self.bloom.stop()
        self.grading.stop()
        if self.project is not None:
            self.grading.close_project()
            self.audit.close_project()
            self.bloom.close_project()
            self.project.close()
            self.project = None
        event.accept()
