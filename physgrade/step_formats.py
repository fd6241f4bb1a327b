"""Process-supervision files in and out of step marks: ProcessBench, PRM800K and TRL stepwise.

Each format says, per solution, which steps are right (docs/formats.md gives the fields and
their sources). physgrade reads such a file as one rater's marks of responses the project
holds: every record names its response and lists that response's steps (as physgrade.steps
numbers them), so a label can only land on the step it was given for. A record whose steps are
not the response's, in number or in text (compared with each run of white space made one
space), is refused with its file, line and field, and the whole file with it: nothing changes.
Export writes a rater's marks in the same shapes, and importing the export gives back what the
format holds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, TextIO

from physgrade import formats, step_marks
from physgrade.files import write_whole
from physgrade.formats import STEP_FORMATS, FormatError, ImportErrors, Record
from physgrade.importer import MAX_ERRORS
from physgrade.project import Project, ProjectError
from physgrade.raters import HUMAN, ensure_rater, rater_label
from physgrade.step_marks import NO_ERROR, RATINGS, write_mark
from physgrade.steps import ResponseStep, steps_of
from physgrade.tasks import Task

#: The process-supervision formats, by the name the command line takes.
#: PRM800K's ``finish_reason`` values physgrade reads and writes: the labeller reached a right
#: final step, or stopped at the first wrong one.
SOLUTION, FOUND_ERROR = "solution", "found_error"
_PROGRESS_EVERY = 500  # records between progress reports
_QUOTED = 60  # characters of a step quoted in a refusal


@dataclass(frozen=True, slots=True)
class Labels:
    """What one record says of a response's steps, in the terms of physgrade.step_marks: the
    first wrong step (0: none is; None: not said) and ratings -1/0/+1 by step number."""

    response_id: str
    first_wrong: int | None
    ratings: dict[int, int]
    stamp: str | None = None  # when the labels were given, where the format says

    @property
    def silent(self) -> bool:
        """No step is labelled (a PRM800K labeller who gave up): nothing to store."""
        return self.first_wrong is None and not self.ratings


@dataclass(frozen=True, slots=True)
class StepImport:
    """What an import of a process-supervision file did."""

    file_name: str
    format: str
    rater: str
    records: int
    added: int
    unchanged: int
    silent: int = 0  # records that label no step (a PRM800K labeller who gave up)

    def summary(self) -> str:
        silent = f", {self.silent} labelling no step" if self.silent else ""
        return (f"{self.file_name}: {self.records} {self.format} records, {self.added} marks "
                f"added for {self.rater}, {self.unchanged} already present{silent}")


#: The steps of a response named in a record's field, or a located refusal.
StepsOf = Callable[[Record, str, str], tuple[ResponseStep, ...]]


# -- reading one record ----------------------------------------------------------------------


def _kind(value: object) -> str:
    return "nothing" if value is None else type(value).__name__


def _list(record: Record, path: str, value: object) -> list[Any]:
    if not isinstance(value, list):
        raise record.error(path, f"expected a list, found {_kind(value)}")
    return value


def _texts(record: Record, path: str, value: object) -> list[tuple[str, str]]:
    """A list of step texts, each with its field path."""
    found = []
    for i, text in enumerate(_list(record, path, value)):
        if not isinstance(text, str):
            raise record.error(f"{path}[{i}]", f"expected the step's text, found {_kind(text)}")
        found.append((f"{path}[{i}]", text))
    return found


def _same(a: str, b: str) -> bool:
    return a.split() == b.split()


def _quoted(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= _QUOTED else flat[:_QUOTED - 1] + "…")


def _match(record: Record, texts: list[tuple[str, str]], steps: tuple[ResponseStep, ...],
           whole: bool, response_id: str, count_field: str) -> None:
    """Refuse ``texts`` unless they are the response's steps (``whole``) or its first ones."""
    if len(texts) > len(steps) or whole and len(texts) != len(steps):
        raise record.error(count_field, f"gives {len(texts)} steps; response {response_id} has "
                                        f"{len(steps)} (physgrade's steps: the template's "
                                        "numbered steps, else the paragraphs)")
    for (path, text), step in zip(texts, steps):
        if not _same(text, step.text):
            raise record.error(path, f"is not step {step.number} of response {response_id} "
                                     f"({step.label}, {_quoted(step.text)}): found "
                                     f"{_quoted(text)}")


