"""The report section "Model scores corrected by expert grades" on the demo project: its numbers
are :func:`physgrade.estimation.estimates.estimate`'s, on the sample the report names (else the
newest random one), with a forest plot per judge; ``report --sample`` and the Reports page's
sample choice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import shot, wait_for
from physgrade.cli import main
from physgrade.estimation import sample
from physgrade.estimation.estimates import MEASURES, estimate
from physgrade.project import Project, ProjectError
from physgrade.raters import RULES, ensure_rater
from physgrade.report.corrected import corrected_section
from physgrade.report.model import Section, Table
from physgrade.report.options import ReportOptions
from physgrade.rubric import FINAL_ANSWER
from physgrade.scores import scored, write
from physgrade.scoring import tables as score_tables
from physgrade.selection import ResponseFilter
from physgrade.tasks import Task

#: The demo's language-model judges, and how its tables and figures are named after them.
JUDGES = {"arbiter-large [prefs-v1]": "arbiter_large__prefs_v1",
          "arbiter-mini [prefs-v1]": "arbiter_mini__prefs_v1"}
TITLE = "Model scores corrected by expert grades"
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def demo(unsampled_demo: Path) -> Path:
    """The demo without its own estimation sample: these tests draw theirs."""
    return unsampled_demo


def picked_ids(project: Project, path: Path) -> Path:
    """An ids file of 30 responses expert-1 graded (grades someone chose, not a draw)."""
    ids = [rid for (rid,) in project.conn.execute(
        "SELECT DISTINCT a.response_id FROM assessments a JOIN raters r ON r.id = a.rater_id "
        "WHERE r.name = 'expert-1' ORDER BY a.response_id LIMIT 30")]
    path.write_text("".join(json.dumps({"response_id": rid}) + "\n" for rid in ids),
                    encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def sampled(tmp_path_factory) -> Path:
    """The demo with two random samples (est-1 the newer), a hand-picked one drawn after
    them, and a rules rater that checked some final answers."""
    from physgrade.demo import build_demo

    folder = tmp_path_factory.mktemp("corrected")
    path = folder / "demo.physgrade"
    build_demo(path, estimation_sample=False)
    with Project.open(path) as project:
        sample.draw(project, "est-0", 40, 1)
        sample.draw(project, "est-1", 80, 7)
        sample.register(project, "picked", picked_ids(project, folder / "picked.jsonl"))
        with project.transaction():
            rules, _ = ensure_rater(project, "rules", RULES)
            for (rid,) in project.conn.execute("SELECT id FROM responses LIMIT 20").fetchall():
                response = scored(project, rid)
                write(project, rules, response,
                      {FINAL_ANSWER: response.rubric.criterion(FINAL_ANSWER).maximum})
    return path


def section(path: Path, options: ReportOptions = ReportOptions(),
            number: int = 8) -> Section | None:
    with Project.open(path) as project:
        data = score_tables.load(project, options.filter)
        drawn = sample.read_samples(project)
    return corrected_section(drawn, data, options, number, Task())  # the project is closed


def table(found: Section, name: str) -> Table:
    return next(t for t in found.tables if t.name == name)


def assert_matches(found: Section, path: Path, sample_name: str, reference: str = "consensus",
                   assume_random: bool = False,
                   report_filter: ResponseFilter | None = None) -> None:
    """Every number of the section is estimate()'s for each judge, in its order (on the
    scores the report's filter lets through, when there is one)."""
    with Project.open(path) as project:
        data = None if report_filter is None else score_tables.load(project, report_filter)
        for judge, slug in JUDGES.items():
            expected = estimate(project, judge, sample_name, reference, assume_random,
                                data=data)
            rows = table(found, f"corrected_{slug}").rows
            assert rows == [(r.model, MEASURES[r.measure], r.judge_only, r.judge_only.n,
                             r.experts_only, r.experts_only.n, r.corrected_estimate(),
                             r.unlabeled, r.corrected.lam if r.corrected else None,
                             round(r.corrected.effective_n) if r.corrected else None)
                            for r in expected.rows]
            assert table(found, f"corrected_differences_{slug}").rows == [
                (MEASURES[d.measure], *d.models, d.estimate) for d in expected.differences]
            assert all(note[1:] in table(found, f"corrected_{slug}").note
                       for note in expected.notes)


