"""Judge cards: each language-model judge at a glance, against the experts, with a verdict.

A study that lets a judge grade what experts cannot must say how far to trust it. A card
answers the questions a reader asks of a judge, each with its interval and n:

- where it is lenient: judge − experts per stage of the rubric (the stage's points as a share
  of the stage's maximum), on the responses both scored the whole stage;
- whether it favours long responses more than the experts do: the slope of the score
  difference on log2 of the response's length (change per doubling);
- how each prompt version of the judge agreed, in the order the versions were made, what a
  refined version was made from, and each version's agreement on the responses held out by the
  latest refinement it took part in (:mod:`physgrade.refinement`);
- and a plain verdict from :data:`CARD_VERDICTS`, given by named rules with their reasons.

The experts are the report's main reference (:func:`physgrade.report.common.main_reference`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Collection, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from physgrade.project import Project
from physgrade.raters import LLM, is_kind, rater_label
from physgrade.refinement import refine
from physgrade.refinement.refine import Refinement
from physgrade.report import common, plots
from physgrade.report.model import Cell, Figure, Section, Table
from physgrade.report.options import language_model_judges
from physgrade.rubric import GRADED_RUBRICS, Rubric
from physgrade.scoring import tables as score_tables
from physgrade.scoring.tables import ScoreData
from physgrade.stats.describe import clustered_proportion, mean_difference, proportion, t95
from physgrade.stats.estimate import Estimate
from physgrade.stats.paired import bias, spearman
from physgrade.tasks import Task
from physgrade.wording import count

# -- the verdict's vocabulary and rules ------------------------------------------------------------

#: A card's verdict, best first, with what it means for a study.
TRUSTWORTHY, CAUTION, REVIEW = "trustworthy", "use with caution", "needs review"
CARD_VERDICTS: dict[str, str] = {
    TRUSTWORTHY: "its scores can stand in for the experts' on work like this",
    CAUTION: "usable, but the numbers it produces should be checked or corrected with expert "
             "grades before they are published",
    REVIEW: "do not rely on it until more expert grades, or a better prompt, show otherwise"}

#: Fewer responses graded by both than this leave every interval too wide to vouch for a
#: judge: a mean difference is known only to about ±0.36 standard deviations at 30. Even at 30
#: a judge that agrees on every final answer cannot show its agreement is surely above 90%
#: (Wilson's lower end is 88.6%): it takes 35 of 35 to clear the caution line, 38 of 38 to
#: clear it by a margin (90.8%).
MIN_GRADED_BY_BOTH = 30
#: The lower end of the final-answer agreement's interval below which the judge needs review,
#: and below which it calls for caution. The share of final answers correct is a study's
#: headline: a judge that may be wrong on more than one final answer in five can move it by
#: more than any difference between models a study hopes to find; one in ten still can.
FINAL_AGREEMENT_REVIEW = 0.80
FINAL_AGREEMENT_CAUTION = 0.90
#: Overall leniency (the mean difference of the score share, judge − experts; strictness
#: counts alike) beyond which a judge needs review, and caution: when its interval excludes 0,
#: 10 points of 100 is as large as the gaps between models a study reports, 5 points is enough
#: to reorder close models.
LENIENCY_REVIEW = 0.10
LENIENCY_CAUTION = 0.05
#: A stage whose whole interval lies beyond this many points (either way) calls for caution:
#: the judge surely misreads that part of the rubric, even if other stages balance it out.
STAGE_LENIENCY_CAUTION = 0.10
#: A length slope (change of the score difference per doubling of length) at least this large,
#: with an interval above 0, calls for caution: a large study makes any slope significant, and
#: 2 points per doubling is 6 points between a short answer and one eight times as long.
LENGTH_SLOPE_CAUTION = 0.02


def verdict_rules() -> list[tuple[str, str, str]]:
    """Each verdict, what it means and when it is given, best first (the section's table of
    rules)."""
    return [
        (TRUSTWORTHY, CARD_VERDICTS[TRUSTWORTHY], "none of the rules below is met"),
        (CAUTION, CARD_VERDICTS[CAUTION],
         f"the lower end of the final-answer agreement's interval below "
         f"{FINAL_AGREEMENT_CAUTION:.0%}; an overall leniency (or strictness) beyond "
         f"{_points(LENIENCY_CAUTION)} points whose interval excludes 0; a stage whose whole "
         f"interval lies beyond {_points(STAGE_LENIENCY_CAUTION)} points; or a preference for "
         f"long responses of at least {_points(LENGTH_SLOPE_CAUTION)} points per doubling of "
         "length whose interval lies above 0"),
        (REVIEW, CARD_VERDICTS[REVIEW],
         f"fewer than {MIN_GRADED_BY_BOTH} responses graded by both; the lower end of the "
         f"final-answer agreement's interval below {FINAL_AGREEMENT_REVIEW:.0%}; or an overall "
         f"leniency (or strictness) beyond {_points(LENIENCY_REVIEW)} points whose interval "
         "excludes 0")]


def _points(share: float) -> str:
    """A share as points of 100 ("5", "2.5")."""
    return f"{share * 100:g}"


def _signed(share: float) -> str:
    return f"{share * 100:+.1f}"


def _interval(estimate: Estimate) -> str:
    """The interval in points (" [1.2, 5.0]"), or nothing when there is none."""
    if estimate.ci95 is None:
        return ""
    low, high = estimate.ci95
    return f" [{low * 100:.1f}, {high * 100:.1f}]"


# -- what a card holds -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StageLeniency:
    """Judge − reference on one stage of a rubric, as shares of the stage's maximum."""

    rubric: Rubric
    stage: str
    difference: Estimate   # paired mean difference, t interval
    higher: Estimate       # share of responses where the judge gave the stage more
    lower: Estimate        # and less

    @property
    def name(self) -> str:
        return f"{self.stage} ({self.rubric.title})"


