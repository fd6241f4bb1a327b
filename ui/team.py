"""Team grading in the app: assign responses, write grader packs, merge them back, settle
conflicts.

The dialogs only collect choices and show what the core would do; the work is the core's
(:mod:`physgrade.team`), run through the window's :class:`~physgrade_ui.operations.Operations`
like every other: the Assign dialog's preview is a background read of
:func:`physgrade.team.assign.plan`, redone (debounced) whenever an input changes; assigning,
making packs and merging are long runs with progress; settling a conflict is a quick write.
What they change reaches the pages through the broadcast, and the Conflicts dialog re-reads
itself from it too.

A read may end after its dialog was closed: its result is dropped (:func:`while_open`).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Callable, TypeVar

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, QTimer
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QCompleter,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from physgrade.changes import Changes, RecordKind
from physgrade.estimation.sample import samples
from physgrade.grading import graders as known_graders
from physgrade.project import Project, ProjectError
from physgrade.rubric import value_text
from physgrade.selection import NAMED, ResponseFilter, filter_choices
from physgrade.tasks import Task
from physgrade.team import assign, merge, packs
from physgrade.team.assign import AssignmentPlan
from physgrade.team.merge import KEEP_PACK, KEEP_PROJECT, Conflict, MergeResult
from physgrade.team.packs import PackMade
from physgrade_ui import grader
from physgrade_ui.dialogs import fit_to_show, fitted_layout
from physgrade_ui.operations import Operations
from physgrade_ui.widgets import SeedField, SmallTable, label, local_time, named_shortcut
from physgrade_ui.workers import Worker

#: The preview waits for typing to pause this long (milliseconds) before planning again.
PREVIEW_DELAY_MS = 250
DEFAULT_OVERLAP_PERCENT = 20
MAX_PER_GRADER = 1_000_000
PACK_FILTER = "Grader packs (*.physgrade);;All files (*)"
#: The Assign dialog's choice of no estimation sample.
ANY_RESPONSE = "Any response"
#: The titles of a facet's list and of its tab in the preview, with this dialog's Alt keys.
_ALT_TITLES = {"model": ("Mo&dels", "By &model"), "topic": ("&Topics", "By top&ic")}
#: The facets an assignment is narrowed and previewed by: the plan's facet, the ResponseFilter
#: field, the title of its list and of its tab in the preview.
FACETS = tuple((facet, NAMED[facet].key, *_ALT_TITLES[facet]) for facet in assign.FACETS)
#: Refusals of the core's planning: said in the preview, not in a box.
PLAN_REFUSALS = (ValueError, ProjectError)
NO_ASSIGNMENTS = ("Nobody is assigned any responses yet, so there is no grader pack to make. "
                  "Assign them first (File ▸ Assign Responses…).")


def names(text: str) -> tuple[str, ...]:
    """The names in a comma-separated list, trimmed, each once, in the order typed."""
    return tuple(dict.fromkeys(name.strip() for name in text.split(",") if name.strip()))


def while_open(dialog: QDialog, show: Callable[[Any], None]) -> Callable[[Any], None]:
    """``show`` for a background read's outcome, dropped once ``dialog`` is closed (or gone):
    a read may end after the user closed the dialog that asked for it."""
    def deliver(outcome: Any) -> None:
        if isValid(dialog) and dialog.isVisible():
            show(outcome)
    return deliver


# -- the work, on a worker's connection ----------------------------------------------------
# Each is a core call in the shape the operations run: ``work(project, task)``.


@dataclass(frozen=True, slots=True)
class AssignRequest:
    """What the Assign dialog asks for."""

    graders: tuple[str, ...]
    overlap: float
    per_grader: int | None
    seed: int
    #: ResponseFilter field -> the values ticked (none: all)
    chosen: tuple[tuple[str, frozenset[str]], ...]
    #: the estimation sample the responses are taken from (None: any response)
    sample: str | None = None
    #: whether responses a person has already finished grading are handed out too
    include_graded: bool = False

    def report_filter(self) -> ResponseFilter:
        return ResponseFilter.of(dict(self.chosen))


@dataclass(frozen=True, slots=True)
class Preview:
    """A request's plan (which says how many responses each grader had before it)."""

    request: AssignRequest
    plan: AssignmentPlan


