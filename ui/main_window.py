"""The main window: menus, the page navigation, and the one :class:`Operations` the pages share.

The window drives its pages only through :class:`~physgrade_ui.pages.Page`: it opens the project
in them (through the :class:`~physgrade_ui.pages.PageStack`, lazily), and every change a write
makes reaches them through the broadcast of :attr:`Operations.changed`, so no page goes stale.
Only the Grade page is built at start-up; every other page, and the module that makes it, waits
until it is first shown or used, so the first response is on screen sooner.
"""

from __future__ import annotations

from functools import partial
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMenu,
    QMessageBox,
    QStackedWidget,
    QWidget,
)

import physgrade
from physgrade.changes import EVERYTHING
from physgrade.grading import graders
from physgrade.project import Project
from physgrade.team import packs
from physgrade_ui import grader, preferences, recent
from physgrade_ui.help_overlay import HelpOverlay
from physgrade_ui.operations import Operations
from physgrade_ui.pages import Page, PageStack
from physgrade_ui.welcome import WelcomePage
from physgrade_ui.workers import Worker

if TYPE_CHECKING:  # imported where used: the dialogs' modules are not needed at start-up
    from physgrade.importer import ImportResult
    from physgrade.judge.runner import RunSummary
    from physgrade.team.packs import PackOrigin
    from physgrade_ui import transfer
    from physgrade_ui.answers_dialog import AnswerCheckDialog, AnswerRun
    from physgrade_ui.judge_dialog import RunJudgeDialog
    from physgrade_ui.refine_dialog import RefineJudgeDialog
    from physgrade_ui.settings_dialog import SettingsDialog

PROJECT_FILTER = "physgrade projects (*.physgrade);;All files (*)"
#: the window's size until the user has made it their own
DEFAULT_SIZE = QSize(1440, 900)

#: The pages in the navigation's order (Ctrl+1…): each one's title, and the module of
#: physgrade_ui and the class that build it (imported when the page is first needed).
PAGES = (("Overview", "overview", "OverviewPage"), ("Grade", "workbench", "GradingPage"),
         ("Questions", "questions", "QuestionsPage"), ("Reports", "reports", "ReportsPage"),
         ("Duplicates", "duplicates", "DuplicatesPage"), ("Audit", "audit", "AuditPage"),
         ("Bloom labels", "bloom", "BloomPage"), ("Adjudicate", "adjudicate", "AdjudicatePage"))
OVERVIEW, GRADE, QUESTIONS, REPORTS, DUPLICATES, AUDIT, BLOOM, ADJUDICATE = range(len(PAGES))


class _PageAttribute:
    """A page as an attribute of the window (``window.questions``), built on first use."""

    def __init__(self, index: int) -> None:
        self.index = index

    def __get__(self, window: MainWindow, owner: type) -> Any:
        return window.pages.page(self.index)