@dataclass(frozen=True, slots=True, eq=False)
class LengthBias:
    """The score difference (judge − reference) against log2 of the response's length (compared
    by identity: it holds arrays)."""

    slope: Estimate        # change of the difference per doubling of length, t interval
    intercept: float | None
    spearman: Estimate     # rank correlation of length and difference, as a check
    lengths: np.ndarray    # characters, one per response in the fit
    differences: np.ndarray


#: The held-out agreement of a version no refinement made or measured.
NOT_REFINED = Estimate.unavailable(0, "not part of a refinement")


@dataclass(frozen=True, slots=True)
class Agreement:
    """How one judge label agrees with the reference: a row of the table of prompt versions,
    overall and on the grades a refinement held out (where a refined version and its base meet
    on responses no example was drawn from)."""

    judge: str
    version: str
    #: ISO time of the judge's first assessment in the project (None: scores without one, as
    #: a bare scores import leaves them)
    first_assessed: str | None
    graded_by_both: int    # responses both assessed completely
    final_answer: Estimate  # share of final answers both called right or both wrong, Wilson
    exact: Estimate        # share of criteria given the same value, averaged over responses
    leniency: Estimate     # score share, judge − reference
    #: the refinement that made this version (None: not made by one)
    made_by: Refinement | None = None
    #: exact agreement on the responses held out by the latest refinement the version took
    #: part in, as its base or as the version it made
    heldout: Estimate = NOT_REFINED

    def made_from(self) -> str:
        """How the version was made, in a few words ("—" for one no refinement made): the
        version it was refined from, and how many examples it was shown."""
        made = self.made_by
        if made is None:
            return "—"
        return f"{made.before_version} + {count(len(made.examples), 'example')}"


@dataclass(frozen=True, slots=True)
class Finding:
    """One rule applied: what was checked, what was found, the verdict it leads to, and why."""

    check: str
    result: Cell
    verdict: str
    reason: str


@dataclass(frozen=True, slots=True)
class JudgeCard:
    """One judge's card: its measures against the reference and the verdict they lead to."""

    judge: str
    reference: str
    stages: list[StageLeniency]
    length: LengthBias
    versions: list[Agreement]  # every version of the judge's name, oldest first
    findings: list[Finding]

    @property
    def verdict(self) -> str:
        """The worst verdict any rule leads to."""
        return max((f.verdict for f in self.findings), key=list(CARD_VERDICTS).index,
                   default=TRUSTWORTHY)

    @property
    def reasons(self) -> list[str]:
        """Why: the findings behind a worse verdict, worst first; for a trustworthy judge,
        what every check found."""
        order = list(CARD_VERDICTS).index
        flagged = sorted((f for f in self.findings if f.verdict != TRUSTWORTHY),
                         key=lambda f: -order(f.verdict))
        return [f.reason for f in flagged or self.findings]


# -- the measures ----------------------------------------------------------------------------------


