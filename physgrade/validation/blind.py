"""Blind names for judges: reviewers see "Judge A", never which model produced a verdict.

A judge's alias is given on first use, at random among the judges named at that moment, and
never changes afterwards: reports reveal the mapping, and reviewers' work stays tied to it.
"""

from __future__ import annotations

import random
import sqlite3
from typing import Iterable

from physgrade.project import Project, ProjectError
from physgrade.raters import HUMAN

PREFIX = "Judge "


def letters(index: int) -> str:
    """The letters of the ``index``-th alias (0 -> "A", 25 -> "Z", 26 -> "AA", 27 -> "AB")."""
    if index < 0:
        raise ValueError("an alias index is never negative")
    text = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        text = chr(ord("A") + rest) + text
    return text


def aliases(project: Project, judge_ids: Iterable[int]) -> dict[int, str]:
    """The blind name of each judge, giving the next free letters to judges that have none
    (in a random order, committed at once)."""
    wanted = list(dict.fromkeys(judge_ids))
    known = stored(project.conn, wanted)
    if len(known) == len(wanted):
        return {judge: known[judge] for judge in wanted}
    with project.transaction():
        return assign(project.conn, wanted)


def stored(conn: sqlite3.Connection, judge_ids: Iterable[int]) -> dict[int, str]:
    """The aliases already given to these judges (none are given here)."""
    ids = list(judge_ids)
    if not ids:
        return {}
    return dict(conn.execute(f"SELECT judge_id, alias FROM judge_aliases WHERE judge_id IN "
                             f"({', '.join('?' * len(ids))})", ids))


def assign(conn: sqlite3.Connection, judge_ids: Iterable[int]) -> dict[int, str]:
    """Give aliases to the judges without one, inside the caller's transaction; returns the
    alias of every judge asked about."""
    wanted = list(dict.fromkeys(judge_ids))
    _check_judges(conn, wanted)
    known = stored(conn, wanted)
    missing = [judge for judge in wanted if judge not in known]
    if missing:
        # Random, so that the order judges were named in (or their ids) gives nothing away.
        random.SystemRandom().shuffle(missing)
        used = {alias for (alias,) in conn.execute("SELECT alias FROM judge_aliases")}
        index = 0
        for judge in missing:
            while PREFIX + letters(index) in used:
                index += 1
            alias = PREFIX + letters(index)
            used.add(alias)
            conn.execute("INSERT INTO judge_aliases (judge_id, alias) VALUES (?, ?)",
                         (judge, alias))
            known[judge] = alias
    return {judge: known[judge] for judge in wanted}


def _check_judges(conn: sqlite3.Connection, judge_ids: list[int]) -> None:
    if not judge_ids:
        return
    kinds = dict(conn.execute(f"SELECT id, kind FROM raters WHERE id IN "
                              f"({', '.join('?' * len(judge_ids))})", judge_ids))
    unknown = [str(judge) for judge in judge_ids if judge not in kinds]
    if unknown:
        raise ProjectError(f"no rater with id {', '.join(unknown)} in this project")
    people = [str(judge) for judge in judge_ids if kinds[judge] == HUMAN]
    if people:
        raise ProjectError(f"rater {', '.join(people)} is a person, not a judge; only judges "
                           "get blind names")
