"""The ``physgrade`` command line: one small function per command over the core modules.

Each command is declared at its handler, ``@command(name, help, *arguments)``, so what a command
takes is read beside what it does; :func:`build_parser` builds the subcommands from that registry
in the order they are declared. Arguments several commands share are tuples spliced in
(:data:`CLIENT`, :data:`MODEL`, :data:`ANSWER`, :data:`JUDGE`, :func:`report_arguments`).

A command interrupted (Ctrl+C, SIGTERM, or a cancelled task) after it stored work says what the
project keeps; only one that is all or nothing says "nothing changed".
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import sys
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Callable, Iterator, Sequence

from physgrade import __version__, formats, levels
from physgrade.demo import DEMO_TABLES, build_demo, default_demo_path, record_counts
from physgrade.exporter import export_kind
from physgrade.failures import explain
from physgrade.formats import FormatError, ImportErrors
from physgrade.importer import import_file
from physgrade.judge.client import CredentialsError
from physgrade.project import Project, ProjectError, now_iso
from physgrade.queries import COUNTED, project_info
from physgrade.raters import HUMAN, LLM, rater_label
from physgrade.report.options import MIN_GRADES
from physgrade.rubric import ScoreError, value_text
from physgrade.tasks import Cancelled, Task
from physgrade.wording import count

if TYPE_CHECKING:  # the judge stack is imported by the commands that run judges
    import anthropic

    from physgrade.answers.sandbox import Request
    from physgrade.estimation.sample import EstimationSample
    from physgrade.judge.pricing import Price
    from physgrade.judge.prompts import Prompts
    from physgrade.judge.runner import Plan, RunSummary
    from physgrade.refinement.measures import Comparison
    from physgrade.stats.estimate import Estimate

#: The entry point group through which the desktop app makes itself known: the core never
#: imports the app's package, so it runs where only the core is installed.
APP_ENTRY_POINTS = "physgrade.app"


class CommandError(Exception):
    """A failure to report on one line of stderr, with a non-zero exit."""


class Interrupted(Cancelled):
    """A command stopped after storing some of its work; the message says what the project keeps."""


# -- declaring commands ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Arg:
    """One ``add_argument`` call, kept until the parser is built."""

    flags: tuple[str, ...]
    options: dict[str, Any]


def arg(*flags: str, **options: Any) -> Arg:
    """An argument as ``ArgumentParser.add_argument`` takes it."""
    return Arg(flags, options)


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    help: str
    arguments: tuple[Arg, ...]
    run: Callable[[argparse.Namespace], int | None]


#: Every command, in the order ``physgrade --help`` lists them.
COMMANDS: dict[str, Command] = {}


def command(name: str, help: str, *arguments: Arg | Sequence[Arg]):
    """Register the decorated handler as the command ``name``; ``arguments`` are its arguments in
    order, a tuple of them standing for a shared group. A handler returns nothing, or the exit
    status when a command that worked has still something to say by it (``merge``: conflicts
    wait)."""
    flat = tuple(a for item in arguments for a in ((item,) if isinstance(item, Arg) else item))

    def register(run: Callable[[argparse.Namespace], int | None]
                 ) -> Callable[[argparse.Namespace], int | None]:
        COMMANDS[name] = Command(name, help, flat, run)
        return run
    return register


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="physgrade", description="Grade language-model physics solutions with the P-REFS "
                                      "rubric, and audit LLM judges.")
    parser.add_argument("--version", action="version", version=f"physgrade {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="list every problem an import finds, not only the first")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for declared in COMMANDS.values():
        p = sub.add_parser(declared.name, help=declared.help)
        for argument in declared.arguments:
            p.add_argument(*argument.flags, **argument.options)
        p.set_defaults(func=declared.run)
    return parser


# -- arguments several commands share -------------------------------------------------------

DB = arg("db")
JSON = arg("--json", action="store_true", help="print one JSON object")
BOOTSTRAP = (arg("--resamples", type=int, default=1000,
                 help="bootstrap resamples for Krippendorff's alpha's interval (default 1000)"),
             arg("--seed", type=int, default=0, help="bootstrap seed (default 0)"))

#: How judge calls are made: the prompts, and the client's patience.
CLIENT = (arg("--prompts", metavar="DIR", help="a folder of edited prompt templates "
                                               "(default: the bundled ones)"),
          arg("--timeout", type=float, default=120.0,
              help="seconds to wait for one answer (default 120)"),
          arg("--max-retries", type=int, default=4,
              help="retries of rate limits, overload, server errors and timeouts (default 4)"))

#: Which embedding model ``embed`` and ``dedup`` use.
MODEL = (arg("--model", metavar="PATH",
             help="a local sentence-transformers folder or .onnx file (default: the "
                  "embedded all-MiniLM-L6-v2)"),
         arg("--quantize", action="store_true",
             help="use an int8 copy of the model (faster on CPUs, slightly different scores)"))

#: How final answers are compared.
ANSWER = (arg("--rtol", type=float,
              help="relative tolerance for numbers (default: the project's answer tolerance, "
                   "which the judge prompt states too; 0.01, i.e. 1%%, unless set)"),
          arg("--mantissa", action="store_true",
              help="compare mantissas only, ignoring exponents, as UGPhysics does "
                   "(lets order-of-magnitude errors pass; off by default)"),
          arg("--preset", choices=["ugphysics"],
              help="a published benchmark's rules instead: ugphysics compares mantissas only at "
                   "1e-2 and removes physical constants from expressions and equations, to "
                   "reproduce UGPhysics' numbers (lets 3000 match 3.02e6; never the default)"))
WORKERS = arg("--workers", type=int, default=os.cpu_count() or 1, metavar="N",
              help="checks run at once (default: one per core)")

#: How many calls go out at once, and what they cost where the price table lacks the model.
CALLS = (arg("--concurrency", type=int, default=8, metavar="K",
             help="calls in flight at once (default 8)"),
         arg("--price-in", type=float, metavar="USD",
             help="price per million input tokens, for a model the price table lacks"),
         arg("--price-out", type=float, metavar="USD", help="price per million output tokens"))

#: Said under an estimate without a price.
PRICE_HINT = "  give --price-in and --price-out (US$ per million tokens) to price it"

#: A judge run of ``judge`` or ``bloom-suggest``: which items, which model, how it is sent.
JUDGE = (DB,
         arg("--model", required=True, help="the Anthropic model, e.g. claude-haiku-4-5"),
         arg("--limit", type=int, metavar="N", help="at most N calls this run"),
         arg("--filter", action="append", metavar="FIELD=VALUE[,VALUE]",
             help="narrow the run (repeatable): model, topic, kind, bloom, or a declared facet"),
         arg("--dry-run", action="store_true",
             help="print the number of calls, tokens and cost; send nothing"),
         arg("--batch", action="store_true",
             help="submit through the Message Batches API (half price, results within a day); "
                  "collect with judge-status"),
         *CALLS, *CLIENT)


#: ``verify --model``: the model stage after the rules.
MODEL_STAGE = (arg("--model", help="then ask this Anthropic model (e.g. claude-haiku-4-5) about "
                                   "every answer the rules did not settle, one call each, and "
                                   "store the combined result as the rater 'rules+MODEL'"),
               arg("--limit", type=int, metavar="N", help="with --model: at most N calls this run"),
               arg("--dry-run", action="store_true",
                   help="with --model: print the model stage's calls and cost and send nothing "
                        "(the rules still run and store their checks)"),
               arg("--retry-failed", action="store_true",
                   help="with --model: ask again where an earlier answer did not fit"),
               arg("--batch", action="store_true",
                   help="with --model: submit the model's calls through the Message Batches API "
                        "(half price, results within a day); collect with judge-status"),
               *CALLS, *CLIENT)


def report_arguments(facets: str) -> tuple[Arg, ...]:
    """Where a report goes and what it covers; ``facets`` names what ``--filter`` accepts."""
    return (DB,
            arg("--out", required=True, metavar="DIR", help="folder to write the report into"),
            arg("--format", default="html,csv,json", metavar="html,csv,json",
                help="which files to write (default: all three)"),
            arg("--filter", action="append", metavar="FIELD=VALUE[,VALUE]",
                help=f"narrow the report (repeatable): {facets}"))


# -- saying what an interrupted command kept ------------------------------------------------


@contextmanager
def telling_what_is_kept(kept: Callable[[], str | None]) -> Iterator[None]:
    """Turn Ctrl+C or a cancelled task into :class:`Interrupted` saying what ``kept()`` finds
    stored, so that nobody reruns work that is in the project; where it finds nothing, the plain
    cancellation ("nothing changed") stands."""
    try:
        yield
    except Interrupted:
        raise
    except (Cancelled, KeyboardInterrupt):
        said = kept()
        if said is None:
            raise
        raise Interrupted(said) from None


@contextmanager
def sigterm_as_ctrl_c() -> Iterator[None]:
    """Take SIGTERM (``kill``, a scheduler, the end of a session) as Ctrl+C while a command runs:
    it stops the same way, removing what it had under way and saying what the project keeps,
    where the default would end it on the spot."""
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


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


# -- projects and their records -------------------------------------------------------------


@command("init", "create an empty project file",
         arg("db", help="path of the new project file (e.g. study.physgrade)"))
def cmd_init(args: argparse.Namespace) -> None:
    Project.create(args.db).close()
    print(f"created {args.db}")


@command("import", "import a JSON Lines, JSON or CSV file (all or nothing)",
         DB, arg("file"), arg("--kind", required=True, choices=formats.FILE_KINDS),
         arg("--map", action="append", metavar="SRC=DST",
             help="rename a field of the file to physgrade's (repeatable); DST may be nested, "
                  "e.g. --map A=options.A"),
         arg("--facet", action="append", metavar="F[,F]",
             help="questions: declare these fields facets, to filter and stratify by (the "
                  "built-in ones the records carry, such as language, are declared anyway)"))
def cmd_import(args: argparse.Namespace) -> None:
    mapping = formats.parse_mapping(args.map or [])
    named = [name for given in args.facet or [] for name in given.split(",")]
    with Project.open(args.db) as project, progress_task() as task:
        result = import_file(project, args.file, args.kind, mapping, task, named)
    print(result.summary())


@command("facets", "the declared facets of the questions, with their values and counts; declare "
                   "or undeclare fields",
         DB, arg("--declare", metavar="F[,F]", help="declare these question fields facets"),
         arg("--undeclare", metavar="F[,F]", help="stop offering these facets (the fields stay)"),
         JSON)
def cmd_facets(args: argparse.Namespace) -> None:
    from physgrade import facets

    with Project.open(args.db) as project:
        if args.declare:
            facets.declare(project, args.declare.split(","))
        if args.undeclare:
            facets.undeclare(project, args.undeclare.split(","))
        found = {name: facets.values(project, name) for name in facets.declared(project)}
    if args.json:
        print(json.dumps({"facets": {name: [asdict(value) for value in values]
                                     for name, values in found.items()}}, ensure_ascii=False))
        return
    if not found:
        print("no declared facets; declare a question field with --declare F (or import with "
              "--facet F)")
    for name, values in found.items():
        print(f"{name}:")
        _print_table(["value", "questions", "responses"],
                     [[v.value, f"{v.questions:,}", f"{v.responses:,}"] for v in values])


@command("export", "export records as JSON Lines (or CSV for .csv)",
         DB, arg("--kind", required=True, choices=formats.FILE_KINDS),
         arg("--out", required=True, help="output file (.jsonl or .csv)"))
def cmd_export(args: argparse.Namespace) -> None:
    with Project.open(args.db) as project, progress_task() as task:
        written = export_kind(project, args.kind, args.out, task)
    print(f"wrote {written} {args.kind} records to {args.out}")


@command("import-steps", "import a ProcessBench, PRM800K or TRL stepwise file as one rater's "
                         "step marks of the project's responses (all or nothing)",
         DB, arg("file"), arg("--format", required=True, choices=formats.STEP_FORMATS),
         arg("--rater", required=True, metavar="NAME", help="whose marks they become"),
         arg("--rater-kind", choices=[HUMAN, LLM], default=HUMAN,
             help="a person (default) or a language model"),
         arg("--map", action="append", metavar="SRC=DST",
             help="rename a field of the file to the format's (repeatable), e.g. "
                  "--map uid=response_id"))
def cmd_import_steps(args: argparse.Namespace) -> None:
    from physgrade.step_formats import import_steps

    mapping = formats.parse_mapping(args.map or [])
    with Project.open(args.db) as project, progress_task() as task:
        result = import_steps(project, args.file, args.format, args.rater, args.rater_kind,
                              mapping, task)
    print(result.summary())


@command("export-steps", "export one rater's step marks as ProcessBench, PRM800K or TRL "
                         "stepwise JSON Lines",
         DB, arg("--format", required=True, choices=formats.STEP_FORMATS),
         arg("--rater", required=True, metavar="NAME",
             help="whose marks: a name, or a judge as 'NAME [VERSION]'"),
         arg("--out", required=True, help="output file (.jsonl)"))
def cmd_export_steps(args: argparse.Namespace) -> None:
    from physgrade.step_formats import export_steps

    with Project.open(args.db) as project, progress_task() as task:
        written = export_steps(project, args.out, args.format, args.rater, task)
    print(f"wrote {written} {args.format} records to {args.out}")


@command("info", "counts, models, raters and graded share", DB, JSON)
def cmd_info(args: argparse.Namespace) -> None:
    from physgrade.team.packs import origin

    with Project.open(args.db) as project:
        info = project_info(project)
        pack = origin(project)
    if args.json:
        print(json.dumps(info.as_dict() | {"pack": asdict(pack) if pack else None}, indent=2,
                         ensure_ascii=False))
        return
    print(f"{info.path} (schema {info.schema_version})")
    if pack is not None:
        print(f"  grader pack for {pack.grader}, made from {pack.project_name} on "
              f"{pack.made_at[:10]}" + (" (blind)" if pack.blind else ""))
    for table, label in COUNTED.items():
        print(f"  {label:<20} {info.counts[table]:>9,}")
    print(f"  {'template-compliant':<20} {info.compliant_responses:>9,}")
    print(f"  {'graded by a person':<20} {info.graded_responses:>9,}  "
          f"({info.graded_share:.1%} of responses)")
    if info.models:
        print("models:")
        for model, responses in info.models.items():
            print(f"  {model:<28} {responses:>7,} responses")
    if info.raters:
        print("raters:")
        for rater in info.raters:
            named = rater_label(rater.name, rater.prompt_version, rater.run)
            work = [f"{rater.responses:,} responses scored"] if rater.responses else []
            work += [f"{rater.questions:,} questions labelled"] if rater.questions else []
            print(f"  {named:<28} {rater.kind:<6} {', '.join(work) or 'no work'}")


@command("rubric", "the rubrics with what each score level means; --set rewords the levels",
         DB, arg("--json", action="store_true",
                 help="print them as one JSON object (the file --set takes; see docs/formats.md)"),
         arg("--set", metavar="FILE",
             help="replace level descriptions from a JSON file shaped as --json prints "
                  "(descriptions only, all or nothing)"))
def cmd_rubric(args: argparse.Namespace) -> None:
    with Project.open(args.db) as project:
        if args.set:
            edits, _ = levels.set_levels(project, levels.load_document(args.set), args.set)
            for edit in edits:
                print(f"{edit.rubric.title} {edit.criterion} {value_text(edit.value)}: {edit.after}")
            print(f"{count(len(edits), 'description')} changed" if edits
                  else "nothing changed: every description was already as the file gives it")
            return
        shown = levels.document(project)
    if args.json:
        print(json.dumps(shown, indent=2, ensure_ascii=False))
        return
    for rubric in shown["rubrics"]:
        print(f"{rubric['title']} rubric ({rubric['maximum']} points)")
        for criterion in rubric["criteria"]:
            na = " or N/A" if criterion["allows_na"] else ""
            print(f"  {criterion['key']:<4} {criterion['name']} (0-{criterion['maximum']}{na}): "
                  f"{criterion['help']}")
            for level, text in criterion["levels"].items():
                print(f"       {level:<4} {text}")


@command("taxonomy", "the failure taxonomies a first wrong step is put in; --set rewords or adds",
         DB, arg("--json", action="store_true",
                 help="print them as one JSON object (the file --set takes; see docs/formats.md)"),
         arg("--set", metavar="FILE",
             help="store the taxonomies of a JSON file shaped as --json prints (a built-in one "
                  "keeps its category keys; all or nothing); its 'default' chooses the default"))
def cmd_taxonomy(args: argparse.Namespace) -> None:
    from physgrade import taxonomies

    with Project.open(args.db) as project:
        if args.set:
            document = taxonomies.load_document(args.set)
            changed = taxonomies.set_taxonomies(project, document, args.set)
            print("taxonomies stored" if changed else "nothing to store: the file names none")
        shown = taxonomies.document(project)
    if args.json:
        print(json.dumps(shown, indent=2, ensure_ascii=False))
        return
    if args.set:
        return
    for taxonomy in shown["taxonomies"]:
        default = " (the default)" if taxonomy["name"] == shown["default"] else ""
        print(f"{taxonomy['name']}{default}: {taxonomy['title']}")
        for category in taxonomy["categories"]:
            stages = f" [{', '.join(category['criteria'])}]" if category["criteria"] else ""
            print(f"  {category['key']:<20} {category['title']}{stages}: "
                  f"{category['description']}")


# -- agreement and reports ------------------------------------------------------------------


@command("agreement", "agreement coefficients of the raters in a ratings CSV",
         arg("file", help="CSV with a header, one row per item, one column per rater; an empty "
                          "cell is a missing rating"),
         # The choices are physgrade.stats.SCALES, spelled out so that building the parser loads
         # no scipy.
         arg("--scale", required=True, choices=("nominal", "ordinal", "interval", "ratio")),
         arg("--id-column", metavar="COL", help="a column that identifies items (not a rater)"),
         arg("--categories", metavar="0,1,2",
             help="all possible ratings, comma-separated (default: the ratings that occur)"),
         BOOTSTRAP, JSON)
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


@command("report", "agreement of judges with people, and the study's analyses, as HTML, CSV "
                   "and JSON",
         report_arguments("model, topic, kind, bloom (cognitive level), judge (e.g. "
                          "'judge-a [v1]'), grader, or a declared facet (see facets)"),
         arg("--rater", help="whose grades the study's analyses use (default: the human "
                             "consensus, else the first judge)"),
         arg("--sample", metavar="NAME", help="the estimation sample whose expert grades "
                                              "correct the judges' scores (default: the newest "
                                              "drawn at random)"),
         arg("--min-grades", type=int, default=MIN_GRADES, metavar="N",
             help="fold people with fewer than N grades into one 'others' row of the HTML "
                  "tables and leave them out of per-rater figures; CSV and JSON keep their "
                  f"rows (default {MIN_GRADES}; 0 folds nobody)"),
         BOOTSTRAP)
def cmd_report(args: argparse.Namespace) -> None:
    # Imported here: pandas, scipy and matplotlib are for reports, not for every command.
    from physgrade.facets import parse_filter
    from physgrade.report.build import build_report
    from physgrade.report.options import ReportOptions
    from physgrade.report.writers import check_formats, write_report
    formats = check_formats(args.format.split(","))
    with Project.open(args.db) as project, progress_task() as task:
        options = ReportOptions(parse_filter(project, args.filter or []), args.rater,
                                args.resamples, args.seed, sample=args.sample,
                                min_grades=args.min_grades)
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


@command("bloom-report", "agreement on Bloom labels (people and models) and the final labels' "
                         "distribution, as HTML, CSV and JSON",
         report_arguments("topic, kind, bloom (final cognitive level), judge (a model's label), "
                          "grader (an annotator), or a declared facet"))
def cmd_bloom_report(args: argparse.Namespace) -> None:
    # Imported here, as for ``report``: the statistics stack is for reports only.
    from datetime import datetime, timezone

    from physgrade.annotation.figures import read_labels, sources
    from physgrade.facets import parse_filter
    from physgrade.report.bloom_labels import bloom_section
    from physgrade.report.model import Report
    from physgrade.report.writers import check_formats, write_report

    formats_chosen = check_formats(args.format.split(","))
    with Project.open(args.db) as project, progress_task() as task:
        report_filter = parse_filter(project, args.filter or [])
        labels = read_labels(project)
        section = bloom_section(labels, 1, report_filter)
        if section is None:
            raise CommandError(f"nobody has given a Bloom label in {args.db} yet: nothing to "
                               "report")
        settings = {"project": str(project.path), "created_at": datetime.now(
                        timezone.utc).isoformat(timespec="seconds"),
                    "physgrade": __version__, "filter": report_filter.describe(),
                    "final_labels": sources(labels, report_filter)}
        report = Report(f"physgrade Bloom report: {project.path.name}", settings, [section])
        written = write_report(report, args.out, formats_chosen, task)
    print(f"Bloom report written to {args.out}:")
    _print_written(written)


# -- judges ----------------------------------------------------------------------------------

#: What one answer of each judge purpose is called when a run says what it stored.
ANSWER_NOUNS = {"verdicts": "verdict", "bloom": "Bloom label", "duplicates": "pair label",
                "answers": "answer check"}


@command("judge", "P-REFS verdicts from an Anthropic model (ANTHROPIC_API_KEY)",
         JUDGE, arg("--retry-failed", action="store_true",
                    help="ask again where an earlier answer did not fit the rubric"),
         arg("--run", default="", metavar="LABEL",
             help="a further run of the same judge and prompt, a rater of its own ('MODEL "
                  "[VERSION, run LABEL]'): it asks again what other runs answered"),
         arg("--temperature", type=float, metavar="T",
             help="sampling temperature, 0 to 1 (default: not sent, the API's 1.0)"),
         arg("--top-p", type=float, metavar="P",
             help="nucleus sampling cutoff, above 0 to 1 (default: not sent)"))
def cmd_judge(args: argparse.Namespace) -> None:
    _judge_run(args, "verdicts", "judging")


@command("judge-status", "poll submitted batches and store their results",
         DB, arg("--wait", action="store_true", help="keep polling until every batch is in"),
         arg("--interval", type=float, default=60.0,
             help="seconds between polls with --wait (default 60)"),
         CLIENT)
def cmd_judge_status(args: argparse.Namespace) -> None:
    import time

    from physgrade.judge import batches
    from physgrade.judge.client import connect

    with Project.open(args.db) as project:
        prompts = _prompts(args, project)
        if not batches.batch_history(project):
            print("no batches submitted from this project")
            return
        client = connect(args.timeout, args.max_retries)
        open_batches = {state.id for state in batches.batch_history(project) if not state.ingested}
        before = _batch_results(project, open_batches)
        with telling_what_is_kept(lambda: _collected_kept(project, open_batches, before)):
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


@command("bloom-suggest", "Bloom labels of questions suggested by an Anthropic model, stored as "
                          "its annotations", JUDGE)
def cmd_bloom_suggest(args: argparse.Namespace) -> None:
    _judge_run(args, "bloom", "Bloom labels")


@command("prompts", "the prompt versions judges ran under; --show prints one whole, its "
                    "templates and examples",
         DB, arg("--show", metavar="VERSION",
                 help="print one version's texts: its templates and, for a refined one, the "
                      "examples it was given"),
         JSON)
def cmd_prompts(args: argparse.Namespace) -> None:
    from physgrade.judge import versions

    with Project.open(args.db) as project:
        shown = versions.find(project, args.show) if args.show is not None else None
        found = versions.listing(project) if shown is None else [shown]
    if args.show is not None:
        if shown is None:
            raise CommandError(f"no prompt version {args.show!r} in {args.db} (its versions: "
                               f"{', '.join(v.version for v in found) or 'none yet'})")
        print(json.dumps(shown.as_dict(texts=True), indent=2, ensure_ascii=False) if args.json
              else versions.text(shown))
        return
    if args.json:
        print(json.dumps({"versions": [v.as_dict() for v in found]}, indent=2,
                         ensure_ascii=False))
        return
    if not found:
        print(f"no prompt versions in {args.db} yet: a judge run records the prompts it sends "
              "(physgrade judge DB --model MODEL), and imported verdicts name theirs")
        return
    _print_table(["version", "purpose", "made", "from", "judges (verdicts)", "examples"],
                 [[v.version, v.purpose or "-", v.created_at[:10] if v.created_at else "imported",
                   v.base or "-", ", ".join(f"{name}: {n:,}" for name, n in v.judges) or "-",
                   f"{len(v.examples):,}"] for v in found], counts_from=5)


@command("judge-refine", "refine a judge with expert corrections as examples in its prompt, and "
                         "measure it before and after on responses held out from them",
         DB, arg("--judge", required=True, metavar="'NAME [VERSION]'",
                 help="the judge to refine (a name alone if it has one prompt version)"),
         arg("--model", required=True,
             help="the Anthropic model that judges under the refined prompt"),
         arg("--reference", default="consensus", metavar="consensus|GRADER",
             help="whose grades correct the judge: the experts' consensus (default) or a grader"),
         arg("--examples", type=int, default=4, metavar="K",
             help="at most K corrected responses shown as examples (default 4)"),
         arg("--holdout", type=float, default=0.5, metavar="SHARE",
             help="the share of graded responses held out, split by question (default 0.5)"),
         arg("--seed", type=int, default=0,
             help="seed of the split and of the examples' order (default 0); the same settings "
                  "reuse the stored split"),
         arg("--criteria", metavar="KEY[,KEY]",
             help="aim the examples at these criteria (default: every criterion, those the "
                  "judge disagrees on most first)"),
         arg("--dry-run", action="store_true",
             help="print the split, the examples and what the calls cost; send and store nothing"),
         arg("--batch", action="store_true",
             help="submit the calls through the Message Batches API; collect with judge-status, "
                  "then run judge-refine again for the figures"),
         *CALLS, *CLIENT, JSON)
def cmd_judge_refine(args: argparse.Namespace) -> None:
    from physgrade.judge import verdicts
    from physgrade.judge.client import connect
    from physgrade.judge.pricing import price_for
    from physgrade.judge.runner import StopReason
    from physgrade.refinement import refine

    price = price_for(args.model, args.price_in, args.price_out)
    criteria = tuple(key.strip() for key in (args.criteria or "").split(",") if key.strip())
    settings = refine.Settings(args.judge, args.model, args.reference, args.examples,
                               args.holdout, args.seed, criteria)
    say = sys.stderr if args.json else sys.stdout
    with Project.open(args.db) as project:
        prompts = _prompts(args, project)
        with progress_task() as task:
            planned = refine.plan(project, settings, prompts, price, args.batch, task)
        print(planned.text(), file=say)
        if price is None and planned.pending:
            print(PRICE_HINT, file=say)
        if not planned.examples:
            raise CommandError(f"nothing to refine: {planned.reference} never corrected "
                               f"{planned.judge} on the calibration part")
        if args.dry_run:
            print("dry run: nothing was sent or stored", file=say)
            if args.json:
                print(json.dumps(planned.as_dict(), indent=2))
            return
        client = connect(args.timeout, args.max_retries) if planned.pending else None
        if args.batch and client is not None:
            planned, _ = refine.save(project, planned)
            for step, used in ((planned.before, planned.before_prompts),
                               (planned.after, planned.refined_prompts)):
                if step.pending:
                    _submit_batches(args.db, project, client, step, used)
            print("once judge-status has collected them, run this command again for the "
                  "before/after figures", file=say)
            return
        runs_before = {step.rater: verdicts.stored(project, step.model, step.prompt_version)
                       for step in (planned.before, planned.after)}

        def kept() -> str | None:
            said = [_answers_kept(project, step, runs_before[step.rater])
                    for step in (planned.before, planned.after)]
            return "; ".join(f"{step.rater}: {part}" for step, part
                             in zip((planned.before, planned.after), said) if part) or None

        with telling_what_is_kept(kept):
            with progress_task() as task:
                refined = refine.run(project, client, planned, price, args.concurrency, task)
            for summary in refined.runs:
                print(summary.text(), file=say)
            if refined.stopped in (StopReason.CANCELLED, StopReason.INTERRUPTED):
                raise Cancelled()
    if refined.stopped:
        raise CommandError(f"the refinement stopped early: {refined.stopped}; every verdict "
                           "that arrived is stored, and running it again asks only for the rest")
    assert refined.comparison is not None
    if args.json:
        print(json.dumps(refined.as_dict(), indent=2))
    else:
        _print_comparison(refined.comparison)


def _print_comparison(comparison: Comparison) -> None:
    """The before/after table of a refinement (shares in %, leniency and changes in points,
    AC2 as a coefficient)."""
    print(f"\nagreement with {comparison.reference} on {comparison.heldout:,} held-out "
          f"responses\n  before: {comparison.before}\n  after:  {comparison.after}")
    rows = [[row.title, row.criterion, f"{row.difference.n:,}", *row.texts()]
            for row in comparison.rows]
    _print_table(["measure", "criterion", "n", "before", "after", "after − before"], rows,
                 counts_from=2)
    print("  leniency: the mean score share, rater − reference (above 0: the rater gives more); "
          "intervals are 95%")


def _judge_run(args: argparse.Namespace, purpose: str, noun: str) -> None:
    """What ``judge`` and ``bloom-suggest`` share: plan, then dry run, batch or direct run."""
    from physgrade.facets import parse_filter

    # Imported here: the anthropic client is for judge runs only.
    from physgrade.judge.client import connect
    from physgrade.judge.pricing import price_for
    from physgrade.judge.purposes import PURPOSES
    from physgrade.judge.scope import Scope
    price = price_for(args.model, args.price_in, args.price_out)
    with Project.open(args.db) as project:
        scope = Scope(parse_filter(project, args.filter or []), args.limit,
                      getattr(args, "retry_failed", False))
        prompts = _prompts(args, project)
        if purpose == "verdicts":  # only verdicts have further runs and chosen decoding
            from physgrade.judge import verdicts
            from physgrade.judge.client import Decoding
            plan = verdicts.plan(project, args.model, prompts, scope, price, args.batch, args.run,
                                 Decoding(args.temperature, args.top_p))
        else:
            plan = PURPOSES[purpose].plan(project, args.model, prompts, scope, price, args.batch)
        print(f"{noun} with {plan.text()}")
        if price is None:
            print(PRICE_HINT)
        if args.dry_run:
            print("dry run: nothing was sent")
            return
        if not plan.pending:
            print("nothing to do")
            return
        client = connect(args.timeout, args.max_retries)
        if args.batch:
            _submit_batches(args.db, project, client, plan, prompts)
            return
        summary = _ask_directly(project, client, plan, prompts, price, args.concurrency)
    if summary.stopped:
        raise CommandError(f"the run stopped early: {summary.stopped}")


def _ask_directly(project: Project, client: anthropic.Anthropic, plan: Plan, prompts: Prompts,
                  price: Price | None, concurrency: int, say: IO[str] | None = None,
                  already: str = "") -> RunSummary:
    """Run ``plan`` now and print its summary. Answers are committed as they arrive, so an
    interrupted run says how many the project holds (``already``: what the command stored
    before it)."""
    from physgrade.judge.purposes import run_plan, stored_by
    from physgrade.judge.runner import StopReason

    before = stored_by(project, plan)

    def kept() -> str | None:
        answers = _answers_kept(project, plan, before)
        return "; ".join(part for part in (already, answers) if part) or None

    with telling_what_is_kept(kept):
        with progress_task() as task:
            summary = run_plan(project, client, plan, prompts, price, concurrency, task)
        print(summary.text(), file=say or sys.stdout)
        if summary.stopped in (StopReason.CANCELLED, StopReason.INTERRUPTED):
            raise Cancelled()
    return summary


def _answers_kept(project: Project, plan: Plan, before: dict[str, str]) -> str | None:
    """What an interrupted direct run left in the project, counted there (an answer that
    arrived as the run stopped is stored too): answers stored, failures kept, items still to
    ask."""
    from physgrade.judge.purposes import stored_by

    now = stored_by(project, plan)
    good = sum(now.get(item) == "ok" for item in plan.pending)
    failed = sum(now.get(item) == "failed" and before.get(item) != "failed"
                 for item in plan.pending)
    if not good and not failed:
        return None
    said = f"{count(good, ANSWER_NOUNS[plan.purpose])} stored"
    if failed:
        said += f", {count(failed, 'answer')} that did not fit kept as failed"
    rest = len(plan.pending) - good - failed
    return f"{said}, {rest:,} still to ask (a new run asks only for those)"


def _submit_batches(db: str, project: Project, client: anthropic.Anthropic, plan: Plan,
                    prompts: Prompts) -> None:
    """Submit ``plan`` as batches. Each batch is recorded as the API accepts it, so an
    interrupted submission says which are in and how many requests were not sent."""
    from physgrade.judge import batches

    before = {state.id for state in batches.batch_history(project)}
    with telling_what_is_kept(lambda: _submitted_kept(project, before, len(plan.pending), db)), \
            progress_task() as task:
        ids = batches.submit(project, client, plan, prompts, task).ids
    print(f"submitted {len(plan.pending):,} requests in {len(ids)} batch(es): "
          f"{', '.join(ids)}\ncollect the results with: physgrade judge-status {db}")


def _submitted_kept(project: Project, before: set[str], pending: int, db: str) -> str | None:
    from physgrade.judge import batches

    new = [state for state in batches.batch_history(project) if state.id not in before]
    if not new:
        return None
    sent = sum(state.requests for state in new)
    return (f"{count(len(new), 'batch', 'batches')} of {sent:,} requests submitted and recorded "
            f"(collect them with: physgrade judge-status {db}), {pending - sent:,} requests not "
            "submitted (a new run submits only those)")


def _batch_results(project: Project, batch_ids: set[str]) -> int:
    """How many items of the batches ``batch_ids`` have an answer stored in the project."""
    from physgrade.judge import batches
    from physgrade.judge.purposes import PURPOSES

    found = 0
    for state in batches.batch_history(project):
        if state.id in batch_ids:
            items = batches.batch_items(project, state.id)
            stored = PURPOSES[state.purpose].stored(project, state.model, state.prompt_version,
                                                    **state.by_run)
            found += len(items & stored.keys())
    return found


def _collected_kept(project: Project, batch_ids: set[str], before: int) -> str | None:
    """Collecting stores results one by one: an interrupted ``judge-status`` says how many."""
    stored = _batch_results(project, batch_ids) - before
    return (f"{count(stored, 'batch result')} stored (the next judge-status collects the rest)"
            if stored else None)


# -- final answers by rule ------------------------------------------------------------------


def _answer_settings(args: argparse.Namespace, project: Project | None = None):
    """The rules' settings the options ask for: a preset as it is, or the defaults at
    ``--rtol``, else at the project's answer tolerance (the default tolerance without one)."""
    from physgrade.answers import Settings
    from physgrade.answers.outcome import DEFAULT_RTOL, PRESETS
    from physgrade.answers.tolerance import answer_tolerance

    if args.preset:
        if args.rtol is not None or args.mantissa:
            raise CommandError(f"--preset {args.preset} sets the tolerance and the mantissa "
                               "mode itself: leave out --rtol and --mantissa")
        return PRESETS[args.preset]
    rtol = args.rtol
    if rtol is None:
        rtol = answer_tolerance(project) if project is not None else DEFAULT_RTOL
    try:
        return Settings(rtol=rtol, mantissa=args.mantissa)
    except ValueError as exc:
        raise CommandError(f"--rtol: {exc}") from None


