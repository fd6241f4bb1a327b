"""The ``physgrade`` command line: one small function per command over the core modules."""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

from physgrade import __version__, formats
from physgrade.demo import build_demo, default_demo_path
from physgrade.exporter import export_kind
from physgrade.formats import FormatError, ImportErrors
from physgrade.importer import import_file
from physgrade.judge.client import CredentialsError
from physgrade.project import Project, ProjectError
from physgrade.queries import COUNTED, project_info
from physgrade.rubric import ScoreError
from physgrade.tasks import Cancelled, Task


class CommandError(Exception):
    """A failure to report on one line of stderr, with a non-zero exit."""


@contextmanager
def progress_task() -> Iterator[Task]:
    """A Task that draws a progress bar on stderr (hidden when stderr is not a terminal)."""
    from tqdm import tqdm  # imported here: quick commands need no progress bar
    bar = tqdm(total=0, unit="rec", disable=None, leave=False, file=sys.stderr)

    def show(done: int, total: int | None, stage: str) -> None:
        bar.set_description(stage)
        if total is not None and bar.total != total:
            bar.reset(total=total)
        bar.n = done
        bar.refresh()

    try:
        yield Task(show)
    finally:
        bar.close()


def cmd_init(args: argparse.Namespace) -> None:
    Project.create(args.db).close()
    print(f"created {args.db}")


def cmd_import(args: argparse.Namespace) -> None:
    mapping = formats.parse_mapping(args.map or [])
    with Project.open(args.db) as project, progress_task() as task:
        result = import_file(project, args.file, args.kind, mapping, task)
    print(result.summary())


def cmd_export(args: argparse.Namespace) -> None:
    with Project.open(args.db) as project, progress_task() as task:
        count = export_kind(project, args.kind, args.out, task)
    print(f"wrote {count} {args.kind} records to {args.out}")


def cmd_info(args: argparse.Namespace) -> None:
    with Project.open(args.db) as project:
        info = project_info(project)
    if args.json:
        print(json.dumps(info.as_dict(), indent=2, ensure_ascii=False))
        return
    print(f"{info.path} (schema {info.schema_version})")
    for table, label in COUNTED.items():
        print(f"  {label:<20} {info.counts[table]:>9,}")
    print(f"  {'template-compliant':<20} {info.compliant_responses:>9,}")
    print(f"  {'graded by a person':<20} {info.graded_responses:>9,}  "
          f"({info.graded_share:.1%} of responses)")
    if info.models:
        print("models:")
        for model, count in info.models.items():
            print(f"  {model:<28} {count:>7,} responses")
    if info.raters:
        print("raters:")
        for rater in info.raters:
            version = f" [{rater.prompt_version}]" if rater.prompt_version else ""
            work = [f"{rater.responses:,} responses scored"] if rater.responses else []
            work += [f"{rater.questions:,} questions labelled"] if rater.questions else []
            print(f"  {rater.name + version:<28} {rater.kind:<6} {', '.join(work) or 'no work'}")


def cmd_agreement(args: argparse.Namespace) -> None:
    # Imported here: other commands need no scipy.
    from physgrade.stats.agreement import agreement
    from physgrade.stats.table import read_ratings
    categories = args.categories.split(",") if args.categories else None
    table = read_ratings(args.file, args.scale, args.id_column, categories)
    results = agreement(table.ratings, args.scale, table.categories, args.resamples, args.seed)
    n_items, n_raters = table.ratings.shape
    if args.json:
        print(json.dumps({"n_items": n_items, "n_raters": n_raters, "scale": args.scale,
                          "coefficients": {name: e.as_dict() for name, e in results.items()}},
                         indent=2, ensure_ascii=False))
        return
    print(f"{args.file}: {n_items:,} items, {n_raters} raters, {args.scale} scale")
    print(f"  {'coefficient':<22} {'value':>6}  {'95% CI':<16} {'n':>7}  note")
    for name, e in results.items():
        value = "n/a" if e.value is None else f"{e.value:.3f}"
        ci = "" if e.ci95 is None else f"[{e.ci95[0]:.3f}, {e.ci95[1]:.3f}]"
        print(f"  {name:<22} {value:>6}  {ci:<16} {e.n:>7,}  {e.reason or ''}".rstrip())


