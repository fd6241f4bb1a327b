"""physgrade's exchange formats: reading files into checked records, and the record shapes.

Reading is pure (no database): a file becomes :class:`Record` objects with their line numbers,
field renames (``--map``) are applied, and each record is normalised for its kind. Every problem
is a :class:`FormatError` naming the file, line and field. The record shapes of each kind are
declared once here (``FIELDS``) and serve both import and export.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Iterator, Literal, Mapping, Sequence, TextIO, overload

from physgrade import taxonomy
from physgrade.files import write_whole
from physgrade.rubric import COARSE, CONCEPTUAL, PREFS, RUBRICS, ScoreError, detect_rubric
from physgrade.tasks import Task

#: The kinds of exchange file: each holds records of one shape (``FIELDS``).
FILE_KINDS = ("questions", "responses", "verdicts", "grades", "judge_reviews", "bloom")

#: Where a verdict or grade says its rater's first wrong step (physgrade.step_marks).
STEP_FIELDS = ("first_wrong_step", "error_category", "error_taxonomy")
#: The named fields of each kind, in export order. Fields not named here are kept in ``extra``.
FIELDS: dict[str, tuple[str, ...]] = {
    "questions": ("id", "kind", "topic", "question", "options", "answer", "answer_type", "unit",
                  "reference_solution", "bloom_cognitive", "bloom_knowledge", "variant_of",
                  "region", "variant_group"),
    "responses": ("id", "question_id", "model", "response"),
    "verdicts": ("response_id", "judge", "prompt_version", "scores", "rationale",
                 *STEP_FIELDS),
    "grades": ("response_id", "grader", "scores", "rationale", "notes", "graded_at",
               *STEP_FIELDS),
    "judge_reviews": ("response_id", "judge", "prompt_version", "reviewer", "criteria",
                      "verdict"),
    "bloom": ("question_id", "annotator", "annotator_kind", "cognitive", "knowledge"),
}
_NAMED = {kind: frozenset(names) for kind, names in FIELDS.items()}
#: Fields of the earlier, coarser verdict schema (accepted for verdicts and grades).
COARSE_FIELDS = ("answer", "reasoning", "calculations", "explanation")
#: The image fields of each kind (lists of paths or data: URIs, see physgrade.images); written
#: on export only when a record has images, so they are not among ``FIELDS``.
IMAGE_FIELDS: dict[str, tuple[str, ...]] = {"questions": ("images", "reference_images"),
                                            "responses": ("images",)}
#: Fields that hold JSON objects or lists (in CSV, as JSON text in a cell).
NESTED = {"options", "scores", "rationale", "criteria", "notes", "images", "reference_images"}
#: A pseudo-field for ``--map``: ``--map @line=id`` gives records without ids "FILE:LINE".
LINE_FIELD = "@line"
CRITERION_KEYS = tuple(dict.fromkeys(PREFS.keys + CONCEPTUAL.keys))

#: The process-supervision formats a project's step marks go in and out as
#: (:mod:`physgrade.step_formats`).
STEP_FORMATS = ("processbench", "prm800k", "trl")


class FormatError(ValueError):
    """Bad input, located: ``source`` file, ``line`` (None for the whole file) and ``field``."""

    def __init__(self, source: str, line: int | None, field: str | None, message: str,
                 unit: str = "line") -> None:
        self.source, self.line, self.field, self.message = source, line, field, message
        self.unit = unit
        where = source if line is None else f"{source} {unit} {line}"
        if field:
            where += f", field '{field}'"
        super().__init__(f"{where}: {message}")


class ImportErrors(FormatError):
    """All the format errors found in one file; the first one is the headline."""

    def __init__(self, errors: list[FormatError]) -> None:
        first = errors[0]
        super().__init__(first.source, first.line, first.field, first.message, first.unit)
        self.errors = errors
        more = len(errors) - 1
        if more:
            self.args = (f"{self.args[0]} (and {more} more problem{'s' if more > 1 else ''})",)


@dataclass(slots=True)
class Record:
    """One object read from a file, with where it came from."""

    source: str
    line: int  # the line in JSON Lines and CSV; the item's position in a JSON array
    data: dict[str, Any]
    unit: str = "line"

    def error(self, field: str | None, message: str) -> FormatError:
        return FormatError(self.source, self.line, field, message, self.unit)


@dataclass(slots=True)
class SourceFile:
    """A file's content hash (for the import log) and its records, read as they are consumed.

    Reading lazily lets an import check early records while later ones are still being
    decoded; problems in the file surface as :class:`FormatError` during the iteration.
    """

    name: str
    sha256: str
    records: Iterator[Record]
    size_hint: int  # about how many records (for progress bars)


# -- reading ---------------------------------------------------------------------------------

def read_file(path: str | Path, mapping: Mapping[str, str] | None = None) -> SourceFile:
    """Read JSON Lines (``.jsonl``/``.ndjson``, default), a JSON array (``.json``) or CSV.

    ``mapping`` renames source fields to physgrade's (``{"problem": "question"}``); a target
    with a dot fills a nested object (``{"A": "options.A"}``). JSON Lines are streamed: a large
    file is never held in memory twice.
    """
    path = Path(path)
    name = path.name
    suffix = path.suffix.lower()
    try:
        if suffix in {".csv", ".tsv", ".json"}:
            raw = path.read_bytes()
            sha256, lines = hashlib.sha256(raw).hexdigest(), raw.count(b"\n")
        else:
            sha256, lines = _digest(path)
    except OSError as exc:
        raise FormatError(name, None, None, f"cannot read the file: {exc.strerror}") from None
    if suffix in {".csv", ".tsv"}:
        records = _read_csv(_decode(raw, name), name, "\t" if suffix == ".tsv" else ",")
    elif suffix == ".json":
        records = _read_json_array(_decode(raw, name), name)
    else:
        records = _read_json_lines(path, name)
    if mapping:
        records = _apply_mapping(records, mapping, name)
    return SourceFile(name, sha256, records, max(lines, 1))


def _digest(path: Path) -> tuple[str, int]:
    """A large file's SHA-256 and its number of lines, in one pass that keeps nothing."""
    digest = hashlib.sha256()
    lines = 0
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
            lines += chunk.count(b"\n")
    return digest.hexdigest(), lines


