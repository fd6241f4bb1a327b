"""Exporting a project's content in the exchange formats (the inverse of the importer).

Export then import into an empty project reproduces the same content, including the fields a
format does not name (kept in ``extra`` and written back at the top level of each record).
Images are written beside the records, in an ``images`` folder, each file named by its hash;
the records list them by those relative paths, so importing the export finds them again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from physgrade.formats import FILE_KINDS, STEP_FIELDS, write_records
from physgrade.images import write_back
from physgrade.project import Project
from physgrade.raters import HUMAN, LLM
from physgrade.rubric import COARSE, RUBRICS
from physgrade.tasks import Task


def export_kind(project: Project, kind: str, path: str | Path, task: Task | None = None) -> int:
    """Write every record of ``kind`` to ``path`` (JSON Lines, or CSV for ``.csv``)."""
    if kind not in FILE_KINDS:
        raise ValueError(f"unknown kind {kind!r}; use one of {', '.join(FILE_KINDS)}")
    has_images = project.conn.execute("SELECT 1 FROM image_links LIMIT 1").fetchone()
    folder = Path(path).parent if has_images else None  # no look-up per record without images
    return write_records(_RECORDS[kind](project, folder), path, kind, task)


def _with_extra(record: dict[str, Any], extra: str | None) -> dict[str, Any]:
    if extra:
        record.update({k: v for k, v in json.loads(extra).items() if k not in record})
    return record


def _with_images(project: Project, record: dict[str, Any], field: str, owner_kind: str,
                 owner_id: str, folder: Path | None) -> None:
    """Write the owner's images into ``folder`` and list them in ``field`` (if it has any)."""
    if folder is None:
        return
    paths = write_back(project.conn, owner_kind, owner_id, folder)
    if paths:
        record[field] = paths


def _questions(project: Project, folder: Path | None) -> Iterator[dict[str, Any]]:
    for row in project.db.query(
            "SELECT id, kind, topic, question, options, answer, answer_type, unit, "
            "reference_solution, bloom_cognitive, bloom_knowledge, variant_of, region, "
            "variant_group, extra "
            "FROM questions ORDER BY id"):
        extra = row.pop("extra")
        row["options"] = json.loads(row["options"]) if row["options"] else None
        _with_images(project, row, "images", "question", row["id"], folder)
        _with_images(project, row, "reference_images", "reference", row["id"], folder)
        yield _with_extra(row, extra)


def _responses(project: Project, folder: Path | None) -> Iterator[dict[str, Any]]:
    for row in project.db.query("SELECT id, question_id, model, response, extra FROM responses "
                                "ORDER BY id"):
        extra = row.pop("extra")
        _with_images(project, row, "images", "response", row["id"], folder)
        yield _with_extra(row, extra)


def _scores_by_assessment(project: Project, rater_kind: str) -> Iterator[tuple[dict, list]]:
    """Each assessment of raters of one kind, with its score rows in rubric order."""
    assessments = project.db.query(
        "SELECT a.rater_id, a.response_id, a.rubric, a.comment, a.assessed_at, a.extra, "
        "r.name, r.prompt_version, r.run FROM assessments a JOIN raters r ON r.id = a.rater_id "
        "WHERE r.kind = ? AND a.status = 'ok' ORDER BY a.response_id, r.name, r.prompt_version, "
        "r.run, a.rubric", [rater_kind])
    for assessment in assessments:
        order = RUBRICS[assessment["rubric"]].keys
        scores = project.conn.execute(
            "SELECT criterion, value, note FROM scores WHERE rater_id = ? AND response_id = ? "
            "AND rubric = ?", (assessment["rater_id"], assessment["response_id"],
                               assessment["rubric"])).fetchall()
        scores.sort(key=lambda s: order.index(s[0]))
        if scores:
            yield assessment, scores


