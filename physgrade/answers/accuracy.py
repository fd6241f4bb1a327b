"""Final answers judged to the seeds' standard: strict, liberal and unjudgeable accuracy per model,
from a rater's stored answer checks, and how far those checks agree with the experts.

The measures are Physics-R1's (seeds/002, §5 and appendix D, as summarised in
reference/studies.md):

    "a YES/NO judge per gold sub-answer, a problem correct only if every sub-part is;
    strict = correct / n; liberal = (correct + ½·partial) / n; unjudgeable gold (rubrics,
    figure-only references) kept in n and reported as a rate."

Its worked example (appendix H.7, Estonian originals): 59 problems, 18 correct, 9 partial, 27
incorrect, 5 unjudgeable: strict 30.5%, liberal 38.1%.

Here, for one rater's checks (the rules rater ``rules``, or any rater that stores the same
assessment fields, such as a ``rules+<model>`` rater whose model stage judges what the rules
could not), each response whose question has a reference answer falls in exactly one class:

- **unjudgeable**: the check could not read the *reference* answer (:func:`reference_unreadable`:
  an ``unparseable`` or ``not_checked`` outcome whose reason blames the reference, e.g.
  "part 2: reference answer: \\foo is not supported" or "..., but the reference's 'x' cannot
  be read"). Kept in n, reported as its own rate.
- **correct**: outcome ``equivalent`` (every sub-answer right).
- **partial**: some but not all of the reference's sub-answers surely right (``parts_right`` of
  ``parts_total``, stored with each check; a check stored before the counts were kept counts as
  one part, right if equivalent). A sub-answer the rules could not verify is not right, as a
  judge's NO is.
- **unchecked**: ``not_checked``, ``unparseable`` (the response) or ``timeout`` with no
  sub-answer surely right: not correct, reported as its own rate.
- **incorrect**: the rest (``not_equivalent``, ``no_answer``), and responses the rater has not
  assessed at all (**missing**, counted apart so that a forgotten ``physgrade verify`` shows).

n counts every class. Each rate has a Wilson 95% interval; liberal's successes are fractional
(correct + ½·partial), which the Wilson formula takes as they are.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import proportion_confint

from .. import question_fields
from ..project import Project
from ..raters import HUMAN, HUMAN_CONSENSUS, judge_label, rater_label
from ..rubric import FINAL_ANSWER, GRADED_RUBRICS
from ..scoring.tables import ScoreData, criterion_ratings
from ..selection import shown, value_order
from ..stats.agreement import cohen_kappa
from ..stats.describe import LEVEL, NO_CASES, proportion
from ..stats.estimate import Estimate
from .outcome import Outcome, counted_parts
from .verify import RATER

#: The classes of :mod:`this module <physgrade.answers.accuracy>`, in table order.
CLASSES = ("correct", "partial", "incorrect", "unchecked", "unjudgeable", "missing")
#: The row of every model together.
ALL = "all models"
_UNCHECKED = {Outcome.NOT_CHECKED.value, Outcome.UNPARSEABLE.value, Outcome.TIMEOUT.value}
_VERDICT = {Outcome.EQUIVALENT.value: True, Outcome.NOT_EQUIVALENT.value: False,
            Outcome.NO_ANSWER.value: False}
#: A reason that blames the reference answer (the wording of :func:`physgrade.answers.compare.check`).
_REFERENCE_UNREADABLE = re.compile(r"^(part \d+: )?reference answer: |the reference's .* cannot be read")

_CHECKS_SQL = (
    "SELECT a.response_id, t.name, t.prompt_version, a.comment, a.extra "
    "FROM assessments a JOIN raters t ON t.id = a.rater_id "
    "JOIN responses r ON r.id = a.response_id JOIN questions q ON q.id = r.question_id "
    f"WHERE t.kind != '{HUMAN}' AND trim(coalesce(q.answer, '')) != '' "
    "ORDER BY a.response_id, a.assessed_at")
_REFERENCED_SQL = ("SELECT r.id, r.model FROM responses r JOIN questions q ON q.id = r.question_id "
                   "WHERE trim(coalesce(q.answer, '')) != '' ORDER BY r.id")


def reference_unreadable(outcome: str, reason: str) -> bool:
    """Whether a check could not judge because the reference answer itself cannot be read: an
    ``unparseable`` or ``not_checked`` outcome whose reason names the reference (the rules write
    "reference answer: ..." or "the reference's '...' cannot be read" then; a response's fault
    reads "response answer: ..." or "the response's ...")."""
    return (outcome in (Outcome.UNPARSEABLE.value, Outcome.NOT_CHECKED.value)
            and _REFERENCE_UNREADABLE.search(reason) is not None)


def classify(outcome: str, reason: str, parts_right: int | None, parts_total: int | None) -> str:
    """The class (:data:`CLASSES`) of one stored check."""
    if reference_unreadable(outcome, reason):
        return "unjudgeable"
    if outcome == Outcome.EQUIVALENT.value:
        return "correct"
    right, total = counted_parts(outcome, parts_right, parts_total)
    if 0 < right < total:
        return "partial"
    return "unchecked" if outcome in _UNCHECKED else "incorrect"


@dataclass(frozen=True)
class Checks:
    """What the measures are computed from: ``responses`` (every response whose question has
    a reference answer: index response id, column ``model``) and ``checks`` (one row per stored
    check with an outcome by a rater that is not a person: ``response_id``, ``rater`` label,
    ``outcome``, ``reason``, ``parts_right``, ``parts_total``, ``stage``, ``class``)."""

    responses: pd.DataFrame
    checks: pd.DataFrame

    def raters(self) -> list[str]:
        """The labels of the raters with checks, ``rules`` first."""
        labels = set(self.checks["rater"])
        return sorted(labels, key=lambda label: (label != RATER, label))

    def has_checks(self) -> bool:
        return not self.checks.empty

    def of(self, rater: str) -> pd.DataFrame:
        """Every response with a reference answer, with ``rater``'s check of it (class
        ``missing`` where it has none)."""
        mine = self.checks[self.checks["rater"] == rater].drop_duplicates("response_id", keep="last")
        joined = self.responses.join(mine.set_index("response_id").drop(columns="rater"))
        joined["class"] = joined["class"].fillna("missing")
        return joined

    def narrowed(self, ids: pd.Index) -> Checks:
        """Only the responses ``ids`` (a report's selection)."""
        return Checks(self.responses[self.responses.index.isin(ids)],
                      self.checks[self.checks["response_id"].isin(ids)])


def read_checks(project: Project) -> Checks:
    """Every response with a reference answer, and every stored check of one (reads only)."""
    responses = pd.DataFrame(project.conn.execute(_REFERENCED_SQL).fetchall(),
                             columns=["response_id", "model"]).set_index("response_id")
    rows = []
    for response_id, name, version, comment, extra_text in project.conn.execute(_CHECKS_SQL):
        try:
            extra = json.loads(extra_text or "{}")
        except ValueError:
            continue
        if not isinstance(extra, dict) or "outcome" not in extra:
            continue  # a judge's assessment, not an answer check
        outcome, reason = str(extra["outcome"]), str(extra.get("reason") or comment or "")
        right, total = extra.get("parts_right"), extra.get("parts_total")
        rows.append((response_id, rater_label(name, version), outcome, reason, right, total,
                     extra.get("stage"), classify(outcome, reason, right, total)))
    checks = pd.DataFrame(rows, columns=["response_id", "rater", "outcome", "reason",
                                         "parts_right", "parts_total", "stage", "class"])
    return Checks(responses, checks)


# -- strict, liberal, unjudgeable ------------------------------------------------------------------


@dataclass(frozen=True)
class Accuracy:
    """One row of the accuracy table: a model's (or :data:`ALL`'s) counts per class and rates."""

    model: str
    n: int
    counts: dict[str, int]
    strict: Estimate
    liberal: Estimate
    unjudgeable: Estimate
    unchecked: Estimate

    def as_dict(self) -> dict:
        return {"model": self.model, "n": self.n, **self.counts,
                "strict": self.strict.as_dict(), "liberal": self.liberal.as_dict(),
                "unjudgeable_rate": self.unjudgeable.as_dict(),
                "unchecked_rate": self.unchecked.as_dict()}


def share(successes: float, n: int) -> Estimate:
    """``successes`` (possibly fractional: correct + ½·partial) of ``n`` with Wilson's interval."""
    if n == 0:
        return Estimate.unavailable(0, NO_CASES)
    low, high = proportion_confint(successes, n, alpha=1 - LEVEL, method="wilson")
    return Estimate(successes / n, (float(low), float(high)), n)


def measures(model: str, counts: dict[str, int]) -> Accuracy:
    """The rates of one row from its counts per class."""
    n = sum(counts.get(name, 0) for name in CLASSES)
    full = {name: int(counts.get(name, 0)) for name in CLASSES}
    return Accuracy(model, n, full, proportion(full["correct"], n),
                    share(full["correct"] + full["partial"] / 2, n),
                    proportion(full["unjudgeable"], n), proportion(full["unchecked"], n))


def accuracy(checks: Checks, rater: str = RATER) -> list[Accuracy]:
    """Strict, liberal and unjudgeable rates of ``rater``'s checks, per model (sorted) and for
    every model together (last)."""
    rows = checks.of(rater)
    result = []
    for model, group in rows.groupby("model", sort=True):
        result.append(measures(str(model), _counts(group["class"])))
    result.append(measures(ALL, _counts(rows["class"])))
    return result


def accuracy_by(checks: Checks, rater: str, values: pd.Series) -> list[tuple[str, Accuracy]]:
    """:func:`accuracy` per value of a question field: the breakdowns the seeds publish
    (UGPhysics by subject, skill, answer type and language; Physics-R1 by native difficulty).
    ``values``: each response's value, by response id (a missing one is
    :data:`~physgrade.selection.NONE`). Values in menu order, each with its models (sorted)
    and then every model together."""
    rows = checks.of(rater)
    labels = values.reindex(rows.index).map(shown)
    result = []
    for value in sorted(labels.unique(), key=value_order):
        part = rows[(labels == value).to_numpy()]
        result += [(value, measures(str(model), _counts(group["class"])))
                   for model, group in part.groupby("model", sort=True)]
        result.append((value, measures(ALL, _counts(part["class"]))))
    return result


def response_values(project: Project, field: str) -> pd.Series:
    """Each response's value of its question's ``field`` (any question field, see
    :mod:`physgrade.question_fields`), by response id; a ValueError names the fields there are
    when no question has it."""
    known = question_fields.known(project)
    if field not in known:
        raise ValueError(f"no question has a field {field!r}; the fields are "
                         f"{', '.join(known) or 'none (no questions)'}")
    by_question = question_fields.values(project, field)
    ids = project.conn.execute("SELECT id, question_id FROM responses").fetchall()
    return pd.Series({rid: by_question.get(qid) for rid, qid in ids}, dtype=object)


def _counts(classes: pd.Series) -> dict[str, int]:
    return {str(name): int(count) for name, count in classes.value_counts().items()}


# -- agreement with the experts -------------------------------------------------------------------


@dataclass(frozen=True)
class Difference:
    """A response where the rater's verdict and the experts' ANS score differ."""

    response_id: str
    model: str
    outcome: str
    reason: str
    expert_score: float
    expert_maximum: int

    def as_dict(self) -> dict:
        return {"response_id": self.response_id, "model": self.model, "outcome": self.outcome,
                "reason": self.reason, "expert_score": self.expert_score,
                "expert_maximum": self.expert_maximum}


@dataclass(frozen=True)
class ExpertAgreement:
    """How a rater's right/wrong verdicts agree with the experts' ANS (right = at its maximum),
    on the responses both judged: ``n``, exact agreement and Cohen's kappa with 95% intervals,
    the discordant counts, and each response where they differ."""

    rater: str
    reference: str
    n: int
    exact: Estimate
    kappa: Estimate
    rater_only: int       # the rater says right, the experts wrong (lenient)
    reference_only: int   # the experts say right, the rater wrong (strict)
    differences: list[Difference]

    def as_dict(self) -> dict:
        return {"rater": self.rater, "reference": self.reference, "n": self.n,
                "exact_agreement": self.exact.as_dict(), "cohen_kappa": self.kappa.as_dict(),
                "rater_only_right": self.rater_only, "reference_only_right": self.reference_only,
                "differences": [d.as_dict() for d in self.differences]}


def expert_scores(data: ScoreData, reference: str = HUMAN_CONSENSUS) -> pd.DataFrame:
    """``reference``'s ANS score of each response it scored: columns ``score`` and ``maximum``."""
    parts = []
    for rubric in GRADED_RUBRICS:
        scored = criterion_ratings(data, rubric.key, FINAL_ANSWER, [reference])[reference].dropna()
        parts.append(pd.DataFrame({"score": scored,
                                   "maximum": rubric.criterion(FINAL_ANSWER).maximum}))
    return pd.concat(parts) if parts else pd.DataFrame(columns=["score", "maximum"])


def expert_agreement(checks: Checks, data: ScoreData, rater: str = RATER,
                     reference: str = HUMAN_CONSENSUS) -> ExpertAgreement:
    """Agreement of ``rater``'s verdicts (right: ``equivalent``; wrong: ``not_equivalent`` or
    ``no_answer``; other outcomes give no verdict and are left out) with ``reference``'s
    (by default the experts' consensus) ANS at its maximum or not."""
    rows = checks.of(rater)
    judged = rows[rows["outcome"].isin(list(_VERDICT))]
    experts = expert_scores(data, reference)
    both = judged.join(experts, how="inner")
    said = both["outcome"].map(_VERDICT).to_numpy(bool)
    right = (both["score"] >= both["maximum"]).to_numpy(bool)
    n = len(both)
    same = int((said == right).sum())
    kappa = cohen_kappa(np.column_stack([said, right]).astype(float), categories=(0, 1))
    differences = [Difference(str(rid), str(model), str(outcome), str(reason), float(score),
                              int(maximum))
                   for rid, model, outcome, reason, score, maximum, agrees in zip(
                       both.index, both["model"], both["outcome"], both["reason"],
                       both["score"], both["maximum"], said == right)
                   if not agrees]
    return ExpertAgreement(rater, reference, n, proportion(same, n), kappa,
                           int((said & ~right).sum()), int((~said & right).sum()), differences)


# -- for the command line ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Judged:
    """What ``physgrade answers`` shows: a rater's accuracy table and its agreement with the
    experts."""

    rater: str
    rows: list[Accuracy]
    agreement: ExpertAgreement
    #: the question field of ``by_rows`` (``--by``), and the rates per value of it
    by: str | None = None
    by_rows: tuple[tuple[str, Accuracy], ...] = ()

    def as_dict(self) -> dict:
        found = {"rater": self.rater, "accuracy": [row.as_dict() for row in self.rows],
                 "agreement": self.agreement.as_dict()}
        if self.by is not None:
            found["by"] = {"field": self.by, "rows": [{self.by: value, **row.as_dict()}
                                                      for value, row in self.by_rows]}
        return found

    def text(self) -> str:
        wide = max(len(row.model) for row in self.rows)
        lines = [f"Final answers judged by {self.rater} (strict: every part right; liberal: "
                 "half credit for some parts right)",
                 f"  {'model':<{wide}} {'n':>5}  {'strict':<20} {'liberal':<20} "
                 f"{'unjudgeable':<20} {'unchecked':<20} {'partial':>7} {'missing':>7}"]
        for row in self.rows:
            lines.append(f"  {row.model:<{wide}} {row.n:>5,}  {_rate(row.strict):<20} "
                         f"{_rate(row.liberal):<20} {_rate(row.unjudgeable):<20} "
                         f"{_rate(row.unchecked):<20} {row.counts['partial']:>7,} "
                         f"{row.counts['missing']:>7,}")
        if self.by is not None:
            values = max(len(self.by), *(len(value) for value, _ in self.by_rows))
            lines += ["", f"By {self.by}:",
                      f"  {self.by:<{values}} {'model':<{wide}} {'n':>5}  {'strict':<20} "
                      f"{'liberal':<20} {'unjudgeable':<20}"]
            lines += [f"  {value:<{values}} {row.model:<{wide}} {row.n:>5,}  "
                      f"{_rate(row.strict):<20} {_rate(row.liberal):<20} "
                      f"{_rate(row.unjudgeable):<20}" for value, row in self.by_rows]
        found = self.agreement
        lines.append("")
        lines.append(f"Agreement with the experts ({found.reference}, ANS at its maximum or not) "
                     f"on {found.n:,} responses both judged:")
        lines.append(f"  exact agreement  {_rate(found.exact)}")
        kappa = found.kappa.text() if found.kappa.value is not None else f"n/a ({found.kappa.reason})"
        lines.append(f"  Cohen's kappa    {kappa}")
        lines.append(f"  {self.rater} right, experts not: {found.rater_only:,}; "
                     f"experts right, {self.rater} not: {found.reference_only:,}")
        if found.differences:
            lines.append("  where they differ:")
            for d in found.differences:
                lines.append(f"    {d.response_id}  {d.model}  {d.outcome}: {d.reason}  "
                             f"(experts' ANS {d.expert_score:g} of {d.expert_maximum})")
        return "\n".join(lines)


def _rate(rate: Estimate) -> str:
    return "n/a" if rate.value is None else rate.text(percent=True)


def judged(project: Project, rater: str = RATER, reference: str = HUMAN_CONSENSUS,
           by: str | None = None) -> Judged:
    """``rater``'s accuracy table and agreement with ``reference`` (reads only), and its rates
    per value of the question field ``by`` if given. ``rater`` is a label (``rules``,
    ``rules [rtol 0.05]``, ``rules+MODEL [VERSION]``) or a name borne under one version only
    (``rules+MODEL``); a ValueError names the raters with checks if it has none, and the
    fields there are if no question has ``by``."""
    from ..scoring.tables import load

    checks = read_checks(project)
    try:  # a name borne under one version only stands for it ('rules+MODEL')
        rater = judge_label(project, rater)
    except ValueError:
        pass  # refused below, naming the raters that have checks
    if rater not in checks.raters():
        raise ValueError(f"no answer checks by {rater!r} in this project (raters with checks: "
                         f"{', '.join(checks.raters()) or 'none: run physgrade verify'})")
    by_rows = () if by is None else tuple(accuracy_by(checks, rater, response_values(project, by)))
    return Judged(rater, accuracy(checks, rater),
                  expert_agreement(checks, load(project), rater, reference), by, by_rows)
