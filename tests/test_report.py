"""The project report on the demo project: its numbers, its files, its filters and its command."""

from __future__ import annotations

import csv
import json
import re
import sqlite3
import uuid
from functools import partial
from pathlib import Path

import pytest

from conftest import write_jsonl
from physgrade.changes import Changes, RecordKind
from physgrade.cli import main
from physgrade.importer import import_file
from physgrade.project import Project
from physgrade.raters import HUMAN_CONSENSUS
from physgrade.report.build import build_report, draft_report, finish_section
from physgrade.report.model import Figure, Report, Table, cell_parts
from physgrade.report.options import ReportOptions
from physgrade.report.writers import write_report
from physgrade.scoring.cache import ScoreCache
from physgrade.selection import ResponseFilter, filter_choices
from physgrade.stats.describe import proportion
from physgrade.stats.estimate import ALL_AGREE, Estimate
from physgrade.tasks import Cancelled, Task

LARGE = "arbiter-large [prefs-v1]"


@pytest.fixture(scope="module")
def demo_path(tmp_path_factory) -> Path:
    from physgrade.demo import build_demo
    path = tmp_path_factory.mktemp("report") / "demo.physgrade"
    build_demo(path)
    return path


@pytest.fixture(scope="module")
def report(demo_path: Path) -> Report:
    with Project.open(demo_path) as project:
        return build_report(project, ReportOptions(resamples=200))


def table(report: Report, name: str) -> Table:
    return next(t for t in report.tables() if t.name == name)


def row(t: Table, **match: object) -> dict[str, object]:
    """The one row whose columns have the values given (column names with _ for spaces)."""
    found = [dict(zip(t.columns, r)) for r in t.rows
             if all(dict(zip(t.columns, r))[k.replace("_", " ")] == v for k, v in match.items())]
    assert len(found) == 1, (match, len(found))
    return found[0]


def pairs(path: Path, judge: str, grader: str, criterion: str) -> list[tuple[int, int]]:
    """(person, judge) scores of one P-REFS criterion, straight from the file."""
    with sqlite3.connect(path) as conn:
        return conn.execute(
            "SELECT h.value, j.value FROM scores h JOIN scores j ON j.response_id = h.response_id "
            "AND j.rubric = h.rubric AND j.criterion = h.criterion "
            "JOIN raters rh ON rh.id = h.rater_id JOIN raters rj ON rj.id = j.rater_id "
            "WHERE rh.name = ? AND rj.name || ' [' || rj.prompt_version || ']' = ? "
            "AND h.rubric = 'prefs' AND h.criterion = ? "
            "AND h.value IS NOT NULL AND j.value IS NOT NULL", (grader, judge, criterion)).fetchall()


def test_criterion_agreement_matches_the_scores_in_the_file(report: Report, demo_path: Path) -> None:
    found = pairs(demo_path, LARGE, "expert-1", "ANS")
    same = sum(h == j for h, j in found)
    above = sum(j > h for h, j in found)
    below = sum(j < h for h, j in found)
    cells = row(table(report, "criterion_agreement"), Judge=LARGE, Reference="expert-1",
                Criterion="ANS (P-REFS)")
    assert cells["n"] == len(found) > 20
    assert cells["Exact agreement"].value == pytest.approx(same / len(found))
    assert cells["Lenient"].value == pytest.approx(above / len(found))
    assert cells["Strict"].value == pytest.approx(below / len(found))
    assert cells["Bias"].value == pytest.approx(sum(j - h for h, j in found) / len(found))
    # Exact agreement is a share of responses: Wilson's interval, even when all agree.
    assert cells["Exact agreement"].ci95 == pytest.approx(proportion(same, len(found)).ci95)
    for name in ("Exact agreement", "Weighted kappa", "Gwet AC2", "Krippendorff α"):
        estimate = cells[name]
        assert isinstance(estimate, Estimate) and estimate.n == len(found)
        # A coefficient has an interval unless every pair agrees, where its formula's has no
        # width and the estimate says so instead.
        assert estimate.value is None or estimate.ci95 is not None or (
            same == len(found) and estimate.reason == ALL_AGREE)


def test_confusion_matrix_rows_are_people_and_columns_judges(report: Report,
                                                             demo_path: Path) -> None:
    found = pairs(demo_path, LARGE, "expert-2", "COR")
    cells = {(r[4], r[5]): r[6] for r in table(report, "confusion_matrices").rows
             if r[:4] == (LARGE, "expert-2", "P-REFS", "COR")}
    assert set(cells) == {(h, j) for h in range(3) for j in range(3)}
    for (human, judge), count in cells.items():
        assert count == sum(1 for h, j in found if (h, j) == (human, judge))


