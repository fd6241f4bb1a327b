"""The compare strip: other raters' scores of the item, shown only after the grader's own.

The core decides when the strip may show (:func:`physgrade.grading.compare` returns None while
the grade is incomplete); this widget only lays out what it is given: one column per rater,
one row per criterion, disagreements with the grader marked.
"""

from __future__ import annotations

from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QTableWidgetItem, QVBoxLayout, QWidget

from physgrade.grading import GradingItem, OtherVerdict
from physgrade.scores import HUMAN, LLM, RULES
from physgrade_ui import style
from physgrade_ui.widgets import NUMBER_ALIGNMENT, SmallTable, label

KIND_NAMES = {HUMAN: "grader", LLM: "judge", RULES: "rule check"}
HIDDEN = ("Blind grading: judge verdicts and colleagues' scores appear here once you have "
          "scored every criterion.")
NOBODY = "Nobody else has scored this response yet."


def value_text(value: int | None) -> str:
    return "N/A" if value is None else str(value)


class ComparisonStrip(QWidget):
    """A criteria-by-raters table, or a line saying why there is none."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.message = label(HIDDEN, "muted")
        self.message.setWordWrap(True)
        self.table = SmallTable(["Criterion"])
        self.table.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(label("Compare", "section"))
        layout.addWidget(self.message)
        layout.addWidget(self.table)

    @property
    def revealed(self) -> bool:
        return not self.table.isHidden()

    def show_verdicts(self, item: GradingItem, verdicts: list[OtherVerdict] | None) -> None:
        if not verdicts:
            self.message.setText(HIDDEN if verdicts is None else NOBODY)
            self._reveal(False)
            return
        mine = item.values
        columns = [("You", mine, [])] + [(v.rater, v.scores, v.disagreements(mine))
                                         for v in verdicts]
        with self.table.batch():
            self.table.setColumnCount(len(columns) + 1)
            self.table.setHorizontalHeaderLabels(["Criterion"] + [name for name, _, _ in columns])
            for c, verdict in enumerate(verdicts, start=2):
                version = f", prompt {verdict.prompt_version}" if verdict.prompt_version else ""
                self.table.horizontalHeaderItem(c).setToolTip(
                    f"{verdict.rater} ({KIND_NAMES.get(verdict.kind, verdict.kind)}{version})"
                    + (f"\n{verdict.comment}" if verdict.comment else ""))
            self._fill(item, columns)
        self._reveal(True)

    def _reveal(self, revealed: bool) -> None:
        if self.revealed != revealed:  # showing a widget again still costs a layout pass
            self.message.setVisible(not revealed)
            self.table.setVisible(revealed)

    def _fill(self, item: GradingItem,
              columns: list[tuple[str, dict[str, int | None], list[str]]]) -> None:
        mine = item.values
        keys = list(item.rubric.keys)
        self.table.fill([(key, *[""] * len(columns)) for key in keys] + [("Total",)
                                                                           + ("",) * len(columns)])
        bold = QFont(self.table.font())
        bold.setBold(True)
        for c, (_, scores, disagreeing) in enumerate(columns, start=1):
            for r, key in enumerate(keys):
                cell = QTableWidgetItem(value_text(scores[key]) if key in scores else "·")
                cell.setTextAlignment(NUMBER_ALIGNMENT)
                if key in disagreeing:
                    cell.setBackground(QBrush(QColor(style.WARN_BACKGROUND)))
                    cell.setForeground(QBrush(QColor(style.WARN)))
                    cell.setFont(bold)
                    cell.setToolTip(f"You gave {value_text(mine[key])}")
                self.table.setItem(r, c, cell)
            earned, possible = item.rubric.total(scores)
            total = QTableWidgetItem(f"{earned}/{possible}")
            total.setTextAlignment(NUMBER_ALIGNMENT)
            total.setFont(bold)
            self.table.setItem(len(keys), c, total)
