"""A kill -9 in the middle of a merge leaves the project exactly as it was, and intact; the same
merge then runs to the end."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench_merge import grade
from physgrade.importer import import_file
from physgrade.project import Project
from physgrade.team import assign
from physgrade.team.merge import merge
from physgrade.team.packs import make_packs

GRADERS = ("ann", "bob", "cem")
#: Responses per grader: packs big enough that merging them takes a second or two.
PER_GRADER = 6000
#: How far the write-ahead log grows before the kill: the merge is writing its transaction.
GROWN = 4_000_000


def study(folder: Path) -> tuple[Path, list[Path]]:
    """A project of short responses shared among three graders, and their packs, all graded."""
    count = PER_GRADER * len(GRADERS)
    questions, responses = folder / "questions.jsonl", folder / "responses.jsonl"
    questions.write_text("".join(
        json.dumps({"id": f"q-{i}", "question": "How fast is it?", "answer": "1 m/s"}) + "\n"
        for i in range(count // 6)))
    responses.write_text("".join(
        json.dumps({"id": f"r-{i}", "question_id": f"q-{i % (count // 6)}",
                    "model": f"model-{i % 3}", "response": "Final Answer: 1 m/s"}) + "\n"
        for i in range(count)))
    db, packs = folder / "study.physgrade", folder / "packs"
    packs.mkdir()
    with Project.create(db) as project:
        import_file(project, questions, "questions")
        import_file(project, responses, "responses")
        assign.apply(project, assign.plan(project, GRADERS, 0.0, seed=1))
        made, _ = make_packs(project, packs)
    for pack in made:
        grade(pack.path, pack.grader)
    return db, [pack.path for pack in made]


def state(db: Path) -> tuple[int, ...]:
    """What a merge changes, counted."""
    with Project.open(db) as project:
        assert project.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return tuple(project.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                     for table in ("scores", "assessments", "score_history", "merges",
                                   "merge_conflicts", "raters")) + project.conn.execute(
            "SELECT sum(history_merged), (SELECT count(*) FROM pack_base) FROM packs").fetchone()


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="no SIGKILL on this system")
def test_sigkill_half_way_through_a_merge_leaves_the_project_unchanged(tmp_path):
    db, packs = study(tmp_path)
    before = state(db)
    wal = db.with_name(db.name + "-wal")
    start_size = wal.stat().st_size if wal.exists() else 0
    process = subprocess.Popen([sys.executable, "-m", "physgrade.cli", "merge", str(db),
                                *map(str, packs)])
    deadline = time.monotonic() + 120
    # Wait until the merge is writing its transaction (the write-ahead log grows), then kill it.
    while time.monotonic() < deadline and process.poll() is None:
        if wal.exists() and wal.stat().st_size > start_size + GROWN:
            break
        time.sleep(0.005)
    assert process.poll() is None, "the merge finished before it could be killed"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert wal.stat().st_size > start_size + GROWN  # it really was half-way

    assert state(db) == before
    assert before[3] == 0  # no merges row
    # Nothing is left locked or half-done: the same merge now runs to the end.
    with Project.open(db) as project:
        result = merge(project, packs)
    assert [pack.applied for pack in result.packs] == [PER_GRADER * 8] * len(GRADERS)
    assert state(db)[3] == len(GRADERS)
