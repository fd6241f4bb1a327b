"""P-REFS verdicts from a language model: the request for a response, and storing the answer.

A verdict is identified by response, judge model, prompt version and run label (the rater is the
model under that version, in that run), so asking again for a stored verdict is never needed,
and a second run of the same judge (Physics-R1's two runs) is asked under a run label of its
own. Problem-solving
responses that follow the three-part template are sent part by part; the others whole, to be
read holistically; conceptual questions use their own rubric.

Every verdict also names the first wrong step (0: none) and its category in the project's
failure taxonomy. The request marks where each step begins (``⟦3⟧``) with its number as
:mod:`physgrade.steps` gives it, so the judge's step is the one an expert marks; the answer is
stored as the judge's step mark (:mod:`physgrade.step_marks`) beside its scores. Conceptual
responses are asked too: their steps are their paragraphs, and the P-REFS taxonomy maps its
categories to the conceptual criteria as well. Prompts recorded before verdicts asked for the
step (no :data:`~physgrade.judge.prompts.TAXONOMY` text) build their requests as they did.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Callable, Iterator

from physgrade.changes import NOTHING, Changes, RecordKind
from physgrade.judge import figures as figs
from physgrade.judge import runs
from physgrade.judge.client import Decoding, Outcome, Request
from physgrade.judge.pricing import Price
from physgrade.judge.prompts import EXAMPLES, TAXONOMY, Prompts
from physgrade.judge.runner import Candidate, Job, Plan, make_plan
from physgrade.judge.scope import Scope
from physgrade.judge.tools import STEP_MARK, StepQuestion, Verdict, read_scores, score_tool
from physgrade.project import Project
from physgrade.raters import LLM, check_run, ensure_rater, is_kind
from physgrade.rubric import CONCEPTUAL, FINAL_ANSWER, PREFS, Rubric, rubric_for_kind
from physgrade.scores import scored, write
from physgrade.step_marks import write_mark
from physgrade.steps import ResponseStep, stored_steps
from physgrade.template import Span, from_stored, section_text

if TYPE_CHECKING:
    import sqlite3

PURPOSE = "verdicts"
TEMPLATES = ("system.md", "prefs_criteria.md", "problem_parts.md", "problem_holistic.md",
             "conceptual.md", "multiple_choice.md")
#: The texts that ask for the first wrong step (absent from prompts recorded before).
STEP_TEXTS = ("first_wrong_step.md", TAXONOMY)
#: How a response is put to the judge.
PARTS, HOLISTIC, CONCEPTUAL_MODE = "parts", "holistic", "conceptual"
#: Output tokens a verdict takes, roughly (a rationale per criterion).
OUTPUT_TOKENS = {PREFS.key: 450, CONCEPTUAL.key: 300}
_CHUNK = 500


def prompt_version(prompts: Prompts) -> str:
    """The version of the grading prompts: their texts, a refined prompt's examples, and every
    tool schema they use. A refined prompt's version starts ``refined-``."""
    refined = EXAMPLES in prompts.texts
    taxonomy = prompts.taxonomy()
    return prompts.version("refined" if refined else "prefs", texts(prompts),
                           *(score_tool(rubric, choice, taxonomy) for rubric in (PREFS, CONCEPTUAL)
                             for choice in (False, True)))


def texts(prompts: Prompts) -> tuple[str, ...]:
    """The names of the texts a grading request is built from (a version stores these)."""
    return TEMPLATES + (STEP_TEXTS if TAXONOMY in prompts.texts else ()) \
        + ((EXAMPLES,) if EXAMPLES in prompts.texts else ())


@dataclass(frozen=True, slots=True)
class Item:
    """What a verdict request is built from: a response and its question."""

    response_id: str
    response: str
    sections: bytes | None
    compliant: bool
    kind: str
    question: str
    options: dict[str, str] | None
    answer: str | None
    unit: str | None
    reference_solution: str | None
    figures: tuple[figs.Figures, ...] = ()

    @property
    def rubric(self) -> Rubric:
        return rubric_for_kind(self.kind)

    @property
    def mode(self) -> str:
        if self.kind == "conceptual":
            return CONCEPTUAL_MODE
        return PARTS if self.compliant and self.sections is not None else HOLISTIC

    def steps(self) -> tuple[ResponseStep, ...]:
        """The response's steps, as :func:`physgrade.steps.steps_of` reads them."""
        return stored_steps(self.response, self.sections)

    def reference_answer(self) -> str:
        answer = (self.answer or "").strip()
        if self.options and answer in self.options:
            return f"{answer}. {self.options[answer]}"
        if self.unit and answer and self.unit not in answer:
            return f"{answer} {self.unit}"
        return answer or "(none given: judge the final answer from the physics)"


