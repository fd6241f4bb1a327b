"""Failure taxonomies: the named kinds of error a first wrong step can be put in.

Two are built in. The P-REFS one has a category per stage of the rubric, so a first wrong step
put under "wrong model" can be held against the same rater's MOD score (see
:func:`physgrade.step_marks.inconsistencies`). The Physics-R1 one is the nine mutually exclusive
categories of that study's failure-mode appendix (H.1), described in our own words.

A project may reword a built-in taxonomy or add its own (table ``taxonomies``). Like the rubric's
level texts (:mod:`physgrade.levels`), taxonomies travel as one JSON document: :func:`document`
is what ``physgrade taxonomy DB --json`` prints and :func:`set_taxonomies` stores an edited copy.
A built-in taxonomy keeps its category keys (marks and judges name them); its texts may change.
The taxonomy marks use unless told otherwise is the project setting ``taxonomy``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from physgrade.changes import NOTHING, Changes, RecordKind
from physgrade.formats import FormatError
from physgrade.project import Project, ProjectError
from physgrade.rubric import RUBRICS


@dataclass(frozen=True, slots=True)
class Category:
    """One kind of error; ``criteria`` are the rubric criteria (of any rubric) it belongs to."""

    key: str
    title: str
    description: str
    criteria: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Taxonomy:
    """A named set of categories, in the order they are offered."""

    name: str
    title: str
    description: str
    categories: tuple[Category, ...]

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(category.key for category in self.categories)

    def category(self, key: str) -> Category:
        """The category ``key``; :class:`KeyError` naming the taxonomy's keys if unknown."""
        for category in self.categories:
            if category.key == key:
                return category
        raise KeyError(f"{self.name} has no category {key!r} (it has {', '.join(self.keys)})")


BUILT_IN: dict[str, Taxonomy] = {taxonomy.name: taxonomy for taxonomy in (
    Taxonomy("p-refs", "P-REFS stages",
             "Where the first wrong step went wrong, by the stage of the P-REFS rubric it "
             "belongs to: a mark here can be checked against the same rater's stage scores.", (
                 Category("misread", "Misread problem",
                          "A given, a condition or the unknown is read wrongly.", ("INT", "SET")),
                 Category("wrong_model", "Wrong model",
                          "The idealisation or set-up does not fit the situation (a closed "
                          "pipe treated as open, friction ignored where it matters).", ("MOD",)),
                 Category("wrong_concept", "Wrong principle",
                          "The physics law or principle chosen is not the one the problem "
                          "needs.", ("CON",)),
                 Category("misapplied", "Principle misapplied",
                          "The right principle, used wrongly: a wrong formula, quantities in "
                          "the wrong roles, a missing term.", ("APP", "EXE")),
                 Category("calculation", "Calculation error",
                          "An arithmetic or algebraic slip in an otherwise sound step.",
                          ("CAL", "EXE")),
                 Category("units", "Units or consistency",
                          "Units, dimensions or a carried value go wrong between steps.",
                          ("COR",)),
                 Category("incoherent", "Incoherent step",
                          "The step does not follow from the ones before: a leap, or a "
                          "contradiction of earlier work.", ("COH",)),
                 Category("final_answer", "Final answer",
                          "Every step holds, but the final answer stated is not what they "
                          "give, or misses its unit or the option asked for.", ("ANS",)))),
    Taxonomy("physics-r1", "Physics-R1 failure modes",
             "The nine mutually exclusive failure categories of the Physics-R1 study "
             "(appendix H.1), for comparing with its tally.", (
                 Category("wrong_subpart", "Wrong sub-question",
                          "Answers a neighbouring part of a multi-part problem instead of the "
                          "one asked."),
                 Category("missing_physics", "Missing physics",
                          "Wrong physical model, law or geometry; an essential effect left "
                          "out."),
                 Category("calc_error", "Calculation slip",
                          "The approach is right; a numerical slip puts the result off by a "
                          "small factor."),
                 Category("different_question", "Different question",
                          "The reasoning belongs to another problem than the one posed."),
                 Category("valid_partial", "Valid but partial",
                          "A right approach carried only part of the way, or with a slip: "
                          "partial credit."),
                 Category("symbolic_vs_numeric", "Symbolic or numeric mix-up",
                          "Gives a formula where a number was asked for, or the reverse."),
                 Category("magnitude_error", "Order of magnitude",
                          "The expression is right; the value is off by powers of ten."),
                 Category("sign_error", "Sign error",
                          "Right magnitude with the wrong sign or direction."),
                 Category("diagram_misread", "Diagram misread",
                          "A quantity, direction or arrangement taken wrongly from the "
                          "figure."))),
)}
#: The taxonomy a project uses until its setting ``taxonomy`` names another.
DEFAULT = "p-refs"
#: The project setting naming the taxonomy marks use by default.
SETTING = "taxonomy"
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")
_CRITERIA = {criterion.key for rubric in RUBRICS.values() for criterion in rubric.criteria}


def taxonomies(project: Project) -> dict[str, Taxonomy]:
    """The built-in taxonomies as the project words them, then its own, by name."""
    found = dict(BUILT_IN)
    for name, title, description, categories in project.conn.execute(
            "SELECT name, title, description, categories FROM taxonomies ORDER BY name"):
        found[name] = Taxonomy(name, title, description, tuple(
            Category(c["key"], c["title"], c.get("description", ""), tuple(c.get("criteria", ())))
            for c in json.loads(categories)))
    return found