def _prompts(args: argparse.Namespace, project: Project):
    """The judge prompts of ``--prompts``, stating the project's answer tolerance and failure
    taxonomy."""
    from physgrade.judge.prompts import for_project

    return for_project(project, args.prompts)


@command("check-answer", "check one final answer against a reference by rule",
         arg("--gold", required=True, help="the reference answer (LaTeX or plain text)"),
         arg("--pred", required=True, help="the answer, or a whole response to find it in"),
         arg("--type", help="answer type: NV, EX, EQ, IN, TF, MC, or a list such as NV,EX "
                            "(default: guessed from the reference)"),
         arg("--unit", help="the reference's unit when it is not in the answer"),
         arg("--json", action="store_true", help='print {"outcome": ..., "reason": ...}'),
         ANSWER)
def cmd_check_answer(args: argparse.Namespace) -> None:
    from physgrade.answers.sandbox import Checker, Request

    with Checker(_answer_settings(args)) as checker:
        check = checker.check(Request(args.gold, args.pred, args.type, args.unit))
    if args.json:
        print(json.dumps(check.to_json(), ensure_ascii=False))
    else:
        print(f"{check.outcome.value}: {check.reason}")


def _answer_lines(path: Path) -> list[tuple[object, Request]]:
    """The checks a JSON Lines file asks for, all read before any runs (a bad line stops all)."""
    from physgrade.answers.sandbox import Request

    found: list[tuple[object, Request]] = []
    with open(path, "rb") as lines:
        for number, raw in enumerate(lines, 1):
            where = f"{path}, line {number}"
            try:
                line = raw.decode("utf-8-sig")
            except UnicodeDecodeError:
                raise CommandError(f"{where}: not UTF-8 text (check-answers reads a JSON Lines "
                                   "file of id, gold and pred, not a project)") from None
            if not line.strip():
                continue
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


