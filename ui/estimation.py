"""Estimation samples in the app: Grading ▸ Draw Estimation Sample…

The dialog collects a name, a size, the facets to stratify over and a seed, and says as they
change what the draw will take (the core's own allocation, :func:`physgrade.estimation.sample.
allocation`, over stratum sizes read in the background before it opens). The draw is a quick write through the
window's :class:`~physgrade_ui.operations.Operations`, like the audit's sample: refused, the
dialog stays open with the core's reason; drawn, it closes and the sample reaches the Grade
page's queue (its Sample filter) through the broadcast.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from itertools import combinations
from typing import Callable

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLineEdit, QSpinBox, QWidget

from physgrade.changes import NOTHING, Changes
from physgrade.estimation import sample
from physgrade.estimation.sample import EstimationSample
from physgrade.project import Project
from physgrade.selection import NAMED
from physgrade.tasks import Task
from physgrade.wording import sentence
from physgrade_ui import transfer
from physgrade_ui.operations import Operations
from physgrade_ui.widgets import SeedField, label, restyle

#: The facets a sample can be stratified over, as the dialog names them (with their Alt keys).
FACET_NAMES = tuple((facet, f"&{NAMED[facet].title}") for facet in sample.FACETS)
#: The size offered first: a tenth of the responses, at most this many (expert grades are dear).
DEFAULT_SIZE = 200
NO_RESPONSES = ("An estimation sample is drawn from the project's responses, and this project "
                "has none yet. Import some first (File ▸ Import).")
Facets = tuple[str, ...]


@dataclass(slots=True)
class EstimationDraw:
    """A sample asked for, as a write for the operations; after it ran, the sample drawn or
    the core's reason for refusing it."""

    name: str
    size: int
    seed: int
    strata: Facets
    #: whether to filter the Grade page's queue to it once drawn
    grade_it: bool = True
    sample: EstimationSample | None = None
    refusal: str | None = None

    def __call__(self, project: Project) -> Changes:
        """Draw and store it; a refusal of what was asked (a name taken, too few for the
        strata: the core's ValueError) is kept to show next to the form, nothing stored."""
        try:
            self.sample = sample.draw(project, self.name, self.size, self.seed, self.strata)
        except ValueError as exc:
            self.refusal = sentence(str(exc))
            return NOTHING
        self.refusal = None
        return self.sample.changes


def preview(sizes: dict[str, int], size: int, facets: Facets) -> tuple[str, bool]:
    """What a draw of ``size`` over ``facets`` takes, in a line; and whether it can be drawn."""
    try:
        shares = sample.allocation(sizes, size)
    except ValueError as exc:
        return sentence(str(exc)), False
    population = sum(sizes.values())
    if not facets:
        return (f"Draws {size:,} of {population:,} responses at random, each with the same "
                f"chance ({size / population:.1%}).", True)
    least, most = min(shares.values()), max(shares.values())
    each = f"{least:,}" if least == most else f"{least:,} to {most:,}"
    return (f"Draws {size:,} of {population:,} responses at random: {each} from each of "
            f"{len(shares):,} strata ({' × '.join(facets)}), the same number as far as a "
            "stratum has responses.", True)