def taxonomy(project: Project, name: str | None = None) -> Taxonomy:
    """The taxonomy ``name``, or the project's default one; refuses an unknown name."""
    chosen = name or project.setting(SETTING) or DEFAULT
    known = taxonomies(project)
    if chosen not in known:
        raise ProjectError(f"no taxonomy {chosen!r} (there are: {', '.join(known)})")
    return known[chosen]


def document(project: Project) -> dict[str, Any]:
    """Every taxonomy with its categories, and the default, as one JSON object."""
    return {"default": taxonomy(project).name, "taxonomies": [
        {"name": t.name, "title": t.title, "description": t.description,
         "built_in": t.name in BUILT_IN,
         "categories": [{"key": c.key, "title": c.title, "description": c.description,
                         "criteria": list(c.criteria)} for c in t.categories]}
        for t in taxonomies(project).values()]}


def load_document(path: str | Path) -> object:
    """Read a taxonomy document, refusing what is not JSON with its line."""
    source = str(path)
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise FormatError(source, None, None, f"cannot be read: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise FormatError(source, exc.lineno, None, f"not JSON: {exc.msg}") from None


def set_taxonomies(project: Project, data: object, source: str) -> Changes:
    """Store the taxonomies of a document (as :func:`document` writes it): each one named
    replaces the project's wording of it; a built-in one keeps its keys. ``default`` chooses the
    default taxonomy. Everything is checked first; a refusal names ``source`` and the place in
    the document, and changes nothing."""
    checked, default = _check(data, source, project)
    if not checked and default is None:
        return NOTHING
    with project.transaction():
        for found in checked:
            project.conn.execute(
                "INSERT INTO taxonomies (name, title, description, categories) VALUES "
                "(?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET title = excluded.title, "
                "description = excluded.description, categories = excluded.categories",
                (found.name, found.title, found.description, json.dumps(
                    [{"key": c.key, "title": c.title, "description": c.description,
                      "criteria": list(c.criteria)} for c in found.categories])))
        if default is not None:
            project.put_setting(SETTING, None if default == DEFAULT else default)
    return Changes.of(RecordKind.TAXONOMIES)


def _check(data: object, source: str, project: Project) -> tuple[list[Taxonomy], str | None]:
    def refuse(where: str, message: str) -> FormatError:
        return FormatError(source, None, where, message)

    if not isinstance(data, dict) or not isinstance(data.get("taxonomies", []), list):
        raise refuse("taxonomies", "a taxonomy document is an object with a list "
                     "'taxonomies' (see physgrade taxonomy DB --json)")
    found: list[Taxonomy] = []
    for n, entry in enumerate(data.get("taxonomies", [])):
        where = f"taxonomies[{n}]"
        if not isinstance(entry, dict):
            raise refuse(where, "each taxonomy is an object")
        name = entry.get("name")
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise refuse(f"{where}.name", "a name of lower-case letters, digits, '-' and '_'")
        texts = {}
        for field in ("title", "description"):
            value = entry.get(field, "" if field == "description" else None)
            if not isinstance(value, str) or (field == "title" and not value.strip()):
                raise refuse(f"{where}.{field}", "a text is needed" if field == "title"
                             else "must be a text")
            texts[field] = value.strip()
        items = entry.get("categories")
        if not isinstance(items, list) or not items:
            raise refuse(f"{where}.categories", "a non-empty list of categories")
        categories = [_category(item, f"{where}.categories[{k}]", refuse)
                      for k, item in enumerate(items)]
        keys = [c.key for c in categories]
        repeated = sorted({key for key in keys if keys.count(key) > 1})
        if repeated:
            raise refuse(f"{where}.categories", f"category {repeated[0]!r} is given twice")
        if name in BUILT_IN and set(keys) != set(BUILT_IN[name].keys):
            raise refuse(f"{where}.categories", f"{name} is built in: its categories stay "
                         f"{', '.join(BUILT_IN[name].keys)} (their texts may change)")
        found.append(Taxonomy(name, texts["title"], texts["description"], tuple(categories)))
    default = data.get("default")
    if default is not None:
        names = {*taxonomies(project), *(t.name for t in found)}
        if not isinstance(default, str) or default not in names:
            raise refuse("default", f"names no taxonomy (there are: {', '.join(sorted(names))})")
    return found, default


def _category(item: object, where: str, refuse: Any) -> Category:
    if not isinstance(item, dict):
        raise refuse(where, "each category is an object with key, title, description")
    key = item.get("key")
    if not isinstance(key, str) or not _NAME.fullmatch(key):
        raise refuse(f"{where}.key", "a key of lower-case letters, digits, '-' and '_'")
    title, description = item.get("title"), item.get("description", "")
    if not isinstance(title, str) or not title.strip():
        raise refuse(f"{where}.title", "a text is needed")
    if not isinstance(description, str):
        raise refuse(f"{where}.description", "must be a text")
    criteria = item.get("criteria", [])
    if not isinstance(criteria, list) or not all(isinstance(c, str) and c in _CRITERIA
                                                  for c in criteria):
        raise refuse(f"{where}.criteria", f"a list of rubric criteria ({', '.join(sorted(_CRITERIA))})")
    return Category(key, title.strip(), description.strip(), tuple(criteria))
