"""The Overview page: where a project stands, at a glance, from :func:`physgrade.queries.project_info`.

Per-model template compliance is not shown: the core gives only the project-wide count of
compliant responses, so that is shown as a share of all responses instead.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QProgressBar,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from physgrade.changes import Changes, RecordKind
from physgrade.project import Project
from physgrade.queries import COUNTED, ProjectInfo, project_info
from physgrade.raters import HUMAN, LLM, RULES, rater_label
from physgrade.tasks import Task
from physgrade.team.progress import GraderProgress, grader_progress
from physgrade_ui.operations import Operations
from physgrade_ui.pages import Section
from physgrade_ui.widgets import NUMBER_ALIGNMENT, SmallTable, label

#: The tables counted on cards, in reading order.
CARDS = ("questions", "responses", "assessments", "judge_reviews", "bloom_labels")
RATER_KINDS = {HUMAN: "Person", LLM: "LLM", RULES: "Rules"}
#: The graders table's columns; the bar of each grader's progress is in PROGRESS_COLUMN.
GRADER_COLUMNS = ["Grader", "Assigned", "Graded", "Remaining", "Progress", "Pace",
                  "Graded without assignment"]
PROGRESS_COLUMN, PACE_COLUMN = GRADER_COLUMNS.index("Progress"), GRADER_COLUMNS.index("Pace")
#: What the graders section shows: it is read again when one of these changes.
GRADER_KINDS = (RecordKind.SCORES, RecordKind.ASSIGNMENTS, RecordKind.RATERS)


def share_text(part: int, whole: int, what: str, of: str = "responses") -> str:
    if not whole:
        return f"no {of} yet"
    return f"{part:,} of {whole:,} {of} {what} ({part / whole:.0%})"


class Card(QFrame):
    """One count with its name underneath."""

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setProperty("role", "card")
        self.number = label("0", "number", self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 12)
        layout.setSpacing(2)
        layout.addWidget(self.number)
        layout.addWidget(label(name, "muted", self))


class ShareBar:
    """A progress bar with its title before and its "N of M" sentence after, as one grid row
    (so that the bars of several rows line up)."""

    def __init__(self, title: str, grid: QGridLayout, row: int, parent: QWidget) -> None:
        self.bar = QProgressBar(parent)
        self.bar.setTextVisible(False)
        self.caption = label("", "muted", parent)
        grid.addWidget(label(title, None, parent), row, 0)
        grid.addWidget(self.bar, row, 1)
        grid.addWidget(self.caption, row, 2)

    def show_share(self, part: int, whole: int, what: str, of: str = "responses") -> None:
        self.bar.setRange(0, max(whole, 1))
        self.bar.setValue(part)
        self.caption.setText(share_text(part, whole, what, of))


def read_info(project: Project, task: Task) -> ProjectInfo:
    """The overview's numbers, read on a worker (counting 58,000 responses takes a moment)."""
    return project_info(project)


def read_graders(project: Project, task: Task) -> list[GraderProgress]:
    return grader_progress(project)


def pace_text(per_hour: float | None) -> str:
    return "—" if per_hour is None else f"{per_hour:.0f}/h"


