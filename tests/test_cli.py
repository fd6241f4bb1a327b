"""The command line as users and scripts call it: real processes, exit codes, stderr."""

import importlib.metadata
import json
import shutil
import sqlite3
import subprocess
import sys
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

import pytest

import physgrade as physgrade_core
import physgrade.demo as demo
from cancelling import CANCELLED, cancel_when
from conftest import question, response, write_jsonl
from physgrade import cli
from physgrade.cli import main
from physgrade.project import Project, ProjectError


def physgrade(*args, check=True):
    result = subprocess.run([sys.executable, "-m", "physgrade.cli", *map(str, args)],
                            capture_output=True, text=True, timeout=120)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def test_init_import_info_export(tmp_path):
    db = tmp_path / "study.physgrade"
    physgrade("init", db)
    q = write_jsonl(tmp_path / "q.jsonl", [question(), question("q-2")])
    r = write_jsonl(tmp_path / "r.jsonl", [response(), response("r-2", model="quark-lm-3")])
    out = physgrade("import", db, q, "--kind", "questions").stdout
    assert "2 added" in out
    physgrade("import", db, r, "--kind", "responses")
    info = json.loads(physgrade("info", db, "--json").stdout)
    assert info["counts"]["questions"] == 2 and info["counts"]["responses"] == 2
    assert info["models"] == {"orbit-7b": 1, "quark-lm-3": 1}
    assert info["graded_share"] == 0.0
    text = physgrade("info", db).stdout
    assert "orbit-7b" in text and "graded by a person" in text
    physgrade("export", db, "--kind", "responses", "--out", tmp_path / "out.csv")
    assert (tmp_path / "out.csv").read_text().startswith("id,question_id,model,response")


def test_errors_exit_non_zero_with_one_line_on_stderr(tmp_path):
    db = tmp_path / "study.physgrade"
    physgrade("init", db)
    failure = physgrade("init", db, check=False)
    assert failure.returncode == 1 and "already exists" in failure.stderr
    bad = write_jsonl(tmp_path / "bad.jsonl", [question(), question("q-2", kind="essay")])
    failure = physgrade("import", db, bad, "--kind", "questions", check=False)
    assert failure.returncode == 1
    assert failure.stderr.strip().splitlines() == [
        "physgrade: import refused, nothing changed: bad.jsonl line 2, field 'kind': 'essay' "
        "is not one of problem, conceptual"]
    failure = physgrade("info", tmp_path / "nothing.physgrade", check=False)
    assert failure.returncode == 1 and "no project file" in failure.stderr
    failure = physgrade("import", db, bad, "--kind", "questions", "--map", "broken", check=False)
    assert failure.returncode == 1 and "--map takes SOURCE=TARGET" in failure.stderr


def test_verbose_lists_every_problem(tmp_path):
    db = tmp_path / "study.physgrade"
    physgrade("init", db)
    bad = write_jsonl(tmp_path / "bad.jsonl", [question(kind="essay"), question("q-2", kind="x")])
    failure = physgrade("-v", "import", db, bad, "--kind", "questions", check=False)
    lines = failure.stderr.strip().splitlines()
    assert len(lines) == 2 and "line 2" in lines[1]


def test_demo_builds_a_project_with_everything_and_reopens_it(tmp_path):
    db = tmp_path / "demo.physgrade"
    out = physgrade("demo", "--db", db, "--no-gui").stdout
    assert str(db) in out
    info = json.loads(physgrade("info", db, "--json").stdout)
    counts = info["counts"]
    assert counts["questions"] >= 30 and len(info["models"]) >= 3
    assert counts["judge_reviews"] > 0 and counts["bloom_labels"] > 0
    kinds = {r["kind"] for r in info["raters"]}
    assert kinds == {"human", "llm"}
    assert 0 < info["graded_share"] < 1
    assert set(info["topics"]) == {"Introduction", "Mechanics", "Electricity & Magnetism",
                                   "Thermodynamics", "Waves & Acoustics", "Optics",
                                   "Modern Physics"}
    again = physgrade("demo", "--db", db, "--no-gui").stdout
    assert "added" not in again  # reopening keeps the project as it is
    assert json.loads(physgrade("info", db, "--json").stdout)["counts"] == counts


def test_demo_explains_when_the_bundled_data_changed(tmp_path, monkeypatch):
    db = tmp_path / "demo.physgrade"
    demo.build_demo(db)
    changed = tmp_path / "demo-data"
    shutil.copytree(demo.demo_data_dir(), changed)
    bloom = changed / "bloom.jsonl"
    lines = bloom.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    record["cognitive"] = "Create" if record["cognitive"] != "Create" else "Remember"
    bloom.write_text("\n".join([json.dumps(record)] + lines[1:]) + "\n", encoding="utf-8")
    monkeypatch.setattr(demo, "demo_data_dir", lambda: changed)
    with pytest.raises(ProjectError, match="delete that file to start afresh"):
        demo.build_demo(db)


