"""Judge reliability: a second run of the same judge under a run label is a rater of its own and
asks again (nothing cached from the first run), each run's decoding is sent and recorded, and the
report's "Judge reliability" section gives Cohen's κ between runs per criterion, checked against
κ computed by hand on answers with known truth."""

from __future__ import annotations

import json
import re

import pytest

from conftest import question, response, write_jsonl
from fake_anthropic import schema_answer
from physgrade.cli import main
from physgrade.importer import import_file
from physgrade.judge import runs, verdicts
from physgrade.judge.client import Decoding
from physgrade.judge.prompts import Prompts
from physgrade.project import Project, ProjectError
from physgrade.raters import ensure_rater, judge_label, rater_label
from physgrade.report.build import build_report
from physgrade.report.reliability import TITLE
from physgrade.studies.judge_reliability import read_judges

MODEL = "claude-haiku-4-5"
OTHER = "claude-sonnet-4-6"
#: The scores each run gives each response (by its number) on INT (0-1) and COR (0-2): run a at
#: temperature 0, run b at 0.7, the other judge at the API's default.
RUN_A = {"INT": [1, 1, 1, 1, 1, 0, 0, 0, 1, 1], "COR": [2, 2, 1, 1, 0, 0, 2, 1, 2, 0]}
RUN_B = {"INT": [1, 1, 1, 0, 1, 0, 0, 1, 1, 1], "COR": [2, 1, 1, 1, 0, 0, 2, 2, 2, 1]}
OTHER_JUDGE = {"INT": [1] * 5 + [0] * 5, "COR": [2, 2, 2, 2, 2, 0, 0, 0, 0, 0]}
_ATTEMPT = re.compile(r"Attempt (\d+):")


def kappa_by_hand(first: list[int], second: list[int]) -> float:
    """Cohen's κ = (p_o − p_e) / (1 − p_e), p_e from the two raters' marginal shares."""
    n = len(first)
    observed = sum(a == b for a, b in zip(first, second)) / n
    chance = sum(first.count(c) / n * second.count(c) / n for c in set(first) | set(second))
    return (observed - chance) / (1 - chance)


def answer(body: dict) -> dict:
    """Each judge's scores of the response the request is about, by its decoding and model."""
    given = schema_answer(body)
    number = int(_ATTEMPT.search(json.dumps(body["messages"]))[1])
    table = (OTHER_JUDGE if body["model"] == OTHER
             else RUN_B if body.get("temperature") == 0.7 else RUN_A)
    for key, values in table.items():
        given[key]["score"] = values[number]
    return given


@pytest.fixture
def study(project, tmp_path):
    """Ten problem-solving responses, read holistically (no template), numbered in their text."""
    import_file(project, write_jsonl(tmp_path / "q.jsonl", [question()]), "questions")
    import_file(project, write_jsonl(tmp_path / "r.jsonl", [
        response(f"r-{i:02d}", text=f"Attempt {i}: v = a t, so v = 10 m/s.") for i in range(10)]),
        "responses")
    project.conn.commit()
    return project.path


def version() -> str:
    return verdicts.prompt_version(Prompts.load())


def test_a_run_label_names_a_rater_of_its_own_and_the_default_run_is_unnamed(project):
    assert rater_label("claude-x", "v3") == "claude-x [v3]"
    assert rater_label("claude-x", "v3", "2") == "claude-x [v3, run 2]"
    assert rater_label("claude-x", "", "2") == "claude-x [run 2]"
    assert rater_label("expert-1", "") == "expert-1"
    second, _ = ensure_rater(project, "claude-x", "llm", "v3", "2")  # a further run first
    first, _ = ensure_rater(project, "claude-x", "llm", "v3")
    assert first != second and ensure_rater(project, "claude-x", "llm", "v3", "2")[0] == second
    assert ensure_rater(project, "claude-x", "llm", "v3")[0] == first
    assert judge_label(project, "claude-x [v3, run 2]") == "claude-x [v3, run 2]"
    with pytest.raises(ValueError, match=r"several prompt versions \(claude-x \[v3, run 2\], "
                                         r"claude-x \[v3\]\)"):
        judge_label(project, "claude-x")
    with pytest.raises(ProjectError, match="only a language model judge has runs"):
        ensure_rater(project, "expert-1", "human", "", "2")
    with pytest.raises(ProjectError, match="cannot contain"):
        ensure_rater(project, "claude-x", "llm", "v3", "b]")