def _processbench(record: Record, steps_of_: StepsOf) -> Labels:
    """ProcessBench: ``id``, ``steps`` (every step of the solution) and ``label``, the 0-based
    index of the first wrong step, -1 when every step is right."""
    response_id = formats.id_field(record, "id")
    texts = _texts(record, "steps", record.data.get("steps"))
    label = record.data.get("label")
    if type(label) is not int:
        raise record.error("label", f"expected a whole number (the index of the first wrong "
                                    f"step, -1 for none), found {_kind(label)} {label!r}")
    if not -1 <= label < len(texts):
        raise record.error("label", f"{label} is neither -1 nor the index of one of the "
                                    f"record's {len(texts)} steps")
    _match(record, texts, steps_of_(record, "id", response_id), True, response_id, "steps")
    return Labels(response_id, label + 1, {})


def _prm800k(record: Record, steps_of_: StepsOf) -> Labels:
    """PRM800K: ``label.steps``, the steps labelled so far, each with candidate
    ``completions`` rated -1/0/+1 (or null). A step's rating is that of the candidate whose text
    is the response's step; the other candidates are steps the response does not have. Where
    ``question.pre_generated_steps`` is given, it must be every step of the response."""
    response_id = formats.id_field(record, "response_id")
    label = record.data.get("label")
    if not isinstance(label, dict):
        raise record.error("label", f"expected an object with 'steps', found {_kind(label)}")
    labelled = _list(record, "label.steps", label.get("steps"))
    finish = label.get("finish_reason")
    if finish is not None and not isinstance(finish, str):
        raise record.error("label.finish_reason", f"expected text, found {_kind(finish)}")
    steps = steps_of_(record, "response_id", response_id)
    question = record.data.get("question")
    given = question.get("pre_generated_steps") if isinstance(question, dict) else None
    if given is not None:
        path = "question.pre_generated_steps"
        _match(record, _texts(record, path, given), steps, True, response_id, path)
    if len(labelled) > len(steps):
        raise record.error("label.steps", f"labels {len(labelled)} steps; response "
                                          f"{response_id} has {len(steps)}")
    ratings: dict[int, int] = {}
    for i, (entry, step) in enumerate(zip(labelled, steps)):
        where = f"label.steps[{i}].completions"
        if isinstance(entry, dict) and entry.get("completions") is None:
            break  # PRM800K has such a step at times: the labelling ends there, as TRL reads it
        completions = _list(record, where, entry.get("completions")
                            if isinstance(entry, dict) else None)
        own: list[int | None] = []  # the rating of the response's own step, once found
        for j, completion in enumerate(completions):
            if not isinstance(completion, dict):
                raise record.error(f"{where}[{j}]", f"expected an object, found "
                                                    f"{_kind(completion)}")
            rating = completion.get("rating")
            if rating is not None and (type(rating) is not int or rating not in RATINGS):
                raise record.error(f"{where}[{j}].rating",
                                   f"expected -1, 0, 1 or null, found {rating!r}")
            text = completion.get("text")
            if not isinstance(text, str):
                raise record.error(f"{where}[{j}].text", f"expected the step's text, found "
                                                         f"{_kind(text)}")
            if not own and _same(text, step.text):
                own.append(rating)
        if not own:
            raise record.error(where, f"no completion is step {step.number} of response "
                                      f"{response_id} ({step.label}, {_quoted(step.text)})")
        if own[0] is not None:
            ratings[step.number] = own[0]
    wrong = [number for number, rating in sorted(ratings.items()) if rating == -1]
    first_wrong = wrong[0] if wrong else NO_ERROR if finish == SOLUTION else None
    return Labels(response_id, first_wrong, ratings, formats.timestamp_field(record, "timestamp"))


def _trl(record: Record, steps_of_: StepsOf) -> Labels:
    """TRL stepwise supervision: ``completions`` (the solution's first steps, or all of them)
    and ``labels``, one boolean per completion: is the step right."""
    response_id = formats.id_field(record, "response_id")
    texts = _texts(record, "completions", record.data.get("completions"))
    labels = _list(record, "labels", record.data.get("labels"))
    if len(labels) != len(texts):
        raise record.error("labels", f"{len(labels)} labels for {len(texts)} completions; "
                                     "give one label per completion")
    for i, value in enumerate(labels):
        if not isinstance(value, bool):
            raise record.error(f"labels[{i}]", f"expected true or false, found {value!r}")
    steps = steps_of_(record, "response_id", response_id)
    _match(record, texts, steps, False, response_id, "completions")
    wrong = [i for i, value in enumerate(labels, 1) if not value]
    first_wrong = wrong[0] if wrong else NO_ERROR if len(labels) == len(steps) else None
    return Labels(response_id, first_wrong, {i: 1 if v else -1 for i, v in enumerate(labels, 1)})


