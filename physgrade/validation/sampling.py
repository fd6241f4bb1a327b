"""Stratified samples of responses for experts to audit judges on.

The study audited every candidate judge on the same sample, stratified over topics and Bloom
levels (p-refs.md, "LLM-judge validation protocol"). Here a sample is drawn once, from the
responses every named judge has a complete verdict on, and stored with its seed: the same seed
and data give the same sample.

Reviews imported from files (``judge_reviews``) are audited under one more sample, named
:data:`IMPORTED`: every reviewed verdict that no other sample holds is put there by the import
(and, for a project whose reviews were imported before imports did so, by
:func:`take_imported`). A reviewer works through each of its judges' verdicts on each of its
responses (where the judge gave one) and sees and changes the reviews there like in any sample.
"""

from __future__ import annotations

import json
import random
import sqlite3
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Sequence

from physgrade.changes import NOTHING, Changes, RecordKind
from physgrade.facets import declared
from physgrade.project import Project, ProjectError, now_iso
from physgrade.raters import HUMAN, LLM, is_kind, rater_label
from physgrade.rubric import RUBRICS, rubric_for_kind
from physgrade.strata import ALL, FACETS, checked, responses_by_stratum
from physgrade.validation import blind

#: The facets an audit sample is stratified over unless told otherwise (all of
#: :data:`physgrade.strata.FACETS`).
DEFAULT_STRATA = FACETS
#: The name of the sample of imported reviews (no drawn sample may take it).
IMPORTED = "imported"


@dataclass(frozen=True, slots=True)
class Sample:
    id: int
    name: str
    seed: int
    per_stratum: int
    strata: tuple[str, ...]             # the facets
    judges: tuple[str, ...]             # rater labels, "name [version]"
    judge_ids: tuple[int, ...]
    n_items: int
    strata_counts: dict[str, int]       # stratum -> responses drawn from it
    created_at: str
    #: What drawing it changed (NOTHING for a sample read back); not part of the sample.
    changes: Changes = field(default=NOTHING, compare=False)

    @property
    def imported(self) -> bool:
        """Whether this is the sample of imported reviews, not a drawn one."""
        return self.name == IMPORTED

    def text(self) -> str:
        """One line: size, strata and judges (never their blind names)."""
        judges = len(self.judges)
        if self.imported:
            return (f"{self.n_items:,} response{'' if self.n_items == 1 else 's'} with imported "
                    f"reviews of {judges} judge{'' if judges == 1 else 's'}")
        return (f"{self.n_items:,} response{'' if self.n_items == 1 else 's'} in "
                f"{len(self.strata_counts):,} strat{'um' if len(self.strata_counts) == 1 else 'a'}, "
                f"the same for each of {judges} judge{'' if judges == 1 else 's'}")


def draw(project: Project, name: str, judges: Sequence[str], per_stratum: int, seed: int,
         strata: Sequence[str] = DEFAULT_STRATA) -> Sample:
    """Draw and store a sample: up to ``per_stratum`` responses of each stratum, among those
    every judge (a rater label) has a complete verdict on. Gives the judges blind names.
    The sample's ``changes`` name the samples and the responses drawn."""
    name = name.strip()
    if not name:
        raise ValueError("a sample needs a name")
    if isinstance(per_stratum, bool) or not isinstance(per_stratum, int) or per_stratum < 1:
        raise ValueError(f"draw at least 1 response per stratum, not {per_stratum!r}")
    facets = checked(strata, declared=declared(project))
    if not judges:
        raise ValueError("name at least one judge to audit")
    labels = tuple(dict.fromkeys(judges))
    judge_ids = _judge_ids(project, labels)
    conn = project.conn
    _check_name_free(project, name)

    eligible = set.intersection(*(_judged(project, judge) for judge in judge_ids))
    groups = {stratum: members for stratum, ids in responses_by_stratum(project, facets).items()
              if (members := [rid for rid in ids if rid in eligible])}
    rng = random.Random(seed)
    drawn: list[tuple[str, str]] = []
    for stratum in sorted(groups):
        members = groups[stratum]  # sorted by id: the draw depends on the seed and data only
        chosen = members if len(members) <= per_stratum else rng.sample(members, per_stratum)
        drawn += [(response_id, stratum) for response_id in chosen]
    if not drawn:
        raise ValueError(f"no response has a complete verdict from every one of "
                         f"{', '.join(labels)}; choose judges that judged the same responses")

    with project.transaction():
        _check_name_free(project, name)
        sample_id = conn.execute(
            "INSERT INTO review_samples (name, seed, per_stratum, strata, judges, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)", (name, seed, per_stratum, json.dumps(list(facets)),
                                          json.dumps(list(judge_ids)), now_iso())).lastrowid
        assert sample_id is not None  # an INSERT sets it
        conn.executemany("INSERT INTO review_sample_items (sample_id, response_id, stratum) "
                         "VALUES (?, ?, ?)", [(sample_id, rid, s) for rid, s in drawn])
        blind.assign(conn, judge_ids)
    return replace(_load(project, sample_id), changes=Changes.of(
        RecordKind.SAMPLES, responses=[rid for rid, _ in drawn]))


