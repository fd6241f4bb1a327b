"""``physgrade judge``, ``judge-status`` and ``bloom-suggest`` end to end: the real client against
the loopback server, real project files, a real process killed half-way."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from cancelling import CANCELLED, cancel_when
from conftest import TEST_KEY as KEY
from fake_anthropic import Fault
from physgrade.cli import main
from physgrade.judge import batches, bloom, verdicts
from physgrade.judge.prompts import Prompts
from physgrade.project import Project

MODEL = "claude-haiku-4-5"
DEMO_RESPONSES = 126


def judged(path, model=MODEL) -> dict[str, str]:
    with Project.open(path) as project:
        return verdicts.stored(project, model, verdicts.prompt_version(Prompts.load()))


def test_a_dry_run_estimates_and_sends_nothing(demo, fake, monkeypatch, capsys):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert main(["judge", str(demo), "--model", MODEL, "--dry-run", "--limit", "10"]) == 0
    out = capsys.readouterr().out
    assert "10 calls, about" in out and "$" in out and "126 already done" not in out
    assert "dry run: nothing was sent" in out and fake.requests == []


def test_an_unknown_model_price_is_said_not_guessed(demo, fake, capsys):
    assert main(["judge", str(demo), "--model", "my-gateway-model", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "unknown (no price for this model)" in out and "give --price-in and --price-out" in out
    assert main(["judge", str(demo), "--model", "my-gateway-model", "--dry-run",
                 "--price-in", "2", "--price-out", "10"]) == 0
    assert "at $2/$10 per million tokens" in capsys.readouterr().out


def test_a_run_prints_its_summary_and_never_writes_the_key(demo, fake, capsys):
    assert main(["judge", str(demo), "--model", MODEL, "--concurrency", "4"]) == 0
    out = capsys.readouterr().out
    assert f"{DEMO_RESPONSES} done, 0 already cached, 0 failed" in out and "cost $" in out
    assert len(judged(demo)) == DEMO_RESPONSES
    assert all(r.headers.get("authorization") == f"Bearer {KEY}"
               or r.headers.get("x-api-key") == KEY for r in fake.requests)
    for file in demo.parent.iterdir():
        assert KEY.encode() not in file.read_bytes(), file
    assert KEY not in out
    assert main(["judge", str(demo), "--model", MODEL]) == 0
    assert "0 calls" in capsys.readouterr().out and len(fake.message_requests()) == DEMO_RESPONSES


def test_no_key_and_a_refused_key_are_clear_errors(demo, fake, monkeypatch, capsys):
    fake.always_status = 401
    assert main(["judge", str(demo), "--model", MODEL, "--limit", "3"]) == 1
    err = capsys.readouterr().err
    assert "the run stopped early: the API answered 401" in err
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert main(["judge", str(demo), "--model", MODEL, "--limit", "3"]) == 1
    assert "no API key: set ANTHROPIC_API_KEY" in capsys.readouterr().err
    assert judged(demo) == {}


def test_a_run_killed_half_way_resumes_without_duplicates(demo, fake):
    fake.push(*[Fault(delay=0.05)] * DEMO_RESPONSES)
    env = dict(os.environ)
    process = subprocess.Popen([sys.executable, "-m", "physgrade.cli", "judge", str(demo),
                                "--model", MODEL, "--concurrency", "2"], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(judged(demo)) < 20:
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    stored = judged(demo)
    assert 20 <= len(stored) < DEMO_RESPONSES
    asked_before = len(fake.message_requests())

    assert main(["judge", str(demo), "--model", MODEL, "--concurrency", "4"]) == 0
    with Project.open(demo) as project:
        assert project.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert len(judged(demo)) == DEMO_RESPONSES
    resent = [r.body["messages"][0]["content"] for r in fake.message_requests()[asked_before:]]
    assert len(resent) == DEMO_RESPONSES - len(stored)  # nothing stored was asked again


def test_a_batch_is_submitted_remembered_and_collected(demo, fake, capsys):
    assert main(["judge", str(demo), "--model", MODEL, "--batch", "--limit", "5"]) == 0
    out = capsys.readouterr().out
    assert "half price in a batch" in out and "submitted 5 requests in 1 batch(es)" in out
    [batch_id] = list(fake.batches)
    custom_ids = [r["custom_id"] for r in fake.batches[batch_id]["requests"]]
    fake.result_overrides[custom_ids[0]] = {"type": "errored", "error": {
        "type": "error", "error": {"type": "api_error", "message": "boom"}}}
    bad = {key: {"score": 9, "rationale": "?"} for key in ("INT", "MOD", "CON", "APP", "CAL",
                                                           "COR", "COH", "ANS")}
    fake.result_overrides[custom_ids[1]] = {"type": "succeeded", "tool_input": bad}

    # Still running: nothing stored, and a new run does not submit the same work again.
    assert main(["judge-status", str(demo)]) == 0
    assert "in_progress" in capsys.readouterr().out and judged(demo) == {}
    assert main(["judge", str(demo), "--model", MODEL, "--dry-run", "--limit", "5"]) == 0
    assert "5 waiting in submitted batches" in capsys.readouterr().out

    fake.finish_batches()
    assert main(["judge-status", str(demo)]) == 0  # a new process could do the same
    out = capsys.readouterr().out
    assert "collected: 4 stored, 0 failed, 1 not answered" in out
    assert len(judged(demo)) == 4
    # The out-of-range batch answer got its corrective retry as a direct call.
    [retry] = fake.message_requests()
    assert retry.body["messages"][-1]["content"][0]["type"] == "tool_result"
    assert main(["judge-status", str(demo)]) == 0
    assert "every batch has been collected" in capsys.readouterr().out
    # The errored request is pending again.
    assert main(["judge", str(demo), "--model", MODEL, "--dry-run", "--limit", "1"]) == 0
    assert "4 already done" in capsys.readouterr().out


def test_bloom_suggestions_are_stored_as_a_model_annotator(demo, fake, capsys):
    assert main(["bloom-suggest", str(demo), "--model", MODEL, "--limit", "4",
                 "--filter", "topic=Mechanics"]) == 0
    assert "4 done" in capsys.readouterr().out
    version = bloom.prompt_version(Prompts.load())
    with Project.open(demo) as project:
        rows = project.conn.execute(
            "SELECT q.topic, b.cognitive, b.knowledge, b.extra FROM bloom_labels b "
            "JOIN raters r ON r.id = b.annotator_id JOIN questions q ON q.id = b.question_id "
            "WHERE r.name = ? AND r.kind = 'llm' AND r.prompt_version = ?",
            (MODEL, version)).fetchall()
    assert len(rows) == 4 and {row[0] for row in rows} == {"Mechanics"}
    assert all(row[1] == "Remember" and row[2] == "Factual" and "rationale" in row[3]
               for row in rows)
    body = fake.message_requests()[0].body
    assert body["tool_choice"]["name"] == "record_bloom" and "<topic>Mechanics</topic>" in \
        body["messages"][0]["content"]
    assert main(["bloom-suggest", str(demo), "--model", MODEL, "--limit", "4",
                 "--filter", "topic=Mechanics"]) == 0
    assert len(fake.message_requests()) == 8  # the next four, not the same four again


def test_an_interrupted_run_says_how_many_verdicts_it_stored(demo, fake):
    fake.push(*[Fault(delay=0.05)] * DEMO_RESPONSES)
    process = subprocess.Popen([sys.executable, "-m", "physgrade.cli", "judge", str(demo),
                                "--model", MODEL, "--concurrency", "2"], env=dict(os.environ),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(judged(demo)) < 10:
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)  # Ctrl+C
    _, err = process.communicate(timeout=60)
    stored = judged(demo)
    assert process.returncode == 130 and 10 <= len(stored) < DEMO_RESPONSES
    assert set(stored.values()) == {"ok"}
    assert err == (f"{CANCELLED}{len(stored)} verdicts stored, {DEMO_RESPONSES - len(stored)} "
                   "still to ask (a new run asks only for those)\n")
    assert main(["judge", str(demo), "--model", MODEL]) == 0
    assert len(judged(demo)) == DEMO_RESPONSES


def test_a_cancelled_submission_says_which_batches_are_in(demo, fake, monkeypatch, capsys):
    monkeypatch.setattr(batches, "MAX_REQUESTS", 2)
    with monkeypatch.context() as patch:
        cancel_when(patch, lambda done, total, stage: stage == "submitting batches")
        assert main(["judge", str(demo), "--model", MODEL, "--batch", "--limit", "5"]) == 130
    assert capsys.readouterr().err == (
        f"{CANCELLED}1 batch of 2 requests submitted and recorded (collect them with: physgrade "
        f"judge-status {demo}), 3 requests not submitted (a new run submits only those)\n")
    assert len(fake.batches) == 1
    with Project.open(demo) as project:
        assert [state.requests for state in batches.batch_history(project)] == [2]
    assert main(["judge", str(demo), "--model", MODEL, "--dry-run", "--limit", "5"]) == 0
    assert "2 waiting in submitted batches" in capsys.readouterr().out


def test_an_interrupted_collection_says_how_many_results_it_stored(demo, fake, monkeypatch,
                                                                   capsys):
    assert main(["judge", str(demo), "--model", MODEL, "--batch", "--limit", "5"]) == 0
    fake.finish_batches()
    with monkeypatch.context() as patch:
        cancel_when(patch, lambda done, total, stage: stage.startswith("collecting") and done == 2)
        assert main(["judge-status", str(demo)]) == 130
    assert capsys.readouterr().err == (f"{CANCELLED}2 batch results stored (the next "
                                       "judge-status collects the rest)\n")
    assert len(judged(demo)) == 2
    assert main(["judge-status", str(demo)]) == 0
    assert "collected: 3 stored, 0 failed, 0 not answered" in capsys.readouterr().out
    assert len(judged(demo)) == 5
