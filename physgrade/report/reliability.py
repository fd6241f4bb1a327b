"""The report's "Judge reliability" section: agreement between two runs of one judge and between
any two judges, criterion by criterion, and each judge's decoding settings
(:mod:`physgrade.studies.judge_reliability`).

Shown only when two language-model judges scored a criterion of the same response and the
project records how at least one of them was run (a run label, or a run recorded with its
decoding: :func:`~physgrade.studies.judge_reliability.on_record`), so that a project whose judges
were imported without saying how they ran, or ran before runs were recorded, reports as before.
"""

from __future__ import annotations

from physgrade.report.model import Cell, Section, Table
from physgrade.rubric import RUBRICS
from physgrade.scoring.tables import ScoreData
from physgrade.studies.judge_reliability import SAME_JUDGE, Judges, agreement, decoding, on_record
from physgrade.studies.judge_reliability import read_judges as read_judges  # the report reads it

TITLE = "Judge reliability"


def reliability_section(judges: Judges, data: ScoreData, number: int) -> Section | None:
    """The section for the report's judges; None when no two of them scored the same
    response, or none of those is on record."""
    pairs = agreement(data, judges)
    if not any(on_record(judges, label) for found in pairs for label in (found.first, found.second)):
        return None
    rows: list[tuple[Cell, ...]] = [
        (found.first, found.second, found.pair, RUBRICS[found.rubric].title, found.criterion,
         found.n, found.kappa, found.agreement) for found in pairs]
    compared = list(dict.fromkeys(label for found in pairs for label in (found.first, found.second)))
    settings: list[tuple[Cell, ...]] = [
        (row.judge, row.model, row.prompt_version, row.run or "—", row.temperature, row.top_p,
         row.max_tokens, row.runs, row.sources) for row in decoding(judges, compared)]
    tables = [Table(
        "judge_reliability", "Agreement between judges, per criterion",
        ("Judge", "Other judge", "Pair", "Rubric", "Criterion", "n", "Cohen's κ",
         "Exact agreement"), rows,
        f"Pair: {SAME_JUDGE} (same model and prompt version, another run label) or two judges. "
        "n: responses both judges scored on the criterion with a number (N/A is left out). "
        "Cohen's κ is unweighted (nominal), with its normal-theory 95% interval; exact agreement "
        "with its Wilson 95% interval.", frozenset({"Exact agreement"}))]
    if settings:
        tables.append(Table(
            "judge_decoding", "How each judge decoded",
            ("Judge", "Model", "Prompt version", "Run", "Temperature", "top_p", "Max tokens",
             "Runs", "Source"), settings,
            "From the project's record of judge runs (a direct run, a batch submission or an "
            "import of verdicts). A run that sent no temperature sampled at the API's default; "
            "an import that did not say is \"not stated\". A judge with no recorded run (its "
            "verdicts stored before runs were recorded) is not listed."))
    intro = ("How far the judges agree with one another, as Physics-R1 checks its judge: two "
             "runs of the same judge and prompt (each run a rater of its own, named by its run "
             "label), then any two judges, on every criterion both scored. Agreement between "
             "runs bounds how far any judge can agree with people; read it with each run's "
             "decoding (temperature, top_p), listed last.")
    return Section(f"{number}. {TITLE}", intro, tables, short=f"{number}. Reliability")