def stage_shares(data: ScoreData, rater: str, rubric: Rubric) -> pd.DataFrame:
    """A row per response the rater scored with ``rubric``, a column per stage: the stage's
    points as a share of its maximum (an N/A criterion leaves the maximum), NaN where the rater
    did not score every criterion of the stage or all of them were N/A."""
    values, scored = data.rubric_scores(rater, rubric)
    shares = {}
    for stage in rubric.stages:
        criteria = [c for c in rubric.criteria if c.stage == stage]
        columns = [c.key for c in criteria]
        maxima = pd.Series({c.key: float(c.maximum) for c in criteria})
        possible = values[columns].notna().mul(maxima).sum(axis=1)
        share = values[columns].sum(axis=1) / possible.where(possible > 0)
        shares[stage] = share.where(scored[columns].all(axis=1))
    return pd.DataFrame(shares, index=values.index, columns=list(rubric.stages))


def reference_stage_shares(data: ScoreData, reference: str) -> dict[str, pd.DataFrame]:
    """rubric key → the reference's :func:`stage_shares`, made once for every judge's card."""
    return {rubric.key: stage_shares(data, reference, rubric) for rubric in GRADED_RUBRICS}


def stage_leniency(data: ScoreData, judge: str,
                   reference: Mapping[str, pd.DataFrame]) -> list[StageLeniency]:
    """Judge − reference per stage, for each rubric both scored some response with;
    ``reference``: the reference's :func:`reference_stage_shares`."""
    found = []
    for rubric in GRADED_RUBRICS:
        theirs, mine = reference[rubric.key], stage_shares(data, judge, rubric)
        rows = []
        for stage in rubric.stages:
            both = pd.concat({"reference": theirs[stage], "judge": mine[stage]}, axis=1,
                             join="inner").dropna()
            human, machine = both["reference"].to_numpy(float), both["judge"].to_numpy(float)
            leaning = bias(human, machine)
            rows.append(StageLeniency(rubric, stage, mean_difference(machine, human, (-1, 1)),
                                      leaning.lenient, leaning.strict))
        if any(row.difference.n for row in rows):
            found += rows
    return found


def length_bias(data: ScoreData, judge: str, reference: str) -> LengthBias:
    """The score-share difference (judge − reference) of each response both assessed
    completely, regressed on log2 of its length in characters (empty responses left out)."""
    both = common.paired(data, judge, reference, "score_pct")
    size = data.lengths.reindex(both.index).astype(float)
    keep = size.to_numpy() > 0
    chars = size.to_numpy()[keep]
    difference = (both["judge"] - both["reference"]).to_numpy(float)[keep]
    doublings = np.log2(chars)
    n = len(chars)
    slope: Estimate
    intercept = None
    if n < 3:
        slope = Estimate.unavailable(n, "a slope with an interval needs at least 3 responses")
    elif np.ptp(doublings) == 0:
        slope = Estimate.unavailable(n, "every response has the same length")
    elif np.ptp(difference) == 0:
        slope = Estimate(0.0, None, n, "the difference is the same on every response")
        intercept = float(difference[0])
    else:
        fit = stats.linregress(doublings, difference)
        half = t95(n - 2) * fit.stderr
        slope = Estimate(fit.slope, (fit.slope - half, fit.slope + half), n)
        intercept = float(fit.intercept)
    return LengthBias(slope, intercept, spearman(doublings, difference), chars, difference)


def agreement(data: ScoreData, judge: str, reference: str, version: str,
              first_assessed: str | None, history: Sequence[Refinement] = ()) -> Agreement:
    """The judge's overall agreement with the reference, and its exact agreement on the
    responses held out by the latest of ``history`` (the project's refinements, oldest first)
    it took part in."""
    answers = pd.concat({"reference": score_tables.final_correct(data, reference),
                         "judge": score_tables.final_correct(data, judge)}, axis=1,
                        join="inner")
    final = (proportion(int((answers["reference"] == answers["judge"]).sum()), len(answers))
             if len(answers) else Estimate.unavailable(0, "no final answer scored by both"))
    both = common.paired(data, judge, reference, "score_pct")
    made_by = next((r for r in reversed(history) if r.after == judge), None)
    latest = next((r for r in reversed(history) if judge in (r.before, r.after)), None)
    same = same_values(data, judge, reference)
    return Agreement(judge, version, first_assessed, len(both), final, exact_agreement(same),
                     mean_difference(both["judge"].to_numpy(float),
                                     both["reference"].to_numpy(float), (-1, 1)),
                     made_by,
                     NOT_REFINED if latest is None else exact_agreement(same, latest.heldout))