@command("check-answers", "check a JSON Lines file of answers by rule",
         arg("file", help='lines {"id", "gold", "pred", "type"?, "unit"?}'),
         arg("--out", metavar="FILE", help="write the results here (default: stdout)"),
         ANSWER, WORKERS)
def cmd_check_answers(args: argparse.Namespace) -> None:
    from physgrade.answers.sandbox import Checker

    lines = _answer_lines(Path(args.file))
    counts: dict[str, int] = {}

    def kept() -> str | None:
        """Results are written as they come: the file holds the first ones."""
        written = sum(counts.values())
        if args.out:
            return f"{written:,} of {len(lines):,} results written to {args.out}"
        return f"{written:,} of {len(lines):,} results printed" if written else None

    out = open(args.out, "w", encoding="utf-8") if args.out else sys.stdout
    try:
        with telling_what_is_kept(kept), \
                Checker(_answer_settings(args), workers=args.workers) as checker, \
                progress_task() as task:
            checks = checker.map((request for _, request in lines), task, len(lines))
            for (line_id, _), (_, check) in zip(lines, checks):
                # Counted first: a line out is counted, when Ctrl+C comes right after it.
                counts[check.outcome.value] = counts.get(check.outcome.value, 0) + 1
                out.write(json.dumps({"id": line_id, **check.to_json()}, ensure_ascii=False) + "\n")
    finally:
        if args.out:
            out.close()
    if args.out:
        tally = ", ".join(f"{n:,} {outcome.replace('_', ' ')}" for outcome, n in counts.items())
        print(f"{len(lines):,} answers checked into {args.out}: {tally or 'none'}")