def request_for(prompts: Prompts, item: Item) -> Request:
    """The grading request for one response (its steps marked, when the prompts ask for the
    first wrong step)."""
    rubric, multiple_choice = item.rubric, bool(item.options)
    taxonomy = prompts.taxonomy()
    steps = item.steps() if taxonomy is not None else ()
    values = {"question": item.question,
              "options": prompts.options_block(item.options, rubric.criterion(FINAL_ANSWER).maximum),
              "reference_solution": item.reference_solution or "(none given)",
              "reference_answer": item.reference_answer()}
    if item.mode != CONCEPTUAL_MODE:
        values["criteria"] = prompts.texts["prefs_criteria.md"]
    if item.mode == PARTS:
        parsed = from_stored(item.response, item.sections or b"")
        formulation, solution, final_answer = marked(
            item.response, (parsed.formulation, parsed.solution, parsed.final_answer), steps)
        prompt = prompts.fill("problem_parts.md", **values, formulation=formulation,
                              solution=solution, final_answer=final_answer)
    else:
        name = "conceptual.md" if item.mode == CONCEPTUAL_MODE else "problem_holistic.md"
        (response,) = marked(item.response, (Span(0, len(item.response)),), steps)
        prompt = prompts.fill(name, **values, response=response)
    if taxonomy is not None:
        prompt = prompt.rstrip("\n") + "\n\n" + prompts.fill(
            "first_wrong_step.md",
            markers=_markers(steps),
            categories="\n".join(f"- {c.key} ({c.title}): {c.description}"
                                  for c in taxonomy.categories))
    if EXAMPLES in prompts.texts:
        prompt = f"{prompts.texts[EXAMPLES]}\n\n{prompt}"
    return Request(prompts.texts["system.md"], prompt,
                   score_tool(rubric, multiple_choice, taxonomy), figures=item.figures)


def _markers(steps: tuple[ResponseStep, ...]) -> str:
    """The marks a request uses, in short, and how many steps there are."""
    marks = [STEP_MARK.format(step.number) for step in steps]
    shown = ", ".join(marks) if len(marks) <= 3 else f"{marks[0]}, {marks[1]}, \u2026 {marks[-1]}"
    return f"{shown} ({len(marks)} step{'s' if len(marks) != 1 else ''})" if marks \
        else "none here (the response has no steps)"


#: Brackets a response writes itself, shown as plain ones so that none poses as a step mark.
_PLAIN_BRACKETS = str.maketrans({STEP_MARK[0]: "[", STEP_MARK[-1]: "]"})


def marked(text: str, parts: tuple[Span | None, ...],
           steps: tuple[ResponseStep, ...]) -> tuple[str, ...]:
    """The text of each part of a response with each step's mark put where the step begins,
    in the first part the step reaches (a step in no part shown goes unmarked). Without steps
    the parts are as written."""
    if not steps:
        return tuple(section_text(text, part) for part in parts)
    text = text.translate(_PLAIN_BRACKETS)
    left = list(steps)
    shown = []
    for part in parts:
        if part is None:
            shown.append("")
            continue
        inside = [step for step in left if max(step.span.start, part.start)
                  <= min(step.span.end, part.end)]
        pieces, at = [], part.start
        for step in inside:
            left.remove(step)
            begin = max(step.span.start, part.start)
            pieces += [text[at:begin], STEP_MARK.format(step.number), " "]
            at = begin
        shown.append("".join(pieces) + text[at:part.end])
    return tuple(shown)


