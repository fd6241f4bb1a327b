"""Speed of the project report at the study's real size, against the time to read its scores.

    python benchmarks/bench_report.py [--responses 58000] [--resamples 1000]

Builds the synthetic study of ``report_project.py`` (6,000 questions, 58,000 responses from 10
models, two language-model judges on everything, two people grading the same 10%), then times,
in one process on that project:

- read: the project's scores read once into memory (``ScoreStore.read``; the median of three
  reads). Every other line is given as a multiple of this time R, so that the targets hold on
  any machine.
- full report: every section with its bootstrap intervals, computed from that store, and every
  figure drawn (what the Reports page shows once all its sections are complete).
- filter change: what the Reports page does when a filter changes, with the project's scores
  (and the small tables a report reads besides) already held by a warm ``ScoreCache``: the
  draft of the report narrowed to one model, then to one topic (every value, intervals
  pending, no figure drawn). The median of three runs each.
- command line, and writing HTML, CSV and JSON (no target): the report from nothing (read the
  scores, compute it, draw its figures), then the files written from it.

Targets (issue 22, reports at the speed of a question): a filter change in at most 0.3x the
read, the full report in at most 2x the read. Exits with status 1 when one is not met.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, TypeVar

import physgrade.report.plots  # noqa: F401  (matplotlib loads once per process: not a report's time)
from physgrade.orphans import die_with
from physgrade.project import Project
from physgrade.report.build import build_report, draft_report
from physgrade.report.model import Report
from physgrade.report.options import ReportOptions
from physgrade.report.writers import write_report
from physgrade.scoring.cache import ScoreCache
from physgrade.scoring.store import ScoreStore
from physgrade.selection import ResponseFilter
from physgrade.tasks import Task
from report_project import build

FULL_TARGET, FILTER_TARGET = 2.0, 0.3
RUNS = 3  # the read and a filter change are timed this many times; the median is kept
Result = TypeVar("Result")


def build_alone(origin: int, path: Path, responses: int) -> None:
    """Build the project in a process of its own that ends with the benchmark's (``origin``),
    even a killed one."""
    die_with(origin)
    build(path, responses)


def timed(work: Callable[[], Result]) -> tuple[float, Result]:
    """Seconds ``work`` took, and what it gave."""
    started = time.perf_counter()
    result = work()
    return time.perf_counter() - started, result


def drawn(report: Report) -> Report:
    """``report`` with every figure drawn (they are drawn when first asked for)."""
    for figure in report.figures():
        figure.draw()
    return report


def filter_change(project: Project, cache: ScoreCache, options: ReportOptions) -> float:
    """Median seconds of the Reports page's draft for ``options``, scores taken from ``cache``."""
    return statistics.median(
        timed(lambda: draft_report(project, options, cache.store(project), Task(),
                                   cache.readings))[0]
        for _ in range(RUNS))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--responses", type=int, default=58000)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    options = ReportOptions(resamples=args.resamples)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.physgrade"
        # Built in a process of its own: the million rows it writes leave nothing behind in the
        # one that measures (their garbage would be collected during the measurements).
        builder = multiprocessing.get_context("spawn").Process(
            target=build_alone, args=(os.getpid(), path, args.responses))
        seconds, _ = timed(lambda: (builder.start(), builder.join()))
        assert builder.exitcode == 0, "building the project failed"
        print(f"built the project in {seconds:.1f} s ({args.responses:,} responses, 2 judges, "
              f"2 graders on 10%)", flush=True)
        with Project.open(path) as project:
            reads = [timed(lambda: ScoreStore.read(project)) for _ in range(RUNS)]
            read, store = statistics.median(seconds for seconds, _ in reads), reads[-1][1]
            full, report = timed(lambda: drawn(build_report(project, options, store=store)))
            cache = ScoreCache()
            cache.store(project)
            changes: dict[str, float] = {}
            for name, chosen in (("one model", ResponseFilter(models=frozenset({"model-03"}))),
                                 ("one topic", ResponseFilter(topics=frozenset({"Mechanics"})))):
                changes[name] = filter_change(project, cache,
                                              ReportOptions(chosen, resamples=args.resamples))
            command_line, cli_report = timed(lambda: drawn(build_report(project, options)))
            writing, written = timed(lambda: write_report(cli_report, Path(tmp) / "report"))

    def line(label: str, seconds: float, note: str) -> None:
        print(f"{label:<34}{seconds:7.2f} s  {seconds / read:5.2f}x R  {note}")

    line("read the scores (R)", read, f"ScoreStore.read, median of {RUNS}")
    line("full report from the store", full,
         f"{args.resamples} resamples, {len(report.tables())} tables, "
         f"{len(report.figures())} figures drawn")
    for name, seconds in changes.items():
        line(f"filter change to {name}", seconds, f"draft from a warm cache, median of {RUNS}")
    line("command line from nothing", command_line, "read + full report, figures drawn")
    line("writing HTML, CSV and JSON", writing, f"{len(written)} files")
    results = [(f"full report <= {FULL_TARGET}x R", full / read <= FULL_TARGET)]
    results += [(f"filter change to {name} <= {FILTER_TARGET}x R", seconds / read <= FILTER_TARGET)
                for name, seconds in changes.items()]
    for target, met in results:
        print(f"target {target:<40}{'met' if met else 'UNMET'}")
    sys.exit(0 if all(met for _, met in results) else 1)


if __name__ == "__main__":
    main()