def cmd_report(args: argparse.Namespace) -> None:
    # Imported here: pandas, scipy and matplotlib are for reports, not for every command.
    from physgrade.report.build import build_report
    from physgrade.report.options import ReportFilter, ReportOptions
    from physgrade.report.writers import check_formats, write_report

    formats = check_formats(args.format.split(","))
    options = ReportOptions(ReportFilter.parse(args.filter or []), args.rater, args.resamples,
                            args.seed)
    with Project.open(args.db) as project, progress_task() as task:
        report = build_report(project, options, task)
        written = write_report(report, args.out, formats, task)
    print(f"report on {report.settings['responses']:,} responses "
          f"({', '.join(report.settings['judges']) or 'no judges'}; "
          f"{', '.join(report.settings['graders']) or 'no graders'}) written to {args.out}:")
    _print_written(written)


def _print_written(written: list[Path]) -> None:
    """The files a report wrote, its CSV tables as one line."""
    tables = [path for path in written if path.suffix == ".csv"]
    for path in written:
        if path.suffix != ".csv":
            print(f"  {path}")
    if tables:
        print(f"  {tables[0].parent}{os.sep} ({len(tables)} tables as CSV)")


def cmd_bloom_report(args: argparse.Namespace) -> None:
    # Imported here, as for ``report``: the statistics stack is for reports only.
    from datetime import datetime, timezone

    from physgrade.annotation.figures import bloom_section, sources
    from physgrade.report.model import Report
    from physgrade.report.options import ReportFilter
    from physgrade.report.writers import check_formats, write_report

    formats_chosen = check_formats(args.format.split(","))
    report_filter = ReportFilter.parse(args.filter or [])
    with Project.open(args.db) as project, progress_task() as task:
        section = bloom_section(project, 1, report_filter)
        if section is None:
            raise CommandError(f"nobody has given a Bloom label in {args.db} yet: nothing to "
                               "report")
        settings = {"project": str(project.path), "created_at": datetime.now(
                        timezone.utc).isoformat(timespec="seconds"),
                    "physgrade": __version__, "filter": report_filter.describe(),
                    "final_labels": sources(project, report_filter)}
        report = Report(f"physgrade Bloom report: {project.path.name}", settings, [section])
        written = write_report(report, args.out, formats_chosen, task)
    print(f"Bloom report written to {args.out}:")
    _print_written(written)


def _judge_run(args: argparse.Namespace, purpose: str, noun: str) -> None:
    """What ``judge`` and ``bloom-suggest`` share: plan, then dry run, batch or direct run."""
    # Imported here: the anthropic client is for judge runs only.
    from physgrade.judge import batches
    from physgrade.judge.client import connect
    from physgrade.judge.pricing import price_for
    from physgrade.judge.prompts import Prompts
    from physgrade.judge.purposes import PURPOSES, run_plan
    from physgrade.judge.scope import Scope
    from physgrade.report.options import ReportFilter

    prompts = Prompts.load(args.prompts)
    price = price_for(args.model, args.price_in, args.price_out)
    scope = Scope(ReportFilter.parse(args.filter or []), args.limit,
                  getattr(args, "retry_failed", False))
    with Project.open(args.db) as project:
        plan = PURPOSES[purpose].plan(project, args.model, prompts, scope, price, args.batch)
        print(f"{noun} with {plan.text()}")
        if price is None:
            print("  give --price-in and --price-out (US$ per million tokens) to price it")
        if args.dry_run:
            print("dry run: nothing was sent")
            return
        if not plan.pending:
            print("nothing to do")
            return
        client = connect(args.timeout, args.max_retries)
        with progress_task() as task:
            if args.batch:
                ids = batches.submit(project, client, plan, prompts, task)
                print(f"submitted {len(plan.pending):,} requests in {len(ids)} batch(es): "
                      f"{', '.join(ids)}\ncollect the results with: physgrade judge-status "
                      f"{args.db}")
                return
            summary = run_plan(project, client, plan, prompts, price, args.concurrency, task)
    print(summary.text())
    if summary.stopped in ("cancelled", "interrupted"):
        raise Cancelled()
    if summary.stopped:
        raise CommandError(f"the run stopped early: {summary.stopped}")


