"""Paired conditions: the same problems under two conditions of one question field (Estonian and
English, LaTeX and plain text, with and without a scaffold), compared problem by problem.

Physics-R1 (seeds/002, §5.1 and App. H) puts 59 Estonian olympiad problems and their English
translations to one model and reads the 2×2 table of correct answers: 13 right only in
Estonian, 3 only in English, so exact McNemar p ≈ 0.021, with the sign test and a paired
bootstrap interval of the difference. Here any two values ``a`` and ``b`` of a question field
(``condition``) are compared, problems being matched by another field (``pair_by``, e.g.
``pair_id``): the question with ``a`` and the question with ``b`` that share a ``pair_by`` value
are one problem. Each problem must have at most one question per condition (two would make the
pairing ambiguous: refused, naming the problem).

A *pair* is one model's outcome on both questions of a problem. Where a model answered a
question several times, its outcome there is the mean of its responses' outcomes (a single
response's outcome otherwise); the 2×2 table and McNemar's test then need every such mean to be
0 or 1 and are left out, with the reason, where one is not. A response with no outcome (not
scored or not checked by the rater) is left out; a problem with no outcome on one side gives no
pair for that model, and a model with no pair at all is not listed.

Measures (each pair's outcome on each side):

- ``final``: the rater's final answer at its maximum (ANS, 1 or 0);
- ``strict``: the answer check is ``correct`` (1) or not (0): partial, incorrect, unchecked and
  unjudgeable count 0, as Physics-R1 keeps unjudgeable problems in n;
- ``liberal``: correct 1, partial ½, the rest 0;
- ``score``: the response's score as a share of its possible points.

McNemar's test and the 2×2 table are for yes/no outcomes (final, strict); liberal and score get
the sign test on the paired differences and the bootstrap interval, and no McNemar. The overall
row pools every model's pairs; its bootstrap resamples problems, each with all its models' pairs,
since one problem's pairs go together (its McNemar and sign test count the pooled pairs as if
independent, and say so).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from physgrade import question_fields
from physgrade.answers.accuracy import ALL, Checks
from physgrade.changes import Changes, RecordKind
from physgrade.project import Project
from physgrade.raters import judge_label
from physgrade.scoring.tables import ScoreData, sheet
from physgrade.stats.describe import LEVEL
from physgrade.stats.estimate import Estimate
from physgrade.stats.paired import McNemar, SignTest, mcnemar_exact, sign_test

#: What a pair's outcomes can be, and what each is in words.
MEASURES = {"final": "final answer at its maximum (ANS)",
            "strict": "answer check correct (strict)",
            "liberal": "answer check correct, partial counting ½ (liberal)",
            "score": "score as a share of the possible points"}
#: The measures whose outcomes are yes/no: McNemar's test and the 2×2 table apply.
BINARY = frozenset({"final", "strict"})
#: The measures read from answer checks rather than from scores.
FROM_CHECKS = frozenset({"strict", "liberal"})
#: The project setting that keeps the declared pairings (a JSON list of :class:`Pairing`).
SETTING = "pairings"
#: The liberal credit of each answer-check class (every other class counts 0).
_LIBERAL = {"correct": 1.0, "partial": 0.5}
#: Resamples drawn at once (bounds the memory of a bootstrap over many problems).
_CHUNK = 256


@dataclass(frozen=True, slots=True)
class Pairing:
    """Compare ``condition`` = ``a`` with ``condition`` = ``b`` on the problems ``pair_by`` names,
    by ``measure`` (one of :data:`MEASURES`)."""

    pair_by: str
    condition: str
    a: str
    b: str
    measure: str = "final"

    def __post_init__(self) -> None:
        if self.measure not in MEASURES:
            raise ValueError(f"unknown measure {self.measure!r}; use one of {', '.join(MEASURES)}")
        if self.pair_by == self.condition:
            raise ValueError(f"the problems cannot be paired by the condition's own field "
                             f"{self.condition!r}")
        if self.a == self.b:
            raise ValueError(f"the two conditions are both {self.a!r}: name two values")

    @classmethod
    def parse(cls, pair_by: str, condition: str, measure: str = "final") -> Pairing:
        """From the command line's ``--condition FIELD=A,B``."""
        field, sep, values = condition.partition("=")
        parts = [value.strip() for value in values.split(",")]
        if not sep or not field.strip() or len(parts) != 2 or not all(parts):
            raise ValueError(f"--condition {condition!r}: write FIELD=A,B, e.g. language=et,en")
        return cls(pair_by.strip(), field.strip(), parts[0], parts[1], measure)

    def describe(self) -> str:
        """``language: et vs en, paired by pair_id (final)``."""
        return f"{self.condition}: {self.a} vs {self.b}, paired by {self.pair_by} ({self.measure})"


