"""What a report covers: which responses and raters, whose grades the study's analyses use,
and the choices a project offers for both.

Kept apart from the report builder, which needs pandas, scipy and matplotlib: the app offers
these choices without loading any of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Mapping

from physgrade.project import Project
from physgrade.scores import HUMAN, LLM
from physgrade.taxonomy import BLOOM_COGNITIVE, KINDS, TOPICS, in_vocabulary_order

if TYPE_CHECKING:
    from physgrade.score_tables import ScoreData

#: The rater that stands for the people's agreed grade (see :func:`physgrade.score_tables.select`).
HUMAN_CONSENSUS = "human consensus"
#: The facets of a response a filter narrows, each with the attribute (or column) holding it:
#: the same name on a response, a review of one, and a question (which has no model).
RESPONSE_FACETS = {"models": "model", "topics": "topic", "kinds": "kind", "bloom": "bloom_cognitive"}
#: Those a question has (a Bloom label, or a judge run over questions, is a question's).
QUESTION_FACETS = {facet: name for facet, name in RESPONSE_FACETS.items() if facet != "models"}
#: Each facet's column in SQL over responses ``r`` joined with their questions ``q``.
FACET_COLUMNS = {facet: f"{'q' if facet in QUESTION_FACETS else 'r'}.{name}"
                 for facet, name in RESPONSE_FACETS.items()}
#: A person with fewer grades than this in a report is folded into one "others" row of its
#: tables and left out of its per-rater figures (:mod:`physgrade.report.folding`). Ten: below
#: it an agreement or a share rests on so few responses that its 95% interval spans most of
#: the scale (with 9 responses all agreeing, Wilson's interval still reaches down to 70%), so
#: a row of its own reads as a finding it is not.
MIN_GRADES = 10
#: What a report may be narrowed to. Empty sets mean "all".
FILTER_FIELDS = {"models": "model", "topics": "topic", "kinds": "kind",
                 "bloom": "Bloom level", "judges": "judge", "graders": "grader"}


@dataclass(frozen=True, slots=True)
class ReportFilter:
    """Which responses and raters a report covers: facets combine with AND, values with OR.

    ``judges`` are rater labels (see :func:`rater_label`) of language models and rule
    checkers; ``graders`` are people's names. ``bloom`` holds Bloom cognitive levels.
    """

    models: frozenset[str] = frozenset()
    topics: frozenset[str] = frozenset()
    kinds: frozenset[str] = frozenset()
    bloom: frozenset[str] = frozenset()
    judges: frozenset[str] = frozenset()
    graders: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, terms: list[str]) -> "ReportFilter":
        """Read ``FIELD=VALUE[,VALUE...]`` terms (the command line's ``--filter``); a field
        given twice accepts the values of both."""
        chosen: dict[str, set[str]] = {}
        singular = {name: field for field, name in FILTER_FIELDS.items()} | {
            "bloom_cognitive": "bloom", "kind": "kinds", "topic": "topics", "model": "models",
            "judge": "judges", "grader": "graders"}
        for term in terms:
            name, sep, values = term.partition("=")
            key = name.strip().lower()
            field = key if key in FILTER_FIELDS else singular.get(key)
            if not sep or field is None or not values.strip():
                raise ValueError(f"filter {term!r}: write FIELD=VALUE[,VALUE...] with FIELD one "
                                 f"of {', '.join(FILTER_FIELDS)}")
            chosen.setdefault(field, set()).update(v.strip() for v in values.split(",")
                                                   if v.strip())
        return cls(**{field: frozenset(values) for field, values in chosen.items()})

    def where(self, columns: dict[str, str]) -> tuple[str, list[str]]:
        """An SQL condition for the facets named in ``columns`` (facet -> column, such as
        ``{"topics": "q.topic"}``), with its parameters; "1" when none of them is in use."""
        conditions, params = [], []
        for facet, column in columns.items():
            wanted = sorted(getattr(self, facet))
            if wanted:
                conditions.append(f"{column} IN ({', '.join('?' * len(wanted))})")
                params += wanted
        return " AND ".join(conditions) or "1", params

    def admits(self, item: object, facets: Mapping[str, str] = RESPONSE_FACETS) -> bool:
        """Whether ``item`` is within the filter, by the attributes ``facets`` names (facet ->
        attribute): facets combine with AND, values with OR."""
        return all(getattr(item, attribute) in getattr(self, facet)
                   for facet, attribute in facets.items() if getattr(self, facet))

    def describe(self) -> dict[str, list[str]]:
        """The facets in use, for the report's settings."""
        return {f.name: sorted(getattr(self, f.name)) for f in fields(self)
                if getattr(self, f.name)}


def rater_label(name: str, prompt_version: str) -> str:
    """How a rater is named in reports: a judge under another prompt version is another rater."""
    return f"{name} [{prompt_version}]" if prompt_version else name


def language_model_judges(data: ScoreData) -> list[str]:
    """The report's judges that are language models (not the rule checker), in report order."""
    return [judge for judge in data.judges if data.kinds[judge] == LLM]


@dataclass(frozen=True, slots=True)
class ReportOptions:
    """What to report on. ``rater`` is whose grades the study's analyses (the last section) use: a
    judge label, a grader, or :data:`HUMAN_CONSENSUS`; None picks the consensus if people have
    graded, else the first judge. ``sample`` names an estimation sample (see below).
    ``min_grades``: people with fewer grades are folded into one row (see :data:`MIN_GRADES`;
    0 or 1 folds nobody)."""

    filter: ReportFilter = field(default_factory=ReportFilter)
    rater: str | None = None
    resamples: int = 1000
    seed: int = 0
    #: The estimation sample whose expert grades correct the judges' scores (the section "Model
    #: scores corrected by expert grades"); None takes the newest drawn at random.
    sample: str | None = None
    min_grades: int = MIN_GRADES


@dataclass(frozen=True, slots=True)
class ReportChoices:
    """The values each report filter can take in a project, and the raters the study's
    analyses can be run for (the default first)."""

    models: list[str]
    topics: list[str]
    kinds: list[str]
    bloom: list[str]
    judges: list[str]
    graders: list[str]
    raters: list[str]


def report_choices(project: Project) -> ReportChoices:
    """What a project's report can be narrowed to (a few indexed queries: the app asks this
    when its Reports page opens)."""
    conn = project.conn
    column = {name: {v for (v,) in conn.execute(f"SELECT DISTINCT {name} FROM questions "
                                                 f"WHERE {name} IS NOT NULL")}
              for name in ("topic", "kind", "bloom_cognitive")}
    labels = [(rater_label(name, version), kind) for name, version, kind in conn.execute(
        "SELECT name, prompt_version, kind FROM raters r WHERE EXISTS "
        "(SELECT 1 FROM assessments a WHERE a.rater_id = r.id) ORDER BY name, prompt_version")]
    judges = [label for label, kind in labels if kind != HUMAN]
    graders = [label for label, kind in labels if kind == HUMAN]
    return ReportChoices(
        models=[m for (m,) in conn.execute("SELECT DISTINCT model FROM responses ORDER BY model")],
        topics=in_vocabulary_order(column["topic"], TOPICS),
        kinds=in_vocabulary_order(column["kind"], KINDS),
        bloom=in_vocabulary_order(column["bloom_cognitive"], BLOOM_COGNITIVE), judges=judges,
        graders=graders, raters=([HUMAN_CONSENSUS] if graders else []) + judges + graders)
