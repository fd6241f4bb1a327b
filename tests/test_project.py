import shutil
import sqlite3
from pathlib import Path

import pytest

import physgrade
from conftest import older_schema
from physgrade.annotation.labels import set_bloom_label
from physgrade.changes import Changes, RecordKind
from physgrade.project import Project, ProjectError, migrations
from physgrade.raters import NEW_RATER, RATER_KINDS, ensure_rater, rater_id
from physgrade.rubric import ScoreError
from physgrade.scores import clear_score, set_score


def test_new_project_is_wal_with_foreign_keys_and_busy_timeout(project):
    conn = project.conn
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000
    assert project.schema_version == len(migrations())


def test_settings_travel_with_the_project_file(project, tmp_path):
    assert project.setting("answer_tolerance") == "0.01"  # the default migration 012 keeps
    assert project.setting("facets") is None
    with project.transaction():
        project.put_setting("facets", '["language"]')
        project.put_setting("facets", '["language", "skill"]')  # a second put replaces it
    with Project.open(project.path) as again:
        assert again.setting("facets") == '["language", "skill"]'
        with again.transaction():
            again.put_setting("facets", None)
        assert again.setting("facets") is None


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
    set_score(loaded, "expert-1", "r-1", "CAL", 1)
    set_score(loaded, "expert-1", "r-1", "CAL", 0, note="3 x 4 = 16")
    clear_score(loaded, "expert-1", "r-1", "CAL")
    # A second connection sees the committed history without any save step.
    other = sqlite3.connect(loaded.path)
    history = other.execute("SELECT action, old_value, new_value, changed_by FROM score_history "
                            "ORDER BY id").fetchall()
    assert history == [("set", None, 1, "expert-1"), ("change", 1, 0, "expert-1"),
                       ("clear", 0, None, "expert-1")]
    assert other.execute("SELECT COUNT(*) FROM scores").fetchone()[0] == 0


def test_set_score_validates_against_the_question_rubric(loaded):
    with pytest.raises(ScoreError, match="outside the rubric"):
        set_score(loaded, "expert-1", "r-1", "COR", 3)
    with pytest.raises(ScoreError, match="not a criterion of the conceptual"):
        set_score(loaded, "expert-1", "r-3", "INT", 1)
    set_score(loaded, "expert-1", "r-3", "EXE", None)  # N/A is allowed for conceptual EXE
    with pytest.raises(ProjectError, match="no response"):
        set_score(loaded, "expert-1", "r-404", "INT", 1)
    assert loaded.conn.execute("SELECT COUNT(*) FROM scores").fetchone()[0] == 1


def test_judge_scores_keep_no_history(loaded):
    judge = rater_id(loaded, "arbiter", "llm", "prefs-v1")
    loaded.conn.execute("INSERT INTO scores VALUES (?, 'r-1', 'prefs', 'INT', 1, NULL, 'now')",
                        (judge,))
    assert loaded.conn.execute("SELECT COUNT(*) FROM score_history").fetchone()[0] == 0


def test_a_rater_name_keeps_its_kind(loaded):
    rater_id(loaded, "expert-1", "human")
    with pytest.raises(ProjectError, match="already a rater of kind 'human'"):
        rater_id(loaded, "expert-1", "llm")
    with pytest.raises(ProjectError, match="rater kind must be one of human, llm, rules"):
        rater_id(loaded, "expert-3", "robot")


def test_making_a_rater_is_a_change_and_finding_one_is_not(loaded):
    made, changes = ensure_rater(loaded, "arbiter", "llm", "v1")
    assert changes == NEW_RATER == Changes.of(RecordKind.RATERS, responses=[], questions=[])
    assert ensure_rater(loaded, "arbiter", "llm", "v1") == (made, Changes())
    assert ensure_rater(loaded, "arbiter", "llm", "v2")[1] == NEW_RATER


def test_project_keeps_only_connection_migrations_and_transactions():
    assert not [name for name in vars(Project) if name.startswith(("set_", "clear_"))]
    assert not hasattr(Project, "rater_id") and not hasattr(Project, "response_rubric")


