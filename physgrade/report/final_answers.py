"""The report's "Final answers" section: final answers judged by rule to the seeds' standard
(strict, liberal and unjudgeable rates per model, :mod:`physgrade.answers.accuracy`) and how far
each rater of answer checks agrees with the people's final-answer scores.

Shown only when the project has answer checks, so that a project without them reports as before.
"""

from __future__ import annotations

from physgrade import facets
from physgrade.answers.accuracy import Checks, accuracy, accuracy_by, expert_agreement
from physgrade.report.common import main_reference, slug
from physgrade.report.model import Cell, Section, Table
from physgrade.scoring.tables import ScoreData

#: The section's title, and its tab's (section 3's tab is "Final answers": the final answer
#: correct by the reference and by each judge).
TITLE = "Final answers: strict and liberal"
TAB = "Answer accuracy"
RATES = frozenset({"Strict", "Liberal", "Unjudgeable rate", "Unchecked rate"})


def final_answers_section(checks: Checks, data: ScoreData, number: int,
                          by: tuple[str, ...] = ()) -> Section | None:
    """The section for every rater with answer checks among the report's responses, with the
    rates per value of each declared facet ``by`` (:mod:`physgrade.facets`); None when there
    are no checks."""
    checks = checks.narrowed(data.responses.index)
    if not checks.has_checks():
        return None
    reference = main_reference(data)
    rows: list[tuple[Cell, ...]] = []
    agreement_rows: list[tuple[Cell, ...]] = []
    difference_rows: list[tuple[Cell, ...]] = []
    for rater in checks.raters():
        for row in accuracy(checks, rater):
            counts = row.counts
            rows.append((rater, row.model, row.n, counts["correct"], counts["partial"],
                         counts["incorrect"], counts["unchecked"], counts["unjudgeable"],
                         counts["missing"], row.strict, row.liberal, row.unjudgeable,
                         row.unchecked))
        if reference is None:
            continue
        found = expert_agreement(checks, data, rater, reference)
        agreement_rows.append((rater, reference, found.n, found.exact, found.kappa,
                               found.rater_only, found.reference_only))
        difference_rows += [(rater, d.response_id, d.model, d.outcome, d.reason, d.expert_score,
                             d.expert_maximum) for d in found.differences]
    tables = [Table(
        "final_answers_accuracy", "Final answers judged by rule, per model",
        ("Rater", "Model", "n", "Correct", "Partial", "Incorrect", "Unchecked", "Unjudgeable",
         "Missing", "Strict", "Liberal", "Unjudgeable rate", "Unchecked rate"), rows,
        "n: responses whose question has a reference answer. Strict = correct / n; liberal = "
        "(correct + ½·partial) / n; every rate with its Wilson 95% interval. Unjudgeable: the "
        "reference answer itself could not be read (kept in n). Unchecked: the rules could not "
        "tell (not checked, response unreadable, time out). Missing: not checked by this rater.",
        RATES)]
    if reference is not None:
        tables.append(Table(
            "final_answers_agreement", f"Answer checks against {reference}'s final-answer score",
            ("Rater", "Reference", "n", "Exact agreement", "Cohen's κ", "Only rater right",
             "Only reference right"), agreement_rows,
            "Right: equivalent for the checks, ANS at its maximum for people; checks with no "
            "verdict (unchecked, unjudgeable) are left out.", frozenset({"Exact agreement"})))
        tables.append(Table(
            "final_answers_differences", "Where the answer checks and the people differ",
            ("Rater", "Response", "Model", "Outcome", "Reason", "People's ANS", "ANS maximum"),
            difference_rows))
    tables += [_by_table(checks, data, name) for name in by if name in data.responses]
    intro = ("Final answers judged as Physics-R1 judges them: a problem is correct only if every "
             "part of its reference answer is right, partial if some are; strict accuracy counts "
             "the correct, liberal gives half credit to the partial, and answers whose reference "
             "cannot be read are unjudgeable, kept in n and reported as their own rate.")
    return Section(f"{number}. {TITLE}", intro, tables, short=f"{number}. {TAB}")


def _by_table(checks: Checks, data: ScoreData, facet: str) -> Table:
    """Every rater's rates per value of ``facet`` and model (UGPhysics' tables by subject,
    skill and answer type; Physics-R1's by native difficulty)."""
    title = facets.title(facet)
    rows: list[tuple[Cell, ...]] = [
        (rater, value, row.model, row.n, row.counts["correct"], row.counts["partial"],
         row.strict, row.liberal, row.unjudgeable)
        for rater in checks.raters()
        for value, row in accuracy_by(checks, rater, data.responses[facet])]
    return Table(f"final_answers_by_{slug(facet)}", f"Final answers by {title.lower()}",
                 ("Rater", title, "Model", "n", "Correct", "Partial", "Strict", "Liberal",
                  "Unjudgeable rate"), rows,
                 f"The rates above for the responses of each {title.lower()} (a declared facet); "
                 "\"all models\" pools the models of that value.", RATES)