def test_an_interrupted_demo_says_which_imports_it_kept(tmp_path, monkeypatch, capsys):
    db = tmp_path / "demo.physgrade"
    readings = []

    def third_import(done, total, stage):  # each import of the demo starts by "reading"
        readings.append(stage == "reading")
        return sum(readings) == 3

    with monkeypatch.context() as patch:
        cancel_when(patch, third_import)
        assert main(["demo", "--db", str(db), "--no-gui"]) == 130
    with Project.open(db) as project:
        kept = {table: project.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                for table in ("questions", "responses", "assessments")}
    assert kept["questions"] > 0 and kept["responses"] > 0 and kept["assessments"] == 0
    assert capsys.readouterr().err == (
        f"{CANCELLED}{kept['questions']} questions, {kept['responses']} responses added to the "
        f"demo project at {db} (run physgrade demo again to finish it)\n")

    assert main(["demo", "--db", str(db), "--no-gui"]) == 0
    fresh = tmp_path / "fresh.physgrade"
    demo.build_demo(fresh)
    assert json.loads(physgrade("info", db, "--json").stdout)["counts"] == \
        json.loads(physgrade("info", fresh, "--json").stdout)["counts"]


def test_record_counts_count_each_table_the_demo_fills(loaded, tmp_path):
    counts = demo.record_counts(loaded)
    assert counts == {"questions": 2, "responses": 3, "assessments": 0, "judge_reviews": 0,
                      "bloom_labels": 0}
    assert list(counts) == list(demo.DEMO_TABLES)
    loaded.conn.execute("DELETE FROM responses WHERE id = 'r-3'")
    assert demo.record_counts(loaded)["responses"] == 2


def test_an_interrupted_import_changed_nothing(tmp_path, monkeypatch, capsys):
    db = tmp_path / "study.physgrade"
    Project.create(db).close()
    q = write_jsonl(tmp_path / "q.jsonl", [question(), question("q-2")])
    cancel_when(monkeypatch, lambda done, total, stage: stage == "writing")
    assert main(["import", str(db), str(q), "--kind", "questions"]) == 130
    assert capsys.readouterr().err == "physgrade: cancelled, nothing changed\n"
    with Project.open(db) as project:
        assert project.conn.execute("SELECT count(*) FROM questions").fetchone()[0] == 0


def test_an_empty_file_is_not_made_a_project_by_any_command(tmp_path):
    """A project cut to nothing by a failed copy: every command refuses it and leaves it as it is;
    only init makes a project, and not over a file."""
    db = tmp_path / "z.physgrade"
    db.touch()
    q = write_jsonl(tmp_path / "q.jsonl", [question()])
    for command in (["info", db], ["import", db, q, "--kind", "questions"], ["verify", db],
                    ["export", db, "--kind", "questions", "--out", tmp_path / "out.jsonl"],
                    ["init", db]):
        failure = physgrade(*command, check=False)
        assert failure.returncode == 1, (command, failure.stdout)
        assert "z.physgrade is empty (0 bytes)" in failure.stderr or (
            command[0] == "init" and "already exists" in failure.stderr), failure.stderr
        assert "Traceback" not in failure.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["q.jsonl", "z.physgrade"]
    assert db.stat().st_size == 0


def test_a_project_locked_by_another_program_is_named_with_what_to_do(tmp_path, monkeypatch,
                                                                       capsys):
    db = tmp_path / "study.physgrade"
    Project.create(db).close()
    q = write_jsonl(tmp_path / "q.jsonl", [question()])
    monkeypatch.setattr("physgrade.project.BUSY_TIMEOUT_MS", 50)  # not the 10 s a user waits
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        assert main(["import", str(db), str(q), "--kind", "questions"]) == 1
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert capsys.readouterr().err == (
        f"physgrade: {db} is being written by another program (another physgrade window or "
        "command, or a sync tool); try again when it has finished; the step that failed changed "
        "nothing\n")
    assert main(["import", str(db), str(q), "--kind", "questions"]) == 0  # and trying again works


