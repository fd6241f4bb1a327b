"""A kill -9 in the middle of a merge leaves the project exactly as it was, and intact; the same
merge then runs to the end. A pack cut short leaves no file behind: stopped, it removes its part
at once; killed, the next pack into that folder removes it, and never the part of a live run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from contextlib import suppress
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
        assign.apply(project, assign.plan(project, GRADERS, 0.0, seed=1,
                                          include_graded=True))
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


# -- a pack cut short leaves nothing behind ----------------------------------------------------

#: Responses of a pack big enough that writing it takes a moment (2 KB each, about 80 MB).
PACKED = 20000
#: How big the part file grows before the pack is stopped: it is writing the pack's rows.
FILLING = 16_000_000
#: A terminal's Ctrl+C reaches every process of its foreground group; ``kill`` only the command.
STOPS = {"Ctrl+C": lambda process: os.killpg(process.pid, signal.SIGINT),
         "SIGTERM": lambda process: os.kill(process.pid, signal.SIGTERM)}
#: A run still making a pack: it holds a part in the folder given until told to end.
MAKING = """
import sys
from pathlib import Path
from physgrade.project import Project
from physgrade.team.parts import part_for
with part_for(Path(sys.argv[1])) as part:
    Project.create(part).close()
    print(part, flush=True)
    sys.stdin.readline()
"""


def one_graders_study(folder: Path, responses: int = PACKED) -> Path:
    """A project whose responses are all assigned to ann, and an empty folder for packs."""
    questions, answers = folder / "questions.jsonl", folder / "responses.jsonl"
    questions.write_text("".join(json.dumps({"id": f"q-{i}", "question": "How fast is it?",
                                             "answer": "1 m/s"}) + "\n" for i in range(100)))
    answers.write_text("".join(
        json.dumps({"id": f"r-{i}", "question_id": f"q-{i % 100}", "model": "m",
                    "response": "Final Answer: 1 m/s\n" + "x" * 2000}) + "\n"
        for i in range(responses)))
    db = folder / "study.physgrade"
    with Project.create(db) as project:
        import_file(project, questions, "questions")
        import_file(project, answers, "responses")
        assign.apply(project, assign.plan(project, ["ann"], 0.0, seed=1,
                                          include_graded=True))
    (folder / "packs").mkdir()
    return db


def pack(db: Path, out: Path, **options) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "physgrade.cli", "pack", str(db),
                             "--grader", "ann", "--out", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **options)


def filling(process: subprocess.Popen, folder: Path) -> None:
    """Wait until the pack's part file has grown past :data:`FILLING`."""
    deadline = time.monotonic() + 120
    while process.poll() is None and time.monotonic() < deadline:
        for part in folder.glob(".*.part"):
            with suppress(FileNotFoundError):  # renamed onto the pack meanwhile
                if part.stat().st_size > FILLING:
                    return
        time.sleep(0.005)
    pytest.fail("the pack ended before it could be stopped")


def packs_made(db: Path) -> int:
    with Project.open(db) as project:
        return project.conn.execute("SELECT count(*) FROM packs").fetchone()[0]


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="no SIGKILL on this system")
def test_the_next_pack_removes_what_a_pack_killed_half_way_left(tmp_path):
    db = one_graders_study(tmp_path)
    folder, out = tmp_path / "packs", tmp_path / "packs" / "ann.physgrade"
    process = pack(db, out)
    filling(process, folder)
    os.kill(process.pid, signal.SIGKILL)
    process.communicate(timeout=120)
    assert list(folder.glob(".*.part")), "the killed pack left no part to remove"

    again = pack(db, out)
    assert again.communicate(timeout=120)[1] == ""
    assert again.returncode == 0
    assert [path.name for path in folder.iterdir()] == ["ann.physgrade"]
    assert packs_made(db) == 1


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="no SIGKILL on this system")
@pytest.mark.parametrize("stop", STOPS)
def test_a_pack_stopped_half_way_removes_its_part_at_once(tmp_path, stop):
    db = one_graders_study(tmp_path)
    folder = tmp_path / "packs"
    process = pack(db, folder / "ann.physgrade", start_new_session=True)
    filling(process, folder)
    STOPS[stop](process)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130
    assert err == "physgrade: cancelled, nothing changed\n"
    assert list(folder.iterdir()) == []
    assert packs_made(db) == 0


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="no SIGKILL on this system")
def test_a_pack_leaves_the_part_of_a_run_still_going_and_removes_it_once_that_run_is_killed(
        tmp_path):
    db = one_graders_study(tmp_path, responses=10)
    folder = tmp_path / "packs"
    making = subprocess.Popen([sys.executable, "-c", MAKING, str(folder / "bob.physgrade")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    part = Path(making.stdout.readline().strip())
    assert part.parent == folder and part.exists(), "the other run made no part"

    first = pack(db, folder / "ann.physgrade")
    assert first.communicate(timeout=120) == ("pack for ann: 10 responses (10 questions), "
                                              f"blind, written to {folder / 'ann.physgrade'}\n", "")
    assert part.exists(), "the part of a run still going was removed"

    os.kill(making.pid, signal.SIGKILL)
    making.communicate(timeout=120)
    second = pack(db, folder / "ann-2.physgrade")
    second.communicate(timeout=120)
    assert second.returncode == 0
    assert sorted(path.name for path in folder.iterdir()) == ["ann-2.physgrade", "ann.physgrade"]
