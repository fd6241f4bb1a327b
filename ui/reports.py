"""The Reports page: the core's project report, under the filters and for the rater chosen in its bar.

The page only lays out a :class:`~physgrade.report.model.Report`: every number and every cell's
text comes from the core. A change to the bar, or to what the report is computed from, is
answered within about a second by a draft (every value, from the project's scores kept in a
:class:`~physgrade.scoring.cache.ScoreCache`); the bootstrap intervals and the figures, most of a
report's arithmetic, follow section by section (the one on show first), marked as pending until
they come. All of it runs as background reads that a newer request cancels; only writing the
report to disk is a long run of the operations (progress, Cancel).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QRect, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QHideEvent, QPainter, QPaintEvent, QPixmap, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QStackedWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from physgrade import facets
from physgrade.changes import Changes, RecordKind
from physgrade.estimation.sample import samples
from physgrade.project import Project
from physgrade.report.model import PENDING, Cell, Figure, Report, Section, Table, cell_parts, cell_text
from physgrade.report.options import MIN_GRADES, ReportOptions
from physgrade.report.writers import write_report
from physgrade.scoring.cache import ScoreCache
from physgrade.selection import FILTER_FACETS, ResponseFilter, filter_choices
from physgrade.stats.estimate import Estimate
from physgrade.tasks import Task
from physgrade.wording import count
from physgrade_ui import style, transfer
from physgrade_ui.facet_bar import DeclaredFacets
from physgrade_ui.operations import Operations
from physgrade_ui.pages import Section as SectionKeys
from physgrade_ui.preferences import REPORT_MIN_GRADES
from physgrade_ui.widgets import NUMBER_ALIGNMENT, ROW_HEIGHT, FacetButton, SmallTable, label
from physgrade_ui.workers import Worker

if TYPE_CHECKING:  # the builder is imported where used (see draft_work)
    from physgrade.report.build import Draft

#: Filter facets: ResponseFilter field and button title, in the order of the bar.
FACETS = tuple((key, facet.title) for key, facet in FILTER_FACETS.items())
#: Export formats: write_report's name and what the dialog calls it.
FORMATS = (("html", "HTML"), ("csv", "CSV"), ("json", "JSON"))
#: Prose is easier to read in lines no wider than this (pixels).
TEXT_WIDTH = 900
#: Columns fit their contents up to this width (pixels; longer text wraps, at a readable line
#: length); tables show this many rows at most.
MAX_COLUMN_WIDTH = 520
MAX_ROWS = 15
#: Room a cell's text leaves for the cell's padding (pixels).
CELL_PADDING = 12
#: The room a column needs beyond its longest word (pixels): the cell's padding and the text
#: margins the view leaves when it wraps.
WORD_ROOM = CELL_PADDING + 2
#: Room above and below a row's text (pixels), that wrapped lines do not touch the next row.
ROW_MARGIN = 10
#: Join an interval's two ends and a hyphenated word's parts, so that a narrow column wraps
#: only between words, and between a value and its interval.
NO_BREAK, NO_BREAK_HYPHEN = "\u00a0", "-\u2060"
#: How many of a project's declared facets the line under the bar holds before the next line.
DECLARED_PER_ROW = 8
#: Figures shrink to fit the page, but not below this width (pixels); the page scrolls instead.
MIN_FIGURE_WIDTH = 320
#: How tall a figure not drawn yet stands (pixels): about a typical figure's height (they run
#: from 370 to 1100), so that what follows moves little when it comes.
PLACEHOLDER_HEIGHT = 440
NO_REPORT = "No report for the choices above."
COMPUTING = "Computing the report…"
#: How an estimate whose interval is still being computed reads: its value, then this.
PENDING_MARK = " …"
PENDING_TIP = "Interval still being computed"
#: What a figure not drawn yet reads, while it is being drawn and once the user stopped that.
DRAWING, NOT_DRAWN = "Drawing…", "Not drawn: Finish draws it"
#: How many characters of a rater's label the "Analyses for" box shows.
RATER_CHARACTERS = 22
UNCHANGED = "The report shown is unchanged."
#: How long the bar waits for the next click before computing (ms): choosing three models
#: computes one report, not three.
SETTLE_MS = 150
#: The key of the page's reads: any new draft supersedes all the work under way for the last.
READ_KEY = "report"
#: What a report is computed from: a change to any of it computes the report again.
REPORTED = (RecordKind.SCORES, RecordKind.RATERS, RecordKind.REVIEWS, RecordKind.BLOOM,
            RecordKind.QUESTIONS, RecordKind.RESPONSES, RecordKind.SAMPLES,
            RecordKind.ADJUDICATIONS, RecordKind.ESTIMATION, RecordKind.REFINEMENTS,
            RecordKind.SETTINGS, RecordKind.STEPS, RecordKind.TAXONOMIES)
#: What the bar's filter values, raters and estimation samples are read from (the settings
#: name the declared facets).
CHOICES = (RecordKind.RATERS, RecordKind.QUESTIONS, RecordKind.RESPONSES, RecordKind.ESTIMATION,
           RecordKind.SETTINGS)


def draft_work(cache: ScoreCache, options: ReportOptions, project: Project, task: Task) -> Draft:
    """The report's draft, from the scores ``cache`` keeps (on a worker). Reading the scores
    goes on when a newer draft supersedes this one (that one reuses them); the draft stops at
    its first step. The builder is imported here, not with the page: it loads scipy and
    matplotlib, which would otherwise add more than a second to every start of the app."""
    from physgrade.report.build import draft_report

    return draft_report(project, options, cache.store(project), task, cache.readings)


def finish_work(draft: Draft, index: int, project: None, task: Task) -> Section:
    """Section ``index`` of ``draft`` with its intervals and its figures drawn (on a worker; the
    draft has all it needs, no connection to the project)."""
    from physgrade.report.build import finish_section

    return finish_section(draft, index, task)


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
    filters = "; ".join(f"{titles.get(key) or facets.title(key)}: {', '.join(values)}"
                        for key, values in settings["filter"].items())
    created = datetime.fromisoformat(settings["created_at"]).astimezone()
    return " · ".join((
        count(settings["responses"], "response"), count(len(settings["judges"]), "judge"),
        count(len(settings["graders"]), "grader"), filters or "no filter",
        f"analyses for {settings['analyses_rater'] or 'nobody (nothing is graded)'}",
        f"computed {created:%d %b %Y, %H:%M}"))


class ReportTable(SmallTable):
    """One table of the report, fitted to the page's width without sideways scrolling.

    Columns take their contents' width (up to a limit: a longer text wraps, its tooltip has it
    whole). Where the page is narrower than that, every column gives up width in proportion to
    what it can spare, down to its longest word (an estimate's interval is one word, so a value
    wraps above its interval), and its rows and header grow taller. A long table scrolls inside
    a window of rows, so that its scroll bar and what follows it stay near."""

    def __init__(self, table: Table, parent: QWidget | None = None) -> None:
        super().__init__(list(table.columns), parent)
        self.setObjectName(table.name)
        self.titles = table.columns
        columns = range(len(table.columns))
        with self.batch():
            self.fill([tuple(_wrapping_only_between_words(table.text(r, c)) for c in columns)
                       for r in range(len(table.rows))])
            for c in columns:
                numeric, percent = table.numeric(c), table.columns[c] in table.percent
                if numeric:
                    self.title_item(c).setTextAlignment(NUMBER_ALIGNMENT)
                for r, row in enumerate(table.rows):
                    self._style(self.cell_item(r, c), row[c], numeric, percent)
        self.setWordWrap(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        if len(table.rows) > MAX_ROWS:
            self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        header = self.horizontalHeader()
        self.natural = [header.sectionSize(c) for c in columns]
        self.least = [min(self._least_width(c), width) for c, width in enumerate(self.natural)]
        edges = 2 * self.frameWidth() + (self.verticalScrollBar().sizeHint().width()
                                         if len(table.rows) > MAX_ROWS else 0)
        self.setMinimumWidth(sum(self.least) + edges)
        self.setMaximumWidth(sum(self.natural) + edges)
        self._fitted_to = -1
        self._fit_to(sum(self.natural))

    def text(self, row: int, column: int) -> str:
        """A cell's text as the report writes it, without what keeps it from wrapping
        mid-word."""
        return self.cell_item(row, column).text().replace(NO_BREAK_HYPHEN, "-").replace(NO_BREAK, " ")

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_to(self.viewport().width())

    def _least_width(self, column: int) -> int:
        """The width of the column's longest word, in its cells and its title."""
        cells = self.fontMetrics()
        titles = self.horizontalHeader().fontMetrics()
        words = [(cells, word) for r in range(self.rowCount())
                 for word in self.cell_item(r, column).text().split(" ")]
        words += [(titles, word) for word in self.titles[column].split()]
        return max(metrics.horizontalAdvance(word) for metrics, word in words) + WORD_ROOM

    def _fit_to(self, width: int) -> None:
        """Share ``width`` among the columns, wrap the titles to their columns, and make the
        table as tall as its rows (at most :data:`MAX_ROWS` of them)."""
        if width == self._fitted_to or width <= 0:
            return
        self._fitted_to = width
        natural, least = sum(self.natural), sum(self.least)
        spare = 1.0 if width >= natural else max(width - least, 0) / max(natural - least, 1)
        header = self.horizontalHeader()
        for c, (most, fewest) in enumerate(zip(self.natural, self.least)):
            header.resizeSection(c, int(fewest + spare * (most - fewest)))
            self.title_item(c).setText(self._title_within(c, header.sectionSize(c)))
        for r in range(self.rowCount()):
            self.setRowHeight(r, max(ROW_HEIGHT, ROW_MARGIN + max(
                self._text_height(self.cell_item(r, c).text(), header.sectionSize(c))
                for c in range(self.columnCount()))))
        shown = sum(self.rowHeight(r) for r in range(min(self.rowCount(), MAX_ROWS)))
        self.setFixedHeight(header.sizeHint().height() + 2 * self.frameWidth() + shown)

    def _text_height(self, text: str, width: int) -> int:
        """How tall ``text`` stands wrapped in a column ``width`` wide (measured here: the
        view's own measure leaves out the style sheet's padding, and cut a last line short)."""
        return self.fontMetrics().boundingRect(
            QRect(0, 0, width - WORD_ROOM, 0), Qt.TextFlag.TextWordWrap, text).height()

    def _title_within(self, column: int, width: int) -> str:
        """The column's title broken into lines that fit ``width``."""
        metrics, room = self.horizontalHeader().fontMetrics(), width - CELL_PADDING
        lines: list[str] = []
        for word in self.titles[column].split():
            if lines and metrics.horizontalAdvance(f"{lines[-1]} {word}") <= room:
                lines[-1] += f" {word}"
            else:
                lines.append(word)
        return "\n".join(lines)

    def _style(self, item: QTableWidgetItem, cell: Cell, numeric: bool, percent: bool) -> None:
        if numeric:
            item.setTextAlignment(NUMBER_ALIGNMENT)
        if isinstance(cell, Estimate) and cell.reason == PENDING:
            # The value now, muted and marked; its interval comes with the finished section.
            item.setText(cell_text(replace(cell, reason=None), percent) + PENDING_MARK)
            item.setToolTip(PENDING_TIP)
            item.setForeground(QColor(style.MUTED))
        elif isinstance(cell, Estimate) and cell.reason:
            # The reason would widen the column past its values: it goes in the tooltip.
            item.setToolTip(cell.reason)
            if cell.value is None:
                item.setText("n/a")
                item.setForeground(QColor(style.MUTED))
        elif self.fontMetrics().horizontalAdvance(item.text()) > MAX_COLUMN_WIDTH - CELL_PADDING:
            item.setToolTip(cell_text(cell, percent))

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