@command("verify", "check every response that has a reference answer and store the results as "
                   "the rater 'rules'; with --model, then ask a model about what the rules did "
                   "not settle",
         DB, arg("--recheck", action="store_true",
                 help="check again responses the rules rater has already checked"),
         ANSWER, WORKERS, *MODEL_STAGE)
def cmd_verify(args: argparse.Namespace) -> None:
    from physgrade.answers import verify
    from physgrade.answers.sandbox import Checker

    stage_only = [flag for flag, given in (("--limit", args.limit is not None),
                                           ("--dry-run", args.dry_run),
                                           ("--retry-failed", args.retry_failed),
                                           ("--batch", args.batch)) if given]
    if stage_only and not args.model:
        raise CommandError(f"{', '.join(stage_only)} only go with --model")
    if args.model and (args.rtol is not None or args.mantissa or args.preset):
        raise CommandError("the model stage checks at the project's answer tolerance, which its "
                           "prompt states: leave out --rtol, --mantissa and --preset with --model")
    started = now_iso()
    with Project.open(args.db) as project, \
            Checker(_answer_settings(args, project), workers=args.workers) as checker:
        label = checker.settings.label
        rater = f"the rater {verify.RATER}" + (f" [{label}]" if label else "")
        with telling_what_is_kept(lambda: _checks_kept(project, label, started, rater,
                                                       args.recheck)), \
                progress_task() as task:
            summary = verify.verify(project, checker, task, args.recheck)
    print(f"{summary.text()}; stored as {rater}")
    if args.model:
        _model_stage(args)


