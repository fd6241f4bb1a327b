"""Import speed against raw sqlite3, measured in one run (this machine is noisy).

Targets (issue: foundation): importing 6,000 questions and 58,000 responses of 2-3 KB takes at
most 4x what a bare ``sqlite3.executemany`` of the same rows takes, and under 15 s;
``physgrade info`` on that project answers in under 1 s.

    python benchmarks/bench_import.py [--questions 6000] [--responses 58000]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from corpus import write_corpus  # noqa: E402
from physgrade.importer import import_file  # noqa: E402
from physgrade.project import Project, migrations  # noqa: E402
from physgrade.template import scan  # noqa: E402


def raw_rows(questions: Path, responses: Path) -> tuple[list[tuple], list[tuple]]:
    """The rows physgrade stores, computed outside the timed section of the baseline."""
    q_rows, r_rows = [], []
    for line in questions.open(encoding="utf-8"):
        q = json.loads(line)
        extra = {k: v for k, v in q.items() if k == "source_page"}
        q_rows.append((q["id"], q["kind"], q["topic"], q["question"],
                       json.dumps(q["options"]) if q["options"] else None, q["answer"],
                       q["answer_type"], q["unit"], q["reference_solution"],
                       scan(q["reference_solution"])[0], q["bloom_cognitive"],
                       q["bloom_knowledge"], None, None, json.dumps(extra)))
    for line in responses.open(encoding="utf-8"):
        r = json.loads(line)
        sections, compliant = scan(r["response"])
        r_rows.append((r["id"], r["question_id"], r["model"], r["response"], sections,
                       int(compliant), None))
    return q_rows, r_rows


def time_raw(path: Path, q_rows: list[tuple], r_rows: list[tuple]) -> float:
    """Bare sqlite3: same schema and pragmas, one executemany per table, one transaction."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    for step in migrations():
        conn.executescript(step.sql())
    start = time.perf_counter()
    conn.execute("BEGIN")
    conn.executemany(f"INSERT INTO questions VALUES ({', '.join('?' * 15)})", q_rows)
    conn.executemany(f"INSERT INTO responses VALUES ({', '.join('?' * 7)})", r_rows)
    conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    return elapsed


def time_physgrade(path: Path, questions: Path, responses: Path) -> float:
    """physgrade's import from the files: reading, checking, template parsing, writing."""
    with Project.create(path) as project:
        start = time.perf_counter()
        import_file(project, questions, "questions")
        import_file(project, responses, "responses")
        return time.perf_counter() - start


def time_info(path: Path) -> float:
    """``physgrade info`` as a user runs it: a new process, start-up included."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "physgrade.cli", "info", str(path)], check=True,
                   capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=6000)
    parser.add_argument("--responses", type=int, default=58000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        questions, responses = write_corpus(folder / "data", args.questions, args.responses)
        size_mb = (questions.stat().st_size + responses.stat().st_size) / 1e6
        print(f"corpus: {args.questions} questions, {args.responses} responses, {size_mb:.0f} MB")
        q_rows, r_rows = raw_rows(questions, responses)
        raw = time_raw(folder / "raw.sqlite", q_rows, r_rows)
        ours = time_physgrade(folder / "bench.physgrade", questions, responses)
        info = time_info(folder / "bench.physgrade")
    print(f"raw sqlite3.executemany:   {raw:6.2f} s")
    print(f"physgrade import:          {ours:6.2f} s   (target < 15 s)")
    print(f"ratio physgrade / raw:     {ours / raw:6.2f} x (target <= 4x)")
    print(f"physgrade info (process):  {info:6.2f} s   (target < 1 s)")


if __name__ == "__main__":
    main()
