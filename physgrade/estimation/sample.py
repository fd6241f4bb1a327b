"""Estimation samples: the responses experts grade so that a judge's scores on every response can
be corrected (:mod:`physgrade.estimation.estimates`).

A corrected estimate is valid only if the sample's responses were drawn at random with known
probabilities, so a sample is drawn once, with its seed, and stored with each response's
inclusion probability: the same seed and data give the same sample, and a name is never drawn
again. Three kinds:

* :data:`RANDOM`: uniform over every response of the project (probability size / population);
* :data:`STRATIFIED`: the same number from each stratum (model, topic or both) as far as a
  stratum allows, so that small models or topics are graded too; each response's probability
  is its stratum's share drawn, n_h / N_h;
* :data:`HAND_PICKED`: response ids read from a file (grades someone already chose). Nothing
  is known of how they were chosen: the probability stored is what a uniform draw of the same
  size would have given, and estimates refuse such a sample unless told to assume it random.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Sequence

from physgrade.changes import NOTHING, Changes, RecordKind
from physgrade.facets import declared
from physgrade.files import write_whole
from physgrade.formats import FormatError, id_field, read_file
from physgrade.project import Project, ProjectError, now_iso
from physgrade.selection import MODEL, TOPIC
from physgrade.strata import ALL, checked, responses_by_stratum
from physgrade.wording import count

RANDOM, STRATIFIED, HAND_PICKED = "random", "stratified", "hand-picked"
#: The facets a sample can be stratified over (of :data:`physgrade.strata.FACETS`).
FACETS = (MODEL.name, TOPIC.name)
#: The one field of a line of an ids file (what :func:`write_ids` writes, :func:`register` reads).
ID_FIELD = "response_id"
#: The largest seed SQLite stores as an integer.
MAX_SEED = 2**63 - 1


@dataclass(frozen=True, slots=True)
class EstimationSample:
    """A stored sample: how it was drawn, from how many responses, and when."""

    id: int
    name: str
    method: str                 # RANDOM, STRATIFIED or HAND_PICKED
    seed: int | None            # None for a hand-picked sample
    size: int
    strata: tuple[str, ...]     # the facets of a stratified sample
    population: int             # responses in the project when it was drawn
    source: str | None          # a hand-picked sample's file name
    created_at: str
    #: What drawing it changed (NOTHING for a sample read back); not part of the sample.
    changes: Changes = field(default=NOTHING, compare=False)

    @property
    def random(self) -> bool:
        """Whether it was drawn at random (its inclusion probabilities are real)."""
        return self.method != HAND_PICKED

    def text(self) -> str:
        """One line: how many of how many, drawn how."""
        drawn = f"{self.size:,} of {count(self.population, 'response')}"
        if self.method == HAND_PICKED:
            return f"{drawn}, hand-picked in {self.source} (not drawn at random)"
        within = f" within each {' × '.join(self.strata)}" if self.strata else ""
        return f"{drawn}, drawn at random{within} (seed {self.seed})"


@dataclass(frozen=True, slots=True)
class Stratum:
    """One stratum of a sample: its name, the responses drawn of it and of how many."""

    name: str                   # facet values joined with " / ", or "(all)"
    drawn: int
    population: int
    probability: float          # each of its responses' inclusion probability


def draw(project: Project, name: str, size: int, seed: int,
         strata: Sequence[str] = ()) -> EstimationSample:
    """Draw and store a sample of ``size`` responses: uniformly over the project, or, with
    ``strata`` (facets of :data:`FACETS` or declared ones), the same number from each stratum
    as far as each allows (:func:`allocation`). Refuses a name already taken and what :func:`allocation`
    refuses."""
    name = _checked_name(name)
    if isinstance(size, bool) or not isinstance(size, int):
        raise ValueError(f"the size must be a whole number, not {size!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"the seed must be a whole number from 0 to {MAX_SEED}, not {seed!r}")
    facets = checked(strata, FACETS, declared(project))
    with project.transaction():
        _check_name_free(project, name)
        groups = responses_by_stratum(project, facets)
        shares = allocation({stratum: len(ids) for stratum, ids in groups.items()}, size)
        rng = random.Random(seed)
        drawn: list[tuple[str, str, float]] = []
        for stratum, taken in shares.items():
            members = groups[stratum]  # sorted by id: the draw depends on the seed and data only
            drawn += [(rid, stratum, taken / len(members))
                      for rid in sorted(rng.sample(members, taken))]
        method = STRATIFIED if facets else RANDOM
        population = sum(len(ids) for ids in groups.values())
        sample_id = _store(project, name, method, seed, facets, population, None, drawn)
    return replace(_load(project, sample_id),
                   changes=Changes.of(RecordKind.ESTIMATION, responses=[rid for rid, _, _ in drawn]))


def register(project: Project, name: str, path: str | Path) -> EstimationSample:
    """Store the responses a file names as a hand-picked sample: JSON Lines of
    ``{"response_id": ...}`` (as :func:`write_ids` writes; a CSV with a ``response_id`` column
    or a JSON array is read too). Refuses, naming the file, line and field, an unknown or
    repeated id and an unreadable or empty file; nothing is stored then."""
    name = _checked_name(name)
    source = read_file(path)
    with project.transaction():
        _check_name_free(project, name)
        known = {rid for (rid,) in project.conn.execute("SELECT id FROM responses")}
        first_line: dict[str, int] = {}
        for record in source.records:
            rid = id_field(record, ID_FIELD)
            if rid not in known:
                raise record.error(ID_FIELD, f"no response {rid!r} in this project")
            if rid in first_line:
                raise record.error(ID_FIELD, f"response {rid!r} is named already on "
                                             f"{record.unit} {first_line[rid]}")
            first_line[rid] = record.line
        if not first_line:
            raise FormatError(source.name, None, None, "names no response; a hand-picked sample "
                              f"needs a line {{\"{ID_FIELD}\": ...}} per response")
        probability = len(first_line) / len(known)
        drawn = [(rid, ALL, probability) for rid in sorted(first_line)]
        sample_id = _store(project, name, HAND_PICKED, None, (), len(known), source.name, drawn)
    return replace(_load(project, sample_id),
                   changes=Changes.of(RecordKind.ESTIMATION, responses=first_line))


def samples(project: Project) -> list[EstimationSample]:
    """Every stored sample, oldest first."""
    return [_load(project, sample_id) for (sample_id,) in
            project.conn.execute("SELECT id FROM estimation_samples ORDER BY id")]


def find(project: Project, name: str) -> EstimationSample:
    """The sample named ``name``; a ProjectError names the samples there are."""
    return named(samples(project), name)


def named(found: Sequence[EstimationSample], name: str) -> EstimationSample:
    """The sample of ``found`` named ``name``; a ProjectError names them otherwise."""
    chosen = next((stored for stored in found if stored.name == name), None)
    if chosen is None:
        known = [stored.name for stored in found]
        raise ProjectError(f"no estimation sample {name!r} in this project (its samples: "
                           f"{', '.join(map(repr, known))})" if known else
                           f"no estimation sample {name!r}: this project has none yet "
                           "(physgrade estimate-sample draws one)")
    return chosen


def inclusion(project: Project, sample: EstimationSample) -> dict[str, float]:
    """Each of the sample's responses (by id) and the probability the draw included it."""
    return dict(project.conn.execute(
        "SELECT response_id, inclusion_probability FROM estimation_sample_items "
        "WHERE sample_id = ? ORDER BY response_id", (sample.id,)))


