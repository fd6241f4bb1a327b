"""Importing exchange files into a project: all or nothing, idempotent, with located errors.

An import reads and checks the whole file first (every problem is reported with its file, line
and field), then writes everything in one transaction. The check runs inside that transaction
too, so an image is stored as soon as it passes its checks (a refused import rolls it back with
the rest): an import holds the hashes of its images, never all their bytes at once. A record
identical to what the project holds is counted as unchanged; a record that contradicts it is an
error, never a silent overwrite of expert work. The same file imported twice adds nothing.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import sqlite3
import sys
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from physgrade import facets, formats, question_fields, taxonomies, taxonomy
from physgrade.changes import NOTHING, Changes, RecordKind
from physgrade.formats import FormatError, ImportErrors, Record
from physgrade.images import ImageError, read_image, store_image
from physgrade.orphans import die_with, starting_workers
from physgrade.project import Project, ProjectError, now_iso
from physgrade.raters import HUMAN, LLM, is_kind, rater_id
from physgrade.rubric import RUBRICS, rubric_for_kind
from physgrade.score_history import attributed, imported_from
from physgrade.steps import steps_of
from physgrade.tasks import Task
from physgrade.template import scan
from physgrade.validation import reviews, sampling

MAX_ERRORS = 20
#: Template parsing is spread over worker processes only where forking is reliable.
CAN_FORK = sys.platform == "linux"
_PROGRESS_EVERY = 2000  # records between progress reports
#: What importing each kind of file changes, when it adds anything.
_CHANGES = {"questions": Changes.of(RecordKind.QUESTIONS, RecordKind.BLOOM),
            "responses": Changes.of(RecordKind.RESPONSES),
            "verdicts": Changes.of(RecordKind.SCORES, RecordKind.RATERS),
            "grades": Changes.of(RecordKind.SCORES, RecordKind.RATERS),
            "judge_reviews": Changes.of(RecordKind.REVIEWS, RecordKind.RATERS, RecordKind.SAMPLES),
            "bloom": Changes.of(RecordKind.BLOOM, RecordKind.RATERS)}


@dataclass(frozen=True, slots=True)
class ImportResult:
    kind: str
    file_name: str
    records: int
    added: int
    unchanged: int
    already_imported: bool = False
    declared: tuple[str, ...] = ()  # the facets the import declared (see physgrade.facets)

    def summary(self) -> str:
        if self.already_imported:
            return (f"{self.file_name}: this exact file was imported before as {self.kind}; "
                    "nothing to add")
        facets_declared = f"; facets declared: {', '.join(self.declared)}" if self.declared else ""
        return (f"{self.file_name}: {self.records} {self.kind} records, {self.added} added, "
                f"{self.unchanged} already present{facets_declared}")

    @property
    def changes(self) -> Changes:
        """The kinds of records the import added to (NOTHING when it added none)."""
        added = _CHANGES[self.kind] if self.added else NOTHING
        return added | (Changes.of(RecordKind.SETTINGS) if self.declared else NOTHING)


@dataclass(slots=True)
class Row:
    """A row to insert, identified by ``key`` (primary-key columns) within ``table``."""

    table: str
    key: dict[str, Any]
    values: dict[str, Any]
    stamps: dict[str, Any] = field(default_factory=dict)  # written but never compared
    parse_ticket: int | None = None  # stamps still to come from the template parser


@dataclass(slots=True)
class Entry:
    """What one record becomes: the rows it writes (compared and written as a group)."""

    record: Record
    identity: tuple
    rows: list[Row]
    raters: list[tuple[str, str, str]] = field(default_factory=list)  # (name, kind, version)
    run: str = ""  # the run label of its language-model rater (a verdict's ``run``)


def import_file(project: Project, path: str | Path, kind: str,
                mapping: Mapping[str, str] | None = None, task: Task | None = None,
                facet_names: Sequence[str] = ()) -> ImportResult:
    """Import one file of ``kind`` (see :data:`physgrade.formats.FILE_KINDS`) into ``project``.

    A questions file declares the facets (:mod:`physgrade.facets`) named in ``facet_names``,
    each a field some record of it carries, and the built-in ones its records carry.

    Raises :class:`~physgrade.formats.FormatError` or :class:`~physgrade.formats.ImportErrors`
    for bad input and :class:`~physgrade.tasks.Cancelled` if cancelled; in every such case the
    project is exactly as before.
    """
    if kind not in formats.FILE_KINDS:
        raise ValueError(f"unknown kind {kind!r}; use one of {', '.join(formats.FILE_KINDS)}")
    if facet_names and kind != "questions":
        raise ValueError(f"facets are fields of questions; a {kind} file declares none")
    requested = facets.checked(facet_names)
    task = task or Task()
    with _paused_garbage_collection():
        task.report(0, None, "reading")
        source = formats.read_file(path, mapping)
        if project.conn.execute("SELECT 1 FROM imports WHERE sha256 = ? AND kind = ?",
                                (source.sha256, kind)).fetchone():
            return ImportResult(kind, source.name, 0, 0, 0, already_imported=True)
        topic_from = [name for name, target in (mapping or {}).items() if target == "topic"]
        with _Context(project, source.size_hint, Path(path).parent) as context, \
                project.transaction():
            # The import's row first (its counts last): the history of the grades it brings
            # names it.
            import_id = project.conn.execute(
                "INSERT INTO imports (file_name, sha256, kind, mapping, imported_at, added, "
                "unchanged) VALUES (?, ?, ?, ?, ?, 0, 0)",
                (source.name, source.sha256, kind, json.dumps(dict(mapping or {})),
                 now_iso())).lastrowid
            assert import_id is not None  # an INSERT sets it
            writer = _Writer(project, context.sections, source.name)
            records = _check(source, kind, context, task, writer)
            if not records:  # an empty file, or a header alone: a failed export, a wrong file
                raise FormatError(source.name, None, None, "holds no records (the file is "
                                  "empty, or has only a header); nothing to import")
            missing = [name for name in requested if name not in context.carried]
            if missing:
                raise FormatError(source.name, None, None, f"--facet {', '.join(missing)}: no "
                                  f"record has a field {', '.join(map(repr, missing))}")
            with attributed(project, imported_from(source.name, import_id)):
                writer.finish(task, records)
            if writer.errors:
                raise ImportErrors(writer.errors)
            if kind == "judge_reviews" and writer.added:  # audited in the "imported" sample
                sampling.gather_imported(project.conn)
            _record_judge_runs(project, context)
            project.conn.execute("UPDATE imports SET added = ?, unchanged = ? WHERE id = ?",
                                 (writer.added, writer.unchanged, import_id))
            declared = _declare(project, context, requested, topic_from) if kind == "questions" \
                else ()
        return ImportResult(kind, source.name, records, writer.added, writer.unchanged,
                            declared=declared)


def _declare(project: Project, context: _Context, requested: list[str],
             topic_from: list[str]) -> tuple[str, ...]:
    """Declare the facets an import of questions brings: those asked for, the built-in ones its
    records carry, and the benchmark's own topic (a field mapped onto the study's topics)."""
    carried = [name for name in facets.BUILT_IN if name in context.carried]
    kept = [name for name in topic_from if name not in formats.FIELDS["questions"]]
    names = facets.checked([*requested, *carried, *kept])
    if not names:
        return ()
    before = facets.declared(project)
    facets.add_declared(project, names)
    return tuple(name for name in facets.declared(project) if name not in before)


def _record_judge_runs(project: Project, context: _Context) -> None:
    """Record, as runs of source import, the verdicts that stated their run or decoding."""
    from physgrade.judge import runs
    from physgrade.judge.client import Decoding

    for (judge, version, run, temperature, top_p), count in context.judge_runs.items():
        runs.insert(project.conn, "verdicts", judge, version, run, Decoding(temperature, top_p),
                    None, runs.IMPORT, count)


@contextmanager
def _paused_garbage_collection() -> Iterator[None]:
    """Pause the cycle collector while an import builds its many small objects.

    They hold no reference cycles, but every few thousand allocations the collector would walk
    all of them again: on a large file that more than doubles the time spent reading.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _check(source: formats.SourceFile, kind: str, context: _Context, task: Task,
           writer: _Writer) -> int:
    """Check every record and hand the good ones to ``writer`` in batches.

    Returns the number of records; raises every problem found (up to MAX_ERRORS) at the end.
    """
    builder = _BUILDERS[kind]
    batch: list[Entry] = []
    errors: list[FormatError] = []
    seen: dict[tuple, int] = {}
    records = source.records
    number = 0
    while True:
        if number % _PROGRESS_EVERY == 0:
            task.report(number, source.size_hint, "checking")
        try:
            record = next(records, None)
            if record is None:
                break
            number += 1
            entry = builder(record, context)
            # Its rows hold what is kept of it: the fields themselves (a data: URI's image
            # included) need not stay in memory until the writing.
            record.data = {}
            first = seen.setdefault(entry.identity, record.line)
            if first != record.line:
                raise record.error(None, f"duplicate of {record.unit} {first} "
                                         f"({', '.join(map(str, entry.identity))})")
            if not errors:
                batch.append(entry)
        except FormatError as exc:
            errors.append(exc)
            if len(errors) >= MAX_ERRORS:
                break
        if len(batch) >= _SectionParser.CHUNK:
            context.sections.flush()
            writer.put(batch)
            batch = []
    if not errors and kind == "questions":
        errors = _check_variants(context)
    if errors:
        raise ImportErrors(errors)
    context.sections.flush()
    writer.put(batch)
    return number