def test_a_full_disk_is_said_as_such_naming_the_project(tmp_path, monkeypatch, capsys):
    """Not "cannot rollback - no transaction is active", which hid SQLite's own error."""
    db = tmp_path / "study.physgrade"
    Project.create(db).close()
    q = write_jsonl(tmp_path / "q.jsonl", [question(f"q-{n}", question="x" * 4000)
                                          for n in range(300)])
    opened = Project.open

    def nearly_full(path, *rest):
        project = opened(path, *rest)
        pages = project.conn.execute("PRAGMA page_count").fetchone()[0]
        project.conn.execute(f"PRAGMA max_page_count = {pages + 20}")  # as a disk that fills up
        return project

    monkeypatch.setattr(Project, "open", nearly_full)
    assert main(["import", str(db), str(q), "--kind", "questions"]) == 1
    assert capsys.readouterr().err == (f"physgrade: the disk holding {db} is full; free some space "
                                       "and try again; the step that failed changed nothing\n")
    monkeypatch.undo()
    with Project.open(db) as project:
        assert project.conn.execute("SELECT count(*) FROM questions").fetchone()[0] == 0


def test_the_core_never_names_the_desktop_app():
    """Not even lazily: ``gui`` and ``demo`` find the app through its entry point."""
    core = Path(physgrade_core.__file__).parent
    naming = [path for path in core.rglob("*") if path.is_file() and "__pycache__" not in
              path.parts and b"physgrade_ui" in path.read_bytes()]
    assert naming == []


def test_the_desktop_app_is_found_through_its_entry_point():
    [point] = entry_points(group=cli.APP_ENTRY_POINTS, name="gui")
    assert point.value == "physgrade_ui.app:run"
    from physgrade_ui.app import run
    assert cli.desktop_app() is run


def test_without_the_desktop_app_gui_and_demo_say_so(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda **selection: ())
    assert main(["gui"]) == 1
    assert capsys.readouterr().err == (
        "physgrade: the desktop app is not installed (no 'gui' entry point in the group "
        "'physgrade.app'); install physgrade with its desktop app, or use the other commands\n")
    assert main(["demo", "--db", str(tmp_path / "demo.physgrade")]) == 1  # built, not opened
    captured = capsys.readouterr()
    assert "demo project:" in captured.out and "desktop app is not installed" in captured.err
    broken = EntryPoint("gui", "no_such_desktop_app:run", cli.APP_ENTRY_POINTS)
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda **selection: (broken,))
    assert main(["gui"]) == 1
    assert capsys.readouterr().err == ("physgrade: the desktop app cannot start: No module "
                                       "named 'no_such_desktop_app'\n")


def test_without_a_display_gui_says_so_before_loading_the_app(monkeypatch, capsys):
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda **selection: 1 / 0)
    assert main(["gui"]) == 1
    assert "no display to open the app on (DISPLAY is not set)" in capsys.readouterr().err


def test_rubric_prints_the_levels_and_set_rewords_them_through_the_same_json(tmp_path):
    db = tmp_path / "study.physgrade"
    physgrade("init", db)
    text = physgrade("rubric", db).stdout
    assert "P-REFS rubric (10 points)" in text and "EXE  Execution (0-1 or N/A)" in text
    exported = json.loads(physgrade("rubric", db, "--json").stdout)
    cor = exported["rubrics"][0]["criteria"][5]
    assert [r["key"] for r in exported["rubrics"]] == ["prefs", "conceptual"]
    assert (cor["key"], cor["maximum"], list(cor["levels"])) == ("COR", 2, ["0", "1", "2"])
    assert list(exported["rubrics"][1]["criteria"][2]["levels"]) == ["0", "1", "N/A"]

    cor["levels"]["1"] = "One slip in a unit or a value; the method stands."
    edited = tmp_path / "levels.json"
    edited.write_text(json.dumps(exported, indent=2), encoding="utf-8")
    out = physgrade("rubric", db, "--set", edited).stdout
    assert out.splitlines() == ["P-REFS COR 1: One slip in a unit or a value; the method stands.",
                                "1 description changed"]
    assert json.loads(physgrade("rubric", db, "--json").stdout) == exported
    assert "nothing changed" in physgrade("rubric", db, "--set", edited).stdout


def test_rubric_set_refuses_a_file_that_changes_a_range_and_changes_nothing(tmp_path):
    db = tmp_path / "study.physgrade"
    physgrade("init", db)
    before = physgrade("rubric", db, "--json").stdout
    exported = json.loads(before)
    exported["rubrics"][0]["criteria"][0]["levels"]["1"] = "A new wording that must not stay."
    exported["rubrics"][0]["criteria"][7]["levels"]["3"] = "More than right."
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(exported), encoding="utf-8")
    failure = physgrade("rubric", db, "--set", bad, check=False)
    assert failure.returncode == 1
    assert failure.stderr.strip().splitlines() == [
        f"physgrade: import refused, nothing changed: {bad}, field "
        "'rubrics[0].criteria[7].levels[\"3\"]': P-REFS ANS has no level 3; its levels are 0, "
        "1, 2"]
    assert physgrade("rubric", db, "--json").stdout == before
