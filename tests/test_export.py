import errno
import re

import pytest

from conftest import PREFS_FULL, write_jsonl
from physgrade.exporter import export_kind
from physgrade.formats import FILE_KINDS, write_records
from physgrade.importer import import_file
from physgrade.project import Project, ProjectError
from physgrade.scores import set_score


@pytest.fixture
def full(loaded, tmp_path):
    """The loaded project plus work of every kind."""
    import_file(loaded, write_jsonl(tmp_path / "v.jsonl", [
        {"response_id": "r-1", "judge": "arbiter", "prompt_version": "prefs-v1",
         "scores": dict(PREFS_FULL, CAL=0), "rationale": {"CAL": "2 x 5 = 12"}, "cost": 0.01},
        {"response_id": "r-3", "judge": "arbiter", "prompt_version": "prefs-v1",
         "scores": {"SET": 1, "CON": 1, "EXE": None, "COH": 1, "ANS": 1}},
        {"response_id": "r-2", "judge": "old-judge", "answer": 1, "reasoning": 1,
         "calculations": 2, "explanation": "no working shown"}]), "verdicts")
    import_file(loaded, write_jsonl(tmp_path / "g.jsonl", [
        {"response_id": "r-1", "grader": "expert-1", "scores": PREFS_FULL, "notes": "clean",
         "graded_at": "2026-10-03T14:21:00Z"}]), "grades")
    import_file(loaded, write_jsonl(tmp_path / "jr.jsonl", [
        {"response_id": "r-1", "judge": "arbiter", "reviewer": "expert-1",
         "criteria": {"INT": 2, "CAL": 0}, "verdict": "strict"}]), "judge_reviews")
    import_file(loaded, write_jsonl(tmp_path / "b.jsonl", [
        {"question_id": "q-1", "annotator": "tagger", "annotator_kind": "model",
         "cognitive": "Apply", "knowledge": "Procedural"}]), "bloom")
    set_score(loaded, "expert-2", "r-3", "EXE", None, note="nothing to compute")
    return loaded


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_export_then_import_into_an_empty_project_reproduces_the_content(full, tmp_path, suffix):
    first = tmp_path / "first"
    first.mkdir()
    for kind in FILE_KINDS:
        export_kind(full, kind, first / f"{kind}{suffix}")
    with Project.create(tmp_path / f"copy{suffix}.physgrade") as copy:
        for kind in FILE_KINDS:
            import_file(copy, first / f"{kind}{suffix}", kind)
        second = tmp_path / "second"
        second.mkdir()
        for kind in FILE_KINDS:
            export_kind(copy, kind, second / f"{kind}{suffix}")
    for kind in FILE_KINDS:
        assert (second / f"{kind}{suffix}").read_text() == (first / f"{kind}{suffix}").read_text()
    assert "cost" in (first / f"verdicts{suffix}").read_text()  # unnamed fields survive


def test_exported_grades_carry_notes_and_time(full, tmp_path):
    out = tmp_path / "grades.jsonl"
    assert export_kind(full, "grades", out) == 2
    text = out.read_text()
    assert '"graded_at": "2026-10-03T14:21:00Z"' in text
    assert '"EXE": null' in text and "nothing to compute" in text


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_an_export_replaces_a_file_whole_or_leaves_it_as_it_was(tmp_path, suffix):
    out = tmp_path / f"grades{suffix}"
    out.write_text("older export\n")

    def failing():
        yield {"response_id": "r-1", "grader": "expert-1"}
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(ProjectError, match=rf"the disk holding {re.escape(str(out))} is full; "
                                           "free some space and try again; nothing written"):
        write_records(failing(), out, "grades")
    assert out.read_text() == "older export\n"
    assert [p.name for p in tmp_path.iterdir()] == [out.name]  # no partial file left behind
    assert write_records([{"response_id": "r-1", "grader": "expert-1"}], out, "grades") == 1
    assert "expert-1" in out.read_text() and "older" not in out.read_text()