@dataclass(frozen=True)
class Problems:
    """The problems of a pairing: for each ``pair_by`` value with a question in both conditions,
    the question with ``a`` and the one with ``b``."""

    pairing: Pairing
    a: dict[str, str]   # problem -> question id
    b: dict[str, str]


def problems(project: Project, pairing: Pairing) -> Problems:
    """The problems both conditions share (reads only). A ValueError names an unknown field (and
    the known ones), a condition no question has (and the values there are), a problem with two
    questions in one condition, or a pairing with no problem in both."""
    known = question_fields.known(project)
    for field in (pairing.pair_by, pairing.condition):
        if field not in known:
            raise ValueError(f"no question has the field {field!r} (fields: "
                             f"{', '.join(known) or 'none: import questions first'})")
    conditions = question_fields.values(project, pairing.condition)
    pair_values = question_fields.values(project, pairing.pair_by)
    present = sorted({value for value in conditions.values() if value is not None})
    for value in (pairing.a, pairing.b):
        if value not in present:
            raise ValueError(f"no question has {pairing.condition} = {value!r} (values: "
                             f"{', '.join(present)})")
    sides: dict[str, dict[str, str]] = {pairing.a: {}, pairing.b: {}}
    for qid, condition in sorted(conditions.items()):
        problem = pair_values.get(qid)
        if condition not in sides or problem is None:
            continue
        side = sides[condition]
        if problem in side:
            raise ValueError(f"problem {pairing.pair_by} = {problem!r} has two questions with "
                             f"{pairing.condition} = {condition!r} ({side[problem]}, {qid}): "
                             "a pair needs one question per condition")
        side[problem] = qid
    shared = sorted(set(sides[pairing.a]) & set(sides[pairing.b]))
    if not shared:
        raise ValueError(f"no {pairing.pair_by} value has a question with {pairing.condition} = "
                         f"{pairing.a!r} and one with {pairing.b!r}: nothing to pair")
    return Problems(pairing, {p: sides[pairing.a][p] for p in shared},
                    {p: sides[pairing.b][p] for p in shared})


# -- each response's outcome -------------------------------------------------------------------


def checks_rater(project: Project, checks: Checks, rater: str | None) -> str:
    """The answer-check rater: ``rater`` (a label, or a name borne under one version only), or
    the first with checks (``rules`` first). A ValueError names those with checks."""
    found = checks.raters()
    if rater is None and found:
        return found[0]
    if rater is not None:
        try:  # a name borne under one version only stands for it ('rules+MODEL')
            rater = judge_label(project, rater)
        except ValueError:
            pass  # refused below, naming the raters that have checks
        if rater in found:
            return rater
    raise ValueError(f"no answer checks by {rater!r} in this project (raters with checks: "
                     f"{', '.join(found) or 'none: run physgrade verify'})")


def outcomes(measure: str, data: ScoreData, checks: Checks, rater: str) -> pd.DataFrame:
    """Every response's outcome by ``measure`` (:data:`MEASURES`) as ``rater`` judged it: one row
    per response with an outcome (index response id; ``question_id``, ``model``, ``value``)."""
    if measure in FROM_CHECKS:
        rows = checks.of(rater)
        rows = rows[rows["class"] != "missing"]
        credit = _LIBERAL if measure == "liberal" else {"correct": 1.0}
        values = rows["class"].map(lambda name: credit.get(name, 0.0)).astype(float)
        question = data.responses["question_id"].reindex(rows.index)
        found = pd.DataFrame({"question_id": question, "model": rows["model"], "value": values})
        return found[found["question_id"].notna()]
    if rater not in data.raters():
        raise ValueError(f"no grades by {rater!r} in this project; choose one of "
                         f"{', '.join(data.raters()) or '(none: nobody has scored anything)'}")
    rows = sheet(data, rater)
    values = rows["final_correct"].astype(float) if measure == "final" else rows["score_pct"]
    found = pd.DataFrame({"question_id": rows["question_id"], "model": rows["model"],
                          "value": values})
    return found[found["value"].notna()]