def cmd_judge(args: argparse.Namespace) -> None:
    _judge_run(args, "verdicts", "judging")


def cmd_bloom_suggest(args: argparse.Namespace) -> None:
    _judge_run(args, "bloom", "Bloom labels")


def cmd_judge_status(args: argparse.Namespace) -> None:
    import time

    from physgrade.judge import batches
    from physgrade.judge.client import connect
    from physgrade.judge.prompts import Prompts

    prompts = Prompts.load(args.prompts)
    with Project.open(args.db) as project:
        if not batches.batch_history(project):
            print("no batches submitted from this project")
            return
        client = connect(args.timeout, args.max_retries)
        while True:
            with progress_task() as task:
                states = batches.collect(project, client, prompts, task)
            for state in states:
                print(state.text())
            if not args.wait or all(state.ingested for state in states):
                break
            time.sleep(args.interval)
        if not states:
            print("every batch has been collected")


def _answer_settings(args: argparse.Namespace):
    from physgrade.answers import Settings
    return Settings(rtol=args.rtol, mantissa=args.mantissa)


def cmd_check_answer(args: argparse.Namespace) -> None:
    from physgrade.answers.sandbox import Checker, Request

    with Checker(_answer_settings(args)) as checker:
        check = checker.check(Request(args.gold, args.pred, args.type, args.unit))
    if args.json:
        print(json.dumps(check.to_json(), ensure_ascii=False))
    else:
        print(f"{check.outcome.value}: {check.reason}")


def _answer_lines(path: Path) -> list[tuple[object, object]]:
    """The checks a JSON Lines file asks for, all read before any runs (a bad line stops all)."""
    from physgrade.answers.sandbox import Request

    found = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            where = f"{path}, line {number}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise CommandError(f"{where}: not valid JSON ({exc.msg})") from exc
            if not isinstance(record, dict):
                raise CommandError(f"{where}: expected an object with id, gold and pred")
            for name in ("id", "gold", "pred"):
                if name not in record:
                    raise CommandError(f"{where}: field {name!r} is missing")
            for name in ("gold", "pred", "type", "unit"):
                if record.get(name) is not None and not isinstance(record[name], str):
                    raise CommandError(f"{where}: field {name!r} must be text")
            found.append((record["id"], Request(record["gold"], record["pred"],
                                                record.get("type"), record.get("unit"))))
    return found


def cmd_check_answers(args: argparse.Namespace) -> None:
    from physgrade.answers.sandbox import Checker

    lines = _answer_lines(Path(args.file))
    out = open(args.out, "w", encoding="utf-8") if args.out else sys.stdout
    counts: dict[str, int] = {}
    try:
        with Checker(_answer_settings(args), workers=args.workers) as checker, \
                progress_task() as task:
            checks = checker.map((request for _, request in lines), task, len(lines))
            for (line_id, _), (_, check) in zip(lines, checks):
                out.write(json.dumps({"id": line_id, **check.to_json()}, ensure_ascii=False) + "\n")
                counts[check.outcome.value] = counts.get(check.outcome.value, 0) + 1
    finally:
        if args.out:
            out.close()
    if args.out:
        tally = ", ".join(f"{n:,} {outcome.replace('_', ' ')}" for outcome, n in counts.items())
        print(f"{len(lines):,} answers checked into {args.out}: {tally or 'none'}")


def cmd_verify(args: argparse.Namespace) -> None:
    from physgrade.answers import verify
    from physgrade.answers.sandbox import Checker

    with Project.open(args.db) as project, \
            Checker(_answer_settings(args), workers=args.workers) as checker, \
            progress_task() as task:
        summary = verify.verify(project, checker, task, args.recheck)
    label = checker.settings.label
    print(f"{summary.text()}; stored as the rater {verify.RATER}" + (f" [{label}]" if label else ""))


def _embedder(args: argparse.Namespace):
    """The embedding engine for ``--model`` and ``--quantize``, with the provider it runs on."""
    from physgrade.dedup.engine import Embedder
    from physgrade.dedup.models import ModelError, resolve

    try:
        return Embedder(resolve(args.model, args.quantize,
                                notify=lambda message: print(message, file=sys.stderr)))
    except ModelError as exc:
        raise CommandError(str(exc)) from exc


