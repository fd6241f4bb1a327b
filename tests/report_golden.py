"""The project report's numbers and figures as the report computed them before it had a fast
path: the golden file that ``tests/test_report_golden.py`` holds every way of building a report
to (numbers to one part in 10⁹, everything else exactly). It records the BLAS kernels its
numbers were summed with (``blas``): where a CPU picks others, the last digits may differ.

The file was made once, by the report as it stood at commit b1d2845 (one pass over the scores
read from the database, every interval and figure in it). Regenerate it only when a change to
the report's statistics is intended, never to make a failing test pass, with

    PYTHONPATH=benchmarks .venv/bin/python tests/report_golden.py

and say in the commit which numbers changed and why. The cases here are stored literally (no
option is read from the code under test), so the file checks the same reports after any change.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path
from typing import Any

import matplotlib
import matplotlib.ft2font
import numpy

from physgrade.project import Project
from physgrade.report.model import Figure, Report
from physgrade.report.options import ReportOptions
from physgrade.selection import ResponseFilter

GOLDEN = Path(__file__).resolve().parent / "data" / "report_golden.json.gz"
#: Responses in the generated project: enough for every table, quick enough for a test.
GENERATED_RESPONSES = 2000
#: Settings that name the run rather than the numbers.
RUN_SETTINGS = ("created_at", "project", "physgrade")

#: (case, project, options): the demo project (people, judges, audit, Bloom labels, a sample)
#: unfiltered and narrowed by each facet, and the generated study project, larger.
CASES: list[tuple[str, str, ReportOptions]] = [
    ("demo", "demo", ReportOptions()),
    ("demo-model", "demo", ReportOptions(ResponseFilter(models=frozenset({"orbit-7b"})))),
    ("demo-topic", "demo", ReportOptions(ResponseFilter(topics=frozenset({"Mechanics"})))),
    ("demo-judge", "demo",
     ReportOptions(ResponseFilter(judges=frozenset({"arbiter-mini [prefs-v1]"})))),
    ("demo-grader", "demo", ReportOptions(ResponseFilter(graders=frozenset({"expert-1"})))),
    ("demo-bloom", "demo", ReportOptions(ResponseFilter(bloom=frozenset({"Apply"})))),
    ("demo-rater", "demo", ReportOptions(rater="arbiter-large [prefs-v1]")),
    ("demo-model-kind", "demo", ReportOptions(ResponseFilter(
        models=frozenset({"orbit-7b"}), kinds=frozenset({"conceptual"})))),
    ("generated", "generated", ReportOptions()),
    ("generated-model", "generated", ReportOptions(ResponseFilter(models=frozenset({"model-03"})))),
    ("generated-topic", "generated",
     ReportOptions(ResponseFilter(topics=frozenset({"Mechanics"})))),
    ("generated-bloom", "generated", ReportOptions(ResponseFilter(bloom=frozenset({"Apply"})))),
]


def make_project(name: str, path: Path) -> None:
    """Write the project a case is computed on at ``path``."""
    if name == "demo":
        from physgrade.demo import build_demo

        build_demo(path)
    elif name == "generated":
        import report_project  # benchmarks/: conftest.py puts it on the path, the command above too

        report_project.build(path, GENERATED_RESPONSES)
    else:
        raise ValueError(f"no project {name!r}")


def figure_dict(figure: Figure) -> dict[str, str]:
    """A figure as what it says and a hash of its image."""
    return {"name": figure.name, "title": figure.title, "caption": figure.caption,
            "table": figure.table, "sha256": hashlib.sha256(figure.png).hexdigest()}


def canonical(report: Report) -> dict[str, Any]:
    """What of a report must stay the same from one build to the next: its settings less the
    run's own, and every section's text, table and figure."""
    return {"settings": {key: value for key, value in report.settings.items()
                         if key not in RUN_SETTINGS},
            "sections": [{"title": section.title, "intro": section.intro, "short": section.short,
                          "tables": [table.as_dict() for table in section.tables],
                          "figures": [figure_dict(figure) for figure in section.figures]}
                         for section in report.sections]}


def versions() -> dict[str, str]:
    """What the figures' bytes and the numbers depend on besides physgrade."""
    return {"matplotlib": matplotlib.__version__,
            "freetype": matplotlib.ft2font.__freetype_version__, "numpy": numpy.__version__,
            "blas": blas_kernels()}


def blas_kernels() -> str:
    """The kernels the BLAS libraries of numpy and scipy chose for this CPU (OpenBLAS names
    them: Haswell on AVX2, SkylakeX on AVX-512, ...). They add in different orders, so the
    last digits of a sum, and a pixel of a figure drawn from it, may differ between them."""
    import scipy.linalg  # noqa: F401 (scipy loads a BLAS of its own)
    from threadpoolctl import threadpool_info

    return ",".join(sorted({str(library.get("architecture")) for library in threadpool_info()
                            if library["user_api"] == "blas"}))


def read_golden() -> dict[str, Any]:
    return json.loads(gzip.decompress(GOLDEN.read_bytes()))


def write_golden(folder: Path) -> dict[str, Any]:
    """Compute every case in projects made under ``folder`` and write the golden file."""
    from physgrade.report.build import build_report

    cases = {}
    for project_name in dict.fromkeys(project for _, project, _ in CASES):
        path = folder / f"{project_name}.physgrade"
        make_project(project_name, path)
        with Project.open(path) as project:
            for case, _, options in (c for c in CASES if c[1] == project_name):
                cases[case] = canonical(build_report(project, options))
    golden = versions() | {"cases": cases}
    GOLDEN.parent.mkdir(exist_ok=True)
    text = json.dumps(golden, sort_keys=True, indent=1, ensure_ascii=False)
    GOLDEN.write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))  # same numbers, same bytes
    return golden


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        written = write_golden(Path(tmp))
    print(f"wrote {GOLDEN} ({GOLDEN.stat().st_size:,} bytes, {len(written['cases'])} cases)")