def test_final_answers_and_mcnemar(report: Report) -> None:
    cells = row(table(report, "final_answer"), Judge=LARGE, Reference=HUMAN_CONSENSUS)
    counts = [cells[c] for c in ("Both correct", "Only reference correct", "Only judge correct",
                                 "Both wrong")]
    assert sum(counts) == cells["n"] > 0
    # The demo's judges are lenient: they accept answers the people reject, never the reverse.
    assert cells["Only judge correct"] > 0 and cells["Only reference correct"] == 0
    discordant = cells["Only judge correct"]
    assert cells["McNemar exact p"] == pytest.approx(min(1.0, 2 * 0.5 ** discordant))


def test_experts_are_compared_on_what_both_graded(report: Report, demo_path: Path) -> None:
    with sqlite3.connect(demo_path) as conn:
        both = conn.execute(
            "SELECT COUNT(*) FROM scores a JOIN scores b ON a.response_id = b.response_id "
            "AND a.criterion = b.criterion AND a.rubric = b.rubric WHERE a.rater_id = "
            "(SELECT id FROM raters WHERE name = 'expert-1') AND b.rater_id = "
            "(SELECT id FROM raters WHERE name = 'expert-2') AND a.rubric = 'prefs' "
            "AND a.criterion = 'COR'").fetchone()[0]
    cells = row(table(report, "expert_agreement"), Graders="expert-1 · expert-2",
                Criterion="COR (P-REFS)")
    assert cells["n"] == both


def test_the_studys_analyses_use_the_chosen_rater(demo_path: Path, report: Report) -> None:
    assert report.settings["analyses_rater"] == HUMAN_CONSENSUS
    with Project.open(demo_path) as project:
        by_judge = build_report(project, ReportOptions(rater=LARGE, resamples=50))
        with pytest.raises(ValueError, match="no grades by 'nobody'"):
            build_report(project, ReportOptions(rater="nobody", resamples=50))
    assert by_judge.sections[-1].title.endswith(LARGE)
    people, judge = (row(table(r, "score_by_model"), Model="orbit-7b")
                     for r in (report, by_judge))
    # The demo's judges are lenient: the weakest model scores higher by them than by people.
    assert judge["Mean score"].value > people["Mean score"].value
    assert {f.name for f in report.figures()} >= {
        "degradation_prefs", "error_prevalence_prefs", "score_by_topic", "score_differences",
        f"confusion_{'arbiter_large__prefs_v1'}"}


def test_settings_count_the_consensus_values(demo_path: Path, report: Report) -> None:
    with sqlite3.connect(demo_path) as conn:
        # The demo has two people: the consensus is every criterion one scored or both agree on.
        (agreed,) = conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM scores s JOIN raters r ON r.id = s.rater_id "
            "WHERE r.kind = 'human' GROUP BY s.response_id, s.rubric, s.criterion "
            "HAVING count(DISTINCT coalesce(s.value, -1)) = 1)").fetchone()
    assert report.settings["consensus_values"] == agreed > 0
    assert report.settings["consensus_adjudicated"] == 0
    assert "adjudicated value" in report.settings["consensus"]


def test_filters_narrow_the_report(demo_path: Path, report: Report) -> None:
    with Project.open(demo_path) as project:
        narrowed = build_report(project, ReportOptions(
            ResponseFilter(models=frozenset({"orbit-7b"}), judges=frozenset({LARGE})),
            resamples=50))
    assert narrowed.settings["filter"] == {"models": ["orbit-7b"], "judges": [LARGE]}
    judges = {r[0] for r in table(narrowed, "criterion_agreement").rows}
    assert judges == {LARGE}
    models = [r[0] for r in table(narrowed, "score_by_model").rows]
    assert "orbit-7b" in models and "quark-lm-3" not in models
    full = row(table(report, "criterion_agreement"), Judge=LARGE, Reference="expert-1",
               Criterion="ANS (P-REFS)")["n"]
    part = row(table(narrowed, "criterion_agreement"), Judge=LARGE, Reference="expert-1",
               Criterion="ANS (P-REFS)")["n"]
    assert 0 < part < full