def plan(project: Project, model: str, prompts: Prompts, scope: Scope = Scope(),
         price: Price | None = None, batch: bool = False, run: str = "",
         decoding: Decoding = Decoding()) -> Plan:
    """Which responses in scope still need a verdict from ``model`` under these prompts in run
    ``run``, asked with ``decoding`` (refused if that run decoded otherwise)."""
    version = prompt_version(prompts)
    run = check_run(run)
    runs.check_decoding(project, PURPOSE, model, version, run, decoding)
    where, params = scope.where()
    conn = project.conn
    rows = [(rid, qid, size, kind) for rid, qid, size, kind in conn.execute(
        "SELECT r.id, q.id, length(r.response) + length(q.question) + "
        "coalesce(length(q.reference_solution), 0) + "
        "coalesce(length(q.options), 0), q.kind FROM responses r "
        f"JOIN questions q ON q.id = r.question_id WHERE {where} "
        "ORDER BY r.question_id, r.model, r.id", params)
        if scope.responses is None or rid in scope.responses]
    status = stored(project, model, version, run)
    done = {rid for rid, state in status.items() if state == "ok"}
    failed = set(status) - done
    tokens: dict[str, int] = {}
    with_images = figs.has_images(conn)
    held = {rid: figs.sent_hashes(extra) for rid, extra in sent(project, model, version, run)}
    if with_images or held:
        # The images sent are part of each call's key: a verdict given on other images is due.
        current = _hashes(conn)
        question = {rid: qid for rid, qid, _, _ in rows}
        done -= figs.saw_other_images(done & question.keys(), held,
                                      lambda rid: current(rid, question[rid]))
    if with_images:
        by_owner = {kind: figs.tokens_by_owner(conn, kind) for kind in figs.CAPTIONS}
        tokens = {rid: by_owner["question"].get(qid, 0) + by_owner["reference"].get(qid, 0)
                  + by_owner["response"].get(rid, 0) for rid, qid, _, _ in rows}
    candidates = [Candidate(rid, size, OUTPUT_TOKENS[rubric_for_kind(kind).key],
                            tokens.get(rid, 0)) for rid, _, size, kind in rows]
    overhead = sum(len(prompts.texts[name]) for name in ("system.md", "prefs_criteria.md",
                                                         "problem_parts.md")) \
        + sum(len(prompts.texts.get(name, "")) for name in (EXAMPLES, *STEP_TEXTS)) \
        + len(json.dumps(score_tool(PREFS, False, prompts.taxonomy())))
    return make_plan(PURPOSE, model, version, candidates, done, failed,
                     waiting_in_batches(project, PURPOSE, model, version, run), scope.retry_failed,
                     scope.limit, overhead, price, batch, run, decoding)


def stored(project: Project, model: str, version: str, run: str = "") -> dict[str, str]:
    """The status (ok or failed) of each verdict ``model`` gave under ``version`` in ``run``."""
    return dict(project.conn.execute(
        "SELECT a.response_id, a.status FROM assessments a JOIN raters t ON t.id = a.rater_id "
        f"WHERE t.name = ? AND t.prompt_version = ? AND t.run = ? AND {is_kind(LLM, 't')}",
        (model, version, run)))


def sent(project: Project, model: str, version: str, run: str = "") -> list[tuple[str, str | None]]:
    """The ``extra`` of each good verdict ``model`` gave under ``version`` in ``run`` whose call
    sent images (it records their hashes)."""
    return project.conn.execute(
        "SELECT a.response_id, a.extra FROM assessments a JOIN raters t ON t.id = a.rater_id "
        f"WHERE t.name = ? AND t.prompt_version = ? AND t.run = ? AND {is_kind(LLM, 't')} "
        "AND a.status = 'ok' AND a.extra LIKE '%\"images\"%'", (model, version, run)).fetchall()


def _hashes(conn: "sqlite3.Connection") -> "Callable[[str, str], list[str]]":
    """The hashes of the images a verdict request for a response sends, by response and
    question id (question's, reference's, response's, in that order)."""
    by_owner = {kind: figs.hashes_by_owner(conn, kind) for kind in figs.CAPTIONS}

    def of(rid: str, qid: str) -> list[str]:
        return [*by_owner["question"].get(qid, []), *by_owner["reference"].get(qid, []),
                *by_owner["response"].get(rid, [])]
    return of


def owners(response_id: str, question_id: str) -> tuple[tuple[str, str], ...]:
    """Whose figures a verdict request shows: the question's, its reference solution's, the
    response's."""
    return (("question", question_id), ("reference", question_id), ("response", response_id))


