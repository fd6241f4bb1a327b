"""A project's scores as columnar arrays: read once, then narrowed in memory.

Every number of a report comes from the scores of the responses and raters it covers, about a
million on a study of the real size. Read through SQL and reshaped with pandas for each report,
they cost seconds per filter change. A :class:`ScoreStore` reads them once into one small-integer
array (criterion, response, rater) and a report's filter only picks rows and columns out of it
(:func:`physgrade.scoring.tables.select`). :class:`~physgrade.scoring.cache.ScoreCache` keeps a store
while a project is open and re-reads the responses whose scores change.

A store is never changed in place: :meth:`ScoreStore.updated` makes a new one, so that a report
being computed from the old one on another thread keeps a consistent view.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable

import numpy as np
import pandas as pd

from physgrade import facets, question_fields
from physgrade.project import Project
from physgrade.raters import rater_label
from physgrade.rubric import RUBRICS
from physgrade.tasks import Task

#: Every (rubric, criterion) a score can have, in rubric order: the first axis of the codes.
KEYS: tuple[tuple[str, str], ...] = tuple((rubric.key, key) for rubric in RUBRICS.values()
                                          for key in rubric.keys)
#: The codes of a criterion with no number: N/A given, and no score at all.
NA, MISSING = -1, -2
#: What a report needs to know of each response (the filters' facets and the analyses' groups),
#: in the order the project lists them.
_RESPONSES_SQL = (
    "SELECT r.id AS response_id, r.question_id, r.model, q.topic, q.kind, q.bloom_cognitive, "
    "q.bloom_knowledge, r.compliant, q.options IS NOT NULL AS multiple_choice, q.variant_of, "
    "q.region, q.variant_group{declared} FROM responses r JOIN questions q "
    "ON q.id = r.question_id")
#: The question fields it reads as they are: a declared facet among them is not read twice.
_READ_AS_THEY_ARE = ("topic", "kind", "bloom_cognitive", "bloom_knowledge", "variant_of",
                     "region", "variant_group")
#: Where each (rubric, criterion) is in :data:`KEYS`.
KEY_AT = {key: k for k, key in enumerate(KEYS)}
#: Criteria are read as "rubric␟criterion" (SQLite's char(31)): one column to look up.
_KEY_INDEX = pd.Index([f"{rubric}\x1f{criterion}" for rubric, criterion in KEYS])
_SCORES_SQL = (f"SELECT rater_id, response_id, rubric || char(31) || criterion, value FROM scores "
               f"WHERE rubric IN ({', '.join('?' * len(RUBRICS))})")
#: Responses re-read per query when a few changed (SQLite's default variable limit is far above).
_CHUNK = 500


class StoreOutdated(Exception):
    """The project has raters or responses the store was not read with: read it again whole."""


@dataclass(frozen=True, eq=False)
class ScoreStore:
    """The scores of every response by every rater that scored, as small integers.

    ``responses``: a row per response (indexed by id, in the project's order) with question_id,
    model, topic, kind, bloom_cognitive, bloom_knowledge, compliant, multiple_choice,
    variant_of, region, variant_group, then a column per declared facet
    (:mod:`physgrade.facets`) not among those, its value as
    :func:`~physgrade.question_fields.as_text` shows it. ``lengths``: each response's length in
    characters, in that order;
    ``by_id``: their positions in the order of their ids (the order report tables list them).
    ``raters``: a row per rater that scored (id, name, kind, prompt_version, run, label), in the
    order of the last axis of ``codes``. ``codes`` (int8, criterion of :data:`KEYS` × response
    × rater): the value given, :data:`NA` or :data:`MISSING`. ``decisions``: adjudicators'
    final values (response position, criterion position or -1 for a criterion no rubric has
    any more, value; NaN for N/A).
    """

    responses: pd.DataFrame
    lengths: np.ndarray
    by_id: np.ndarray
    raters: pd.DataFrame
    codes: np.ndarray
    decisions: pd.DataFrame

    @classmethod
    def read(cls, project: Project, task: Task | None = None) -> ScoreStore:
        """Read every score of ``project`` (seconds on a study of the real size), all as of
        one moment."""
        with project.snapshot():
            return cls._read(project, task or Task())

    @classmethod
    def _read(cls, project: Project, task: Task) -> ScoreStore:
        task.report(0, 3, "reading responses")
        responses = pd.read_sql_query(_responses_sql(facets.declared(project)), project.conn,
                                      index_col="response_id")
        responses["compliant"] = responses["compliant"].astype(bool)
        responses["multiple_choice"] = responses["multiple_choice"].astype(bool)
        sizes = dict(project.conn.execute("SELECT id, length(response) FROM responses"))
        lengths = np.array([sizes[rid] for rid in responses.index], dtype=np.int64)
        raters = pd.read_sql_query("SELECT id, name, kind, prompt_version, run FROM raters",
                                   project.conn)
        raters["label"] = [rater_label(n, v, run) for n, v, run in zip(
            raters["name"], raters["prompt_version"], raters["run"])]
        task.report(1, 3, "reading scores")
        scores = _scores(project.conn.execute(_SCORES_SQL, list(RUBRICS)).fetchall())
        task.check()
        raters = raters[raters["id"].isin(scores["rater"])].reset_index(drop=True)
        codes = np.full((len(KEYS), len(responses), len(raters)), MISSING, dtype=np.int8)
        _fill(codes, responses.index, raters, scores)
        task.report(2, 3, "reading adjudicators' decisions")
        by_id = np.argsort(responses.index.to_numpy(dtype=object), kind="stable")
        store = cls(responses, lengths, by_id, raters, codes, _no_decisions())
        return store.with_decisions(project)

    def with_decisions(self, project: Project) -> ScoreStore:
        """This store with the adjudicators' decisions read again."""
        found = _scores(project.conn.execute(
            "SELECT NULL, response_id, rubric || char(31) || criterion, value "
            "FROM score_adjudications").fetchall())
        decisions = pd.DataFrame({
            "response": self.responses.index.get_indexer(pd.Index(found["response"])),
            "key": _KEY_INDEX.get_indexer(pd.Index(found["key"])),
            "value": found["value"].to_numpy(dtype=float, na_value=np.nan)})
        return replace(self, decisions=decisions[decisions["response"] >= 0]
                       .reset_index(drop=True))

    def updated(self, project: Project, response_ids: Iterable[str]) -> ScoreStore:
        """A new store with the scores of ``response_ids`` read again; raises
        :class:`StoreOutdated` when one of them, or a rater who scored them, is new to it."""
        wanted = sorted(set(response_ids))
        positions = self.responses.index.get_indexer(pd.Index(wanted, dtype=object))
        if (positions < 0).any():
            raise StoreOutdated("responses were added")
        rows = []
        with project.snapshot():
            for start in range(0, len(wanted), _CHUNK):
                chunk = wanted[start:start + _CHUNK]
                rows += project.conn.execute(
                    f"{_SCORES_SQL} AND response_id IN ({', '.join('?' * len(chunk))})",
                    [*RUBRICS, *chunk]).fetchall()
        scores = _scores(rows)
        if not scores["rater"].isin(self.raters["id"]).all():
            raise StoreOutdated("a rater scored for the first time")
        codes = self.codes.copy()
        codes[:, positions, :] = MISSING
        _fill(codes, self.responses.index, self.raters, scores)
        return replace(self, codes=codes)


def _responses_sql(declared: Iterable[str]) -> str:
    """:data:`_RESPONSES_SQL` with a column for each of the ``declared`` facets it lacks."""
    return _RESPONSES_SQL.format(declared="".join(
        f', {question_fields.text_sql(name)} AS "{name}"' for name in declared
        if name not in _READ_AS_THEY_ARE))


def _scores(rows: list[tuple]) -> pd.DataFrame:
    """Rows of (rater id, response id, rubric and criterion as one key, value) as columns."""
    return pd.DataFrame.from_records(rows, columns=["rater", "response", "key", "value"])


def _fill(codes: np.ndarray, responses: pd.Index, raters: pd.DataFrame,
          scores: pd.DataFrame) -> None:
    """Write ``scores`` (:func:`_scores`) into ``codes``; those of responses or criteria it
    does not hold are left out (a criterion no rubric has any more cannot be reported)."""
    at_rater = pd.Index(raters["id"]).get_indexer(pd.Index(scores["rater"]))
    at_response = responses.get_indexer(pd.Index(scores["response"]))
    at_key = _KEY_INDEX.get_indexer(pd.Index(scores["key"]))
    given = scores["value"].to_numpy(dtype=float, na_value=np.nan)
    keep = (at_rater >= 0) & (at_response >= 0) & (at_key >= 0)
    codes[at_key[keep], at_response[keep], at_rater[keep]] = np.where(
        np.isnan(given[keep]), NA, given[keep]).astype(np.int8)


def _no_decisions() -> pd.DataFrame:
    return pd.DataFrame({"response": np.array([], dtype=np.int64),
                         "key": np.array([], dtype=np.int64), "value": np.array([], dtype=float)})


def consensus(codes: np.ndarray) -> np.ndarray:
    """The people's agreed value in each row of ``codes`` (a column per person): the value
    more than half of those who scored it gave, N/A counting as a value (:data:`NA`);
    :data:`MISSING` where nobody scored it or there is no majority (two who differ)."""
    given = (codes != MISSING).sum(axis=-1)
    agreed = np.full(codes.shape[:-1], MISSING, dtype=np.int8)
    for value in np.unique(codes[codes != MISSING]):
        agreed[(codes == value).sum(axis=-1) * 2 > given] = value
    return agreed
