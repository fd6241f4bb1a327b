"""A kill -9 in the middle of an import leaves the project exactly as it was, and intact."""

import os
import signal
import subprocess
import sys
import time

from corpus import write_corpus
from physgrade.importer import import_file
from physgrade.project import Project


def test_sigkill_half_way_through_an_import_leaves_the_project_unchanged(tmp_path):
    questions, responses = write_corpus(tmp_path / "data", n_questions=500, n_responses=12000)
    db = tmp_path / "study.physgrade"
    with Project.create(db) as project:
        import_file(project, questions, "questions")
    wal = db.with_name(db.name + "-wal")
    start_size = wal.stat().st_size if wal.exists() else 0
    process = subprocess.Popen([sys.executable, "-m", "physgrade.cli", "import", str(db),
                                str(responses), "--kind", "responses"])
    deadline = time.monotonic() + 120
    # Wait until the import is writing rows (the write-ahead log grows), then kill it.
    while time.monotonic() < deadline and process.poll() is None:
        if wal.exists() and wal.stat().st_size > start_size + 4_000_000:
            break
        time.sleep(0.005)
    assert process.poll() is None, "the import finished before it could be killed"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert wal.stat().st_size > start_size + 4_000_000  # it really was half-way

    with Project.open(db) as project:
        conn = project.conn
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 0
        assert conn.execute("SELECT kind FROM imports").fetchall() == [("questions",)]
        assert conn.execute("SELECT COUNT(*) FROM questions").fetchone()[0] == 500
        # Nothing is left locked: the same import now runs to the end.
        assert import_file(project, responses, "responses").added == 12000