def cmd_embed(args: argparse.Namespace) -> None:
    from physgrade.dedup.run import embed_project

    with Project.open(args.db) as project:
        embedder = _embedder(args)
        with progress_task() as task:
            total, new = embed_project(project, embedder, task)
    print(f"{total:,} questions embedded with {embedder.model.name} on {embedder.provider} "
          f"({new:,} new, {total - new:,} already stored)")


def cmd_dedup(args: argparse.Namespace) -> None:
    from physgrade.dedup import pairs
    from physgrade.dedup.audit import DEFAULT_COSINE, Thresholds
    from physgrade.dedup.run import audit_project, with_labels
    from physgrade.dedup.texts import load_set

    thresholds = Thresholds(args.jaccard, DEFAULT_COSINE if args.cosine is None else args.cosine)
    try:
        against = load_set(args.against, formats.parse_mapping(args.map or [])) \
            if args.against else None
    except FormatError as exc:
        raise CommandError(f"cannot audit against it, nothing changed: {exc}") from None
    say = sys.stderr if args.json else sys.stdout
    with Project.open(args.db) as project:
        embedder = _embedder(args)
        with progress_task() as task:
            audit = audit_project(project, embedder, against, thresholds, task)
        summary = audit.result.summary
        print(f"{audit.result.n_a:,} questions against "
              f"{'themselves' if against is None else f'{audit.result.n_b:,} in {args.against}'}"
              f" with {audit.model} on {audit.provider}: {len(audit.result.pairs):,} candidate "
              f"pair{'' if len(audit.result.pairs) == 1 else 's'}\n{summary.text()}", file=say)
        if args.judge:
            _judge_pairs(args, project, audit.source, say)
            audit = with_labels(project, audit)
        if args.out:
            pairs.write_csv(project, args.out, pairs.stored_pairs(project, audit.source))
            print(f"pairs written to {args.out}", file=say)
    if args.json:
        print(json.dumps(audit.as_json(), ensure_ascii=False))


def _judge_pairs(args: argparse.Namespace, project: Project, source: str, say) -> None:
    """Stage 3: ask ``--judge`` about every pair of ``source`` it has not labelled yet."""
    from physgrade.judge import duplicates
    from physgrade.judge.client import connect
    from physgrade.judge.pricing import price_for
    from physgrade.judge.prompts import Prompts
    from physgrade.judge.purposes import run_plan

    prompts = Prompts.load(args.prompts)
    price = price_for(args.judge, args.price_in, args.price_out)
    plan = duplicates.plan(project, args.judge, prompts, price=price, source=source)
    print(f"judging pairs with {plan.text()}", file=say)
    if not plan.pending:
        return
    client = connect(args.timeout, args.max_retries)
    with progress_task() as task:
        summary = run_plan(project, client, plan, prompts, price, args.concurrency, task)
    print(summary.text(), file=say)
    if summary.stopped in ("cancelled", "interrupted"):
        raise Cancelled()
    if summary.stopped:
        raise CommandError(f"the judge stopped early: {summary.stopped}")


def cmd_review_sample(args: argparse.Namespace) -> None:
    from physgrade.validation import sampling

    strata = [facet.strip() for facet in args.strata.split(",") if facet.strip()]
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    with Project.open(args.db) as project:
        name = args.name or _next_sample_name(project)
        drawn = sampling.draw(project, name, args.judge, args.per_stratum, seed, strata)
    # The judges' blind names are not printed: reports reveal them, reviewers never see them.
    print(f"sample {drawn.name!r} (seed {drawn.seed}, stratified by "
          f"{', '.join(drawn.strata) or 'nothing'}): {drawn.text()}")


def _next_sample_name(project: Project) -> str:
    taken = {name for (name,) in project.conn.execute("SELECT name FROM review_samples")}
    number = len(taken) + 1
    while f"sample {number}" in taken:
        number += 1
    return f"sample {number}"


def cmd_demo(args: argparse.Namespace) -> None:
    path = Path(args.db) if args.db else default_demo_path()
    with progress_task() as task:
        results = build_demo(path, task)
    added = sum(r.added for r in results)
    print(f"demo project: {path} ({added} records added)" if added else f"demo project: {path}")
    if not args.no_gui:
        _open_gui(path)