class _Writer:
    """Writes checked entries into the project, batch by batch, once the whole file is checked.

    Writing waits until every record has been checked (a bad record must stop the import before
    anything is written), but each batch only waits for its own texts to be parsed, so rows go
    in while the parser's workers are still busy with later ones. The writer also compares each
    entry with what the project holds: identical ones are counted as unchanged, contradicting
    ones collected as errors.
    """

    def __init__(self, project: Project, sections: _SectionParser, source: str) -> None:
        self._project = project
        self._source = source
        self._conn = project.conn
        self._sections = sections
        self._batches: list[list[Entry]] = []
        self._rater_ids: dict[tuple[str, str, str], int] = {}
        self._populated: dict[str, bool] = {}
        self.added = self.unchanged = 0
        self.errors: list[FormatError] = []

    def put(self, batch: list[Entry]) -> None:
        if batch:
            self._batches.append(batch)

    def finish(self, task: Task, records: int) -> None:
        """Write every batch (inside the caller's transaction), reporting progress."""
        for batch in self._batches:
            task.report(self.added + self.unchanged, records, "writing")
            self._write(batch)
        task.report(records, records, "writing")

    def _write(self, batch: list[Entry]) -> None:
        fresh = [entry for entry in batch if self._is_new(entry)]
        if self.errors:
            return
        by_table: dict[str, list[Row]] = {}
        for entry in fresh:
            for row in entry.rows:
                by_table.setdefault(row.table, []).append(row)
        tickets = [r.parse_ticket for rows in by_table.values() for r in rows
                   if r.parse_ticket is not None]
        if tickets:
            self._sections.wait(max(tickets))
        for table, rows in by_table.items():
            columns = [*rows[0].key, *rows[0].values, *rows[0].stamps]
            cells = [[*r.key.values(), *r.values.values(), *r.stamps.values()] for r in rows]
            try:
                self._conn.executemany(
                    f"INSERT INTO {table} ({', '.join(columns)}) "
                    f"VALUES ({', '.join('?' * len(columns))})", cells)
            except sqlite3.IntegrityError as exc:
                raise FormatError(self._source, None, None,
                                  f"rejected by the project: {exc}") from None
        self.added += len(fresh)

    def _is_new(self, entry: Entry) -> bool:
        """Resolve the entry's raters; False if the project holds it already (or it conflicts)."""
        try:
            for name, kind, version in entry.raters:
                run = entry.run if kind == LLM else ""
                if (name, version, run) not in self._rater_ids:
                    self._rater_ids[name, version, run] = rater_id(self._project, name, kind,
                                                                   version, run)
        except ProjectError as exc:
            self._error(entry.record.error(None, str(exc)))
            return False
        for row in entry.rows:
            for column, value in row.key.items():
                if isinstance(value, _RaterRef):
                    row.key[column] = self._rater_ids[value.name, value.version, value.run]
        present, differing = 0, None
        for row in entry.rows:
            if not self._is_populated(row.table):
                continue
            where = " AND ".join(f"{c} = ?" for c in row.key)
            stored = self._conn.execute(f"SELECT {', '.join(row.values)} FROM {row.table} "
                                        f"WHERE {where}", list(row.key.values())).fetchone()
            if stored is None:
                continue
            present += 1
            for column, value in zip(row.values, stored):
                if row.values[column] != value and differing is None:
                    differing = (row, column, value)
        if present == 0:
            return True
        if differing is None and present == len(entry.rows):
            self.unchanged += 1
        else:
            self._error(_conflict(entry, differing))
        return False

    def _is_populated(self, table: str) -> bool:
        """Whether ``table`` held rows before this import (asked before the first write to it)."""
        if table not in self._populated:
            self._populated[table] = self._conn.execute(
                f"SELECT 1 FROM {table} LIMIT 1").fetchone() is not None
        return self._populated[table]

    def _error(self, error: FormatError) -> None:
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(error)


