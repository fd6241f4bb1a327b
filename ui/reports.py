"""The Reports page: the core's project report, under the filters and for the rater chosen in its bar.

The page only lays out a :class:`~physgrade.report.model.Report`: every number and every cell's
text comes from the core. Computing a report bootstraps many intervals, so it is a long run of
the operations (progress, Cancel), as is writing it to disk; a change to what the report is
computed from computes it again.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path

from PySide6.QtCore import QRect, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPixmap, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QFileDialog, QFrame, QHBoxLayout,
                               QHeaderView, QLabel, QPushButton, QScrollArea, QSizePolicy,
                               QStackedWidget, QTabWidget, QTableWidgetItem, QVBoxLayout,
                               QWidget)

from physgrade.changes import Changes, Kind
from physgrade.estimation.sample import samples
from physgrade.project import Project
from physgrade.report.model import Cell, Figure, Report, Section, Table
from physgrade.report.writers import write_report
from physgrade.report.options import ReportFilter, ReportOptions, report_choices
from physgrade.stats.estimate import Estimate
from physgrade.tasks import Task
from physgrade_ui import style, transfer
from physgrade_ui.operations import Operations
from physgrade_ui.pages import Section as SectionKeys
from physgrade_ui.widgets import (NUMBER_ALIGNMENT, ROW_HEIGHT, FacetButton, SmallTable, label,
                                  polish)
from physgrade_ui.workers import Worker
from physgrade.wording import count

#: Filter facets: ReportFilter field and button title, in the order of the bar.
FACETS = (("models", "Model"), ("topics", "Topic"), ("kinds", "Kind"), ("bloom", "Bloom"),
          ("judges", "Judge"), ("graders", "Grader"))
#: Export formats: write_report's name and what the dialog calls it.
FORMATS = (("html", "HTML"), ("csv", "CSV"), ("json", "JSON"))
#: Prose is easier to read in lines no wider than this (pixels).
TEXT_WIDTH = 900
#: Columns fit their contents up to this width (pixels); tables show this many rows at most.
MAX_COLUMN_WIDTH = 300
MAX_ROWS = 15
#: Room a cell's text leaves for the cell's padding (pixels).
CELL_PADDING = 12
#: Figures shrink to fit the page, but not below this width (pixels); the page scrolls instead.
MIN_FIGURE_WIDTH = 320
NO_REPORT = "No report yet: press Update to compute one."
#: How many characters of a rater's label the "Analyses for" box shows.
RATER_CHARACTERS = 22
UNCHANGED = "The report shown is unchanged."
#: What a report is computed from: a change to any of it computes the report again.
REPORTED = (Kind.SCORES, Kind.RATERS, Kind.REVIEWS, Kind.BLOOM, Kind.QUESTIONS, Kind.RESPONSES,
            Kind.SAMPLES, Kind.ADJUDICATIONS, Kind.ESTIMATION, Kind.REFINEMENTS)
#: What the bar's filter values, raters and estimation samples are read from.
CHOICES = (Kind.RATERS, Kind.QUESTIONS, Kind.RESPONSES, Kind.ESTIMATION)


def compute_report(options: ReportOptions, project: Project, task: Task) -> Report:
    """Build the report (on a worker). The builder is imported here, not with the page: it
    loads pandas, scipy and matplotlib, which would otherwise add more than a second to every
    start of the app."""
    from physgrade.report.build import build_report

    return build_report(project, options, task)


def written_text(folder: Path, written: list[Path]) -> str:
    """What an export wrote, by the names in ``folder``: "report.html, csv/ (14 files)"."""
    entries = Counter(path.relative_to(folder).parts[0] + ("/" if path.parent != folder else "")
                      for path in written)
    return ", ".join(f"{name} ({count(files, 'file')})" if name.endswith("/") else name
                     for name, files in entries.items())


def summary_text(report: Report) -> str:
    """What a report covers, in one line: counts, filters, whose analyses, when."""
    settings = report.settings
    titles = dict(FACETS)
    filters = "; ".join(f"{titles[key]}: {', '.join(values)}"
                        for key, values in settings["filter"].items())
    created = datetime.fromisoformat(settings["created_at"]).astimezone()
    return " · ".join((
        count(settings["responses"], "response"), count(len(settings["judges"]), "judge"),
        count(len(settings["graders"]), "grader"), filters or "no filter",
        f"analyses for {settings['analyses_rater'] or 'nobody (nothing is graded)'}",
        f"computed {created:%d %b %Y, %H:%M}"))


class ReportTable(SmallTable):
    """One table of the report, as wide as its columns. Columns fit their contents up to a
    limit (a long reason why an estimate is not available is cut short; its tooltip has it
    whole). A table wider than the page scrolls sideways, and a long one inside a window of
    rows, so that its scroll bar and what follows it stay near."""

    def __init__(self, table: Table, parent: QWidget | None = None) -> None:
        super().__init__(list(table.columns), parent)
        self.setObjectName(table.name)
        columns = range(len(table.columns))
        with self.batch():
            self.fill([tuple(table.text(r, c) for c in columns) for r in range(len(table.rows))])
            for c in columns:
                numeric = table.numeric(c)
                if numeric:
                    self.horizontalHeaderItem(c).setTextAlignment(NUMBER_ALIGNMENT)
                for r, row in enumerate(table.rows):
                    self._style(self.item(r, c), row[c], numeric)
        width = 2 * self.frameWidth() + self.horizontalHeader().length()
        if len(table.rows) > MAX_ROWS:
            self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
            self.setFixedHeight(self.height() - (len(table.rows) - MAX_ROWS) * ROW_HEIGHT)
            width += self.verticalScrollBar().sizeHint().width()
        self.setMaximumWidth(width)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self._rows_height = self.height()

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Make room for the sideways scroll bar while it shows, so that no row hides under it."""
        super().resizeEvent(event)
        narrow = self.width() < self.maximumWidth()
        self.setFixedHeight(self._rows_height
                            + (self.horizontalScrollBar().sizeHint().height() if narrow else 0))

    def _style(self, item: QTableWidgetItem, cell: Cell, numeric: bool) -> None:
        if numeric:
            item.setTextAlignment(NUMBER_ALIGNMENT)
        if isinstance(cell, Estimate) and cell.reason:
            # The reason would widen the column past its values: it goes in the tooltip.
            item.setToolTip(cell.reason)
            if cell.value is None:
                item.setText("n/a")
                item.setForeground(QColor(style.MUTED))
        elif self.fontMetrics().horizontalAdvance(item.text()) > MAX_COLUMN_WIDTH - CELL_PADDING:
            item.setToolTip(item.text())

    def _fit_columns(self) -> None:
        """Fixed widths measured on every row: a view fitting its columns to their contents
        measures only the rows in sight."""
        self.ensurePolished()  # the style sheet's cell padding and header font count
        header = self.horizontalHeader()
        header.ensurePolished()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        for c in range(self.columnCount()):
            header.resizeSection(c, min(max(self.sizeHintForColumn(c), header.sectionSizeHint(c)),
                                        MAX_COLUMN_WIDTH))