def test_the_section_lays_out_estimates_for_each_language_model_judge(sampled: Path) -> None:
    found = section(sampled)
    assert found is not None and found.title == f"8. {TITLE}"
    assert_matches(found, sampled, "est-1")
    # The rules rater checks final answers only: it has no table of its own.
    assert [t.name for t in found.tables] == [
        "corrected_arbiter_large__prefs_v1", "corrected_differences_arbiter_large__prefs_v1",
        "corrected_arbiter_mini__prefs_v1", "corrected_differences_arbiter_mini__prefs_v1"]
    assert "newest random sample, 'est-1'" in found.intro and "CAUTION" not in found.intro
    estimates = table(found, "corrected_arbiter_large__prefs_v1")
    assert {"Judge alone", "Experts alone", "Corrected"} <= estimates.percent
    corrected = [row[6] for row in estimates.rows]
    assert all(cell.value is not None and cell.ci95 is not None for cell in corrected)


def test_each_judge_has_a_forest_plot_after_its_table(sampled: Path) -> None:
    found = section(sampled)
    assert found is not None
    assert [(f.name, f.table) for f in found.figures] == [
        ("forest_arbiter_large__prefs_v1", "corrected_arbiter_large__prefs_v1"),
        ("forest_arbiter_mini__prefs_v1", "corrected_arbiter_mini__prefs_v1")]
    assert all(figure.png.startswith(PNG) and len(figure.png) > 10_000
               for figure in found.figures)


def test_a_hand_picked_sample_named_is_assumed_random_and_flagged(sampled: Path) -> None:
    found = section(sampled, ReportOptions(sample="picked"))
    assert found is not None
    assert found.intro.startswith("CAUTION: sample 'picked' was picked by hand, not drawn at "
                                  "random.")
    assert "the sample named for this report, 'picked'" in found.intro
    assert all("hand-picked sample, assumed random" in t.title for t in found.tables)
    assert all("hand-picked sample, assumed random" in f.title for f in found.figures)
    assert_matches(found, sampled, "picked", assume_random=True)


def test_a_random_sample_named_is_used(sampled: Path) -> None:
    found = section(sampled, ReportOptions(sample="est-0"))
    assert found is not None and "the sample named for this report, 'est-0'" in found.intro
    assert_matches(found, sampled, "est-0")


def test_an_unknown_sample_is_refused_naming_the_samples(sampled: Path) -> None:
    with pytest.raises(ProjectError, match="no estimation sample 'nope'.*'est-1'"):
        section(sampled, ReportOptions(sample="nope"))


def test_one_grader_chosen_is_the_reference(sampled: Path) -> None:
    found = section(sampled, ReportOptions(ResponseFilter(graders=frozenset({"expert-1"}))))
    assert found is not None and "those of expert-1 on" in found.intro
    assert_matches(found, sampled, "est-1", reference="expert-1")


def test_the_report_filter_narrows_the_estimates(sampled: Path) -> None:
    only = ResponseFilter(models=frozenset({"orbit-7b"}))
    found = section(sampled, ReportOptions(only))
    assert found is not None and "The report's filter narrows the estimates" in found.intro
    assert_matches(found, sampled, "est-1", report_filter=only)
    estimates = table(found, "corrected_arbiter_large__prefs_v1")
    assert {row[0] for row in estimates.rows} == {"orbit-7b", "all models"}
    whole = table(section(sampled), "corrected_arbiter_large__prefs_v1")
    assert [row[2] for row in estimates.rows if row[0] == "orbit-7b"] == [
        row[2] for row in whole.rows if row[0] == "orbit-7b"]  # a model's own numbers stay


@pytest.mark.parametrize("chosen", [ResponseFilter(graders=frozenset({"nobody"})),
                                    ResponseFilter(judges=frozenset({"rules"}))])
def test_no_section_without_people_or_a_language_model_judge(sampled: Path,
                                                             chosen: ResponseFilter) -> None:
    assert section(sampled, ReportOptions(chosen)) is None


def test_no_section_without_a_random_sample(demo: Path, tmp_path: Path) -> None:
    assert section(demo) is None
    with Project.open(demo) as project:
        sample.register(project, "picked", picked_ids(project, tmp_path / "ids.jsonl"))
    assert section(demo) is None  # a hand-picked sample is used only when named
    assert section(demo, ReportOptions(sample="picked")) is not None


# -- the command line ----------------------------------------------------------------------------


def test_report_sample_reaches_the_report_options(sampled: Path, tmp_path: Path,
                                                  monkeypatch) -> None:
    import physgrade.report.build

    asked: list[ReportOptions] = []
    real = physgrade.report.build.build_report
    monkeypatch.setattr(physgrade.report.build, "build_report",
                        lambda project, options, task: asked.append(options) or real(
                            project, options, task))
    assert main(["report", str(sampled), "--out", str(tmp_path / "out"), "--format", "json",
                 "--resamples", "20", "--sample", "picked"]) == 0
    assert [options.sample for options in asked] == ["picked"]