def _conflict(entry: Entry, differing: tuple[Row, str, Any] | None) -> FormatError:
    what = ", ".join(map(str, entry.identity))
    if differing is None:
        return entry.record.error(None, f"{what} is partly in the project already; the record "
                                        "does not match what is stored")
    row, column, stored = differing
    field_name = row.key.get("criterion", column) if row.table in {
        "scores", "judge_review_criteria"} else column
    return entry.record.error(str(field_name), f"{what} is already in the project with "
                                               f"{column} = {_short(stored)}, the file says "
                                               f"{_short(row.values[column])}; nothing was "
                                               "changed")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "...'"


@dataclass(frozen=True, slots=True)
class _RaterRef:
    """A rater named in a record, resolved to an id inside the import transaction."""

    name: str
    version: str
    run: str = ""


def _parse_rows(texts: list[str]) -> list[tuple[bytes, bool]]:
    """The packed labels and compliance of each text; runs in a worker process."""
    return [scan(text) for text in texts]


class _SectionParser:
    """Template parsing of an import's texts, spread over the machine's cores.

    Parsing is the costliest step of a large import, so texts go in chunks to worker processes
    while the file is still being read and checked, and rows are written as their chunk comes
    back. Small imports are parsed in this process: starting workers would cost more.
    """

    CHUNK = 500
    PARALLEL_FROM = 2000

    def __init__(self, expected: int) -> None:
        self._parallel = CAN_FORK and expected >= self.PARALLEL_FROM
        self._pending: list[tuple[str, Row, tuple[str, ...]]] = []
        self._chunks: list[tuple[Future | list[tuple[bytes, bool]], list[Row], tuple[str, ...]]] = []
        self._done = 0  # chunks whose results are in their rows
        self._pool: ProcessPoolExecutor | None = None
        self._count = 0

    def parse(self, text: str, row: Row, *columns: str) -> None:
        """Fill ``columns`` of ``row.stamps`` (stored labels, then compliance) from ``text``."""
        row.parse_ticket = self._count
        self._pending.append((text, row, columns))
        self._count += 1
        if len(self._pending) >= self.CHUNK:
            self.flush()

    def flush(self) -> None:
        """Send the texts collected so far on their way."""
        if not self._pending:
            return
        texts = [text for text, _, _ in self._pending]
        rows = [row for _, row, _ in self._pending]
        columns = self._pending[0][2]
        if self._pool is None and self._parallel:
            # Forked workers start at once and need nothing from __main__ (spawned ones re-import
            # it, which breaks callers without a main file). They only run the pure-Python
            # parser, never Qt or SQLite, so forking from the app's worker thread is safe.
            # They die with this process, even when it is killed (the pool lives in this call).
            self._pool = ProcessPoolExecutor(max(1, os.cpu_count() or 1),
                                             mp_context=get_context("fork"),
                                             initializer=die_with, initargs=(os.getpid(),))
        if self._pool is None:
            work: Future | list[tuple[bytes, bool]] = _parse_rows(texts)
        else:
            with starting_workers():  # the pool forks its workers when first given work
                work = self._pool.submit(_parse_rows, texts)
        self._chunks.append((work, rows, columns))
        self._pending = []

    def wait(self, ticket: int) -> None:
        """Block until the text with this ticket (and every one before it) is parsed."""
        while self._done < len(self._chunks):
            work, rows, columns = self._chunks[self._done]
            first = rows[0].parse_ticket
            assert first is not None  # a row keeps its ticket until its chunk is parsed, below
            if first > ticket:
                break
            results = work.result() if isinstance(work, Future) else work
            for row, result in zip(rows, results):
                row.stamps.update(zip(columns, result))
                row.parse_ticket = None
            self._done += 1

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class _Context:
    """What the checks need to know of the project, loaded lazily and once."""

    def __init__(self, project: Project, expected: int, base: Path) -> None:
        self.project = project
        self.conn = project.conn
        self.base = base  # the folder of the file: image paths are relative to it
        self.carried: set[str] = set()  # the fields some question of the file has
        #: verdicts that state their run or decoding, by (judge, version, run, temperature, top_p)
        self.judge_runs: dict[tuple[str, str, str, float | None, float | None], int] = {}
        #: the hash of each image read, by its path or data: URI (a long one, a data: URI's
        #: base64, by that text's own SHA-256: the import keeps no image's bytes)
        self._images: dict[str | bytes, str] = {}
        self._stored: set[str] = set()  # the images this import has stored, or found stored
        self._questions: dict[str, tuple[str, bool]] | None = None
        self._responses: dict[str, tuple[str, bool]] | None = None
        self.file_question_ids: set[str] = set()
        self.variant_links: list[tuple[Record, str]] = []
        self.sections = _SectionParser(expected)

    def __enter__(self) -> "_Context":
        return self

    def __exit__(self, *exc: object) -> None:
        self.sections.close()

    @property
    def questions(self) -> dict[str, tuple[str, bool]]:
        """question id -> (kind, multiple choice)."""
        if self._questions is None:
            self._questions = {qid: (kind, bool(mc)) for qid, kind, mc in self.conn.execute(
                "SELECT id, kind, options IS NOT NULL FROM questions")}
        return self._questions

    @property
    def responses(self) -> dict[str, tuple[str, bool]]:
        """response id -> (question kind, multiple choice)."""
        if self._responses is None:
            self._responses = {rid: (kind, bool(mc)) for rid, kind, mc in self.conn.execute(
                "SELECT r.id, q.kind, q.options IS NOT NULL FROM responses r "
                "JOIN questions q ON q.id = r.question_id")}
        return self._responses

    def images(self, record: Record, field_name: str, owner_kind: str,
               owner_id: str) -> list[Row]:
        """The rows linking the images of one image field to their owner.

        Each image is read, checked and stored (unless the project holds it already) at once,
        inside the import's transaction: only its hash stays in memory. An image stored for a
        record that is later refused goes with the rollback; one stored for a record that turns
        out to be in the project already was there before (its links name it)."""
        found = []
        for index, reference in enumerate(formats.image_list(record, field_name)):
            key = reference if len(reference) < 1024 else \
                hashlib.sha256(reference.encode()).digest()
            sha256 = self._images.get(key)
            if sha256 is None:
                try:
                    image = read_image(reference, self.base)
                except ImageError as exc:
                    raise record.error(f"{field_name}[{index}]", str(exc)) from None
                if image.sha256 not in self._stored:  # the same image under another name
                    store_image(self.conn, image)
                    self._stored.add(image.sha256)
                sha256 = self._images[key] = image.sha256
            found.append(sha256)
        return [Row("image_links", {"owner_kind": owner_kind, "owner_id": owner_id,
                                    "position": position}, {"sha256": sha256})
                for position, sha256 in enumerate(found)]

    def response(self, record: Record, field_name: str = "response_id") -> tuple[str, str, bool]:
        response_id = formats.id_field(record, field_name)
        if response_id not in self.responses:
            raise record.error(field_name, f"no response {response_id!r} in the project; import "
                                           "the responses first")
        return (response_id, *self.responses[response_id])

    def verdict_version(self, record: Record, judge: str, response_id: str,
                        version: str | None) -> tuple[str, str]:
        """The prompt version and rubric of the judge verdict a review refers to."""
        rows = self.conn.execute(
            "SELECT r.prompt_version, a.rubric FROM assessments a JOIN raters r ON r.id = "
            f"a.rater_id WHERE r.name = ? AND {is_kind(LLM)} AND a.response_id = ?",
            (judge, response_id)).fetchall()
        if version is not None:
            rows = [r for r in rows if r[0] == version]
        if not rows:
            raise record.error("judge", f"the project has no verdict by {judge!r} on "
                                        f"{response_id!r} to review; import the verdicts first")
        if len(rows) > 1:
            raise record.error("prompt_version", f"{judge!r} judged {response_id!r} with several "
                                                 "prompt versions; say which one")
        return rows[0]


