"""Which items a judge run covers: a report-style filter, a set of responses, a limit, and
whether to retry answers that failed before."""

from __future__ import annotations

from dataclasses import dataclass, field

from physgrade.selection import QUESTION_FACETS, RATER_FACETS, RESPONSE_FACETS, ResponseFilter


@dataclass(frozen=True, slots=True)
class Scope:
    filter: ResponseFilter = field(default_factory=ResponseFilter)
    limit: int | None = None
    retry_failed: bool = False
    #: Only these responses (None: all the filter lets through); a refinement's held-out part.
    responses: frozenset[str] | None = None

    def where(self, questions_only: bool = False) -> tuple[str, list[str]]:
        """An SQL condition over ``r`` (responses) and ``q`` (questions), and its parameters."""
        # The rater facets choose raters, which a run does not; a run over questions is
        # narrowed by the facets a question has.
        facets = QUESTION_FACETS if questions_only else RESPONSE_FACETS
        if questions_only and self.responses is not None:
            raise ValueError("a run over questions cannot be narrowed to responses")
        refused = [facet.key for facet in (*RATER_FACETS, *RESPONSE_FACETS)
                   if getattr(self.filter, facet.key) and facet not in facets]
        if refused:
            raise ValueError(f"a judge run cannot be narrowed by {', '.join(refused)}; use "
                             f"{', '.join(facet.key for facet in facets)}")
        if self.limit is not None and self.limit < 1:
            raise ValueError("--limit must be at least 1")
        return self.filter.where(facets)
