"""Strata of responses: the facets a sample can be drawn within, and how a stratum is named.

The judge audit (:mod:`physgrade.validation.sampling`) and the estimation samples
(:mod:`physgrade.estimation.sample`) both draw responses stratum by stratum; each allows its own
facets, and both name a stratum the same way ("Mechanics / orbit-7b").
"""

from __future__ import annotations

from collections import defaultdict
from typing import Collection, Sequence

from physgrade import question_fields
from physgrade.project import Project
from physgrade.selection import BLOOM, MODEL, NAMED, TOPIC, shown

#: Every facet a response can be stratified over (by name, of :mod:`physgrade.selection`),
#: besides a project's declared facets (:mod:`physgrade.facets`); a response whose facet is
#: missing is in the stratum of :data:`physgrade.selection.NONE`.
FACETS = (TOPIC.name, BLOOM.name, MODEL.name)
#: The one stratum of a sample drawn over no facets.
ALL = "(all)"
SEPARATOR = " / "


def checked(strata: Sequence[str], allowed: Collection[str] = FACETS,
            declared: Collection[str] = ()) -> tuple[str, ...]:
    """``strata`` as a tuple of facets, refusing a facet not ``allowed`` nor ``declared`` (the
    project's declared facets), or named twice."""
    facets = tuple(strata)
    wrong = [facet for facet in facets if facet not in allowed and facet not in declared]
    if wrong:
        raise ValueError(f"cannot stratify over {', '.join(map(repr, wrong))}; the facets are "
                         f"{', '.join([*allowed, *declared])}")
    if len(set(facets)) != len(facets):
        raise ValueError(f"a facet is named twice in {', '.join(facets)}")
    return facets


def name(values: Sequence[object], facets: Sequence[str]) -> str:
    """A stratum's name: its facet values joined by :data:`SEPARATOR`, :data:`ALL` for none."""
    if not facets:
        return ALL
    return SEPARATOR.join(shown(value) for value in values)


def responses_by_stratum(project: Project, facets: Sequence[str]) -> dict[str, list[str]]:
    """Every response of the project by stratum over ``facets`` (checked ones: a declared facet
    by its field's value as :func:`~physgrade.question_fields.as_text` shows it), each stratum's
    ids sorted: a draw then depends on its seed and the data only."""
    columns = ", ".join(NAMED[facet].column if facet in NAMED else question_fields.text_sql(facet)
                        for facet in facets) or "NULL"
    groups: dict[str, list[str]] = defaultdict(list)
    for rid, *values in project.conn.execute(
            f"SELECT r.id, {columns} FROM responses r JOIN questions q ON q.id = r.question_id "
            "ORDER BY r.id"):
        groups[name(values, facets)].append(rid)
    return dict(groups)
