"""The judge runner's own overhead per call, against a loopback API that answers at once.

Target (issue: judge runner): 2,000 responses at concurrency 8 in under 30 s, that is building
each prompt, the client call, checking the answer and committing the verdict. The fake API
runs in its own process, as a real one would. For scale, the same number of bare client calls
(the same requests, nothing built, checked or stored) is timed in the same run.

    python benchmarks/bench_judge.py [--responses 2000] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from corpus import write_corpus
from physgrade.importer import import_file
from physgrade.judge import verdicts
from physgrade.judge.client import connect
from physgrade.judge.pricing import price_for
from physgrade.judge.prompts import Prompts
from physgrade.judge.purposes import run_plan
from physgrade.project import Project

ROOT = Path(__file__).resolve().parent.parent
MODEL = "claude-haiku-4-5"
TARGET_S = 30.0


def start_server() -> tuple[subprocess.Popen, str]:
    server = subprocess.Popen([sys.executable, str(ROOT / "tests" / "fake_anthropic.py")],
                              stdout=subprocess.PIPE, text=True)
    return server, server.stdout.readline().strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--responses", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()

    server, url = start_server()
    os.environ.update(ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="bench-key")
    try:
        with tempfile.TemporaryDirectory() as folder:
            folder = Path(folder)
            questions, responses = write_corpus(folder / "data", n_questions=args.responses // 10,
                                                n_responses=args.responses)
            with Project.create(folder / "bench.physgrade") as project:
                import_file(project, questions, "questions")
                import_file(project, responses, "responses")
                prompts, price = Prompts.load(), price_for(MODEL)
                client = connect()
                plan = verdicts.plan(project, MODEL, prompts, price=price)
                requests = [job.request for job in verdicts.jobs(project, prompts, plan.pending)]

                started = time.perf_counter()
                with ThreadPoolExecutor(args.concurrency) as pool:
                    list(pool.map(lambda r: client.messages.create(**r.params(MODEL)), requests))
                bare = time.perf_counter() - started

                started = time.perf_counter()
                summary = run_plan(project, client, plan, prompts, price, args.concurrency)
                run = time.perf_counter() - started
        assert summary.done == args.responses, summary.text()
    finally:
        server.terminate()
        server.wait()

    print(f"{args.responses:,} verdicts at concurrency {args.concurrency}: {run:.1f} s "
          f"({run / args.responses * 1000:.1f} ms per verdict); target {TARGET_S:.0f} s, "
          f"ratio {run / TARGET_S:.2f} of the budget")
    print(f"the same calls bare through the client: {bare:.1f} s; the run takes "
          f"{run / bare:.2f}x that (plan, prompts, checks and commits included)")


if __name__ == "__main__":
    main()