def _question(record: Record, context: _Context) -> Entry:
    qid = formats.id_field(record, "id", required=False)
    if qid is None:
        raise record.error("id", "is required; map a field of yours to it with --map FIELD=id, "
                                 "or number the records with --map @line=id")
    if record.data.get("question") is None and "messages" in record.data:
        # A chat-shaped record (Physics-R1): the user's message is the question.
        asked = formats.messages_question(record)
        if asked is None:
            raise record.error("messages", "holds no user message to take as the question")
        record.data["question"] = asked
        if all(isinstance(m, dict) and m.get("role") == "user" and set(m) <= {"role", "content"}
               and isinstance(m.get("content"), str) for m in record.data["messages"]):
            del record.data["messages"]  # nothing in it but the question: not kept twice
    question = formats.text_field(record, "question", required=True)
    kind = formats.vocabulary_field(record, "kind", taxonomy.QUESTION_KINDS) or "problem"
    options = formats.options_field(record)
    answer = formats.text_field(record, "answer")
    if options and answer is not None:
        answer = _option_answer(record, answer, options)
    reference = formats.text_field(record, "reference_solution")
    variant_of = formats.id_field(record, "variant_of", required=False)
    if variant_of == qid:
        raise record.error("variant_of", "a question cannot be a variant of itself")
    values = {
        "kind": kind,
        "topic": _topic(record),
        "question": question,
        "options": json.dumps(options, ensure_ascii=False) if options else None,
        "answer": answer,
        "answer_type": _answer_type(record),
        "unit": formats.text_field(record, "unit"),
        "reference_solution": reference,
        "bloom_cognitive": formats.vocabulary_field(record, "bloom_cognitive",
                                                    taxonomy.BLOOM_COGNITIVE),
        "bloom_knowledge": formats.vocabulary_field(record, "bloom_knowledge",
                                                    taxonomy.BLOOM_KNOWLEDGE),
        "variant_of": variant_of,
        "region": formats.vocabulary_field(record, "region", taxonomy.REGIONS, strict=False),
        "variant_group": formats.id_field(record, "variant_group", required=False),
        "extra": formats.extra_fields(record, "questions", formats.IMAGE_FIELDS["questions"]),
    }
    context.file_question_ids.add(qid)
    context.carried.update(name for name, value in record.data.items() if value is not None)
    if variant_of is not None:
        context.variant_links.append((record, variant_of))
    # Parsed sections are derived data: written, but never compared with what is stored.
    row = Row("questions", {"id": qid}, values, {"reference_sections": None})
    if reference:
        context.sections.parse(reference, row, "reference_sections")
    links = context.images(record, "images", "question", qid)
    reference_links = context.images(record, "reference_images", "reference", qid)
    return Entry(record, (qid,), [row, *links, *reference_links])