def test_a_second_run_asks_again_sends_its_decoding_and_records_it(study, fake, capsys):
    fake.answer = answer
    assert main(["judge", str(study), "--model", MODEL, "--temperature", "0"]) == 0
    assert len(fake.message_requests()) == 10
    assert all(r.body["temperature"] == 0 and "top_p" not in r.body
               for r in fake.message_requests())
    # The same run again asks nothing; another run label asks every response again.
    assert main(["judge", str(study), "--model", MODEL, "--temperature", "0"]) == 0
    assert len(fake.message_requests()) == 10
    assert main(["judge", str(study), "--model", MODEL, "--run", "b", "--temperature", "0.7",
                 "--top-p", "0.9"]) == 0
    out = capsys.readouterr().out
    label = f"{MODEL} [{version()}, run b]"
    assert f"judging with {label} at temperature 0.7, top_p 0.9: 10 calls" in out
    assert f"{label}: 10 done, 0 already cached" in out
    second = fake.message_requests()[10:]
    assert len(second) == 10
    assert all(r.body["temperature"] == 0.7 and r.body["top_p"] == 0.9 for r in second)
    # A judge left at its defaults sends neither, as before, and the record says so.
    assert main(["judge", str(study), "--model", OTHER]) == 0
    assert all("temperature" not in r.body and "top_p" not in r.body
               for r in fake.message_requests()[20:])
    with Project.open(study) as project:
        recorded = {(run.rater, run.temperature, run.top_p, run.max_tokens, run.source,
                     run.requests) for run in runs.runs(project, "verdicts")}
        assert recorded == {(f"{MODEL} [{version()}]", 0.0, None, 2048, "direct", 10),
                            (label, 0.7, 0.9, 2048, "direct", 10),
                            (f"{OTHER} [{version()}]", None, None, 2048, "direct", 10)}
        assert len(verdicts.stored(project, MODEL, version())) == 10
        assert len(verdicts.stored(project, MODEL, version(), "b")) == 10
        # Continuing run b at another temperature would mix two decodings in one rater.
        with pytest.raises(ProjectError, match=r"run b\] was asked with temperature 0.7, top_p "
                                               r"0.9, not temperature 0.2"):
            verdicts.plan(project, MODEL, Prompts.load(), run="b", decoding=Decoding(0.2, 0.9))


def test_a_batched_run_keeps_its_label_and_decoding_until_collected(study, fake, capsys):
    fake.answer = answer
    assert main(["judge", str(study), "--model", MODEL, "--temperature", "0"]) == 0
    assert main(["judge", str(study), "--model", MODEL, "--run", "b", "--temperature", "0.7",
                 "--batch"]) == 0
    [batch] = fake.batches.values()
    assert all(item["params"]["temperature"] == 0.7 for item in batch["requests"])
    assert len(batch["requests"]) == 10  # the first run's verdicts are not run b's
    fake.finish_batches()
    assert main(["judge-status", str(study)]) == 0
    assert f"(verdicts, {MODEL} [{version()}, run b], 10 requests)" in capsys.readouterr().out
    with Project.open(study) as project:
        assert set(verdicts.stored(project, MODEL, version(), "b").values()) == {"ok"}
        stored = dict(project.conn.execute(
            "SELECT s.response_id, s.value FROM scores s JOIN raters r ON r.id = s.rater_id "
            "WHERE r.run = 'b' AND s.criterion = 'INT'"))
        assert stored == {f"r-{i:02d}": value for i, value in enumerate(RUN_B["INT"])}
        assert [(run.run, run.source, run.temperature) for run in runs.runs(project)] == [
            ("", "direct", 0.0), ("b", "batch", 0.7)]


def test_decoding_out_of_range_is_refused_by_name(study, fake, capsys):
    assert main(["judge", str(study), "--model", MODEL, "--temperature", "1.5"]) == 1
    assert "temperature must be between 0 and 1, not 1.5" in capsys.readouterr().err
    assert fake.requests == []
    with Project.open(study) as project:
        assert runs.runs(project) == []
    with pytest.raises(ValueError, match="temperature must be between 0 and 1, not 1.5"):
        Decoding(1.5)
    with pytest.raises(ValueError, match="top_p must be above 0 and at most 1, not 0"):
        Decoding(None, 0.0)