def _decode(raw: bytes, name: str, line: int | None = None) -> str:
    """Text from UTF-8 bytes (a leading byte-order mark is dropped), or a located error."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if line is None:
            line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise FormatError(name, line, None,
                          f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {column}); "
                          "save the file as UTF-8 and import it again") from None


#: Python's JSON parser refuses whole numbers of more than 4,300 digits (a guard against slow
#: conversions); no field of an exchange file needs one.
TOO_MANY_DIGITS = (f"holds a number of more than {sys.get_int_max_str_digits():,} digits, which "
                   "no field takes; correct the number")


def _read_json_lines(path: Path, name: str) -> Iterator[Record]:
    with path.open("rb") as f:
        for number, raw in enumerate(f, start=1):
            line = _decode(raw, name, number)
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                if not raw.endswith(b"\n"):
                    raise FormatError(name, number, None, "the last line is cut off (truncated "
                                      "JSON); the file may be incomplete") from None
                raise FormatError(name, number, None, f"not valid JSON: {exc.msg} at column "
                                  f"{exc.colno}") from None
            except ValueError:  # the parser's own limit on a number's digits
                raise FormatError(name, number, None, TOO_MANY_DIGITS) from None
            if not isinstance(data, dict):
                raise FormatError(name, number, None,
                                  f"expected a JSON object, found {type(data).__name__}")
            yield Record(name, number, data)


def _read_json_array(text: str, name: str) -> Iterator[Record]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(name, exc.lineno, None, f"not valid JSON: {exc.msg}") from None
    except ValueError:  # the parser's own limit on a number's digits
        raise FormatError(name, None, None, TOO_MANY_DIGITS) from None
    if isinstance(data, dict):
        lists = [v for v in data.values() if isinstance(v, list)]
        if len(lists) != 1:
            raise FormatError(name, None, None, "expected a JSON array of objects (or JSON "
                              "Lines: one object per line, in a .jsonl file)")
        data = lists[0]
    if not isinstance(data, list):
        raise FormatError(name, None, None, "expected a JSON array of objects")
    for number, item in enumerate(data, start=1):
        # Line numbers are not kept by the JSON parser; errors name the item's position instead.
        if not isinstance(item, dict):
            raise FormatError(name, number, None,
                              f"not a JSON object but {type(item).__name__}", "item")
        yield Record(name, number, item, "item")


def _read_csv(text: str, name: str, delimiter: str) -> Iterator[Record]:
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        header = reader.fieldnames
        if not header:
            return
        _check_header(header, name)
        end = reader.line_num
        for row in reader:
            line, end = end + 1, reader.line_num  # a quoted cell may span lines: name the first
            cells = len(header) + len(row.pop(None, []))  # surplus cells come under None
            missing = sum(value is None for value in row.values())  # cut short: restval
            if missing or cells > len(header):
                raise FormatError(name, line, None, f"{cells - missing} cells but the header "
                                  f"names {len(header)} columns; every row needs one cell per "
                                  "column (leave a cell empty for no value)")
            data: dict[str, Any] = {}
            for key, cell in row.items():
                if cell == "":
                    data[key] = None
                elif key in NESTED and cell.lstrip()[:1] in "{[":
                    try:
                        data[key] = json.loads(cell)
                    except json.JSONDecodeError as exc:
                        raise FormatError(name, line, key,
                                          f"cell is not valid JSON: {exc.msg}") from None
                else:
                    data[key] = cell
            yield Record(name, line, data)
    except csv.Error as exc:
        # The reader counts only the lines of rows it finished: the bad row begins after them.
        start = reader.line_num + 1
        if "unexpected end of data" in str(exc):
            raise FormatError(name, start, None, "a quoted cell in the row that begins here is "
                              "never closed (the file ends inside quotes); close the quote, or "
                              "double a quote mark meant as text (\"\")") from None
        raise FormatError(name, start, None, f"malformed CSV in the row that begins here: {exc}; "
                          "a quote mark inside a quoted cell is written twice (\"\")") from None


def _check_header(header: Sequence[str], name: str) -> None:
    """Refuse a header with a column without a name, or with a name twice: the reader would
    keep one of two cells silently (the second ``INT`` in place of ``MOD``, say)."""
    for number, column in enumerate(header, start=1):
        if not column.strip():
            raise FormatError(name, 1, None, f"column {number} of the header has no name; name "
                              "it, or remove the column")
        first = header.index(column) + 1
        if first != number:
            raise FormatError(name, 1, column, f"the header names column {column!r} twice "
                              f"(columns {first} and {number}); rename or remove one")


def _apply_mapping(records: Iterator[Record], mapping: Mapping[str, str],
                   name: str) -> Iterator[Record]:
    seen: set[str] = set()
    count = 0
    for record in records:
        count += 1
        data = record.data
        if LINE_FIELD in mapping:
            # For files without ids: the file's name and the record's place, stable across
            # imports of the same file.
            data[LINE_FIELD] = f"{Path(name).stem}:{record.line}"
        for source, target in mapping.items():
            if source not in data:
                continue
            seen.add(source)
            # A benchmark's own topic stays as given beside the study's (physgrade.facets).
            value = data[source] if target == "topic" else data.pop(source)
            if "." in target:
                outer, inner = target.split(".", 1)
                nested = data.setdefault(outer, {})
                if not isinstance(nested, dict):
                    raise record.error(outer, f"--map {source}={target} needs '{outer}' to be an "
                                              "object")
                if value is not None:
                    nested[inner] = value
            else:
                data[target] = value
        yield record
    unused = [s for s in mapping if s not in seen]
    if count and unused:
        raise FormatError(name, None, None, f"--map {unused[0]}={mapping[unused[0]]}: no record "
                          f"has a field '{unused[0]}'")


def parse_mapping(pairs: list[str]) -> dict[str, str]:
    """Turn ``["problem=question", ...]`` (the command line's ``--map``) into a dict."""
    mapping: dict[str, str] = {}
    for pair in pairs:
        source, sep, target = pair.partition("=")
        if not sep or not source.strip() or not target.strip():
            raise ValueError(f"--map takes SOURCE=TARGET, not {pair!r}")
        mapping[source.strip()] = target.strip()
    return mapping


# -- normalising one record --------------------------------------------------------------------

@overload
def text_field(record: Record, name: str, required: Literal[True],
               allow_empty: bool = False) -> str: ...
@overload
def text_field(record: Record, name: str, required: bool = False,
               allow_empty: bool = False) -> str | None: ...
def text_field(record: Record, name: str, required: bool = False,
               allow_empty: bool = False) -> str | None:
    """A field as text: numbers become text; lists and objects become JSON text."""
    value = record.data.get(name)
    if value.__class__ is str and (allow_empty or not value[:1].isspace() and value):
        return value  # the common case, kept cheap: imports call this millions of times
    if value is None:
        if required:
            raise record.error(name, "is required but missing")
        return None
    if isinstance(value, str):
        pass
    elif isinstance(value, bool):
        value = "true" if value else "false"
    elif isinstance(value, (int, float)):
        value = repr(value) if isinstance(value, float) else str(value)
    elif isinstance(value, list) and all(not isinstance(v, (list, dict)) for v in value):
        # Benchmarks often wrap answers and units in lists, one item per sub-question.
        items = [str(v) for v in value if v is not None and str(v).strip()]
        if not items:
            if required:
                raise record.error(name, "is required but empty")
            return None
        value = ", ".join(items)
    else:
        value = json.dumps(value, ensure_ascii=False)
    if not value.strip() and not allow_empty:
        if required:
            raise record.error(name, "is required but empty")
        return None
    return value


@overload
def id_field(record: Record, name: str, required: Literal[True] = True) -> str: ...
@overload
def id_field(record: Record, name: str, required: bool) -> str | None: ...
def id_field(record: Record, name: str, required: bool = True) -> str | None:
    value = text_field(record, name, required)
    return None if value is None else value.strip()


def vocabulary_field(record: Record, name: str, vocabulary: tuple[str, ...],
                     strict: bool = True) -> str | None:
    """A field from a closed vocabulary, canonically spelled; ``strict=False`` keeps others."""
    value = text_field(record, name)
    if value is None:
        return None
    term = taxonomy.normalize(value, vocabulary)
    if term is None:
        if strict:
            raise record.error(name, f"{value!r} is not one of {', '.join(vocabulary)}")
        return value.strip()
    return term


def object_field(record: Record, name: str) -> dict[str, Any] | None:
    value = record.data.get(name)
    if value is None:
        return None
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise record.error(name, f"is not a valid JSON object: {exc.msg}") from None
    if not isinstance(value, dict):
        raise record.error(name, f"must be an object, not {type(value).__name__}")
    return value


def options_field(record: Record) -> dict[str, str] | None:
    """Options as {"A": text, ...}; a plain list is lettered A, B, C in order."""
    value = record.data.get("options")
    if isinstance(value, str) and value.strip()[:1] == "[":
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise record.error("options", f"is not valid JSON: {exc.msg}") from None
    if isinstance(value, list):
        if len(value) > 26:
            raise record.error("options", "has more than 26 options")
        value = {chr(ord("A") + i): item for i, item in enumerate(value)}
        record.data["options"] = value
    options = object_field(record, "options")
    if not options:
        return None
    cleaned = {}
    for letter, text in options.items():
        key = str(letter).strip().upper()
        if not key:
            raise record.error("options", "an option has no letter")
        cleaned[key] = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)
    return cleaned