class GradersTable(SmallTable):
    """Each grader's assignment: counts, a bar of the share graded, pace."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(GRADER_COLUMNS, parent)
        for column, tip in ((PACE_COLUMN, "Responses finished per working hour"),
                            (len(GRADER_COLUMNS) - 1, "Responses they finished grading that are "
                                                      "not assigned to them, such as those graded "
                                                      "before the assignments (which leave them "
                                                      "out)")):
            self.title_item(column).setToolTip(tip)

    def show_progress(self, progress: list[GraderProgress]) -> None:
        with self.batch():
            self.fill([(p.grader, p.assigned, p.graded, p.remaining, "", pace_text(p.per_hour),
                        p.unassigned_graded or "") for p in progress])
            for row, person in enumerate(progress):
                self.cell_item(row, PACE_COLUMN).setTextAlignment(NUMBER_ALIGNMENT)
                if person.assigned:
                    self.setCellWidget(row, PROGRESS_COLUMN, _bar(person))
                else:
                    self.removeCellWidget(row, PROGRESS_COLUMN)
        header = self.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(PROGRESS_COLUMN, QHeaderView.ResizeMode.Stretch)
        self.title_item(PACE_COLUMN).setTextAlignment(NUMBER_ALIGNMENT)


def _bar(person: GraderProgress) -> QWidget:
    """The share of the assignment graded, as a bar centred in its cell."""
    cell = QWidget()
    bar = QProgressBar(cell)
    bar.setTextVisible(False)
    bar.setRange(0, person.assigned)
    bar.setValue(person.graded)
    bar.setToolTip(f"{person.graded:,} of {person.assigned:,} assigned responses graded "
                   f"({person.graded / person.assigned:.0%})")
    layout = QVBoxLayout(cell)
    layout.setContentsMargins(6, 0, 6, 0)
    layout.addWidget(bar, 0, Qt.AlignmentFlag.AlignVCenter)
    return cell


class OverviewPage(QScrollArea):
    """Counts, progress, models, raters and topics of the open project."""

    page_title = "Overview"

    def __init__(self, ops: Operations, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ops = ops
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        content = QWidget(self)
        self.setWidget(content)

        self.title = label("", "title", content)
        self.path = label("", "muted", content)
        self.path.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.cards = {key: Card(COUNTED[key].capitalize(), content) for key in CARDS}
        shares = QGridLayout()
        shares.setHorizontalSpacing(16)
        shares.setVerticalSpacing(10)
        shares.setColumnStretch(1, 1)
        self.graded = ShareBar("Graded by a person", shares, 0, content)
        self.compliant = ShareBar("Template-compliant", shares, 1, content)
        self.pairs = ShareBar("Duplicate pairs decided", shares, 2, content)
        self.models = SmallTable(["Model", "Responses", "Template-compliant"], content)
        # Short headers: at 1280 px wide the raters' names need the room.
        self.raters = SmallTable(["Rater", "Kind", "Prompt", "Scored", "Labelled"], content)
        for column, tip in ((3, "Responses scored"), (4, "Questions labelled (Bloom)")):
            self.raters.title_item(column).setToolTip(tip)
        self.topics = SmallTable(["Topic", "Questions"], content)
        self.graders_title = label("Graders", "section", content)
        self.graders = GradersTable(content)
        self.graders_title.hide()
        self.graders.hide()

        cards = QHBoxLayout()
        cards.setSpacing(12)
        for card in self.cards.values():
            cards.addWidget(card)
        tables = QGridLayout()
        tables.setHorizontalSpacing(24)
        tables.setVerticalSpacing(6)
        tables.addWidget(label("Models", "section", content), 0, 0)
        tables.addWidget(self.models, 1, 0)
        tables.addWidget(label("Topics", "section", content), 2, 0)
        tables.addWidget(self.topics, 3, 0)
        tables.addWidget(label("Raters", "section", content), 0, 1)
        tables.addWidget(self.raters, 1, 1, 3, 1, Qt.AlignmentFlag.AlignTop)
        tables.setColumnStretch(0, 2)
        tables.setColumnStretch(1, 3)

        layout = QVBoxLayout(content)
        layout.setContentsMargins(32, 24, 32, 32)
        layout.setSpacing(10)
        layout.addWidget(self.title)
        layout.addWidget(self.path)
        layout.addSpacing(10)
        layout.addLayout(cards)
        layout.addSpacing(14)
        layout.addLayout(shares)
        layout.addSpacing(14)
        layout.addWidget(self.graders_title)
        layout.addWidget(self.graders)
        layout.addSpacing(8)
        layout.addLayout(tables)
        layout.addStretch(1)

    # -- the page ----------------------------------------------------------------------------

    def open(self, project: Project | None, person: str | None) -> None:
        if project is not None:
            self.ops.read(read_info, self.show_info, key=self)
            self.ops.read(read_graders, self.show_graders, key=self.graders)

    def apply(self, changes: Changes) -> None:
        """Every count may move with any change: read them all again, in the background (the
        graders' progress when grades, assignments or people changed)."""
        self.ops.read(read_info, self.show_info, key=self)
        if changes.touches(*GRADER_KINDS):
            self.ops.read(read_graders, self.show_graders, key=self.graders)

    def stop(self) -> None:
        """Nothing runs on this page's behalf but reads, which the operations end."""

    def help_section(self) -> Section | None:
        return None

    def focus_widget(self) -> QWidget:
        return self

    def focus_search(self) -> bool:
        return False

    def show_info(self, info: ProjectInfo) -> None:
        path = Path(info.path)
        self.title.setText(path.name)
        self.path.setText(f"{path.parent}  ·  schema version {info.schema_version}")
        for key, card in self.cards.items():
            card.number.setText(f"{info.counts[key]:,}")
        responses = info.counts["responses"]
        self.graded.show_share(info.graded_responses, responses, "graded")
        self.compliant.show_share(info.compliant_responses, responses, "follow the template")
        self.pairs.show_share(info.decided_pairs, info.candidate_pairs, "decided",
                              "candidate pairs")
        self.models.fill([(model, count, info.compliant_by_model[model] / count)
                          for model, count in info.models.items()])
        self.raters.fill([(rater_label(r.name, "", r.run), RATER_KINDS.get(r.kind, r.kind),
                           r.prompt_version or "—",
                           r.responses, r.questions) for r in info.raters])
        self.topics.fill(list(info.topics.items()))

    def show_graders(self, progress: list[GraderProgress]) -> None:
        """One row per person with an assignment or a grade; no section while there is none."""
        self.graders.show_progress(progress)
        self.graders_title.setVisible(bool(progress))
        self.graders.setVisible(bool(progress))