def _topic(record: Record) -> str | None:
    """The study's topic for the record's; the benchmark's own, where the topic map made it
    another topic (not just spelled it otherwise), is kept as given as ``source_topic`` (and a
    field mapped onto ``topic`` stays under its own name too: ``--map subject=topic`` keeps
    ``subject``)."""
    topic = formats.vocabulary_field(record, "topic", taxonomy.TOPICS, strict=False)
    given = formats.text_field(record, "topic")
    data = record.data
    if (given is not None and topic is not None and taxonomy.normalize(given, (topic,)) is None
            and question_fields.SOURCE_TOPIC not in data):
        data[question_fields.SOURCE_TOPIC] = given.strip()
    return topic


def _answer_type(record: Record) -> str | None:
    """The answer type; one type per sub-question (a list) makes a compound answer."""
    types = record.data.get("answer_type")
    if isinstance(types, list) and len([t for t in types if t is not None]) > 1:
        return "compound"
    return formats.vocabulary_field(record, "answer_type", taxonomy.ANSWER_TYPES, strict=False)


def _option_answer(record: Record, answer: str, options: dict[str, str]) -> str:
    """The answer of a multiple-choice question as option letters ("B", or "A,C")."""
    letters = [part for part in answer.upper().replace("AND", " ").replace(",", " ").replace(
        "(", " ").replace(")", " ").replace(".", " ").split()]
    if len(letters) == 1 and len(letters[0]) > 1 and all(ch in options for ch in letters[0]):
        letters = list(letters[0])
    if letters and all(letter in options for letter in letters):
        return ",".join(sorted(set(letters)))
    for letter, text in options.items():
        if text.strip() == answer.strip():
            return letter
    raise record.error("answer", f"{answer!r} is not one of the options "
                                 f"{', '.join(options)} (give the letter)")