def _checks_kept(project: Project, label: str, since: str, rater: str,
                 recheck: bool) -> str | None:
    """``verify`` commits every few hundred checks: an interrupted run says how many it stored
    (those assessed since it started)."""
    from physgrade.answers import verify

    stored = verify.stored_since(project, label, since)
    if not stored:
        return None
    return (f"{count(stored, 'check')} stored as {rater}"
            + ("" if recheck else " (a new run checks only the rest)"))


def _model_stage(args: argparse.Namespace) -> None:
    """``verify --model``: ask the model about every answer the rules left unsettled, once, and
    store the combined result as the rater ``rules+MODEL`` (:mod:`physgrade.answers.model_stage`)."""
    from physgrade.answers import model_stage
    from physgrade.judge.client import connect
    from physgrade.judge.pricing import price_for
    from physgrade.judge.scope import Scope

    price = price_for(args.model, args.price_in, args.price_out)
    scope = Scope(limit=args.limit, retry_failed=args.retry_failed)
    summary = None
    with Project.open(args.db) as project:
        prompts = _prompts(args, project)
        plan = model_stage.plan(project, args.model, prompts, scope, price, args.batch)
        label = model_stage.combined_label(args.model, plan.prompt_version)
        print(f"model stage: {plan.text()}\n  stored with the rules' settled checks as the rater "
              f"{label}")
        if price is None and plan.pending:
            print(PRICE_HINT)
        if args.dry_run:
            print("dry run: nothing was sent")
            return
        settled, _ = model_stage.settle(project, args.model, prompts, scope)
        if settled:
            said = ", ".join(f"{n:,} {outcome.replace('_', ' ')}" for outcome, n in settled.items())
            print(f"settled by the rules and copied into {label}: {said}")
        if plan.pending:
            client = connect(args.timeout, args.max_retries)
            if args.batch:
                _submit_batches(args.db, project, client, plan, prompts)
            else:
                summary = _ask_directly(project, client, plan, prompts, price, args.concurrency)
        print(model_stage.tally(project, args.model, plan.prompt_version))
    if summary is not None and summary.stopped:
        raise CommandError(f"the model stage stopped early: {summary.stopped}; every answer that "
                           "arrived is stored, and running it again asks only for the rest")


@command("answers", "final answers judged by rule: strict, liberal and unjudgeable rates per "
                    "model, and agreement with the experts' final-answer scores",
         DB, arg("--rater", default="rules",
                 help="whose answer checks (default: rules; e.g. 'rules [rtol 0.05]' or a "
                      "'rules+MODEL' rater)"),
         arg("--by", metavar="FIELD",
             help="also the rates per value of a question field (subject, skill, answer_type, "
                  "language, native_difficulty...)"),
         JSON)
def cmd_answers(args: argparse.Namespace) -> None:
    # Imported here: pandas and scipy are for reports, not for every command.
    from physgrade.answers.accuracy import judged

    with Project.open(args.db) as project:
        found = judged(project, args.rater, by=args.by)
    if args.json:
        print(json.dumps(found.as_dict(), indent=2, ensure_ascii=False))
    else:
        print(found.text())


@command("compare-conditions", "the same problems under two conditions (EN/ET, LaTeX/plain...) "
                               "compared problem by problem: 2×2 table, exact McNemar, sign test "
                               "and a paired bootstrap interval, per model and overall",
         DB, arg("--pair-by", required=True, metavar="FIELD",
                 help="the question field whose value names a problem (e.g. pair_id)"),
         arg("--condition", required=True, metavar="FIELD=A,B",
             help="the question field and its two values compared, e.g. language=et,en"),
         arg("--measure", choices=["final", "strict", "liberal", "score"], default="final",
             help="final: the rater's ANS at its maximum (default); strict, liberal: answer "
                  "checks (liberal: partial counts ½); score: score share"),
         arg("--rater", help="whose outcomes (default: for final and score the report's "
                             "analyses rater, the human consensus else the first judge; for "
                             "strict and liberal the first rater with answer checks, rules first)"),
         arg("--resamples", type=int, default=1000,
             help="bootstrap resamples for the difference's interval (default 1000)"),
         arg("--seed", type=int, default=0, help="bootstrap seed (default 0)"),
         arg("--save", action="store_true",
             help="declare this pairing in the project: the report then shows it"),
         arg("--forget", action="store_true", help="remove this declared pairing"),
         JSON)
def cmd_compare_conditions(args: argparse.Namespace) -> None:
    # Imported here: pandas and scipy are for reports, not for every command.
    from physgrade.answers.accuracy import read_checks
    from physgrade.report.common import main_reference
    from physgrade.scoring.tables import load
    from physgrade.studies import conditions

    if args.save and args.forget:
        raise CommandError("--save and --forget exclude each other")
    pairing = conditions.Pairing.parse(args.pair_by, args.condition, args.measure)
    with Project.open(args.db) as project:
        if args.forget:
            conditions.forget(project, pairing)
            print(f"no longer declared: {pairing.describe()}")
            return
        found = conditions.problems(project, pairing)
        data, checks = load(project), read_checks(project)
        rater: str | None = args.rater or main_reference(data) or (data.judges[0] if data.judges
                                                                    else None)
        if pairing.measure in conditions.FROM_CHECKS:
            rater = conditions.checks_rater(project, checks, args.rater)
        if rater is None:
            raise CommandError("nobody has scored anything: no outcomes to compare")
        result = conditions.compare(found, conditions.outcomes(pairing.measure, data, checks, rater),
                                    rater, args.resamples, args.seed)
        if args.save:
            conditions.save(project, pairing)
    if args.json:
        print(json.dumps(result.as_dict() | {"saved": args.save}, indent=2, ensure_ascii=False))
        return
    print(result.text())
    if args.save:
        print(f"declared: {pairing.describe()} (the report shows it)")


# -- near-duplicate questions ---------------------------------------------------------------


def _embedder(args: argparse.Namespace):
    """The embedding engine for ``--model`` and ``--quantize``, with the provider it runs on."""
    from physgrade.dedup.engine import Embedder
    from physgrade.dedup.models import ModelError, resolve

    try:
        return Embedder(resolve(args.model, args.quantize,
                                notify=lambda message: print(message, file=sys.stderr)))
    except ModelError as exc:
        raise CommandError(str(exc)) from exc


def _questions_left(project: Project, model_key: str) -> int:
    """Distinct question texts with no embedding from ``model_key`` yet."""
    from physgrade.dedup.texts import project_questions
    from physgrade.dedup.vectors import stored_hashes, text_hash

    have = stored_hashes(project, model_key)
    return len({text_hash(text) for text in project_questions(project).texts} - have)


@command("embed", "embed every question (kept in the project, never twice)", DB, MODEL)
def cmd_embed(args: argparse.Namespace) -> None:
    from physgrade.dedup.run import embed_project
    from physgrade.dedup.vectors import stored_count

    with Project.open(args.db) as project:
        embedder = _embedder(args)
        key = embedder.model.key
        before = stored_count(project, key)

        def kept() -> str | None:
            """Embeddings are committed every few thousand texts: the finished ones stay."""
            new = stored_count(project, key) - before
            return (f"{count(new, 'question embedding')} stored, "
                    f"{_questions_left(project, key):,} still to embed (a new run embeds only "
                    "those)" if new else None)

        with telling_what_is_kept(kept), progress_task() as task:
            total, new = embed_project(project, embedder, task)
    print(f"{total:,} questions embedded with {embedder.model.name} on {embedder.provider} "
          f"({new:,} new, {total - new:,} already stored)")


@command("dedup", "find near-duplicate questions within the project or against another set",
         DB,
         arg("--against", metavar="SRC",
             help="another project file, or a questions file (JSON Lines, JSON or CSV with id, "
                  "question and options)"),
         arg("--map", action="append", metavar="SRC=DST",
             help="rename a field of the --against file to physgrade's (repeatable), e.g. "
                  "--map problem=question --map index=id"),
         arg("--jaccard", type=float, default=0.4, metavar="J",
             help="word 5-gram Jaccard threshold of stage 1 (default 0.4)"),
         arg("--cosine", type=float, default=None, metavar="C",
             help="embedding cosine threshold of stage 2 (default: the value calibrated for the "
                  "embedded model, see the README; set it for another model)"),
         arg("--figure-bits", type=int, default=None, metavar="N",
             help="figure stage (4): the most bits two figures' 256-bit perceptual hashes may "
                  "differ by (default: the calibrated value, see the README); questions that "
                  "share an image are always paired"),
         arg("--judge", metavar="MODEL",
             help="stage 3: ask this Anthropic model whether each pair is a close duplicate or a "
                  "same-topic neighbour (ANTHROPIC_API_KEY)"),
         arg("--out", metavar="FILE.csv", help="write the pairs of this audit as CSV"),
         arg("--json", action="store_true",
             help='print {"provider", "n_a", "n_b", "pairs": [...]} on stdout'),
         MODEL, CALLS, CLIENT)
