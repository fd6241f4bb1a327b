"""Every way of building the project report gives the numbers of the report as it was before it
had a fast path (the golden file: ``tests/report_golden.py``).

The Reports page builds its report from scores held in memory (``ScoreCache``) and in two
phases (every value first, then each section's intervals and figures); the command line builds
it in one call. A faster path that moved one bootstrap draw, dropped one tie or reordered one
row would still look plausible, so each path is held to the same golden numbers: numbers to one
part in 10⁹ (what the CPU's BLAS kernels may change is the last digit or two), NaN as NaN,
strings, counts and the tables' shape exactly, and figures by what they say and, where the
renderer and the BLAS kernels are those that drew them, by their bytes.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any, Iterator

import pytest

from physgrade.project import Project
from physgrade.report.build import build_report
from physgrade.stats.estimate import ALL_AGREE
from physgrade.tasks import Task
from report_golden import CASES, canonical, make_project, read_golden, versions

CASE_NAMES = [case for case, _, _ in CASES]
#: The one-call and two-phase paths share every step with the cached one (which runs every
#: case); these cases, both projects filtered and not, keep the module within a minute.
FRESH_CASES = ["demo", "generated-topic"]
TWO_PHASE_CASES = ["demo", "demo-model-kind", "generated", "generated-topic"]
PROJECT_OF = {case: project for case, project, _ in CASES}
OPTIONS_OF = {case: options for case, _, options in CASES}
#: What a figure's PNG bytes depend on: matplotlib draws the image and FreeType its text
#: (hinting and anti-aliasing change from one release to the next), from numbers whose last
#: digits depend on the BLAS kernels; on another version or kernel the same plot may differ in a
#: few pixels, so only where all three are those recorded are the bytes compared.
RENDERER = ("matplotlib", "freetype", "blas")
ALPHA_COLUMN = "Krippendorff α"


@pytest.fixture(scope="module")
def golden() -> dict[str, Any]:
    return read_golden()


@pytest.fixture(scope="module")
def same_renderer(golden: dict[str, Any]) -> bool:
    installed = versions()
    return all(installed[name] == golden.get(name) for name in RENDERER)


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Project]]:
    """Each case's project, made once for the module and open for all of its tests (named as
    when the golden file was made, although the name is not part of what is compared)."""
    folder = tmp_path_factory.mktemp("report_golden")
    opened = {}
    for name in dict.fromkeys(PROJECT_OF.values()):
        path = folder / f"{name}.physgrade"
        make_project(name, path)
        opened[name] = Project.open(path)
    yield opened
    for project in opened.values():
        project.close()


@pytest.fixture(scope="module")
def caches(projects: dict[str, Project]) -> dict[str, Any]:
    """One score cache per project, kept over the module's cases in turn, as the Reports page
    keeps it while the reader changes the filters."""
    from physgrade.scoring.cache import ScoreCache

    return {name: ScoreCache() for name in projects}


#: How far a golden number may move. The BLAS kernels OpenBLAS picks for the CPU (Haswell's on
#: AVX2, SkylakeX's on AVX-512) add in different orders, so a correlation or a regression differs
#: in its last one or two digits (about 1e-15 relative); a change to a statistic itself (one
#: bootstrap draw moved, one tie dropped) moves it by far more than one part in 1e9.
RELATIVE_TOLERANCE = 1e-9
#: Below this a golden number is zero however it was summed (a difference of two equal sums).
ABSOLUTE_TOLERANCE = 1e-12


def as_text(value: Any) -> str:
    """JSON text: what a difference is shown as."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def first_difference(got: Any, want: Any, where: str = "") -> str | None:
    """Where ``got`` and ``want`` first differ, or None: floats equal within the tolerances
    (NaN equal to NaN), everything else (strings, counts, the shape) exactly."""
    if isinstance(want, float) and isinstance(got, float):
        if math.isnan(want) and math.isnan(got):
            return None
        if math.isclose(got, want, rel_tol=RELATIVE_TOLERANCE, abs_tol=ABSOLUTE_TOLERANCE):
            return None
        return f"{where or 'value'}: {got!r}, golden {want!r}"
    if type(got) is not type(want):
        return f"{where or 'value'}: {got!r}, golden {want!r}"
    if isinstance(want, dict):
        if sorted(got) != sorted(want):
            return f"{where or 'keys'}: keys {sorted(got)}, golden {sorted(want)}"
        pairs: list[tuple[str, Any, Any]] = [(f"{where}.{key}", got[key], want[key])
                                              for key in sorted(want)]
    elif isinstance(want, list):
        if len(got) != len(want):
            return f"{where or 'list'}: {len(got)} items, golden {len(want)}"
        pairs = [(f"{where}[{i}]", g, w) for i, (g, w) in enumerate(zip(got, want))]
    else:
        return None if got == want else f"{where or 'value'}: {got!r}, golden {want!r}"
    for place, inner_got, inner_want in pairs:
        found = first_difference(inner_got, inner_want, place)
        if found:
            return found
    return None


def assert_same(where: str, got: Any, want: Any) -> None:
    difference = first_difference(got, want)
    assert difference is None, f"{where}, {difference}"


