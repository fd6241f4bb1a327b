"""Figures (issue 36): what questions with images cost, measured in one run (this machine is noisy).

Imports the same questions twice, each time into a new project and in a fresh process: once
with a distinct noisy PNG of about 200 KB per question (paths relative to the file, as a
benchmark's export has them), once without. It prints the import time with figures as a ratio
to the time without, each import's peak memory (with figures it must stay far below the images'
total: they are stored as they are checked, never all held at once), the time bare sqlite3
takes to store the same figures (the least that writing them costs), and the project file's size
against the images' total size. Then it shows responses to the same questions on the Grade
page's reading view (in a fresh process, under ``xvfb-run`` without a display), each question
once, alternating between the two projects, and times the first paint of each: from handing the
view its reading to the reading laid out with every figure decoded, as a ratio of with a figure
to without. No absolute targets: the ratios are what to compare.

    python benchmarks/bench_figures.py [--questions 5000] [--figure-kb 200] [--readings 40]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Iterator

from PIL import Image

sys.path.insert(0, str(Path(__file__).parent))
from corpus import peak_rss, rss, write_corpus  # noqa: E402
from physgrade.project import migrations  # noqa: E402

MIB = 1024 * 1024


@dataclass(frozen=True)
class Corpus:
    """The two question files (the same records, with and without figures) and their images."""

    plain: Path
    figured: Path
    figures: int
    figure_bytes: int  # all the figures' bytes together


@dataclass(frozen=True)
class Imported:
    """One import, measured in its own process."""

    project: Path
    seconds: float
    peak_rss: int  # the process's peak resident set size, import included
    rss_before: int  # its resident set size just before the import
    project_bytes: int


def noisy_png(rng: random.Random, side: int) -> bytes:
    """A distinct PNG of about side x side x 3 bytes: noise does not compress, and
    ``compress_level=0`` makes it quick to write."""
    out = io.BytesIO()
    Image.frombytes("RGB", (side, side), rng.randbytes(side * side * 3)).save(
        out, "PNG", compress_level=0)
    return out.getvalue()


def write_questions(folder: Path, questions: int, figure_kb: int, seed: int = 36) -> Corpus:
    """The benchmark corpus's questions (``corpus.write_corpus``), and a copy of them in which
    each question shows its own figure, written into ``folder/figures/``."""
    plain, _ = write_corpus(folder, questions, 0)
    side = max(1, round((figure_kb * 1000 / 3) ** 0.5))
    rng = random.Random(seed)
    (folder / "figures").mkdir()
    figured = folder / "questions_with_figures.jsonl"
    total = 0
    with plain.open(encoding="utf-8") as lines, figured.open("w", encoding="utf-8") as out:
        for line in lines:
            record = json.loads(line)
            name = f"figures/{record['id']}.png"
            data = noisy_png(rng, side)
            (folder / name).write_bytes(data)
            total += len(data)
            out.write(json.dumps({**record, "images": [name]}) + "\n")
    return Corpus(plain, figured, questions, total)


def child_import(questions: Path, project_path: Path) -> Imported:
    """In a fresh process: a new project, then the import of ``questions`` into it, timed."""
    from physgrade.importer import import_file
    from physgrade.project import Project

    with Project.create(project_path) as project:
        before = rss()
        started = time.perf_counter()
        import_file(project, questions, "questions")
        seconds = time.perf_counter() - started
        peak = peak_rss()
    return Imported(project_path, seconds, peak, before, project_path.stat().st_size)


def import_apart(questions: Path, project_path: Path) -> Imported:
    """``child_import`` in a spawned process, so that its peak memory is its own."""
    with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
        return pool.submit(child_import, questions, project_path).result()


def time_bare_figures(corpus: Corpus, path: Path) -> float:
    """Bare sqlite3 storing the same figures (read, hashed, inserted into the project's
    ``images`` table in one transaction, same pragmas): what writing them costs at the least."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    for step in migrations():
        conn.executescript(step.sql())
    figures = sorted((corpus.figured.parent / "figures").iterdir())
    with Image.open(figures[0]) as first:
        side = first.width

    def rows() -> Iterator[tuple]:
        for figure in figures:
            data = figure.read_bytes()
            yield hashlib.sha256(data).hexdigest(), "image/png", side, side, len(data), data

    started = time.perf_counter()
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO images VALUES (?, ?, ?, ?, ?, ?)", rows())
    conn.execute("COMMIT")
    elapsed = time.perf_counter() - started
    conn.close()
    return elapsed


def measure_import(corpus: Corpus, folder: Path) -> tuple[Imported, Imported]:
    """1. The import with figures against the same import without; its peak memory."""
    print("1. import, with a figure per question against without")
    plain = import_apart(corpus.plain, folder / "plain.physgrade")
    figured = import_apart(corpus.figured, folder / "figured.physgrade")
    bare = time_bare_figures(corpus, folder / "bare.sqlite")
    print(f"   without figures:  {plain.seconds:7.2f} s")
    print(f"   with figures:     {figured.seconds:7.2f} s")
    print(f"   ratio:            {figured.seconds / plain.seconds:7.2f} x")
    print(f"   bare sqlite3 storing the same figures alone: {bare:.2f} s; the import with figures "
          f"takes {figured.seconds / bare:.2f} x that")
    for name, imported in (("without figures", plain), ("with figures", figured)):
        print(f"   peak memory {name + ':':17} {imported.peak_rss / MIB:7.0f} MiB "
              f"({(imported.peak_rss - imported.rss_before) / MIB:+.0f} MiB during the import)")
    print(f"   peak memory with figures against without: {figured.peak_rss / plain.peak_rss:.2f} "
          f"x; the figures' total: {corpus.figure_bytes / MIB:.0f} MiB")
    return plain, figured