def cmd_dedup(args: argparse.Namespace) -> None:
    from physgrade.dedup import pairs
    from physgrade.dedup.audit import DEFAULT_COSINE, Thresholds
    from physgrade.dedup.figures import DEFAULT_FIGURE_BITS
    from physgrade.dedup.run import audit_project, with_labels
    from physgrade.dedup.texts import load_set
    from physgrade.dedup.vectors import stored_count

    thresholds = Thresholds(args.jaccard, DEFAULT_COSINE if args.cosine is None else args.cosine,
                            DEFAULT_FIGURE_BITS if args.figure_bits is None else args.figure_bits)
    try:
        against = load_set(args.against, formats.parse_mapping(args.map or [])) \
            if args.against else None
    except FormatError as exc:
        raise CommandError(f"cannot audit against it, nothing changed: {exc}") from None
    say = sys.stderr if args.json else sys.stdout
    with Project.open(args.db) as project:
        embedder = _embedder(args)
        key = embedder.model.key
        before = stored_count(project, key)

        def embedded() -> str | None:
            """Until the audit is stored, what the project keeps is the embeddings made."""
            new = stored_count(project, key) - before
            return (f"{count(new, 'embedding')} stored (a new run embeds only the rest); "
                    "no audit stored" if new else None)

        with telling_what_is_kept(embedded), progress_task() as task:
            audit = audit_project(project, embedder, against, thresholds, task)
        found = len(audit.result.pairs)
        audited = f"the audit and its {count(found, 'candidate pair')} stored"
        with telling_what_is_kept(lambda: audited):
            summary = audit.result.summary
            print(f"{audit.result.n_a:,} questions against "
                  f"{'themselves' if against is None else f'{audit.result.n_b:,} in {args.against}'}"
                  f" with {audit.model} on {audit.provider}: {found:,} candidate "
                  f"pair{'' if found == 1 else 's'}\n{summary.text()}", file=say)
            if args.judge:
                _judge_pairs(args, project, audit.source, say, audited)
                audit = with_labels(project, audit)
            if args.out:
                pairs.write_csv(project, args.out, pairs.stored_pairs(project, audit.source))
                print(f"pairs written to {args.out}", file=say)
    if args.json:
        print(json.dumps(audit.as_json(), ensure_ascii=False))


def _judge_pairs(args: argparse.Namespace, project: Project, source: str, say: IO[str],
                 audited: str) -> None:
    """Stage 3: ask ``--judge`` about every pair of ``source`` it has not labelled yet."""
    from physgrade.answers.tolerance import answer_tolerance
    from physgrade.judge import duplicates
    from physgrade.judge.client import connect
    from physgrade.judge.pricing import price_for
    from physgrade.judge.prompts import Prompts

    prompts = Prompts.load(args.prompts, answer_tolerance(project))
    price = price_for(args.judge, args.price_in, args.price_out)
    plan = duplicates.plan(project, args.judge, prompts, price=price, source=source)
    print(f"judging pairs with {plan.text()}", file=say)
    if not plan.pending:
        return
    client = connect(args.timeout, args.max_retries)
    summary = _ask_directly(project, client, plan, prompts, price, args.concurrency, say,
                            already=audited)
    if summary.stopped:
        raise CommandError(f"the judge stopped early: {summary.stopped}")


# -- samples for auditing judges ------------------------------------------------------------


@command("review-sample", "draw a stratified sample of responses for experts to audit judges "
                          "on, the same for every judge",
         DB,
         arg("--judge", action="append", required=True, metavar="LABEL",
             help="a judge to audit, e.g. 'arbiter-large [prefs-v1]' (repeatable)"),
         arg("--per-stratum", type=int, required=True, metavar="N",
             help="responses to draw from each stratum (all of a smaller one)"),
         arg("--seed", type=int, metavar="S",
             help="random seed; the same seed and data give the same sample (default: a random "
                  "one, printed)"),
         arg("--strata", default="topic,bloom,model", metavar="topic,bloom,model",
             help="the facets to stratify over, of these and the declared ones (default: all "
                  "three)"),
         arg("--name", help="the sample's name (default: 'sample N')"))
def cmd_review_sample(args: argparse.Namespace) -> None:
    from physgrade.validation import sampling

    strata = [facet.strip() for facet in args.strata.split(",") if facet.strip()]
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    with Project.open(args.db) as project:
        name = args.name or sampling.next_name(project)
        drawn = sampling.draw(project, name, args.judge, args.per_stratum, seed, strata)
    # The judges' blind names are not printed: reports reveal them, reviewers never see them.
    print(f"sample {drawn.name!r} (seed {drawn.seed}, stratified by "
          f"{', '.join(drawn.strata) or 'nothing'}): {drawn.text()}")


# -- team grading ---------------------------------------------------------------------------

@command("assign", "split the responses nobody is assigned or has graded yet among graders, a "
                   "share of them to two, stratified by model and topic",
         DB,
         arg("--graders", required=True, metavar="A,B,C", help="the graders' names, "
                                                                "comma-separated"),
         arg("--overlap", type=float, required=True, metavar="SHARE",
             help="share of the new responses graded by two graders, 0 to 1 (e.g. 0.2)"),
         arg("--per-grader", type=int, metavar="N",
             help="about N new responses each (default: every response not yet assigned)"),
         arg("--seed", type=int, metavar="S",
             help="random seed; the same seed and data give the same assignment (default: a "
                  "random one, printed)"),
         arg("--filter", action="append", metavar="FIELD=VALUE[,VALUE]",
             help="assign only some responses (repeatable): model, topic, kind, bloom, or a "
                  "declared facet"),
         arg("--sample", metavar="NAME",
             help="assign only the responses of this estimation sample (see estimate-sample)"),
         arg("--strata", metavar="F[,F]",
             help="declared facets to stratify the order by, besides model and topic (e.g. "
                  "language)"),
         arg("--include-graded", action="store_true",
             help="assign responses a person has already finished grading too (default: only "
                  "responses no one has graded)"),
         arg("--dry-run", action="store_true", help="show the plan; write nothing"))
def cmd_assign(args: argparse.Namespace) -> None:
    from physgrade.facets import parse_filter
    from physgrade.team import assign

    graders = [name.strip() for name in args.graders.split(",") if name.strip()]
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    with Project.open(args.db) as project:
        planned = assign.plan(project, graders, args.overlap, per_grader=args.per_grader,
                              seed=seed, report_filter=parse_filter(project, args.filter or []),
                              sample=args.sample, include_graded=args.include_graded,
                              strata=[f.strip() for f in (args.strata or "").split(",") if f.strip()])
        if not args.dry_run:
            assign.apply(project, planned)
    print(f"{'would assign' if args.dry_run else 'assigned'} (seed {seed}): {planned.text()}")
    for facet in planned.facets:
        table = planned.by_facet(facet)
        values = sorted({value for counts in table.values() for value in counts})
        print()
        _print_table(["grader", "new", *values],
                     [[grader, f"{new:,}", *(f"{table[grader].get(v, 0):,}" for v in values)]
                      for grader, new in planned.counts().items()])
    if args.dry_run:
        print("\ndry run: nothing written")


def _print_table(header: list[str], rows: list[list[str]], counts_from: int = 1) -> None:
    """Plain text columns: text left-aligned, counts (the columns from ``counts_from`` on)
    right-aligned."""
    widths = [max(len(line[i]) for line in [header, *rows]) for i in range(len(header))]
    for line in [header, *rows]:
        print("  " + "  ".join(cell.rjust(width) if i >= counts_from else cell.ljust(width)
                               for i, (cell, width) in enumerate(zip(line, widths))).rstrip())


#: The exit status of ``merge`` when conflicts wait for a person.
CONFLICTS_WAIT = 3


@command("pack", "write one grader's assigned responses as a project file of their own (a pack)",
         DB, arg("--grader", required=True, metavar="NAME"),
         arg("--out", required=True, metavar="FILE", help="the new pack file (never written over)"),
         arg("--with-others", action="store_true",
             help="also put in the judges' verdicts and colleagues' grades of those responses "
                  "(default: blind, the grader's own grades only)"))
def cmd_pack(args: argparse.Namespace) -> None:
    from physgrade.team.packs import make_pack

    with Project.open(args.db) as project, progress_task() as task:
        made, _ = make_pack(project, args.grader, Path(args.out), blind=not args.with_others,
                            task=task)
    print(made.text())


@command("merge", "bring packs back: grades, notes and history (exit 3 when conflicts wait)",
         DB, arg("packs", nargs="+", metavar="PACK", help="pack files, merged in this order"))
def cmd_merge(args: argparse.Namespace) -> int:
    from physgrade.team.merge import merge

    with Project.open(args.db) as project, progress_task() as task:
        result = merge(project, [Path(path) for path in args.packs], task)
    for pack in result.packs:
        print(pack.text())
    return _print_conflicts(result.conflicts, args.db)


def _print_conflicts(conflicts: Sequence[Any], db: str) -> int:
    """Each open conflict on a line; the exit status that says whether any wait."""
    if not conflicts:
        return 0
    print(f"{count(len(conflicts), 'conflict')} wait{'s' if len(conflicts) == 1 else ''} for "
          f"a person (physgrade resolve {db} ID... --keep pack|project):")
    for conflict in conflicts:
        print(f"  {conflict.text()}")
    return CONFLICTS_WAIT


@command("conflicts", "list the merge conflicts waiting for a person", DB, JSON)
def cmd_conflicts(args: argparse.Namespace) -> None:
    from dataclasses import asdict

    from physgrade.team.merge import open_conflicts

    with Project.open(args.db) as project:
        waiting = open_conflicts(project)
    if args.json:
        print(json.dumps({"conflicts": [asdict(c) for c in waiting]}, indent=2,
                         ensure_ascii=False))
    elif not _print_conflicts(waiting, args.db):
        print("no conflicts wait")


@command("resolve", "settle merge conflicts, keeping the pack's value or the project's",
         DB, arg("ids", nargs="*", type=int, metavar="ID",
                 help="the conflicts to settle, by the number physgrade conflicts shows"),
         arg("--all", action="store_true", help="every open conflict"),
         arg("--grader", metavar="NAME",
             help="only this grader's conflicts (alone: all of theirs that are open)"),
         # The choices are physgrade.team.merge.KEEPS, spelled out so that building the parser
         # imports no team module.
         arg("--keep", required=True, choices=("pack", "project"),
             help="whose value stands: the pack's or the project's"),
         arg("--by", metavar="NAME", help="who decided (default: your login name)"))