def extra_fields(record: Record, kind: str, also: tuple[str, ...] = ()) -> str | None:
    """Fields the format does not name, as JSON text (kept, never dropped)."""
    unnamed = record.data.keys() - _NAMED[kind] - set(also)
    if not unnamed:
        return None
    extra = {k: v for k, v in record.data.items() if k in unnamed}
    return json.dumps(extra, ensure_ascii=False, sort_keys=True) if extra else None


def image_list(record: Record, name: str) -> list[str]:
    """An image field: a list of paths or data: URIs (a single string is one image)."""
    value = record.data.get(name)
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if not isinstance(value, list):
        raise record.error(name, f"must be a list of image paths or data: URIs, not "
                                 f"{type(value).__name__}")
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise record.error(f"{name}[{index}]", "must be a path or a data: URI, not "
                                                   f"{type(item).__name__}")
    return value


def messages_question(record: Record) -> str | None:
    """The question of a chat-shaped record (Physics-R1's ``messages``): the text of its user
    messages. Text parts of a message given as parts (``[{"type": "text", ...}]``) are joined."""
    messages = record.data.get("messages")
    if not isinstance(messages, list):
        return None
    texts = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise record.error(f"messages[{index}]", "must be an object with role and content")
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = "\n".join(part.get("text", "") for part in content
                                if isinstance(part, dict) and part.get("type") == "text")
        if isinstance(content, str) and content.strip():
            texts.append(content)
    return "\n\n".join(texts) or None


