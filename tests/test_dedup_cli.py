"""``physgrade embed`` and ``physgrade dedup`` as users and scripts call them: real project
files, the embedded model from the user's cache, the real ``anthropic`` client against the
loopback Messages API, and one real process whose stdout must be nothing but JSON."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest

from cancelling import CANCELLED, cancel_when
from conftest import write_jsonl
from physgrade.cli import main
from physgrade.dedup import pairs, vectors
from physgrade.dedup.engine import default_providers
from physgrade.dedup.models import DEFAULT_MODEL, resolve
from physgrade.project import Project

MODEL = "claude-haiku-4-5"
PROVIDER = default_providers()[0]
PLANTED = {("q-0005", "q-0101"), ("q-0005", "q-0102"), ("q-0005", "q-0103"),
           ("q-0017", "q-0104"), ("q-0017", "q-0105"), ("q-0022", "q-0106")}
PAIR_KEYS = {"a", "b", "jaccard", "cosine", "figure_distance", "same_image", "stages", "label"}


@pytest.fixture(scope="module", autouse=True)
def model_ready() -> None:
    """The embedded model and its int8 copy in the user's cache (made at most once per
    machine), so that no test hears of the first-time steps."""
    resolve()
    resolve(quantize=True)


def counts(path) -> dict[str, int]:
    with Project.open(path) as project:
        return {table: project.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                for table in ("embeddings", "duplicate_audits", "duplicate_pairs")}


def check_shape(found: dict) -> None:
    """The documented ``--json`` object, key for key and type for type."""
    assert set(found) == {"provider", "n_a", "n_b", "pairs"}
    assert isinstance(found["provider"], str) and isinstance(found["pairs"], list)
    assert type(found["n_a"]) is int and type(found["n_b"]) is int
    for pair in found["pairs"]:
        assert set(pair) == PAIR_KEYS
        assert isinstance(pair["a"], str) and isinstance(pair["b"], str)
        assert type(pair["jaccard"]) is float and 0 <= pair["jaccard"] <= 1
        assert type(pair["cosine"]) is float and -1 <= pair["cosine"] <= 1.0001
        assert pair["stages"] in ([1], [2], [1, 2])  # the set has no figures: no stage 4
        assert pair["figure_distance"] is None or type(pair["figure_distance"]) is int
        assert type(pair["same_image"]) is bool
        assert pair["label"] is None or pair["label"] in ("close_duplicate", "same_topic")


@pytest.fixture
def other_set(demo, tmp_path):
    """A questions file of five: a copy of a demo question, a paraphrase of one, three others."""
    with Project.open(demo) as project:
        q22 = project.conn.execute("SELECT question FROM questions WHERE id = 'q-0022'")
        q22 = q22.fetchone()[0]
    return write_jsonl(tmp_path / "bench.jsonl", [
        {"id": "bench-1", "question": q22},
        {"id": "bench-2", "question": "Which gas law relates pressure and volume at fixed "
                                      "temperature?", "options": ["Boyle", "Charles", "Gay-Lussac"]},
        {"id": "bench-3", "question": "Describe the photoelectric effect in one sentence."},
        {"id": "bench-4", "question": "What is the half-life of carbon-14?"},
        {"id": "bench-5", "question": "Sketch the electric field of a dipole."}])


def test_embed_prints_the_provider_and_counts(demo, capsys):
    assert main(["embed", str(demo)]) == 0
    assert capsys.readouterr().out == (f"42 questions embedded with {DEFAULT_MODEL} on {PROVIDER} "
                                       "(42 new, 0 already stored)\n")
    assert counts(demo)["embeddings"] == 42
    assert main(["embed", str(demo)]) == 0
    assert capsys.readouterr().out.endswith("(0 new, 42 already stored)\n")
    assert counts(demo) == {"embeddings": 42, "duplicate_audits": 0, "duplicate_pairs": 0}


def test_dedup_json_is_the_only_thing_on_stdout(demo):
    result = subprocess.run([sys.executable, "-m", "physgrade.cli", "dedup", str(demo), "--json"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith("}\n") and result.stdout.count("\n") == 1
    found = json.loads(result.stdout)
    check_shape(found)
    assert (found["provider"], found["n_a"], found["n_b"]) == (PROVIDER, 42, 42)
    assert PLANTED <= {(p["a"], p["b"]) for p in found["pairs"]}
    assert all(p["label"] is None for p in found["pairs"])
    cosines = [p["cosine"] for p in found["pairs"]]
    assert cosines == sorted(cosines, reverse=True)
    assert (f"42 questions against themselves with {DEFAULT_MODEL} on {PROVIDER}: "
            f"{len(found['pairs'])} candidate pairs") in result.stderr
    assert "items flagged:" in result.stderr
    assert counts(demo)["duplicate_pairs"] == len(found["pairs"])


def test_dedup_without_json_reports_on_stdout(demo, capsys):
    assert main(["dedup", str(demo)]) == 0
    captured = capsys.readouterr()
    assert "42 questions against themselves" in captured.out and "candidate pairs" in captured.out
    assert "{" not in captured.out and captured.err == ""


def test_dedup_against_a_questions_file(demo, other_set, capsys):
    assert main(["dedup", str(demo), "--against", str(other_set), "--json"]) == 0
    captured = capsys.readouterr()
    found = json.loads(captured.out)
    check_shape(found)
    assert (found["n_a"], found["n_b"]) == (42, len(other_set.read_text().splitlines())) == (42, 5)
    assert f"42 questions against 5 in {other_set}" in captured.err
    by_pair = {(p["a"], p["b"]): p for p in found["pairs"]}
    assert all(b.startswith("bench-") and a.startswith("q-") for a, b in by_pair)
    copy = by_pair["q-0022", "bench-1"]
    assert copy["jaccard"] == 1.0 and copy["cosine"] == pytest.approx(1.0, abs=1e-4)
    assert copy["stages"] == [1, 2]
    with Project.open(demo) as project:
        source = str(other_set.resolve())
        assert pairs.sources(project) == [source]
        stored = {(p.a, p.b): p for p in pairs.stored_pairs(project, source)}
        assert set(stored) == set(by_pair)
        assert stored["q-0022", "bench-1"].b_text == stored["q-0022", "bench-1"].a_text
        last = pairs.last_audit(project, source)
        assert (last["n_a"], last["n_b"], last["pairs"]) == (42, 5, len(by_pair))
    assert counts(demo)["embeddings"] == 42 + 4  # bench-1 is a demo text: embedded once


def test_dedup_out_writes_the_pairs_as_csv(demo, tmp_path, capsys):
    out = tmp_path / "pairs.csv"
    assert main(["dedup", str(demo), "--out", str(out), "--jaccard", "0.5", "--cosine", "0.85"]) == 0
    assert f"pairs written to {out}" in capsys.readouterr().out
    with out.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    with Project.open(demo) as project:
        stored = pairs.stored_pairs(project)
        last = pairs.last_audit(project, "")
    assert (last["jaccard"], last["cosine"]) == (0.5, 0.85)
    assert [(r["a"], r["b"]) for r in rows] == [(p.a, p.b) for p in stored] and rows
    assert all(float(r["jaccard"]) >= 0.5 or float(r["cosine"]) >= 0.85 for r in rows)
    assert {r["source"] for r in rows} == {"(within)"} and all(r["cluster"] for r in rows)
    assert out.read_text(encoding="utf-8").splitlines()[0] == ",".join(pairs.CSV_FIELDS)


def test_dedup_judge_fills_the_labels(demo, fake, capsys):
    fake.answer = lambda body: ({"label": "same_topic", "rationale": "Different harmonic."}
                                if "sitar" in body["messages"][0]["content"] else
                                {"label": "close_duplicate", "rationale": "Same problem."})
    assert main(["dedup", str(demo), "--json", "--judge", MODEL, "--concurrency", "3"]) == 0
    captured = capsys.readouterr()
    found = json.loads(captured.out)
    check_shape(found)
    labels = {(p["a"], p["b"]): p["label"] for p in found["pairs"]}
    assert labels["q-0022", "q-0106"] == "same_topic"
    assert {label for key, label in labels.items() if key != ("q-0022", "q-0106")} == \
        {"close_duplicate"}
    assert len(fake.message_requests()) == len(labels)
    assert "judging pairs with" in captured.err
    assert f"{len(labels)} done, 0 already cached, 0 failed" in captured.err
    assert all(r.body["tool_choice"]["name"] == "record_duplicate"
               for r in fake.message_requests())

    # Asked again: nothing is sent, and the labels come from the project.
    assert main(["dedup", str(demo), "--json", "--judge", MODEL]) == 0
    again = json.loads(capsys.readouterr().out)
    assert {(p["a"], p["b"]): p["label"] for p in again["pairs"]} == labels
    assert len(fake.message_requests()) == len(labels)
    with Project.open(demo) as project:
        assert project.conn.execute("SELECT count(*) FROM duplicate_pairs WHERE label_model = ? "
                                    "AND label_rationale IS NOT NULL", (MODEL,)).fetchone()[0] \
            == len(labels)


def test_dedup_judge_without_a_key_fails_after_storing_the_audit(demo, fake, monkeypatch,
                                                                  capsys):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert main(["dedup", str(demo), "--judge", MODEL]) == 1
    assert "no API key: set ANTHROPIC_API_KEY" in capsys.readouterr().err
    assert fake.requests == []
    stored = counts(demo)
    assert stored["duplicate_audits"] == 1 and stored["duplicate_pairs"] >= len(PLANTED)


def test_a_bad_against_file_is_refused_naming_file_and_line(demo, tmp_path, capsys):
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"id": "x-1", "question": "Fine."},
                                               {"id": "x-2", "text": "no question field"}])
    assert main(["dedup", str(demo), "--against", str(bad), "--json"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "bad.jsonl line 2, field 'question'" in captured.err
    twice = write_jsonl(tmp_path / "twice.jsonl", [{"id": "x-1", "question": "One."},
                                                   {"id": "x-1", "question": "Two."}])
    assert main(["dedup", str(demo), "--against", str(twice)]) == 1
    assert "twice.jsonl line 2, field 'id': 'x-1' is already used on line 1" in \
        capsys.readouterr().err
    assert main(["dedup", str(demo), "--against", str(tmp_path / "missing.jsonl")]) == 1
    assert "missing.jsonl" in capsys.readouterr().err
    assert counts(demo) == {"embeddings": 0, "duplicate_audits": 0, "duplicate_pairs": 0}


@pytest.mark.parametrize("option, value, message", [
    ("--cosine", "1.5", "the cosine threshold must be in (0, 1], not 1.5"),
    ("--cosine", "0", "the cosine threshold must be in (0, 1], not 0.0"),
    ("--jaccard", "-0.2", "the Jaccard threshold must be in (0, 1], not -0.2")])
def test_thresholds_out_of_range_are_refused(demo, capsys, option, value, message):
    assert main(["dedup", str(demo), option, value]) == 1
    assert capsys.readouterr().err == f"physgrade: {message}\n"
    assert counts(demo) == {"embeddings": 0, "duplicate_audits": 0, "duplicate_pairs": 0}


def test_a_missing_model_is_refused_by_path(demo, tmp_path, capsys):
    nowhere = tmp_path / "no-model"
    assert main(["embed", str(demo), "--model", str(nowhere)]) == 1
    assert capsys.readouterr().err == f"physgrade: {nowhere}: no such model folder or .onnx file\n"
    assert main(["dedup", str(demo), "--model", str(tmp_path / "x.onnx")]) == 1
    assert "x.onnx: no such ONNX file" in capsys.readouterr().err
    assert counts(demo)["embeddings"] == 0


def test_the_int8_model_is_named_and_cached_apart(demo, capsys):
    assert main(["embed", str(demo)]) == 0
    capsys.readouterr()
    assert main(["dedup", str(demo), "--quantize", "--json"]) == 0
    captured = capsys.readouterr()
    found = json.loads(captured.out)
    check_shape(found)
    assert f"with {DEFAULT_MODEL} (int8) on {PROVIDER}" in captured.err
    assert {("q-0017", "q-0104"), ("q-0017", "q-0105")} <= {(p["a"], p["b"])
                                                           for p in found["pairs"]}
    with Project.open(demo) as project:
        keys = dict(project.conn.execute("SELECT model, count(*) FROM embeddings GROUP BY model"))
        assert sorted(keys.values()) == [42, 42] and len(keys) == 2
        assert pairs.last_audit(project, "")["model"] == f"{DEFAULT_MODEL} (int8)"


def after_the_first_commit(done, total, stage) -> bool:
    """Cancel inside the second lot of ten texts: the first lot is committed, the second not."""
    return stage == "embedding" and done >= 15


def test_an_interrupted_embed_says_how_many_it_stored(demo, monkeypatch, capsys):
    monkeypatch.setattr(vectors, "COMMIT_EVERY", 10)
    with monkeypatch.context() as patch:
        cancel_when(patch, after_the_first_commit)
        assert main(["embed", str(demo)]) == 130
    assert capsys.readouterr().err == (f"{CANCELLED}10 question embeddings stored, 32 still to "
                                       "embed (a new run embeds only those)\n")
    assert counts(demo)["embeddings"] == 10
    assert main(["embed", str(demo)]) == 0
    assert capsys.readouterr().out.endswith("(32 new, 10 already stored)\n")


def test_an_interrupted_dedup_keeps_its_embeddings_and_no_audit(demo, monkeypatch, capsys):
    monkeypatch.setattr(vectors, "COMMIT_EVERY", 10)
    with monkeypatch.context() as patch:
        cancel_when(patch, after_the_first_commit)
        assert main(["dedup", str(demo)]) == 130
    assert capsys.readouterr().err == (f"{CANCELLED}10 embeddings stored (a new run embeds only "
                                       "the rest); no audit stored\n")
    assert counts(demo) == {"embeddings": 10, "duplicate_audits": 0, "duplicate_pairs": 0}


def test_an_interrupted_pair_judge_keeps_the_audit_and_its_labels(demo, fake, monkeypatch,
                                                                  capsys):
    with monkeypatch.context() as patch:
        cancel_when(patch, lambda done, total, stage: stage.startswith("asking") and done >= 2)
        assert main(["dedup", str(demo), "--judge", MODEL, "--concurrency", "1"]) == 130
    err = capsys.readouterr().err
    stored = counts(demo)
    with Project.open(demo) as project:
        labelled = project.conn.execute("SELECT count(*) FROM duplicate_pairs WHERE label_model = ?",
                                        (MODEL,)).fetchone()[0]
    assert stored["duplicate_audits"] == 1 and 2 <= labelled < stored["duplicate_pairs"]
    assert err == (f"{CANCELLED}the audit and its {stored['duplicate_pairs']} candidate pairs "
                   f"stored; {labelled} pair labels stored, {stored['duplicate_pairs'] - labelled} "
                   "still to ask (a new run asks only for those)\n")