def _check_variants(context: _Context) -> list[FormatError]:
    """Variants must point at a question of this file or of the project."""
    known = context.file_question_ids | set(context.questions)
    return [record.error("variant_of", f"no question {base!r} in this file or the project")
            for record, base in context.variant_links if base not in known][:MAX_ERRORS]


def _response(record: Record, context: _Context) -> Entry:
    question_id = formats.id_field(record, "question_id")
    if question_id not in context.questions:
        raise record.error("question_id", f"no question {question_id!r} in the project; import "
                                          "the questions first")
    model = formats.id_field(record, "model")
    text = formats.text_field(record, "response", required=False, allow_empty=True)
    if text is None:
        raise record.error("response", "is required but missing")
    # Files without response ids get a stable one, so importing them again adds nothing.
    response_id = formats.id_field(record, "id", required=False) or f"{question_id}@{model}"
    values = {"question_id": question_id, "model": model, "response": text,
              "extra": formats.extra_fields(record, "responses", formats.IMAGE_FIELDS["responses"])}
    row = Row("responses", {"id": response_id}, values, {"sections": None, "compliant": 0})
    context.sections.parse(text, row, "sections", "compliant")
    links = context.images(record, "images", "response", response_id)
    return Entry(record, (response_id,), [row, *links])


def _assessment(record: Record, context: _Context, rater_field: str, rater_kind: str,
                kind: str) -> Entry:
    """A judge verdict or a person's grade: one assessment row plus a row per criterion."""
    response_id, question_kind, multiple_choice = context.response(record)
    rater = formats.id_field(record, rater_field)
    version = "" if kind == "grades" else (formats.id_field(record, "prompt_version",
                                                            required=False) or "")
    scores = formats.score_set(record)
    rubric_key = scores.rubric if scores.rubric == "coarse" else rubric_for_kind(question_kind).key
    checked = formats.check_scores(record, scores, rubric_key, multiple_choice,
                                   complete=kind == "verdicts")
    stamp = (formats.timestamp_field(record, "graded_at") if kind == "grades" else None) \
        or now_iso()
    run = _judge_run(record, context, rater, version) if kind == "verdicts" else ""
    ref = _RaterRef(rater, version, run)
    rows = [Row("assessments", {"rater_id": ref, "response_id": response_id,
                                "rubric": scores.rubric},
                {"comment": scores.comment,
                 "extra": formats.extra_fields(record, kind, formats.COARSE_FIELDS)},
                {"assessed_at": stamp})]
    rows += [Row("scores", {"rater_id": ref, "response_id": response_id, "rubric": scores.rubric,
                            "criterion": criterion},
                 {"value": value, "note": scores.notes.get(criterion)}, {"updated_at": stamp})
             for criterion, value in checked.items()]
    step = _first_wrong(record, context, response_id)
    if step is not None:
        rows.append(Row("step_marks", {"rater_id": ref, "response_id": response_id},
                        dict(zip(("first_wrong", "taxonomy", "category"), step)),
                        {"updated_at": stamp}))
    raters = [(rater, rater_kind, version)]
    return Entry(record, (rater, version, *([run] if run else []), response_id, scores.rubric),
                 rows, raters, run=run)


