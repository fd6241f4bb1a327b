"""Who grades what: responses split among named graders, a chosen share of them given to two.

Inter-rater reliability needs some responses graded twice; the rest are graded once, so that
the study gets through. A plan is made from the responses a filter matches that nobody is
assigned yet (assigning again adds new responses and never moves one) and, unless asked
otherwise, that no person has finished grading (:func:`physgrade.queries.graded_sql`): work
already done is not handed out again, nor counted against the one who did it. It is dealt in
an order stratified by model and topic and drawn from a seed, so every grader gets each model
and topic in proportion and the same seed and data give the same plan. :func:`plan` only reads;
:func:`apply` stores the plan, all or nothing.
"""

from __future__ import annotations

import heapq
import json
import math
import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Mapping, Sequence

from physgrade import question_fields
from physgrade.changes import Changes, RecordKind
from physgrade.estimation import sample as estimation_sample
from physgrade.facets import declared
from physgrade.project import Project, ProjectError, now_iso
from physgrade.queries import graded_sql
from physgrade.raters import HUMAN, ensure_rater, existing_rater, is_grader, person_id
from physgrade.selection import FILTER_FACETS, MODEL, RESPONSE_FACETS, TOPIC, ResponseFilter, shown
from physgrade.strata import checked
from physgrade.tasks import Task
from physgrade.wording import count

#: The facets a plan's counts are given by (:meth:`AssignmentPlan.by_facet`).
FACETS = (MODEL.name, TOPIC.name)
#: When dealing, how much more an even share of each model weighs than one of each topic.
MODEL_WEIGHT = 3
#: A doubled response's second grader is chosen from this many next in line after the first.
PARTNERS = 3


@dataclass(frozen=True)
class AssignmentPlan:
    """The assignments a run would add: ``rows`` are (response id, grader) in the order they
    were dealt (model by model, topic by topic), a doubled response's two rows together."""

    graders: tuple[str, ...]
    overlap: float
    per_grader: int | None
    seed: int
    filter: ResponseFilter
    rows: tuple[tuple[str, str], ...]
    #: response id -> its values of ``facets`` for every response in ``rows``: its stratum
    strata: Mapping[str, tuple[str, ...]] = field(default_factory=dict, compare=False,
                                                  repr=False)
    #: The estimation sample the responses were taken from, if the plan was narrowed to one.
    sample: str | None = None
    #: grader -> how many responses they were assigned before this plan (what it evened out)
    before: Mapping[str, int] = field(default_factory=dict, compare=False, repr=False)
    #: Whether responses a person has already finished grading were taken too.
    include_graded: bool = False
    #: The facets the order was stratified by: model, topic, then any declared ones asked for.
    facets: tuple[str, ...] = FACETS

    def responses(self) -> int:
        """Distinct responses newly assigned."""
        return len({response for response, _ in self.rows})

    def doubled(self) -> int:
        """Of the new responses, how many go to two graders."""
        return len(self.rows) - self.responses()

    def counts(self) -> dict[str, int]:
        """Grader -> new responses, every grader named (in the order given)."""
        given = Counter(grader for _, grader in self.rows)
        return {grader: given[grader] for grader in self.graders}

    def by_facet(self, facet: str) -> dict[str, dict[str, int]]:
        """Grader -> value of ``facet`` (one of :attr:`facets`) -> new responses."""
        if facet not in self.facets:
            raise ValueError(f"counts are given by {' or '.join(self.facets)}, not {facet!r}")
        index = self.facets.index(facet)
        table: dict[str, dict[str, int]] = {grader: {} for grader in self.graders}
        for response, grader in self.rows:
            value = self.strata[response][index]
            table[grader][value] = table[grader].get(value, 0) + 1
        return {grader: dict(sorted(values.items())) for grader, values in table.items()}

    def text(self) -> str:
        """One line for people, e.g. "420 responses to 3 graders, 84 of them twice: 168-169
        each"."""
        n, graders = self.responses(), len(self.graders)
        if graders == 1:
            return f"{count(n, 'response')} to {self.graders[0]}"
        counts = self.counts().values()
        low, high = min(counts), max(counts)
        each = f"{low:,}" if low == high else f"{low:,}-{high:,}"
        twice = f", {self.doubled():,} of them twice" if self.doubled() else ""
        return f"{count(n, 'response')} to {graders} graders{twice}: {each} each"