def cmd_resolve(args: argparse.Namespace) -> None:
    import getpass

    from physgrade.team.merge import open_conflicts, resolve

    if not (args.ids or args.all or args.grader):
        raise CommandError("name the conflicts to settle by ID, or give --all or --grader")
    with Project.open(args.db) as project:
        waiting = {conflict.id: conflict for conflict in open_conflicts(project)}
        chosen = list(args.ids) + (list(waiting) if args.all or not args.ids else [])
        if args.grader:  # ids that are no open conflict stay, for resolve to refuse
            chosen = [i for i in chosen if i not in waiting or waiting[i].grader == args.grader]
        if not chosen:
            print("no open conflict to settle")
            return
        resolve(project, chosen, args.keep, args.by or getpass.getuser())
        left = len(open_conflicts(project))
    for conflict_id in dict.fromkeys(chosen):
        conflict = waiting[conflict_id]
        given, value = ((conflict.pack_given, conflict.pack_value) if args.keep == "pack"
                        else (conflict.project_given, conflict.project_value))
        print(f"#{conflict_id} {conflict.response_id} {conflict.criterion} {conflict.grader}: "
              f"kept the {args.keep}'s {value_text(value) if given else 'absence of a score'}")
    print(f"{count(left, 'conflict')} still open" if left else "no conflicts wait")


@command("disputes", "responses people scored differently, and how far adjudication has got",
         DB, arg("--min-difference", type=int, default=1, metavar="N",
                 help="count criteria whose values differ by at least N points (default 1: any "
                      "difference; N/A against a number always counts)"),
         JSON)
def cmd_disputes(args: argparse.Namespace) -> None:
    from physgrade.team.adjudication import disputes
    with Project.open(args.db) as project:
        found = disputes(project, args.min_difference)
    if args.json:
        print(json.dumps({"disputes": [d.as_dict() for d in found]}, indent=2,
                         ensure_ascii=False))
        return
    if found:
        _print_table(["response", "model", "question", "differ on", "graders", "decisions"],
                     [[d.response_id, d.model, d.question_id, ",".join(d.disputed),
                       ", ".join(d.graders), "settled" if d.settled
                       else f"{len(d.decided)} of {len(d.disputed)} decided"] for d in found],
                     counts_from=6)
    settled = sum(d.settled for d in found)
    print(f"{count(len(found), 'disputed response')}: {settled:,} settled, "
          f"{len(found) - settled:,} open")


# -- numbers a study can publish -------------------------------------------------------------

@command("estimate-sample", "draw a random sample of responses for experts to grade, whose grades "
                            "correct a judge's scores (or register hand-picked ones, or list them)",
         DB,
         arg("--name", metavar="NAME", help="the sample's name; alone, shows that sample"),
         arg("--size", type=int, metavar="N", help="draw N responses"),
         arg("--strata", metavar="model,topic",
             help="draw the same number from each model, topic (or declared facet, e.g. "
                  "language) or their combinations, as far as each has responses (default: "
                  "uniformly over every response)"),
         arg("--seed", type=int, metavar="S",
             help="random seed; the same seed and data give the same sample (default: a random "
                  "one, printed)"),
         arg("--from", dest="from_file", metavar="FILE",
             help="instead of drawing, register the responses FILE names ({\"response_id\": ...} "
                  "per line) as a hand-picked sample, not taken for random"),
         arg("--out", metavar="FILE", help="write the sample's response ids to FILE, "
                                           "{\"response_id\": ...} per line (a new file)"),
         arg("--list", action="store_true", help="list the project's estimation samples"))
def cmd_estimate_sample(args: argparse.Namespace) -> None:
    from physgrade.estimation import sample

    given = {flag: value is not None for flag, value in (
        ("--name", args.name), ("--size", args.size), ("--strata", args.strata),
        ("--seed", args.seed), ("--from", args.from_file), ("--out", args.out))}
    if args.list:
        _refuse_flags(given, ("--name", "--size", "--strata", "--seed", "--from", "--out"),
                      "cannot go with --list")
    elif args.from_file is not None:
        _refuse_flags(given, ("--size", "--strata", "--seed"), "cannot go with --from (a "
                      "hand-picked sample is read from the file, not drawn)")
    elif args.size is None:
        _refuse_flags(given, ("--strata", "--seed"), "only for drawing a sample, with --size")
    if not args.list and args.name is None:
        raise CommandError("name the sample with --name NAME (or give --list)")
    if args.out is not None:
        _check_new_file(Path(args.out))  # before anything is stored
    with Project.open(args.db) as project:
        if args.list:
            _print_estimation_samples(sample.samples(project))
            return
        if args.from_file is not None:
            chosen = sample.register(project, args.name, args.from_file)
            print(f"registered estimation sample {chosen.name!r}: {chosen.text()}")
        elif args.size is not None:
            strata = [facet.strip() for facet in (args.strata or "").split(",") if facet.strip()]
            seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
            chosen = sample.draw(project, args.name, args.size, seed, strata)
            print(f"drew estimation sample {chosen.name!r}: {chosen.text()}")
        else:
            chosen = sample.find(project, args.name)
            print(f"estimation sample {chosen.name!r}, {chosen.created_at[:10]}: {chosen.text()}")
        if chosen.strata:
            print()
            _print_table(["stratum", "drawn", "of", "probability"],
                         [[s.name, f"{s.drawn:,}", f"{s.population:,}", f"{s.probability:.3f}"]
                          for s in sample.by_stratum(project, chosen)])
        if args.out is not None:
            try:
                written = sample.write_ids(project, chosen, args.out)
            except (OSError, ProjectError) as exc:
                raise CommandError(f"sample {chosen.name!r} is in the project, but its ids were "
                                   f"not written: {exc} "
                                   f"(physgrade estimate-sample {args.db} --name {chosen.name!r} "
                                   f"--out FILE writes them)") from None
            print(f"wrote {count(written, 'response id')} to {args.out}")


def _refuse_flags(given: dict[str, bool], flags: Sequence[str], why: str) -> None:
    """A CommandError naming those of ``flags`` that were given, and ``why`` they are wrong."""
    wrong = [flag for flag in flags if given[flag]]
    if wrong:
        raise CommandError(f"{', '.join(wrong)}: {why}")


def _check_new_file(path: Path) -> None:
    """Refuse, before any work, an output file that exists or has no folder to go in."""
    if path.exists():
        raise CommandError(f"{path} already exists; choose another file name (nothing changed)")
    if not path.parent.is_dir():
        raise CommandError(f"no folder {path.parent} to write {path.name} in (nothing changed)")


def _print_estimation_samples(found: Sequence[EstimationSample]) -> None:
    if not found:
        print("no estimation samples yet (physgrade estimate-sample DB --name NAME --size N "
              "draws one)")
        return
    _print_table(["name", "method", "strata", "seed or file", "created", "size", "of"],
                 [[s.name, s.method, " × ".join(s.strata) or "-",
                   s.source or str(s.seed), s.created_at[:10], f"{s.size:,}",
                   f"{s.population:,}"] for s in found], counts_from=5)


#: Which judge is corrected, by whose grades on which sample (``estimate`` and ``plan``).
CORRECTION = (DB,
              arg("--judge", required=True, metavar="LABEL",
                  help="the judge whose scores are corrected, e.g. 'arbiter-large [prefs-v1]' "
                       "(the name alone when it has one prompt version)"),
              arg("--sample", required=True, metavar="NAME",
                  help="the estimation sample the experts grade (see estimate-sample)"),
              arg("--reference", default="consensus", metavar="consensus|GRADER",
                  help="whose grades count as the truth: the people's consensus (default) or "
                       "one grader"),
              arg("--assume-random", action="store_true",
                  help="accept a hand-picked sample as if drawn at random (the output says so)"))


@command("estimate", "each model's scores by the judge alone, the experts alone, and the judge "
                     "corrected by the experts' grades on a random sample, with 95%% intervals",
         CORRECTION, JSON)
def cmd_estimate(args: argparse.Namespace) -> None:
    from physgrade.estimation.estimates import MEASURES, estimate

    with Project.open(args.db) as project, progress_task() as task:
        found = estimate(project, args.judge, args.sample, args.reference, args.assume_random,
                         task)
    if args.json:
        print(json.dumps(found.as_dict(), indent=2, ensure_ascii=False))
        return
    print(f"{found.judge} corrected by {found.reference}; sample {found.sample.name!r}: "
          f"{found.sample.text()}")
    missing = []
    for measure, title in MEASURES.items():
        print(f"\n{title}")
        rows = [row for row in found.rows if row.measure == measure]
        _print_table(["model", "judge alone", "experts alone", "corrected", "n", "judge-only",
                      "λ", "effective n"],
                     [[row.model, _percent(row.judge_only), _percent(row.experts_only),
                       _percent(row.corrected_estimate()), f"{row.experts_only.n:,}",
                       f"{row.unlabeled:,}",
                       f"{row.corrected.lam:.2f}" if row.corrected else "–",
                       f"{row.corrected.effective_n:,.1f}" if row.corrected else "–"]
                      for row in rows])
        missing += [f"{row.model}, {title.lower()}: {what} n/a: {shown.reason}" for row in rows
                    for what, shown in (("judge alone", row.judge_only),
                                        ("experts alone", row.experts_only),
                                        ("corrected", row.corrected_estimate()))
                    if shown.value is None]
    if found.differences:
        print("\nCorrected differences between models (first − second, in points)")
        _print_table(["measure", "models", "difference"],
                     [[MEASURES[d.measure], f"{d.models[0]} − {d.models[1]}",
                       _percent(d.estimate)] for d in found.differences], counts_from=2)
    print("\nnotes:")
    for note in [*found.notes, *missing]:
        print(f"  - {note}")


@command("plan", "how many expert grades a 95%% interval of a given half-width needs, corrected "
                 "and from the experts alone, judging from the sample so far",
         CORRECTION,
         arg("--half-width", required=True, type=float, metavar="H",
             help="the wanted half-width of the 95%% interval, as a share (0.05 = ±5 points)"),
         JSON)