class MainWindow(QMainWindow):
    """The app's one window, on a project at ``path`` or on the empty state."""

    overview = _PageAttribute(OVERVIEW)
    grading = _PageAttribute(GRADE)
    questions = _PageAttribute(QUESTIONS)
    reports = _PageAttribute(REPORTS)
    duplicates = _PageAttribute(DUPLICATES)
    audit = _PageAttribute(AUDIT)
    bloom = _PageAttribute(BLOOM)
    adjudicate = _PageAttribute(ADJUDICATE)

    def __init__(self, path: Path | None = None) -> None:
        super().__init__()
        self.ops = Operations(self)
        #: where the open project came from, when it is a grader's pack
        self.pack: PackOrigin | None = None
        if not self.restoreGeometry(preferences.WINDOW_GEOMETRY.get()):
            # never larger than the screen: a 1280×800 laptop gets all of it
            self.resize(DEFAULT_SIZE.boundedTo(self.screen().availableGeometry().size()))
        self.pages = PageStack([(title, partial(self._build_page, module, name))
                                for title, module, name in PAGES])
        self._make_actions()
        self._make_menus()
        self.restoreState(preferences.WINDOW_STATE.get())

        self.navigation = QListWidget()
        self.navigation.setObjectName("navigation")
        for title in self.pages.titles:
            # An explicit height: the view's lazy layout can ignore stylesheet padding at first.
            QListWidgetItem(title, self.navigation).setSizeHint(QSize(0, 40))
        self.navigation.setFixedWidth(150)
        self.navigation.currentRowChanged.connect(partial(self.pages.show_page, focus=False))
        self.pages.currentChanged.connect(self.navigation.setCurrentRow)

        self.ops.said.connect(self.statusBar().showMessage)
        # A page's message is about that page: it goes when another page is shown.
        self.pages.switched.connect(self.statusBar().clearMessage)
        self.ops.changed.connect(self.pages.broadcast)
        self.ops.project_changed.connect(self._project_changed)
        self.ops.ask_person.connect(self.choose_grader)
        self.help = HelpOverlay(self)
        self.grader_dialog: grader.GraderDialog | None = None
        self.pages.setCurrentIndex(GRADE)  # built already: its actions are in the menus

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

    @property
    def project(self) -> Project | None:
        """The open project (the window's connection, for reads on the GUI thread)."""
        return self.ops.project

    def _build_page(self, module: str, name: str) -> Page:
        """A page, its module imported now (a page not shown costs nothing at start-up)."""
        return getattr(import_module(f"physgrade_ui.{module}"), name)(self.ops)

    # -- actions and menus -------------------------------------------------------------------

    def _action(self, text: str, shortcut: QKeySequence | QKeySequence.StandardKey | str,
                slot: Callable[[], object], needs_project: bool = False) -> QAction:
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
        self.settings_action = self._action("&Settings…", "Ctrl+,", self.open_settings)
        self.assign_action = self._action("&Assign Responses…", "Ctrl+Shift+A",
                                          self.assign_responses, True)
        self.packs_action = self._action("Make Grader &Packs…", "Ctrl+Shift+P",
                                         self.make_grader_packs, True)
        self.merge_action = self._action("&Merge Packs…", "Ctrl+Shift+M", self.merge_packs, True)
        self.conflicts_action = self._action("Merge &Conflicts…", "Ctrl+Shift+K",
                                             self.show_conflicts, True)
        #: Ctrl+1… shows each page, in the navigation's order
        self.page_actions = [self._action(f"&{title}", f"Ctrl+{number}",
                                          partial(self.show_page, number - 1), True)
                             for number, title in enumerate(self.pages.titles, start=1)]
        (self.overview_action, self.grade_action, self.questions_action, self.reports_action,
         self.duplicates_action, self.audit_action, self.bloom_action,
         self.adjudicate_action) = self.page_actions
        self.grader_action = self._action(grader.CHANGE_ACTION, grader.CHANGE_KEY,
                                          self.choose_grader, True)
        self.estimation_action = self._action("Draw &Estimation Sample…", "Ctrl+Shift+E",
                                              self.draw_estimation_sample, True)
        self.judge_action = self._action("&Run judge…", "Ctrl+Shift+J", self.run_judge, True)
        self.refine_action = self._action("Re&fine judge…", "Ctrl+Shift+R", self.refine_judge,
                                          True)
        self.answers_action = self._action("Check final &answers with a model…", "Ctrl+Shift+L",
                                           self.check_answers, True)
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
        file_menu.addActions([self.assign_action, self.packs_action, self.merge_action,
                              self.conflicts_action])
        file_menu.addSeparator()
        file_menu.addActions([self.settings_action, self.quit_action])
        view_menu = self.menuBar().addMenu("&View")
        view_menu.addActions(self.page_actions + [self.filter_action])
        view_menu.addSeparator()
        view_menu.addAction(self.refresh_action)
        # The Grade page's own entries (its layout and zoom, its preferences) where a grader
        # looks for them.
        view_menu.addSeparator()
        view_menu.addActions(self.grading.view_actions)
        grading_menu = self.menuBar().addMenu("&Grading")
        grading_menu.addAction(self.grader_action)
        grading_menu.addSeparator()
        grading_menu.addActions(self.grading.menu_actions)
        grading_menu.addSeparator()
        grading_menu.addAction(self.estimation_action)
        judge_menu = self.menuBar().addMenu("&Judge")
        judge_menu.addActions([self.judge_action, self.refine_action])
        judge_menu.addSeparator()
        judge_menu.addAction(self.answers_action)
        help_menu = self.menuBar().addMenu("&Help")
        help_menu.addActions([self.shortcuts_action, self.about_action])
        for menu in self.menuBar().findChildren(QMenu):
            menu.aboutToHide.connect(self._menu_closed)

    def _menu_closed(self) -> None:
        """Once a menu has closed (Esc, a click elsewhere, an entry chosen), the keyboard goes
        back to the page: after Esc Qt leaves it in the menu bar, which swallows the next key
        (a score the grader typed would be lost)."""
        QTimer.singleShot(0, self._keyboard_to_page)

    def _keyboard_to_page(self) -> None:
        # Only from the menu bar: an entry may have put the keyboard somewhere on purpose (the
        # search field), and another menu may be open now (the arrow keys move along the bar).
        if QApplication.focusWidget() is self.menuBar() and not QApplication.activePopupWidget():
            self.pages.focus_current()

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
        return self.ops.open(path)

    def choose_project(self) -> None:
        chosen, _ = QFileDialog.getOpenFileName(self, "Open project", "", PROJECT_FILTER)
        if chosen:
            self.open_project(Path(chosen))

    def new_project(self) -> None:
        chosen, _ = QFileDialog.getSaveFileName(self, "New project", "untitled.physgrade",
                                                PROJECT_FILTER)
        if chosen:
            path = Path(chosen)
            self.ops.open(path if path.suffix else path.with_suffix(".physgrade"), create=True)

    def _project_changed(self, project: Project | None) -> None:
        """The operations opened (or closed) a project: every page shows it from now on, for
        the project's own person (:func:`~physgrade_ui.grader.person_for`). A grader's pack is
        graded as its grader, so its Grade page's queue is their assignment."""
        self.pack = packs.origin(project) if project is not None else None
        person = grader.person_for(project, self.pack) if project is not None else None
        if project is not None:
            recent.remember(project.path)
            self._fill_recent_menu()
        self.pages.set_context(project, person)
        self._show_project_state()
        if project is not None:
            self.show_page(GRADE)
            if self.pack is not None:
                self._say_pack_grader()
            elif person is None:
                self.choose_grader()

    def _show_project_state(self) -> None:
        has_project = self.project is not None
        name = self.pages.person
        title = "physgrade"
        if self.project is not None:
            title += f" — {self.project.path.name}"
            if self.pack is not None:
                title += f" — pack for {self.pack.grader}"
            elif name:
                title += f" — {name}"
        self.setWindowTitle(title)
        self.screens.setCurrentIndex(1 if has_project else 0)
        for action in self.actions():
            if action.property("needs_project"):
                action.setEnabled(has_project)

    def refresh(self) -> None:
        """Re-read every page (F5), e.g. after another program changed the project file; the
        page on show now, the others when next shown."""
        if self.project is not None:
            self.pages.broadcast(EVERYTHING)

    # -- the grader -------------------------------------------------------------------------

    def choose_grader(self) -> None:
        """Ask who grades the open project (without blocking); the pages reopen under the new
        name. A pack is always graded as its grader: it says so instead."""
        if self.project is None or self.grader_dialog is not None:
            return
        if self.pack is not None:
            self._say_pack_grader()
            return
        self.grader_dialog = grader.GraderDialog(self.project.path, graders(self.project),
                                                 self.pages.person, self)
        self.grader_dialog.accepted.connect(self._grader_chosen)
        self.grader_dialog.finished.connect(self._grader_dialog_closed)
        self.grader_dialog.open()

    def _grader_chosen(self) -> None:
        assert self.grader_dialog is not None
        self._set_grader(self.grader_dialog.chosen())

    def _set_grader(self, name: str) -> None:
        """``name`` grades the open project from now on; the pages reopen under it."""
        assert self.project is not None
        grader.choose(self.project.path, name)
        self.pages.set_context(self.project, name)
        self._show_project_state()

    def open_settings(self) -> SettingsDialog:
        """File ▸ Settings…, window-modal but not blocking; the grader it offers is the open
        project's (a pack's is always its grader's)."""
        from physgrade.answers.tolerance import answer_tolerance
        from physgrade_ui.settings_dialog import SettingsDialog

        offered = self.project if self.pack is None else None
        dialog = SettingsDialog(offered.path if offered else None, self.pages.person,
                                graders(offered) if offered else [], self,
                                answer_tolerance(offered) if offered else None)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self._settings_saved(dialog.request().grader,
                                                             dialog.request().tolerance))
        dialog.open()
        return dialog

    def _settings_saved(self, name: str | None, tolerance: float | None) -> None:
        from physgrade.answers.tolerance import answer_tolerance, set_answer_tolerance

        if (tolerance is not None and self.project is not None and self.pack is None
                and tolerance != answer_tolerance(self.project)):
            # the project's, so every rater's: the pages hear of it (the hint re-checks)
            self.ops.write(partial(set_answer_tolerance, rtol=tolerance), what="answer tolerance")
        if name is not None and name != self.pages.person:
            self._set_grader(name)

    def _say_pack_grader(self) -> None:
        """Its grades merge back into the project under the grader's name: a pack has no other."""
        assert self.pack is not None
        self.ops.say(f"This is {self.pack.grader}'s grader pack: it is always graded as "
                     f"{self.pack.grader} (other projects keep their own names).", 0)

    def _grader_dialog_closed(self) -> None:
        self.grader_dialog = None
        QTimer.singleShot(0, self.pages.focus_current)  # after Qt hands focus back

    # -- the judge --------------------------------------------------------------------------

    def run_judge(self) -> RunJudgeDialog:
        """The Run judge dialog, window-modal but not blocking (so tests and the event loop
        go on); what a run stores reaches the pages through the broadcast."""
        from physgrade_ui.judge_dialog import RunJudgeDialog

        dialog = RunJudgeDialog(self.ops, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.judged.connect(self._judged)
        dialog.open()
        return dialog

    def _judged(self, summary: RunSummary) -> None:
        self.ops.say(f"Judge {summary.plan.rater}: {summary.done:,} verdicts stored")

    def refine_judge(self) -> RefineJudgeDialog:
        """Judge ▸ Refine judge…: the dialog, window-modal but not blocking, like Run judge's;
        it says in the status bar what a run did."""
        from physgrade_ui.refine_dialog import RefineJudgeDialog

        dialog = RefineJudgeDialog(self.ops, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def check_answers(self) -> AnswerCheckDialog:
        """Judge ▸ Check final answers with a model…: the model stage of the final-answer
        check (``physgrade verify --model``), window-modal but not blocking like Run judge's;
        what a run stores reaches the pages through the broadcast."""
        from physgrade_ui.answers_dialog import AnswerCheckDialog

        dialog = AnswerCheckDialog(self.ops, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.checked.connect(self._answers_checked)
        dialog.open()
        return dialog

    def _answers_checked(self, run: AnswerRun) -> None:
        self.ops.say(run.tally)

    # -- navigation -------------------------------------------------------------------------

    def show_page(self, index: int) -> None:
        """Show page ``index`` with the keyboard in it (Ctrl+1…)."""
        self.pages.show_page(index)

    def focus_filter(self) -> None:
        """The search of the page on show, else the question list's."""
        if not self.pages.current.focus_search():
            self.show_page(QUESTIONS)
            QTimer.singleShot(0, self.questions.focus_search)

    # -- import and export ------------------------------------------------------------------

    def import_data(self) -> None:
        from physgrade_ui import transfer

        dialog = transfer.ImportDialog(self)
        if dialog.exec() == QDialog.DialogCode.Accepted:
            self.start_import(dialog.request())

    def export_data(self) -> None:
        from physgrade_ui import transfer

        dialog = transfer.ExportDialog(self)
        if dialog.exec() == QDialog.DialogCode.Accepted:
            self.start_export(dialog.request())

    def start_import(self, request: transfer.ImportRequest) -> Worker | None:
        """Import in the background; an import is all or nothing, so a failure changes nothing."""
        from physgrade_ui import transfer

        return self.ops.run("Importing", partial(transfer.import_into, request), self._imported,
                            changes=lambda result: result.changes,
                            failed="Import failed. Nothing was changed.",
                            cancelled="Import cancelled. Nothing was changed.")

    def start_export(self, request: transfer.ExportRequest) -> Worker | None:
        from physgrade_ui import transfer

        return self.ops.run("Exporting", partial(transfer.export_from, request),
                            partial(self._exported, request),
                            failed="Export failed. The project is unchanged.",
                            cancelled="Export cancelled. The project is unchanged.")

    @property
    def worker(self) -> Worker | None:
        """The long work under way, if any."""
        return self.ops.worker

    def _imported(self, result: ImportResult) -> None:
        self.ops.say(result.summary(), 0)

    def _exported(self, request: transfer.ExportRequest, count: int) -> None:
        self.ops.say(f"Exported {count:,} {request.kind} records to {request.file}", 0)

    # -- team grading -----------------------------------------------------------------------

    def assign_responses(self) -> QDialog | None:
        """File ▸ Assign Responses…: split the responses among graders (a window-modal dialog,
        not blocking)."""
        from physgrade_ui import team

        return team.assign_responses(self.ops, self)

    def make_grader_packs(self) -> QDialog | None:
        from physgrade_ui import team

        return team.make_grader_packs(self.ops, self)

    def merge_packs(self) -> Worker | None:
        from physgrade_ui import team

        return team.merge_packs_from_files(self.ops, self)

    def show_conflicts(self) -> QDialog | None:
        from physgrade_ui import team

        return team.show_conflicts(self.ops, self)

    # -- estimation samples -----------------------------------------------------------------

    def draw_estimation_sample(self) -> None:
        """Grading ▸ Draw Estimation Sample…: the responses experts grade to correct a judge's
        scores (a window-modal dialog, not blocking, once what it offers is read)."""
        from physgrade_ui import estimation

        estimation.draw_sample(self.ops, self, self.grade_estimation_sample)

    def grade_estimation_sample(self, name: str) -> None:
        """The Grade page, its queue showing only the estimation sample ``name``."""
        self.show_page(GRADE)
        self.grading.queue.filter_to("samples", frozenset({name}))

    # -- help -------------------------------------------------------------------------------

    def show_shortcuts(self) -> None:
        """The help overlay: the keys of the page on show (the workbench's for pages without
        keys of their own) and the window's, read from the actions."""
        section = self.pages.current.help_section() or self.grading.help_section()
        self.help.open([section, ("Window", self.shortcut_rows())])

    def show_about(self) -> None:
        QMessageBox.about(self, "About physgrade",
                          f"<b>physgrade {physgrade.__version__}</b><p>Grade language-model "
                          "physics solutions with the P-REFS rubric, and audit LLM judges.</p>")

    def closeEvent(self, event: QCloseEvent) -> None:
        """End the work under way (an import rolls back) before the connection goes away, and
        keep where the window was for the next start."""
        preferences.WINDOW_GEOMETRY.set(self.saveGeometry())
        preferences.WINDOW_STATE.set(self.saveState())
        self.pages.stop()
        self.ops.shut_down()
        event.accept()
