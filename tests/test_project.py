import shutil
import sqlite3
from pathlib import Path

import pytest

from physgrade.project import Project, ProjectError, migrations
from physgrade.rubric import ScoreError


def test_new_project_is_wal_with_foreign_keys_and_busy_timeout(project):
    conn = project.conn
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000
    assert project.schema_version == len(migrations())


def test_create_refuses_to_overwrite_and_open_refuses_strangers(tmp_path):
    Project.create(tmp_path / "a.physgrade").close()
    with pytest.raises(ProjectError, match="already exists"):
        Project.create(tmp_path / "a.physgrade")
    with pytest.raises(ProjectError, match="no project file"):
        Project.open(tmp_path / "missing.physgrade")
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ProjectError, match="not an SQLite file"):
        Project.open(tmp_path / "notes.txt")
    other = sqlite3.connect(tmp_path / "other.sqlite")
    other.execute("CREATE TABLE t (x)")
    other.commit()
    other.close()
    with pytest.raises(ProjectError, match="not a physgrade project"):
        Project.open(tmp_path / "other.sqlite")


def _schema_dir(tmp_path: Path, extra_sql: str | None) -> Path:
    folder = tmp_path / "schema"
    folder.mkdir(exist_ok=True)
    for step in migrations():
        shutil.copy(step.path, folder)
    if extra_sql is not None:
        (folder / f"{len(migrations()) + 1:03d}_next.sql").write_text(extra_sql)
    return folder


def test_an_older_project_is_upgraded_in_place_keeping_its_data(tmp_path, loaded):
    path = loaded.path
    loaded.close()
    folder = _schema_dir(tmp_path, "ALTER TABLE questions ADD COLUMN difficulty TEXT;\n"
                                   "UPDATE questions SET difficulty = 'easy';")
    with Project.open(path, folder) as upgraded:
        assert upgraded.schema_version == len(migrations()) + 1
        rows = upgraded.conn.execute("SELECT id, difficulty FROM questions ORDER BY id").fetchall()
        assert rows == [("q-1", "easy"), ("q-mc", "easy")]
        assert upgraded.conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 3


def test_a_failing_upgrade_changes_nothing(tmp_path, loaded):
    path = loaded.path
    loaded.close()
    folder = _schema_dir(tmp_path, "ALTER TABLE questions ADD COLUMN difficulty TEXT;\n"
                                   "THIS IS NOT SQL;")
    with pytest.raises(ProjectError, match="nothing changed"):
        Project.open(path, folder)
    with Project.open(path) as reopened:
        assert reopened.schema_version == len(migrations())
        columns = [r[1] for r in reopened.conn.execute("PRAGMA table_info(questions)")]
        assert "difficulty" not in columns
        assert reopened.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_project_from_a_newer_version_is_refused(tmp_path, loaded):
    loaded.conn.execute("PRAGMA user_version = 99")
    path = loaded.path
    loaded.close()
    with pytest.raises(ProjectError, match="newer physgrade"):
        Project.open(path)


def test_set_score_commits_at_once_and_keeps_history(loaded):
    loaded.set_score("expert-1", "r-1", "CAL", 1)
    loaded.set_score("expert-1", "r-1", "CAL", 0, note="3 x 4 = 16")
    loaded.clear_score("expert-1", "r-1", "CAL")
    # A second connection sees the committed history without any save step.
    other = sqlite3.connect(loaded.path)
    history = other.execute("SELECT action, old_value, new_value, changed_by FROM score_history "
                            "ORDER BY id").fetchall()
    assert history == [("set", None, 1, "expert-1"), ("change", 1, 0, "expert-1"),
                       ("clear", 0, None, "expert-1")]
    assert other.execute("SELECT COUNT(*) FROM scores").fetchone()[0] == 0


def test_set_score_validates_against_the_question_rubric(loaded):
    with pytest.raises(ScoreError, match="outside the rubric"):
        loaded.set_score("expert-1", "r-1", "COR", 3)
    with pytest.raises(ScoreError, match="not a criterion of the conceptual"):
        loaded.set_score("expert-1", "r-3", "INT", 1)
    loaded.set_score("expert-1", "r-3", "EXE", None)  # N/A is allowed for conceptual EXE
    with pytest.raises(ProjectError, match="no response"):
        loaded.set_score("expert-1", "r-404", "INT", 1)
    assert loaded.conn.execute("SELECT COUNT(*) FROM scores").fetchone()[0] == 1


def test_judge_scores_keep_no_history(loaded):
    judge = loaded.rater_id("arbiter", "llm", "prefs-v1")
    loaded.conn.execute("INSERT INTO scores VALUES (?, 'r-1', 'prefs', 'INT', 1, NULL, 'now')",
                        (judge,))
    assert loaded.conn.execute("SELECT COUNT(*) FROM score_history").fetchone()[0] == 0


def test_a_rater_name_keeps_its_kind(loaded):
    loaded.rater_id("expert-1", "human")
    with pytest.raises(ProjectError, match="already a rater of kind 'human'"):
        loaded.rater_id("expert-1", "llm")


def test_bloom_labels_are_checked_and_stored(loaded):
    loaded.set_bloom_label("q-1", "expert-2", "Apply", "Procedural")
    loaded.set_bloom_label("q-1", "expert-2", "Analyze", "Procedural")
    rows = loaded.conn.execute("SELECT cognitive, knowledge FROM bloom_labels").fetchall()
    assert rows == [("Analyze", "Procedural")]
    with pytest.raises(ScoreError, match="Bloom cognitive"):
        loaded.set_bloom_label("q-1", "expert-2", "Memorise", None)


def test_transaction_rolls_back_on_error(loaded):
    with pytest.raises(RuntimeError):
        with loaded.transaction():
            loaded.conn.execute("DELETE FROM responses")
            raise RuntimeError("boom")
    assert loaded.conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 3
