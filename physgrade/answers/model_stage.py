"""The model stage of final-answer checking: a language model judges what the rules left open.

As in UGPhysics' MARJ, the rules come first (:mod:`physgrade.answers.verify`); a model is asked
only about the answers they did not settle: ``not_equivalent`` (the rules may have misread a
form they cannot parse as the same), ``not_checked``, ``unparseable`` and ``timeout``. As in
Physics-R1's judge, the model answers YES or NO for each sub-answer of the reference, with a
short reason, and an answer is right only if every sub-answer is.

One request per unsettled response, through the judge runner (:mod:`physgrade.judge.runner`:
cache, resume, faults, a cost estimate first, a recorded prompt version), or as Message Batches
(:mod:`physgrade.judge.batches`, purpose ``answers``: ``verify --model --batch``, collected by
``judge-status``; stored by :func:`store` as a direct answer is, with the batch's id). The app
runs it from Judge ▸ Check final answers with a model…. The
combined result is its own rater, ``rules+MODEL`` (kind ``rules``) under the answer-check
prompt's version, so every model and prompt keeps its own verdicts. Its assessment of each
response holds, in ``extra``: ``outcome``, ``reason``, ``stage`` (``rules`` or ``model``: which
stage decided) and ``parts_right``/``parts_total``; its ANS score is the maximum when every part
is right and 0 otherwise. The rules' settled verdicts (``equivalent``, ``no_answer``) are copied
in by :func:`settle`, their parts as the rules stored them (else every part right for
``equivalent``, none for ``no_answer``). A reply that does not fit the tool after one corrective
retry is kept, raw, as a failed assessment without a score: a failure, not a guess.

The rules run at the project's answer tolerance (:func:`physgrade.answers.tolerance.settings`),
which the prompt states too; the prompt's version is a digest of its text as loaded, so another
tolerance is another version and another rater.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from functools import partial
from typing import Any, Iterator

from ..changes import NOTHING, Changes
from ..judge import figures as figs
from ..judge.client import Outcome as CallOutcome
from ..judge.client import Request
from ..judge.pricing import Price
from ..judge.prompts import Prompts
from ..judge.runner import Candidate, Job, Plan, make_plan
from ..judge.scope import Scope
from ..judge.tools import InvalidOutput
from ..judge.verdicts import waiting_in_batches
from ..project import Project, now_iso
from ..raters import RULES, ensure_rater, is_kind, rater_label
from ..rubric import FINAL_ANSWER
from ..scores import Scored, scored, write
from ..template import from_stored, section_text
from .outcome import Check, Outcome, Settings
from .tolerance import settings as project_settings
from .verify import RATER as RULES_RATER
from .verify import stored as rules_check

PURPOSE = "answers"
TEMPLATES = ("answer_check_system.md", "answer_check.md")
TOOL = "record_answer_check"
#: The rules' outcomes the model is asked about; the others (equivalent, no_answer) stand.
UNSETTLED = frozenset({Outcome.NOT_EQUIVALENT, Outcome.NOT_CHECKED, Outcome.UNPARSEABLE,
                       Outcome.TIMEOUT})
#: Which stage decided an outcome.
RULES_STAGE, MODEL_STAGE = "rules", "model"
#: Output tokens one answer check takes, roughly (a short reason per part).
OUTPUT_TOKENS = 150
YES, NO = "YES", "NO"
_CHUNK = 500
_COMMIT_EVERY = 200
_ITEMS = ("SELECT r.id, r.response, r.sections, q.question, q.options, q.answer, q.answer_type, "
          "q.unit, q.id FROM responses r JOIN questions q ON q.id = r.question_id ")


def rater_name(model: str) -> str:
    """The combined rater's name: the rules, then ``model`` for what they left open."""
    return f"{RULES_RATER}+{model}"


def combined_label(model: str, version: str) -> str:
    """How reports name the combined rater: ``rules+MODEL [answers-…]``."""
    return rater_label(rater_name(model), version)


def prompt_version(prompts: Prompts) -> str:
    return prompts.version(PURPOSE, TEMPLATES, answer_tool())


# -- the tool and its strict reading ------------------------------------------------------------


