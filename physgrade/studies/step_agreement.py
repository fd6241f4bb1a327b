"""Where reasoning breaks: how far raters agree on a response's first wrong step and its
category, and where each rater places the break, per model and per rubric stage.

The seeds ask for it without measuring it: P-REFS (seed 001, §3.5–3.6) has its judge name the
step where an error occurs and tallies the stage at which reasoning broke down; Physics-R1
(seed 002, App. H.1) tallies nine failure categories and leaves their inter-annotator agreement
to follow-up work. Here two raters compare on the responses both marked
(:mod:`physgrade.step_marks`; a first wrong step, or 0 for "no error"), expert with expert and
judge with expert (the expert as the reference):

* exact first-error agreement: the share of responses with the same first wrong step (two
  "no error" marks agree), as ProcessBench scores a prediction against its ``label``;
* agreement within one step: the same, a first wrong step one step away also counting ("no
  error" agrees only with "no error");
* localisation F1: each step a rater's mark labels (the steps before its first wrong step are
  right, that step wrong, the steps after it unlabelled; with "no error" every step right) is a
  yes/no "wrong here", and F1 = 2TP / (2TP + FP + FN) over the steps both labelled, that is
  2·(same wrong step) / (2·(same wrong step) + (responses that differ)). It leaves out the steps
  both call right, so it does not rise with easy responses;
* ProcessBench F1: that benchmark's own number, the harmonic mean of the share of exact matches
  on the responses the reference marked wrong and on those it marked right;
* Cohen's κ and Krippendorff's α (nominal) on the category, over the responses both marked
  wrong with a category of the same taxonomy ("no error" is not a category: it would fold the
  localisation's easy agreements into the category's).

Shares have Wilson intervals, κ its normal-theory one, α and the F1s a percentile bootstrap
over responses. A stage is a criterion of the response's rubric that the category maps to (the
P-REFS taxonomy's categories do; Physics-R1's do not); a pair's response counts in each stage
either rater's category maps to. See docs/statistics.md, "Where reasoning breaks".
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Callable

import numpy as np
import pandas as pd

from physgrade.analyses import each_model
from physgrade.project import Project
from physgrade.raters import HUMAN, LLM
from physgrade.rubric import GRADED_RUBRICS, rubric_for_kind
from physgrade.stats.agreement import (
    NO_RESAMPLES,
    TOO_FEW_FOR_CI,
    cohen_kappa,
    krippendorff_alpha,
)
from physgrade.stats.describe import proportion
from physgrade.stats.estimate import ALL_AGREE, Estimate
from physgrade.step_marks import Inconsistency, StepMark, all_marks, inconsistencies
from physgrade.taxonomies import Taxonomy, taxonomies

#: What a pair of raters is: two experts, or a judge beside an expert (the reference).
EXPERTS, JUDGE_EXPERT = "experts", "expert and judge"
#: The category of a first wrong step marked without one.
NO_CATEGORY = "(no category)"
#: Why a localisation F1 is undefined.
NO_WRONG_STEP = "neither rater marked a wrong step"
#: Why ProcessBench's F1 is undefined.
ONE_SIDED = "needs responses the reference marked wrong and responses it marked right"
#: Why a bootstrap interval of no width is not shown.
SAME_IN_EVERY_RESAMPLE = "every bootstrap resample gives the same value, which is not certainty"
#: The estimates of a pair, as :meth:`PairAgreement.as_dict` names them.
MEASURES = ("exact", "within_one", "f1", "processbench_f1", "kappa", "alpha")


@dataclass(frozen=True, slots=True)
class Marks:
    """Every rater's marks, the project's taxonomies, and the inconsistencies: marks whose
    category belongs to a criterion the same rater scored at its maximum."""

    marks: tuple[StepMark, ...]
    taxonomies: dict[str, Taxonomy]
    inconsistencies: tuple[Inconsistency, ...]

    def among(self, responses: pd.Index, graders: frozenset[str] = frozenset(),
              judges: frozenset[str] = frozenset()) -> Marks:
        """Only the marks of ``responses`` by the people of ``graders`` and the judges of
        ``judges`` (a report's filter; empty: everyone)."""
        kept = set(responses)

        def chosen(mark: StepMark) -> bool:
            named = graders if mark.kind == HUMAN else judges
            return mark.response_id in kept and (not named or mark.rater in named)

        marks = tuple(m for m in self.marks if chosen(m))
        raters = {m.rater for m in marks}
        return Marks(marks, self.taxonomies, tuple(
            i for i in self.inconsistencies if i.response_id in kept and i.rater in raters))

    @property
    def placed(self) -> tuple[StepMark, ...]:
        """The marks that say where the reasoning breaks (a first wrong step or "no error")."""
        return tuple(m for m in self.marks if m.first_wrong is not None)


def read_marks(project: Project) -> Marks:
    """What the study reads from a project, read once (the report keeps it until marks,
    taxonomies, raters or scores change)."""
    return Marks(tuple(all_marks(project)), taxonomies(project),
                 tuple(inconsistencies(project)))


@dataclass(frozen=True, slots=True)
class PairAgreement:
    """Two raters on the responses of ``group`` (a model, :data:`~physgrade.analyses.ALL_MODELS`
    or a stage) both marked: ``n`` of them, and ``categorised`` of them both marked wrong with
    a category of one taxonomy (κ and α count those)."""

    first: str
    second: str
    pair: str  # EXPERTS or JUDGE_EXPERT
    group: str
    n: int
    exact: Estimate
    within_one: Estimate
    f1: Estimate
    processbench_f1: Estimate
    categorised: int
    kappa: Estimate
    alpha: Estimate

    def as_dict(self) -> dict:
        return {"rater": self.first, "other": self.second, "pair": self.pair,
                "group": self.group, "n": self.n, "categorised": self.categorised,
                **{name: getattr(self, name).as_dict() for name in MEASURES}}


@dataclass(frozen=True, slots=True)
class Breaks:
    """Where one rater places the break in one model's responses: ``marked`` responses, the
    share marked "no error", and per category the share of those marked wrong."""

    rater: str
    model: str
    marked: int
    no_error: Estimate
    wrong: int
    categories: tuple[tuple[str, str, str, int, Estimate], ...]  # taxonomy, key, criteria, count, share


@dataclass(frozen=True, slots=True)
class StepAgreement:
    """The whole study: agreement per model and per stage, and where each rater places breaks."""

    by_model: list[PairAgreement]
    by_stage: list[PairAgreement]
    breaks: list[Breaks]

    def as_dict(self) -> dict:
        return {"by_model": [row.as_dict() for row in self.by_model],
                "by_stage": [row.as_dict() for row in self.by_stage],
                "breaks": [{"rater": b.rater, "model": b.model, "marked": b.marked,
                            "no_error": b.no_error.as_dict(), "wrong": b.wrong,
                            "categories": [{"taxonomy": t, "category": c, "stage": s,
                                            "count": k, "share": share.as_dict()}
                                           for t, c, s, k, share in b.categories]}
                           for b in self.breaks]}

    def text(self) -> str:
        lines = []
        for title, rows in (("per model", self.by_model), ("per stage", self.by_stage)):
            if rows:
                lines.append(f"Agreement on the first wrong step, {title}")
            for row in rows:
                lines.append(
                    f"  {row.first} · {row.second} ({row.pair}), {row.group}: n = {row.n:,}; "
                    f"exact {row.exact.text(percent=True)}, within one step "
                    f"{row.within_one.text(percent=True)}, localisation F1 {row.f1.text()}, "
                    f"ProcessBench F1 {row.processbench_f1.text()}; category "
                    f"(n = {row.categorised:,}) κ {row.kappa.text()}, α {row.alpha.text()}")
        if not lines:
            lines.append("No two raters marked the first wrong step of the same response.")
        return "\n".join(lines)


def rater_pairs(marks: Marks) -> list[tuple[str, str, str]]:
    """Every two experts (by name), then each expert beside each judge (expert first)."""
    kinds = {m.rater: m.kind for m in marks.placed}
    experts = sorted(r for r, kind in kinds.items() if kind == HUMAN)
    judges = sorted(r for r, kind in kinds.items() if kind == LLM)
    return ([(a, b, EXPERTS) for a, b in combinations(experts, 2)]
            + [(expert, judge, JUDGE_EXPERT) for expert in experts for judge in judges])


def measure(marks: Marks, responses: pd.DataFrame, resamples: int = 1000,
            seed: int = 0) -> StepAgreement:
    """The study on ``responses`` (indexed by id, with ``model`` and ``kind``); ``resamples``
    0 gives every bootstrap interval as :data:`~physgrade.stats.agreement.NO_RESAMPLES`."""
    placed = [m for m in marks.placed if m.response_id in responses.index]
    by_rater: dict[str, dict[str, StepMark]] = {}
    for mark in placed:
        by_rater.setdefault(mark.rater, {})[mark.response_id] = mark
    by_model, by_stage = [], []
    for first, second, pair in rater_pairs(Marks(tuple(placed), marks.taxonomies, ())):
        frame = _paired(by_rater[first], by_rater[second], responses, marks.taxonomies)
        if frame.empty:
            continue
        for model, rows in each_model(frame):
            by_model.append(_pair(first, second, pair, model, rows, resamples, seed))
        for stage in _stage_order(frame):
            rows = frame[frame["stages"].map(lambda found, s=stage: s in found)]
            by_stage.append(_pair(first, second, pair, stage, rows, resamples, seed))
    return StepAgreement(by_model, by_stage, _breaks(placed, responses, marks.taxonomies))


def _paired(a: dict[str, StepMark], b: dict[str, StepMark], responses: pd.DataFrame,
            known: dict[str, Taxonomy]) -> pd.DataFrame:
    """The responses both raters marked: their first wrong steps, categories (``taxonomy/key``
    where both used one taxonomy, else None) and the stages either category maps to."""
    shared = sorted(set(a) & set(b))
    rows = []
    for rid in shared:
        x, y = a[rid], b[rid]
        kind = str(responses.at[rid, "kind"])
        same = (x.first_wrong and y.first_wrong and x.category and y.category
                and x.taxonomy == y.taxonomy)
        rows.append({"model": responses.at[rid, "model"], "a": x.first_wrong,
                     "b": y.first_wrong, "cat_a": f"{x.taxonomy}/{x.category}" if same else None,
                     "cat_b": f"{y.taxonomy}/{y.category}" if same else None,
                     "stages": _stages(x, kind, known) | _stages(y, kind, known)})
    return pd.DataFrame(rows, columns=["model", "a", "b", "cat_a", "cat_b", "stages"],
                        index=pd.Index(shared, name="response_id"))


def _stages(mark: StepMark, kind: str, known: dict[str, Taxonomy]) -> frozenset[str]:
    """The criteria of the response's rubric that the mark's category maps to, as stages."""
    if not mark.first_wrong or mark.taxonomy not in known or mark.category is None:
        return frozenset()
    taxonomy = known[mark.taxonomy]
    if mark.category not in taxonomy.keys:
        return frozenset()
    rubric = rubric_for_kind(kind)
    return frozenset(stage_label(rubric.key, key)
                     for key in taxonomy.category(mark.category).criteria if key in rubric.keys)


def stage_label(rubric: str, criterion: str) -> str:
    """A stage as tables name it: ``MOD (P-REFS)``."""
    return f"{criterion} ({next(r.title for r in GRADED_RUBRICS if r.key == rubric)})"


def _stage_order(frame: pd.DataFrame) -> list[str]:
    """The stages present, in rubric order."""
    present = set().union(*frame["stages"])
    return [label for rubric in GRADED_RUBRICS for criterion in rubric.criteria
            if (label := stage_label(rubric.key, criterion.key)) in present]


def _pair(first: str, second: str, pair: str, group: str, rows: pd.DataFrame, resamples: int,
          seed: int) -> PairAgreement:
    a, b = rows["a"].to_numpy(int), rows["b"].to_numpy(int)
    n = len(a)
    close = (a == b) | ((a >= 1) & (b >= 1) & (np.abs(a - b) <= 1))
    named = rows.dropna(subset=["cat_a", "cat_b"])
    codes = {label: i for i, label in enumerate(sorted({*named["cat_a"], *named["cat_b"]}))}
    ratings = np.array([[codes[x], codes[y]] for x, y in zip(named["cat_a"], named["cat_b"])],
                       dtype=float).reshape(-1, 2)
    return PairAgreement(
        first, second, pair, group, n, proportion(int((a == b).sum()), n),
        proportion(int(close.sum()), n), localisation_f1(a, b, resamples, seed),
        processbench_f1(a, b, resamples, seed), len(ratings), cohen_kappa(ratings),
        krippendorff_alpha(ratings, "nominal", None, resamples, seed))


def localisation_f1(reference: np.ndarray, other: np.ndarray, resamples: int = 1000,
                    seed: int = 0) -> Estimate:
    """F1 of "this step is wrong" over the steps both marks label (see the module's text):
    a response adds a true positive where both name the same wrong step, one false positive or
    negative where the marks differ, and nothing where both say "no error"."""
    same = (reference == other) & (reference >= 1)
    differ = reference != other
    counts = np.array([same.sum(), differ.sum(), (~same & ~differ).sum()])

    def f1(drawn: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return 2 * drawn[:, 0] / (2 * drawn[:, 0] + drawn[:, 1])

    if counts[0] + counts[1] == 0:
        return Estimate.unavailable(len(reference), NO_WRONG_STEP)
    return _bootstrapped(counts, f1, counts[1] == 0, resamples, seed)


def processbench_f1(reference: np.ndarray, other: np.ndarray, resamples: int = 1000,
                    seed: int = 0) -> Estimate:
    """ProcessBench's F1: the harmonic mean of the share of exact matches on the responses the
    reference marked wrong and on those it marked "no error" (Zheng et al. 2024, §3)."""
    wrong, match = reference >= 1, reference == other
    counts = np.array([(wrong & match).sum(), (wrong & ~match).sum(), (~wrong & match).sum(),
                       (~wrong & ~match).sum()])

    def f1(drawn: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            on_wrong = drawn[:, 0] / (drawn[:, 0] + drawn[:, 1])
            on_right = drawn[:, 2] / (drawn[:, 2] + drawn[:, 3])
            both = on_wrong + on_right
            return np.where(both > 0, 2 * on_wrong * on_right / both, 0.0)

    if not wrong.any() or wrong.all():
        return Estimate.unavailable(len(reference), ONE_SIDED)
    return _bootstrapped(counts, f1, bool(match.all()), resamples, seed)


def _bootstrapped(counts: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray],
                  all_agree: bool, resamples: int, seed: int) -> Estimate:
    """``statistic`` of the responses counted by kind in ``counts``, with its percentile
    bootstrap interval over responses (a resample only redraws how many of each kind: one
    multinomial draw), or why it has none, as :mod:`physgrade.stats.agreement` says it."""
    n = int(counts.sum())
    value = float(statistic(counts[None, :])[0])
    if n < 2:
        return Estimate(value, None, n, TOO_FEW_FOR_CI)
    if all_agree:
        return Estimate(value, None, n, ALL_AGREE)
    if resamples < 1:
        return Estimate(value, None, n, NO_RESAMPLES)
    drawn = np.random.default_rng(seed).multinomial(n, counts / n, size=resamples)
    values = statistic(drawn)
    values = values[~np.isnan(values)]
    if not values.size:
        return Estimate(value, None, n, "undefined in every bootstrap resample")
    low, high = np.percentile(values, [2.5, 97.5])
    if low == high:  # e.g. one response marked right, never matched: not certainty
        return Estimate(value, None, n, SAME_IN_EVERY_RESAMPLE)
    return Estimate(value, (low, high), n)


def _breaks(placed: list[StepMark], responses: pd.DataFrame,
            known: dict[str, Taxonomy]) -> list[Breaks]:
    """Per rater (by name) and model: "no error" among the marks, and the categories among the
    wrong ones, every category of each taxonomy the rater used listed (zeros too)."""
    if not placed:
        return []
    frame = pd.DataFrame({"rater": [m.rater for m in placed],
                          "model": [responses.at[m.response_id, "model"] for m in placed],
                          "first_wrong": [m.first_wrong for m in placed],
                          "taxonomy": [m.taxonomy if m.category else None for m in placed],
                          "category": [m.category for m in placed]})
    found = []
    for rater, mine in frame.groupby("rater", sort=True):
        used = [name for name in dict.fromkeys(mine["taxonomy"].dropna()) if name in known]
        for model, rows in each_model(mine):
            wrong = rows[rows["first_wrong"] >= 1]
            shares = []
            for name in used:
                for category in known[name].categories:
                    count = int(((wrong["taxonomy"] == name)
                                 & (wrong["category"] == category.key)).sum())
                    shares.append((name, category.key, ", ".join(category.criteria), count,
                                   proportion(count, len(wrong))))
            listed = {(t, c) for t, c, *_ in shares}
            other = sum(1 for t, c in zip(wrong["taxonomy"], wrong["category"])
                        if (t, c) not in listed)
            if other:
                shares.append(("", NO_CATEGORY, "", other, proportion(other, len(wrong))))
            found.append(Breaks(str(rater), model, len(rows),
                                proportion(int((rows["first_wrong"] == 0).sum()), len(rows)),
                                len(wrong), tuple(shares)))
    return found