def timestamp_field(record: Record, name: str) -> str | None:
    value = text_field(record, name)
    if value is None:
        return None
    try:
        datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise record.error(name, f"{value!r} is not an ISO 8601 date and time "
                                 "(e.g. 2026-10-03T14:21:00Z)") from None
    return value.strip()


@dataclass(frozen=True, slots=True)
class ScoreSet:
    """The scores of one verdict or grade, before the rubric of its question is known."""

    rubric: str
    values: dict[str, Any]
    notes: dict[str, str]
    comment: str | None


def score_set(record: Record) -> ScoreSet:
    """Read ``scores`` (or flat criterion fields, or the coarse schema) with its notes."""
    if record.data.get("scores") is None:
        # A flat sheet with one column per criterion (common in spreadsheets) is welcome too.
        flat = {k: record.data.pop(k) for k in CRITERION_KEYS if k in record.data}
        if any(v is not None for v in flat.values()):
            record.data["scores"] = flat
    scores = object_field(record, "scores")
    rationale = record.data.get("rationale")
    notes_value = record.data.get("notes")
    if scores is None:
        coarse = {k: record.data[k] for k in COARSE.keys if record.data.get(k) is not None}
        if coarse:
            return ScoreSet(COARSE.key, coarse, {},
                            text_field(record, "explanation") or _text_or_none(rationale)
                            or _text_or_none(notes_value))
        raise record.error("scores", "is required: an object such as {\"INT\": 1, ...}, or the "
                                     "coarse fields answer, reasoning, calculations")
    rubric = detect_rubric(set(scores))
    if rubric is None or rubric is COARSE:
        raise record.error("scores", f"keys {sorted(scores)} are neither P-REFS (INT, MOD, CON, "
                                     "APP, CAL, COR, COH, ANS) nor conceptual (SET, CON, EXE, "
                                     "COH, ANS)")
    notes: dict[str, str] = {}
    comment = None
    for source_name, source in (("rationale", rationale), ("notes", notes_value)):
        if isinstance(source, dict):
            for key, text in source.items():
                if text is None or text == "":
                    continue
                if key not in scores:
                    raise record.error(f"{source_name}.{key}", f"explains {key!r}, which is not "
                                                               "among the scores")
                notes[key] = text if isinstance(text, str) else json.dumps(text)
        elif source is not None and str(source).strip():
            comment = str(source) if comment is None else f"{comment}\n{source}"
    return ScoreSet(rubric.key, dict(scores), notes, comment)


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def check_scores(record: Record, scores: ScoreSet, rubric_key: str, multiple_choice: bool,
                 complete: bool = True) -> dict[str, int | None]:
    """Validate a score set against the rubric its question calls for.

    A person's grade may be partial (work in progress); a judge's verdict must be complete.
    """
    if scores.rubric != rubric_key and scores.rubric != COARSE.key:
        raise record.error("scores", f"uses the {RUBRICS[scores.rubric].title} rubric but the "
                                     f"question is graded with {RUBRICS[rubric_key].title}")
    rubric = RUBRICS[scores.rubric]
    field_name = "scores" if scores.rubric != COARSE.key else ""
    try:
        return rubric.validate(scores.values, multiple_choice and rubric is not COARSE, complete)
    except ScoreError as exc:
        where = f"{field_name}.{exc.field}" if field_name else exc.field
        raise record.error(where, str(exc)) from None


# -- writing -------------------------------------------------------------------------------

def write_records(records: Iterable[dict[str, Any]], path: str | Path, kind: str,
                  task: Task | None = None) -> int:
    """Write records as JSON Lines, or CSV if ``path`` ends in .csv; returns the count.

    The file appears only when complete (``files.write_whole``), so a failed or cancelled
    export never leaves a half-written file behind.
    """
    path = Path(path)
    task = task or Task()
    count = 0

    def write_all(out: TextIO) -> None:
        nonlocal count
        rows = records
        if path.suffix.lower() == ".csv":
            rows = list(records)
            columns = list(FIELDS[kind])
            for record in rows:
                columns += [k for k in record if k not in columns]
            writer = csv.DictWriter(out, fieldnames=columns)
            writer.writeheader()

            def write(record: dict[str, Any]) -> None:
                writer.writerow({k: _csv_cell(v) for k, v in record.items()})
        else:
            def write(record: dict[str, Any]) -> None:
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
        for record in rows:
            if count % 1000 == 0:
                task.report(count, None, "exporting")
            write(record)
            count += 1

    write_whole(path, write_all)
    return count


def _csv_cell(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return value