def cmd_gui(args: argparse.Namespace) -> None:
    _open_gui(Path(args.db) if args.db else None)


def _open_gui(path: Path | None) -> None:
    if (sys.platform == "linux" and not os.environ.get("QT_QPA_PLATFORM")
            and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))):
        # Without this Qt aborts with a core dump instead of a message.
        raise CommandError("no display to open the app on (DISPLAY is not set); run it in a "
                           "desktop session, under xvfb-run, or add --no-gui")
    try:
        from physgrade_ui.app import run
    except ImportError as exc:
        raise CommandError(f"the desktop app cannot start: {exc}") from exc
    raise SystemExit(run(path))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="physgrade", description="Grade language-model physics solutions with the P-REFS "
                                      "rubric, and audit LLM judges.")
    parser.add_argument("--version", action="version", version=f"physgrade {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="list every problem an import finds, not only the first")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("init", help="create an empty project file")
    p.add_argument("db", help="path of the new project file (e.g. study.physgrade)")
    p.set_defaults(func=cmd_init)

    p = sub.add_parser("import", help="import a JSON Lines, JSON or CSV file (all or nothing)")
    p.add_argument("db")
    p.add_argument("file")
    p.add_argument("--kind", required=True, choices=formats.KINDS)
    p.add_argument("--map", action="append", metavar="SRC=DST",
                   help="rename a field of the file to physgrade's (repeatable); DST may be "
                        "nested, e.g. --map A=options.A")
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("export", help="export records as JSON Lines (or CSV for .csv)")
    p.add_argument("db")
    p.add_argument("--kind", required=True, choices=formats.KINDS)
    p.add_argument("--out", required=True, help="output file (.jsonl or .csv)")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("info", help="counts, models, raters and graded share")
    p.add_argument("db")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("agreement", help="agreement coefficients of the raters in a ratings CSV")
    p.add_argument("file", help="CSV with a header, one row per item, one column per rater; an "
                                "empty cell is a missing rating")
    # The choices are physgrade.stats.SCALES, spelled out so that building the parser loads no scipy.
    p.add_argument("--scale", required=True, choices=("nominal", "ordinal", "interval", "ratio"))
    p.add_argument("--id-column", metavar="COL", help="a column that identifies items (not a rater)")
    p.add_argument("--categories", metavar="0,1,2",
                   help="all possible ratings, comma-separated (default: the ratings that occur)")
    p.add_argument("--resamples", type=int, default=1000,
                   help="bootstrap resamples for Krippendorff's alpha's interval (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_agreement)

    p = sub.add_parser("report", help="agreement of judges with people, and the study's "
                                      "analyses, as HTML, CSV and JSON")
    _report_arguments(p, "model, topic, kind, bloom (cognitive level), judge (e.g. "
                         "'judge-a [v1]'), grader")
    p.add_argument("--rater", help="whose grades the study's analyses use (default: the human "
                                   "consensus, else the first judge)")
    p.add_argument("--resamples", type=int, default=1000,
                   help="bootstrap resamples for Krippendorff's alpha's interval (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("bloom-report", help="agreement on Bloom labels (people and models) and "
                                            "the final labels' distribution, as HTML, CSV and JSON")
    _report_arguments(p, "topic, kind, bloom (final cognitive level), judge (a model's "
                         "label), grader (an annotator)")
    p.set_defaults(func=cmd_bloom_report)

    p = sub.add_parser("judge", help="P-REFS verdicts from an Anthropic model (ANTHROPIC_API_KEY)")
    _judge_arguments(p)
    p.add_argument("--retry-failed", action="store_true",
                   help="ask again where an earlier answer did not fit the rubric")
    p.set_defaults(func=cmd_judge)

    p = sub.add_parser("judge-status", help="poll submitted batches and store their results")
    p.add_argument("db")
    p.add_argument("--wait", action="store_true", help="keep polling until every batch is in")
    p.add_argument("--interval", type=float, default=60.0,
                   help="seconds between polls with --wait (default 60)")
    _client_arguments(p)
    p.set_defaults(func=cmd_judge_status)

    p = sub.add_parser("bloom-suggest", help="Bloom labels of questions suggested by an "
                                             "Anthropic model, stored as its annotations")
    _judge_arguments(p)
    p.set_defaults(func=cmd_bloom_suggest)

    p = sub.add_parser("check-answer", help="check one final answer against a reference by rule")
    p.add_argument("--gold", required=True, help="the reference answer (LaTeX or plain text)")
    p.add_argument("--pred", required=True, help="the answer, or a whole response to find it in")
    p.add_argument("--type", help="answer type: NV, EX, EQ, IN, TF, MC, or a list such as NV,EX "
                                  "(default: guessed from the reference)")
    p.add_argument("--unit", help="the reference's unit when it is not in the answer")
    p.add_argument("--json", action="store_true", help='print {"outcome": ..., "reason": ...}')
    _answer_arguments(p)
    p.set_defaults(func=cmd_check_answer)

    p = sub.add_parser("check-answers", help="check a JSON Lines file of answers by rule")
    p.add_argument("file", help='lines {"id", "gold", "pred", "type"?, "unit"?}')
    p.add_argument("--out", metavar="FILE", help="write the results here (default: stdout)")
    _answer_arguments(p, workers=True)
    p.set_defaults(func=cmd_check_answers)

    p = sub.add_parser("verify", help="check every response that has a reference answer and "
                                      "store the results as the rater 'rules'")
    p.add_argument("db")
    p.add_argument("--recheck", action="store_true",
                   help="check again responses the rules rater has already checked")
    _answer_arguments(p, workers=True)
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("embed", help="embed every question (kept in the project, never twice)")
    p.add_argument("db")
    _model_arguments(p)
    p.set_defaults(func=cmd_embed)

    p = sub.add_parser("dedup", help="find near-duplicate questions within the project or "
                                     "against another set")
    p.add_argument("db")
    p.add_argument("--against", metavar="SRC",
                   help="another project file, or a questions file (JSON Lines, JSON or CSV "
                        "with id, question and options)")
    p.add_argument("--map", action="append", metavar="SRC=DST",
                   help="rename a field of the --against file to physgrade's (repeatable), "
                        "e.g. --map problem=question --map index=id")
    p.add_argument("--jaccard", type=float, default=0.4, metavar="J",
                   help="word 5-gram Jaccard threshold of stage 1 (default 0.4)")
    p.add_argument("--cosine", type=float, default=None, metavar="C",
                   help="embedding cosine threshold of stage 2 (default: the value calibrated "
                        "for the embedded model, see the README; set it for another model)")
    p.add_argument("--judge", metavar="MODEL",
                   help="stage 3: ask this Anthropic model whether each pair is a close "
                        "duplicate or a same-topic neighbour (ANTHROPIC_API_KEY)")
    p.add_argument("--out", metavar="FILE.csv", help="write the pairs of this audit as CSV")
    p.add_argument("--json", action="store_true",
                   help='print {"provider", "n_a", "n_b", "pairs": [...]} on stdout')
    _model_arguments(p)
    p.add_argument("--concurrency", type=int, default=8, metavar="K",
                   help="judge calls in flight at once (default 8)")
    p.add_argument("--price-in", type=float, metavar="USD",
                   help="judge price per million input tokens, for a model the price table lacks")
    p.add_argument("--price-out", type=float, metavar="USD",
                   help="judge price per million output tokens")
    _client_arguments(p)
    p.set_defaults(func=cmd_dedup)

    p = sub.add_parser("review-sample", help="draw a stratified sample of responses for experts "
                                             "to audit judges on, the same for every judge")
    p.add_argument("db")
    p.add_argument("--judge", action="append", required=True, metavar="LABEL",
                   help="a judge to audit, e.g. 'arbiter-large [prefs-v1]' (repeatable)")
    p.add_argument("--per-stratum", type=int, required=True, metavar="N",
                   help="responses to draw from each stratum (all of a smaller one)")
    p.add_argument("--seed", type=int, metavar="S",
                   help="random seed; the same seed and data give the same sample (default: "
                        "a random one, printed)")
    p.add_argument("--strata", default="topic,bloom,model", metavar="topic,bloom,model",
                   help="the facets to stratify over (default: all three)")
    p.add_argument("--name", help="the sample's name (default: 'sample N')")
    p.set_defaults(func=cmd_review_sample)

    p = sub.add_parser("demo", help="create (or reopen) the bundled demo project and open it")
    p.add_argument("--db", help="where to keep the demo project (default: your data folder)")
    p.add_argument("--no-gui", action="store_true", help="only create it; do not open the app")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("gui", help="open the desktop app")
    p.add_argument("db", nargs="?")
    p.set_defaults(func=cmd_gui)
    return parser


def _client_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--prompts", metavar="DIR", help="a folder of edited prompt templates "
                                                    "(default: the bundled ones)")
    p.add_argument("--timeout", type=float, default=120.0,
                   help="seconds to wait for one answer (default 120)")
    p.add_argument("--max-retries", type=int, default=4,
                   help="retries of rate limits, overload, server errors and timeouts (default 4)")


def _report_arguments(p: argparse.ArgumentParser, facets: str) -> None:
    p.add_argument("db")
    p.add_argument("--out", required=True, metavar="DIR", help="folder to write the report into")
    p.add_argument("--format", default="html,csv,json", metavar="html,csv,json",
                   help="which files to write (default: all three)")
    p.add_argument("--filter", action="append", metavar="FIELD=VALUE[,VALUE]",
                   help=f"narrow the report (repeatable): {facets}")


def _model_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", metavar="PATH",
                   help="a local sentence-transformers folder or .onnx file (default: the "
                        "embedded all-MiniLM-L6-v2)")
    p.add_argument("--quantize", action="store_true",
                   help="use an int8 copy of the model (faster on CPUs, slightly different "
                        "scores)")