def test_the_report_gives_kappa_between_runs_and_judges_per_criterion(study, fake, tmp_path,
                                                                      capsys):
    fake.answer = answer
    for extra in (["--temperature", "0"], ["--run", "b", "--temperature", "0.7"]):
        assert main(["judge", str(study), "--model", MODEL, *extra]) == 0
    assert main(["judge", str(study), "--model", OTHER]) == 0
    a, b = f"{MODEL} [{version()}]", f"{MODEL} [{version()}, run b]"
    assert main(["info", str(study)]) == 0
    assert b in capsys.readouterr().out
    other = f"{OTHER} [{version()}]"
    with Project.open(study) as project:
        report = build_report(project)
    [section] = [s for s in report.sections if TITLE in s.title]
    agreement, settings = section.tables
    rows = {(row[0], row[1], row[4]): row for row in agreement.rows}
    # Runs of one judge come first, then the two judges.
    assert [row[2] for row in agreement.rows][:8] == ["runs of one judge"] * 8
    for key in ("INT", "COR"):
        found = rows[a, b, key]
        assert found[5] == 10
        assert found[6].value == pytest.approx(kappa_by_hand(RUN_A[key], RUN_B[key]), abs=5e-4)
        agreed = sum(x == y for x, y in zip(RUN_A[key], RUN_B[key])) / 10
        assert found[7].value == pytest.approx(agreed, abs=5e-4)
        assert rows[a, other, key][6].value == pytest.approx(
            kappa_by_hand(RUN_A[key], OTHER_JUDGE[key]), abs=5e-4)
    assert rows[a, b, "INT"][6].value == pytest.approx(0.524, abs=5e-4)  # (0.8 − 0.58) / 0.42
    assert rows[a, b, "COR"][6].value == pytest.approx(0.545, abs=5e-4)  # (0.7 − 0.34) / 0.66
    assert rows[a, b, "MOD"][6].value is None  # every score the same: κ is undefined, said so
    by_judge = {row[0]: row for row in settings.rows}
    assert by_judge[a][4:8] == ("0", "not sent", "2,048", 1)
    assert by_judge[b][3:6] == ("b", "0.7", "not sent")
    assert by_judge[other][4] == "1 (API default)"
    # The report says the same in every format.
    out = tmp_path / "out"
    assert main(["report", str(study), "--out", str(out)]) == 0
    assert "Judge reliability" in (out / "report.html").read_text(encoding="utf-8")
    assert (out / "csv" / "judge_reliability.csv").exists()
    titles = [s["title"] for s in json.loads((out / "report.json").read_text())["sections"]]
    assert any(TITLE in title for title in titles)


def test_judges_imported_without_a_record_of_their_runs_report_as_before(demo):
    with Project.open(demo) as project:
        judges = read_judges(project)
        assert judges.runs == () and not any(r.run for r in judges.raters.values())
        report = build_report(project)
    assert not any(TITLE in section.title for section in report.sections)
    assert set(report.settings["judges"]) >= {"arbiter-mini [prefs-v1]"}


def verdict(i: int, run: str | None, table: dict[str, list[int]], **decoding) -> dict:
    scores = {"INT": 1, "MOD": 1, "CON": 1, "APP": 1, "CAL": 1, "COR": 2, "COH": 1, "ANS": 2}
    scores |= {key: values[i] for key, values in table.items()}
    record = {"response_id": f"r-{i:02d}", "judge": "imported-judge", "prompt_version": "v1",
              "scores": scores, **decoding}
    return record | ({"run": run} if run is not None else {})


def test_a_further_run_is_exported_with_its_label_and_imported_again_as_itself(
        study, fake, tmp_path):
    fake.answer = answer
    assert main(["judge", str(study), "--model", MODEL, "--run", "b"]) == 0
    # The judge's own run, made after run b, is still a rater of its own.
    assert main(["judge", str(study), "--model", MODEL]) == 0
    assert len(fake.message_requests()) == 20
    out = tmp_path / "verdicts.jsonl"
    assert main(["export", str(study), "--kind", "verdicts", "--out", str(out)]) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 20 and [record.get("run") for record in records].count("b") == 10
    copy = tmp_path / "copy.physgrade"
    with Project.create(copy) as project:
        for kind, name in (("questions", "q.jsonl"), ("responses", "r.jsonl")):
            import_file(project, tmp_path / name, kind)
        import_file(project, out, "verdicts")
        assert set(read_judges(project).raters) == {f"{MODEL} [{version()}]",
                                                    f"{MODEL} [{version()}, run b]"}
        assert len(verdicts.stored(project, MODEL, version(), "b")) == 10
        assert len(verdicts.stored(project, MODEL, version())) == 10


