"""Speed of the numbers a study publishes, at the study's real size, measured in one run.

    python benchmarks/bench_estimates.py [--responses 58000] [--sample 500]

Builds the project of ``report_project.py`` (6,000 questions, 2,700 of them contextual variants,
58,000 responses of 10 models, two judges on every response, two people on the same 10%),
draws an estimation sample stratified by model and topic, and times, beside reading the scores
once (the unit every ratio is given in):

* ``estimate``: one judge's corrected estimates per model, with their differences;
* ``plan``: the grades a ±3-point interval needs;
* the report's two sections, "Model scores corrected by expert grades" (both judges) and
  "Judge cards", on scores already read, as the report computes them;
* ``check-variants`` over the 2,700 variants (their statements here are one short line each,
  so this measures the pass over them, not reading long texts).

The issue sets no target for these; they are reported so that a change that slows them shows.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Callable

from physgrade.estimation import estimates, sample
from physgrade.estimation.sample import read_samples
from physgrade.project import Project
from physgrade.report.corrected import corrected_section
from physgrade.report.judge_cards import judge_cards_section, read_versions
from physgrade.report.options import ReportOptions
from physgrade.scoring import tables as score_tables
from physgrade.tasks import Task
from physgrade.variants import check_variants
from report_project import build

JUDGE = "judge-a [v1]"


def timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--responses", type=int, default=58000)
    parser.add_argument("--sample", type=int, default=500, help="responses in the sample")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.physgrade"
        build(path, args.responses)
        with Project.open(path) as project:
            drawing = timed(lambda: sample.draw(project, "main", args.sample, 1,
                                                ("model", "topic")))
            reading = timed(lambda: score_tables.load(project))
            measured = {
                "estimate (one judge)": timed(lambda: estimates.estimate(project, JUDGE, "main")),
                "plan (one judge, ±3 points)": timed(
                    lambda: estimates.plan(project, JUDGE, "main", 0.03)),
                "check-variants": timed(lambda: check_variants(project))}
            data = score_tables.load(project)
            # With what each section reads besides the scores, read afresh each time.
            measured["report: corrected section"] = timed(lambda: corrected_section(
                read_samples(project), data, ReportOptions(), 7, Task()))
            measured["report: judge cards"] = timed(lambda: judge_cards_section(
                read_versions(project), data, 8, Task()))
    print(f"{args.responses:,} responses, 2 judges, 2 graders on 10%; a sample of "
          f"{args.sample:,} stratified by model × topic (drawn in {drawing:.2f} s)")
    print(f"{'reading the scores once':32s} {reading:6.2f} s   (the unit)")
    for what, seconds in measured.items():
        print(f"{what:32s} {seconds:6.2f} s   {seconds / reading:4.2f}x the read")


if __name__ == "__main__":
    main()