_READERS: dict[str, Callable[[Record, StepsOf], Labels]] = {
    "processbench": _processbench, "prm800k": _prm800k, "trl": _trl}
#: The field of each format that holds the labels (named when a label contradicts a mark).
_LABEL_FIELD = {"processbench": "label", "prm800k": "label.steps", "trl": "labels"}


# -- importing --------------------------------------------------------------------------------


def _stored(project: Project, rater: int) -> dict[str, Labels]:
    """The rater's marks as what a record can say of them, by response."""
    return {rid: Labels(rid, mark.first_wrong, mark.ratings, mark.updated_at)
            for rid, mark in step_marks.marks_by_rater(project, rater).items()}


def _held(labels: Labels, stored: Labels, fmt: str) -> bool:
    """Whether a stored mark says what the record says, as far as the format can say it."""
    same_first = labels.first_wrong == stored.first_wrong
    return same_first if fmt == "processbench" else same_first and \
        labels.ratings == stored.ratings


def import_steps(project: Project, path: str | Path, fmt: str, rater: str, kind: str = HUMAN,
                 mapping: Mapping[str, str] | None = None,
                 task: Task | None = None) -> StepImport:
    """Import a process-supervision file of format ``fmt`` (:data:`STEP_FORMATS`) as the marks
    of ``rater`` (of ``kind``, a person by default), all or nothing.

    A record the rater's mark already says (as far as the format can say it) is counted as
    present; one that contradicts the rater's mark is refused rather than written over it.
    Raises FormatError or ImportErrors, with nothing changed, for any bad record.
    """
    if fmt not in STEP_FORMATS:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(STEP_FORMATS)}")
    if Path(path).suffix.lower() in {".csv", ".tsv"}:
        raise ValueError(f"{Path(path).name}: a {fmt} file is JSON Lines or a JSON array; its "
                         "steps are lists, which CSV does not hold")
    task = task or Task()
    task.report(0, None, "reading")
    source = formats.read_file(path, mapping)
    errors: list[FormatError] = []
    found: list[Labels] = []
    lines: dict[str, int] = {}

    def steps(record: Record, field: str, response_id: str) -> tuple[ResponseStep, ...]:
        if response_id in lines:
            raise record.error(field, f"response {response_id} is given twice (first on "
                                      f"{record.unit} {lines[response_id]})")
        lines[response_id] = record.line
        try:
            return steps_of(project, response_id)
        except ProjectError:
            raise record.error(field, f"no response {response_id!r} in this project") from None

    with project.transaction():
        rater_id, _ = ensure_rater(project, rater, kind)
        stored = _stored(project, rater_id)
        for record in source.records:
            if len(found) % _PROGRESS_EVERY == 0:
                task.report(len(found), source.size_hint, "checking")
            try:
                labels = _READERS[fmt](record, steps)
                held = stored.get(labels.response_id)
                if held is not None and not labels.silent and not _held(labels, held, fmt):
                    raise record.error(_LABEL_FIELD[fmt], f"{rater} marked response "
                                       f"{labels.response_id} otherwise already; clear that "
                                       "mark, or import under another rater")
                found.append(labels)
            except FormatError as error:
                errors.append(error)
                if len(errors) >= MAX_ERRORS:
                    break
        if errors:
            raise ImportErrors(errors)
        if not found:
            raise FormatError(source.name, None, None, "holds no records; nothing to import")
        added = silent = 0
        for labels in found:
            if labels.silent:
                silent += 1
            elif labels.response_id not in stored:
                write_mark(project, rater_id, labels.response_id, labels.first_wrong, None,
                           None, labels.ratings, stamp=labels.stamp)
                added += 1
    return StepImport(source.name, fmt, rater, len(found), added, len(found) - added - silent,
                      silent)


# -- exporting --------------------------------------------------------------------------------