def test_imported_verdicts_may_name_their_run_and_decoding(study, tmp_path):
    with Project.open(study) as project:
        import_file(project, write_jsonl(tmp_path / "v.jsonl", [
            verdict(i, None, RUN_A, temperature=0) for i in range(10)] + [
            verdict(i, "2", RUN_B, temperature=0.7, top_p=0.9) for i in range(10)]), "verdicts")
        judges = read_judges(project)
        assert set(judges.raters) == {"imported-judge [v1]", "imported-judge [v1, run 2]"}
        assert [(r.rater, r.temperature, r.top_p, r.source, r.requests) for r in judges.runs] == [
            ("imported-judge [v1]", 0.0, None, "import", 10),
            ("imported-judge [v1, run 2]", 0.7, 0.9, "import", 10)]
        [extra] = project.conn.execute(
            "SELECT a.extra FROM assessments a JOIN raters r ON r.id = a.rater_id "
            "WHERE r.run = '2' AND a.response_id = 'r-00'").fetchone()
        assert json.loads(extra) == {"run": "2", "temperature": 0.7, "top_p": 0.9}
        report = build_report(project)
    [section] = [s for s in report.sections if TITLE in s.title]
    rows = {row[4]: row for row in section.tables[0].rows}
    assert rows["INT"][:2] == ("imported-judge [v1]", "imported-judge [v1, run 2]")
    assert rows["INT"][6].value == pytest.approx(kappa_by_hand(RUN_A["INT"], RUN_B["INT"]),
                                                 abs=5e-4)
    settings = {row[0]: row[4:9] for row in section.tables[1].rows}
    assert settings["imported-judge [v1]"] == ("0", "not stated", "not stated", 1, "import")


def test_an_imported_decoding_out_of_range_names_the_line_and_field(study, tmp_path):
    from physgrade.formats import ImportErrors

    with Project.open(study) as project:
        with pytest.raises(ImportErrors, match=r"line 1.*temperature.*between 0 and 1, not 3"):
            import_file(project, write_jsonl(tmp_path / "v.jsonl", [
                verdict(0, None, RUN_A, temperature=3)]), "verdicts")
        assert project.conn.execute("SELECT count(*) FROM judge_runs").fetchone() == (0,)


@pytest.mark.usefixtures("app_settings")
def test_the_run_judge_dialog_plans_a_further_run_under_its_label(window, qtbot, monkeypatch):
    pytest.importorskip("pytestqt")
    from conftest import TEST_KEY
    from physgrade_ui.judge_dialog import RunJudgeDialog

    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    window.judge_action.trigger()
    dialog = window.findChild(RunJudgeDialog)
    qtbot.waitExposed(dialog)
    assert dialog.run_label.text() == "" and dialog.estimate.values["Judge"].text().endswith("]")
    assert ", run" not in dialog.estimate.values["Judge"].text()
    dialog.run_label.setText("2")
    qtbot.waitUntil(lambda: dialog.estimate.values["Judge"].text().endswith(", run 2]"),
                    timeout=2000)
    assert dialog.plan is not None and dialog.plan.run == "2"
    dialog.run_label.setText("b]")
    qtbot.waitUntil(lambda: dialog.plan is None, timeout=2000)
    assert not dialog.run_button.isEnabled()


def test_an_older_project_keeps_its_raters_and_their_labels(tmp_path):
    from conftest import older_schema

    older = older_schema(tmp_path / "schema14", 14)
    path = tmp_path / "old.physgrade"
    with Project.create(path, older) as old, old.transaction():
        old.conn.executemany("INSERT INTO raters (id, name, kind, prompt_version) VALUES "
                             "(?, ?, ?, ?)", [(3, "judge-a", "llm", "v1"), (7, "expert-1",
                                                                            "human", "")])
    with Project.open(path) as upgraded:
        assert upgraded.conn.execute("SELECT id, name, prompt_version, run FROM raters "
                                     "ORDER BY id").fetchall() == [(3, "judge-a", "v1", ""),
                                                                   (7, "expert-1", "", "")]
        assert judge_label(upgraded, "judge-a") == "judge-a [v1]"
        # A further run of the judge is a rater of its own beside it.
        assert ensure_rater(upgraded, "judge-a", "llm", "v1", "2")[0] not in (3, 7)
        assert ensure_rater(upgraded, "judge-a", "llm", "v1")[0] == 3
