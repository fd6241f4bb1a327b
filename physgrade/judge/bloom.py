"""Bloom's taxonomy suggestions from a language model, stored as that model's labels.

The model (under the Bloom prompt's version) is an annotator like any expert, so its labels
can be accepted or corrected in a review session and compared with people's. A suggestion that
still does not fit the vocabularies after one corrective retry is not stored; a new run asks
again.
"""

from __future__ import annotations

import json
from typing import Iterator

from physgrade.annotation.labels import set_bloom_label
from physgrade.changes import NOTHING, Changes
from physgrade.judge import figures as figs
from physgrade.judge.client import Outcome, Request
from physgrade.judge.pricing import Price
from physgrade.judge.prompts import Prompts
from physgrade.judge.runner import Candidate, Job, Plan, make_plan
from physgrade.judge.scope import Scope
from physgrade.judge.tools import BloomSuggestion, bloom_tool, read_bloom
from physgrade.judge.verdicts import waiting_in_batches
from physgrade.project import Project
from physgrade.raters import LLM, is_kind

PURPOSE = "bloom"
TEMPLATES = ("bloom_system.md", "bloom.md", "multiple_choice.md")
OUTPUT_TOKENS = 120
_CHUNK = 500


def prompt_version(prompts: Prompts) -> str:
    return prompts.version("bloom", TEMPLATES, bloom_tool())


def request_for(prompts: Prompts, question: str, options: dict[str, str] | None,
                topic: str | None, figures: tuple[figs.Figures, ...] = ()) -> Request:
    """The request for one question, with its figures (if it has any) before the text."""
    prompt = prompts.fill("bloom.md", question=question, topic=topic or "(not given)",
                          options=prompts.options_block(options, 1))
    return Request(prompts.texts["bloom_system.md"], prompt, bloom_tool(), max_tokens=512,
                   figures=figures)


def plan(project: Project, model: str, prompts: Prompts, scope: Scope = Scope(),
         price: Price | None = None, batch: bool = False) -> Plan:
    """Which questions in scope have no label from ``model`` under the Bloom prompt yet."""
    version = prompt_version(prompts)
    where, params = scope.where(questions_only=True)
    conn = project.conn
    with_images = figs.has_images(conn)
    tokens = figs.tokens_by_owner(conn, "question") if with_images else {}
    candidates = [Candidate(qid, size, OUTPUT_TOKENS, tokens.get(qid, 0))
                  for qid, size in conn.execute(
                      "SELECT q.id, length(q.question) + coalesce(length(q.options), 0) "
                      f"FROM questions q WHERE {where} ORDER BY q.id", params)]
    done = set(stored(project, model, version))
    held = {qid: figs.sent_hashes(extra) for qid, extra in sent(project, model, version)}
    if with_images or held:  # a label given on other images than the question's now is due
        current = figs.hashes_by_owner(conn, "question")
        done -= figs.saw_other_images(done, held, lambda qid: current.get(qid, []))
    overhead = len(prompts.texts["bloom_system.md"]) + len(prompts.texts["bloom.md"]) \
        + len(json.dumps(bloom_tool()))
    return make_plan(PURPOSE, model, version, candidates, done, set(),
                     waiting_in_batches(project, PURPOSE, model, version), scope.retry_failed,
                     scope.limit, overhead, price, batch)


def stored(project: Project, model: str, version: str) -> dict[str, str]:
    """The questions ``model`` has labelled under ``version`` (all "ok": failures are not
    stored)."""
    return {qid: "ok" for (qid,) in project.conn.execute(
        "SELECT b.question_id FROM bloom_labels b JOIN raters t ON t.id = b.annotator_id "
        f"WHERE t.name = ? AND t.prompt_version = ? AND {is_kind(LLM, 't')}", (model, version))}


def sent(project: Project, model: str, version: str) -> list[tuple[str, str | None]]:
    """The ``extra`` of each label ``model`` gave under ``version`` whose call sent images
    (it records their hashes)."""
    return project.conn.execute(
        "SELECT b.question_id, b.extra FROM bloom_labels b JOIN raters t ON t.id = "
        f"b.annotator_id WHERE t.name = ? AND t.prompt_version = ? AND {is_kind(LLM, 't')} "
        "AND b.extra LIKE '%\"images\"%'", (model, version)).fetchall()


def jobs(project: Project, prompts: Prompts,
         question_ids: tuple[str, ...]) -> Iterator[Job[BloomSuggestion]]:
    with_images = figs.has_images(project.conn)
    for start in range(0, len(question_ids), _CHUNK):
        chunk = question_ids[start : start + _CHUNK]
        rows = {row[0]: row for row in project.conn.execute(
            "SELECT id, question, options, topic FROM questions "
            f"WHERE id IN ({', '.join('?' * len(chunk))})", chunk)}
        for qid in chunk:
            if qid in rows:
                _, question, options, topic = rows[qid]
                shown = figs.figures_of(project.conn, [("question", qid)]) if with_images \
                    else ()
                yield Job(qid, request_for(prompts, question,
                                           json.loads(options) if options else None, topic,
                                           shown),
                          read_bloom)


def store(project: Project, model: str, version: str, question_id: str,
          outcome: Outcome[BloomSuggestion], batch_id: str | None = None) -> Changes:
    """Commit a suggestion as the model's label; a failed one is not stored (NOTHING)."""
    suggestion = outcome.result
    if suggestion is None:
        return NOTHING
    extra: dict[str, object] = {"rationale": suggestion.rationale,
                                "input_tokens": outcome.usage.input_tokens,
                                "output_tokens": outcome.usage.output_tokens}
    if batch_id:
        extra["batch"] = batch_id
    images = figs.hashes_of(project.conn, [("question", question_id)])
    if images:
        extra["images"] = images
    return set_bloom_label(project, question_id, model, suggestion.cognitive, suggestion.knowledge,
                           kind=LLM, prompt_version=version, extra=extra)
