"""The grading queue: every response as one light row, the filters over it, and where each
grader stopped.

The whole queue of a real project (58,000 responses) is read in one pass of indexed queries and
filtered in memory, so changing a filter or recording a score never goes back to the database
for the list. Only the text search reads the texts themselves.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from physgrade.changes import Changes
from physgrade.facets import by_question
from physgrade.project import Project, now_iso
from physgrade.raters import HUMAN, ensure_rater, is_named_person, is_person, person_id
from physgrade.rubric import rubric_for_kind
from physgrade.selection import RESPONSE_FACETS, shown, value_order

#: How far the grader has got with an item.
GRADED, STARTED, NOT_STARTED = "graded", "started", "not started"
MY_PROGRESS = (GRADED, STARTED, NOT_STARTED)
#: Whether other people have scored an item.
BY_OTHERS, BY_NO_OTHER = "graded by others", "by no other grader"
OTHERS_PROGRESS = (BY_OTHERS, BY_NO_OTHER)
COMPLIANT, NOT_COMPLIANT = "template-compliant", "not compliant"
COMPLIANCE = (COMPLIANT, NOT_COMPLIANT)
#: Whether an item is assigned to the grader (see :mod:`physgrade.team.assign`).
ASSIGNED, NOT_ASSIGNED = "assigned to me", "not assigned to me"
ASSIGNMENT = (ASSIGNED, NOT_ASSIGNED)


@dataclass(slots=True)
class QueueItem:
    """One response in the queue. ``scored`` (by this grader) changes as they grade. Its
    response facets are the attributes named as the facets are (:mod:`physgrade.selection`);
    ``fields``: its question's values of the project's declared facets (:mod:`physgrade.facets`),
    one dict shared by the responses of a question."""

    response_id: str
    question_id: str
    model: str
    topic: str | None
    kind: str
    bloom: str | None
    compliant: bool
    criteria: int
    scored: int
    others: bool
    assigned: bool = False  # to this grader
    samples: tuple[str, ...] = ()  # the estimation samples holding it, oldest first
    fields: dict[str, str | None] = field(default_factory=dict)

    @property
    def progress(self) -> str:
        if self.scored >= self.criteria:
            return GRADED
        return STARTED if self.scored else NOT_STARTED


@dataclass(frozen=True, slots=True)
class QueueFilter:
    """Which items to show. Each facet is a set of accepted values (empty: any); the facets
    combine with AND, the values within one facet with OR. The response facets are those of
    :data:`physgrade.selection.RESPONSE_FACETS`, a missing value shown as
    :data:`~physgrade.selection.NONE`, and ``fields``, the declared facets in use as (name,
    values) by name (as a :class:`~physgrade.selection.ResponseFilter` holds them); the others
    are the queue's own."""

    models: frozenset[str] = frozenset()
    topics: frozenset[str] = frozenset()
    kinds: frozenset[str] = frozenset()
    bloom: frozenset[str] = frozenset()
    compliance: frozenset[str] = frozenset()
    mine: frozenset[str] = frozenset()
    others: frozenset[str] = frozenset()
    assignment: frozenset[str] = frozenset()
    samples: frozenset[str] = frozenset()  # estimation samples, by name
    fields: tuple[tuple[str, frozenset[str]], ...] = ()
    search: str = ""
    matching: frozenset[str] | None = field(default=None, compare=False)  # ids the search found

    def matches(self, item: QueueItem) -> bool:
        return ((not self.models or shown(item.model) in self.models)
                and (not self.topics or shown(item.topic) in self.topics)
                and (not self.kinds or shown(item.kind) in self.kinds)
                and (not self.bloom or shown(item.bloom) in self.bloom)
                and (not self.compliance
                     or (COMPLIANT if item.compliant else NOT_COMPLIANT) in self.compliance)
                and (not self.mine or item.progress in self.mine)
                and (not self.others
                     or (BY_OTHERS if item.others else BY_NO_OTHER) in self.others)
                and (not self.assignment
                     or (ASSIGNED if item.assigned else NOT_ASSIGNED) in self.assignment)
                and (not self.samples or not self.samples.isdisjoint(item.samples))
                and all(shown(item.fields[name]) in values for name, values in self.fields
                        if name in item.fields)  # a facet undeclared since narrows nothing
                and (self.matching is None or item.response_id in self.matching))

    def to_json(self) -> str:
        data = {key: sorted(value) if isinstance(value, frozenset) else value
                for key, value in asdict(self).items() if key not in ("matching", "fields")}
        data["fields"] = {name: sorted(values) for name, values in self.fields}
        return json.dumps({key: value for key, value in data.items() if value})

    @classmethod
    def from_json(cls, text: str | None) -> "QueueFilter":
        """A stored filter; anything unreadable gives the empty filter rather than an error."""
        try:
            data = json.loads(text or "{}")
            facets: dict[str, Any] = {key: frozenset(value) if isinstance(value, list) else str(value)
                                      for key, value in data.items() if key in _STORED - {"fields"}}
            chosen = data.get("fields") or {}
            return cls(**facets, fields=tuple((str(name), frozenset(map(str, values)))
                                              for name, values in sorted(chosen.items())))
        except (ValueError, TypeError, AttributeError):  # AttributeError: JSON but not an object
            return cls()

    def with_search(self, project: Project, text: str) -> "QueueFilter":
        """This filter with the text search set (and run) to ``text``."""
        text = text.strip()
        return replace(self, search=text, matching=search(project, text) if text else None)


