"""The fake Anthropic server, checked against the real `anthropic` client.

The judge code is tested through the real client against this fake, so the fake must answer in
shapes the client parses and trigger its real retry, timeout and error-class behaviour;
otherwise the judge tests would pass against a protocol that does not exist.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import anthropic
import pytest

from fake_anthropic import FakeAnthropic, Fault, schema_answer

MODEL = "claude-test"
TOOL = {
    "name": "record_scores",
    "description": "Record the rubric scores.",
    "input_schema": {
        "type": "object",
        "properties": {
            "physics": {"type": "integer", "minimum": 0, "maximum": 5},
            "units": {"type": ["integer", "null"], "enum": [0, 1, 2]},
            "verdict": {"type": "string", "enum": ["correct", "wrong"]},
            "comment": {"type": "string"},
            "detail": {
                "type": "object",
                "properties": {"confidence": {"type": "number"}, "sure": {"type": "boolean"}},
            },
        },
        "required": ["physics", "units", "verdict", "comment"],
    },
}
EXPECTED = {
    "physics": 5,
    "units": 2,
    "verdict": "correct",
    "comment": "looks right",
    "detail": {"confidence": 1.0, "sure": True},
}


def params(text: str = "Grade this solution.") -> dict:
    """Messages params that force the scoring tool, as the judge sends them."""
    return {
        "model": MODEL,
        "max_tokens": 256,
        "messages": [{"role": "user", "content": text}],
        "tools": [TOOL],
        "tool_choice": {"type": "tool", "name": TOOL["name"]},
    }


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def client(fake: FakeAnthropic, **options: object) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="test-key", base_url=fake.base_url, **{"max_retries": 0, **options})


def test_schema_answer_follows_the_forced_tool() -> None:
    assert schema_answer(params()) == EXPECTED


def test_forced_tool_call_returns_the_schema_answer_with_usage(fake: FakeAnthropic) -> None:
    message = client(fake).messages.create(**params())
    (block,) = message.content
    assert (message.stop_reason, block.name, block.input) == ("tool_use", "record_scores", EXPECTED)
    assert message.model == MODEL
    assert message.usage.input_tokens > 0
    assert message.usage.output_tokens == len(json.dumps(EXPECTED)) // 4
    (recorded,) = fake.message_requests()
    assert recorded.body["tool_choice"] == {"type": "tool", "name": "record_scores"}
    sent_key = recorded.headers.get("x-api-key") or recorded.headers["authorization"].removeprefix("Bearer ")
    assert sent_key == "test-key"


def test_custom_answer_and_answer_faults(fake: FakeAnthropic) -> None:
    fake.answer = lambda body: {"physics": 1}
    fake.push(Fault(tool_input={"physics": 9}), Fault(text_only=True))
    api = client(fake)
    assert api.messages.create(**params()).content[0].input == {"physics": 9}
    text = api.messages.create(**params())
    assert (text.stop_reason, text.content[0].type) == ("end_turn", "text")
    assert api.messages.create(**params()).content[0].input == {"physics": 1}
    unforced = api.messages.create(model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "hi"}])
    assert unforced.content[0].text == "ok"


def test_rate_limit_is_retried_after_retry_after(fake: FakeAnthropic) -> None:
    fake.push(Fault(status=429, headers={"retry-after": "1"}))
    message = client(fake, max_retries=2).messages.create(**params())
    assert message.content[0].input == EXPECTED
    first, second = fake.message_requests()
    assert second.at - first.at >= 0.9


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (400, anthropic.BadRequestError),
        (403, anthropic.PermissionDeniedError),
        (500, anthropic.InternalServerError),
        (529, anthropic.OverloadedError),
    ],
)
def test_fault_status_raises_the_client_error_class(fake: FakeAnthropic, status: int, error: type) -> None:
    fake.push(Fault(status=status))
    with pytest.raises(error) as raised:
        client(fake).messages.create(**params())
    assert raised.value.status_code == status
    assert raised.value.request_id
    assert "x-should-retry" not in raised.value.response.headers


def test_authentication_failures(fake: FakeAnthropic) -> None:
    fake.always_status = 401
    with pytest.raises(anthropic.AuthenticationError):
        client(fake).messages.create(**params())
    fake.always_status = None
    keyless = urllib.request.Request(f"{fake.base_url}/v1/messages", data=json.dumps(params()).encode())
    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(keyless, timeout=5)
    assert raised.value.code == 401
    assert json.load(raised.value)["error"]["type"] == "authentication_error"


def test_slow_answer_times_out_without_blocking_others(fake: FakeAnthropic) -> None:
    fake.push(Fault(delay=20.0))  # far longer than a busy machine takes to serve the second
    with pytest.raises(anthropic.APITimeoutError):
        client(fake, timeout=0.3).messages.create(**params())
    started = time.monotonic()
    client(fake, timeout=10).messages.create(**params())  # served while the slow one still sleeps
    assert time.monotonic() - started < 10


def test_batch_lifecycle_with_an_errored_override(fake: FakeAnthropic) -> None:
    api = client(fake)
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
    fake.result_overrides["b"] = {"type": "errored", "error": error}
    fake.result_overrides["c"] = {"type": "succeeded", "tool_input": {"physics": 0}}
    batch = api.messages.batches.create(requests=[{"custom_id": cid, "params": params(cid)} for cid in "abc"])
    assert batch.id.startswith("msgbatch_")
    assert api.messages.batches.retrieve(batch.id).processing_status == "in_progress"
    with pytest.raises(anthropic.BadRequestError):
        client(fake).get(f"/v1/messages/batches/{batch.id}/results", cast_to=object)
    fake.finish_batches()
    ended = api.messages.batches.retrieve(batch.id)
    assert (ended.processing_status, ended.ended_at is not None) == ("ended", True)
    counts = ended.request_counts
    assert (counts.succeeded, counts.errored, counts.processing) == (2, 1, 0)
    results = {line.custom_id: line.result for line in api.messages.batches.results(batch.id)}
    assert results["a"].type == "succeeded" and results["a"].message.content[0].input == EXPECTED
    assert results["a"].message.usage.input_tokens > 0
    assert results["b"].type == "errored" and results["b"].error.error.type == "overloaded_error"
    assert results["c"].message.content[0].input == {"physics": 0}


def test_batch_cancel_and_ending_by_polls(fake: FakeAnthropic) -> None:
    api = client(fake)
    batch = api.messages.batches.create(requests=[{"custom_id": "a", "params": params()}])
    assert api.messages.batches.cancel(batch.id).processing_status == "canceling"
    fake.end_after_polls = 2
    assert api.messages.batches.retrieve(batch.id).processing_status == "canceling"
    ended = api.messages.batches.retrieve(batch.id)
    assert (ended.processing_status, ended.request_counts.canceled) == ("ended", 1)
    assert [line.result.type for line in api.messages.batches.results(batch.id)] == ["canceled"]


def test_script_prints_its_url_and_serves() -> None:
    script = Path(__file__).with_name("fake_anthropic.py")
    process = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:")
        api = anthropic.Anthropic(api_key="test-key", base_url=base_url, max_retries=0)
        assert api.messages.create(**params()).content[0].input == EXPECTED
    finally:
        process.kill()
        process.wait()
