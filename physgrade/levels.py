"""What each score level means: a description of every allowed value of every criterion.

The criteria and their ranges are physgrade's (:mod:`physgrade.rubric`); the words for each level
belong to the project (table ``rubric_levels``, which schema version 7 fills with physgrade's
default wording), so that a study can word them its own way and all its graders read the same.
They travel as one JSON document: :func:`document` is what ``physgrade rubric DB --json`` prints,
and :func:`set_levels` stores an edited copy (``--set FILE``), changing descriptions only, never a
criterion or its range.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from physgrade.changes import NOTHING, Changes, RecordKind
from physgrade.formats import FormatError
from physgrade.project import Project
from physgrade.rubric import GRADED_RUBRICS, NA, Criterion, Rubric, value_text

#: One rubric's descriptions: criterion key -> value (None: N/A) -> what that value means.
Levels = dict[str, dict[int | None, str]]

#: What a levels file may repeat of a rubric and of a criterion, but not change.
_FIXED_RUBRIC = ("title", "maximum")
_FIXED_CRITERION = ("name", "stage", "maximum", "allows_na", "help")


def levels_of(project: Project, rubric: Rubric) -> Levels:
    """One rubric's descriptions: one indexed read, cheap enough for every step of grading."""
    found: Levels = {}
    for criterion, level, text in project.conn.execute(
            "SELECT criterion, level, description FROM rubric_levels WHERE rubric = ?",
            (rubric.key,)):
        found.setdefault(criterion, {})[None if level == NA else int(level)] = text
    return found


def levels(project: Project) -> dict[str, Levels]:
    """The descriptions of every graded rubric, by rubric key."""
    return {rubric.key: levels_of(project, rubric) for rubric in GRADED_RUBRICS}


def document(project: Project) -> dict[str, Any]:
    """The graded rubrics with their criteria and level descriptions, as one JSON object."""
    stored = levels(project)
    return {"rubrics": [
        {"key": rubric.key, "title": rubric.title, "maximum": rubric.maximum,
         "criteria": [_criterion_entry(criterion, stored[rubric.key].get(criterion.key, {}))
                      for criterion in rubric.criteria]}
        for rubric in GRADED_RUBRICS]}


def _criterion_entry(criterion: Criterion, described: dict[int | None, str]) -> dict[str, Any]:
    return {"key": criterion.key, "name": criterion.name, "stage": criterion.stage,
            "maximum": criterion.maximum, "allows_na": criterion.allows_na,
            "help": criterion.help,
            "levels": {value_text(value): described.get(value, "")
                       for value in criterion.choices()}}


# -- replacing the descriptions ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Edit:
    """One description replaced: ``value`` None is N/A."""

    rubric: Rubric
    criterion: str
    value: int | None
    after: str