def preview(request: AssignRequest, project: Project, task: Task) -> Preview:
    return Preview(request, assign.plan(project, request.graders, request.overlap,
                                        per_grader=request.per_grader, seed=request.seed,
                                        report_filter=request.report_filter(),
                                        sample=request.sample,
                                        include_graded=request.include_graded, task=task))


def apply_plan(plan: AssignmentPlan, project: Project, task: Task) -> Changes:
    return assign.apply(project, plan)


def make_packs(folder: Path, graders: tuple[str, ...], blind: bool, project: Project,
               task: Task) -> tuple[list[PackMade], Changes]:
    return packs.make_packs(project, folder, graders, blind=blind, task=task)


def merge_packs(paths: tuple[Path, ...], project: Project, task: Task) -> MergeResult:
    return merge.merge(project, paths, task)


def read_conflicts(project: Project, task: Task) -> list[Conflict]:
    return merge.open_conflicts(project)


# -- small widgets ---------------------------------------------------------------------------


class NamesCompleter(QCompleter):
    """Completes the name being typed after the last comma of ``edit``'s list of names."""

    def __init__(self, known: list[str], edit: QLineEdit) -> None:
        super().__init__(known, edit)
        self.edit = edit
        self.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        edit.setCompleter(self)

    def splitPath(self, path: str) -> list[str]:
        return [path.rsplit(",", 1)[-1].strip()]

    def pathFromIndex(self, index: QModelIndex | QPersistentModelIndex) -> str:
        typed = self.edit.text()
        head = typed.rsplit(",", 1)[0] + ", " if "," in typed else ""
        return head + super().pathFromIndex(index)


class CheckList(QListWidget):
    """Values to tick (Space ticks the current one), as tall as its rows up to ``rows``;
    ``chosen`` is what is ticked."""

    def __init__(self, values: list[str], checked: bool, parent: QWidget | None = None,
                 texts: dict[str, str] | None = None, rows: int = 8) -> None:
        super().__init__(parent)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)  # ticks, not rows
        for value in values:
            item = QListWidgetItem((texts or {}).get(value, value), self)
            item.setData(Qt.ItemDataRole.UserRole, value)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
        if values:
            self.setCurrentRow(0)
        row = self.sizeHintForRow(0) if values else self.fontMetrics().height() + 4
        self.setFixedHeight(min(max(len(values), 2), rows) * row + 2 * self.frameWidth() + 6)

    def values(self) -> list[str]:
        return [self.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.count())]

    def chosen(self) -> frozenset[str]:
        return frozenset(self.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.count())
                         if self.item(i).checkState() == Qt.CheckState.Checked)

    def ordered(self) -> tuple[str, ...]:
        """The ticked values in the list's order."""
        chosen = self.chosen()
        return tuple(value for value in self.values() if value in chosen)


class CountsTable(SmallTable):
    """A :class:`SmallTable` that scrolls within the room it is given instead of growing (a
    project may have many models: the dialog must still fit the screen)."""

    def __init__(self, headers: list[str], parent: QWidget | None = None) -> None:
        super().__init__(headers, parent)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def show_rows(self, headers: list[str], rows: list[tuple[str | int | float, ...]]) -> None:
        self.setColumnCount(len(headers))
        self.setHorizontalHeaderLabels(headers)
        self.fill(rows)
        self.setMinimumHeight(0)
        self.setMaximumHeight(16_777_215)


def section(text: str, parent: QWidget) -> QLabel:
    title = label(text, "section", parent)
    title.setIndent(0)
    return title


# -- assigning -------------------------------------------------------------------------------


