"""Reviews of judge verdicts: their vocabulary, and writing a reviewer's work.

A reviewer gives each criterion of a judge's verdict an agreement (2 full, 1 partial,
0 disagree) and labels the verdict as a whole correct, lenient (the judge under-penalises) or
strict (it over-penalises). Both scales are defined here once; sessions, figures, reports and
imports take them from here. Each write validates, commits at once and returns its
:class:`~physgrade.changes.Changes` (:attr:`~physgrade.changes.RecordKind.REVIEWS` for the response).

A verdict labelled correct agrees fully with every criterion, so a reviewer's writes never
contradict that: labelling a verdict correct while a criterion is marked partial or disagree is
refused, and marking a criterion so once the verdict was labelled correct clears that label (the
reviewer's latest judgement wins, and they label the verdict again; their agreements are never
dropped). Imported reviews are kept as recorded.
"""

from __future__ import annotations

from physgrade.changes import Changes, RecordKind
from physgrade.project import Project, ProjectError, now_iso
from physgrade.raters import HUMAN, ensure_rater, is_person
from physgrade.rubric import Rubric, ScoreError
from physgrade.scores import scored

#: A reviewer's label of a judge's verdict as a whole, in report order, with its meaning.
CORRECT, LENIENT, STRICT = "correct", "lenient", "strict"
VERDICTS: dict[str, str] = {CORRECT: "the judge's verdict is right",
                            LENIENT: "the judge under-penalises",
                            STRICT: "the judge over-penalises"}
#: Other spellings an exchange file may use for a label (the study's -1 / 0 / +1 coding).
VERDICT_CODES: dict[str, str] = {"0": CORRECT, "-1": LENIENT, "+1": STRICT, "1": STRICT}

#: A reviewer's agreement with one criterion of a verdict, with its name, highest first.
FULL, PARTIAL, DISAGREE = 2, 1, 0
AGREEMENTS: dict[int, str] = {FULL: "full", PARTIAL: "partial", DISAGREE: "disagree"}
#: The agreement scale in ascending order, as the statistics take it.
AGREEMENT_LEVELS: tuple[int, ...] = tuple(sorted(AGREEMENTS))


def _either(words: list[str]) -> str:
    return ", ".join(words[:-1]) + f" or {words[-1]}" if len(words) > 1 else "".join(words)


def verdicts_text(quoted: bool = False) -> str:
    """The labels for messages: "correct, lenient or strict"."""
    return _either([repr(v) if quoted else v for v in VERDICTS])


def agreement_text(level: int) -> str:
    """One level for messages: "1 (partial)"."""
    return f"{level} ({AGREEMENTS[level]})"


def agreements_text() -> str:
    """The agreement scale for messages: "2 (full), 1 (partial) or 0 (disagree)"."""
    return _either([agreement_text(level) for level in AGREEMENTS])


def verdict_of(text: str) -> str | None:
    """The label a spelling stands for (a label itself or one of :data:`VERDICT_CODES`), or
    None if it is none of them."""
    key = text.strip().lower()
    return key if key in VERDICTS else VERDICT_CODES.get(key)


