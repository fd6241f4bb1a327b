"""People with few grades share one "others" row in the tables readers see (screen, HTML) and
are left out of per-rater figures, while the CSV and JSON exports keep everyone's own row: on the
demo project, with a newcomer who graded two responses."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from physgrade import scores
from physgrade.cli import main
from physgrade.project import Project
from physgrade.report.build import build_report
from physgrade.report.model import Report, Table
from physgrade.report.options import ReportOptions
from physgrade.report.writers import report_dict, write_report

NEWCOMER = "newcomer"
OTHERS = "others (1 grader, 2 grades)"
#: The tables with a row per grader (as reference, or in a pair of graders).
PER_GRADER = ("criterion_agreement", "confusion_matrices", "total_score", "final_answer",
              "expert_agreement")


@pytest.fixture(scope="module")
def small_grader(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo project (expert-1 and expert-2 graded 76 and 50 responses), and a newcomer who
    graded two of expert-1's responses completely."""
    from physgrade.demo import build_demo

    path = tmp_path_factory.mktemp("folding") / "demo.physgrade"
    build_demo(path)
    with Project.open(path) as project:
        graded = [rid for (rid,) in project.conn.execute(
            "SELECT a.response_id FROM assessments a JOIN raters r ON r.id = a.rater_id "
            "WHERE r.name = 'expert-1' ORDER BY a.response_id LIMIT 2")]
        for rid in graded:
            for criterion in scores.scored(project, rid).rubric.criteria:
                scores.set_score(project, NEWCOMER, rid, criterion.key, criterion.maximum)
    return path


def report_of(path: Path, **options: int) -> Report:
    with Project.open(path) as project:
        return build_report(project, ReportOptions(resamples=20, **options))


@pytest.fixture(scope="module")
def folded(small_grader: Path) -> Report:
    return report_of(small_grader)


def table(report: Report, name: str) -> Table:
    return next(t for t in report.tables() if t.name == name)


def names(rows: list[tuple]) -> set[str]:
    """Every rater a table's rows name one by one (pairs of graders split; all the graders
    together are a group, which keeps its row)."""
    return {name for row in rows for cell in row if isinstance(cell, str)
            and cell.count(" · ") < 2 for name in cell.split(" · ")}


def test_readers_see_the_small_grader_in_one_others_row(folded: Report) -> None:
    assert folded.settings["min_grades"] == 10
    assert folded.settings["folded"] == {"graders": [NEWCOMER]}
    for name in PER_GRADER:
        shown = table(folded, name).shown()
        assert NEWCOMER not in names(shown.rows) and OTHERS in names(shown.rows), name
        assert "1 grader with fewer than 10 grades is shown as" in shown.note, name
        assert NEWCOMER in names(table(folded, name).rows), name
        assert OTHERS not in names(table(folded, name).rows), name
    # One grader folded: their row together is their own, under another name.
    totals = table(folded, "total_score")
    own = [row[2:] for row in totals.rows if row[1] == NEWCOMER]
    together = [row[2:] for row in totals.shown().rows if row[1] == OTHERS]
    assert own == together and [row[0] for row in own] == [2, 2]
    # The big graders keep their rows as they are.
    kept = [row for row in totals.rows if row[1] != NEWCOMER]
    assert kept == [row for row in totals.shown().rows if row[1] != OTHERS]


def test_the_exports_keep_every_graders_own_row(folded: Report, tmp_path: Path) -> None:
    write_report(folded, tmp_path)
    with open(tmp_path / "csv" / "total_score.csv", newline="", encoding="utf-8") as stream:
        references = {row["Reference"] for row in csv.DictReader(stream)}
    assert NEWCOMER in references and OTHERS not in references
    saved = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    totals = next(t for s in saved["sections"] for t in s["tables"] if t["name"] == "total_score")
    assert NEWCOMER in {row[1] for row in totals["rows"]}
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    shown = page[page.index("<h3 id='total_score'>"):]
    shown = shown[:shown.index("<h3", 4)]
    assert OTHERS in shown and NEWCOMER not in shown


def test_per_rater_figures_leave_the_small_grader_out(folded: Report) -> None:
    figure = next(f for f in folded.figures() if f.name == "score_differences")
    panels = figure.plot.args[0]  # type: ignore[attr-defined]  # partial(difference_plots, ...)
    assert panels and not any(NEWCOMER in name or "others" in name for name in panels)
    assert "1 grader with fewer than 10 grades is left out" in figure.caption
    assert OTHERS in figure.caption


def test_a_threshold_of_0_folds_nobody_and_changes_no_export(small_grader: Path,
                                                             folded: Report) -> None:
    everyone = report_of(small_grader, min_grades=0)
    assert everyone.settings["folded"] == {} and everyone.settings["min_grades"] == 0
    assert all(t.folded is None for t in everyone.tables())
    assert [s["tables"] for s in report_dict(everyone)["sections"]] == [
        s["tables"] for s in report_dict(folded)["sections"]]


def test_reviewers_and_labellers_fold_too(small_grader: Path) -> None:
    """In the demo, expert-1 and expert-2 reviewed 32 judge verdicts each, and expert-2
    labelled 20 questions with Bloom levels; models are never folded."""
    report = report_of(small_grader, min_grades=40)
    assert report.settings["folded"] == {"graders": [NEWCOMER], "reviewers": [
        "expert-1", "expert-2"], "labellers": ["expert-2"]}
    full = table(report, "judge_audit_full_agreement")
    assert {row[2] for row in full.shown().rows} == {"others (2 reviewers, 64 reviews)"}
    assert {row[2] for row in full.rows} == {"expert-1", "expert-2"}
    pairs = table(report, "judge_audit_reviewers")
    assert pairs.rows and not pairs.shown().rows  # one reviewer left: no pair to compare
    bloom = table(report, "bloom_agreement")
    assert {row[2] for row in bloom.shown().rows} == {"others (1 labeller, 20 labels)",
                                                      "final label"}
    assert {row[3] for row in bloom.shown().rows} == {row[3] for row in bloom.rows}


def test_the_command_line_sets_the_threshold(small_grader: Path, tmp_path: Path) -> None:
    for threshold, shown in ((0, NEWCOMER), (3, OTHERS)):
        out = tmp_path / str(threshold)
        assert main(["report", str(small_grader), "--out", str(out), "--format", "json,html",
                     "--resamples", "20", "--min-grades", str(threshold)]) == 0
        settings = json.loads((out / "report.json").read_text(encoding="utf-8"))["settings"]
        assert settings["min_grades"] == threshold
        assert settings["folded"] == ({} if threshold == 0 else {"graders": [NEWCOMER]})
        page = (out / "report.html").read_text(encoding="utf-8")
        assert f"<td>{shown}</td>" in page