#: The fields of a stored filter (the search's results are not stored).
_STORED = {f.name for f in fields(QueueFilter)} - {"matching"}


def load_queue(project: Project, grader: str) -> list[QueueItem]:
    """Every response, ordered so a question's responses sit together, with ``grader``'s
    progress on each, whether it is assigned to them and the estimation samples holding it."""
    conn = project.conn
    others: set[str] = set()
    me = person_id(project, grader)
    my_id = me if me is not None else -1
    mine = {(response, rubric): count for response, rubric, count in conn.execute(
        "SELECT response_id, rubric, COUNT(*) FROM scores WHERE rater_id = ? "
        "GROUP BY response_id, rubric", (my_id,))}
    assigned = {r for (r,) in conn.execute(
        "SELECT response_id FROM assignments WHERE grader_id = ?", (my_id,))}
    samples: dict[str, list[str]] = {}
    for rid, name in conn.execute("SELECT i.response_id, s.name FROM estimation_sample_items i "
                                  "JOIN estimation_samples s ON s.id = i.sample_id ORDER BY s.id"):
        samples.setdefault(rid, []).append(name)
    for (other,) in conn.execute(f"SELECT r.id FROM raters r WHERE {is_person()} AND r.id != ?",
                                 (my_id,)):
        others.update(r for (r,) in conn.execute(
            "SELECT DISTINCT response_id FROM scores WHERE rater_id = ?", (other,)))
    sizes = {kind: (rubric_for_kind(kind).key, len(rubric_for_kind(kind).criteria))
             for kind in ("problem", "conceptual")}
    fields_of = by_question(project)
    items = []
    for rid, qid, model, topic, kind, bloom, compliant in conn.execute(
            "SELECT r.id, r.question_id, r.model, q.topic, q.kind, q.bloom_cognitive, "
            "r.compliant FROM responses r JOIN questions q ON q.id = r.question_id "
            "ORDER BY r.question_id, r.model, r.id"):
        rubric, size = sizes[kind]
        items.append(QueueItem(rid, qid, model, topic, kind, bloom, bool(compliant), size,
                               mine.get((rid, rubric), 0), rid in others, rid in assigned,
                               tuple(samples.get(rid, ())), fields_of.get(qid, {})))
    return items



def search(project: Project, text: str) -> frozenset[str]:
    """Ids of responses whose id, question id, question or response text contains ``text``
    (case-insensitive for ASCII letters)."""
    pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    return frozenset(r for (r,) in project.conn.execute(
        "SELECT r.id FROM responses r JOIN questions q ON q.id = r.question_id "
        "WHERE r.id LIKE :p ESCAPE '\\' OR r.question_id LIKE :p ESCAPE '\\' "
        "OR r.response LIKE :p ESCAPE '\\' OR q.question LIKE :p ESCAPE '\\'", {"p": pattern}))


def facet_values(items: list[QueueItem]) -> dict[str, list[str]]:
    """The values each data facet takes in this project, for the filter menus (no estimation
    sample: no values for ``samples``)."""
    return {**{facet.key: sorted({shown(getattr(item, facet.name)) for item in items})
               for facet in RESPONSE_FACETS},
            "compliance": list(COMPLIANCE), "mine": list(MY_PROGRESS),
            "others": list(OTHERS_PROGRESS), "assignment": list(ASSIGNMENT),
            "samples": sorted({name for item in items for name in item.samples})}


def field_values(items: list[QueueItem]) -> dict[str, list[str]]:
    """The values each declared facet takes among ``items``, for the filter menus (by name, in
    the order the items hold them: the order they were declared)."""
    names = dict.fromkeys(name for item in items[:1] for name in item.fields)
    return {name: sorted({shown(item.fields.get(name)) for item in items}, key=value_order)
            for name in names}


@dataclass(frozen=True, slots=True)
class Position:
    """Where a grader stopped: the response shown and the filter in use."""

    response_id: str | None
    filter: QueueFilter


def load_position(project: Project, grader: str) -> Position:
    """Where ``grader`` stopped; one who never moved starts on their assignment if they have
    one (a pack's queue is its grader's assignment), else on the whole queue."""
    row = project.conn.execute(
        "SELECT p.response_id, p.filter FROM grader_positions p JOIN raters r ON r.id = p.rater_id "
        f"WHERE {is_named_person()}", (grader,)).fetchone()
    if row:
        return Position(row[0], QueueFilter.from_json(row[1]))
    has_assignment = project.conn.execute(
        "SELECT EXISTS (SELECT 1 FROM assignments a JOIN raters r ON r.id = a.grader_id "
        f"WHERE {is_named_person()})", (grader,)).fetchone()[0]
    return Position(None, QueueFilter(assignment=frozenset({ASSIGNED})) if has_assignment
                    else QueueFilter())


def save_position(project: Project, grader: str, position: Position) -> Changes:
    """Remember where ``grader`` is, committed at once (the app calls this on every move).
    This is the grader's own state, which no view shows: the changes name at most the rater
    made on a first move."""
    with project.transaction():
        rater, changes = ensure_rater(project, grader, HUMAN)
        project.conn.execute(
            "INSERT INTO grader_positions (rater_id, response_id, filter, updated_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (rater_id) DO UPDATE SET "
            "response_id = excluded.response_id, filter = excluded.filter, "
            "updated_at = excluded.updated_at",
            (rater, position.response_id, position.filter.to_json(), now_iso()))
    return changes