# -- planning ------------------------------------------------------------------------------------


def plan(project: Project, graders: Sequence[str], overlap: float, *,
         per_grader: int | None = None, seed: int = 0,
         report_filter: ResponseFilter = ResponseFilter(), sample: str | None = None,
         include_graded: bool = False, strata: Sequence[str] = (),
         task: Task | None = None) -> AssignmentPlan:
    """The assignments of the responses ``report_filter`` matches (and, if named, the
    estimation ``sample`` holds: experts grade it to correct a judge) that nobody has yet and,
    unless ``include_graded``, that no person has finished grading: all of them, or with
    ``per_grader`` as many as gives each grader about that many new rows; ``overlap`` of them
    to two graders. The order is stratified by model, topic and the declared facets
    ``strata`` (:mod:`physgrade.facets`): what is taken, and doubled, holds each in proportion.
    Reads only; refuses what cannot be planned."""
    names = _check(project, graders, overlap, per_grader, report_filter)
    facets = FACETS + checked(strata, (), declared(project))
    sample_id = None if sample is None else estimation_sample.find(project, sample).id
    task = task or Task()
    task.report(0, None, "reading the responses not yet assigned")
    pool = _pool(project, report_filter, sample_id, include_graded, facets[len(FACETS):])
    order = _stratified(pool, random.Random(seed))
    task.check()
    share = Fraction(overlap).limit_denominator(10_000)
    if per_grader is not None:
        order = order[:math.floor(len(names) * per_grader / (1 + share))]
    loads = _existing_loads(project, names)
    rows = _deal(order, pool, names, share, loads, per_grader)
    return AssignmentPlan(names, float(overlap), per_grader, seed, report_filter, tuple(rows),
                          {response: pool[response] for response, _ in rows}, sample,
                          dict(zip(names, loads)), include_graded, facets)


def _check(project: Project, graders: Sequence[str], overlap: float, per_grader: int | None,
           report_filter: ResponseFilter) -> tuple[str, ...]:
    """The graders' names, once every argument is found sound."""
    names = tuple(name.strip() for name in graders)
    if not names:
        raise ProjectError("name at least one grader to assign responses to")
    if not all(names):
        raise ProjectError("a grader's name is blank")
    repeated = sorted(name for name, n in Counter(names).items() if n > 1)
    if repeated:
        raise ProjectError(f"grader {', '.join(map(repr, repeated))} is named twice")
    if isinstance(overlap, bool) or not isinstance(overlap, (int, float)) or not (
            0 <= overlap <= 1):
        raise ProjectError(f"the overlap is a share from 0 to 1 (0.2: a fifth graded twice), "
                           f"not {overlap!r}")
    if overlap > 0 and len(names) < 2:
        raise ProjectError("an overlap needs at least two graders: one person cannot grade a "
                           "response twice")
    if per_grader is not None and (isinstance(per_grader, bool) or
                                   not isinstance(per_grader, int) or per_grader < 1):
        raise ProjectError(f"responses per grader must be a whole number of at least 1, not "
                           f"{per_grader!r}")
    unused = sorted(f for f in ("judges", "graders") if getattr(report_filter, f))
    if unused:
        raise ProjectError(f"assignments are narrowed by "
                           f"{', '.join(facet.noun for facet in RESPONSE_FACETS)}, not by "
                           f"{' or '.join(FILTER_FACETS[f].noun for f in unused)}")
    for name in names:
        existing_rater(project, name, HUMAN)  # refused now, not when the plan is stored
    return names