def waiting_in_batches(project: Project, purpose: str, model: str, version: str,
                       run: str = "") -> set[str]:
    """Items in submitted batches (of run ``run``) whose results have not been stored yet."""
    return {item for (item,) in project.conn.execute(
        "SELECT i.item_id FROM judge_batch_items i JOIN judge_batches b ON b.id = i.batch_id "
        "LEFT JOIN judge_batch_runs br ON br.batch_id = b.id LEFT JOIN judge_runs jr "
        "ON jr.id = br.run_id WHERE b.ingested_at IS NULL AND b.purpose = ? AND b.model = ? "
        "AND b.prompt_version = ? AND coalesce(jr.run, '') = ?", (purpose, model, version, run))}


def items(project: Project, response_ids: tuple[str, ...]) -> Iterator[Item]:
    """The responses, in the order given, read a few hundred at a time."""
    with_images = figs.has_images(project.conn)
    for start in range(0, len(response_ids), _CHUNK):
        chunk = response_ids[start : start + _CHUNK]
        rows = {row[0]: row for row in project.conn.execute(
            "SELECT r.id, r.response, r.sections, r.compliant, q.kind, q.question, q.options, "
            "q.answer, q.unit, q.reference_solution, q.id FROM responses r JOIN questions q "
            f"ON q.id = r.question_id WHERE r.id IN ({', '.join('?' * len(chunk))})", chunk)}
        for rid in chunk:
            if rid in rows:
                row = rows[rid]
                shown = figs.figures_of(project.conn, owners(rid, row[10])) if with_images \
                    else ()
                yield Item(row[0], row[1], row[2], bool(row[3]), row[4], row[5],
                           json.loads(row[6]) if row[6] else None, row[7], row[8], row[9], shown)


def jobs(project: Project, prompts: Prompts, response_ids: tuple[str, ...]) -> Iterator[Job[Verdict]]:
    taxonomy = prompts.taxonomy()
    for item in items(project, response_ids):
        rubric, multiple_choice = item.rubric, bool(item.options)
        asked = StepQuestion(len(item.steps()), taxonomy) if taxonomy is not None else None
        yield Job(item.response_id, request_for(prompts, item),
                  partial(read_scores, rubric, multiple_choice, asked=asked))


def store(project: Project, model: str, version: str, response_id: str,
          outcome: Outcome[Verdict], batch_id: str | None = None, run: str = "") -> Changes:
    """Commit one verdict of run ``run`` (or its failure, with the raw answer) and the first
    wrong step it names, as the judge's step mark; a stored good verdict is kept as it is.
    Returns what was written (NOTHING when the stored verdict was kept)."""
    response = scored(project, response_id)
    extra: dict[str, object] = {"input_tokens": outcome.usage.input_tokens,
                                "output_tokens": outcome.usage.output_tokens,
                                "attempts": outcome.attempts}
    if batch_id:
        extra["batch"] = batch_id
    images = figs.hashes_of(project.conn, owners(response_id, response.question_id))
    if images:
        extra["images"] = images
    with project.transaction():
        rater, changes = ensure_rater(project, model, LLM, version, run)
        previous = project.conn.execute(
            "SELECT status, extra FROM assessments WHERE rater_id = ? AND response_id = ? "
            "AND rubric = ?", (rater, response_id, response.rubric.key)).fetchone()
        superseded = previous is not None and figs.sent_hashes(previous[1]) != images
        if previous is not None and previous[0] == "ok" and not superseded:
            return NOTHING
        verdict = outcome.result
        changes |= write(project, rater, response, verdict.scores if verdict else {},
                         verdict.rationale if verdict else None,
                         comment=verdict.comment if verdict else outcome.problem, raw=outcome.raw,
                         status="ok" if verdict else "failed", extra=json.dumps(extra),
                         replace=superseded)
        if verdict is not None and verdict.first_wrong is not None:
            changes |= write_mark(project, rater, response_id, verdict.first_wrong,
                                  verdict.taxonomy, verdict.category)
        elif superseded:  # the step the replaced verdict named goes with it
            project.conn.execute("DELETE FROM step_marks WHERE rater_id = ? AND "
                                 "response_id = ?", (rater, response_id))
            changes |= response.changes(RecordKind.STEPS)
    return changes
