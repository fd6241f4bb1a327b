"""Stage 3 of the duplicate audit: a model reads each candidate pair and labels it.

The label (close duplicate or same-topic neighbour) is a precision filter on what the word and
embedding stages flagged; only close duplicates count as contamination. A pair keeps the label
of the last model asked; asking the same model under the same prompt again makes no call.
"""

from __future__ import annotations

import json
from typing import Iterator

from physgrade.changes import NOTHING, Changes, RecordKind
from physgrade.dedup.texts import WITHIN, question_text
from physgrade.judge.client import Outcome, Request
from physgrade.judge.pricing import Price
from physgrade.judge.prompts import Prompts
from physgrade.judge.runner import Candidate, Job, Plan, make_plan
from physgrade.judge.scope import Scope
from physgrade.judge.tools import DuplicateLabel, duplicate_tool, read_duplicate
from physgrade.judge.verdicts import waiting_in_batches
from physgrade.project import Project

PURPOSE = "duplicates"
TEMPLATES = ("duplicate_system.md", "duplicate.md")
OUTPUT_TOKENS = 100
_CHUNK = 500
_PAIR_TEXTS = ("SELECT p.id, qa.question, qa.options, coalesce(p.b_text, qb.question), "
               "CASE WHEN p.b_text IS NULL THEN qb.options END FROM duplicate_pairs p "
               "JOIN questions qa ON qa.id = p.a LEFT JOIN questions qb ON qb.id = p.b ")


def prompt_version(prompts: Prompts) -> str:
    return prompts.version("duplicates", TEMPLATES, duplicate_tool())


def request_for(prompts: Prompts, first: str, second: str) -> Request:
    return Request(prompts.texts["duplicate_system.md"],
                   prompts.fill("duplicate.md", problem_a=first, problem_b=second),
                   duplicate_tool(), max_tokens=400)


def plan(project: Project, model: str, prompts: Prompts, scope: Scope = Scope(),
         price: Price | None = None, batch: bool = False, source: str | None = None) -> Plan:
    """Which candidate pairs (of ``source``, or of every audit) ``model`` has not labelled under
    this prompt yet. The scope's topic and kind narrow by the project's question in the pair."""
    version = prompt_version(prompts)
    where, params = scope.where(questions_only=True)
    if source is not None:
        where += " AND p.source = ?"
        params.append(source)
    candidates = [Candidate(str(pid), size, OUTPUT_TOKENS) for pid, size in project.conn.execute(
        "SELECT p.id, length(q.question) + coalesce(length(q.options), 0) "
        "+ coalesce(length(p.b_text), (SELECT length(question) FROM questions WHERE id = p.b), 0) "
        f"FROM duplicate_pairs p JOIN questions q ON q.id = p.a WHERE {where} "
        "ORDER BY p.cosine DESC, p.id", params)]
    overhead = sum(len(prompts.texts[name]) for name in TEMPLATES) + len(json.dumps(
        duplicate_tool()))
    return make_plan(PURPOSE, model, version, candidates, set(stored(project, model, version)),
                     set(), waiting_in_batches(project, PURPOSE, model, version),
                     scope.retry_failed, scope.limit, overhead, price, batch)


def stored(project: Project, model: str, version: str) -> dict[str, str]:
    """The pairs ``model`` has labelled under ``version`` (failed answers are not stored)."""
    return {str(pid): "ok" for (pid,) in project.conn.execute(
        "SELECT id FROM duplicate_pairs WHERE label_model = ? AND label_version = ?",
        (model, version))}


def jobs(project: Project, prompts: Prompts,
         pair_ids: tuple[str, ...]) -> Iterator[Job[DuplicateLabel]]:
    for start in range(0, len(pair_ids), _CHUNK):
        chunk = pair_ids[start : start + _CHUNK]
        rows = {str(row[0]): row for row in project.conn.execute(
            f"{_PAIR_TEXTS} WHERE p.id IN ({', '.join('?' * len(chunk))})",
            [int(pid) for pid in chunk])}
        for pid in chunk:
            if pid in rows:
                _, a_text, a_options, b_text, b_options = rows[pid]
                yield Job(pid, request_for(prompts, _text(a_text, a_options),
                                           _text(b_text or "", b_options)), read_duplicate)


def _text(question: str, options: str | None) -> str:
    return question_text(question, json.loads(options) if options else None)


def store(project: Project, model: str, version: str, pair_id: str,
          outcome: Outcome[DuplicateLabel], batch_id: str | None = None) -> Changes:
    """Commit the model's label of a pair; a failed answer is not stored (NOTHING)."""
    found = outcome.result
    if found is None:
        return NOTHING
    with project.transaction():
        row = project.conn.execute("SELECT source, a, b FROM duplicate_pairs WHERE id = ?",
                                   (int(pair_id),)).fetchone()
        if row is None:  # the pair was dropped since
            return NOTHING
        project.conn.execute(
            "UPDATE duplicate_pairs SET label = ?, label_model = ?, label_version = ?, "
            "label_rationale = ? WHERE id = ?",
            (found.label, model, version, found.rationale, int(pair_id)))
    source, a, b = row
    return Changes.of(RecordKind.PAIRS, questions=[a, b] if source == WITHIN else [a])
