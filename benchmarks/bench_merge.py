"""Merging grader packs, against importing the same grades from JSON Lines, in one run.

    python benchmarks/bench_merge.py [--graders 10] [--per-grader 6000] [--keep FOLDER]

Target (issue 19, team grading): merging 10 packs of 6,000 graded responses each (8 criteria)
into one project takes under 10 s. Printed beside it: importing the same grades as one JSON
Lines file into a copy of the project as it was before the merge.

Builds a project of ``graders x per-grader`` responses (every question a problem, so that every
response is graded on the 8 P-REFS criteria), assigns each grader ``per-grader`` of them without
overlap, makes the packs and fills each pack's grades directly by SQL, as a grader's work would
leave them (scores, a note on one criterion in ten, an assessment row, history by trigger).
Building takes a minute or two; ``--keep FOLDER`` builds it there once and measures later runs
on fresh copies.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from corpus import write_corpus  # noqa: E402
from physgrade.exporter import export_kind  # noqa: E402
from physgrade.importer import import_file  # noqa: E402
from physgrade.project import Project  # noqa: E402
from physgrade.rubric import FINAL_ANSWER, PREFS  # noqa: E402
from physgrade.team import assign  # noqa: E402
from physgrade.team.merge import merge  # noqa: E402
from physgrade.team.packs import make_packs  # noqa: E402

TARGET_S = 10.0
PROJECT = "study.physgrade"


def build(folder: Path, graders: int, per_grader: int) -> None:
    """The project (``PROJECT``) and its graded packs (``packs/``) in ``folder``."""
    responses = graders * per_grader
    questions, answers = write_corpus(folder / "data", max(1, responses // 10), responses)
    problems = folder / "data" / "problems.jsonl"
    with questions.open(encoding="utf-8") as lines, problems.open("w", encoding="utf-8") as out:
        for line in lines:
            out.write(json.dumps({**json.loads(line), "kind": "problem"}) + "\n")
    names = [f"grader-{n:02d}" for n in range(graders)]
    (folder / "packs").mkdir()
    with Project.create(folder / PROJECT) as project:
        import_file(project, problems, "questions")
        import_file(project, answers, "responses")
        assign.apply(project, assign.plan(project, names, 0.0, per_grader=per_grader, seed=1,
                                          include_graded=True))
        made, _ = make_packs(project, folder / "packs")
    for pack in made:
        grade(pack.path, pack.grader)
    shutil.rmtree(folder / "data")


def grade(path: Path, grader: str) -> None:
    """Every criterion of every response of the pack, as the grader's work leaves it."""
    with Project.open(path) as pack, pack.transaction():
        conn = pack.conn
        conn.execute("CREATE TEMP TABLE criteria (n INTEGER, key TEXT, maximum INTEGER)")
        conn.executemany("INSERT INTO criteria VALUES (?, ?, ?)",
                         [(n, c.key, c.maximum) for n, c in enumerate(PREFS.criteria)])
        rater = conn.execute("SELECT id FROM raters WHERE name = ?", (grader,)).fetchone()[0]
        stamp = "2025-03-01T10:00:00.000Z"
        conn.execute(
            "INSERT INTO assessments (rater_id, response_id, rubric, assessed_at) "
            "SELECT ?, id, ?, ? FROM responses", (rater, PREFS.key, stamp))
        # Values spread over each criterion's range; a multiple-choice final answer is 0 or max.
        conn.execute(
            "INSERT INTO scores (rater_id, response_id, rubric, criterion, value, note, "
            "updated_at) SELECT ?, r.id, ?, c.key, CASE WHEN c.key = ? AND q.options IS NOT NULL "
            "THEN c.maximum * ((r.rowid + c.n) % 2) ELSE (r.rowid + c.n) % (c.maximum + 1) END, "
            "CASE WHEN (r.rowid + c.n) % 10 = 0 THEN 'see step ' || c.n END, ? "
            "FROM responses r JOIN questions q ON q.id = r.question_id CROSS JOIN criteria c",
            (rater, PREFS.key, FINAL_ANSWER, stamp))


def time_merge(folder: Path) -> tuple[float, int]:
    paths = sorted((folder / "packs").glob("*.physgrade"))
    with Project.open(folder / PROJECT) as project:
        start = time.perf_counter()
        result = merge(project, paths)
        elapsed = time.perf_counter() - start
    assert not result.conflicts
    return elapsed, sum(pack.applied for pack in result.packs)


def time_import(folder: Path, project_copy: Path) -> tuple[float, int]:
    """The packs' grades exported as one JSON Lines file, imported into ``project_copy``."""
    grades = folder / "grades.jsonl"
    with grades.open("w", encoding="utf-8") as out:
        for path in sorted((folder / "packs").glob("*.physgrade")):
            part = folder / "part.jsonl"
            with Project.open(path) as pack:
                export_kind(pack, "grades", part)
            out.write(part.read_text(encoding="utf-8"))
    with Project.open(project_copy) as project:
        start = time.perf_counter()
        result = import_file(project, grades, "grades")
        elapsed = time.perf_counter() - start
    return elapsed, result.added


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graders", type=int, default=10)
    parser.add_argument("--per-grader", type=int, default=6000)
    parser.add_argument("--keep", type=Path, help="keep the built project and packs here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "run"
        if args.keep is None:
            folder.mkdir()
            build(folder, args.graders, args.per_grader)
        else:
            kept = args.keep / f"bench-merge-{args.graders}x{args.per_grader}"
            if not kept.exists():
                kept.mkdir(parents=True)
                build(kept, args.graders, args.per_grader)
            shutil.copytree(kept, folder)  # the run writes to them
        before = Path(shutil.copy(folder / PROJECT, Path(tmp) / "before.physgrade"))
        merged, criteria = time_merge(folder)
        imported, records = time_import(folder, before)
    print(f"{args.graders} packs of {args.per_grader:,} graded responses (8 criteria)")
    print(f"merge of the packs:         {merged:6.2f} s   ({criteria:,} criteria merged; "
          f"target < {TARGET_S:.0f} s: {'met' if merged < TARGET_S else 'NOT met'})")
    print(f"import of the same grades:  {imported:6.2f} s   ({records:,} records from JSON Lines)")
    print(f"ratio merge / import:       {merged / imported:6.2f} x")


if __name__ == "__main__":
    main()