#: The reviewed verdicts (judge, response) that no sample holds.
_LOOSE = ("SELECT v.judge_id, v.response_id FROM (SELECT judge_id, response_id FROM judge_reviews "
          "UNION SELECT judge_id, response_id FROM judge_review_criteria) v WHERE NOT EXISTS "
          "(SELECT 1 FROM review_sample_items i JOIN review_samples s ON s.id = i.sample_id, "
          "json_each(s.judges) j WHERE i.response_id = v.response_id AND j.value = v.judge_id)")


def gather_imported(conn: sqlite3.Connection) -> list[str]:
    """Put every reviewed verdict that no sample holds into the :data:`IMPORTED` sample (made
    if missing), inside the caller's transaction; returns the responses they are on."""
    loose = conn.execute(f"{_LOOSE} ORDER BY v.response_id, v.judge_id").fetchall()
    if not loose:
        return []
    row = conn.execute("SELECT id, judges FROM review_samples WHERE name = ?",
                       (IMPORTED,)).fetchone()
    if row is None:
        sample_id = conn.execute(
            "INSERT INTO review_samples (name, seed, per_stratum, strata, judges, created_at) "
            "VALUES (?, 0, 1, '[]', '[]', ?)", (IMPORTED, now_iso())).lastrowid
        known: list[int] = []
    else:
        sample_id, known = row[0], json.loads(row[1])
    judge_ids = known + sorted({judge for judge, _ in loose} - set(known))
    responses = list(dict.fromkeys(rid for _, rid in loose))
    conn.execute("UPDATE review_samples SET judges = ? WHERE id = ?",
                 (json.dumps(judge_ids), sample_id))
    conn.executemany("INSERT INTO review_sample_items (sample_id, response_id, stratum) VALUES "
                     "(?, ?, ?) ON CONFLICT DO NOTHING",
                     [(sample_id, rid, ALL) for rid in responses])
    return responses  # the judges get their blind names when first reviewed (session.queue)


def loose_reviews(project: Project) -> bool:
    """Whether the project holds reviews that no sample shows: imported before imports
    gathered them, for :func:`take_imported` to gather."""
    return project.conn.execute(f"SELECT EXISTS ({_LOOSE})").fetchone()[0] == 1


def take_imported(project: Project) -> Changes:
    """Gather the reviews no sample shows into the :data:`IMPORTED` sample, committed at once."""
    with project.transaction():
        added = gather_imported(project.conn)
    return Changes.of(RecordKind.SAMPLES, responses=added) if added else NOTHING


def samples(project: Project) -> list[Sample]:
    """Every stored sample, oldest first."""
    return [_load(project, sample_id) for (sample_id,) in
            project.conn.execute("SELECT id FROM review_samples ORDER BY id")]


def sample(project: Project, sample_id: int) -> Sample:
    """One stored sample."""
    return _load(project, sample_id)


