"""Facets declared on question fields: the fields a benchmark's records carry (language,
difficulty, subject...) that a project filters, counts and stratifies by, beside the facets
every project has (:mod:`physgrade.selection`).

Which fields are facets is a project setting (``facets`` in ``project_settings``, a JSON list),
so that every rater of the project, the app and the command line offer the same ones. An import
declares the built-in names its records carry; others are declared by name. A facet's values
are its field's values as :func:`physgrade.question_fields.as_text` shows them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Iterable

from physgrade import question_fields
from physgrade.changes import NOTHING, Changes, RecordKind
from physgrade.project import Project
from physgrade.selection import NAMED, NONE, QUESTION_FACETS, ResponseFilter, value_order

KEY = "facets"
#: The fields declared a facet whenever an import's records carry them: the seeds' own
#: breakdowns (Physics-R1's language, source, native difficulty and modality; P-REFS v1's
#: notation; UGPhysics' subject, skill and answer type; SymPyBench's format).
BUILT_IN = ("language", "notation", "source", "difficulty", "native_difficulty", "answer_type",
            "subject", "skill", "format", "modality", question_fields.SOURCE_TOPIC)
#: Names that are facets of every project already, or no field to group by.
_TAKEN = frozenset({*NAMED, *(facet.attribute for facet in QUESTION_FACETS), "id"})


@dataclass(frozen=True, slots=True)
class FacetValue:
    """One value of a facet (:data:`~physgrade.selection.NONE` for questions without it), with
    how many questions and responses have it."""

    value: str
    questions: int
    responses: int


def title(name: str) -> str:
    """How a button or a column calls facet ``name``: "native_difficulty" is "Native
    difficulty"."""
    return name.replace("_", " ").capitalize()


def declared(project: Project) -> tuple[str, ...]:
    """The project's declared facets, in the order they were declared."""
    if not _keeps_settings(project):
        return ()
    kept = project.setting(KEY)
    return tuple(json.loads(kept)) if kept else ()


def checked(names: Iterable[str]) -> list[str]:
    """``names`` as facet names (stripped, each once), refusing one that every project has
    already or that cannot name a field."""
    found = list(dict.fromkeys(name.strip() for name in names if name.strip()))
    for name in found:
        if name in _TAKEN:
            raise ValueError(f"{name!r} is a facet of every project already; declare a field "
                             f"of the questions, such as {', '.join(BUILT_IN[:3])}")
        question_fields.sql(name)  # refuses a name no JSON path can hold
    return found


def declare(project: Project, names: Iterable[str]) -> Changes:
    """Declare ``names`` facets of ``project``; a name no question carries is refused (nothing
    changes then)."""
    wanted = checked(names)
    missing = sorted(set(wanted) - set(question_fields.known(project)))
    if missing:
        raise ValueError(f"no question has a field {', '.join(map(repr, missing))}; the fields "
                         f"are {', '.join(question_fields.known(project)) or 'none (no questions)'}")
    with project.transaction():
        return add_declared(project, wanted)


def add_declared(project: Project, names: Iterable[str]) -> Changes:
    """Declare ``names`` (checked ones) within the caller's transaction (an import's); a
    project of a schema older than settings (as an old physgrade left it, before it is opened)
    declares none."""
    now = declared(project)
    added = [name for name in names if name not in now]
    if not added or not _keeps_settings(project):
        return NOTHING
    _write(project, [*now, *added])
    return Changes.of(RecordKind.SETTINGS)


def undeclare(project: Project, names: Iterable[str]) -> Changes:
    """Stop offering ``names`` as facets (their fields stay as they are)."""
    names = [name.strip() for name in names]
    now = declared(project)
    unknown = [name for name in names if name not in now]
    if unknown:
        raise ValueError(f"{', '.join(map(repr, unknown))} is not a declared facet; the declared "
                         f"ones are {', '.join(now) or 'none'}")
    with project.transaction():
        _write(project, [name for name in now if name not in names])
    return Changes.of(RecordKind.SETTINGS)


def parse_filter(project: Project, terms: list[str]) -> ResponseFilter:
    """``--filter`` terms over ``project``: a facet of every project or a declared one."""
    return ResponseFilter.parse(terms, declared=declared(project))


def choices(project: Project) -> dict[str, list[str]]:
    """Each declared facet's values, by name in declaration order, for filter menus (beside
    :func:`physgrade.selection.filter_choices`; a query per facet)."""
    return {name: [found.value for found in values(project, name)] for name in declared(project)}


def by_question(project: Project) -> dict[str, dict[str, str | None]]:
    """Each question's values of the declared facets, by question id (empty where none is
    declared): what a page filters its rows by in memory."""
    by_name = {name: question_fields.values(project, name) for name in declared(project)}
    if not by_name:
        return {}
    return {qid: {name: found[qid] for name, found in by_name.items()}
            for qid in next(iter(by_name.values()))}


def values(project: Project, name: str) -> list[FacetValue]:
    """The values of facet ``name`` with their counts, by name, :data:`NONE` last."""
    rows = project.conn.execute(
        f"SELECT {question_fields.text_sql(name)} AS v, count(DISTINCT q.id), count(r.id) "
        "FROM questions q LEFT JOIN responses r ON r.question_id = q.id GROUP BY v").fetchall()
    found = [FacetValue(NONE if value is None else value, questions, responses)
             for value, questions, responses in rows]
    return sorted(found, key=lambda found_value: value_order(found_value.value))


def _keeps_settings(project: Project) -> bool:
    return project.conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = "
                                "'project_settings'").fetchone() is not None


def _write(project: Project, names: list[str]) -> None:
    project.put_setting(KEY, json.dumps(names, ensure_ascii=False))