class FigureView(QWidget):
    """A figure at its own size, scaled down (never up) to the width there is."""

    def __init__(self, figure: Figure, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(figure.name)
        self.image = QPixmap()
        self.image.loadFromData(figure.png, "PNG")
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)

    def _shown_size(self, width: int) -> QSize:
        natural = self.image.deviceIndependentSize().toSize()
        return natural.scaled(min(width, natural.width()), natural.height(),
                              Qt.AspectRatioMode.KeepAspectRatio)

    def sizeHint(self) -> QSize:
        return self.image.deviceIndependentSize().toSize()

    def minimumSizeHint(self) -> QSize:
        return self._shown_size(MIN_FIGURE_WIDTH)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._shown_size(width).height()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        painter.drawPixmap(QRect(0, 0, *self._shown_size(self.width()).toTuple()), self.image)


class Prose(QLabel):
    """A paragraph: wrapped, at a readable width, selectable for quoting."""

    def __init__(self, text: str, role: str | None = None) -> None:
        super().__init__(text)
        if role:
            self.setProperty("role", role)
        self.setWordWrap(True)
        self.setMaximumWidth(TEXT_WIDTH)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

    def heightForWidth(self, width: int) -> int:
        """The height at the width the paragraph gets: a layout asks at its own width, which
        may be wider than a paragraph is allowed, and would then leave too little room below
        (the figures that follow were cut short)."""
        return super().heightForWidth(min(width, self.maximumWidth()))