def same_values(data: ScoreData, judge: str, reference: str) -> pd.Series:
    """Whether both gave the same value, a row per criterion both scored with a number, indexed
    by response: pooled once, for :func:`exact_agreement` on every response and on those held
    out."""
    graded = {rubric.key for rubric in GRADED_RUBRICS}
    same = [both[reference] == both[judge]
            for (rubric, criterion) in data.criteria if rubric in graded
            for both in [score_tables.criterion_ratings(data, rubric, criterion,
                                                        [reference, judge], complete=True)]]
    return pd.concat(same) if same else pd.Series(dtype=bool)


def exact_agreement(pooled: pd.Series, responses: Collection[str] | None = None) -> Estimate:
    """The share of criteria on which both gave the same value (``pooled``: :func:`same_values`),
    averaged over responses (only ``responses``, when given): each response counts once, and
    the Wilson interval allows for the criteria of one response going together
    (:func:`~physgrade.stats.describe.clustered_proportion`)."""
    if responses is not None:
        pooled = pooled[pooled.index.isin(list(responses))]
    if pooled.empty:
        return Estimate.unavailable(0, "no criterion scored by both" + (
            "" if responses is None else " on these responses"))
    by_response = pooled.groupby(level=0).agg(["sum", "size"])
    return clustered_proportion(by_response["sum"], by_response["size"])


# -- the rules -------------------------------------------------------------------------------------


def findings(mine: Agreement, stages: list[StageLeniency], length: LengthBias,
             reference: str) -> list[Finding]:
    """Each rule of the verdict applied to a judge's measures, in a fixed order."""
    return [_graded_by_both(mine.graded_by_both, reference),
            _final_answers(mine.final_answer, reference),
            _overall(mine.leniency, reference),
            _stages(stages),
            _length(length.slope, reference)]


def _graded_by_both(n: int, reference: str) -> Finding:
    check = "Responses graded by both"
    if n < MIN_GRADED_BY_BOTH:
        return Finding(check, n, REVIEW, f"Only {count(n, 'response')} graded by both the "
                       f"judge and {reference}: too few to vouch for it "
                       f"({MIN_GRADED_BY_BOTH} needed).")
    return Finding(check, n, TRUSTWORTHY, f"{count(n, 'response')} graded by both the judge "
                   f"and {reference}.")


def _final_answers(final: Estimate, reference: str) -> Finding:
    check = "Final-answer agreement"
    if final.value is None:
        return Finding(check, final, REVIEW, f"No final answer scored by both it and "
                       f"{reference}.")
    if final.ci95 is None:  # a value alone cannot vouch for its own lower end
        return Finding(check, final, REVIEW, f"Final-answer agreement with {reference} has no "
                       f"interval ({final.reason}).")
    low = final.ci95[0]
    said = f"Agrees with {reference} on {final.value:.0%} of final answers (n = {final.n:,})"
    if low < FINAL_AGREEMENT_CAUTION:
        verdict = REVIEW if low < FINAL_AGREEMENT_REVIEW else CAUTION
        return Finding(check, final, verdict, f"{said}; it could be as low as {low:.0%}.")
    return Finding(check, final, TRUSTWORTHY, said + ".")


def _overall(leniency: Estimate, reference: str) -> Finding:
    check = "Overall leniency"
    if leniency.value is None:
        return Finding(check, leniency, TRUSTWORTHY, f"Overall leniency unknown "
                       f"({leniency.reason}).")
    value, size = leniency.value, abs(leniency.value)
    sure = leniency.ci95 is not None and not leniency.ci95[0] <= 0 <= leniency.ci95[1]
    said = (f"{'Lenient' if value > 0 else 'Strict'} overall: {_signed(value)} points"
            f"{_interval(leniency)} against {reference}.")
    if sure and size > LENIENCY_REVIEW:
        return Finding(check, leniency, REVIEW, said)
    if sure and size > LENIENCY_CAUTION:
        return Finding(check, leniency, CAUTION, said)
    return Finding(check, leniency, TRUSTWORTHY, f"Overall within {_points(LENIENCY_CAUTION)} "
                   f"points of {reference} ({_signed(value)}).")


