"""A loopback stand-in for the Anthropic Messages and Message Batches APIs.

The judge code must be exercised through the real `anthropic` client (its retries, timeouts,
error classes and JSONL decoding are part of what we rely on), but tests and benchmarks cannot
reach the network. This server speaks just enough of the wire protocol for that client, with
scripted faults (error statuses, slow answers, odd tool inputs) and scripted batch outcomes.

Run as a script (`python tests/fake_anthropic.py [--port N]`) it serves until killed and
prints its base URL on one line, for benchmarks that drive it from another process.
"""

from __future__ import annotations

import argparse
import itertools
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
BATCH_PREFIX = "/v1/messages/batches"


@dataclass
class Fault:
    """What the next POST /v1/messages should do instead of (or on top of) a normal answer."""

    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    tool_input: dict | None = None
    text_only: bool = False


@dataclass
class Recorded:
    """One request as received, so tests can assert on what the client actually sent."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict | None
    at: float  # time.monotonic()


def schema_answer(body: dict) -> dict:
    """A valid tool input for the tool the request forces, built from that tool's JSON schema.

    Integers take their maximum (or largest enum value) so a default answer is a clear,
    checkable "full marks" rather than an arbitrary value; an integer without a maximum takes
    its minimum and a string that may be null is null, so a verdict's first wrong step is 0
    ("no step is wrong") and its error category none.
    """
    name = _forced_tool(body)
    tool = next(t for t in body.get("tools", []) if t.get("name") == name)
    return _value_for(tool.get("input_schema", {}))


def _value_for(schema: dict) -> Any:
    """A value that satisfies `schema` (the subset of JSON Schema tool definitions use)."""
    kind = schema.get("type", "object")
    if kind == ["string", "null"]:
        return None
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        return {key: _value_for(sub) for key, sub in schema.get("properties", {}).items()}
    if kind == "integer":
        if "maximum" in schema:
            return schema["maximum"]
        return max(schema["enum"]) if schema.get("enum") else schema.get("minimum", 0)
    if kind == "string":
        return schema["enum"][0] if schema.get("enum") else "looks right"
    if kind == "number":
        return 1.0
    if kind == "boolean":
        return True
    if kind == "array":
        return [_value_for(schema["items"])] if "items" in schema else []
    return None


def _forced_tool(body: dict) -> str | None:
    """The tool name the request forces with tool_choice {"type": "tool"}, if any."""
    choice = body.get("tool_choice") or {}
    return choice.get("name") if choice.get("type") == "tool" else None


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _stamp(moment: datetime | None) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment else None


def _error_body(status: int, message: str) -> dict:
    return {"type": "error", "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message}}


class FakeAnthropic:
    """The server and its scripted behaviour; use as a context manager."""

    def __init__(self, answer: Callable[[dict], dict] | None = None, *, port: int = 0) -> None:
        self.answer = answer or schema_answer
        self.port = port
        self.base_url = ""
        self.requests: list[Recorded] = []
        #: Answer every request with this error status, asking the client to retry at once
        #: (``retry-after-ms``) rather than after its exponential backoff (seconds per item):
        #: every retry the client makes of a 5xx is still made, and a run that fails
        #: throughout ends in milliseconds.
        self.always_status: int | None = None
        self.batches: dict[str, dict] = {}
        self.result_overrides: dict[str, dict] = {}
        self.end_after_polls: int | None = None
        self._faults: deque[Fault] = deque()
        self._lock = threading.RLock()  # _end builds messages while holding it
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> FakeAnthropic:
        self._server = _Server(("127.0.0.1", self.port), _Handler)
        self._server.fake = self
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def message_requests(self) -> list[Recorded]:
        """Only the POST /v1/messages requests (retries included), in order."""
        with self._lock:
            return [r for r in self.requests if r.method == "POST" and r.path == "/v1/messages"]

    def push(self, *faults: Fault) -> None:
        """Queue faults; each later POST /v1/messages takes the next one."""
        with self._lock:
            self._faults.extend(faults)

    def finish_batches(self) -> None:
        """End every batch still running, as if the API had just finished processing it."""
        with self._lock:
            for batch in self.batches.values():
                if batch["status"] != "ended":
                    self._end(batch)

    # --- request handling (called from handler threads) -------------------------------------

    def _next_id(self) -> int:
        with self._lock:
            return next(self._ids)

    def _record(self, recorded: Recorded) -> None:
        with self._lock:
            self.requests.append(recorded)

    def _next_fault(self) -> Fault | None:
        with self._lock:
            return self._faults.popleft() if self._faults else None

    def _message(
        self, body: dict, size: int, tool_input: dict | None = None, text_only: bool = False
    ) -> dict:
        """A Message answering `body` (`size` is the raw request's length, for usage)."""
        n = self._next_id()
        name = None if text_only else _forced_tool(body)
        if name is None:
            content: list[dict] = [{"type": "text", "text": "ok"}]
            output = "ok"
        else:
            given = self.answer(body) if tool_input is None else tool_input
            content = [{"type": "tool_use", "id": f"toolu_{n}", "name": name, "input": given}]
            output = json.dumps(given)
        return {
            "id": f"msg_{n}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", ""),
            "content": content,
            "stop_reason": "end_turn" if name is None else "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": size // 4, "output_tokens": max(1, len(output) // 4)},
        }

    def _create_batch(self, body: dict) -> dict:
        created = _now()
        batch = {
            "id": f"msgbatch_{self._next_id()}",
            "requests": body.get("requests", []),
            "status": "in_progress",
            "created_at": created,
            "cancel_initiated_at": None,
            "ended_at": None,
            "polls": 0,
            "results": None,
        }
        with self._lock:
            self.batches[batch["id"]] = batch
        return batch

    def _retrieve_batch(self, batch: dict) -> None:
        """Count a poll, ending the batch on the poll `end_after_polls` asks for."""
        with self._lock:
            batch["polls"] += 1
            if (
                batch["status"] != "ended"
                and self.end_after_polls is not None
                and batch["polls"] >= self.end_after_polls
            ):
                self._end(batch)

    def _end(self, batch: dict) -> None:
        """Compute results now (caller holds the lock). A canceled batch cancels every request
        without an override, so an override can stand for a request answered before the cancel."""
        results = []
        for item in batch["requests"]:
            override = self.result_overrides.get(item["custom_id"])
            if override is not None and override.get("type") == "succeeded" and "tool_input" in override:
                result = {"type": "succeeded", "message": self._batch_message(item, override["tool_input"])}
            elif override is not None:
                result = override
            elif batch["status"] == "canceling":
                result = {"type": "canceled"}
            else:
                result = {"type": "succeeded", "message": self._batch_message(item)}
            results.append({"custom_id": item["custom_id"], "result": result})
        batch["results"] = results
        batch["status"] = "ended"
        batch["ended_at"] = _now()

    def _batch_message(self, item: dict, tool_input: dict | None = None) -> dict:
        params = item["params"]
        return self._message(params, len(json.dumps(params).encode()), tool_input)

    def _batch_view(self, batch: dict) -> dict:
        """The MessageBatch object the API would return for `batch` right now."""
        counts = dict.fromkeys(("processing", "succeeded", "errored", "canceled", "expired"), 0)
        if batch["results"] is None:
            counts["processing"] = len(batch["requests"])
        else:
            for line in batch["results"]:
                counts[line["result"]["type"]] += 1
        ended = batch["status"] == "ended"
        return {
            "id": batch["id"],
            "type": "message_batch",
            "processing_status": batch["status"],
            "request_counts": counts,
            "created_at": _stamp(batch["created_at"]),
            "expires_at": _stamp(batch["created_at"] + timedelta(hours=24)),
            "cancel_initiated_at": _stamp(batch["cancel_initiated_at"]),
            "ended_at": _stamp(batch["ended_at"]),
            "archived_at": None,
            "results_url": f"{self.base_url}{BATCH_PREFIX}/{batch['id']}/results" if ended else None,
        }


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    fake: FakeAnthropic

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet: clients that time out and hang up are an expected part of the tests."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in separate writes
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: the benchmark pushes thousands of requests through."""

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def _handle(self) -> None:
        fake = self.server.fake
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        body = json.loads(raw) if raw else None
        path = self.path.split("?", 1)[0]
        headers = {name.lower(): value for name, value in self.headers.items()}
        fake._record(Recorded(self.command, path, headers, body, time.monotonic()))

        bearer = headers.get("authorization", "").lower().startswith("bearer ")
        if not headers.get("x-api-key") and not bearer:
            return self._error(401, "missing API key")
        if fake.always_status is not None:
            return self._error(fake.always_status, "scripted failure", {"retry-after-ms": "1"})

        if self.command == "POST" and path == "/v1/messages":
            return self._messages(body or {}, len(raw))
        if path == BATCH_PREFIX and self.command == "POST":
            return self._json(200, fake._batch_view(fake._create_batch(body or {})))
        if path.startswith(BATCH_PREFIX + "/"):
            return self._batch_route(path[len(BATCH_PREFIX) + 1 :].split("/"))
        return self._error(404, f"no route for {self.command} {path}")

    def _messages(self, body: dict, size: int) -> None:
        fault = self.server.fake._next_fault() or Fault()
        if fault.delay:
            time.sleep(fault.delay)
        if fault.status is not None:
            return self._error(fault.status, "scripted fault", fault.headers)
        message = self.server.fake._message(body, size, fault.tool_input, fault.text_only)
        self._json(200, message, fault.headers)

    def _batch_route(self, parts: list[str]) -> None:
        fake = self.server.fake
        batch = fake.batches.get(parts[0])
        if batch is None:
            return self._error(404, f"no batch {parts[0]}")
        action = (self.command, parts[1] if len(parts) > 1 else None)
        if action == ("GET", None):
            fake._retrieve_batch(batch)
            return self._json(200, fake._batch_view(batch))
        if action == ("POST", "cancel"):
            with fake._lock:
                if batch["status"] == "in_progress":
                    batch["status"] = "canceling"
                    batch["cancel_initiated_at"] = _now()
            return self._json(200, fake._batch_view(batch))
        if action == ("GET", "results"):
            if batch["status"] != "ended":
                return self._error(400, f"batch {batch['id']} has not ended")
            lines = "".join(json.dumps(line) + "\n" for line in batch["results"])
            return self._send(200, lines.encode(), "application/binary")
        return self._error(404, f"no route for {self.command} {self.path}")

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        self._json(status, _error_body(status, message), headers)

    def _json(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json", headers)

    def _send(
        self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", f"req_{self.server.fake._next_id()}")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default: any free port)")
    args = parser.parse_args()
    with FakeAnthropic(port=args.port) as fake:
        print(fake.base_url, flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