def test_choices_list_what_a_report_can_be_narrowed_to(demo_path: Path) -> None:
    with Project.open(demo_path) as project:
        choices = filter_choices(project)
    assert choices.models == ["helix-14b-instruct", "orbit-7b", "quark-lm-3"]
    assert choices.kinds == ["problem", "conceptual"]
    assert choices.judges == [LARGE, "arbiter-mini [prefs-v1]"]
    assert choices.graders == ["expert-1", "expert-2"]
    assert choices.raters[0] == HUMAN_CONSENSUS
    assert choices.topics[0] == "Introduction"  # taxonomy order, not alphabetical


def test_a_report_can_be_cancelled(demo_path: Path) -> None:
    task = Task()
    task.cancel()
    with Project.open(demo_path) as project, pytest.raises(Cancelled):
        build_report(project, ReportOptions(resamples=50), task)


def test_a_project_without_scores_still_reports(loaded: Project) -> None:
    empty = build_report(loaded, ReportOptions(resamples=50))
    assert empty.settings["analyses_rater"] is None
    assert all(not t.rows for t in empty.tables())
    assert len(empty.sections) == 4


def test_written_files_hold_every_table(report: Report, tmp_path: Path) -> None:
    written = write_report(report, tmp_path)
    assert {p.name for p in written} >= {"report.html", "report.json", "criterion_agreement.csv"}
    saved = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    tables = {t["name"]: t for s in saved["sections"] for t in s["tables"]}
    assert set(tables) == {t.name for t in report.tables()}
    first = table(report, "criterion_agreement")
    assert tables["criterion_agreement"]["rows"][0][4] == first.rows[0][4].as_dict()
    with (tmp_path / "csv" / "criterion_agreement.csv").open(encoding="utf-8") as f:
        lines = list(csv.reader(f))
    header = lines[0]
    assert header[4:9] == ["Exact agreement", "Exact agreement ci95 low",
                           "Exact agreement ci95 high", "Exact agreement n",
                           "Exact agreement note"]
    assert len(lines) == len(first.rows) + 1
    assert float(lines[1][4]) == pytest.approx(first.rows[0][4].value)
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert page.count("<img ") == len(report.figures()) > 0
    assert page.count("src='data:image/png;base64,") == len(report.figures())
    assert not re.search(r"<script|src=['\"]?(https?|file):", page, re.I)


def test_a_cell_wraps_only_between_whole_words() -> None:
    def whole(text: str) -> list[str]:
        return [part for part, kept in cell_parts(text) if kept]

    assert whole("0.879 [0.647, 1.000]") == ["[0.647, 1.000]"]
    assert whole("1.000 (all agree, n = 57)") == ["n = 57)"]
    assert whole("arbiter-large [prefs-v1]; MOD (P-REFS)") == [
        "arbiter-large", "[prefs-v1]", "(P-REFS)"]
    for text in ("0.879 [0.647, 1.000]", "a  b\n[c, d]; e-f", "", "[unclosed, x"):
        assert "".join(part for part, _ in cell_parts(text)) == text  # nothing lost or added


def test_html_tables_wrap_between_whole_words(report: Report, tmp_path: Path) -> None:
    page = write_report(report, tmp_path, ["html"])[0].read_text(encoding="utf-8")
    first = table(report, "criterion_agreement").rows[0]
    interval = first[4].text(percent=True).partition(" ")[2]
    assert f"<span class=whole>{interval}</span>" in page  # kept under its value, whole
    name, version = first[0].split(" ")  # "arbiter-large [prefs-v1]": never "arbiter-"
    assert f"<span class=whole>{name}</span> <span class=whole>{version}</span>" in page
    assert "white-space: nowrap" not in page.split(".whole")[0]  # cells themselves wrap


def test_html_escapes_names_from_imported_files(loaded: Project, tmp_path: Path) -> None:
    hostile = "<script>alert(1)</script>"
    import_file(loaded, write_jsonl(tmp_path / "v.jsonl", [
        {"response_id": "r-1", "judge": hostile, "prompt_version": "v1",
         "scores": {"INT": 1, "MOD": 1, "CON": 1, "APP": 1, "CAL": 1, "COR": 2, "COH": 1,
                    "ANS": 2}}]), "verdicts")
    written = write_report(build_report(loaded, ReportOptions(resamples=20)), tmp_path / "out",
                           ["html"])
    page = written[0].read_text(encoding="utf-8")
    assert "<script" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_write_report_refuses_unknown_formats(report: Report, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="report formats are html, csv, json; not pdf"):
        write_report(report, tmp_path, ["html", "pdf"])
    assert not list(tmp_path.iterdir())