def _score_fields(assessment: dict, scores: list) -> dict[str, Any]:
    if assessment["rubric"] == COARSE.key:
        fields: dict[str, Any] = {criterion: value for criterion, value, _ in scores}
        fields["explanation"] = assessment["comment"]
        return fields
    return {"scores": {criterion: value for criterion, value, _ in scores},
            "rationale": {criterion: note for criterion, _, note in scores if note}}


def _step_fields(project: Project, assessment: dict) -> dict[str, Any]:
    """The first wrong step the assessment's rater marked in its response, with the error's
    category (see physgrade.step_marks); nothing where it marked none."""
    row = project.conn.execute(
        "SELECT first_wrong, category, taxonomy FROM step_marks WHERE rater_id = ? AND "
        "response_id = ? AND first_wrong IS NOT NULL",
        (assessment["rater_id"], assessment["response_id"])).fetchone()
    if row is None:
        return {}
    return {name: value for name, value in zip(STEP_FIELDS, row) if value is not None}


def _verdicts(project: Project, folder: Path | None) -> Iterator[dict[str, Any]]:
    for assessment, scores in _scores_by_assessment(project, LLM):
        record = {"response_id": assessment["response_id"], "judge": assessment["name"],
                  "prompt_version": assessment["prompt_version"]}
        if assessment["run"]:  # a further run of the judge (see physgrade.raters.rater_label)
            record["run"] = assessment["run"]
        record.update(_score_fields(assessment, scores))
        record.update(_step_fields(project, assessment))
        yield _with_extra(record, assessment["extra"])


def _grades(project: Project, folder: Path | None) -> Iterator[dict[str, Any]]:
    for assessment, scores in _scores_by_assessment(project, HUMAN):
        record = {"response_id": assessment["response_id"], "grader": assessment["name"]}
        record.update(_score_fields(assessment, scores))
        if assessment["rubric"] != COARSE.key:
            record["notes"] = assessment["comment"]
        record["graded_at"] = assessment["assessed_at"]
        record.update(_step_fields(project, assessment))
        yield _with_extra(record, assessment["extra"])


def _judge_reviews(project: Project, folder: Path | None) -> Iterator[dict[str, Any]]:
    reviews = project.db.query(
        "SELECT v.reviewer_id, v.judge_id, v.response_id, v.verdict, v.extra, "
        "rv.name AS reviewer, j.name AS judge, j.prompt_version FROM judge_reviews v "
        "JOIN raters rv ON rv.id = v.reviewer_id JOIN raters j ON j.id = v.judge_id "
        "ORDER BY v.response_id, j.name, rv.name")
    for review in reviews:
        criteria = dict(project.conn.execute(
            "SELECT criterion, agreement FROM judge_review_criteria WHERE reviewer_id = ? AND "
            "judge_id = ? AND response_id = ?",
            (review["reviewer_id"], review["judge_id"], review["response_id"])).fetchall())
        record = {"response_id": review["response_id"], "judge": review["judge"],
                  "prompt_version": review["prompt_version"], "reviewer": review["reviewer"],
                  "criteria": criteria, "verdict": review["verdict"]}
        yield _with_extra(record, review["extra"])


def _bloom(project: Project, folder: Path | None) -> Iterator[dict[str, Any]]:
    for row in project.db.query(
            "SELECT b.question_id, r.name AS annotator, r.kind, b.cognitive, b.knowledge, b.extra "
            "FROM bloom_labels b JOIN raters r ON r.id = b.annotator_id "
            "ORDER BY b.question_id, r.name"):
        record = {"question_id": row["question_id"], "annotator": row["annotator"],
                  "annotator_kind": HUMAN if row["kind"] == HUMAN else "model",
                  "cognitive": row["cognitive"], "knowledge": row["knowledge"]}
        yield _with_extra(record, row["extra"])


_RECORDS = {"questions": _questions, "responses": _responses, "verdicts": _verdicts,
            "grades": _grades, "judge_reviews": _judge_reviews, "bloom": _bloom}
