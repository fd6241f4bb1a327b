"""A kill -9 in the middle of an import leaves the project exactly as it was, and intact, and
no process of the killed command (import's parsing workers, the answer checkers and their
forkserver) lives on. SIGTERM stops a command as Ctrl+C does, saying what it kept, and no
process of it prints a traceback."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pytest

from corpus import write_corpus
from physgrade.answers import verify
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


# -- stopping a command: SIGTERM as Ctrl+C, and no traceback from any of its processes ----------

#: An answer checked in a moment: its result is printed soon after the checkers start.
FAST = {"gold": "1 m/s", "pred": "1 m/s"}
#: A terminal's Ctrl+C reaches every process of its foreground group; ``kill`` only the command.
STOPS = {"Ctrl+C": lambda process: os.killpg(process.pid, signal.SIGINT),
         "SIGTERM": lambda process: os.kill(process.pid, signal.SIGTERM)}


def answers_file(folder: Path, *answers: dict) -> Path:
    path = folder / "answers.jsonl"
    path.write_text("".join(json.dumps({"id": i, **answer}) + "\n"
                            for i, answer in enumerate(answers)))
    return path


def started(tmp_path: Path, *arguments: object) -> tuple[subprocess.Popen, Path]:
    """``physgrade ARGUMENTS`` in a process group of its own (as a terminal starts a command),
    with its own TMPDIR (returned), printing each line as it goes."""
    temporary = tmp_path / "tmp"
    temporary.mkdir(exist_ok=True)
    process = subprocess.Popen(
        [sys.executable, "-m", "physgrade.cli", *map(str, arguments)], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
        env={**os.environ, "TMPDIR": str(temporary), "PYTHONUNBUFFERED": "1"})
    return process, temporary


def importing_forkserver(root: int) -> bool:
    """Whether the forkserver below ``root`` imports its preloads: Python's handler of Ctrl+C,
    which raises KeyboardInterrupt, is in place (the forkserver ignores Ctrl+C afterwards)."""
    for pid in descendants(root):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        caught = int(status.split("SigCgt:")[1].split()[0], 16)
        if b"forkserver" in command and caught >> (signal.SIGINT - 1) & 1:
            return True
    return False


def wait_for(condition: Callable[[], object], process: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + 120
    while process.poll() is None and time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.01)
    pytest.fail(f"the command ended or stalled before {what}")


@needs_proc
@pytest.mark.parametrize("stop", STOPS)
@pytest.mark.parametrize("moment", ["starting", "checking"])
def test_a_stopped_answer_check_says_what_it_printed_and_no_process_prints_a_traceback(
        tmp_path, stop, moment):
    """Stopped while the forkserver imports sympy (before it ignores Ctrl+C itself), or while
    the checkers are busy: SIGTERM ends the command as Ctrl+C does, and neither it nor a checker
    nor the forkserver prints a traceback."""
    answers = answers_file(tmp_path, FAST, *[SLOW] * 8)
    process, _ = started(tmp_path, "check-answers", answers, "--workers", "2")
    if moment == "starting":
        wait_for(lambda: importing_forkserver(process.pid), process, "the forkserver started")
        printed = 0
    else:
        assert json.loads(process.stdout.readline())["id"] == 0
        printed = 1
    STOPS[stop](process)
    out, err = process.communicate(timeout=120)  # the pipes close when every process has ended
    printed += len(out.splitlines())
    assert process.returncode == 130
    assert err == (f"physgrade: cancelled; {printed} of 9 results printed\n" if printed
                   else "physgrade: cancelled, nothing changed\n")


def test_the_next_answer_check_removes_what_a_check_killed_with_all_its_processes_left(tmp_path):
    """Killed together (SIGKILL to the whole group), the command, its forkserver and checkers
    leave multiprocessing's folder behind, with nobody to remove it: the next check does."""
    process, temporary = started(tmp_path, "check-answers",
                                 answers_file(tmp_path, FAST, *[SLOW] * 4), "--workers", "2")
    assert json.loads(process.stdout.readline())["id"] == 0
    everything = descendants(process.pid)
    os.killpg(process.pid, signal.SIGKILL)
    process.communicate(timeout=120)
    assert_all_end(everything)
    assert list(temporary.glob("pymp-*")), "the killed command left no folder to remove"

    again = tmp_path / "again"
    again.mkdir()
    rerun = subprocess.run([sys.executable, "-m", "physgrade.cli", "check-answers",
                            str(answers_file(again, FAST))], capture_output=True, text=True,
                           env={**os.environ, "TMPDIR": str(temporary)}, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    assert not list(temporary.iterdir()), "what the killed command left is still there"


@pytest.mark.parametrize("stop", STOPS)
def test_a_stopped_verify_says_how_many_checks_it_stored_and_prints_no_traceback(
        tmp_path, stop):
    """Stopped once it has stored its first checks (it commits every 200), busy on slow ones."""
    questions = [{"id": "q-fast", "question": "How fast?", "answer": "1 m/s",
                  "answer_type": "NV", "unit": "m/s"},
                 {"id": "q-slow", "question": "What is it?", "answer": SLOW["gold"],
                  "answer_type": "EX"}]
    responses = [{"id": f"r-{i:04}", "question_id": "q-fast", "model": "m",
                  "response": "Final Answer: 1 m/s"} for i in range(400)]
    responses += [{"id": f"r-{i:04}", "question_id": "q-slow", "model": "m",
                   "response": f"Final Answer: ${SLOW['pred']}$"} for i in range(400, 420)]
    db = tmp_path / "study.physgrade"
    with Project.create(db) as project:
        for kind, records in (("questions", questions), ("responses", responses)):
            source = tmp_path / f"{kind}.jsonl"
            source.write_text("".join(json.dumps(record) + "\n" for record in records))
            import_file(project, source, kind)

    def stored() -> int:
        with Project.open(db) as project:
            return len(verify.assessed(project, verify.Settings()))

    process, _ = started(tmp_path, "verify", db, "--workers", "2")
    wait_for(lambda: stored() > 0, process, "the first checks were stored")
    STOPS[stop](process)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130
    assert err == (f"physgrade: cancelled; {stored():,} checks stored as the rater rules (a new "
                   "run checks only the rest)\n")
