"""Any field of a question by name: a column the exchange format names, else a field the
import kept as given (``extra``), so that measures can group, pair and stratify by whatever a
benchmark's records carry (``language``, ``source``, ``variant_group``...).

A value is text as it is shown (a number as written, an object such as Physics-R1's
``native_difficulty {scale, value}`` as ``"scale: value"``); a question without the field has
None.
"""

from __future__ import annotations

import json
from typing import Any

from physgrade.formats import FIELDS
from physgrade.project import Project

#: Question fields held in a column of their own (the rest are in ``extra``); the question's
#: text, options, images and reference are not fields anything is grouped by.
COLUMNS = frozenset(FIELDS["questions"]) - {"question", "options", "reference_solution"}


#: The topic as the benchmark gave it where the study's topic map changed it (the import keeps
#: it in ``extra``); elsewhere the benchmark's topic is the study's, so the field reads ``topic``.
SOURCE_TOPIC = "source_topic"


def as_text(value: Any) -> str | None:
    """A field's value as a group's or a filter's label: None and blank text are None; an
    object with a ``scale`` and a ``value`` reads "scale: value"; other objects and lists are
    their compact JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict) and set(value) == {"scale", "value"}:
        return f"{as_text(value['scale'])}: {as_text(value['value'])}"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return str(value)


def sql(field: str, alias: str = "q") -> str:
    """The SQL expression of ``field`` over questions ``alias`` (raw: an object stays JSON)."""
    if field in COLUMNS:
        return f"{alias}.{field}"
    kept = f"json_extract({alias}.extra, '$.\"{_quoted(field)}\"')"
    return f"coalesce({kept}, {alias}.topic)" if field == SOURCE_TOPIC else kept


def text_sql(field: str, alias: str = "q") -> str:
    """The SQL expression of ``field``'s value as :func:`as_text` shows it, so that a filter,
    a stratum and a count in SQL match the label a page shows (numbers in an exponent form
    aside: SQLite writes 1e-05 as 1.0e-05)."""
    if field in COLUMNS:
        return f"NULLIF(TRIM(CAST({alias}.{field} AS TEXT), {_BLANKS}), '')"
    extra, path = f"{alias}.extra", f"'$.\"{_quoted(field)}\"'"
    scale, value = f"{path[:-1]}.scale'", f"{path[:-1]}.value'"
    if field == SOURCE_TOPIC:
        return f"coalesce({_scalar(extra, path)}, {text_sql('topic', alias)})"
    return (f"(CASE WHEN json_type({extra}, {path}) = 'object' AND (SELECT count(*) FROM "
            f"json_each({extra}, {path})) = 2 AND json_type({extra}, {scale}) IS NOT NULL AND "
            f"json_type({extra}, {value}) IS NOT NULL THEN coalesce({_scalar(extra, scale)}, "
            f"'None') || ': ' || coalesce({_scalar(extra, value)}, 'None') "
            f"ELSE {_scalar(extra, path)} END)")


def values(project: Project, field: str) -> dict[str, str | None]:
    """Every question's value of ``field`` (:func:`as_text`), by question id."""
    if field in COLUMNS:
        rows = project.conn.execute(f"SELECT id, {field} FROM questions")
        return {qid: as_text(value) for qid, value in rows}
    found: dict[str, str | None] = {}
    for qid, extra in project.conn.execute("SELECT id, extra FROM questions"):
        found[qid] = as_text(json.loads(extra).get(field)) if extra else None
    if field == SOURCE_TOPIC:
        topics = values(project, "topic")
        return {qid: value if value is not None else topics[qid] for qid, value in found.items()}
    return found


def known(project: Project) -> list[str]:
    """The fields some question has, columns first (in format order), then the kept ones by
    name: what a pairing, a facet or a group can be declared on."""
    present = [name for name in FIELDS["questions"] if name in COLUMNS and project.conn.execute(
        f"SELECT 1 FROM questions WHERE {name} IS NOT NULL LIMIT 1").fetchone()]
    kept = {row[0] for row in project.conn.execute(
        "SELECT DISTINCT j.key FROM questions, json_each(questions.extra) AS j "
        "WHERE questions.extra IS NOT NULL")}
    return present + sorted(kept)


#: The characters :func:`as_text` strips (str.strip's common ones), as SQL.
_BLANKS = "char(32, 9, 10, 13)"


def _scalar(extra: str, path: str) -> str:
    """SQL: the value at ``path`` of JSON ``extra`` as :func:`as_text` writes a scalar (an
    object or a list as its compact JSON, which SQLite keeps in the order stored: sorted)."""
    return (f"CASE json_type({extra}, {path}) WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' "
            f"WHEN 'text' THEN NULLIF(TRIM(json_extract({extra}, {path}), {_BLANKS}), '') "
            f"ELSE CAST(json_extract({extra}, {path}) AS TEXT) END")


def _quoted(field: str) -> str:
    """``field`` safe inside a JSON path in single-quoted SQL text."""
    if not field or any(ch in field for ch in "'\"\\") or not field.isprintable():
        raise ValueError(f"{field!r} is not a field name")
    return field