# -- the comparison -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Paired:
    """One model's pairs (or every model's, :data:`~physgrade.answers.accuracy.ALL`): the 2×2
    table (None where an outcome is not yes/no), the rates, the difference A − B with its paired
    bootstrap interval, McNemar's test (None with ``mcnemar_reason`` where it does not apply)
    and the sign test (``above``: pairs where A is higher)."""

    model: str
    n_pairs: int
    table: dict[str, int] | None
    rate_a: float
    rate_b: float
    difference: Estimate
    mcnemar: McNemar | None
    mcnemar_reason: str | None
    sign: SignTest
    averaged: int   # pairs where a side is the mean of several responses

    def as_dict(self) -> dict:
        return {"model": self.model, "n_pairs": self.n_pairs, "table": self.table,
                "rate_a": self.rate_a, "rate_b": self.rate_b,
                "difference": self.difference.value,
                "ci95": list(self.difference.ci95) if self.difference.ci95 else None,
                "ci95_reason": None if self.difference.ci95 else self.difference.reason,
                "mcnemar": None if self.mcnemar is None else {
                    "p_value": self.mcnemar.p_value,
                    "discordant": (self.table or {}).get("only_a", 0)
                    + (self.table or {}).get("only_b", 0)},
                "mcnemar_reason": self.mcnemar_reason,
                "sign_test": {"p_value": self.sign.p_value, "a_higher": self.sign.above,
                              "b_higher": self.sign.below,
                              "ties": self.sign.n - self.sign.above - self.sign.below},
                "averaged_pairs": self.averaged}


@dataclass(frozen=True)
class Comparison:
    """A pairing compared per model (sorted) and over every model's pairs pooled."""

    pairing: Pairing
    rater: str
    models: list[Paired]
    overall: Paired
    resamples: int
    seed: int

    def as_dict(self) -> dict:
        return {"condition": self.pairing.condition, "a": self.pairing.a, "b": self.pairing.b,
                "pair_by": self.pairing.pair_by, "measure": self.pairing.measure,
                "rater": self.rater, "resamples": self.resamples, "seed": self.seed,
                "models": [row.as_dict() for row in self.models],
                "overall": self.overall.as_dict()}

    def text(self) -> str:
        p = self.pairing
        rows = [*self.models, self.overall]
        wide = max(len(row.model) for row in rows)
        a, b = f"{p.a} only", f"{p.b} only"
        lines = [f"{p.condition} = {p.a} (A) against {p.condition} = {p.b} (B), problems paired "
                 f"by {p.pair_by}; outcome: {MEASURES[p.measure]}, by {self.rater}",
                 f"  {'model':<{wide}} {'pairs':>6} {'both':>6} {a:>10} {b:>10} {'neither':>8}"
                 f"  {p.a:>7} {p.b:>7}  {'A − B [95% CI]':<24} {'McNemar p':>10} {'sign p':>8}"]
        for row in rows:
            table = row.table or {}
            counts = " ".join(f"{table[key]:>{width},}" if key in table else f"{'—':>{width}}"
                              for key, width in (("both", 6), ("only_a", 10), ("only_b", 10),
                                                 ("neither", 8)))
            lines.append(f"  {row.model:<{wide}} {row.n_pairs:>6,} {counts}  "
                         f"{row.rate_a:>7.1%} {row.rate_b:>7.1%}  "
                         f"{row.difference.text(percent=True):<24} "
                         f"{_p(row.mcnemar.p_value if row.mcnemar else None):>10} "
                         f"{_p(row.sign.p_value):>8}")
        notes = sorted({row.mcnemar_reason for row in rows if row.mcnemar_reason})
        lines += [f"  McNemar: {note}" for note in notes]
        lines.append(f"  {ALL}: every model's pairs pooled (tests count them as independent; "
                     f"the interval resamples problems); intervals: paired bootstrap, "
                     f"{self.resamples:,} resamples, seed {self.seed}")
        return "\n".join(lines)


def compare(found: Problems, outcome: pd.DataFrame, rater: str, resamples: int = 1000,
            seed: int = 0) -> Comparison:
    """Pair the ``outcome`` (:func:`outcomes`) of each model on the questions of ``found``; a
    ValueError when no model has an outcome on both sides of any problem."""
    if resamples < 0:
        raise ValueError(f"--resamples must be 0 or more, not {resamples}")
    pairs = _pairs(found, outcome)
    if pairs.empty:
        raise ValueError(f"no model has an outcome by {rater} on both questions of any problem "
                         f"of {found.pairing.describe()}")
    binary = found.pairing.measure in BINARY
    models = [_paired(str(model), group, binary, resamples, seed)
              for model, group in pairs.groupby("model", sort=True)]
    return Comparison(found.pairing, rater, models, _paired(ALL, pairs, binary, resamples, seed),
                      resamples, seed)