class EstimationDialog(transfer.TransferDialog[EstimationDraw]):
    """Name, size, strata and seed of a new estimation sample, with a line saying what the
    draw takes. On accept it is handed to ``submit`` (which draws it through the operations):
    drawn, the dialog closes; refused, it stays open with the core's reason, nothing stored."""

    size: QSpinBox  # type: ignore[assignment]  # the sample's size: hides QWidget.size() (fit_screen knows)

    def __init__(self, taken: set[str], sizes: dict[Facets, dict[str, int]],
                 submit: Callable[[EstimationDraw], None], parent: QWidget | None = None) -> None:
        super().__init__("Draw Estimation Sample", "&Draw sample", parent)
        self.sizes = sizes
        self.submit = submit
        number = len(taken) + 1
        while f"sample {number}" in {name.casefold() for name in taken}:  # as the core compares
            number += 1
        self.name = QLineEdit(f"Sample {number}", self)
        self.name.selectAll()
        population = sum(sizes[()].values())
        self.size = QSpinBox(self)
        self.size.setRange(1, population)
        self.size.setValue(min(DEFAULT_SIZE, max(1, population // 10)))
        self.size.setGroupSeparatorShown(True)
        self.size.setSuffix(f" of {population:,} responses")
        self.facets = {facet: QCheckBox(name, self) for facet, name in FACET_NAMES}
        facets = QHBoxLayout()
        facets.setSpacing(16)
        for box in self.facets.values():
            box.setToolTip("Draw the same number from each, so that a small one is graded too")
            facets.addWidget(box)
        facets.addStretch(1)
        self.seed = SeedField("Ne&w seed", "The same seed and data give the same sample", self)
        for spin in (self.size, self.seed.spin):
            spin.setMinimumWidth(220)
        self.summary = label("", "muted", self)
        self.summary.setWordWrap(True)
        self.grade_it = QCheckBox("&Filter the Grade page's queue to it", self)
        self.grade_it.setChecked(True)

        self.form.addRow("&Name", self.name)
        self.form.addRow("&Size", self.size)
        self.form.addRow("Stratify by", facets)
        self.form.addRow("S&eed", self.seed)
        self.form.addRow("", self.summary)
        self.form.addRow("", self.grade_it)
        note = label("Experts grade the sample on the Grade page; their grades then correct a "
                     "judge's scores on every response. A sample is drawn once and kept: its "
                     "name is never drawn again, and the same seed and data give the same "
                     "sample.", "muted", self)
        note.setWordWrap(True)
        self.form.insertRow(0, note)
        self.size.valueChanged.connect(self.show_summary)
        for box in self.facets.values():
            box.toggled.connect(self.show_summary)
        self.show_summary()
        self.name.setFocus()  # the buttons come first in the focus chain: start at the form
        self.resize(580, self.sizeHint().height())

    def chosen_facets(self) -> Facets:
        return tuple(facet for facet, box in self.facets.items() if box.isChecked())

    def show_summary(self) -> None:
        """Say what the draw takes, or why it cannot be drawn (in the error colour)."""
        facets = self.chosen_facets()
        text, possible = preview(self.sizes[facets], self.size.value(), facets)
        self.summary.setText(text)
        restyle(self.summary, "role", "muted" if possible else "error")

    def accept(self) -> None:
        draw = EstimationDraw(self.name.text(), self.size.value(), self.seed.value(),
                              self.chosen_facets(), self.grade_it.isChecked())
        self.submit(draw)
        if draw.refusal is not None:
            self.refuse(draw.refusal)
        else:  # drawn, or kept until the project is free, or failed (the operations said so)
            self.grant(draw)


@dataclass(frozen=True, slots=True)
class Setup:
    """What the dialog offers, read in the background (a project of 58,000 responses takes
    about half a second): the names taken, and the stratum sizes for each choice of facets."""

    taken: set[str]
    sizes: dict[Facets, dict[str, int]]


def read_setup(project: Project, task: Task) -> Setup:
    return Setup({stored.name for stored in sample.samples(project)},
                 {facets: sample.stratum_sizes(project, facets)
                  for n in range(len(sample.FACETS) + 1)
                  for facets in combinations(sample.FACETS, n)})


def draw_sample(ops: Operations, parent: QWidget, grade: Callable[[str], None]) -> None:
    """Grading ▸ Draw Estimation Sample…: the dialog (window-modal, not blocking) once its
    setup is read, or why there is nothing to draw from. ``grade(name)`` filters the Grade
    page's queue to a sample drawn with that box ticked."""
    ops.read(read_setup, done=partial(_open_dialog, ops, parent, grade), key=Setup)


def _open_dialog(ops: Operations, parent: QWidget, grade: Callable[[str], None],
                 setup: Setup) -> None:
    if not setup.sizes[()]:
        ops.say(NO_RESPONSES, 0)
        ops.inform("No responses to draw from", NO_RESPONSES)
        return
    dialog = EstimationDialog(setup.taken, setup.sizes, partial(_draw, ops, grade), parent)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    ops.project_changed.connect(dialog.reject)  # the inputs were the closed project's
    dialog.open()


def _draw(ops: Operations, grade: Callable[[str], None], draw: EstimationDraw) -> None:
    """Draw and store a sample through the operations."""
    ops.write(draw, done=partial(_drawn, ops, grade, draw), what="estimation sample")


def _drawn(ops: Operations, grade: Callable[[str], None], draw: EstimationDraw,
           changes: Changes) -> None:
    """Once stored: filter the queue to it if asked (showing the Grade page clears the status
    bar, so this comes first), then say what was drawn."""
    if draw.sample is None:  # refused: the dialog, if still open, shows why too
        ops.say(f"Estimation sample “{draw.name.strip()}” not drawn: {draw.refusal}")
        return
    # After the broadcast that follows this: the queue must hold the sample first.
    QTimer.singleShot(0, ops, partial(_show_drawn, ops, grade, draw.sample, draw.grade_it))


def _show_drawn(ops: Operations, grade: Callable[[str], None], drawn: EstimationSample,
                grade_it: bool) -> None:
    if grade_it:
        grade(drawn.name)
    ops.say(f"Estimation sample “{drawn.name}” drawn: {drawn.text()}", 0)