def _wrapping_only_between_words(text: str) -> str:
    """A cell's text as it may wrap: not inside its
    :func:`~physgrade.report.model.cell_parts` that must stay whole."""
    return "".join(part.replace(" ", NO_BREAK).replace("-", NO_BREAK_HYPHEN) if whole else part
                   for part, whole in cell_parts(text))


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


class FigurePlaceholder(QFrame):
    """Where a figure not drawn yet will be: a muted card about its size."""

    def __init__(self, figure: Figure, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(figure.name)
        self.setProperty("role", "card")
        self.setFixedHeight(PLACEHOLDER_HEIGHT)
        self.setMaximumWidth(TEXT_WIDTH)
        self.text = label(DRAWING, "muted")
        self.text.setAlignment(Qt.AlignmentFlag.AlignCenter)
        QVBoxLayout(self).addWidget(self.text)


def section_view(section: Section, tables: dict[str, ReportTable]) -> QScrollArea:
    """One section as a scrolling page (see :func:`section_content`)."""
    scroller = QScrollArea()
    scroller.setWidgetResizable(True)
    scroller.setFrameShape(QFrame.Shape.NoFrame)
    scroller.setWidget(section_content(section, tables))
    return scroller


def section_content(section: Section, tables: dict[str, ReportTable]) -> QWidget:
    """One section: intro, then each table and figure under its title; the table widgets are
    added to ``tables`` by name."""
    content = QWidget()
    layout = QVBoxLayout(content)
    layout.setContentsMargins(16, 18, 16, 24)  # narrow sides: the widest table fits 1280 px
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
    return content


def _add_figures(layout: QVBoxLayout, figures: list[Figure]) -> None:
    for figure in figures:
        layout.addSpacing(14)
        layout.addWidget(label(figure.title, "section"))
        # Drawing takes long: never here, on the GUI thread; the finished section brings it.
        layout.addWidget(FigureView(figure) if figure.drawn else FigurePlaceholder(figure))
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
    """The report of the open project, computed again whenever the bar or what it reports on
    changes: a draft at once, then its intervals and figures section by section."""

    page_title = "Reports"

    def __init__(self, ops: Operations, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ops = ops
        self.project_path: Path | None = None
        #: the open project's scores, kept between reports (None: no project)
        self.cache: ScoreCache | None = None
        #: the report on show: the draft's, each section replaced once it is finished
        self.report: Report | None = None
        self.report_options: ReportOptions | None = None
        self.draft: Draft | None = None
        self.export_folder = Path.home()
        self.tables: dict[str, ReportTable] = {}
        self._due = False  # the project changed since the report shown (or under way) was begun
        self._requested: ReportOptions | None = None  # what the last draft was asked for
        self._unfinished: list[int] = []  # the sections of the draft shown not finished yet
        self._stopped = False  # Stop was pressed (or finishing failed): Finish goes on
        self._restart = False  # the user asked for the draft under way: it is finished anyway
        self._worker: Worker | None = None
        self._drafting = False  # whether that worker makes a draft (else it finishes a section)
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(SETTLE_MS)
        self._settle.timeout.connect(self._bar_settled)
        ops.busy_changed.connect(self._show_state)  # Export waits for a long run to end

        bar = QHBoxLayout()
        bar.setSpacing(6)
        self.facets: dict[str, FacetButton] = {}
        for key, title in FACETS:
            button = FacetButton(title)
            button.changed.connect(self._bar_changed)
            self.facets[key] = button
            bar.addWidget(button)
        # The project's declared facets on a line of their own under the bar (hidden when it
        # declares none): a benchmark may declare half a dozen, and the bar must fit 1280 px.
        self.declared = DeclaredFacets(DECLARED_PER_ROW)
        self.declared.changed.connect(self._bar_changed)
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
        self.rater.currentIndexChanged.connect(self._bar_changed)
        bar.addWidget(self.rater)
        # Shown only when the project has estimation samples (see _offer_samples).
        self.sample_label = label("Sample")
        self.sample = QComboBox()
        self.sample.setToolTip("The estimation sample whose expert grades correct the judges' "
                               "scores (the section \"Model scores corrected by expert "
                               "grades\"); a hand-picked one is assumed random")
        self.sample.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.sample.currentIndexChanged.connect(self._bar_changed)
        self._newest_random: str | None = None
        bar.addSpacing(8)
        bar.addWidget(self.sample_label)
        bar.addWidget(self.sample)
        self.min_grades = QSpinBox()
        self.min_grades.setRange(0, 9999)
        self.min_grades.setValue(MIN_GRADES)
        self.min_grades.setSuffix(" grades")
        self.min_grades.setToolTip("People with fewer grades share one 'others' row in the "
                                   "tables and are left out of per-rater figures; the CSV and "
                                   "JSON exports keep their own rows. 0 folds nobody.")
        self.min_grades.valueChanged.connect(self._min_grades_changed)
        bar.addStretch(1)

        # What the report shows, with its buttons beside it: the choices above fill the width.
        self.summary = label(NO_REPORT, "muted")
        self.summary.setWordWrap(True)
        # Two lines, wrapped or not (as tall as the buttons): the report does not move down and
        # up again as the progress at the end of the line comes and goes.
        self.summary.setMinimumHeight(self.summary.fontMetrics().boundingRect(
            QRect(0, 0, TEXT_WIDTH, TEXT_WIDTH), Qt.TextFlag.TextWordWrap, "1\n2").height())
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("Stop computing the intervals and drawing the figures; "
                                    "the values shown stay")
        self.stop_button.clicked.connect(self.stop_finishing)
        self.finish_button = QPushButton("Finish")
        self.finish_button.setToolTip("Compute the intervals and draw the figures still missing")
        self.finish_button.clicked.connect(self.finish)
        self.export_button = QPushButton("Export…")
        self.export_button.clicked.connect(self.export)
        status = QHBoxLayout()
        status.setSpacing(6)
        status.addWidget(self.summary, 1)
        # Beside the summary, not in the bar above, which must fit a 1280 px screen.
        status.addWidget(label("Fold people under"))
        status.addWidget(self.min_grades)
        status.addSpacing(8)
        status.addWidget(self.stop_button)
        status.addWidget(self.finish_button)
        status.addWidget(self.export_button)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.setElideMode(Qt.TextElideMode.ElideRight)  # every section stays in reach
        self.tabs.setUsesScrollButtons(False)
        self.placeholder = label(NO_REPORT, "muted")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.body = QStackedWidget()
        self.body.addWidget(self.placeholder)
        self.body.addWidget(self.tabs)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(20, 14, 20, 8)
        layout.setSpacing(10)
        layout.addLayout(bar)
        declared = QHBoxLayout()
        declared.addWidget(self.declared)
        declared.addStretch(1)
        layout.addLayout(declared)
        layout.addLayout(status)
        layout.addWidget(self.body, 1)
        self._show_state()

    # -- the page -----------------------------------------------------------------------------

    def open(self, project: Project | None, person: str | None = None) -> None:
        """Offer the filter values and raters of ``project`` (keeping the choices that still
        apply) and compute its report; a closed project leaves no report.

        The stack drops the changes a page hears while it waits to be opened, so the scores
        kept are read again and the report computed again; the one on show (the same project's)
        stays until the new one replaces it."""
        self._settle.stop()
        if project is None:
            self.project_path, self.cache, self._due = None, None, False
            self._forget_report()
            return
        if project.path != self.project_path:
            self.project_path = project.path
            self.export_folder = project.path.parent / f"{project.path.stem} report"
            kept = REPORT_MIN_GRADES.get(project.path)
            self.min_grades.blockSignals(True)
            self.min_grades.setValue(int(kept) if kept and kept.isdigit() else MIN_GRADES)
            self.min_grades.blockSignals(False)
            self._forget_report()
        self.cache = ScoreCache()
        self._offer_choices(project)
        self._due = True
        self._update_if_due()

    def apply(self, changes: Changes) -> None:
        """Keep the scores up to date, and compute the report again when what it reports on
        changed (at once: reads run beside a long run)."""
        if self.cache is not None:
            self.cache.note(changes)
        if self.ops.project is None or not changes.touches(*REPORTED):
            return
        if changes.touches(*CHOICES):
            self._offer_choices(self.ops.project)
        self._due = True
        self._update_if_due()

    def stop(self) -> None:
        """The window is closing: nothing more is started (the operations end the read under
        way)."""
        self._settle.stop()
        self._stopped = True

    def help_section(self) -> SectionKeys | None:
        return None

    def focus_widget(self) -> QWidget:
        return self.tabs if self.report is not None else self.facets[FACETS[0][0]]

    def focus_search(self) -> bool:
        return False

    def showEvent(self, event: QShowEvent) -> None:
        """A recomputation left for later while the page was hidden is done now (after the
        window has handed the page what changed meanwhile, which may start it anyway), else
        the finishing that hiding the page paused goes on."""
        super().showEvent(event)
        QTimer.singleShot(0, self._update_if_due)

    def hideEvent(self, event: QHideEvent) -> None:
        """Another page is shown: finishing pauses, so that the bootstraps and the drawing do
        not take the processor from someone grading (a minimised window goes on)."""
        super().hideEvent(event)
        if not event.spontaneous() and self.finishing:
            assert self._worker is not None
            self._worker.cancel()

    # -- the bar ------------------------------------------------------------------------------

    def _offer_choices(self, project: Project) -> None:
        """The filter values and raters ``project`` has, keeping the chosen ones it still has."""
        choices = filter_choices(project)
        for key, button in self.facets.items():
            button.blockSignals(True)
            button.set_values(getattr(choices, key), button.chosen())
            button.blockSignals(False)
        self.declared.set_values(facets.choices(project))
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
        chosen = ResponseFilter.of({key: button.chosen() for key, button in self.facets.items()},
                                   self.declared.chosen())
        sample = self.sample.currentData()
        return ReportOptions(chosen, self.rater.currentText() or None,
                             sample=None if sample == self._newest_random else sample,
                             min_grades=self.min_grades.value())

    def _min_grades_changed(self, value: int) -> None:
        """Keep the threshold for the project, and compute the report it asks for."""
        if self.project_path is not None:
            REPORT_MIN_GRADES.set(self.project_path, str(value))
        self._bar_changed()

    def _bar_changed(self, *_: object) -> None:
        """Wait for the next click (the index a box hands on is no interval)."""
        self._settle.start()

    def _bar_settled(self) -> None:
        """The bar was left alone for a moment: compute what it asks for, unless that is what
        the report shown (or under way) is already for (a value ticked and unticked again). A
        report the user asks for is finished even if Stop was pressed for the last."""
        if self.options() != self._requested:
            self._restart = True
            self.update_report()

    # -- computing ----------------------------------------------------------------------------

    @property
    def worker(self) -> Worker | None:
        """The read under way for the report (its draft or a section's finishing), if any."""
        return self._worker

    @property
    def drafting(self) -> bool:
        return self._worker is not None and self._drafting

    @property
    def finishing(self) -> bool:
        """Intervals and figures are being computed, and the user has not stopped them."""
        return self._worker is not None and not self._drafting and not self._stopped

    @property
    def complete(self) -> bool:
        """A report is on show with every interval and figure."""
        return self.report is not None and not self._unfinished

    def _update_if_due(self) -> None:
        """Compute the report if it is due, else finish the one shown; only while on show."""
        if not self.isVisible():
            return
        if self._due:
            self.update_report()
        elif self._worker is None:
            self._finish_next()

    def update_report(self) -> Worker | None:
        """Compute the report the bar asks for now: its draft, then its intervals and figures.
        The work under way for the report is cancelled; the report shown stays until the new
        draft replaces it (or says why there is none)."""
        self._settle.stop()
        if self.cache is None:
            return None
        options = self.options()
        worker = self.ops.read(partial(draft_work, self.cache, options),
                               partial(self._show_draft, options), key=READ_KEY,
                               failed=self._draft_failed)
        if worker is not None:
            self._due, self._requested = False, options
        self._follow(worker, drafting=True)
        return worker

    def _follow(self, worker: Worker | None, drafting: bool) -> None:
        """Make ``worker`` the read under way for the report (None: none could start)."""
        self._worker, self._drafting = worker, drafting
        if worker is not None:
            for outcome in (worker.finished, worker.failed, worker.cancelled):
                outcome.connect(partial(self._read_ended, worker))
        self._show_state()

    def _read_ended(self, worker: Worker, *_outcome: object) -> None:
        """After the operations have handed on its result (which may have started the next
        read): finishing goes on where nothing else did, e.g. after a draft that failed, or a
        section that hiding the page paused, once the page is back on show."""
        if self._worker is worker:
            self._worker = None
            self._finish_next()

    def _show_draft(self, options: ReportOptions, draft: Draft) -> None:
        """Show ``draft`` at once, then finish its sections, unless the user stopped that and
        the draft is one the page made by itself (the project changed)."""
        self.draft = draft
        if self._restart:
            self._stopped = self._restart = False
        self._unfinished = list(range(len(draft.report.sections)))
        self._show_report(options, draft.report)
        self._finish_next()

    def _draft_failed(self, error: BaseException) -> None:
        """Say why; the report shown stays, and goes on being finished unless it was stopped
        (see _read_ended). Choosing the same again tries again."""
        self._requested, self._restart = self.report_options, False
        self.ops.fail("The report could not be computed", error,
                      "The report could not be computed. " + UNCHANGED)

    def _finish_next(self) -> None:
        """Finish the next section: the one on show if it is not yet, else the first that is
        not (nothing once every section is, once the user stopped, or while the page is
        hidden)."""
        if self.draft is None or self._stopped or not self._unfinished or not self.isVisible():
            self._show_state()
            return
        shown = self.tabs.currentIndex()
        index = shown if shown in self._unfinished else self._unfinished[0]
        worker = self.ops.read(partial(finish_work, self.draft, index),
                               partial(self._show_section, self.draft, index), key=READ_KEY,
                               failed=self._finishing_failed, needs_project=False)
        self._follow(worker, drafting=False)

    def _show_section(self, draft: Draft, index: int, section: Section) -> None:
        """Put finished ``section`` in place of its draft, then finish the next."""
        if draft is not self.draft or index not in self._unfinished:
            return  # a section of a report no longer on show
        self._unfinished.remove(index)
        self._replace_section(index, section)
        self._finish_next()

    def _finishing_failed(self, error: BaseException) -> None:
        """Say why; the sections not finished keep their marks, and Finish tries again."""
        self._stopped = True
        self.ops.fail("The report could not be finished", error,
                      "The intervals and figures still marked could not be computed; the "
                      "values shown are right.")

    def stop_finishing(self) -> None:
        """Stop computing intervals and drawing figures (Stop): the sections not finished keep
        their marks; Finish goes on."""
        self._stopped = True
        if self._worker is not None and not self._drafting:
            self._worker.cancel()
        self._show_state()

    def finish(self) -> None:
        """Go on computing the intervals and figures still missing (Finish)."""
        if self.drafting:
            self._restart = True  # the new draft is finished as soon as it is there
            return
        self._stopped = False
        self._finish_next()

    # -- showing ------------------------------------------------------------------------------

    def _forget_report(self) -> None:
        """No report, and none stopped: another project's is finished."""
        self.draft, self._unfinished, self._requested = None, [], None
        self._stopped = self._restart = False
        self._show_report(None, None)

    def _show_report(self, options: ReportOptions | None, report: Report | None) -> None:
        """Lay out ``report`` (None: none yet), staying on the section that was on show."""
        current = self.tabs.tabText(self.tabs.currentIndex())
        old = [page for i in range(self.tabs.count()) if (page := self.tabs.widget(i)) is not None]
        self.tabs.clear()
        for page in old:
            page.deleteLater()
        self.report, self.report_options, self.tables = report, options, {}
        for section in report.sections if report else []:
            # Readers see the folded tables; the report kept for export has every row.
            index = self.tabs.addTab(section_view(section.shown(), self.tables), section.tab)
            self.tabs.setTabToolTip(index, section.title)
            if section.tab == current:
                self.tabs.setCurrentIndex(index)
        self.body.setCurrentIndex(1 if report else 0)
        self._show_state()

    def _replace_section(self, index: int, section: Section) -> None:
        """Section ``index`` laid out again, where the reader had scrolled to in it."""
        assert self.report is not None
        sections = list(self.report.sections)
        for table in sections[index].tables:
            self.tables.pop(table.name, None)
        sections[index] = section
        self.report = Report(self.report.title, self.report.settings, sections)
        scroller = self.tabs.widget(index)
        assert isinstance(scroller, QScrollArea)
        position = scroller.verticalScrollBar().value()
        focused = QApplication.focusWidget()
        content = scroller.widget()
        had_focus = focused is not None and content is not None and content.isAncestorOf(focused)
        scroller.takeWidget().deleteLater()
        scroller.setWidget(section_content(section.shown(), self.tables))
        scroller.verticalScrollBar().setValue(position)
        if had_focus:  # not lost with the table that had it: the keyboard goes on from the tabs
            self.tabs.setFocus()
        self._show_state()

    def _show_state(self) -> None:
        """The summary says what the report shows and what is still coming; Stop while
        intervals and figures are computed, Finish once they were stopped; Export once the
        report is complete."""
        self.summary.setText(self._summary())
        self.placeholder.setText(COMPUTING if self.drafting else NO_REPORT)
        # Finish shows before Stop hides, in its place: the focus of a keyboard user who
        # pressed Stop goes on to Finish, not past it.
        finishable = bool(self._unfinished) and self._stopped and not self.drafting
        self.finish_button.setVisible(finishable)
        if finishable and self.stop_button.hasFocus():
            self.finish_button.setFocus()
        self.stop_button.setVisible(self.finishing)
        for card in self.tabs.findChildren(FigurePlaceholder):
            card.text.setText(NOT_DRAWN if self._stopped else DRAWING)
        refusal = self._export_refusal()
        self.export_button.setEnabled(not refusal)
        self.export_button.setToolTip(refusal or "Write the report as HTML, CSV and JSON")

    def _export_refusal(self) -> str:
        """Why the report cannot be exported now ("": it can)."""
        if self.report is None:
            return "No report to export yet"
        if not self.complete:
            return "The report can be exported once its intervals and figures are computed"
        return "Wait for the work under way to finish" if self.ops.busy else ""

    def _summary(self) -> str:
        if self.report is None:
            return COMPUTING if self.drafting else NO_REPORT
        text = summary_text(self.report)
        if self.drafting:
            return f"{text} · updating…"
        if not self._unfinished:
            return text
        total = len(self.report.sections)
        done = total - len(self._unfinished)
        if self._stopped:
            return f"{text} · intervals and figures stopped: {done} of {total} sections"
        return f"{text} · intervals and figures: {done} of {total} sections…"

    # -- export -------------------------------------------------------------------------------

    def export(self) -> None:
        dialog = ExportReportDialog(self.export_folder, self)
        if dialog.exec() == QDialog.DialogCode.Accepted:
            self.start_export(dialog.request())

    def start_export(self, request: ReportExport) -> Worker | None:
        """Write the report on show into ``request.folder``, once it is complete."""
        if self.report is None or not self.complete:
            self.ops.say(f"{self._export_refusal()}.")
            return None
        return self.ops.run("Writing the report", partial(write_files, self.report, request),
                            partial(self._exported, request),
                            failed="The report could not be written.",
                            cancelled="Writing the report was cancelled.", needs_project=False)

    def _exported(self, request: ReportExport, written: list[Path]) -> None:
        self.export_folder = request.folder
        self.ops.say(f"Report written to {request.folder}: "
                     f"{written_text(request.folder, written)}")
