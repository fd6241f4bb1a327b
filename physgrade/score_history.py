"""People's score history: where each row came from, and which rows are changes the project made.

The schema's triggers write a ``score_history`` row for every change of a person's score. A
row's ``source`` says where the change came from when it was not typed in this file: an import,
a merged pack, a settled conflict (the wording of each is here, once). A merge also brings the
pack's own history; where the project did not take the pack's value (the pack's side of a
conflict, waiting for a person), those rows are ``proposed``: they tell what the grader did, not
what the project holds. Replaying the other rows (each new value in id order, per person,
response, rubric and criterion) therefore gives the project's scores.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from physgrade.project import Project


def is_applied(alias: str = "h") -> str:
    """The SQL condition "history row ``alias`` is a change of this project's scores" (not a
    pack's proposal), e.g. for when the project last changed a score."""
    return f"NOT {alias}.proposed"


@contextmanager
def attributed(project: Project, source: str) -> Iterator[None]:
    """The history rows the triggers write during the block (inside the caller's transaction,
    so no one else's rows come between) say they came from ``source``. A block that wrote none
    (an import of questions, say) touches nothing."""
    conn = project.conn
    # A grade's scores and its step mark (a file of an older schema has no marks yet).
    tables = [name for (name,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN "
        "('score_history', 'step_mark_history') ORDER BY name")]
    last = {table: conn.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()[0]
            for table in tables}
    yield
    for table in tables:
        if conn.execute(f"SELECT max(id) > ? FROM {table}", (last[table],)).fetchone()[0]:
            conn.execute(f"UPDATE {table} SET source = ? WHERE id > ?", (source, last[table]))


def imported_from(file_name: str, import_id: int) -> str:
    """The source of grades imported from ``file_name`` (its ``imports`` row ``import_id``)."""
    return f"imported from {file_name} (import {import_id})"


def merged_from(file_name: str, pack_id: str) -> str:
    """The source of what a merge of the pack ``file_name`` (id ``pack_id``) brings."""
    return f"merged from {file_name} (pack {pack_id[:8]})"


def kept_from_pack(conflict_id: int, by: str, pack_file: str) -> str:
    """The source of the change a person made by keeping a pack's side of a conflict."""
    return f"conflict {conflict_id} resolved by {by}: kept {pack_file}"
