"""The rater ``rules``: every response whose question has a reference answer, checked by rule.

A check becomes the rater's final-answer score, so reports set it beside people and judges:
ANS at its maximum for ``equivalent``, 0 for ``not_equivalent`` and ``no_answer``. The outcome,
its reason, the answer found and how many of the reference's sub-answers it got right
(``parts_right`` of ``parts_total``: what :mod:`physgrade.answers.accuracy` counts partial
credit from) are kept in the assessment. ``not_checked``, ``unparseable``
and ``timeout`` say nothing about the response, so they are stored as failed assessments without
a score.

Each settings variant is its own rater: the defaults are ``rules``, a looser tolerance is
``rules [rtol 0.05]``. A run checks only responses this rater has not assessed (``recheck``
redoes all), and commits every few hundred results, so an interrupted run resumes.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from ..changes import NOTHING, Changes
from ..project import Project, now_iso
from ..raters import RULES, ensure_rater, is_kind
from ..rubric import FINAL_ANSWER
from ..scores import scored, write
from ..tasks import Task
from .outcome import Check, Outcome, Settings
from .sandbox import Checker, Request

RATER = RULES
_COMMIT_EVERY = 200
_SCORED = {Outcome.EQUIVALENT: True, Outcome.NOT_EQUIVALENT: False, Outcome.NO_ANSWER: False}


@dataclass
class Summary:
    """What a verify run did: checks per outcome, responses left as they were, and what it
    changed in the project."""

    outcomes: Counter[str] = field(default_factory=Counter)
    already: int = 0
    changes: Changes = NOTHING

    @property
    def checked(self) -> int:
        return sum(self.outcomes.values())

    def text(self) -> str:
        parts = [f"{self.checked:,} responses checked"]
        parts += [f"{self.outcomes[o.value]:,} {o.value.replace('_', ' ')}" for o in Outcome
                  if self.outcomes[o.value]]
        if self.already:
            parts.append(f"{self.already:,} already checked")
        return ", ".join(parts)


_REQUESTS = ("SELECT r.id, r.response, q.answer, q.answer_type, q.unit, q.options FROM responses r "
             "JOIN questions q ON q.id = r.question_id WHERE trim(coalesce(q.answer, '')) != ''")


def _request(response: str, answer: str, answer_type: str | None, unit: str | None,
             options: str | None) -> Request:
    return Request(answer, response, "MC" if options else answer_type, unit)


def request_for(project: Project, response_id: str) -> Request | None:
    """The check of one response, or None if its question has no reference answer."""
    row = project.conn.execute(_REQUESTS + " AND r.id = ?", (response_id,)).fetchone()
    return None if row is None else _request(*row[1:])


def requests(project: Project, settings: Settings, recheck: bool = False
             ) -> tuple[list[tuple[str, Request]], int]:
    """The responses to check (id and request) and how many this rater already assessed."""
    done = set() if recheck else assessed(project, settings)
    todo, already = [], 0
    for rid, *fields in project.conn.execute(_REQUESTS + " ORDER BY r.id"):
        if rid in done:
            already += 1
            continue
        todo.append((rid, _request(*fields)))
    return todo, already


def assessed(project: Project, settings: Settings) -> set[str]:
    return {rid for (rid,) in project.conn.execute(
        "SELECT a.response_id FROM assessments a JOIN raters t ON t.id = a.rater_id "
        f"WHERE t.name = ? AND {is_kind(RULES, 't')} AND t.prompt_version = ?",
        (RATER, settings.label))}


def stored_since(project: Project, label: str, since: str) -> int:
    """How many checks under the settings ``label`` were stored at or after ``since`` (an ISO
    time): a run commits every few hundred, and one that stops says how many it kept."""
    return project.conn.execute(
        "SELECT count(*) FROM assessments a JOIN raters t ON t.id = a.rater_id WHERE t.name = ? "
        f"AND {is_kind(RULES, 't')} AND t.prompt_version = ? AND a.assessed_at >= ?",
        (RATER, label, since)).fetchone()[0]


def verify(project: Project, checker: Checker, task: Task | None = None,
           recheck: bool = False) -> Summary:
    """Check every response with a reference answer and store the results as the rules rater."""
    todo, already = requests(project, checker.settings, recheck)
    summary = Summary(already=already)
    batch: list[tuple[str, Check]] = []
    checks = checker.map((request for _, request in todo), task, len(todo))
    for (rid, _), (_, check) in zip(todo, checks):  # map keeps the order given
        batch.append((rid, check))
        summary.outcomes[check.outcome.value] += 1
        if len(batch) >= _COMMIT_EVERY:
            summary.changes |= store(project, checker.settings, batch)
            batch = []
    summary.changes |= store(project, checker.settings, batch)
    return summary


def store(project: Project, settings: Settings, results: list[tuple[str, Check]]) -> Changes:
    """Commit checks as the rules rater's assessments and final-answer scores, in one transaction."""
    if not results:
        return NOTHING
    stamp = now_iso()
    with project.transaction():
        rater, changes = ensure_rater(project, RATER, RULES, settings.label)
        for response_id, check in results:
            response = scored(project, response_id)
            answer = response.rubric.criterion(FINAL_ANSWER)
            right, total = check.parts()
            extra = {"outcome": check.outcome.value, "answer": check.answer, "rtol": settings.rtol,
                     "mantissa": settings.mantissa, "parts_right": right, "parts_total": total}
            values = {}
            if check.outcome in _SCORED:
                values[FINAL_ANSWER] = (answer.allowed_values(response.multiple_choice)[-1]
                                        if _SCORED[check.outcome] else 0)
            changes |= write(project, rater, response, values, {FINAL_ANSWER: check.reason},
                             stamp=stamp, replace=True, comment=check.reason, raw=None,
                             status="ok" if values else "failed", extra=json.dumps(extra))
    return changes


def stored(project: Project, response_id: str, settings: Settings = Settings()) -> Check | None:
    """The rules rater's check of a response under ``settings``, if it has one."""
    row = project.conn.execute(
        "SELECT a.comment, a.extra FROM assessments a JOIN raters t ON t.id = a.rater_id "
        f"WHERE t.name = ? AND {is_kind(RULES, 't')} AND t.prompt_version = ? "
        "AND a.response_id = ?",
        (RATER, settings.label, response_id)).fetchone()
    if row is None:
        return None
    extra = json.loads(row[1] or "{}")
    return Check(Outcome(extra.get("outcome", "unparseable")), row[0] or "", extra.get("answer"),
                 extra.get("parts_right"), extra.get("parts_total"))
