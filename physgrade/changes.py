"""What a write changed: the value every core write returns, so that views can refresh themselves.

A core write (a score, a Bloom label, an import, a judge run…) returns a :class:`Changes` naming
the kinds of records it touched and, where that is cheap to know, which responses and questions.
The desktop app broadcasts it after the write; each page re-reads only when a change touches
what it shows. ``None`` for responses or questions means "possibly any of them".
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Iterable


class RecordKind(StrEnum):
    """The kinds of records a write can change (one vocabulary for the core and the app)."""

    QUESTIONS = "questions"      # question texts, references, options, metadata
    RESPONSES = "responses"      # model responses
    SCORES = "scores"            # any rater's scores, notes and assessments (people, judges, rules)
    RATERS = "raters"            # the raters themselves (a new grader, judge or prompt version)
    BLOOM = "bloom"              # Bloom labels, adjudications and questions' final labels
    REVIEWS = "reviews"          # reviews of judge verdicts
    SAMPLES = "samples"          # audit samples and the judges' blind names
    PAIRS = "pairs"              # near-duplicate audits, pairs, their labels and decisions
    EMBEDDINGS = "embeddings"    # stored question embeddings
    BATCHES = "batches"          # judge batches submitted and collected
    RUBRICS = "rubrics"          # a project's rubric texts
    ASSIGNMENTS = "assignments"  # who is to grade which responses
    PACKS = "packs"              # the grader packs made from the project (no page shows them)
    CONFLICTS = "conflicts"      # merge conflicts found, and how they were settled
    ADJUDICATIONS = "adjudications"  # adjudicators' final values of criteria
    ESTIMATION = "estimation"    # estimation samples (physgrade.estimation)
    REFINEMENTS = "refinements"  # judge refinements: splits, refined prompts (physgrade.refinement)
    SETTINGS = "settings"        # the project's own settings (its answer tolerance)
    STEPS = "steps"              # marks of where a response's reasoning breaks (step_marks)
    TAXONOMIES = "taxonomies"    # a project's failure taxonomies (their texts)


Ids = frozenset[str] | None


def _ids(values: Iterable[str] | None) -> Ids:
    return None if values is None else frozenset(values)


def _union(a: Ids, b: Ids) -> Ids:
    return None if a is None or b is None else a | b


@dataclass(frozen=True, slots=True)
class Changes:
    """Kinds of records changed, and for which responses and questions (None: any)."""

    kinds: frozenset[RecordKind] = frozenset()
    responses: Ids = None
    questions: Ids = None

    @classmethod
    def of(cls, *kinds: RecordKind, responses: Iterable[str] | None = None,
           questions: Iterable[str] | None = None) -> "Changes":
        """``Changes.of(RecordKind.SCORES, responses=["r-1"])``."""
        return cls(frozenset(kinds), _ids(responses), _ids(questions))

    def __bool__(self) -> bool:
        return bool(self.kinds)

    def __or__(self, other: "Changes") -> "Changes":
        if not self:
            return other
        if not other:
            return self
        return Changes(self.kinds | other.kinds, _union(self.responses, other.responses),
                       _union(self.questions, other.questions))

    def touches(self, *kinds: RecordKind) -> bool:
        """True if any of ``kinds`` changed."""
        return not self.kinds.isdisjoint(kinds)

    def text(self) -> str:
        """A short account for logs and status lines, e.g. "scores (1 response)"."""
        if not self:
            return "nothing"
        where = []
        if self.responses is not None:
            where.append(f"{len(self.responses):,} response{'' if len(self.responses) == 1 else 's'}")
        if self.questions is not None:
            where.append(f"{len(self.questions):,} question{'' if len(self.questions) == 1 else 's'}")
        kinds = ", ".join(sorted(self.kinds))
        return f"{kinds} ({', '.join(where)})" if where else kinds


#: A write that changed nothing.
NOTHING = Changes()
#: Everything may have changed (another project opened, a refresh asked for).
EVERYTHING = Changes(frozenset(RecordKind))