@dataclass(frozen=True, slots=True)
class Drawn:
    """A sample with all an estimate reads of the project besides the scores: each of its
    responses' inclusion probability; for a stratified sample, the stratum of every response
    of the project (empty otherwise), to weigh the judge-only responses back to their strata;
    and how many responses the project holds now (those added since it was drawn had no chance
    to be)."""

    sample: EstimationSample
    inclusion: dict[str, float]
    stratum: dict[str, str]
    responses_now: int


def read_sample(project: Project, sample: EstimationSample) -> Drawn:
    """``sample`` as an estimate reads it (:class:`Drawn`)."""
    return _drawn(project, sample, _responses_now(project))


def read_samples(project: Project) -> tuple[Drawn, ...]:
    """Every stored sample as an estimate reads it, oldest first: read whole once for a report,
    which may use any of them and narrows them in memory."""
    responses_now = _responses_now(project)
    return tuple(_drawn(project, stored, responses_now) for stored in samples(project))


def _drawn(project: Project, sample: EstimationSample, responses_now: int) -> Drawn:
    stratum = {rid: name for name, ids in responses_by_stratum(project, sample.strata).items()
               for rid in ids} if sample.method == STRATIFIED else {}
    return Drawn(sample, inclusion(project, sample), stratum, responses_now)


def _responses_now(project: Project) -> int:
    return project.conn.execute("SELECT count(*) FROM responses").fetchone()[0]