def items(project: Project, sample_id: int) -> list[str]:
    """The response ids of a sample, by stratum and then id."""
    _load(project, sample_id)
    return [rid for (rid,) in project.conn.execute(
        "SELECT response_id FROM review_sample_items WHERE sample_id = ? "
        "ORDER BY stratum, response_id", (sample_id,))]


def next_name(project: Project) -> str:
    """The first free name "sample N" (N counting from the number of samples): the name a
    sample gets when its drawer gives none."""
    taken = {name for (name,) in project.conn.execute("SELECT name FROM review_samples")}
    number = len(taken) + 1
    while f"sample {number}" in taken:
        number += 1
    return f"sample {number}"


def _check_name_free(project: Project, name: str) -> None:
    if name.casefold() == IMPORTED:
        raise ValueError(f"the name {IMPORTED!r} is kept for the sample of imported reviews; "
                         "choose another name")
    if project.conn.execute("SELECT 1 FROM review_samples WHERE name = ?", (name,)).fetchone():
        raise ValueError(f"there is already a sample named {name!r}; choose another name")


def _judge_ids(project: Project, labels: tuple[str, ...]) -> tuple[int, ...]:
    """The rater ids of judge labels; refuses labels that name no judge of the project."""
    known = {rater_label(name, version, run): (rater, kind) for rater, name, version, kind, run in
             project.conn.execute("SELECT id, name, prompt_version, kind, run FROM raters")}
    unknown = [label for label in labels if label not in known]
    if unknown:
        judges = sorted(rater_label(*rater) for rater in project.conn.execute(
            f"SELECT t.name, t.prompt_version, t.run FROM raters t WHERE {is_kind(LLM, 't')} AND EXISTS "
            "(SELECT 1 FROM assessments a WHERE a.rater_id = t.id)"))
        raise ValueError(f"no judge {', '.join(map(repr, unknown))} in this project (its judges: "
                         f"{', '.join(judges) or 'none'})")
    people = [label for label in labels if known[label][1] == HUMAN]
    if people:
        raise ValueError(f"{', '.join(map(repr, people))} is a person, not a judge")
    return tuple(known[label][0] for label in labels)


def _judged(project: Project, judge_id: int) -> set[str]:
    """The responses a judge has a complete, good verdict on, with the response's own rubric."""
    done = set()
    for response_id, rubric, kind, scored in project.conn.execute(
            "SELECT a.response_id, a.rubric, q.kind, (SELECT count(*) FROM scores s WHERE "
            "s.rater_id = a.rater_id AND s.response_id = a.response_id AND s.rubric = a.rubric) "
            "FROM assessments a JOIN responses r ON r.id = a.response_id JOIN questions q "
            "ON q.id = r.question_id WHERE a.rater_id = ? AND a.status = 'ok'", (judge_id,)):
        if rubric == rubric_for_kind(kind).key and scored == len(RUBRICS[rubric].criteria):
            done.add(response_id)
    return done


def _load(project: Project, sample_id: int) -> Sample:
    conn = project.conn
    row = conn.execute("SELECT id, name, seed, per_stratum, strata, judges, created_at FROM "
                       "review_samples WHERE id = ?", (sample_id,)).fetchone()
    if row is None:
        raise ProjectError(f"no review sample {sample_id} in this project")
    judge_ids = tuple(json.loads(row[5]))
    names = {rater: rater_label(name, version, run) for rater, name, version, run in conn.execute(
        "SELECT id, name, prompt_version, run FROM raters")}
    counts = Counter(dict(conn.execute(
        "SELECT stratum, count(*) FROM review_sample_items WHERE sample_id = ? GROUP BY stratum "
        "ORDER BY stratum", (sample_id,))))
    return Sample(row[0], row[1], row[2], row[3], tuple(json.loads(row[4])),
                  tuple(names[judge] for judge in judge_ids), judge_ids, sum(counts.values()),
                  dict(sorted(counts.items())), row[6])