def _answer_arguments(p: argparse.ArgumentParser, workers: bool = False) -> None:
    p.add_argument("--rtol", type=float, default=0.02,
                   help="relative tolerance for numbers (default 0.02, i.e. 2%%)")
    p.add_argument("--mantissa", action="store_true",
                   help="compare mantissas only, ignoring exponents, as UGPhysics does "
                        "(lets order-of-magnitude errors pass; off by default)")
    if workers:
        p.add_argument("--workers", type=int, default=os.cpu_count() or 1, metavar="N",
                       help="checks run at once (default: one per core)")


def _judge_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("db")
    p.add_argument("--model", required=True, help="the Anthropic model, e.g. claude-haiku-4-5")
    p.add_argument("--limit", type=int, metavar="N", help="at most N calls this run")
    p.add_argument("--filter", action="append", metavar="FIELD=VALUE[,VALUE]",
                   help="narrow the run (repeatable): model, topic, kind, bloom")
    p.add_argument("--concurrency", type=int, default=8, metavar="K",
                   help="calls in flight at once (default 8)")
    p.add_argument("--dry-run", action="store_true",
                   help="print the number of calls, tokens and cost; send nothing")
    p.add_argument("--batch", action="store_true",
                   help="submit through the Message Batches API (half price, results within "
                        "a day); collect with judge-status")
    p.add_argument("--price-in", type=float, metavar="USD",
                   help="price per million input tokens, for a model the price table lacks")
    p.add_argument("--price-out", type=float, metavar="USD",
                   help="price per million output tokens")
    _client_arguments(p)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command is None:
        args = build_parser().parse_args(["gui"])
    try:
        args.func(args)
    except ImportErrors as exc:
        print(f"physgrade: import refused, nothing changed: {exc}", file=sys.stderr)
        if args.verbose:
            for error in exc.errors[1:]:
                print(f"  also: {error}", file=sys.stderr)
        return 1
    except (Cancelled, KeyboardInterrupt):
        print("physgrade: cancelled, nothing changed", file=sys.stderr)
        return 130
    except FormatError as exc:
        print(f"physgrade: import refused, nothing changed: {exc}", file=sys.stderr)
        return 1
    except (ProjectError, ScoreError, CommandError, CredentialsError, ValueError, OSError) as exc:
        print(f"physgrade: {exc}", file=sys.stderr)
        return 1
    except sqlite3.Error as exc:  # e.g. another program holding the project locked for long
        print(f"physgrade: the project file refused the change, nothing changed: {exc}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