def load_document(path: str | Path) -> object:
    """A levels file's JSON; a :class:`FormatError` names the file (and line) if it is not JSON."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise FormatError(source, None, None, f"cannot read the file: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise FormatError(source, None, None, "not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(source, exc.lineno, None, f"not JSON: {exc.msg}") from None


def set_levels(project: Project, data: object, source: str) -> tuple[list[Edit], Changes]:
    """Store the descriptions a levels document gives, all or nothing; the ones it leaves out
    (a rubric or criterion not named) are kept.

    The whole document is checked first: a field that changes a rubric or criterion, a level
    added or missing, an unknown rubric or criterion, or an empty description is refused with a
    :class:`FormatError` naming ``source`` and the JSON path of the field, and nothing changes.
    """
    wanted = _check(data, source)
    edits = []
    with project.transaction():
        for rubric, criteria in wanted:
            stored = levels_of(project, rubric)
            for key, described in criteria.items():
                for value, text in described.items():
                    if stored.get(key, {}).get(value) == text:
                        continue
                    project.conn.execute(
                        "INSERT INTO rubric_levels (rubric, criterion, level, description) "
                        "VALUES (?, ?, ?, ?) ON CONFLICT (rubric, criterion, level) "
                        "DO UPDATE SET description = excluded.description",
                        (rubric.key, key, value_text(value), text))
                    edits.append(Edit(rubric, key, value, text))
    return edits, (Changes.of(RecordKind.RUBRICS) if edits else NOTHING)


class _Checker:
    """Walks a levels document, naming each field by its JSON path in what it refuses."""

    def __init__(self, source: str) -> None:
        self.source = source

    def refuse(self, path: str, message: str) -> FormatError:
        return FormatError(self.source, None, path or None, message)

    def mapping(self, value: object, path: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.refuse(path, f"must be a JSON object, not {_json_type(value)}")
        return value

    def fields(self, value: object, path: str, allowed: tuple[str, ...]) -> dict[str, Any]:
        """An object whose fields are among ``allowed`` (a misspelt field is not ignored)."""
        value = self.mapping(value, path)
        unknown = [name for name in value if name not in allowed]
        if unknown:
            raise self.refuse(_child(path, unknown[0]),
                              f"unknown field; the fields here are {', '.join(allowed)}")
        return value

    def listed(self, value: object, path: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.refuse(path, f"must be a JSON array, not {_json_type(value)}")
        return value

    def unchanged(self, entry: dict[str, Any], path: str, what: str, fixed: dict[str, Any]) -> None:
        """Fields of a rubric or criterion may be repeated as they are, never changed."""
        for name, expected in fixed.items():
            if name in entry and not _same(entry[name], expected):
                raise self.refuse(_child(path, name),
                                  f"{what} has {name} {json.dumps(expected)}, not "
                                  f"{json.dumps(entry[name])}; only level descriptions can be "
                                  "changed")


def _check(data: object, source: str) -> list[tuple[Rubric, Levels]]:
    check = _Checker(source)
    described = {rubric.key: rubric for rubric in GRADED_RUBRICS}
    top = check.fields(data, "", ("rubrics",))
    if "rubrics" not in top:
        raise check.refuse("rubrics", "missing; give the rubrics as physgrade rubric --json "
                                      "prints them")
    wanted: list[tuple[Rubric, Levels]] = []
    for i, item in enumerate(check.listed(top["rubrics"], "rubrics")):
        path = f"rubrics[{i}]"
        entry = check.fields(item, path, ("key", *_FIXED_RUBRIC, "criteria"))
        key = entry.get("key")
        rubric = described.get(key) if isinstance(key, str) else None
        if rubric is None:
            raise check.refuse(_child(path, "key"), f"unknown rubric {json.dumps(key)}"
                                                    f"; the rubrics are {', '.join(described)}")
        if any(rubric is seen for seen, _ in wanted):
            raise check.refuse(_child(path, "key"), f"the {rubric.title} rubric is given twice")
        check.unchanged(entry, path, f"the {rubric.title} rubric",
                        {"title": rubric.title, "maximum": rubric.maximum})
        wanted.append((rubric, _check_criteria(check, rubric, entry.get("criteria", []), path)))
    return wanted


def _check_criteria(check: _Checker, rubric: Rubric, items: object, path: str) -> Levels:
    found: Levels = {}
    for j, item in enumerate(check.listed(items, _child(path, "criteria"))):
        where = f"{path}.criteria[{j}]"
        entry = check.fields(item, where, ("key", *_FIXED_CRITERION, "levels"))
        key = entry.get("key")
        if not isinstance(key, str) or key not in rubric.keys:
            raise check.refuse(_child(where, "key"),
                               f"unknown criterion {json.dumps(key)} of the {rubric.title} "
                               f"rubric; its criteria are {', '.join(rubric.keys)}")
        if key in found:
            raise check.refuse(_child(where, "key"), f"{rubric.title} {key} is given twice")
        criterion = rubric.criterion(key)
        what = f"{rubric.title} {key}"
        check.unchanged(entry, where, what, {name: getattr(criterion, name)
                                             for name in _FIXED_CRITERION})
        if "levels" not in entry:
            raise check.refuse(_child(where, "levels"), f"missing: {what} needs a description "
                                                        "of each of its levels")
        found[key] = _check_levels(check, criterion, what, entry["levels"],
                                   _child(where, "levels"))
    return found


def _check_levels(check: _Checker, criterion: Criterion, what: str, value: object,
                  path: str) -> dict[int | None, str]:
    choices = {value_text(choice): choice for choice in criterion.choices()}
    given = check.mapping(value, path)
    extra = [name for name in given if name not in choices]
    if extra:
        raise check.refuse(f'{path}["{extra[0]}"]',
                           f"{what} has no level {extra[0]}; its levels are {', '.join(choices)}")
    missing = [name for name in choices if name not in given]
    if missing:
        raise check.refuse(path, f"{what} level {missing[0]} has no description; give one for "
                                 f"each of {', '.join(choices)}")
    described: dict[int | None, str] = {}
    for name, choice in choices.items():
        text = given[name]
        if not isinstance(text, str):
            raise check.refuse(f'{path}["{name}"]', f"{what} level {name}: the description must "
                                                    f"be text, not {_json_type(text)}")
        if not text.strip():
            raise check.refuse(f'{path}["{name}"]', f"{what} level {name}: the description is "
                                                    "empty")
        described[choice] = text.strip()
    return described


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _same(given: object, expected: object) -> bool:
    """Equal and of the same JSON type (JSON's true is not the number 1)."""
    return type(given) is type(expected) and given == expected


def _json_type(value: object) -> str:
    return {dict: "an object", list: "an array", str: "text", bool: "true or false",
            int: "a number", float: "a number", type(None): "null"}.get(type(value), "a value")