def _rater(project: Project, given: str) -> int:
    """The rater named ``given`` (by name, or by its label as reports give it) among those with
    step marks; refused with their names otherwise."""
    raters = [(rater_label(name, version, run), rid, name) for rid, name, version, run in
              project.conn.execute("SELECT DISTINCT r.id, r.name, r.prompt_version, r.run "
                                   "FROM raters r JOIN step_marks m ON m.rater_id = r.id "
                                   "ORDER BY r.name, r.prompt_version, r.run")]
    found = [(label, rid) for label, rid, _ in raters if label == given] or \
        [(label, rid) for label, rid, name in raters if name == given]
    if len(found) == 1:
        return found[0][1]
    if found:
        raise ValueError(f"{given!r} marked steps under several prompt versions "
                         f"({', '.join(label for label, _ in found)}); name one of them")
    raise ValueError(f"{given!r} has marked no steps in this project (raters with step marks: "
                     f"{', '.join(label for label, _, _ in raters) or 'none'})")


def _processbench_record(rid: str, labels: Labels, steps: tuple[ResponseStep, ...],
                         about: dict[str, Any]) -> dict[str, Any] | None:
    if labels.first_wrong is None:
        return None
    return {"id": rid, "generator": about["model"], "problem": about["question"],
            "steps": [step.text for step in steps], "final_answer_correct": None,
            "label": labels.first_wrong - 1 if labels.first_wrong else -1}


def _prm800k_record(rid: str, labels: Labels, steps: tuple[ResponseStep, ...],
                    about: dict[str, Any]) -> dict[str, Any] | None:
    ratings = dict(labels.ratings)
    if labels.first_wrong:  # the first wrong step is wrong by definition
        ratings.setdefault(labels.first_wrong, -1)
    if not ratings and labels.first_wrong is None:
        return None
    last = max(ratings, default=0)
    finish = None if labels.first_wrong is None else \
        FOUND_ERROR if labels.first_wrong else SOLUTION
    return {"response_id": rid, "labeler": about["rater"], "timestamp": labels.stamp,
            "generation": None, "is_quality_control_question": False,
            "is_initial_screening_question": False,
            "question": {"problem": about["question"], "ground_truth_answer": about["answer"],
                         "pre_generated_steps": [step.text for step in steps]},
            "label": {"steps": [{"completions": [{"text": step.text,
                                                  "rating": ratings.get(step.number),
                                                  "flagged": None}],
                                 "human_completion": None, "chosen_completion": 0}
                                for step in steps[:last]],
                      "total_time": None, "finish_reason": finish}}


def _trl_record(rid: str, labels: Labels, steps: tuple[ResponseStep, ...],
                about: dict[str, Any]) -> dict[str, Any] | None:
    said = []
    for step in steps:  # TRL, like its PRM800K conversion, counts only a +1 step right
        if step.number in labels.ratings:
            said.append(labels.ratings[step.number] == 1)
        elif labels.first_wrong == NO_ERROR or (labels.first_wrong or 0) > step.number:
            said.append(True)
        elif labels.first_wrong == step.number:
            said.append(False)
        else:
            break  # labels run from the first step on, without gaps
    if not said:
        return None
    return {"response_id": rid, "prompt": about["question"],
            "completions": [step.text for step in steps[:len(said)]], "labels": said}


_WRITERS: dict[str, Callable[[str, Labels, tuple[ResponseStep, ...], dict[str, Any]],
                             dict[str, Any] | None]] = {
    "processbench": _processbench_record, "prm800k": _prm800k_record, "trl": _trl_record}


def export_steps(project: Project, path: str | Path, fmt: str, rater: str,
                 task: Task | None = None) -> int:
    """Write ``rater``'s marks in format ``fmt`` as JSON Lines to ``path``; returns the number
    of records. A mark the format cannot say (a PRM800K or ProcessBench record without a first
    wrong step or ratings to give) is left out."""
    if fmt not in STEP_FORMATS:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(STEP_FORMATS)}")
    task = task or Task()
    rater_id = _rater(project, rater)
    name = project.conn.execute("SELECT name FROM raters WHERE id = ?", (rater_id,)).fetchone()[0]
    marks = _stored(project, rater_id)

    def records() -> Iterator[dict[str, Any]]:
        for done, (rid, labels) in enumerate(marks.items()):
            if done % _PROGRESS_EVERY == 0:
                task.report(done, len(marks), "exporting")
            model, question, answer = project.conn.execute(
                "SELECT r.model, q.question, q.answer FROM responses r JOIN questions q "
                "ON q.id = r.question_id WHERE r.id = ?", (rid,)).fetchone()
            about = {"model": model, "question": question, "answer": answer, "rater": name}
            record = _WRITERS[fmt](rid, labels, steps_of(project, rid), about)
            if record is not None:
                yield record

    count = 0

    def write(out: TextIO) -> None:
        nonlocal count
        for record in records():
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1

    write_whole(Path(path), write)
    return count
