"""What a report covers: which responses and raters (a :class:`~physgrade.selection.ResponseFilter`),
whose grades the study's analyses use, and how few grades fold a person into "others".

Kept apart from the report builder, which needs pandas, scipy and matplotlib: the app offers
these choices without loading any of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from physgrade.raters import LLM
from physgrade.selection import ResponseFilter

if TYPE_CHECKING:
    from physgrade.scoring.tables import ScoreData

#: A person with fewer grades than this in a report is folded into one "others" row of its
#: tables and left out of its per-rater figures (:mod:`physgrade.report.folding`). Ten: below
#: it an agreement or a share rests on so few responses that its 95% interval spans most of
#: the scale (with 9 responses all agreeing, Wilson's interval still reaches down to 70%), so
#: a row of its own reads as a finding it is not.
MIN_GRADES = 10


def language_model_judges(data: ScoreData) -> list[str]:
    """The report's judges that are language models (not the rule checker), in report order."""
    return [judge for judge in data.judges if data.kinds[judge] == LLM]


@dataclass(frozen=True, slots=True)
class ReportOptions:
    """What to report on. ``rater`` is whose grades the study's analyses (the last section) use: a
    judge label, a grader, or :data:`~physgrade.raters.HUMAN_CONSENSUS`; None picks the
    consensus if people have graded, else the first judge. ``sample`` names an estimation sample
    (see below). ``min_grades``: people with fewer grades are folded into one row (see
    :data:`MIN_GRADES`; 0 or 1 folds nobody)."""

    filter: ResponseFilter = field(default_factory=ResponseFilter)
    rater: str | None = None
    resamples: int = 1000
    seed: int = 0
    #: The estimation sample whose expert grades correct the judges' scores (the section "Model
    #: scores corrected by expert grades"); None takes the newest drawn at random.
    sample: str | None = None
    min_grades: int = MIN_GRADES