def test_one_module_writes_scores_and_one_names_the_rater_kinds():
    """Score rows are inserted by physgrade.scores (the importer and a pack's merge bring many
    in with SQL of their own); physgrade.raters alone says who is a person."""
    core = Path(physgrade.__file__).parent
    assert RATER_KINDS == ("human", "llm", "rules")
    for path in core.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if path.parent != core or path.name != "scores.py":
            assert "INSERT INTO scores" not in text, path
        if path.parent != core or path.name != "raters.py":
            assert "'human'" not in text and '"human"' not in text, path


def test_bloom_labels_are_checked_and_stored(loaded):
    assert set_bloom_label(loaded, "q-1", "expert-2", "Apply", "Procedural") == \
        Changes.of(RecordKind.BLOOM, RecordKind.RATERS, questions=["q-1"])
    assert set_bloom_label(loaded, "q-1", "expert-2", "Analyze", "Procedural") == \
        Changes.of(RecordKind.BLOOM, questions=["q-1"])
    rows = loaded.conn.execute("SELECT cognitive, knowledge FROM bloom_labels").fetchall()
    assert rows == [("Analyze", "Procedural")]
    with pytest.raises(ScoreError, match="Bloom cognitive"):
        set_bloom_label(loaded, "q-1", "expert-2", "Memorise", None)


def test_transaction_rolls_back_on_error(loaded):
    with pytest.raises(RuntimeError):
        with loaded.transaction():
            loaded.conn.execute("DELETE FROM responses")
            raise RuntimeError("boom")
    assert loaded.conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 3