#: The plots :func:`counted_plot` drew, in order.
PLOTTED: list[tuple[str, float]] = []


def counted_plot(name: str, value: float) -> bytes:
    PLOTTED.append((name, value))
    return f"{name} {value!r}".encode()


def test_a_figure_drawn_lately_from_the_same_numbers_is_not_drawn_again() -> None:
    name = uuid.uuid4().hex  # a plot no other test drew
    first = Figure("a", "A", partial(counted_plot, name, 0.5))
    again = Figure("b", "B", partial(counted_plot, name, 0.5))
    other = Figure("a", "A", partial(counted_plot, name, 0.5000001))
    assert [first.draw(), again.draw(), other.draw(), first.draw()] == [
        f"{name} 0.5".encode(), f"{name} 0.5".encode(), f"{name} 0.5000001".encode(),
        f"{name} 0.5".encode()]
    assert again.drawn and [p for p in PLOTTED if p[0] == name] == [(name, 0.5),
                                                                    (name, 0.5000001)]
    local = Figure("c", "C", lambda: counted_plot(name, 1.0))  # cannot be pickled: drawn anew
    twin = Figure("c", "C", lambda: counted_plot(name, 1.0))
    assert local.draw() == twin.draw() and PLOTTED.count((name, 1.0)) == 2


def test_report_command(demo_path: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "report"
    assert main(["report", str(demo_path), "--out", str(out), "--format", "json,csv",
                 "--filter", "model=orbit-7b", "--resamples", "50"]) == 0
    assert (out / "report.json").is_file() and (out / "csv" / "score_by_model.csv").is_file()
    assert not (out / "report.html").exists()
    assert str(out) in capsys.readouterr().out
    saved = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert saved["settings"]["filter"] == {"models": ["orbit-7b"]}


@pytest.mark.parametrize("arguments, message", [
    (["--format", "pdf"], "report formats are html, csv, json; not pdf"),
    (["--filter", "colour=red"], "FIELD=VALUE"),
    (["--rater", "nobody"], "no grades by 'nobody'"),
])
def test_report_command_explains_bad_input(demo_path: Path, tmp_path: Path, capsys,
                                           arguments: list[str], message: str) -> None:
    out = tmp_path / "report"
    assert main(["report", str(demo_path), "--out", str(out), "--resamples", "20",
                 *arguments]) == 1
    assert message in capsys.readouterr().err
    assert not out.exists() or not list(out.iterdir())


def test_a_filter_change_reads_nothing_from_the_project(demo_path: Path) -> None:
    """Once the scores and the small tables are kept, every filter's report, drafted and
    finished, comes from memory: not one statement reaches the project file."""
    cache = ScoreCache()
    with Project.open(demo_path) as project:
        draft_report(project, ReportOptions(resamples=20), cache.store(project), Task(),
                     cache.readings)
        statements: list[str] = []
        project.conn.set_trace_callback(statements.append)
        for report_filter in (ResponseFilter(models=frozenset({"orbit-7b"})),
                              ResponseFilter(topics=frozenset({"Mechanics"})),
                              ResponseFilter(judges=frozenset({LARGE}), kinds=frozenset({"problem"})),
                              ResponseFilter(graders=frozenset({"expert-1"}))):
            draft = draft_report(project, ReportOptions(report_filter, resamples=20),
                                 cache.store(project), Task(), cache.readings)
            finished = [finish_section(draft, i) for i in range(len(draft.report.sections))]
            assert finished and {s.title for s in finished} == {
                s.title for s in draft.report.sections}
        assert statements == []
        # A grade re-reads that response's scores and what comes from scores, nothing else.
        cache.note(Changes.of(RecordKind.SCORES, responses=["r-0001"]))
        draft_report(project, ReportOptions(resamples=20), cache.store(project), Task(),
                     cache.readings)
        scores_read = [statement for statement in statements if "FROM scores" in statement]
        assert scores_read and all("'r-0001'" in statement for statement in scores_read)
        assert any("assessments" in statement for statement in statements)
        assert not any("estimation_sample" in statement for statement in statements)
        cache.note(Changes.of(RecordKind.ESTIMATION))  # a sample drawn: the samples are read again
        draft_report(project, ReportOptions(resamples=20), cache.store(project), Task(),
                     cache.readings)
        assert any("estimation_sample" in statement for statement in statements)