def _stages(stages: list[StageLeniency]) -> Finding:
    check = "Leniency per stage (largest)"
    known = [s for s in stages if s.difference.value is not None]
    if not known:
        return Finding(check, None, TRUSTWORTHY, "No stage scored by both.")
    off = [s for s in known if s.difference.ci95 is not None
           and (s.difference.ci95[0] > STAGE_LENIENCY_CAUTION
                or s.difference.ci95[1] < -STAGE_LENIENCY_CAUTION)]
    if off:
        worst = max(off, key=lambda s: abs(s.difference.value or 0))
        return Finding(check, worst.difference, CAUTION, " ".join(
            f"{'Lenient' if (s.difference.value or 0) > 0 else 'Strict'} on {s.name}: "
            f"{_signed(s.difference.value or 0)} points{_interval(s.difference)}." for s in off))
    worst = max(known, key=lambda s: abs(s.difference.value or 0))
    return Finding(check, worst.difference, TRUSTWORTHY, f"No stage surely beyond "
                   f"{_points(STAGE_LENIENCY_CAUTION)} points; the largest gap is {worst.name}, "
                   f"{_signed(worst.difference.value or 0)}.")


def _length(slope: Estimate, reference: str) -> Finding:
    check = "Length bias (per doubling)"
    if slope.value is None:
        return Finding(check, slope, TRUSTWORTHY, f"Length bias unknown ({slope.reason}).")
    said = f"{_signed(slope.value)} points per doubling of length{_interval(slope)}"
    if slope.ci95 is not None and slope.ci95[0] > 0 and slope.value >= LENGTH_SLOPE_CAUTION:
        return Finding(check, slope, CAUTION, f"Favours long responses more than {reference} "
                       f"does: {said}.")
    return Finding(check, slope, TRUSTWORTHY, f"Does not favour long responses more than "
                   f"{reference} does ({said}).")


# -- the section -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Versions:
    """What the cards read of a project besides the scores, read whole once
    (:func:`read_versions`): each language-model judge label's name, prompt version and first
    assessment (None: scores without one), and the refinements, oldest first."""

    made: Mapping[str, tuple[str, str, str | None]]
    history: tuple[Refinement, ...]


def read_versions(project: Project) -> Versions:
    """Every language-model judge's versions and the refinements, for :func:`judge_cards`."""
    return Versions(
        {rater_label(name, version, run): (name, version, first) for name, version, run, first in
         project.conn.execute(
             "SELECT r.name, r.prompt_version, r.run, MIN(a.assessed_at) FROM raters r "
             f"LEFT JOIN assessments a ON a.rater_id = r.id WHERE {is_kind(LLM)} "
             "GROUP BY r.id")},
        tuple(refine.refinements(project)))


def judge_cards(versions: Versions, data: ScoreData, task: Task | None = None) -> list[JudgeCard]:
    """A card per language-model judge of the report, against the report's main reference
    (none without a reference). A judge's versions are ordered by their first assessment, those
    scored without one first, then by version."""
    task = task or Task()
    reference = common.main_reference(data)
    judges = language_model_judges(data)
    if reference is None or not judges:
        return []
    made, history = versions.made, versions.history
    agreements = {}
    for done, judge in enumerate(judges):
        task.report(done, 2 * len(judges), f"agreement of {judge}")
        agreements[judge] = agreement(data, judge, reference, made[judge][1],
                                      made[judge][2], history)
    theirs = reference_stage_shares(data, reference)
    cards = []
    for done, judge in enumerate(judges, start=len(judges)):
        task.report(done, 2 * len(judges), f"judge card for {judge}")
        same_name = sorted((agreements[other] for other in judges
                            if made[other][0] == made[judge][0]),
                           key=lambda a: (a.first_assessed or "", a.version))
        stages = stage_leniency(data, judge, theirs)
        length = length_bias(data, judge, reference)
        cards.append(JudgeCard(judge, reference, stages, length, same_name,
                               findings(agreements[judge], stages, length, reference)))
    return cards


