"""Failures of files in words a user can act on (physgrade.failures), met for real: a second
connection holding the lock, a connection that may only read, a file that is not a database, a
project that may not grow, the operating system's full device."""

import errno
import sqlite3
import sys
from pathlib import Path

import pytest

from physgrade.failures import explain, is_locked


def raised_by(action) -> BaseException:
    with pytest.raises((sqlite3.Error, OSError)) as raised:
        action()
    return raised.value


def test_a_lock_held_by_another_connection_names_the_file_and_says_to_try_again(tmp_path):
    path = tmp_path / "study.physgrade"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN IMMEDIATE")
    other = sqlite3.connect(path, timeout=0, isolation_level=None)
    error = raised_by(lambda: other.execute("INSERT INTO t VALUES (1)"))
    assert is_locked(error)
    assert explain(error, path) == (f"{path} is being written by another program (another "
                                    "physgrade window or command, or a sync tool); try again "
                                    "when it has finished")
    holder.execute("ROLLBACK")


def test_a_file_that_may_only_be_read_says_what_to_make_writable(tmp_path):
    path = tmp_path / "study.physgrade"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.execute("PRAGMA query_only = ON")  # the error a read-only file gives, also to root
    error = raised_by(lambda: conn.execute("INSERT INTO t VALUES (1)"))
    assert not is_locked(error)
    assert explain(error, path).startswith(f"{path} cannot be written: the file or its folder "
                                           "is read-only")


def test_a_full_project_and_a_full_device_both_say_the_disk_is_full(tmp_path):
    path = tmp_path / "study.physgrade"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.execute("PRAGMA max_page_count = 3")
    error = raised_by(lambda: conn.executemany("INSERT INTO t VALUES (?)",
                                               [("x" * 4000,)] * 10))
    assert explain(error, path) == f"the disk holding {path} is full; free some space and try again"
    if Path("/dev/full").exists():
        def write() -> None:
            with open("/dev/full", "w") as device:
                device.write("x")
        full = raised_by(write)
        assert isinstance(full, OSError) and full.errno == errno.ENOSPC
        assert explain(full, "report.csv") == ("the disk holding report.csv is full; free some "
                                               "space and try again")
        assert explain(full) == ("the disk holding the file being written is full; free some "
                                 "space and try again")


def test_a_file_that_is_not_a_database(tmp_path):
    path = tmp_path / "notes.physgrade"
    path.write_text("hello, this is text and not SQLite, long enough to have a header" * 10)
    conn = sqlite3.connect(path)
    error = raised_by(lambda: conn.execute("SELECT * FROM sqlite_master"))
    assert explain(error, path) == f"{path} is not a physgrade project (not an SQLite file)"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_operating_system_errors_name_the_file_they_carry(tmp_path):
    missing = raised_by(lambda: (tmp_path / "gone.jsonl").read_text())
    assert explain(missing) == f"{tmp_path / 'gone.jsonl'} does not exist"
    denied = OSError(errno.EACCES, "Permission denied", "/srv/study.physgrade")
    assert explain(denied) == ("permission denied for /srv/study.physgrade; check who may read "
                               "and write it")


def test_other_errors_keep_their_own_words():
    assert explain(ValueError("the size must be positive")) == "the size must be positive"
    odd = sqlite3.OperationalError("near 'x': syntax error")  # none of SQLite's codes attached
    assert explain(odd, "a.physgrade") == "a.physgrade: near 'x': syntax error"