def _pairs(found: Problems, outcome: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, problem) with an outcome on both sides: ``a``, ``b`` (means over the
    model's responses) and ``averaged`` (whether either side had several responses)."""
    per_question = outcome.groupby(["model", "question_id"])["value"].agg(["mean", "size"])
    sides = []
    for side, questions in (("a", found.a), ("b", found.b)):
        problem_of = pd.Series(list(questions), index=list(questions.values()), name="problem")
        taken = per_question.join(problem_of, on="question_id", how="inner").reset_index()
        sides.append(taken.set_index(["model", "problem"])[["mean", "size"]]
                     .rename(columns={"mean": side, "size": f"{side}_size"}))
    pairs = sides[0].join(sides[1], how="inner").reset_index()
    pairs["averaged"] = (pairs["a_size"] > 1) | (pairs["b_size"] > 1)
    return pairs[["model", "problem", "a", "b", "averaged"]]


def _paired(model: str, pairs: pd.DataFrame, binary: bool, resamples: int, seed: int) -> Paired:
    a, b = pairs["a"].to_numpy(float), pairs["b"].to_numpy(float)
    table: dict[str, int] | None = None
    test: McNemar | None = None
    if not binary:
        reason: str | None = "not a yes/no measure: see the sign test"
    elif not np.isin(np.concatenate([a, b]), (0.0, 1.0)).all():
        reason = "some outcomes are means of several responses, not yes/no"
    else:
        reason = None
        test = mcnemar_exact(a, b)
        (both, only_a), (only_b, neither) = test.table
        table = {"both": both, "only_a": only_a, "only_b": only_b, "neither": neither}
    return Paired(model, len(pairs), table, float(a.mean()), float(b.mean()),
                  paired_bootstrap(a - b, pairs["problem"].to_numpy(), resamples, seed), test,
                  reason, sign_test(b, a), int(pairs["averaged"].sum()))


def paired_bootstrap(differences: np.ndarray, problems: np.ndarray, resamples: int,
                     seed: int) -> Estimate:
    """The mean of the paired ``differences`` with its percentile bootstrap interval, resampling
    ``problems`` (each with all of its pairs, so that several models' pairs of one problem go
    together; one pair per problem is the plain paired bootstrap)."""
    n = len(differences)
    value = float(differences.mean())
    if resamples == 0:
        return Estimate(value, None, n, "no bootstrap resamples were requested")
    if np.ptp(differences) == 0:
        return Estimate(value, None, n, "every pair differs by the same amount, so resampling "
                                        "gives no interval")
    _, problem = np.unique(problems, return_inverse=True)
    sums = np.bincount(problem, weights=differences)
    counts = np.bincount(problem).astype(float)
    if len(sums) < 2:
        return Estimate(value, None, n, "a bootstrap interval needs at least 2 problems")
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    for start in range(0, resamples, _CHUNK):
        size = min(_CHUNK, resamples - start)
        picks = rng.integers(0, len(sums), size=(size, len(sums)))
        means[start:start + size] = sums[picks].sum(axis=1) / counts[picks].sum(axis=1)
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return Estimate(value, (float(low), float(high)), n)


def _p(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


# -- declared pairings -----------------------------------------------------------------------


def saved(project: Project) -> list[Pairing]:
    """The pairings declared in the project (the report shows one table each)."""
    kept = project.setting(SETTING)
    return [] if kept is None else [Pairing(**fields) for fields in json.loads(kept)]


def save(project: Project, pairing: Pairing) -> Changes:
    """Declare ``pairing`` (kept once however often it is saved)."""
    pairings = saved(project)
    return _write(project, pairings + ([] if pairing in pairings else [pairing]))


def forget(project: Project, pairing: Pairing) -> Changes:
    """Remove a declared pairing; a ValueError lists the declared ones if it is not one."""
    pairings = saved(project)
    if pairing not in pairings:
        raise ValueError(f"no pairing {pairing.describe()} is declared (declared: "
                         f"{'; '.join(p.describe() for p in pairings) or 'none'})")
    return _write(project, [p for p in pairings if p != pairing])


def _write(project: Project, pairings: list[Pairing]) -> Changes:
    with project.transaction():
        project.put_setting(SETTING, json.dumps([asdict(p) for p in pairings], ensure_ascii=False)
                            if pairings else None)
    return Changes.of(RecordKind.SETTINGS)