def section_view(section: Section, tables: dict[str, ReportTable]) -> QScrollArea:
    """One section as a scrolling page: intro, then each table and figure under its title;
    the table widgets are added to ``tables`` by name."""
    content = QWidget()
    layout = QVBoxLayout(content)
    layout.setContentsMargins(24, 18, 24, 24)
    layout.setSpacing(6)
    layout.addWidget(label(section.title, "title"))
    if section.intro:
        layout.addWidget(Prose(section.intro))
    for table in section.tables:
        layout.addSpacing(14)
        layout.addWidget(label(table.title, "section"))
        if table.rows:
            tables[table.name] = ReportTable(table)
            layout.addWidget(tables[table.name])
        else:
            layout.addWidget(label("Nothing to show for this selection.", "muted"))
        if table.note:
            layout.addWidget(Prose(table.note, "muted"))
        _add_figures(layout, section.figures_after(table))
    _add_figures(layout, section.figures_after(None))
    layout.addStretch(1)
    scroller = QScrollArea()
    scroller.setWidgetResizable(True)
    scroller.setFrameShape(QFrame.Shape.NoFrame)
    scroller.setWidget(content)
    return scroller


def _add_figures(layout: QVBoxLayout, figures: list[Figure]) -> None:
    for figure in figures:
        layout.addSpacing(14)
        layout.addWidget(label(figure.title, "section"))
        layout.addWidget(FigureView(figure))
        if figure.caption:
            layout.addWidget(Prose(figure.caption, "muted"))


@dataclass(frozen=True, slots=True)
class ReportExport:
    folder: Path
    formats: tuple[str, ...]


def write_files(report: Report, request: ReportExport, project: None,
                task: Task) -> list[Path]:
    """Write ``report`` as ``request`` asks (on a worker; the report is all it needs)."""
    return write_report(report, request.folder, request.formats, task)


class _FolderField(transfer.FileField):
    """The import/export path field, choosing a folder instead of a file."""

    def _browse(self) -> None:
        chosen = QFileDialog.getExistingDirectory(self, self._caption, self.edit.text())
        if chosen:
            self.edit.setText(chosen)


class ExportReportDialog(transfer.TransferDialog[ReportExport]):
    """Into which folder, in which formats (all of them unless the user says otherwise)."""

    def __init__(self, folder: Path, parent: QWidget | None = None) -> None:
        super().__init__("Export report", "Export", parent)
        self.folder = _FolderField("Export the report into", "", save=False, parent=self)
        self.folder.edit.setText(str(folder))
        self.formats = {key: QCheckBox(title, self) for key, title in FORMATS}
        boxes = QHBoxLayout()
        boxes.setSpacing(18)
        for box in self.formats.values():
            box.setChecked(True)
            boxes.addWidget(box)
        boxes.addStretch(1)
        self.form.addRow("Folder", self.folder)
        self.form.addRow("Formats", boxes)

    def accept(self) -> None:
        folder = self.folder.path()
        formats = tuple(key for key, box in self.formats.items() if box.isChecked())
        if folder is None:
            self.refuse("Choose a folder to write the report into.")
        elif folder.exists() and not folder.is_dir():
            self.refuse(f"{folder} is a file, not a folder.")
        elif not folder.parent.is_dir():
            self.refuse(f"The folder {folder.parent} does not exist.")
        elif not formats:
            self.refuse("Tick at least one format.")
        else:
            self.grant(ReportExport(folder, formats))


