"""A kill -9 in the middle of an import leaves the project exactly as it was, and intact, and
no process of the killed command (import's parsing workers, the answer checkers and their
forkserver) lives on."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from corpus import write_corpus
from physgrade.importer import import_file
from physgrade.project import Project

#: Keeps sympy busy far longer than the test waits (see tests/test_answers_sandbox.py).
SLOW = {"gold": r"\int_0^{1} \sin(a/x^{9})^{98} dx", "pred": r"\int_0^{1} \sin(a/x^{9})^{99} dx",
        "type": "EX"}
#: Seconds the processes of a killed command have to go.
GONE_WITHIN = 5

needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads the process table")


def processes() -> dict[int, tuple[int, str, int]]:
    """pid -> (parent pid, state, start time) of every process, read from /proc."""
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            table[int(entry)] = (int(fields[1]), fields[0], int(fields[19]))
    return table


def descendants(root: int) -> dict[int, int]:
    """pid -> start time of every living process below ``root`` (children, their children...)."""
    table = processes()
    found, frontier = {}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, (ppid, state, started) in table.items():
            if ppid == parent and state not in "ZX" and pid not in found:
                found[pid] = started
                frontier.append(pid)
    return found


def still_alive(recorded: dict[int, int]) -> list[int]:
    """The recorded processes still running (the same start time: not a reused pid; zombies
    count as gone, for a container's first process may never reap them)."""
    table = processes()
    return [pid for pid, started in recorded.items()
            if pid in table and table[pid][2] == started and table[pid][1] not in "ZX"]


def assert_all_end(recorded: dict[int, int]) -> None:
    deadline = time.monotonic() + GONE_WITHIN
    while still_alive(recorded) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = still_alive(recorded)
    for pid in left:  # clean up after a failure: the processes would otherwise run for minutes
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes of the killed command live on: {left}"


@needs_proc
def test_sigkill_half_way_through_an_import_leaves_the_project_unchanged_and_no_worker(tmp_path):
    questions, responses = write_corpus(tmp_path / "data", n_questions=500, n_responses=12000)
    db = tmp_path / "study.physgrade"
    with Project.create(db) as project:
        import_file(project, questions, "questions")
    wal = db.with_name(db.name + "-wal")
    start_size = wal.stat().st_size if wal.exists() else 0
    process = subprocess.Popen([sys.executable, "-m", "physgrade.cli", "import", str(db),
                                str(responses), "--kind", "responses"])
    deadline = time.monotonic() + 120
    # Wait until the import is writing rows (the write-ahead log grows), then kill it.
    while time.monotonic() < deadline and process.poll() is None:
        if wal.exists() and wal.stat().st_size > start_size + 4_000_000:
            break
        time.sleep(0.005)
    assert process.poll() is None, "the import finished before it could be killed"
    workers = descendants(process.pid)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert wal.stat().st_size > start_size + 4_000_000  # it really was half-way
    assert workers, "the import parsed without worker processes"
    assert_all_end(workers)

    with Project.open(db) as project:
        conn = project.conn
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 0
        assert conn.execute("SELECT kind FROM imports").fetchall() == [("questions",)]
        assert conn.execute("SELECT COUNT(*) FROM questions").fetchone()[0] == 500
        # Nothing is left locked: the same import now runs to the end.
        assert import_file(project, responses, "responses").added == 12000


@needs_proc
def test_sigkill_in_the_middle_of_answer_checks_leaves_no_checker_or_forkserver(tmp_path):
    """The checkers are grandchildren (forked by multiprocessing's forkserver), busy in sympy
    when their caller is killed: they, the forkserver and the resource tracker all end, and the
    folder of the forkserver's socket goes too."""
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"id": i, **SLOW}) + "\n" for i in range(8)))
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    process = subprocess.Popen([sys.executable, "-m", "physgrade.cli", "check-answers",
                                str(answers), "--workers", "2", "--out", str(tmp_path / "out")],
                               stderr=subprocess.DEVNULL, env={**os.environ, "TMPDIR": str(temporary)})
    deadline = time.monotonic() + 60
    checkers: dict[int, int] = {}
    while time.monotonic() < deadline and process.poll() is None:
        below = descendants(process.pid)
        table = processes()
        checkers = {pid: started for pid, started in below.items()
                    if table.get(pid, (0,))[0] in below}  # a child of the forkserver
        if len(checkers) >= 2:
            break
        time.sleep(0.02)
    assert process.poll() is None and len(checkers) >= 2, "no checkers started"
    time.sleep(0.5)  # each has its first slow check (the deadline is 2 s)
    everything = descendants(process.pid)
    assert set(checkers) <= set(everything), "a checker ended before the kill"
    assert list(temporary.iterdir()), "the forkserver's socket is not in TMPDIR"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert_all_end(everything)
    assert not list(temporary.rglob("*")), "the killed command left files behind"