class AssignDialog(QDialog):
    """Graders, overlap, a cap per grader, a seed, a filter and whether graded responses are
    left out; the plan previewed live, per grader and per grader × model or topic; Assign
    stores it."""

    def __init__(self, ops: Operations, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ops = ops
        self.preview: Preview | None = None
        self._assign_when_planned = False
        self.setWindowTitle("Assign Responses")
        project = ops.project
        assert project is not None
        known = known_graders(project)
        choices = filter_choices(project)
        estimation_samples = [stored.name for stored in samples(project)]

        self.graders = QLineEdit(", ".join(assign.assignees(project) or known), self)
        self.graders.setPlaceholderText("Alice, Bob, Carol")
        self.graders.setToolTip("The graders' names, separated by commas")
        NamesCompleter(known, self.graders)
        self.overlap = QSpinBox(self)
        self.overlap.setRange(0, 100)
        self.overlap.setValue(DEFAULT_OVERLAP_PERCENT)
        self.overlap.setSuffix(" %")
        self.overlap.setToolTip("The share of the new responses graded by two people")
        self.per_grader = QSpinBox(self)
        self.per_grader.setRange(0, MAX_PER_GRADER)
        self.per_grader.setSpecialValueText("all")
        self.per_grader.setSuffix(" responses")
        self.per_grader.setGroupSeparatorShown(True)
        self.per_grader.setToolTip("At most this many new responses each (0: all)")
        self.seed = SeedField("Ne&w seed", "The same seed, graders and responses give the same "
                              "split", self)
        for spin in (self.overlap, self.per_grader, self.seed.spin):
            spin.setMinimumWidth(160)
            spin.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        #: ResponseFilter field -> the list of its values to tick
        self.filters = {field: CheckList(getattr(choices, field), False, self)
                        for _facet, field, _list, _tab in FACETS}
        self.sample = QComboBox(self)
        self.sample.addItem(ANY_RESPONSE, None)
        for name in estimation_samples:
            self.sample.addItem(name, name)
        self.sample.setToolTip("Only the responses of an estimation sample: experts grade it "
                               "so that its grades correct a judge's scores")
        self.ungraded_only = QCheckBox("Only responses no one has grad&ed", self)
        self.ungraded_only.setChecked(True)
        self.ungraded_only.setToolTip("Leave out the responses a person has already finished "
                                      "grading (a judge's scores do not count): their work is "
                                      "done, not handed out again")

        form = QFormLayout()
        form.setHorizontalSpacing(14)
        form.setVerticalSpacing(10)
        form.addRow(self._buddy("&Graders", self.graders), self.graders)
        hint = label(f"Known here: {', '.join(known)}" if known else
                     "Separate the names with commas.", "muted", self)
        hint.setWordWrap(True)
        form.addRow("", hint)
        form.addRow(self._buddy("&Overlap", self.overlap), self.overlap)
        form.addRow(self._buddy("&Per grader", self.per_grader), self.per_grader)
        form.addRow(self._buddy("&Seed", self.seed), self.seed)
        lists = QGridLayout()
        lists.setHorizontalSpacing(12)
        lists.setVerticalSpacing(4)
        for column, (_facet, field, title, _tab) in enumerate(FACETS):
            lists.addWidget(self._buddy(title, self.filters[field]), 0, column)
            lists.addWidget(self.filters[field], 1, column, Qt.AlignmentFlag.AlignTop)
        lists.addWidget(label("Tick none to take them all.", "muted", self), 2, 0, 1, 2)
        lists.setRowStretch(3, 1)
        inputs = QVBoxLayout()
        inputs.setSpacing(10)
        inputs.addLayout(form)
        inputs.addWidget(section("Responses", self))
        inputs.addWidget(self.ungraded_only)
        if estimation_samples:  # most projects have none: the dialog stays as it was
            only = QHBoxLayout()
            only.setSpacing(10)
            only.addWidget(self._buddy("Estimation samp&le", self.sample))
            only.addWidget(self.sample, 1)
            inputs.addLayout(only)
        else:
            self.sample.hide()
        inputs.addLayout(lists, 1)

        self.summary = label("", None, self)
        self.summary.setWordWrap(True)
        self.refusal = label("", "error", self)
        self.refusal.setWordWrap(True)
        self.refusal.hide()
        # As tall as its rows: a study has a handful of graders, and many models or topics.
        self.per_grader_table = SmallTable(["Grader", "Assigned before", "New", "In all"], self)
        self.breakdown = QTabWidget(self)
        self.facet_tables: dict[str, CountsTable] = {}
        for facet, _field, _list, tab in FACETS:
            self.facet_tables[facet] = CountsTable([NAMED[facet].title], self.breakdown)
            self.breakdown.addTab(self.facet_tables[facet], tab)
        previewed = QVBoxLayout()
        previewed.setSpacing(8)
        previewed.addWidget(section("Preview of the new assignments", self))
        previewed.addWidget(self.summary)
        previewed.addWidget(self.refusal)
        previewed.addWidget(self.per_grader_table)
        previewed.addWidget(self.breakdown, 1)

        columns = QHBoxLayout()
        columns.setSpacing(28)
        columns.addLayout(inputs, 4)
        columns.addLayout(previewed, 5)
        buttons = QDialogButtonBox(self)
        self.assign_button = QPushButton("&Assign", self)
        self.assign_button.setDefault(True)
        self.assign_button.clicked.connect(self.accept)
        buttons.addButton(self.assign_button, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel).clicked.connect(self.reject)
        intro = label("Split the responses among graders, with a share graded by two people, "
                      "balanced over models and topics. Assigning again adds the new responses "
                      "and never moves work already assigned.", "muted", self)
        intro.setWordWrap(True)
        body = QVBoxLayout()
        body.setSpacing(12)
        body.addWidget(intro)
        body.addLayout(columns, 1)
        fitted_layout(self, body, buttons, (20, 18, 20, 16), 12)
        self.resize(1040, 620)

        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(PREVIEW_DELAY_MS)
        self.timer.timeout.connect(self.update_preview)
        self.graders.textChanged.connect(self.schedule_preview)
        for spin in (self.overlap, self.per_grader, self.seed.spin):
            spin.valueChanged.connect(self.schedule_preview)
        for check_list in self.filters.values():
            check_list.itemChanged.connect(self.schedule_preview)
        self.sample.currentIndexChanged.connect(self.schedule_preview)
        self.ungraded_only.toggled.connect(self.schedule_preview)
        ops.project_changed.connect(self.reject)  # the inputs were the closed project's
        self.graders.setFocus()
        self.update_preview()

    def _buddy(self, text: str, widget: QWidget) -> QLabel:
        """A label whose Alt key moves the keyboard to ``widget``."""
        title = label(text, None, self)
        title.setBuddy(widget)
        return title

    def request(self) -> AssignRequest:
        """What the form asks for now."""
        return AssignRequest(names(self.graders.text()), self.overlap.value() / 100,
                             self.per_grader.value() or None, self.seed.value(),
                             tuple((field, check_list.chosen())
                                   for field, check_list in self.filters.items()),
                             self.sample.currentData(), not self.ungraded_only.isChecked())

    def planned(self) -> bool:
        """True when the preview on show is the plan of what the form asks for now."""
        return (self.preview is not None and not self.timer.isActive()
                and self.preview.request == self.request())

    # -- the preview ----------------------------------------------------------------------

    def schedule_preview(self) -> None:
        """Plan again once the user pauses."""
        self._assign_when_planned = False
        self.assign_button.setEnabled(False)
        self.timer.start()

    def update_preview(self) -> None:
        self.timer.stop()
        request = self.request()
        if not request.graders:
            self._refuse("Name the graders, separated by commas.")
            return
        if not self.refusal.isVisible():
            self.summary.setText("Planning…")
        self.ops.read(partial(preview, request), while_open(self, self.show_preview),
                      key=AssignDialog, failed=while_open(self, self._preview_failed))

    def show_preview(self, shown: Preview) -> None:
        if shown.request != self.request():
            return  # the form changed meanwhile: its own plan is on its way
        plan = shown.plan
        self.preview = shown
        self.refusal.hide()
        self.summary.setText(plan.text())
        self.summary.show()
        counts = plan.counts()
        self.per_grader_table.fill(
            [(name, plan.before[name], counts[name], plan.before[name] + counts[name])
             for name in plan.graders])
        for facet, field, _list, _tab in FACETS:
            by_grader = plan.by_facet(facet)
            found = {value for counts_of in by_grader.values() for value in counts_of}
            offered = self.filters[field].values()  # models by name, topics as taught
            values = [value for value in offered if value in found] + sorted(
                found.difference(offered), key=str)
            self.facet_tables[facet].show_rows(
                [NAMED[facet].title, *plan.graders],
                [(str(value), *(by_grader.get(name, {}).get(value, 0) for name in plan.graders))
                 for value in values])
        self.assign_button.setEnabled(bool(plan.rows))
        if self._assign_when_planned:
            self.accept()

    def _preview_failed(self, error: BaseException) -> None:
        if isinstance(error, PLAN_REFUSALS):
            self._refuse(str(error))
        else:
            self._refuse("The assignment could not be planned.")
            self.ops.fail("Cannot plan the assignment", error)

    def _refuse(self, reason: str) -> None:
        """Say why nothing can be assigned, where the preview would be (the dialog grows to
        show it where the screen has room)."""
        self.preview = None
        self._assign_when_planned = False
        self.summary.hide()
        self.refusal.setText(reason)
        self.refusal.show()
        self.per_grader_table.fill([])
        for facet, table in self.facet_tables.items():
            table.show_rows([NAMED[facet].title], [])
        self.assign_button.setEnabled(False)
        fit_to_show(self.refusal)

    # -- assigning ------------------------------------------------------------------------

    def accept(self) -> None:
        """Store the plan on show (Enter right after typing plans first, then stores)."""
        if not self.planned():
            self._assign_when_planned = True
            if self.timer.isActive():
                self.update_preview()
            return
        assert self.preview is not None
        self._assign_when_planned = False
        plan = self.preview.plan
        if not plan.rows:
            return
        worker = self.ops.run("Assigning responses", partial(apply_plan, plan),
                              partial(_assigned, self.ops, plan), changes=lambda made: made,
                              failed="Nothing was assigned.",
                              cancelled="Assigning cancelled: nothing was assigned.")
        if worker is not None:
            super().accept()


def _assigned(ops: Operations, plan: AssignmentPlan, changes: Changes) -> None:
    ops.say(f"Assigned: {plan.text()}", 0)


# -- grader packs ----------------------------------------------------------------------------


class PacksDialog(QDialog):
    """Where to write the packs, whose, and whether they are blind; Make Packs writes them."""

    def __init__(self, ops: Operations, assignees: list[str],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ops = ops
        project = ops.project
        assert project is not None
        self.setWindowTitle("Make Grader Packs")
        self.folder = QLineEdit(str(project.path.parent), self)
        self.folder.setMinimumWidth(380)
        browse = QPushButton("&Browse…", self)
        browse.setAutoDefault(False)
        browse.clicked.connect(self.browse)
        folder = QHBoxLayout()
        folder.setSpacing(8)
        folder.addWidget(self.folder, 1)
        folder.addWidget(browse)
        self.graders = CheckList(assignees, True, self, {
            name: f"{name}   →   {path.name}"
            for name, path in zip(assignees, packs.pack_paths(project, Path(), assignees))})
        self.blind = QCheckBox("B&lind: leave out judge verdicts and colleagues' grades", self)
        self.blind.setChecked(True)
        self.error = label("", "error", self)
        self.error.setWordWrap(True)
        self.error.hide()

        form = QFormLayout()
        form.setHorizontalSpacing(14)
        form.setVerticalSpacing(10)
        form.addRow(self._buddy("&Folder", self.folder), folder)
        form.addRow(self._buddy("&Graders", self.graders), self.graders)
        form.addRow("", self.blind)
        note = label("Each pack is a project file of its own holding the grader's assigned "
                     "responses with their questions. Graders open it in physgrade, grade, and "
                     "send it back to be merged (File ▸ Merge Packs…).", "muted", self)
        note.setWordWrap(True)
        form.addRow("", note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("&Make Packs")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        body = QVBoxLayout()
        body.setSpacing(14)
        body.addLayout(form)
        body.addWidget(self.error)
        body.addStretch(1)
        fitted_layout(self, body, buttons)
        self.resize(620, self.sizeHint().height())
        ops.project_changed.connect(self.reject)
        self.graders.setFocus()

    def _buddy(self, text: str, widget: QWidget) -> QLabel:
        title = label(text, None, self)
        title.setBuddy(widget)
        return title

    def browse(self) -> None:
        chosen = QFileDialog.getExistingDirectory(self, "Folder for the grader packs",
                                                  self.folder.text())
        if chosen:
            self.folder.setText(chosen)

    def accept(self) -> None:
        folder = Path(self.folder.text().strip()).expanduser()
        chosen = self.graders.ordered()
        project = self.ops.project
        taken = [path.name for path in packs.pack_paths(project, folder, chosen)
                 if path.exists()] if project is not None else []
        if not self.folder.text().strip() or not folder.is_dir():
            self._refuse("Choose an existing folder for the packs.")
        elif not chosen:
            self._refuse("Tick at least one grader.")
        elif taken:
            self._refuse(f"{', '.join(taken)} {'is' if len(taken) == 1 else 'are'} in that "
                         "folder already: a pack is never written over a file. Move "
                         f"{'it' if len(taken) == 1 else 'them'} away or choose another folder.")
        elif self.ops.run("Making grader packs",
                          partial(make_packs, folder, chosen, self.blind.isChecked()),
                          partial(_packs_made, self.ops, folder),
                          changes=lambda made: made[1], partial_changes=packs.PACKS_MADE,
                          failed="No grader pack was made.",
                          cancelled="Making grader packs cancelled: the packs finished before "
                                    "stay in the folder.") is not None:
            super().accept()

    def _refuse(self, reason: str) -> None:
        """Say what to fix below the form (the dialog grows to show it where the screen has
        room; a longer reason scrolls into view)."""
        self.error.setText(reason)
        self.error.show()
        fit_to_show(self.error)


def _packs_made(ops: Operations, folder: Path, made: tuple[list[PackMade], Changes]) -> None:
    written = made[0]
    ops.say(f"Grader packs written to {folder}: "
            + ", ".join(pack.path.name for pack in written), 0)
    ops.inform("Grader packs written", "\n".join(pack.text() for pack in written))


# -- merging ---------------------------------------------------------------------------------


def merge_packs_from_files(ops: Operations, parent: QWidget) -> Worker | None:
    """Ask for pack files and merge them in the background; conflicts open their dialog."""
    project = ops.project
    if project is None:
        return None
    chosen, _ = QFileDialog.getOpenFileNames(parent, "Merge grader packs",
                                             str(project.path.parent), PACK_FILTER)
    if not chosen:
        return None
    return ops.run("Merging packs", partial(merge_packs, tuple(Path(p) for p in chosen)),
                   partial(_merged, ops, parent), changes=lambda result: result.changes,
                   failed="Nothing was merged: the project is unchanged.",
                   cancelled="Merge cancelled: the project is unchanged.")


#: What to do after a merge that left nothing for a person.
MERGED_CLEANLY = ("Nothing waits for you: every score the packs brought is in the project, and "
                  "the Overview counts it.")


def _merged(ops: Operations, parent: QWidget, result: MergeResult) -> None:
    """Say what came in, in plain words, and what to do next: with conflicts, in the window
    where they are decided (one window, not a box on top of it)."""
    ops.say(" · ".join(result.text().splitlines()), 0)
    shown = show_conflicts(ops, parent) if result.conflicts else None
    if shown is not None:
        shown.tell_merged(result.text())
    else:
        ops.inform("Packs merged", "\n\n".join(
            [*map(full_stop, result.text().splitlines()), MERGED_CLEANLY]))


def full_stop(line: str) -> str:
    """A line of a core message as a sentence, its first word (a file name) as it is."""
    return line if line.endswith(".") else f"{line}."


# -- conflicts -------------------------------------------------------------------------------

#: The conflicts table's columns.
CONFLICT_COLUMNS = ("Response", "Criterion", "Grader", "Project", "Changed in the project",
                    "Pack", "Changed in the pack", "Pack file")


def given_text(value: int | None, given: bool) -> str:
    """A criterion's value as a conflict shows it: N/A is a value; nothing given is not."""
    return value_text(value) if given else "not scored"


class ConflictsDialog(QDialog):
    """The open merge conflicts; the selected ones settled by keeping the pack's value (P) or
    the project's (J)."""

    def __init__(self, ops: Operations, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ops = ops
        self.conflicts: list[Conflict] = []
        self._row_after_refresh = 0
        self.setWindowTitle("Merge Conflicts")
        self.intro = label("The same grader gave these criteria different values in the project "
                           "and in a pack since they last agreed. Nothing was overwritten: choose "
                           "which value to keep for the selected rows (P: the pack's, J: the "
                           "project's; Ctrl+A selects all).", "muted", self)
        self.intro.setWordWrap(True)
        self.merged = label("", "", self)  # what the merge that opened the window brought
        self.merged.setWordWrap(True)
        self.merged.hide()
        self.table = QTableWidget(0, len(CONFLICT_COLUMNS), self)
        self.table.setHorizontalHeaderLabels(CONFLICT_COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.setShowGrid(False)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.empty = label("No conflicts wait.", "section", self)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.hide()

        self.keep_pack = QPushButton("Keep &Pack's", self)
        self.keep_pack.setToolTip("Keep the value from the pack for the selected rows (P)")
        self.keep_pack.clicked.connect(partial(self.keep, KEEP_PACK))
        self.keep_project = QPushButton("Keep Pro&ject's", self)
        self.keep_project.setToolTip("Keep the value in the project for the selected rows (J)")
        self.keep_project.clicked.connect(partial(self.keep, KEEP_PROJECT))
        for button in (self.keep_pack, self.keep_project):
            button.setAutoDefault(False)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.addButton(self.keep_pack, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.keep_project, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        named_shortcut(self, "Keep the pack's value", ["P"], partial(self.keep, KEEP_PACK))
        named_shortcut(self, "Keep the project's value", ["J"],
                       partial(self.keep, KEEP_PROJECT))
        named_shortcut(self, "Select all", ["Ctrl+A"], self.table.selectAll)

        body = QVBoxLayout()
        body.setSpacing(12)
        body.addWidget(self.merged)
        body.addWidget(self.intro)
        body.addWidget(self.table, 1)
        body.addWidget(self.empty, 1)
        fitted_layout(self, body, buttons, (20, 18, 20, 16), 12)
        self.resize(1120, 520)
        ops.changed.connect(self._changed)
        ops.project_changed.connect(self.reject)
        self.table.setFocus()

    def tell_merged(self, text: str) -> None:
        """Say above the conflicts what the merge brought (``MergeResult.text``)."""
        self.merged.setText("\n".join(map(full_stop, text.splitlines())))
        self.merged.show()
        fit_to_show(self.merged)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.refresh()

    def refresh(self) -> None:
        self.ops.read(read_conflicts, while_open(self, self.show_conflicts), key=ConflictsDialog)

    def _changed(self, changes: Changes) -> None:
        if changes.touches(RecordKind.CONFLICTS):
            self.refresh()

    def show_conflicts(self, conflicts: list[Conflict]) -> None:
        self.conflicts = conflicts
        table = self.table
        table.setRowCount(len(conflicts))
        for row, conflict in enumerate(conflicts):
            cells = (conflict.response_id, conflict.criterion, conflict.grader,
                     given_text(conflict.project_value, conflict.project_given),
                     local_time(conflict.project_time),
                     given_text(conflict.pack_value, conflict.pack_given),
                     local_time(conflict.pack_time), Path(conflict.pack_file).name)
            tips = {1: f"Rubric {conflict.rubric}",
                    3: conflict.project_note or "No note in the project",
                    5: conflict.pack_note or "No note in the pack", 7: conflict.pack_file}
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(tips.get(column, ""))
                table.setItem(row, column, item)
        waiting = bool(conflicts)
        table.setVisible(waiting)
        self.intro.setVisible(waiting)
        self.empty.setVisible(not waiting)
        self.keep_pack.setEnabled(waiting)
        self.keep_project.setEnabled(waiting)
        if waiting:
            table.selectRow(min(self._row_after_refresh, len(conflicts) - 1))
            table.setFocus()

    def selected_ids(self) -> list[int]:
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        return [self.conflicts[row].id for row in rows if row < len(self.conflicts)]

    def keep(self, keep: str) -> bool:
        """Settle the selected conflicts, keeping ``keep``'s value; True once stored."""
        ids = self.selected_ids()
        if not ids:
            self.ops.say("Select the conflicts to settle first.")
            return False
        person = grader.chosen_for(self.ops.project.path) if self.ops.project else None
        if person is None:
            self.ops.say("Say who you are first: conflicts are settled under your name.")
            self.ops.ask_person.emit()
            return False
        self._row_after_refresh = min(index.row()
                                      for index in self.table.selectionModel().selectedRows())
        if self.ops.write(lambda project: merge.resolve(project, ids, keep, by=person),
                          what="choice"):
            return True
        self.refresh()  # e.g. settled meanwhile from the command line: show what is open now
        return False


# -- the window's entries --------------------------------------------------------------------

D = TypeVar("D", bound=QDialog)
#: What a dialog's set-up may meet in a project file gone bad (read on the GUI thread).
SETUP_FAILURES = (sqlite3.Error, ProjectError)


def _opened(ops: Operations, title: str, make: Callable[[], D]) -> D | None:
    """The dialog ``make`` builds, opened window-modal (not blocking) and deleted once closed;
    None, said, when the project cannot be read."""
    try:
        dialog = make()
    except SETUP_FAILURES as exc:
        ops.fail(title, exc)
        return None
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()
    return dialog


def assign_responses(ops: Operations, parent: QWidget) -> AssignDialog | None:
    """File ▸ Assign Responses…"""
    if ops.project is None:
        return None
    return _opened(ops, "Cannot assign responses", partial(AssignDialog, ops, parent))


def make_grader_packs(ops: Operations, parent: QWidget) -> PacksDialog | None:
    """File ▸ Make Grader Packs…: the dialog, or why there is nothing to make."""
    project = ops.project
    if project is None:
        return None
    try:
        assignees = assign.assignees(project)
    except SETUP_FAILURES as exc:
        ops.fail("Cannot make grader packs", exc)
        return None
    if not assignees:
        ops.say(NO_ASSIGNMENTS, 0)
        ops.inform("No grader packs to make", NO_ASSIGNMENTS)
        return None
    return _opened(ops, "Cannot make grader packs", partial(PacksDialog, ops, assignees, parent))


def show_conflicts(ops: Operations, parent: QWidget) -> ConflictsDialog | None:
    """File ▸ Merge Conflicts…: the dialog (the one already open, if there is one)."""
    if ops.project is None:
        return None
    for shown in parent.findChildren(ConflictsDialog):
        if shown.isVisible():
            shown.raise_()
            shown.activateWindow()
            return shown
    return _opened(ops, "Cannot show the merge conflicts", partial(ConflictsDialog, ops, parent))