class ReportsPage(QWidget):
    """The report of the open project, computed again whenever what it reports on changes."""

    page_title = "Reports"

    def __init__(self, ops: Operations, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ops = ops
        self.project_path: Path | None = None
        self.report: Report | None = None
        self.report_options: ReportOptions | None = None
        self.export_folder = Path.home()
        self.tables: dict[str, ReportTable] = {}
        self._due = False  # the project changed since the report shown (or under way) was begun
        ops.busy_changed.connect(self._busy_changed)

        bar = QHBoxLayout()
        bar.setSpacing(6)
        self.facets: dict[str, FacetButton] = {}
        for key, title in FACETS:
            button = FacetButton(title)
            button.changed.connect(self._show_state)
            self.facets[key] = button
            bar.addWidget(button)
        bar.addSpacing(10)
        bar.addWidget(label("Analyses for"))
        self.rater = QComboBox()
        self.rater.setToolTip("Whose grades the study's analyses (the last section) are "
                              "computed from")
        # As wide as a typical label, not the longest (a refined judge's runs to 40
        # characters): the bar must fit 1280 pixels; the list opens wide enough for each.
        self.rater.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.rater.setMinimumContentsLength(RATER_CHARACTERS)
        self.rater.currentIndexChanged.connect(self._show_state)
        bar.addWidget(self.rater)
        # Shown only when the project has estimation samples (see _offer_samples).
        self.sample_label = label("Sample")
        self.sample = QComboBox()
        self.sample.setToolTip("The estimation sample whose expert grades correct the judges' "
                               "scores (the section \"Model scores corrected by expert "
                               "grades\"); a hand-picked one is assumed random")
        self.sample.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.sample.currentIndexChanged.connect(self._show_state)
        self._newest_random: str | None = None
        bar.addSpacing(8)
        bar.addWidget(self.sample_label)
        bar.addWidget(self.sample)
        bar.addStretch(1)

        # What the report shows, with its buttons beside it: the choices above fill the width.
        self.summary = label(NO_REPORT, "muted")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.update_button = QPushButton("Update")
        self.update_button.clicked.connect(self.update_report)
        self.export_button = QPushButton("Export…")
        self.export_button.clicked.connect(self.export)
        status = QHBoxLayout()
        status.setSpacing(6)
        status.addWidget(self.summary, 1)
        status.addWidget(self.update_button)
        status.addWidget(self.export_button)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.setElideMode(Qt.TextElideMode.ElideRight)  # every section stays in reach
        self.tabs.setUsesScrollButtons(False)
        placeholder = label(NO_REPORT, "muted")
        placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.body = QStackedWidget()
        self.body.addWidget(placeholder)
        self.body.addWidget(self.tabs)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(20, 14, 20, 8)
        layout.setSpacing(10)
        layout.addLayout(bar)
        layout.addLayout(status)
        layout.addWidget(self.body, 1)
        self._show_state()

    # -- the page -----------------------------------------------------------------------------

    def open(self, project: Project | None, person: str | None = None) -> None:
        """Offer the filter values and raters of ``project`` (keeping the choices that still
        apply) and compute its report, unless it is on show already (the report is the same
        whoever is working); a closed project leaves no report."""
        if project is None:
            self.project_path, self._due = None, False
            self._show_report(None, None)
            return
        if project.path != self.project_path:
            self.project_path = project.path
            self.export_folder = project.path.parent / f"{project.path.stem} report"
            self._show_report(None, None)
        self._offer_choices(project)
        self._due = self._due or self.report is None
        self._update_if_due()

    def apply(self, changes: Changes) -> None:
        """Compute the report again when what it reports on changed; while a long run is under
        way, once it has ended."""
        if self.ops.project is None or not changes.touches(*REPORTED):
            return
        if changes.touches(*CHOICES):
            self._offer_choices(self.ops.project)
        self._due = True
        self._update_if_due()

    def stop(self) -> None:
        """Nothing to do: the operations end the work under way."""

    def help_section(self) -> SectionKeys | None:
        return None

    def focus_widget(self) -> QWidget:
        return self.tabs if self.report is not None else self.update_button

    def focus_search(self) -> bool:
        return False

    def showEvent(self, event: QShowEvent) -> None:
        """A recomputation left for later while the page was hidden is done now (after the
        window has handed the page what changed meanwhile, which may start it anyway)."""
        super().showEvent(event)
        QTimer.singleShot(0, self._update_if_due)

    # -- the bar ------------------------------------------------------------------------------

    def _offer_choices(self, project: Project) -> None:
        """The filter values and raters ``project`` has, keeping the chosen ones it still has."""
        choices = report_choices(project)
        for key, button in self.facets.items():
            button.blockSignals(True)
            button.set_values(getattr(choices, key), button.chosen())
            button.blockSignals(False)
        rater = self.rater.currentText()
        self.rater.blockSignals(True)
        self.rater.clear()
        self.rater.addItems(choices.raters)
        self.rater.setCurrentIndex(max(self.rater.findText(rater), 0))
        self.rater.blockSignals(False)
        listing = self.rater.view()
        listing.setMinimumWidth(listing.sizeHintForColumn(0)
                                + listing.verticalScrollBar().sizeHint().width())
        self._offer_samples(project)
        self._show_state()

    def _offer_samples(self, project: Project) -> None:
        """The project's estimation samples, newest first; the newest drawn at random is the
        default, and stays so when another is drawn unless another sample was chosen. Without
        a random one, the first choice is none (a hand-picked sample is used only if named)."""
        stored = samples(project)[::-1]
        chosen = self.sample.currentData()
        newest = next((s.name for s in stored if s.random), None)
        kept = chosen if chosen != self._newest_random else None
        self._newest_random = newest
        self.sample.blockSignals(True)
        self.sample.clear()
        if newest is None and stored:
            self.sample.addItem("none", None)
        for found in stored:
            self.sample.addItem(found.name if found.random else f"{found.name} (by hand)",
                                found.name)
        index = self.sample.findData(kept) if kept is not None else -1
        self.sample.setCurrentIndex(index if index >= 0 else max(self.sample.findData(newest), 0))
        self.sample.blockSignals(False)
        self.sample.setVisible(bool(stored))
        self.sample_label.setVisible(bool(stored))

    def options(self) -> ReportOptions:
        """The report the bar asks for (no sample named: the newest drawn at random)."""
        chosen = ReportFilter(**{key: button.chosen() for key, button in self.facets.items()})
        sample = self.sample.currentData()
        return ReportOptions(chosen, self.rater.currentText() or None,
                             sample=None if sample == self._newest_random else sample)

    def _show_state(self) -> None:
        """Update is the primary button while the bar asks for another report than the one
        shown; nothing starts while a long run is under way."""
        idle = not self.ops.busy
        self.update_button.setEnabled(idle and self.ops.project is not None)
        self.export_button.setEnabled(idle and self.report is not None)
        outdated = self.report is None or self.options() != self.report_options
        self.update_button.setProperty("role", "primary" if outdated else None)
        polish(self.update_button)

    def _busy_changed(self, busy: bool) -> None:
        self._show_state()
        if not busy:
            # Later: the run that ended may broadcast what it changed first (which starts it).
            QTimer.singleShot(0, self._update_if_due)

    # -- computing and showing ----------------------------------------------------------------

    def _update_if_due(self) -> None:
        if self._due and self.isVisible() and not self.ops.busy:
            self.update_report()

    def update_report(self) -> Worker | None:
        """Compute the report the bar asks for; Cancel keeps the one shown."""
        options = self.options()
        worker = self.ops.run("Computing the report", partial(compute_report, options),
                              partial(self._show_report, options),
                              failed="The report could not be computed. " + UNCHANGED,
                              cancelled="Computing the report was cancelled. " + UNCHANGED)
        if worker is not None:
            self._due = False
        return worker

    def _show_report(self, options: ReportOptions | None, report: Report | None) -> None:
        """Lay out ``report`` (None: none yet), staying on the section that was on show."""
        current = self.tabs.tabText(self.tabs.currentIndex())
        old = [self.tabs.widget(i) for i in range(self.tabs.count())]
        self.tabs.clear()
        for page in old:
            page.deleteLater()
        self.report, self.report_options, self.tables = report, options, {}
        for section in report.sections if report else []:
            index = self.tabs.addTab(section_view(section, self.tables), section.tab)
            self.tabs.setTabToolTip(index, section.title)
            if section.tab == current:
                self.tabs.setCurrentIndex(index)
        self.body.setCurrentIndex(1 if report else 0)
        self.summary.setText(summary_text(report) if report else NO_REPORT)
        self._show_state()

    # -- export -------------------------------------------------------------------------------

    def export(self) -> None:
        dialog = ExportReportDialog(self.export_folder, self)
        if dialog.exec() == QDialog.DialogCode.Accepted:
            self.start_export(dialog.request())

    def start_export(self, request: ReportExport) -> Worker | None:
        """Write the report on show into ``request.folder``."""
        if self.report is None:
            return None
        return self.ops.run("Writing the report", partial(write_files, self.report, request),
                            partial(self._exported, request),
                            failed="The report could not be written.",
                            cancelled="Writing the report was cancelled.", needs_project=False)

    def _exported(self, request: ReportExport, written: list[Path]) -> None:
        self.export_folder = request.folder
        self.ops.say(f"Report written to {request.folder}: "
                     f"{written_text(request.folder, written)}")

    @property
    def worker(self) -> Worker | None:
        """The long run under way, if any (this page's or another's: one at a time)."""
        return self.ops.worker