def cmd_plan(args: argparse.Namespace) -> None:
    from physgrade.estimation.estimates import MEASURES, plan

    with Project.open(args.db) as project, progress_task() as task:
        planned = plan(project, args.judge, args.sample, args.half_width, args.reference,
                       args.assume_random, task)
    if args.json:
        print(json.dumps(planned.as_dict(), indent=2, ensure_ascii=False))
        return
    print(f"expert grades needed for a 95% interval of ±{planned.half_width * 100:.1f} points: "
          f"{planned.judge} corrected by {planned.reference}; sample {planned.sample.name!r}")
    reasons = []
    for measure, title in MEASURES.items():
        print(f"\n{title}")
        rows = [row for row in planned.rows if row.measure == measure]
        _print_table(["model", "graded", "left in sample", "corrected needs", "more",
                      "experts alone need", "more"],
                     [[row.model, f"{row.graded:,}", f"{row.left:,}",
                       _number(row.needed.corrected if row.needed else None),
                       _number(row.more_corrected),
                       _number(row.needed.experts_only if row.needed else None),
                       _number(row.more_experts_only)] for row in rows])
        reasons += [f"{row.model}, {title.lower()}: {row.why}" for row in rows if row.why]
    if planned.notes or reasons:
        print("\nnotes:")
    for note in [*planned.notes, *reasons]:
        print(f"  - {note}")


def _percent(shown: Estimate) -> str:
    """An estimate of a share as ``84.7% [80.1, 88.6]``; ``n/a`` when there is none (the
    reason goes to the notes)."""
    return "n/a" if shown.value is None else shown.text(percent=True)


def _number(number: int | None) -> str:
    return "–" if number is None else f"{number:,}"


@command("check-variants", "check that every contextual variant keeps its base's numbers, units "
                          "and answer (exit 0 even when some drifted); a parameter variant (its "
                          "base's variant_group, other numbers) is listed, not checked",
         DB, arg("--json", action="store_true",
                 help='print {"variants": [{"id", "base", "kind", "ok", "differences"}]} for '
                      "every variant (kind: contextual or parameter)"),
         arg("--all", action="store_true", help="list the faithful variants too"))
def cmd_check_variants(args: argparse.Namespace) -> None:
    from physgrade.variants import CONTEXTUAL, check_variants

    with Project.open(args.db) as project, progress_task() as task:
        checks = check_variants(project, task)
    if args.json:
        print(json.dumps({"variants": [check.as_dict() for check in checks]}, indent=2,
                         ensure_ascii=False))
        return
    if not checks:
        print("no contextual variants in this project")
        return
    for check in checks:
        if args.all or not check.ok:
            print(check.text())
    contextual = [check for check in checks if check.kind == CONTEXTUAL]
    drifted = sum(not check.ok for check in contextual)
    print(f"{count(len(contextual), 'variant')} checked: {len(contextual) - drifted:,} faithful, "
          f"{drifted:,} drifted")
    if len(contextual) < len(checks):
        print(f"{count(len(checks) - len(contextual), 'parameter variant')} of their base's "
              "template (other numbers by design): not checked")


@command("variant-groups", "consistency, complete failure and confusion over variant groups "
                           "(SymPyBench), and accuracy by question format, per model",
         DB, arg("--rater", help="whose final answers (default: the report's analyses rater, "
                                 "the human consensus else the first judge)"),
         arg("--confusion-band", type=float, metavar="W",
             help="keep W as the project's confusion band first: a group is confused at an "
                  "accuracy from 50%%-W to 50%%+W, edges included (default 0.1)"),
         JSON)
def cmd_variant_groups(args: argparse.Namespace) -> None:
    # Imported here: pandas and scipy are for reports, not for every command.
    from physgrade.report.common import main_reference
    from physgrade.scoring.tables import load, sheet
    from physgrade.studies import variant_groups

    with Project.open(args.db) as project:
        if args.confusion_band is not None:
            try:
                variant_groups.set_confusion_band(project, args.confusion_band)
            except ValueError as exc:
                raise CommandError(f"--confusion-band: {exc}") from exc
        data = load(project)
        rater = args.rater or main_reference(data) or (data.judges[0] if data.judges else None)
        if rater is None:
            raise CommandError("nobody has scored anything: no final answers to measure")
        if rater not in data.raters():
            raise CommandError(f"--rater: {rater!r} has scored nothing here; the raters are "
                               f"{', '.join(data.raters())}")
        found = variant_groups.measure(sheet(data, rater), rater,
                                       variant_groups.read_setup(project))
    print(json.dumps(found.as_dict(), indent=2, ensure_ascii=False) if args.json else found.text())


@command("step-agreement", "agreement on the first wrong step and its category, expert with "
                           "expert and judge with expert, per model and per stage", DB, JSON,
         BOOTSTRAP)
def cmd_step_agreement(args: argparse.Namespace) -> None:
    # Imported here: pandas and scipy are for reports, not for every command.
    from physgrade.scoring.tables import load
    from physgrade.studies import step_agreement

    with Project.open(args.db) as project:
        found = step_agreement.measure(step_agreement.read_marks(project),
                                       load(project).responses, args.resamples, args.seed)
    print(json.dumps(found.as_dict(), indent=2, ensure_ascii=False) if args.json else found.text())


# -- the desktop app ------------------------------------------------------------------------

@command("demo", "create (or reopen) the bundled demo project and open it",
         arg("--db", help="where to keep the demo project (default: your data folder)"),
         arg("--no-gui", action="store_true", help="only create it; do not open the app"),
         arg("--smoke", metavar="PNG",
             help="check the app instead of opening it for work: show a response with "
                  "mathematics, save a screenshot of the window to PNG and quit (exit 0 once "
                  "the mathematics is on screen; settings of its own, the user's untouched)"))
def cmd_demo(args: argparse.Namespace) -> None:
    if args.smoke and args.no_gui:
        raise CommandError("--smoke opens the app; it cannot go with --no-gui")
    path = Path(args.db) if args.db else default_demo_path()
    before = _record_counts(path)
    with telling_what_is_kept(lambda: _demo_kept(path, before)), progress_task() as task:
        results = build_demo(path, task)
    added = sum(r.added for r in results)
    print(f"demo project: {path} ({added} records added)" if added else f"demo project: {path}")
    if not args.no_gui:
        _open_gui(path, Path(args.smoke) if args.smoke else None)


def _record_counts(path: Path) -> dict[str, int] | None:
    """The demo's kinds of records in the project at ``path``; None where there is none yet."""
    if not path.exists():
        return None
    with Project.open(path) as project:
        return record_counts(project)


def _demo_kept(path: Path, before: dict[str, int] | None) -> str | None:
    """The demo is built by several imports, each all or nothing: those finished stay."""
    after = _record_counts(path)
    if after is None:
        return None
    added = [f"{after[table] - (before or {}).get(table, 0):,} {COUNTED[table]}"
             for table in DEMO_TABLES if after[table] > (before or {}).get(table, 0)]
    if added:
        return (f"{', '.join(added)} added to the demo project at {path} (run physgrade demo "
                "again to finish it)")
    if before is None:
        return f"an empty demo project created at {path} (run physgrade demo again to fill it)"
    return None


@command("gui", "open the desktop app", arg("db", nargs="?"))
def cmd_gui(args: argparse.Namespace) -> None:
    _open_gui(Path(args.db) if args.db else None)


def _open_gui(path: Path | None, smoke: Path | None = None) -> None:
    """Run the desktop app on ``path`` until it quits (``smoke``: instead, the app's smoke
    test, which saves a screenshot there)."""
    if (sys.platform == "linux" and not os.environ.get("QT_QPA_PLATFORM")
            and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))):
        # Without this Qt aborts with a core dump instead of a message.
        raise CommandError("no display to open the app on (DISPLAY is not set); run it in a "
                           "desktop session, under xvfb-run, or add --no-gui")
    # The app ends on SIGTERM at once: its event loop would run a Python handler only at its next
    # event.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    run = desktop_app()
    raise SystemExit(run(path) if smoke is None else run(path, smoke=smoke))


def desktop_app() -> Callable[..., int]:
    """The desktop app's ``run(path, smoke=None)``, found through its entry point: the core
    never imports the app, so a core installed alone still runs every other command."""
    from importlib.metadata import entry_points

    found = entry_points(group=APP_ENTRY_POINTS, name="gui")
    if not found:
        raise CommandError(f"the desktop app is not installed (no 'gui' entry point in the group "
                           f"{APP_ENTRY_POINTS!r}); install physgrade with its desktop app, or "
                           "use the other commands")
    try:
        return next(iter(found)).load()
    except ImportError as exc:
        raise CommandError(f"the desktop app cannot start: {exc}") from exc


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command is None:
        args = build_parser().parse_args(["gui"])
    try:
        with sigterm_as_ctrl_c():
            status = args.func(args)
    except ImportErrors as exc:
        print(f"physgrade: import refused, nothing changed: {exc}", file=sys.stderr)
        if args.verbose:
            for error in exc.errors[1:]:
                print(f"  also: {error}", file=sys.stderr)
        return 1
    except Interrupted as exc:
        print(f"physgrade: cancelled; {exc}", file=sys.stderr)
        return 130
    except (Cancelled, KeyboardInterrupt):
        print("physgrade: cancelled, nothing changed", file=sys.stderr)
        return 130
    except FormatError as exc:
        print(f"physgrade: import refused, nothing changed: {exc}", file=sys.stderr)
        return 1
    except (ProjectError, ScoreError, CommandError, CredentialsError, ValueError) as exc:
        print(f"physgrade: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"physgrade: {explain(exc)}", file=sys.stderr)
        return 1
    except sqlite3.Error as exc:  # e.g. another program holding the project locked for long
        print(f"physgrade: {explain(exc, getattr(args, 'db', None))}; the step that failed "
              "changed nothing", file=sys.stderr)
        return 1
    return status or 0


if __name__ == "__main__":
    sys.exit(main())
