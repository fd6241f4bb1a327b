"""The report's "Paired conditions" section: one table per pairing declared in the project
(``physgrade compare-conditions ... --save``), each model's pairs and every model's pooled, as
:mod:`physgrade.studies.conditions` compares them.

Shown only when a pairing is declared, so that a project without one reports as before.
"""

from __future__ import annotations

from dataclasses import dataclass

from physgrade.answers.accuracy import Checks
from physgrade.project import Project
from physgrade.report.common import slug
from physgrade.report.model import Cell, Section, Table
from physgrade.report.options import ReportOptions
from physgrade.scoring.tables import ScoreData
from physgrade.studies import conditions
from physgrade.studies.conditions import MEASURES, Pairing, Problems

TITLE = "Paired conditions"


@dataclass(frozen=True)
class Declared:
    """The declared pairings, each with its problems or why it finds none now (its fields or
    values gone since it was declared)."""

    pairings: list[tuple[Pairing, Problems | str]]


def read_pairings(project: Project) -> Declared:
    """The project's declared pairings and their problems (reads only)."""
    found: list[tuple[Pairing, Problems | str]] = []
    for pairing in conditions.saved(project):
        try:
            found.append((pairing, conditions.problems(project, pairing)))
        except ValueError as exc:
            found.append((pairing, str(exc)))
    return Declared(found)


def conditions_section(declared: Declared, data: ScoreData, checks: Checks, rater: str | None,
                       options: ReportOptions, number: int) -> Section | None:
    """A table per declared pairing over the report's responses: final answers and scores by
    ``rater`` (the analyses' rater), strict and liberal by the first rater with answer checks;
    None when no pairing is declared."""
    if not declared.pairings:
        return None
    checks = checks.narrowed(data.responses.index)
    tables: list[Table] = []
    left_out: list[str] = []
    for pairing, found in declared.pairings:
        if isinstance(found, str):
            left_out.append(f"{pairing.describe()}: {found}")
            continue
        from_checks = pairing.measure in conditions.FROM_CHECKS
        who = (checks.raters()[0] if checks.has_checks() else None) if from_checks else rater
        if who is None:
            left_out.append(f"{pairing.describe()}: no {'answer checks' if from_checks else 'scores'}")
            continue
        try:
            compared = conditions.compare(
                found, conditions.outcomes(pairing.measure, data, checks, who), who,
                options.resamples, options.seed)
        except ValueError as exc:
            left_out.append(f"{pairing.describe()}: {exc}")
            continue
        tables.append(_table(compared))
    intro = ("The same problems under two conditions of a question field (Physics-R1 §5.1: "
             "Estonian originals against their English translations), compared problem by "
             "problem: the 2×2 table of yes/no outcomes, exact McNemar, the sign test, and the "
             "difference of the rates with a paired bootstrap 95% interval. 'All models' pools "
             "every model's pairs.")
    if left_out:
        intro += " Not shown: " + "; ".join(left_out) + "."
    return Section(f"{number}. {TITLE}", intro, tables, short=f"{number}. {TITLE}")


def _table(compared: conditions.Comparison) -> Table:
    p = compared.pairing
    rows: list[tuple[Cell, ...]] = []
    for row in [*compared.models, compared.overall]:
        table = row.table or {}
        rows.append((row.model, row.n_pairs, table.get("both"), table.get("only_a"),
                     table.get("only_b"), table.get("neither"), row.rate_a, row.rate_b,
                     row.difference, row.mcnemar.p_value if row.mcnemar else None,
                     row.sign.p_value))
    a, b = p.a, p.b
    rates = frozenset({a, b, f"{a} − {b}"})
    note = (f"Pairs: problems ({p.pair_by}) with an outcome in both conditions; outcome: "
            f"{MEASURES[p.measure]}, by {compared.rater}; a model's several responses to one "
            f"question count as their mean. {a} − {b}: the difference of the rates with its "
            f"paired bootstrap 95% interval ({compared.resamples:,} resamples of problems, seed "
            f"{compared.seed}). McNemar (exact) and the 2×2 table only for yes/no outcomes; the "
            "sign test counts pairs where one condition is higher. All models: every model's "
            "pairs pooled, the tests counting them as independent.")
    return Table(f"paired_{slug(f'{p.condition}_{a}_{b}_{p.pair_by}_{p.measure}')}",
                 f"{p.condition}: {a} against {b}, paired by {p.pair_by} ({p.measure})",
                 ("Model", "Pairs", "Both", f"{a} only", f"{b} only", "Neither", a, b,
                  f"{a} − {b}", "McNemar p", "Sign test p"), rows, note, rates)
