"""Grading workbench speed on a project of the study's real size.

    python benchmarks/bench_workbench.py [--responses 58000] [--moves 200] [--keep FOLDER]

Builds a 6,000-question, 58,000-response project in which two judges have scored every
response and two people have graded part of it, then starts the app as a user would (a new
process) and measures:

* start-up: from launching the process to the first response rendered (target < 2 s);
* next item: from the key press to the next response rendered, reading, panel and compare
  strip included, over ``--moves`` presses of the Right arrow with a 300 ms look at each
  item (target p95 <= 100 ms), and again with the key held down (no pause; reported);
* scoring: from a digit key to the score committed and shown (no target; reported).

Without a display it runs itself under ``xvfb-run``. Building the project takes minutes;
``--keep FOLDER`` builds it there once and runs later measurements on a fresh copy of it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus import write_corpus
from physgrade.importer import import_file
from physgrade.project import Project
from physgrade.queue import Position, QueueFilter, save_position
from physgrade.raters import HUMAN, LLM, rater_id
from physgrade.rubric import CONCEPTUAL, PREFS

GRADER = "bench-grader"
READING_PAUSE_MS = 300  # between presses: the shortest look a grader gives an item
CHILD = r"""
import sys, time, json
started = time.perf_counter()
from pathlib import Path
from PySide6.QtCore import QCoreApplication, QSettings, Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from physgrade_ui import grader, style
from physgrade_ui.main_window import MainWindow

QCoreApplication.setOrganizationName("physgrade-bench")
QSettings.setDefaultFormat(QSettings.Format.IniFormat)
QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, sys.argv[2])
app = QApplication([])
style.apply(app)
grader.remember(sys.argv[3])
window = MainWindow(Path(sys.argv[1]))
window.resize(1600, 1000)
window.show()
window.activateWindow()
page = window.grading
moves = int(sys.argv[4])
times = {"first": None, "next": [], "skim": [], "score": []}
phase = ["next"]
PAUSE_MS = int(sys.argv[5])
pressed = [0.0]

def key(code):
    pressed[0] = time.perf_counter()
    QTest.keyClick(page.panel, code)

def on_shown(response_id):
    now = time.perf_counter()
    if times["first"] is None:
        times["first"] = now - started
        print("first", flush=True)
        QTimer.singleShot(300, next_move)  # let the first paint settle
        return
    times[phase[0]].append(now - pressed[0])
    if len(times["next"]) < moves:
        QTimer.singleShot(PAUSE_MS, next_move)  # a grader glances at every item at least
    elif len(times["skim"]) < moves:
        phase[0] = "skim"
        QTimer.singleShot(0, next_move)  # the arrow key held down
    else:
        QTimer.singleShot(0, score)

def next_move():
    key(Qt.Key.Key_Right)

def score():
    for _ in range(20):
        key(Qt.Key.Key_0)
        times["score"].append(time.perf_counter() - pressed[0])
        QTest.keyClick(page.panel, Qt.Key.Key_Right)
    print(json.dumps(times), flush=True)
    app.quit()

page.shown.connect(on_shown)
app.exec()
"""


def build(folder: Path, n_responses: int) -> Path:
    """The project: import the corpus, then judges' and people's scores (written directly,
    as this benchmark measures the workbench, not imports)."""
    questions, responses = write_corpus(folder / "data", 6000, n_responses)
    path = folder / "bench.physgrade"
    with Project.create(path) as project:
        import_file(project, questions, "questions")
        import_file(project, responses, "responses")
        ids = [r for (r,) in project.conn.execute("SELECT id FROM responses ORDER BY id")]
        kinds = dict(project.conn.execute(
            "SELECT r.id, q.kind FROM responses r JOIN questions q ON q.id = r.question_id"))
        prefs, conceptual = PREFS.keys, CONCEPTUAL.keys
        raters = [(rater_id(project, "judge-a", LLM, "v1"), ids),
                  (rater_id(project, "judge-b", LLM, "v1"), ids),
                  (rater_id(project, GRADER, HUMAN), ids[:5000]),
                  (rater_id(project, "colleague", HUMAN), ids[3000:6000])]
        with project.transaction():
            for rater, graded in raters:
                project.conn.executemany(
                    "INSERT INTO scores VALUES (?, ?, ?, ?, 1, NULL, '2026-11-01T00:00:00Z')",
                    ((rater, rid, "conceptual" if kinds[rid] == "conceptual" else "prefs", key)
                     for rid in graded
                     for key in (conceptual if kinds[rid] == "conceptual" else prefs)))
        save_position(project, GRADER, Position(ids[len(ids) // 2], QueueFilter()))
    return path


def run_app(path: Path, settings: Path, moves: int) -> tuple[float, dict]:
    """Start the app in a new process; its stderr goes to a file (Chromium is talkative)."""
    log = settings / "app.log"
    with log.open("w") as errors:
        started = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-c", CHILD, str(path), str(settings),
                                  GRADER, str(moves), str(READING_PAUSE_MS)],
                                 stdout=subprocess.PIPE, stderr=errors, text=True)
        first_line = child.stdout.readline()
        first = time.perf_counter() - started
        last_line = child.stdout.readline()
        child.wait(timeout=60)
    if first_line.strip() != "first" or not last_line:
        sys.exit(f"the app did not finish the run:\n{log.read_text()[-3000:]}")
    return first, json.loads(last_line)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--responses", type=int, default=58000)
    parser.add_argument("--moves", type=int, default=200)
    parser.add_argument("--keep", type=Path, help="keep the built project here and reuse it")
    args = parser.parse_args()
    if not os.environ.get("DISPLAY") and shutil.which("xvfb-run"):
        os.execvp("xvfb-run", ["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24",
                               sys.executable, *sys.argv])
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if args.keep is None:
            path = build(folder, args.responses)
        else:
            kept = args.keep / f"bench-{args.responses}.physgrade"
            if not kept.exists():
                args.keep.mkdir(parents=True, exist_ok=True)
                shutil.move(build(folder, args.responses), kept)
            path = Path(shutil.copy(kept, folder / "bench.physgrade"))  # the run writes to it
        print(f"project: 6000 questions, {args.responses} responses, judges on every one")
        first, times = run_app(path, folder, args.moves)
    moves, scores = times["next"], times["score"]
    print(f"start-up to first response shown:  {first:6.2f} s   (target < 2 s; "
          f"{first / 2:.2f} of the budget)")
    print(f"  of which inside the app process:  {times['first']:6.2f} s")
    p95 = percentile(moves, 0.95)
    print(f"next response, rendered ({READING_PAUSE_MS} ms look at each): median "
          f"{statistics.median(moves) * 1000:5.1f} ms, p95 {p95 * 1000:5.1f} ms, max "
          f"{max(moves) * 1000:5.1f} ms   (target p95 <= 100 ms; {p95 / 0.1:.2f} of the budget)")
    skim = times["skim"]
    print(f"next response, arrow key held (no pause): median "
          f"{statistics.median(skim) * 1000:5.1f} ms, p95 {percentile(skim, 0.95) * 1000:5.1f} ms")
    print(f"digit to score saved and shown: median {statistics.median(scores) * 1000:5.1f} ms, "
          f"max {max(scores) * 1000:5.1f} ms")


if __name__ == "__main__":
    main()
