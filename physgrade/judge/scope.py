"""Which items a judge run covers: a report-style filter, a set of responses, a limit, and
whether to retry answers that failed before."""

from __future__ import annotations

from dataclasses import dataclass, field

from physgrade.report.options import FACET_COLUMNS, QUESTION_FACETS, ReportFilter

#: The filter facets that select responses (the rest choose raters, which a run does not), and
#: those that select questions, each with its SQL column.
RESPONSE_COLUMNS = FACET_COLUMNS
QUESTION_COLUMNS = {facet: FACET_COLUMNS[facet] for facet in QUESTION_FACETS}


@dataclass(frozen=True, slots=True)
class Scope:
    filter: ReportFilter = field(default_factory=ReportFilter)
    limit: int | None = None
    retry_failed: bool = False
    #: Only these responses (None: all the filter lets through); a refinement's held-out part.
    responses: frozenset[str] | None = None

    def where(self, questions_only: bool = False) -> tuple[str, list[str]]:
        """An SQL condition over ``r`` (responses) and ``q`` (questions), and its parameters."""
        facets = QUESTION_COLUMNS if questions_only else RESPONSE_COLUMNS
        if questions_only and self.responses is not None:
            raise ValueError("a run over questions cannot be narrowed to responses")
        refused = [name for name in ("judges", "graders", *RESPONSE_COLUMNS)
                   if getattr(self.filter, name) and name not in facets]
        if refused:
            raise ValueError(f"a judge run cannot be narrowed by {', '.join(refused)}; use "
                             f"{', '.join(facets)}")
        if self.limit is not None and self.limit < 1:
            raise ValueError("--limit must be at least 1")
        return self.filter.where(facets)