def is_agreement(value: object) -> bool:
    """Whether ``value`` is a level of the agreement scale (a whole number, not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and value in AGREEMENTS


def set_review_agreement(project: Project, reviewer: str, judge_id: int, response_id: str,
                         criterion: str, agreement: int | None) -> Changes:
    """Record a reviewer's agreement with one criterion of a judge's verdict (see
    :data:`AGREEMENTS`; None withdraws it), committed at once."""
    if agreement is not None and not is_agreement(agreement):
        raise ScoreError(criterion, f"an agreement is {agreements_text()}, not {agreement!r}")
    response = scored(project, response_id)
    response.rubric.criterion(criterion)  # raises ScoreError for a criterion of another rubric
    if not reviewer.strip():
        raise ProjectError("a review needs a reviewer's name")
    with project.transaction():
        rater, changes = _reviewer_of(project, reviewer, judge_id, response_id)
        if agreement is None:
            project.conn.execute(
                "DELETE FROM judge_review_criteria WHERE reviewer_id = ? AND judge_id = ? "
                "AND response_id = ? AND criterion = ?", (rater, judge_id, response_id, criterion))
        else:
            stamp = now_iso()
            project.conn.execute(
                "INSERT INTO judge_review_criteria (reviewer_id, judge_id, response_id, "
                "criterion, agreement, updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO "
                "UPDATE SET agreement = excluded.agreement, updated_at = excluded.updated_at",
                (rater, judge_id, response_id, criterion, agreement, stamp))
            if agreement != FULL:  # "correct" no longer holds: the reviewer labels it again
                project.conn.execute(
                    "UPDATE judge_reviews SET verdict = NULL, updated_at = ? WHERE "
                    "reviewer_id = ? AND judge_id = ? AND response_id = ? AND verdict = ?",
                    (stamp, rater, judge_id, response_id, CORRECT))
    return changes | _reviewed(response_id, response.question_id)


def set_review_verdict(project: Project, reviewer: str, judge_id: int, response_id: str,
                       verdict: str | None) -> Changes:
    """Record a reviewer's label of a judge's verdict as a whole (one of :data:`VERDICTS`;
    None withdraws it), committed at once."""
    if verdict is not None and verdict not in VERDICTS:
        raise ProjectError(f"a verdict is labelled {verdicts_text(quoted=True)}, not {verdict!r}")
    response = scored(project, response_id)  # refuses an unknown response
    if not reviewer.strip():
        raise ProjectError("a review needs a reviewer's name")
    with project.transaction():
        rater, changes = _reviewer_of(project, reviewer, judge_id, response_id)
        if verdict == CORRECT:
            _check_all_agree(project, rater, judge_id, response.rubric, response_id)
        project.conn.execute(
            "INSERT INTO judge_reviews (reviewer_id, judge_id, response_id, verdict, "
            "updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET "
            "verdict = excluded.verdict, updated_at = excluded.updated_at",
            (rater, judge_id, response_id, verdict, now_iso()))
    return changes | _reviewed(response_id, response.question_id)


def _check_all_agree(project: Project, reviewer_id: int, judge_id: int, rubric: Rubric,
                     response_id: str) -> None:
    """Refuse the label correct while the reviewer marks a criterion partial or disagree."""
    marked = project.conn.execute(
        "SELECT criterion, agreement FROM judge_review_criteria WHERE reviewer_id = ? AND "
        "judge_id = ? AND response_id = ? AND agreement != ?",
        (reviewer_id, judge_id, response_id, FULL)).fetchall()
    if marked:
        order = {key: index for index, key in enumerate(rubric.keys)}
        marked.sort(key=lambda row: order.get(row[0], len(order)))
        raise ScoreError("verdict", f"A verdict of {CORRECT} needs every criterion to agree "
                         "fully; " + ", ".join(f"{criterion} is marked {agreement_text(level)}"
                                                 for criterion, level in marked))


def _reviewed(response_id: str, question_id: str) -> Changes:
    return Changes.of(RecordKind.REVIEWS, responses=[response_id], questions=[question_id])


def _reviewer_of(project: Project, reviewer: str, judge_id: int,
                 response_id: str) -> tuple[int, Changes]:
    """The reviewer's rater id, once the judge is known to have a verdict on the response."""
    if not project.conn.execute(
            "SELECT 1 FROM assessments a JOIN raters j ON j.id = a.rater_id WHERE "
            f"a.rater_id = ? AND a.response_id = ? AND NOT {is_person('j')}",
            (judge_id, response_id)).fetchone():
        raise ProjectError(f"judge {judge_id} gave no verdict on {response_id!r} to review")
    return ensure_rater(project, reviewer, HUMAN)
