"""Which responses: the facets a response is chosen by, and the filter over them.

One vocabulary of facets serves every place that narrows, groups or counts responses: the
grading queue, reports, strata of audit and estimation samples, assignments, judge runs and
the app's pages. Each facet has its key (a filter's field), its name (a stratum's, a plan's
count's and ``--filter``'s singular), how sentences and buttons call it, and where a response
holds it; a missing value is shown as :data:`NONE` everywhere.

Kept apart from the report builder, which needs pandas, scipy and matplotlib: the app offers
these choices without loading any of them.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Collection, Mapping, Sequence

from physgrade import question_fields
from physgrade.project import Project
from physgrade.raters import HUMAN, HUMAN_CONSENSUS, rater_label
from physgrade.taxonomy import BLOOM_COGNITIVE, QUESTION_KINDS, TOPICS, in_vocabulary_order

#: How a missing facet value (no topic, no Bloom level yet…) is shown, and filtered for.
NONE = "(none)"


@dataclass(frozen=True, slots=True)
class Facet:
    """One facet responses are chosen by.

    ``key``: the field of :class:`ResponseFilter` (and of the queue's filter), plural.
    ``name``: one value's facet, singular: what a stratum, a plan's counts and ``--filter``
    call it. ``noun``: how a sentence calls it. ``title``: a button's or a column's title.
    ``attribute``: the attribute holding it on a response, a review of one and a question, and
    the column of the same name (None for the rater facets, which no response has).
    ``of_question``: whether a question has it (a response has it through its question).
    """

    key: str
    name: str
    noun: str
    title: str
    attribute: str | None = None
    of_question: bool = False

    @property
    def long_title(self) -> str:
        """The title where there is room for the whole noun ("Bloom level")."""
        return self.noun[:1].upper() + self.noun[1:]

    @property
    def column(self) -> str:
        """The facet's column in SQL over responses ``r`` joined with their questions ``q``."""
        if self.attribute is None:
            raise ValueError(f"no response has a {self.noun}")
        return f"{'q' if self.of_question else 'r'}.{self.attribute}"


MODEL = Facet("models", "model", "model", "Model", "model")
TOPIC = Facet("topics", "topic", "topic", "Topic", "topic", of_question=True)
KIND = Facet("kinds", "kind", "kind", "Kind", "kind", of_question=True)
BLOOM = Facet("bloom", "bloom", "Bloom level", "Bloom", "bloom_cognitive", of_question=True)
JUDGE = Facet("judges", "judge", "judge", "Judge")
GRADER = Facet("graders", "grader", "grader", "Grader")

#: The facets of a response, in the order pages show them.
RESPONSE_FACETS = (MODEL, TOPIC, KIND, BLOOM)
#: Those a question has (a Bloom label, or a judge run over questions, is a question's).
QUESTION_FACETS = tuple(facet for facet in RESPONSE_FACETS if facet.of_question)
#: The facets that choose raters rather than responses.
RATER_FACETS = (JUDGE, GRADER)
#: Every facet of a :class:`ResponseFilter`, by key, in the order pages show them.
FILTER_FACETS = {facet.key: facet for facet in (*RESPONSE_FACETS, *RATER_FACETS)}
#: Every facet by its name.
NAMED = {facet.name: facet for facet in FILTER_FACETS.values()}


def value_order(value: str) -> tuple[bool, bool, float, str]:
    """Sort key of facet values as menus and tables list them: numbers by size (a difficulty
    of 2 before one of 10), then the others by name, :data:`NONE` last."""
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    numeric = math.isfinite(number)
    return value == NONE, not numeric, number if numeric else 0.0, value


def shown(value: object) -> str:
    """A facet value as it is shown and filtered for: :data:`NONE` if it is missing."""
    return NONE if value is None or str(value).strip() == "" else str(value)


@dataclass(frozen=True, slots=True)
class ResponseFilter:
    """Which responses and raters are covered: facets combine with AND, values with OR.

    ``judges`` are rater labels (see :func:`~physgrade.raters.rater_label`) of language models
    and rule checkers; ``graders`` are people's names. ``bloom`` holds Bloom cognitive levels.
    ``fields``: the project's declared facets in use (:mod:`physgrade.facets`), (name, values)
    by name, values as :func:`~physgrade.question_fields.as_text` shows them (:data:`NONE` for
    a question without the field); a tuple, so that a filter stays hashable.
    """

    models: frozenset[str] = frozenset()
    topics: frozenset[str] = frozenset()
    kinds: frozenset[str] = frozenset()
    bloom: frozenset[str] = frozenset()
    judges: frozenset[str] = frozenset()
    graders: frozenset[str] = frozenset()
    fields: tuple[tuple[str, frozenset[str]], ...] = ()

    @classmethod
    def parse(cls, terms: list[str], declared: Collection[str] = ()) -> "ResponseFilter":
        """Read ``FIELD=VALUE[,VALUE...]`` terms (the command line's ``--filter``), FIELD a
        facet of every project or one of the ``declared`` facets; a field given twice accepts
        the values of both."""
        chosen: dict[str, set[str]] = {}
        by_field: dict[str, set[str]] = {}
        singular = {alias: facet.key for facet in FILTER_FACETS.values()
                    for alias in (facet.name, facet.attribute) if alias}
        for term in terms:
            name, sep, values = term.partition("=")
            key = name.strip().lower()
            facet = key if key in FILTER_FACETS else singular.get(key)
            wanted = {v.strip() for v in values.split(",") if v.strip()}
            if sep and facet is None and name.strip() in declared and wanted:
                by_field.setdefault(name.strip(), set()).update(wanted)
                continue
            if not sep or facet is None or not wanted:
                raise ValueError(f"filter {term!r}: write FIELD=VALUE[,VALUE...] with FIELD one "
                                 f"of {', '.join([*FILTER_FACETS, *declared])}")
            chosen.setdefault(facet, set()).update(wanted)
        return cls.of({key: frozenset(values) for key, values in chosen.items()}, by_field)

    @classmethod
    def of(cls, chosen: Mapping[str, frozenset[str]],
           fields: Mapping[str, Collection[str]] | None = None) -> "ResponseFilter":
        """The filter of values ``chosen`` by facet key (a page's buttons: "models"...) and of
        the declared facets ``fields``."""
        unknown = sorted(set(chosen) - set(FILTER_FACETS))
        if unknown:
            raise ValueError(f"no facet {', '.join(unknown)}; the facets are "
                             f"{', '.join(FILTER_FACETS)}")
        built_in: dict[str, Any] = dict(chosen)  # each a frozenset, as the fields of its key
        return cls(**built_in).with_fields(fields or {})

    def with_fields(self, chosen: Mapping[str, Collection[str]]) -> "ResponseFilter":
        """This filter with its declared facets set to ``chosen`` (a facet without values is
        not in use)."""
        return dataclasses.replace(self, fields=tuple(
            (name, frozenset(values)) for name, values in sorted(chosen.items()) if values))

    def where(self, facets: Sequence[Facet] = RESPONSE_FACETS) -> tuple[str, list[str]]:
        """An SQL condition over responses ``r`` and questions ``q`` for ``facets``, with its
        parameters; "1" when none of them is in use."""
        conditions, params = [], []
        for facet in facets:
            wanted = sorted(getattr(self, facet.key))
            if wanted:
                conditions.append(f"{facet.column} IN ({', '.join('?' * len(wanted))})")
                params += wanted
        for name, values in self.fields:  # a question's, so every response of it has them
            conditions.append(f"coalesce({question_fields.text_sql(name)}, ?) IN "
                              f"({', '.join('?' * len(values))})")
            params += [NONE, *sorted(values)]
        return " AND ".join(conditions) or "1", params

    def admits(self, item: object, facets: Sequence[Facet] = RESPONSE_FACETS) -> bool:
        """Whether ``item`` (a response, a review of one, a question) is within the filter, by
        its attributes of ``facets``: facets combine with AND, values with OR. An item with
        its declared facets' values (a ``fields`` mapping, as a queue's item has) is checked
        against :attr:`fields` too."""
        if not all(getattr(item, facet.attribute or facet.key) in getattr(self, facet.key)
                   for facet in facets if getattr(self, facet.key)):
            return False
        held = getattr(item, "fields", None)
        return held is None or all(shown(held.get(name)) in values for name, values in self.fields)

    def describe(self) -> dict[str, list[str]]:
        """The facets in use, for a report's settings and a run's record (a declared facet by
        its name)."""
        built_in = {f.name: sorted(getattr(self, f.name)) for f in dataclasses.fields(self)
                    if f.name != "fields" and getattr(self, f.name)}
        return built_in | {name: sorted(values) for name, values in self.fields}


@dataclass(frozen=True, slots=True)
class FilterChoices:
    """The values each facet of a :class:`ResponseFilter` can take in a project, and the raters
    a report's analyses can be run for (the default first)."""

    models: list[str]
    topics: list[str]
    kinds: list[str]
    bloom: list[str]
    judges: list[str]
    graders: list[str]
    raters: list[str]


def filter_choices(project: Project) -> FilterChoices:
    """What a project's responses and raters can be narrowed to (a few indexed queries: the app
    asks this when a page or dialog with filters opens)."""
    conn = project.conn
    column = {name: {v for (v,) in conn.execute(f"SELECT DISTINCT {name} FROM questions "
                                                 f"WHERE {name} IS NOT NULL")}
              for name in (TOPIC.attribute, KIND.attribute, BLOOM.attribute)}
    labels = [(rater_label(name, version, run), kind) for name, version, kind, run in conn.execute(
        "SELECT name, prompt_version, kind, run FROM raters r WHERE EXISTS "
        "(SELECT 1 FROM assessments a WHERE a.rater_id = r.id) ORDER BY name, prompt_version, run")]
    judges = [label for label, kind in labels if kind != HUMAN]
    graders = [label for label, kind in labels if kind == HUMAN]
    return FilterChoices(
        models=[m for (m,) in conn.execute("SELECT DISTINCT model FROM responses ORDER BY model")],
        topics=in_vocabulary_order(column["topic"], TOPICS),
        kinds=in_vocabulary_order(column["kind"], QUESTION_KINDS),
        bloom=in_vocabulary_order(column["bloom_cognitive"], BLOOM_COGNITIVE), judges=judges,
        graders=graders, raters=([HUMAN_CONSENSUS] if graders else []) + judges + graders)