def assert_same_table(where: str, got: dict[str, Any], want: dict[str, Any]) -> None:
    """Equal tables, else a message that names the first difference: a heading or a row."""
    for key in ("name", "title", "note", "columns"):
        assert_same(f"{where}: {key}", got.get(key), want.get(key))
    for number, (row, golden_row) in enumerate(zip(got["rows"], want["rows"])):
        difference = first_difference(row, golden_row)
        assert difference is None, (f"{where}, row {number} {difference}:\n  got    "
                                    f"{as_text(row)}\n  golden {as_text(golden_row)}")
    assert_same(where, got, want)


def figure_text(figure: dict[str, str], with_bytes: bool) -> dict[str, str]:
    return figure if with_bytes else {k: v for k, v in figure.items() if k != "sha256"}


def assert_same_sections(case: str, got: list[dict[str, Any]], want: list[dict[str, Any]],
                         same_renderer: bool) -> None:
    assert [s["title"] for s in got] == [s["title"] for s in want], f"{case}: sections"
    for section, golden in zip(got, want):
        where = f"{case}, section {section['title']!r}"
        for key in ("intro", "short"):
            assert section[key] == golden[key], f"{where}: {key} {section[key]!r}, golden {golden[key]!r}"
        assert [t["name"] for t in section["tables"]] == [t["name"] for t in golden["tables"]], (
            f"{where}: tables")
        for table, golden_table in zip(section["tables"], golden["tables"]):
            assert_same_table(f"{where}, table {table['name']!r}", table, golden_table)
        figures = [figure_text(f, same_renderer) for f in section["figures"]]
        assert figures == [figure_text(f, same_renderer) for f in golden["figures"]], (
            f"{where}: figures")


def assert_same_report(case: str, got: dict[str, Any], want: dict[str, Any],
                       same_renderer: bool) -> None:
    assert_same(f"{case}: settings", got["settings"], want["settings"])
    assert_same_sections(case, got["sections"], want["sections"], same_renderer)


def pending(cell: dict[str, Any], reason: str) -> dict[str, Any]:
    """A golden Krippendorff alpha as the draft shows it: the value without its interval. An
    alpha that cannot be computed, or of items that all agree, has no interval to wait for, so
    it stays as it is."""
    if cell["value"] is None or cell["reason"] == ALL_AGREE:
        return cell
    return {"value": cell["value"], "ci95": None, "n": cell["n"], "reason": reason}


def drafted(section: dict[str, Any], reason: str) -> dict[str, Any]:
    """A golden section as the draft holds it, its figures set aside: alpha pending."""
    tables = []
    for table in section["tables"]:
        alpha = {i for i, name in enumerate(table["columns"]) if name == ALPHA_COLUMN}
        rows = [[pending(cell, reason) if i in alpha else cell for i, cell in enumerate(row)]
                for row in table["rows"]]
        tables.append(table | {"rows": rows})
    return section | {"tables": tables, "figures": []}


@pytest.mark.parametrize("case", FRESH_CASES)
def test_fresh_report_equals_golden(case: str, projects: dict[str, Project],
                                    golden: dict[str, Any], same_renderer: bool) -> None:
    """The command line's path: one call, scores read from the project file."""
    report = build_report(projects[PROJECT_OF[case]], OPTIONS_OF[case])
    assert_same_report(case, canonical(report), golden["cases"][case], same_renderer)


@pytest.mark.parametrize("case", CASE_NAMES)
def test_cached_report_equals_golden(case: str, projects: dict[str, Project],
                                     caches: dict[str, Any], golden: dict[str, Any],
                                     same_renderer: bool) -> None:
    """The Reports page's path: the scores read once per project, each filter selected from
    the arrays the cases before it used."""
    project = projects[PROJECT_OF[case]]
    report = build_report(project, OPTIONS_OF[case], store=caches[PROJECT_OF[case]].store(project))
    assert_same_report(case, canonical(report), golden["cases"][case], same_renderer)


@pytest.mark.parametrize("case", TWO_PHASE_CASES)
def test_two_phase_report_equals_golden(case: str, projects: dict[str, Project],
                                        caches: dict[str, Any], golden: dict[str, Any],
                                        same_renderer: bool) -> None:
    """The Reports page's two phases: the draft holds every golden value (Krippendorff alpha
    without its interval) and every figure, none drawn yet; finishing each section gives the
    golden section."""
    from physgrade.report.build import draft_report, finish_section
    from physgrade.report.model import PENDING

    project = projects[PROJECT_OF[case]]
    want = golden["cases"][case]
    draft = draft_report(project, OPTIONS_OF[case], caches[PROJECT_OF[case]].store(project), Task())
    figures = [[(f.name, f.title, f.caption, f.table, f.drawn) for f in s.figures]
               for s in draft.report.sections]
    assert figures == [[(f["name"], f["title"], f["caption"], f["table"], False)
                        for f in s["figures"]] for s in want["sections"]], f"{case}: draft figures"
    undrawn = dataclasses.replace(draft.report, sections=[
        dataclasses.replace(s, figures=[]) for s in draft.report.sections])
    assert_same_report(f"{case} (draft)", canonical(undrawn),
                       want | {"sections": [drafted(s, PENDING) for s in want["sections"]]},
                       same_renderer)
    finished = [finish_section(draft, i, Task()) for i in range(len(draft.report.sections))]
    assert_same_sections(case, canonical(dataclasses.replace(draft.report, sections=finished))[
        "sections"], want["sections"], same_renderer)