def by_stratum(project: Project, sample: EstimationSample) -> list[Stratum]:
    """The sample's strata in name order, each with the responses drawn of how many."""
    return [Stratum(stratum, drawn, round(drawn / probability), probability)
            for stratum, drawn, probability in project.conn.execute(
                "SELECT stratum, count(*), max(inclusion_probability) FROM "
                "estimation_sample_items WHERE sample_id = ? GROUP BY stratum ORDER BY stratum",
                (sample.id,))]


def write_ids(project: Project, sample: EstimationSample, path: str | Path) -> int:
    """Write the sample's response ids, ``{"response_id": ...}`` per line in id order, to a new
    file at ``path`` (whole or not at all; an existing file is refused); returns how many."""
    ids = list(inclusion(project, sample))
    write_whole(Path(path), lambda out: out.writelines(
        json.dumps({ID_FIELD: rid}, ensure_ascii=False) + "\n" for rid in ids), new=True)
    return len(ids)


def stratum_sizes(project: Project, strata: Sequence[str] = ()) -> dict[str, int]:
    """The responses of each stratum over ``strata`` (facets of :data:`FACETS`), by stratum
    name: what a draw would share out (for a preview of it)."""
    return {stratum: len(ids) for stratum, ids in
            responses_by_stratum(project, checked(strata, FACETS, declared(project))).items()}


def allocation(sizes: dict[str, int], size: int) -> dict[str, int]:
    """How many responses a draw of ``size`` takes from each stratum of ``sizes`` (stratum ->
    its responses), in stratum order: equal shares, a stratum smaller than its share giving all
    it has and the rest shared among the others; what does not divide evenly goes one each to
    the strata with most responses left (then by name), so the same data give the same shares.
    Refuses a size outside 1..responses, and fewer than one per stratum (a stratum left out
    could not be estimated)."""
    population = sum(sizes.values())
    if population == 0:
        raise ValueError("the project has no responses to draw from; import some first")
    if not 1 <= size <= population:
        raise ValueError(f"the size must be from 1 to {population:,} (the project's responses), "
                         f"not {size:,}")
    if len(sizes) > size:
        raise ValueError(f"there are {len(sizes):,} strata: draw at least {len(sizes):,} "
                         "responses (one from each), or stratify by fewer facets")
    taken = dict.fromkeys(sorted(sizes), 0)
    left = size
    while left:
        room = {stratum: sizes[stratum] - n for stratum, n in taken.items()
                if n < sizes[stratum]}
        share = left // len(room)
        if share == 0:
            for stratum in sorted(room, key=lambda s: (-room[s], s))[:left]:
                taken[stratum] += 1
            break
        for stratum, free in room.items():
            given = min(share, free)
            taken[stratum] += given
            left -= given
    return taken


# -- drawing ---------------------------------------------------------------------------------


def _store(project: Project, name: str, method: str, seed: int | None, facets: tuple[str, ...],
           population: int, source: str | None, drawn: list[tuple[str, str, float]]) -> int:
    """Insert a sample and its items (inside the caller's transaction); its id."""
    sample_id = project.conn.execute(
        "INSERT INTO estimation_samples (name, method, seed, size, strata, population, source, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (name, method, seed, len(drawn), json.dumps(list(facets)), population, source,
         now_iso())).lastrowid
    assert sample_id is not None  # an INSERT sets it
    project.conn.executemany(
        "INSERT INTO estimation_sample_items (sample_id, response_id, stratum, "
        "inclusion_probability) VALUES (?, ?, ?, ?)",
        [(sample_id, rid, stratum, probability) for rid, stratum, probability in drawn])
    return sample_id


def _checked_name(name: str) -> str:
    name = name.strip()
    if not name:
        raise ValueError("an estimation sample needs a name")
    return name


def _check_name_free(project: Project, name: str) -> None:
    """A sample is never drawn again: its name stays taken (in any letter case)."""
    for (taken,) in project.conn.execute("SELECT name FROM estimation_samples"):
        if taken.casefold() == name.casefold():
            raise ValueError(f"there is already an estimation sample named {taken!r}, and a "
                             "sample is never drawn again; choose another name")


def _load(project: Project, sample_id: int) -> EstimationSample:
    row = project.conn.execute(
        "SELECT id, name, method, seed, size, strata, population, source, created_at FROM "
        "estimation_samples WHERE id = ?", (sample_id,)).fetchone()
    if row is None:
        raise ProjectError(f"no estimation sample {sample_id} in this project")
    return EstimationSample(row[0], row[1], row[2], row[3], row[4], tuple(json.loads(row[5])),
                            row[6], row[7], row[8])