def test_report_sample_writes_the_section_into_html_and_json(sampled: Path,
                                                             tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["report", str(sampled), "--out", str(out), "--format", "html,json",
                 "--resamples", "20", "--sample", "picked"]) == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    assert TITLE in page and "CAUTION: sample" in page and "was picked by hand" in page
    saved = json.loads((out / "report.json").read_text(encoding="utf-8"))
    written = next(s for s in saved["sections"] if s["title"].endswith(TITLE))
    expected = section(sampled, ReportOptions(sample="picked"))
    assert expected is not None
    assert written["tables"] == [json.loads(json.dumps(t.as_dict(), ensure_ascii=False))
                                 for t in expected.tables]


def test_report_refuses_an_unknown_sample(sampled: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    assert main(["report", str(sampled), "--out", str(out), "--resamples", "20",
                 "--sample", "nope"]) == 1
    assert "no estimation sample 'nope'" in capsys.readouterr().err
    assert not out.exists() or not list(out.iterdir())


# -- the Reports page ----------------------------------------------------------------------------


def corrected_tab(page) -> int | None:
    """The index of the page's tab for the section, if it shows one."""
    return next((i for i in range(page.tabs.count())
                 if page.tabs.tabToolTip(i).endswith(TITLE)), None)


@pytest.mark.usefixtures("app_settings")
def test_the_reports_page_offers_the_samples_and_shows_the_section(window, demo: Path, qtbot,
                                                                   tmp_path: Path) -> None:
    page = window.reports
    window.reports_action.trigger()
    wait_for(qtbot, page.worker, "finished", 60_000)
    assert page.sample.isHidden() and corrected_tab(page) is None  # no sample yet

    def drawn(name: str, seed: int) -> None:
        assert window.ops.write(lambda project: sample.draw(project, name, 80, seed).changes)
        wait_for(qtbot, page.worker, "finished", 60_000)  # the report is computed again

    drawn("est-1", 7)
    assert page.sample.isVisible() and page.sample.currentText() == "est-1"
    assert page.options().sample is None  # the newest random one, whichever it is
    tab = corrected_tab(page)
    assert tab is not None and "newest random sample, 'est-1'" in next(
        s.intro for s in page.report.sections if s.title.endswith(TITLE))
    page.tabs.setCurrentIndex(tab)
    expected = section(demo, page.options())
    assert expected is not None
    view = page.tables[expected.tables[0].name]
    assert [view.text(0, c) for c in range(view.columnCount())] == [
        expected.tables[0].text(0, c) for c in range(len(expected.tables[0].columns))]

    drawn("est-2", 8)  # a newer random sample becomes the default
    assert [page.sample.itemText(i) for i in range(page.sample.count())] == ["est-2", "est-1"]
    assert page.sample.currentText() == "est-2" and page.options().sample is None

    ids = picked_ids(window.ops.project, tmp_path / "ids.jsonl")
    assert window.ops.write(lambda project: sample.register(project, "picked", ids).changes)
    wait_for(qtbot, page.worker, "finished", 60_000)
    assert page.sample.itemText(0) == "picked (by hand)"
    assert page.sample.currentText() == "est-2"  # a hand-picked sample only when chosen
    page.sample.setCurrentIndex(0)
    assert page.options().sample == "picked" and page.report_options != page.options()
    qtbot.waitUntil(lambda: page.report_options == page.options(), timeout=60_000)  # by itself
    shown = next(s for s in page.report.sections if s.title.endswith(TITLE))
    assert shown.intro.startswith("CAUTION: sample 'picked' was picked by hand")
    qtbot.wait(100)
    shot(window, "reports_corrected.png")


def test_the_demo_report_has_the_section_on_the_demo_sample(tmp_path: Path) -> None:
    from physgrade.demo import DEMO_SAMPLE, build_demo
    from physgrade.report.build import build_report

    path = tmp_path / "demo.physgrade"
    build_demo(path)
    with Project.open(path) as project:
        report = build_report(project, ReportOptions(resamples=50))
    titles = [found.title for found in report.sections]
    # After the audit and the Bloom labels, before the judge cards and the study's analyses
    # (the demo's contextual variants make groups of their own).
    assert titles[6:] == [f"7. {TITLE}", "8. Judge cards",
                          "9. Variant groups and formats, by human consensus",
                          "10. The study's analyses, by human consensus"]
    assert f"{DEMO_SAMPLE!r}" in report.sections[6].intro
    assert_matches(report.sections[6], path, DEMO_SAMPLE)