def judge_cards_section(versions: Versions, data: ScoreData, number: int,
                        task: Task) -> Section | None:
    """The section "Judge cards" (None when the report has no language-model judge or no
    experts' reference)."""
    cards = judge_cards(versions, data, task)
    if not cards:
        return None
    reference = cards[0].reference
    intro = (
        f"A card for each language-model judge, measured against {reference}: a plain verdict "
        "with its reasons, the judge's leniency per stage of the rubric, whether it favours "
        "long responses more than the experts do, and its agreement per prompt version, oldest "
        "first, with what a refined version was made from and how each version agreed on the "
        "responses a refinement held out. Differences are judge − reference in percentage "
        "points of the maximum score (above 0: the judge gives more, lenient), each with its "
        "95% interval. The worst rule a judge meets decides its verdict (the table of rules "
        "follows the verdicts).")
    summary: list[tuple[Cell, ...]] = []
    tables: list[Table] = []
    figures: list[Figure] = []
    used: set[str] = set()
    for card in cards:
        mine = next(v for v in card.versions if v.judge == card.judge)
        summary.append((card.judge, card.verdict, mine.graded_by_both, mine.final_answer,
                        mine.leniency))
        name = _unique(f"judge_card_{common.slug(card.judge)}", used)
        card_tables = _card_tables(card, name)
        tables += card_tables
        if card.length.slope.value is not None:
            figures.append(Figure(
                f"{name}_length", f"{card.judge}: score difference against response length",
                partial(plots.doubling_scatter, card.length.lengths, card.length.differences,
                                       card.length.intercept, card.length.slope.value,
                                       "response length (characters, doubling scale)",
                                       f"judge − {reference} (points)"),
                "Each dot is a response both assessed completely (jittered slightly). The line "
                "is the fitted slope: rising to the right means the judge favours long "
                "responses more than the experts do.", card_tables[2].name))
    tables.insert(0, Table("judge_verdicts", "Judge verdicts",
                           ("Judge", "Verdict", "Graded by both", "Final-answer agreement",
                            "Judge − reference"), summary,
                           f"Judge − reference: the mean difference of the score share against "
                           f"{reference}. Each judge's card below gives the reasons.",
                           frozenset({"Final-answer agreement", "Judge − reference"})))
    tables.insert(1, Table("judge_verdict_rules", "How a verdict is reached",
                           ("Verdict", "Meaning", "Given when"), list(verdict_rules()),
                           "Leniency and stage differences are judge − reference in points of "
                           "100; agreement and length bias as in each card."))
    return Section(f"{number}. Judge cards", intro, tables, figures)


def _unique(name: str, used: set[str]) -> str:
    """``name``, or it with a number added when another judge's label made the same name."""
    chosen, suffix = name, 2
    while chosen in used:
        chosen, suffix = f"{name}_{suffix}", suffix + 1
    used.add(chosen)
    return chosen


def _card_tables(card: JudgeCard, name: str) -> list[Table]:
    """The verdict, the leniency per stage, the length bias and the prompt versions."""
    judge, reference = card.judge, card.reference
    verdict = Table(
        name, f"{judge}: {card.verdict}", ("Check", "Result", "Verdict"),
        [(f.check, f.result, f.verdict) for f in card.findings],
        f"{card.verdict.capitalize()}. " + " ".join(card.reasons), frozenset({"Result"}))
    stages = Table(
        f"{name}_stages", f"{judge}: leniency per stage, against {reference}",
        ("Rubric", "Stage", "n", "Judge − reference", "Judge higher", "Judge lower"),
        [(s.rubric.title, s.stage, s.difference.n, s.difference, s.higher, s.lower)
         for s in card.stages],
        "Judge − reference: the mean difference of the stage's points as a share of its "
        "maximum; judge higher and lower: the shares of responses where the judge gave the "
        "stage more or less than the reference.",
        frozenset({"Judge − reference", "Judge higher", "Judge lower"}))
    length = Table(
        f"{name}_length", f"{judge}: length bias, against {reference}",
        ("n", "Change per doubling of length", "Spearman ρ"),
        [(card.length.slope.n, card.length.slope, card.length.spearman)],
        "The score-share difference (judge − reference) of each response regressed on log2 of "
        "its length in characters: the change of the difference when a response is twice as "
        "long. Spearman's ρ between length and difference is a check that needs no straight "
        "line.", frozenset({"Change per doubling of length"}))
    versions = Table(
        f"{name}_versions", f"{judge}: agreement per prompt version",
        ("Version", "Made from", "n", "Final answers", "Exact", "Held-out exact",
         "Judge − reference"),
        [(v.version or "(none)", v.made_from(), v.graded_by_both, v.final_answer, v.exact,
          v.heldout, v.leniency) for v in card.versions],
        "Every prompt version of this judge's name in the report, in the order of their first "
        "verdicts. Made from: for a version a refinement made, the version it was refined from "
        "and how many expert-corrected responses it was shown as examples. n: responses graded "
        "by both. Final answers: the share of final answers both called right or both wrong. "
        "Exact: the share of criteria both gave the same value, averaged over responses. "
        "Held-out exact: the same, on the responses held out by the latest refinement the "
        "version took part in (as the version refined or the one made), none of which was "
        "shown as an example, so a refined version and its base compare fairly there. Judge − "
        "reference: the mean difference of the score share.",
        frozenset({"Final answers", "Exact", "Held-out exact", "Judge − reference"}))
    return [verdict, stages, length, versions]