def _first_wrong(record: Record, context: _Context,
                 response_id: str) -> tuple[int, str | None, str | None] | None:
    """The first wrong step a verdict or grade names (0: none is wrong), with the taxonomy and
    category of its error; None where it names none. A step the response does not have, or a
    category its taxonomy does not have, is refused."""
    value = record.data.get("first_wrong_step")
    category = formats.text_field(record, "error_category")
    if value is None or value == "":
        if category is not None:
            raise record.error("error_category", "a category needs a first_wrong_step")
        return None
    step = value if isinstance(value, int) and not isinstance(value, bool) else \
        int(value) if isinstance(value, str) and value.strip().isdigit() else None
    count = len(steps_of(context.project, response_id))
    if step is None or not 0 <= step <= count:
        raise record.error("first_wrong_step", f"must be 0 (no wrong step) or a step of the "
                                               f"response, which has {count}, not {value!r}")
    if category is None:
        return step, None, None
    if step == 0:
        raise record.error("error_category", "first_wrong_step 0 says no step is wrong, so "
                                             "there is no error to categorise")
    try:
        chosen = taxonomies.taxonomy(context.project, formats.text_field(record, "error_taxonomy"))
    except ProjectError as exc:
        raise record.error("error_taxonomy", str(exc)) from None
    if category not in chosen.keys:
        raise record.error("error_category", f"{chosen.name} has no category {category!r} (it "
                                             f"has {', '.join(chosen.keys)})")
    return step, chosen.name, category


def _judge_run(record: Record, context: _Context, judge: str, version: str) -> str:
    """A verdict's run label, and the run it names counted with its decoding where the record
    states a run, a temperature or a top_p (kept in the verdict's extra too)."""
    from physgrade.judge.client import Decoding
    from physgrade.raters import check_run

    run = formats.id_field(record, "run", required=False) or ""
    try:
        run = check_run(run)
    except ProjectError as exc:
        raise record.error("run", str(exc)) from None
    stated = {}
    for name in ("temperature", "top_p"):
        value = record.data.get(name)
        if value is None or value == "":
            continue
        try:
            stated[name] = float(value)
        except (TypeError, ValueError):
            raise record.error(name, f"must be a number, not {value!r}") from None
    try:
        decoding = Decoding(**stated)
    except ValueError as exc:
        raise record.error(next(iter(stated)), str(exc)) from None
    if run or stated:
        key = (judge, version, run, decoding.temperature, decoding.top_p)
        context.judge_runs[key] = context.judge_runs.get(key, 0) + 1
    return run