def test_opening_a_project_again_keeps_the_locks_of_a_connection_already_open(tmp_path):
    """Closing any handle on a file drops the process's POSIX locks on it: if opening a project
    did that, another program closing its connection would take the write-ahead log away from
    under the connection still open here, and what it wrote next would be lost."""
    import subprocess
    import sys

    path = tmp_path / "study.physgrade"
    first = Project.create(path)
    other = subprocess.Popen(
        [sys.executable, "-c", "import sqlite3, sys\n"
         "c = sqlite3.connect(sys.argv[1])\n"
         "c.execute('SELECT count(*) FROM questions').fetchall()\n"
         "print('open', flush=True)\n"
         "sys.stdin.readline()\n"
         "c.close()\n", str(path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline().strip() == "open"
        Project.open(path).close()  # a second connection of this process, opened and closed
        other.stdin.write("\n")
        other.stdin.flush()
        assert other.wait(10) == 0
    finally:
        other.kill()
    first.conn.execute("INSERT INTO raters (name, kind, prompt_version) VALUES ('x', 'human', '')")
    fresh = sqlite3.connect(path)
    try:
        assert fresh.execute("SELECT name FROM raters").fetchall() == [("x",)]
    finally:
        fresh.close()
        first.close()


def test_a_project_of_schema_7_keeps_its_grades_and_their_history_when_teams_arrive(tmp_path):
    """Version 8 recreates the history triggers (they keep quiet during a merge): a project made
    before keeps its history, and a change after the upgrade is recorded as before."""
    from conftest import insert_questions, question, response, write_jsonl
    from physgrade.importer import import_file

    older = older_schema(tmp_path / "schema7", 7)
    path = tmp_path / "old.physgrade"
    with Project.create(path, older) as old:
        insert_questions(old, [question()])
        import_file(old, write_jsonl(tmp_path / "r.jsonl", [response()]), "responses")
        set_score(old, "tess", "r-1", "INT", 1)
    with Project.open(path) as upgraded:
        conn = upgraded.conn
        assert upgraded.schema_version == len(migrations()) >= 8
        assert len(conn.execute("SELECT id FROM project_identity").fetchall()) == 1
        set_score(upgraded, "tess", "r-1", "INT", 0)
        clear_score(upgraded, "tess", "r-1", "INT")
        history = conn.execute("SELECT action, old_value, new_value, source FROM score_history "
                               "ORDER BY id").fetchall()
        assert history == [("set", None, 1, None), ("change", 1, 0, None),
                           ("clear", 0, None, None)]


def test_a_project_of_schema_10_has_its_merged_conflicts_marked_as_proposals(tmp_path):
    """Version 11 marks as proposed the rows an older merge brought for a value the project did
    not take, where the rows after them (or the score now) tell; the history then replays to
    the scores. Written here as that merge wrote them: rows with a source, scores quietly."""
    from conftest import (
        insert_questions,
        people_scores,
        question,
        replayed_history,
        response,
        write_jsonl,
    )
    from physgrade.importer import import_file

    older = older_schema(tmp_path / "schema10", 10)
    path = tmp_path / "old.physgrade"
    pack, other_pack = "merged from old-tess.physgrade (pack 1f3c2a9e)", \
        "merged from old-tess-2.physgrade (pack 77aa0b13)"
    with Project.create(path, older) as old:
        insert_questions(old, [question()])
        import_file(old, write_jsonl(tmp_path / "r.jsonl", [response()]), "responses")
        conn = old.conn

        def merged(criterion: str, action: str, before: int | None, after: int | None,
                   source: str = pack, quietly_now: int | None = -1) -> None:
            conn.execute("INSERT INTO score_history (rater_id, response_id, rubric, criterion, "
                         "action, old_value, new_value, changed_by, changed_at, source) "
                         "SELECT id, 'r-1', 'prefs', ?, ?, ?, ?, name, "
                         "'2025-01-01T00:00:00.000Z', ? FROM raters WHERE name = 'tess'",
                         (criterion, action, before, after, source))
            if quietly_now != -1:  # the merge took the pack's value
                conn.execute("INSERT INTO score_history_quiet VALUES ('the merge of version 10')")
                key = "WHERE response_id = 'r-1' AND criterion = ?"
                if quietly_now is None:
                    conn.execute(f"DELETE FROM scores {key}", (criterion,))
                else:
                    conn.execute(f"UPDATE scores SET value = ? {key}", (quietly_now, criterion))
                conn.execute("DELETE FROM score_history_quiet")

        for criterion in ("INT", "MOD", "CON", "APP", "CAL"):
            set_score(old, "tess", "r-1", criterion, 1)
        set_score(old, "tess", "r-1", "INT", 0)      # a conflict, open: the project holds 0
        merged("INT", "change", 1, 2)
        merged("MOD", "change", 1, 0, quietly_now=0)  # applied, then changed here
        set_score(old, "tess", "r-1", "MOD", 1)
        set_score(old, "tess", "r-1", "CON", 0)      # a conflict, then changed here
        merged("CON", "change", 1, 2)
        set_score(old, "tess", "r-1", "CON", 1)
        merged("APP", "change", 1, 0)                # followed by another pack's: cannot tell
        merged("APP", "change", 1, 2, other_pack, quietly_now=2)
        merged("CAL", "clear", 1, None, quietly_now=None)  # applied: the score is gone
    with Project.open(path) as upgraded:
        assert upgraded.schema_version == len(migrations()) >= 11
        marked = upgraded.conn.execute(
            "SELECT criterion, new_value, proposed FROM score_history WHERE source LIKE "
            "'merged from %' ORDER BY id").fetchall()
        assert marked == [("INT", 2, 1), ("MOD", 0, 0), ("CON", 2, 1), ("APP", 0, 0),
                          ("APP", 2, 0), ("CAL", None, 0)]
        assert replayed_history(upgraded) == people_scores(upgraded)
        set_score(upgraded, "tess", "r-1", "INT", 1)  # the triggers write applied rows
        assert upgraded.conn.execute("SELECT proposed FROM score_history ORDER BY id DESC "
                                     "LIMIT 1").fetchone() == (0,)


# -- files that are not projects, and failures of the disk -----------------------------------


def test_an_empty_file_is_refused_and_stays_empty(tmp_path):
    """A project cut to nothing by a failed copy is not replaced by a new, empty project."""
    path = tmp_path / "study.physgrade"
    path.touch()
    with pytest.raises(ProjectError, match=r"study.physgrade is empty \(0 bytes\), so it is not a "
                                           r"physgrade project.*physgrade init"):
        Project.open(path)
    assert path.stat().st_size == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["study.physgrade"]  # no -wal, -shm


def test_an_sqlite_file_without_tables_is_refused_not_given_a_schema(tmp_path):
    path = tmp_path / "empty.sqlite"
    plain = sqlite3.connect(path)
    plain.execute("PRAGMA user_version = 3")  # written into the header: a file of 1 page
    plain.close()
    with pytest.raises(ProjectError, match="an SQLite file but not a physgrade project"):
        Project.open(path)
    plain = sqlite3.connect(path)
    assert plain.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
    plain.close()


def fill_up(project: Project, spare_pages: int = 20) -> None:
    """Let the project grow by a few pages only: past them SQLite fails as on a full disk."""
    pages = project.conn.execute("PRAGMA page_count").fetchone()[0]
    project.conn.execute(f"PRAGMA max_page_count = {pages + spare_pages}")


def test_a_full_disk_is_the_error_a_transaction_raises_and_nothing_changes(loaded):
    """SQLite rolls back by itself on a full disk; a second ROLLBACK used to fail and hide the
    first error behind "cannot rollback - no transaction is active"."""
    fill_up(loaded)
    before = loaded.conn.execute("SELECT count(*) FROM questions").fetchone()[0]
    with pytest.raises(sqlite3.OperationalError, match="database or disk is full") as raised:
        with loaded.transaction():
            for number in range(2000):
                loaded.conn.execute("INSERT INTO questions (id, question, kind) VALUES (?, ?, ?)",
                                    (f"big-{number}", "x" * 4000, "problem"))
    assert raised.value.sqlite_errorname == "SQLITE_FULL"
    assert not loaded.conn.in_transaction
    assert loaded.conn.execute("SELECT count(*) FROM questions").fetchone()[0] == before
    with loaded.transaction():  # the connection goes on
        loaded.conn.execute("DELETE FROM questions WHERE id = 'nothing'")


def test_an_error_of_the_block_is_raised_and_rolled_back(loaded):
    with pytest.raises(RuntimeError, match="the block failed"):
        with loaded.transaction():
            loaded.conn.execute("DELETE FROM responses")
            raise RuntimeError("the block failed")
    assert not loaded.conn.in_transaction
    assert loaded.conn.execute("SELECT count(*) FROM responses").fetchone()[0] == 3


def test_a_project_of_schema_12_keeps_its_batches_when_answer_checks_may_be_batched(tmp_path):
    """Version 13 rebuilds judge_batches to take answer checks: a batch submitted before keeps
    its row and its items, which still point at it, and an answer-check batch goes in."""
    older = older_schema(tmp_path / "schema12", 12)
    path = tmp_path / "old.physgrade"
    row = ("msgbatch_old", "verdicts", "claude-haiku-4-5", "v1", 2, "in_progress",
           '{"processing": 2}', "2026-01-01T00:00:00Z", None, None)
    with Project.create(path, older) as old:
        with old.transaction():
            old.conn.execute("INSERT INTO judge_batches VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
            old.conn.executemany("INSERT INTO judge_batch_items VALUES (?, ?, ?)",
                                 [("msgbatch_old", "i0", "r-1"), ("msgbatch_old", "i1", "r-2")])
        with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
            with old.transaction():
                old.conn.execute("INSERT INTO judge_batches (id, purpose, model, prompt_version, "
                                 "requests, status, submitted_at) VALUES ('b', 'answers', 'm', "
                                 "'v', 1, 'ended', 'now')")
    with Project.open(path) as upgraded:
        conn = upgraded.conn
        assert upgraded.schema_version == len(migrations()) >= 13
        assert conn.execute("SELECT * FROM judge_batches").fetchall() == [row]
        assert conn.execute("SELECT custom_id, item_id FROM judge_batch_items WHERE batch_id = "
                            "'msgbatch_old' ORDER BY custom_id").fetchall() == [("i0", "r-1"),
                                                                                ("i1", "r-2")]
        with upgraded.transaction():
            conn.execute("INSERT INTO judge_batches (id, purpose, model, prompt_version, "
                         "requests, status, submitted_at) VALUES ('msgbatch_answers', 'answers', "
                         "'m', 'v', 1, 'in_progress', 'now')")
            conn.execute("INSERT INTO judge_batch_items VALUES ('msgbatch_answers', 'i0', 'r-1')")
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        assert "REFERENCES judge_batches" in conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'judge_batch_items'").fetchone()[0]
        assert conn.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = "
                            "'judge_batch_items' AND sql IS NOT NULL").fetchall() == [
            ("judge_batch_items_item",)]
        with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
            with upgraded.transaction():
                conn.execute("INSERT INTO judge_batch_items VALUES ('nowhere', 'i0', 'r-1')")