def answer_tool() -> dict[str, Any]:
    """The ``record_answer_check`` tool: a YES/NO verdict and a reason per reference part."""
    part = {"type": "object", "properties": {
        "part": {"type": "integer", "minimum": 1,
                 "description": "The number of the reference sub-answer."},
        "verdict": {"type": "string", "enum": [YES, NO],
                    "description": "YES if the final answer states this sub-answer, else NO."},
        "reason": {"type": "string", "description": "One short sentence."}},
        "required": ["part", "verdict", "reason"], "additionalProperties": False}
    return {"name": TOOL,
            "description": "Record, for each sub-answer of the reference, whether the response's "
                           "final answer states it.",
            "input_schema": {"type": "object", "properties": {
                "parts": {"type": "array", "items": part,
                          "description": "Exactly one entry per reference sub-answer."}},
                "required": ["parts"], "additionalProperties": False}}


@dataclass(frozen=True, slots=True)
class PartVerdict:
    part: int
    right: bool
    reason: str

    def as_dict(self) -> dict[str, object]:
        return {"part": self.part, "verdict": YES if self.right else NO, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class AnswerCheck:
    """The model's verdicts on every part of a reference answer, in part order."""

    parts: tuple[PartVerdict, ...]

    @property
    def parts_right(self) -> int:
        return sum(part.right for part in self.parts)

    @property
    def parts_total(self) -> int:
        return len(self.parts)

    @property
    def outcome(self) -> Outcome:
        return Outcome.EQUIVALENT if self.parts_right == self.parts_total else \
            Outcome.NOT_EQUIVALENT

    def reason(self) -> str:
        said = [f"{YES if p.right else NO}: {p.reason}" for p in self.parts]
        if len(said) == 1:
            return said[0]
        return "; ".join(f"part {p.part} {text}" for p, text in zip(self.parts, said))


def read_answer_check(total: int, answer: object) -> AnswerCheck:
    """The verdicts in a ``record_answer_check`` input, read strictly: exactly one entry for
    each of the ``total`` parts, each with its number, YES or NO, and a reason; nothing else."""
    if not isinstance(answer, dict) or set(answer) != {"parts"}:
        raise InvalidOutput("the answer must be an object with exactly one field, parts")
    entries = answer["parts"]
    if not isinstance(entries, list) or len(entries) != total:
        raise InvalidOutput(f"parts must be a list of exactly {total} entr"
                            f"{'y' if total == 1 else 'ies'}, one per reference sub-answer")
    found: dict[int, PartVerdict] = {}
    for entry in entries:
        if not isinstance(entry, dict) or set(entry) != {"part", "verdict", "reason"}:
            raise InvalidOutput("each entry must have exactly part, verdict and reason")
        number, verdict, reason = entry["part"], entry["verdict"], entry["reason"]
        if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= total:
            raise InvalidOutput(f"part must be a number from 1 to {total}, not {number!r}")
        if number in found:
            raise InvalidOutput(f"part {number} is given twice")
        if verdict not in (YES, NO):
            raise InvalidOutput(f"verdict must be YES or NO, not {verdict!r}")
        if not isinstance(reason, str) or not reason.strip():
            raise InvalidOutput(f"part {number} needs a reason")
        found[number] = PartVerdict(number, verdict == YES, " ".join(reason.split()))
    return AnswerCheck(tuple(found[number] for number in sorted(found)))


# -- what the model sees ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Item:
    """What an answer-check request is built from: a response, its question and the rules'
    check of it."""

    response_id: str
    response: str
    sections: bytes | None
    question: str
    options: dict[str, str] | None
    gold: str
    answer_type: str | None
    unit: str | None
    rules: Check | None
    question_id: str = ""
    figures: tuple[figs.Figures, ...] = ()

    def reference_parts(self) -> list[str]:
        """The reference answer's sub-answers, each with its unit, as the rules split it (the
        whole answer as one part where they cannot split it)."""
        gold = self.gold.strip()
        if self.options:
            return [f"{gold}. {self.options[gold]}" if gold in self.options else gold]
        from .compare import reference_parts  # sympy and pint: only when a request is built
        from .latex import Unparseable
        try:
            parts = reference_parts(gold, self.answer_type, self.unit)
        except Unparseable:
            parts = []
        if not parts:
            return [f"{gold} {self.unit}" if self.unit and self.unit not in gold else gold]
        return [f"{p.text} {p.unit}" if p.unit and p.unit not in p.text else p.text
                for p in parts]

    def question_text(self) -> str:
        if not self.options:
            return self.question
        listing = "\n".join(f"{letter}. {text}" for letter, text in self.options.items())
        return f"{self.question}\n\nOptions:\n{listing}"

    def final_answer(self) -> str:
        """The response's Final Answer section as written, where it follows the template; else
        the final answer the rules found; else the whole response."""
        if self.sections:
            parsed = from_stored(self.response, self.sections)
            section = section_text(self.response, parsed.final_answer).strip()
            if section:
                return section
        found = self.rules.answer if self.rules is not None else None
        if found and found.strip():
            return found.strip()
        return ("(no final answer could be picked out; the whole response follows)\n"
                + self.response)


def request_for(prompts: Prompts, item: Item) -> tuple[Request, int]:
    """The request for one response, and the number of reference parts it asks about."""
    parts = item.reference_parts()
    listing = "\n".join(f"Part {n}: {text}" for n, text in enumerate(parts, 1))
    prompt = prompts.fill("answer_check.md", question=item.question_text(),
                          reference_answer=listing, final_answer=item.final_answer())
    return Request(prompts.texts["answer_check_system.md"], prompt, answer_tool(),
                   max_tokens=300 + 150 * len(parts), figures=item.figures), len(parts)


def items(project: Project, response_ids: tuple[str, ...],
          settings: Settings | None = None) -> Iterator[Item]:
    """The responses, in the order given, with the rules' checks at ``settings`` (the project's
    by default)."""
    settings = settings or project_settings(project)
    with_images = figs.has_images(project.conn)
    for start in range(0, len(response_ids), _CHUNK):
        chunk = response_ids[start : start + _CHUNK]
        rows = {row[0]: row for row in project.conn.execute(
            f"{_ITEMS} WHERE r.id IN ({', '.join('?' * len(chunk))})", chunk)}
        for rid in chunk:
            if rid in rows:
                _, response, sections, question, options, gold, answer_type, unit, qid = rows[rid]
                shown = figs.figures_of(project.conn, [("question", qid)]) if with_images \
                    else ()
                yield Item(rid, response, sections, question,
                           json.loads(options) if options else None, gold or "", answer_type,
                           unit, rules_check(project, rid, settings), qid, shown)


def jobs(project: Project, prompts: Prompts,
         response_ids: tuple[str, ...]) -> Iterator[Job[AnswerCheck]]:
    for item in items(project, response_ids):
        request, total = request_for(prompts, item)
        yield Job(item.response_id, request, partial(read_answer_check, total))


# -- planning -----------------------------------------------------------------------------------


def _rules_outcomes(project: Project, settings: Settings, scope: Scope
                    ) -> Iterator[tuple[str, int, Outcome, dict[str, Any], str]]:
    """Each response in scope with a reference answer and a check by the rules at
    ``settings``: its id, the characters its prompt adds, the rules' outcome, what they stored
    in ``extra`` and their reason."""
    where, params = scope.where()
    for rid, size, extra, comment in project.conn.execute(
            "SELECT r.id, length(q.question) + length(q.answer) + coalesce(length(q.options), 0) "
            "+ min(length(r.response), 2000), a.extra, a.comment FROM responses r "
            "JOIN questions q ON q.id = r.question_id JOIN assessments a ON a.response_id = r.id "
            f"JOIN raters t ON t.id = a.rater_id WHERE t.name = ? AND {is_kind(RULES, 't')} "
            f"AND t.prompt_version = ? AND trim(coalesce(q.answer, '')) != '' AND {where} "
            "ORDER BY r.question_id, r.model, r.id", [RULES_RATER, settings.label, *params]):
        if scope.responses is not None and rid not in scope.responses:
            continue
        found = json.loads(extra or "{}")
        yield (rid, size, Outcome(found.get("outcome", Outcome.UNPARSEABLE.value)), found,
               comment or "")


def plan(project: Project, model: str, prompts: Prompts, scope: Scope = Scope(),
         price: Price | None = None, batch: bool = False) -> Plan:
    """Which responses the rules left unsettled and the combined rater of ``model`` has no
    answer check for yet under these prompts. Responses the rules have not checked are not in
    it: run the rules first (``physgrade verify``)."""
    version = prompt_version(prompts)
    conn = project.conn
    unsettled = [(rid, size) for rid, size, outcome, _, _
                 in _rules_outcomes(project, project_settings(project), scope)
                 if outcome in UNSETTLED]
    status = stored(project, model, version)
    done = {rid for rid, state in status.items() if state == "ok"}
    failed = set(status) - done
    tokens: dict[str, int] = {}
    with_images = figs.has_images(conn)
    held = {rid: figs.sent_hashes(extra) for rid, extra in _model_checks(project, model, version)}
    question_of: dict[str, str] = {}
    if with_images or held:
        # The question's images are part of each call's key: a check on other images is due.
        question_of = dict(conn.execute("SELECT id, question_id FROM responses"))
        current = figs.hashes_by_owner(conn, "question")
        done -= figs.saw_other_images(done & {rid for rid, _ in unsettled}, held,
                                      lambda rid: current.get(question_of[rid], []))
    if with_images:
        by_question = figs.tokens_by_owner(conn, "question")
        tokens = {rid: by_question.get(question_of.get(rid, ""), 0) for rid, _ in unsettled}
    candidates = [Candidate(rid, size, OUTPUT_TOKENS, tokens.get(rid, 0))
                  for rid, size in unsettled]
    overhead = sum(len(prompts.texts[name]) for name in TEMPLATES) + len(json.dumps(answer_tool()))
    return make_plan(PURPOSE, model, version, candidates, done, failed,
                     waiting_in_batches(project, PURPOSE, model, version), scope.retry_failed,
                     scope.limit, overhead, price, batch)


def _model_checks(project: Project, model: str, version: str) -> list[tuple[str, str | None]]:
    """The ``extra`` of each good check the model stage of ``model`` stored under ``version``
    whose call sent images (it records their hashes)."""
    return project.conn.execute(
        "SELECT a.response_id, a.extra FROM assessments a JOIN raters t ON t.id = a.rater_id "
        f"WHERE t.name = ? AND t.prompt_version = ? AND {is_kind(RULES, 't')} "
        "AND a.status = 'ok' AND a.extra LIKE '%\"images\"%'",
        (rater_name(model), version)).fetchall()


def unchecked(project: Project) -> int:
    """How many responses with a reference answer the rules have not checked at the project's
    tolerance: they are not in :func:`plan` until the rules have run (``physgrade verify``), and
    each the rules leave open adds a call."""
    return project.conn.execute(
        "SELECT count(*) FROM responses r JOIN questions q ON q.id = r.question_id "
        "WHERE trim(coalesce(q.answer, '')) != '' AND r.id NOT IN (SELECT a.response_id FROM "
        f"assessments a JOIN raters t ON t.id = a.rater_id WHERE t.name = ? AND "
        f"{is_kind(RULES, 't')} AND t.prompt_version = ?)",
        (RULES_RATER, project_settings(project).label)).fetchone()[0]


def stored(project: Project, model: str, version: str) -> dict[str, str]:
    """The status (ok or failed) of each assessment of the combined rater of ``model`` under
    ``version``, the rules' settled ones included."""
    return dict(project.conn.execute(
        "SELECT a.response_id, a.status FROM assessments a JOIN raters t ON t.id = a.rater_id "
        f"WHERE t.name = ? AND t.prompt_version = ? AND {is_kind(RULES, 't')}",
        (rater_name(model), version)))


# -- storing ------------------------------------------------------------------------------------


def _final_answer_value(response: Scored, right: bool) -> int:
    answer = response.rubric.criterion(FINAL_ANSWER)
    return answer.allowed_values(response.multiple_choice)[-1] if right else 0


def settle(project: Project, model: str, prompts: Prompts, scope: Scope = Scope()
           ) -> tuple[Counter[str], Changes]:
    """Copy the rules' settled checks (``equivalent``, ``no_answer``) of the responses in scope
    into the combined rater, where it has none yet; returns how many per outcome, and what
    that changed."""
    version = prompt_version(prompts)
    have = set(stored(project, model, version))
    every = Scope(scope.filter, responses=scope.responses)  # a limit counts calls only
    settled = [(rid, outcome, extra, comment) for rid, _, outcome, extra, comment
               in _rules_outcomes(project, project_settings(project), every)
               if outcome not in UNSETTLED and rid not in have]
    counts: Counter[str] = Counter()
    changes = NOTHING
    for start in range(0, len(settled), _COMMIT_EVERY):
        chunk = settled[start : start + _COMMIT_EVERY]
        totals = {item.response_id: len(item.reference_parts())
                  for item in items(project, tuple(rid for rid, _, extra, _ in chunk
                                                   if "parts_total" not in extra))}
        stamp = now_iso()
        with project.transaction():
            rater, made = ensure_rater(project, rater_name(model), RULES, version)
            changes |= made
            for rid, outcome, extra, comment in chunk:
                right = outcome == Outcome.EQUIVALENT
                total = extra.get("parts_total", totals.get(rid, 1))
                reason = extra.get("reason") or comment or outcome.value
                found = {"outcome": outcome.value, "reason": reason, "stage": RULES_STAGE,
                         "parts_right": extra.get("parts_right", total if right else 0),
                         "parts_total": total, "answer": extra.get("answer")}
                response = scored(project, rid)
                changes |= write(project, rater, response,
                                 {FINAL_ANSWER: _final_answer_value(response, right)},
                                 {FINAL_ANSWER: reason}, stamp=stamp, replace=True,
                                 comment=reason, raw=None, status="ok",
                                 extra=json.dumps(found, ensure_ascii=False))
                counts[outcome.value] += 1
    return counts, changes


def store(project: Project, model: str, version: str, response_id: str,
          outcome: CallOutcome[AnswerCheck], batch_id: str | None = None) -> Changes:
    """Commit the model's check of one response (or its failure, with the raw answer) as the
    combined rater's; a stored good check is kept as it is (NOTHING)."""
    response = scored(project, response_id)
    rules = rules_check(project, response_id, project_settings(project))
    extra: dict[str, object] = {"stage": MODEL_STAGE,
                                "rules_outcome": rules.outcome.value if rules else None,
                                "answer": rules.answer if rules else None,
                                "input_tokens": outcome.usage.input_tokens,
                                "output_tokens": outcome.usage.output_tokens,
                                "attempts": outcome.attempts}
    if batch_id:
        extra["batch"] = batch_id
    images = figs.hashes_of(project.conn, [("question", response.question_id)])
    if images:
        extra["images"] = images
    check = outcome.result
    values: dict[str, int | None] = {}
    reason: str | None = None
    if check is not None:
        reason = check.reason()
        extra |= {"outcome": check.outcome.value, "reason": reason,
                  "parts_right": check.parts_right, "parts_total": check.parts_total,
                  "parts": [part.as_dict() for part in check.parts]}
        values[FINAL_ANSWER] = _final_answer_value(response, check.parts_right
                                                   == check.parts_total)
    with project.transaction():
        rater, changes = ensure_rater(project, rater_name(model), RULES, version)
        previous = project.conn.execute(
            "SELECT status, extra FROM assessments WHERE rater_id = ? AND response_id = ? "
            "AND rubric = ?", (rater, response_id, response.rubric.key)).fetchone()
        if previous is not None and previous[0] == "ok" and (
                json.loads(previous[1] or "{}").get("stage") != MODEL_STAGE
                or figs.sent_hashes(previous[1]) == images):
            return NOTHING
        changes |= write(project, rater, response, values,
                         {FINAL_ANSWER: reason} if reason is not None else None, replace=True,
                         comment=reason if reason is not None else outcome.problem,
                         raw=outcome.raw, status="ok" if check is not None else "failed",
                         extra=json.dumps(extra, ensure_ascii=False))
    return changes


# -- reading back -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Stored:
    """One assessment of the combined rater: ``outcome`` is None for a failed model answer."""

    outcome: Outcome | None
    reason: str
    stage: str
    parts_right: int | None
    parts_total: int | None
    status: str


def stored_check(project: Project, model: str, version: str, response_id: str) -> Stored | None:
    row = project.conn.execute(
        "SELECT a.status, a.comment, a.extra FROM assessments a JOIN raters t ON t.id = "
        f"a.rater_id WHERE t.name = ? AND t.prompt_version = ? AND {is_kind(RULES, 't')} "
        "AND a.response_id = ?", (rater_name(model), version, response_id)).fetchone()
    if row is None:
        return None
    status, comment, extra = row
    found = json.loads(extra or "{}")
    outcome = found.get("outcome")
    return Stored(Outcome(outcome) if outcome else None, found.get("reason") or comment or "",
                  found.get("stage", ""), found.get("parts_right"), found.get("parts_total"),
                  status)


def tally(project: Project, model: str, version: str) -> str:
    """The combined rater's checks by outcome and stage, in words."""
    counts: Counter[tuple[str, str]] = Counter()
    failed = 0
    for status, extra in project.conn.execute(
            "SELECT a.status, a.extra FROM assessments a JOIN raters t ON t.id = a.rater_id "
            f"WHERE t.name = ? AND t.prompt_version = ? AND {is_kind(RULES, 't')}",
            (rater_name(model), version)):
        found = json.loads(extra or "{}")
        if status != "ok":
            failed += 1
            continue
        counts[(found.get("outcome", ""), found.get("stage", ""))] += 1
    said = []
    for outcome in Outcome:
        by_stage = {stage: counts[(outcome.value, stage)] for stage in (RULES_STAGE, MODEL_STAGE)}
        if sum(by_stage.values()):
            said.append(f"{sum(by_stage.values()):,} {outcome.value.replace('_', ' ')} ("
                        + ", ".join(f"{n:,} by the {stage}" for stage, n in by_stage.items()
                                    if n) + ")")
    if failed:
        said.append(f"{failed:,} model answers that did not fit (kept as failed)")
    return f"{combined_label(model, version)}: {', '.join(said) or 'nothing stored yet'}"