def _verdict(record: Record, context: _Context) -> Entry:
    return _assessment(record, context, "judge", LLM, "verdicts")


def _grade(record: Record, context: _Context) -> Entry:
    return _assessment(record, context, "grader", HUMAN, "grades")


def _judge_review(record: Record, context: _Context) -> Entry:
    response_id, _, _ = context.response(record)
    judge = formats.id_field(record, "judge")
    reviewer = formats.id_field(record, "reviewer")
    asked_version = formats.id_field(record, "prompt_version", required=False)
    version, rubric_key = context.verdict_version(record, judge, response_id, asked_version)
    rubric = RUBRICS[rubric_key]
    criteria = formats.object_field(record, "criteria") or {}
    checked = {}
    for criterion, value in criteria.items():
        if criterion not in rubric.keys:
            raise record.error(f"criteria.{criterion}", f"{criterion!r} is not a criterion of the "
                                                        f"verdict's {rubric.title} rubric")
        if value is None:
            continue
        if str(value).strip() not in {str(level) for level in reviews.AGREEMENTS}:
            raise record.error(f"criteria.{criterion}", f"{value!r} is not "
                                                        f"{reviews.agreements_text()}")
        checked[criterion] = int(str(value).strip())
    verdict_text = formats.text_field(record, "verdict")
    verdict = None
    if verdict_text is not None:
        verdict = reviews.verdict_of(verdict_text)
        if verdict is None:
            raise record.error("verdict", f"{verdict_text!r} is not {reviews.verdicts_text()}")
    if not checked and verdict is None:
        raise record.error("criteria", "a review needs criteria, a verdict, or both")
    reviewer_ref, judge_ref = _RaterRef(reviewer, ""), _RaterRef(judge, version)
    stamp = now_iso()
    key = {"reviewer_id": reviewer_ref, "judge_id": judge_ref, "response_id": response_id}
    rows = [Row("judge_reviews", dict(key),
                {"verdict": verdict, "extra": formats.extra_fields(record, "judge_reviews")},
                {"updated_at": stamp})]
    rows += [Row("judge_review_criteria", {**key, "criterion": c}, {"agreement": v},
                 {"updated_at": stamp}) for c, v in checked.items()]
    raters = [(reviewer, HUMAN, ""), (judge, LLM, version)]
    return Entry(record, (reviewer, judge, version, response_id), rows, raters)


def _bloom(record: Record, context: _Context) -> Entry:
    question_id = formats.id_field(record, "question_id")
    if question_id not in context.questions:
        raise record.error("question_id", f"no question {question_id!r} in the project")
    annotator = formats.id_field(record, "annotator")
    kind_text = (formats.text_field(record, "annotator_kind") or HUMAN).strip().lower()
    annotator_kind = {HUMAN: HUMAN, "person": HUMAN, "expert": HUMAN, "model": LLM,
                      LLM: LLM}.get(kind_text)
    if annotator_kind is None:
        raise record.error("annotator_kind", f"{kind_text!r} is not human or model")
    cognitive = formats.vocabulary_field(record, "cognitive", taxonomy.BLOOM_COGNITIVE)
    knowledge = formats.vocabulary_field(record, "knowledge", taxonomy.BLOOM_KNOWLEDGE)
    if cognitive is None and knowledge is None:
        raise record.error("cognitive", "a Bloom label needs cognitive, knowledge, or both")
    ref = _RaterRef(annotator, "")
    row = Row("bloom_labels", {"question_id": question_id, "annotator_id": ref},
              {"cognitive": cognitive, "knowledge": knowledge,
               "extra": formats.extra_fields(record, "bloom")}, {"updated_at": now_iso()})
    return Entry(record, (annotator, question_id), [row], [(annotator, annotator_kind, "")])


_BUILDERS: dict[str, Callable[[Record, _Context], Entry]] = {
    "questions": _question, "responses": _response, "verdicts": _verdict, "grades": _grade,
    "judge_reviews": _judge_review, "bloom": _bloom,
}
