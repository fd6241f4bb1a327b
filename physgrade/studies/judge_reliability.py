"""Judge reliability: how far two runs of one judge, and any two judges, agree with each other,
criterion by criterion, and how each judge run decoded.

Physics-R1 (seed 002) checks its judge by running it twice and reporting Cohen's κ between the
runs, and by a second judge; P-REFS v2 (seed 001) states its judge's decoding with its results.
A further run of a judge is a rater of its own (a run label, :func:`physgrade.raters.rater_label`),
so runs compare as any two judges do: on the responses both scored with a number, κ unweighted
(nominal, as Physics-R1 reports it; the criterion's points are its categories) and the share of
exact agreement. See docs/statistics.md, "Judge reliability".
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from physgrade.judge.client import API_TEMPERATURE
from physgrade.judge.runs import IMPORT, JudgeRun, runs
from physgrade.project import Project
from physgrade.raters import LLM, is_kind, rater_label
from physgrade.rubric import GRADED_RUBRICS
from physgrade.scoring.tables import ScoreData, criterion_ratings
from physgrade.stats.agreement import cohen_kappa, percent_agreement
from physgrade.stats.estimate import Estimate

#: What a pair of judges is: two runs of one judge (same model and prompt version), or two judges.
SAME_JUDGE, TWO_JUDGES = "runs of one judge", "two judges"


@dataclass(frozen=True, slots=True)
class JudgeRater:
    """A language-model rater: its label, and the model, prompt version and run it stands for."""

    label: str
    model: str
    prompt_version: str
    run: str


@dataclass(frozen=True, slots=True)
class Judges:
    """The project's language-model raters by label, and every judge run recorded (what
    :func:`read_judges` reads; the report reads it once)."""

    raters: dict[str, JudgeRater]
    runs: tuple[JudgeRun, ...]


@dataclass(frozen=True, slots=True)
class PairAgreement:
    """Two judges on one criterion: ``n`` responses both scored with a number, Cohen's κ
    (nominal) and the share of exact agreement, each with its 95% interval."""

    first: str
    second: str
    pair: str  # SAME_JUDGE or TWO_JUDGES
    rubric: str
    criterion: str
    n: int
    kappa: Estimate
    agreement: Estimate


@dataclass(frozen=True, slots=True)
class JudgeDecoding:
    """How one judge (a rater) decoded, over its recorded runs: the settings as shown (the
    API's default named where a run sent none; "not stated" where an import did not say), how
    many runs and which sources (direct, batch, import)."""

    judge: str
    model: str
    prompt_version: str
    run: str
    temperature: str
    top_p: str
    max_tokens: str
    runs: int
    sources: str


def read_judges(project: Project) -> Judges:
    """Every language-model rater and every recorded judge run of P-REFS verdicts."""
    raters = {rater_label(name, version, run): JudgeRater(rater_label(name, version, run), name,
                                                         version, run)
              for name, version, run in project.conn.execute(
                  f"SELECT r.name, r.prompt_version, r.run FROM raters r WHERE {is_kind(LLM)}")}
    return Judges(raters, tuple(runs(project, "verdicts")))


def on_record(judges: Judges, label: str) -> bool:
    """Whether the project records how judge ``label`` was run: a further run (a run label), or
    a run recorded with its decoding (one physgrade made, or an import that stated it)."""
    rater = judges.raters.get(label)
    return bool(rater and rater.run) or any(run.rater == label for run in judges.runs)


def judge_pairs(data: ScoreData, judges: Judges) -> list[tuple[str, str, str]]:
    """The pairs of language-model judges of ``data``: runs of one judge first, then any two
    judges, each in the order of model, prompt version and run (the default run first)."""
    labels = sorted((label for label in data.judges if label in judges.raters),
                    key=lambda label: _identity(judges.raters[label]))
    same, other = [], []
    for first, second in combinations(labels, 2):
        a, b = judges.raters[first], judges.raters[second]
        if _identity(a)[:2] == _identity(b)[:2]:
            same.append((first, second, SAME_JUDGE))
        else:
            other.append((first, second, TWO_JUDGES))
    return same + other


def _identity(rater: JudgeRater) -> tuple[str, str, str]:
    return rater.model, rater.prompt_version, rater.run


def agreement(data: ScoreData, judges: Judges) -> list[PairAgreement]:
    """Every pair of judges on every criterion both scored with a number on some response."""
    found = []
    for first, second, pair in judge_pairs(data, judges):
        for rubric in GRADED_RUBRICS:
            for criterion in rubric.criteria:
                if (rubric.key, criterion.key) not in data.criteria:
                    continue
                ratings = criterion_ratings(data, rubric.key, criterion.key, [first, second],
                                            complete=True).to_numpy(dtype=float)
                if not len(ratings):
                    continue
                categories = tuple(range(criterion.maximum + 1))
                found.append(PairAgreement(first, second, pair, rubric.key, criterion.key,
                                           len(ratings), cohen_kappa(ratings, None, categories),
                                           percent_agreement(ratings, categories)))
    return found


def decoding(judges: Judges, labels: list[str]) -> list[JudgeDecoding]:
    """The decoding of each judge of ``labels`` (in that order) that has a recorded run; a
    judge whose runs decoded in several ways (imports may) lists each way."""
    rows = []
    for label in labels:
        recorded = [run for run in judges.runs if run.rater == label]
        ways: dict[tuple[str, str, str], list[JudgeRun]] = {}
        for run in recorded:
            ways.setdefault(_settings(run), []).append(run)
        for (temperature, top_p, max_tokens), made in ways.items():
            sources = ", ".join(sorted({run.source for run in made}))
            rows.append(JudgeDecoding(label, made[0].model, made[0].prompt_version, made[0].run,
                                      temperature, top_p, max_tokens, len(made), sources))
    return rows


def _settings(run: JudgeRun) -> tuple[str, str, str]:
    """A run's temperature, top_p and max_tokens as a report shows them."""
    unstated = "not stated"
    if run.source == IMPORT:
        temperature = unstated if run.temperature is None else f"{run.temperature:g}"
        top_p = unstated if run.top_p is None else f"{run.top_p:g}"
    else:
        temperature = (f"{API_TEMPERATURE:g} (API default)" if run.temperature is None
                       else f"{run.temperature:g}")
        top_p = "not sent" if run.top_p is None else f"{run.top_p:g}"
    max_tokens = unstated if run.max_tokens is None else f"{run.max_tokens:,}"
    return temperature, top_p, max_tokens