def measure_size(corpus: Corpus, plain: Imported, figured: Imported) -> None:
    """2. The project file with figures against the figures' own size, and without them."""
    print("2. project file size")
    print(f"   figures' total:   {corpus.figure_bytes / MIB:9.1f} MiB "
          f"({corpus.figures} figures of {corpus.figure_bytes / corpus.figures / 1000:.0f} KB)")
    print(f"   without figures:  {plain.project_bytes / MIB:9.1f} MiB")
    print(f"   with figures:     {figured.project_bytes / MIB:9.1f} MiB")
    print(f"   with figures / figures' total:                         "
          f"{figured.project_bytes / corpus.figure_bytes:6.3f}")
    print(f"   (with figures - without) / figures' total (overhead):  "
          f"{(figured.project_bytes - plain.project_bytes) / corpus.figure_bytes:6.3f}")


GRADER = "bench-grader"


def add_responses(project_path: Path, count: int) -> list[str]:
    """One response to each of the project's first ``count`` questions (the same text for
    both projects), and their ids."""
    from physgrade.project import Project

    with Project.open(project_path) as project:
        ids = [row[0] for row in project.conn.execute(
            "SELECT id FROM questions ORDER BY id LIMIT ?", (count,))]
        reference = project.conn.execute(
            "SELECT reference_solution FROM questions WHERE id = ?", (ids[0],)).fetchone()[0]
    records = [{"id": f"r-{qid}", "question_id": qid, "model": "bench-model",
                "response": reference} for qid in ids]
    from physgrade.importer import import_file

    path = project_path.with_suffix(".responses.jsonl")
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    with Project.open(project_path) as project:
        import_file(project, path, "responses")
    return [r["id"] for r in records]


def paint_child(plain: Path, figured: Path, readings: int) -> None:
    """In a fresh process with a display: each reading's first paint on a reading view of the
    Grade page's size, alternating between the projects; prints the times as JSON."""
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWebEngineCore import QWebEngineScript
    from PySide6.QtWidgets import QApplication

    from physgrade.grading import grading_item
    from physgrade.project import Project
    from physgrade_ui import reading, style
    from physgrade_ui.reading_view import ReadingView

    app = QApplication([])
    style.apply(app)
    view = ReadingView(reading.CSS)
    view.resize(900, 820)
    view.show()
    decoded = ("Array.from(document.body.querySelectorAll('img'))"
               ".every((img) => img.complete && img.naturalWidth > 0)")

    def wait(start: object) -> None:
        loop = QEventLoop()
        start(loop.quit)  # type: ignore[operator]
        loop.exec()

    def paint(fragment: str) -> float:
        started = time.perf_counter()
        wait(lambda done: (view.rendered.connect(done), view.show_html(fragment)))
        view.rendered.disconnect()
        while not all_decoded():
            pass
        return time.perf_counter() - started

    def all_decoded() -> bool:
        answer: list[bool] = []
        wait(lambda done: view.page().runJavaScript(
            decoded, QWebEngineScript.ScriptWorldId.ApplicationWorld,
            lambda ready: (answer.append(bool(ready)), done())))
        return answer[0]

    wait(lambda done: QTimer.singleShot(500, done))  # the view's shell loaded
    projects = {name: Project.open(path) for name, path in (("plain", plain),
                                                             ("figured", figured))}
    ids = [row[0] for row in projects["plain"].conn.execute(
        "SELECT id FROM responses ORDER BY id LIMIT ?", (readings,))]
    times: dict[str, list[float]] = {"plain": [], "figured": []}
    paint(reading.placeholder("warming up"))
    for response_id in ids:
        for name, project in projects.items():
            item = grading_item(project, response_id, GRADER)
            assert item is not None
            times[name].append(paint(reading.grading_html(item)))
    print(json.dumps(times))


def measure_first_paint(corpus: Corpus, plain: Imported, figured: Imported,
                        readings: int) -> None:
    """3. The reading pane's first paint with a figure against without."""
    print("3. the reading pane's first paint (Grade page reading, 900 x 820 px)")
    for imported in (plain, figured):
        add_responses(imported.project, readings)
    command = [sys.executable, __file__, "--paint-child", str(plain.project),
               str(figured.project), str(readings)]
    if not os.environ.get("DISPLAY") and shutil.which("xvfb-run"):
        command = ["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", *command]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    times = json.loads(done.stdout.strip().splitlines()[-1])
    median = {name: statistics.median(values) for name, values in times.items()}
    print(f"   without figures: median {median['plain'] * 1000:6.1f} ms over {readings} readings")
    print(f"   with a figure:   median {median['figured'] * 1000:6.1f} ms "
          f"(each a {corpus.figure_bytes / corpus.figures / 1000:.0f} KB PNG)")
    print(f"   ratio:           {median['figured'] / median['plain']:6.2f} x")


def main() -> None:
    if sys.argv[1:2] == ["--paint-child"]:
        paint_child(Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=5000)
    parser.add_argument("--figure-kb", type=int, default=200,
                        help="each figure's size in KB (default 200)")
    parser.add_argument("--readings", type=int, default=40,
                        help="responses shown for the first-paint timing (default 40)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        started = time.perf_counter()
        corpus = write_questions(folder / "data", args.questions, args.figure_kb)
        print(f"corpus: {args.questions} questions, {corpus.figure_bytes / MIB:.0f} MiB of "
              f"figures (written in {time.perf_counter() - started:.1f} s); "
              f"{os.cpu_count()} CPUs")
        plain, figured = measure_import(corpus, folder)
        measure_size(corpus, plain, figured)
        measure_first_paint(corpus, plain, figured, min(args.readings, args.questions))


if __name__ == "__main__":
    main()