def _pool(project: Project, report_filter: ResponseFilter, sample_id: int | None,
          include_graded: bool, strata: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """Response id -> (model, topic, its values of the declared facets ``strata``) of the
    responses the filter (and the estimation sample, if any) matches that nobody is assigned
    (nor, unless ``include_graded``, has graded); refuses an empty pool, saying why it is
    empty."""
    where, values = report_filter.where(RESPONSE_FACETS)
    params: list[object] = list(values)
    if sample_id is not None:
        where += (" AND r.id IN (SELECT response_id FROM estimation_sample_items "
                  "WHERE sample_id = ?)")
        params.append(sample_id)
    matched = ("FROM responses r JOIN questions q ON q.id = r.question_id "
               f"WHERE {where}")
    unassigned = f"{matched} AND NOT EXISTS (SELECT 1 FROM assignments a WHERE a.response_id = r.id)"
    ungraded = unassigned if include_graded else f"{unassigned} AND r.id NOT IN ({graded_sql()})"
    columns = "".join(f", {question_fields.text_sql(name)}" for name in strata)
    pool = {response: (model, *map(shown, values)) for response, model, *values in
            project.conn.execute(f"SELECT r.id, r.model, q.topic{columns} {ungraded} "
                                 "ORDER BY r.id", params)}
    if pool:
        return pool
    if project.conn.execute(f"SELECT EXISTS (SELECT 1 {unassigned})", params).fetchone()[0]:
        raise ProjectError("every response the filter matches is already assigned or graded by "
                           "a person: nothing to add (include the graded ones to assign those)")
    if project.conn.execute(f"SELECT EXISTS (SELECT 1 {matched})", params).fetchone()[0]:
        raise ProjectError("every response the filter matches is already assigned: nothing "
                           "to add")
    raise ProjectError("no response matches the filter" if report_filter.describe() or sample_id
                       else "the project has no responses to assign")


def _stratified(pool: Mapping[str, tuple[str, ...]], rng: random.Random) -> list[str]:
    """The pool in an order whose every prefix holds each (model, topic, ...) stratum in
    proportion: a stratum's shuffled members are spread evenly over [0, 1) from a random
    offset, and the strata are interleaved by that position."""
    strata: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for response, stratum in pool.items():  # by id: the order depends on the seed and data only
        strata[stratum].append(response)
    keyed = []
    for stratum in sorted(strata):
        members = strata[stratum]
        rng.shuffle(members)
        offset, size = rng.random(), len(members)
        keyed += [((position + offset) / size, stratum, response)
                  for position, response in enumerate(members)]
    keyed.sort(key=lambda item: (item[0], item[1]))
    return [response for _, _, response in keyed]


def _existing_loads(project: Project, graders: tuple[str, ...]) -> list[int]:
    """How many responses each grader is assigned already (one query for them all)."""
    loads = dict(project.conn.execute(
        f"SELECT r.name, COUNT(*) FROM assignments a JOIN raters r ON r.id = a.grader_id "
        f"WHERE {is_grader()} GROUP BY r.name"))
    return [loads.get(name, 0) for name in graders]


def _quotas(loads: list[int], rows: int, most: int) -> list[int]:
    """How many of ``rows`` new rows each grader takes: always the one with the fewest
    assignments (existing and new; ties: the one named first), at most ``most`` each."""
    quotas = [0] * len(loads)
    waiting = [(load, g) for g, load in enumerate(loads)]
    heapq.heapify(waiting)
    for _ in range(rows):
        if not waiting:
            break
        load, g = heapq.heappop(waiting)
        quotas[g] += 1
        if quotas[g] < most:
            heapq.heappush(waiting, (load + 1, g))
    return quotas


def _deal(order: list[str], pool: Mapping[str, tuple[str, ...]], graders: tuple[str, ...],
          share: Fraction, loads: list[int], per_grader: int | None) -> list[tuple[str, str]]:
    """Deal the responses of ``order`` to the graders, the doubled ones to two.

    The doubled responses are the first of the stratified order, so every stratum gets its
    share of them (every n-th would follow the strata's fixed turn in each round of the order
    and favour some). How many new rows each grader takes is settled next (:func:`_quotas`:
    who has fewer assignments catches up), then the responses are dealt model by model, topic
    by topic, each to the grader furthest behind on their share of its model and topic, so
    that each grader's rows, catching up or not, hold every model and topic in proportion. A
    doubled response goes to the grader furthest behind and, of the next few in line, the one
    who has shared the fewest with them: pairs rotate evenly.
    """
    doubled = set(order[:math.floor(len(order) * share)])
    quotas = _quotas(loads, len(order) + len(doubled),
                     min(len(order), per_grader or len(order)))
    models: Counter[str] = Counter()
    topics: Counter[str] = Counter()
    for response in (*order, *doubled):  # rows: a doubled response counts twice
        models[pool[response][0]] += 1
        topics[pool[response][1]] += 1
    new = [0] * len(graders)
    by_model: list[Counter[str]] = [Counter() for _ in graders]
    by_topic: list[Counter[str]] = [Counter() for _ in graders]
    shared: Counter[tuple[int, int]] = Counter()
    rows: list[tuple[str, str]] = []
    position = {response: j for j, response in enumerate(order)}
    # A stratum's doubled responses first: the last responses dealt, when graders may have
    # filled their quotas, are single ones.
    for response in sorted(order, key=lambda r: (pool[r], r not in doubled, position[r])):
        model, topic = pool[response][:2]
        progress = {g: MODEL_WEIGHT * (by_model[g][model] + 0.5) / (quotas[g] * models[model])
                    + (by_topic[g][topic] + 0.5) / (quotas[g] * topics[topic])
                    for g in range(len(graders)) if new[g] < quotas[g]}
        if not progress:
            break
        first = min(progress, key=lambda g: (progress[g], g))  # the furthest behind
        chosen = [first]
        if response in doubled and len(progress) > 1:
            in_line = sorted(progress, key=lambda g: (progress[g], g))[1:1 + PARTNERS]
            second = min(in_line, key=lambda g: (shared[min(first, g), max(first, g)],
                                                 progress[g], g))
            shared[min(first, second), max(first, second)] += 1
            chosen.append(second)
        for g in chosen:
            new[g] += 1
            by_model[g][model] += 1
            by_topic[g][topic] += 1
            rows.append((response, graders[g]))
    return rows


# -- storing -------------------------------------------------------------------------------------


def apply(project: Project, plan: AssignmentPlan) -> Changes:
    """Store ``plan``'s assignments and the run that made them, in one transaction; refuses
    (writing nothing) if any of its responses has been assigned since the plan was made."""
    planned = {response for response, _ in plan.rows}
    changes = Changes.of(RecordKind.ASSIGNMENTS, responses=planned)
    conn = project.conn
    with project.transaction():
        taken = planned.intersection(r for (r,) in conn.execute(
            "SELECT DISTINCT response_id FROM assignments"))
        if taken:
            raise ProjectError(f"{count(len(taken), 'response')} of the plan "
                               f"({min(taken)}…) {'was' if len(taken) == 1 else 'were'} "
                               "assigned since it was made; plan again")
        ids = {}
        for name in plan.graders:
            ids[name], made = ensure_rater(project, name, HUMAN)
            changes |= made
        run = conn.execute(
            "INSERT INTO assignment_runs (graders, overlap, per_grader, seed, filter, made_at, "
            "added) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (json.dumps(list(plan.graders)), plan.overlap, plan.per_grader, plan.seed,
             json.dumps(narrowed) if (narrowed := _narrowed_by(plan)) else None,
             now_iso(), len(plan.rows))).lastrowid
        conn.executemany("INSERT INTO assignments (grader_id, response_id, run_id) "
                         "VALUES (?, ?, ?)",
                         [(ids[grader], response, run) for response, grader in plan.rows])
    return changes


def _narrowed_by(plan: AssignmentPlan) -> dict[str, object]:
    """What a run's responses were narrowed by, as its record keeps it: the filter's facets,
    the estimation sample and whether graded responses were left out."""
    narrowed: dict[str, object] = dict(plan.filter.describe())
    if plan.sample:
        narrowed["sample"] = plan.sample
    if not plan.include_graded:
        narrowed["graded"] = "left out"
    if plan.facets != FACETS:
        narrowed["strata"] = list(plan.facets)
    return narrowed


# -- reading -------------------------------------------------------------------------------------


def assigned(project: Project, grader: str) -> frozenset[str]:
    """The ids of the responses assigned to ``grader`` (none for someone unknown)."""
    rater = person_id(project, grader)
    if rater is None:
        return frozenset()
    return frozenset(r for (r,) in project.conn.execute(
        "SELECT response_id FROM assignments WHERE grader_id = ?", (rater,)))


def assignees(project: Project) -> list[str]:
    """The people with any assignment, by name."""
    return [name for (name,) in project.conn.execute(
        f"SELECT r.name FROM raters r WHERE {is_grader()} AND "
        "EXISTS (SELECT 1 FROM assignments a WHERE a.grader_id = r.id) ORDER BY r.name")]
