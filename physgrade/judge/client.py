"""One judge call through the Anthropic client: sent, retried, and its answer checked.

Retries of rate limits (429, honouring ``retry-after``), overload (529), server errors and
timeouts are the ``anthropic`` client's own, bounded by ``max_retries`` with exponential
backoff. An answer that does not fit the tool is sent back once with the problem named; a
second bad answer is kept, raw, as a failed verdict. Credentials are refused at once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Generic, TypeVar

from physgrade.judge import credentials
from physgrade.judge.pricing import Usage
from physgrade.judge.tools import InvalidOutput

if TYPE_CHECKING:
    import anthropic

    from physgrade.judge.figures import Figures

T = TypeVar("T")

#: Seconds to wait for one answer; a judge writes a few hundred tokens.
DEFAULT_TIMEOUT = 120.0
#: Further attempts after a rate limit, overload, server error or timeout.
DEFAULT_RETRIES = 4
#: Room for a rationale per criterion.
MAX_TOKENS = 2048
#: The Messages API's temperature when a request sets none (what every judge run sent before
#: runs recorded their decoding); a request without top_p samples from the whole distribution.
#: Newer models refuse a temperature other than 1 and any top_p (a 400, which fails the call).
API_TEMPERATURE = 1.0
#: The sampling parameters a :class:`Decoding` may set, as the request's body names them.
SAMPLING = ("temperature", "top_p")


class CredentialsError(Exception):
    """The API refused the key or the model (401, 403, 404): no further call can succeed."""


class CallError(Exception):
    """One call failed for good after its retries (or the API refused the request itself)."""


@dataclass(frozen=True, slots=True)
class Decoding:
    """How a judge samples its answer: ``temperature`` and ``top_p`` as the Messages API takes
    them, None where a request leaves the API's default (:data:`API_TEMPERATURE`, no top_p),
    so that a run that sets neither sends exactly what runs sent before."""

    temperature: float | None = None
    top_p: float | None = None

    def __post_init__(self) -> None:
        if self.temperature is not None and not 0.0 <= self.temperature <= 1.0:
            raise ValueError(f"temperature must be between 0 and 1, not {self.temperature:g}")
        if self.top_p is not None and not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be above 0 and at most 1, not {self.top_p:g}")

    def params(self) -> dict[str, float]:
        """The keyword arguments of ``messages.create`` this decoding adds (those set)."""
        return {key: value for key, value in zip(SAMPLING, (self.temperature, self.top_p))
                if value is not None}

    def text(self) -> str:
        """``temperature 0.7, top_p 0.9``; ``temperature 1 (the API's default)`` where unset."""
        temperature = (f"{self.temperature:g}" if self.temperature is not None
                       else f"{API_TEMPERATURE:g} (the API's default)")
        return f"temperature {temperature}" + (f", top_p {self.top_p:g}" if self.top_p is not None
                                                    else "")


@dataclass(frozen=True, slots=True)
class Request:
    """What one call sends, apart from the model: a system text, one user message (its figures'
    images, if it has any, before its text), and the tool the answer must come through."""

    system: str
    prompt: str
    tool: dict[str, Any]
    max_tokens: int = MAX_TOKENS
    figures: tuple["Figures", ...] = ()
    decoding: Decoding = Decoding()

    def decoded(self, decoding: Decoding) -> "Request":
        """This request sampled with ``decoding`` (a run's, which the jobs it asks do not know)."""
        return replace(self, decoding=decoding)

    def params(self, model: str, retry: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """Keyword arguments of ``messages.create`` (and a batch request's ``params``)."""
        user: Any = self.prompt
        if self.figures:  # a request without figures is sent exactly as before
            from physgrade.judge.figures import content
            user = content(self.figures, self.prompt)
        return {"model": model, "max_tokens": self.max_tokens, **self.decoding.params(),
                "system": self.system,
                "messages": [{"role": "user", "content": user}, *(retry or [])],
                "tools": [self.tool],
                "tool_choice": {"type": "tool", "name": self.tool["name"]}}


@dataclass(frozen=True, slots=True)
class Reply:
    """An answer as received: the forced tool's input (None if the model did not call it)."""

    tool_input: object | None
    tool_use_id: str | None
    content: list[dict[str, Any]]
    usage: Usage
    stop_reason: str | None

    @classmethod
    def of(cls, message: Any) -> "Reply":
        """From a ``Message`` of the client (or of a batch result)."""
        content = [block.model_dump(mode="json", exclude_none=True) for block in message.content]
        tool = next((block for block in content if block.get("type") == "tool_use"), None)
        return cls(tool["input"] if tool else None, tool["id"] if tool else None, content,
                   Usage(message.usage.input_tokens, message.usage.output_tokens),
                   message.stop_reason)


@dataclass(slots=True)
class Outcome(Generic[T]):
    """The end of one item's calls: a checked result, or the reason it failed and what the
    model said (raw JSON, kept for inspection)."""

    result: T | None
    raw: str
    usage: Usage = field(default_factory=Usage)
    attempts: int = 1
    problem: str | None = None


def connect(timeout: float = DEFAULT_TIMEOUT, max_retries: int = DEFAULT_RETRIES,
            api_key: str | None = None) -> "anthropic.Anthropic":
    """A client for ``api_key``, else the key :func:`credentials.find` finds (the environment's,
    the keyring's, this session's). ``ANTHROPIC_BASE_URL`` redirects it to a proxy, a gateway
    or a test server."""
    import anthropic  # imported here: commands and the app start without it
    found = credentials.find()
    key = api_key or (found.value if found else None)
    if not key:
        raise CredentialsError("no API key: set ANTHROPIC_API_KEY to an Anthropic API key")
    return anthropic.Anthropic(api_key=key, timeout=timeout, max_retries=max_retries)


def ask(client: "anthropic.Anthropic", model: str, request: Request,
        retry: list[dict[str, Any]] | None = None) -> Reply:
    """Send one request (the client retries transient failures); raise :class:`CredentialsError`
    or :class:`CallError` when it cannot be answered."""
    import anthropic
    params = request.params(model, retry)
    # The client no longer names the sampling parameters: they go as they go in a batch, in
    # the request's body.
    sampling = {key: params.pop(key) for key in SAMPLING if key in params}
    try:
        return Reply.of(client.messages.create(**params, extra_body=sampling or None))
    except (anthropic.AuthenticationError, anthropic.PermissionDeniedError,
            anthropic.NotFoundError) as exc:
        raise CredentialsError(api_message(exc)) from None
    except anthropic.APIStatusError as exc:
        raise CallError(api_message(exc)) from None
    except anthropic.APITimeoutError:
        raise CallError(f"no answer within {client.timeout} s, after "
                        f"{client.max_retries} retries") from None
    except anthropic.APIConnectionError as exc:
        raise CallError(f"cannot reach {client.base_url}: {exc}") from None


def checked(first: Reply, read: Callable[[object], T],
            again: Callable[[list[dict[str, Any]]], Reply] | None) -> Outcome[T]:
    """Check a reply with ``read``; if it does not fit, ask ``again`` once with the problem
    named (when a retry is possible), and keep the raw answers of a failure."""
    replies = [first]
    result, problem = _read(first, read)
    if problem is not None and again is not None:
        replies.append(again(_correction(first, problem)))
        result, problem = _read(replies[-1], read)
    usage = Usage()
    for reply in replies:
        usage.add(reply.usage)
    if problem is None:
        return Outcome(result, json.dumps(replies[-1].tool_input, ensure_ascii=False), usage,
                       len(replies))
    raw = json.dumps([reply.content for reply in replies], ensure_ascii=False)
    return Outcome(None, raw, usage, len(replies), problem)


def ask_checked(client: "anthropic.Anthropic", model: str, request: Request,
                read: Callable[[object], T]) -> Outcome[T]:
    """One item's call, checked, with one corrective retry."""
    return checked(ask(client, model, request), read,
                   lambda retry: ask(client, model, request, retry))


def _read(reply: Reply, read: Callable[[object], T]) -> tuple[T | None, str | None]:
    """The checked result of a reply, or what is wrong with it."""
    if reply.tool_input is None:
        return None, f"the answer did not call the tool (stop reason {reply.stop_reason})"
    try:
        return read(reply.tool_input), None
    except InvalidOutput as exc:
        return None, str(exc)


def _correction(reply: Reply, problem: str) -> list[dict[str, Any]]:
    """The turns that show the model its answer and what is wrong with it."""
    if reply.tool_use_id is None:
        return []  # nothing to answer: the same request again
    return [{"role": "assistant", "content": reply.content},
            {"role": "user", "content": [{
                "type": "tool_result", "tool_use_id": reply.tool_use_id, "is_error": True,
                "content": f"Not recorded: {problem}. Call the tool again with every field "
                           "inside its allowed range."}]}]


def api_message(exc: Exception) -> str:
    """The API's own words for a refused request, with its status."""
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    detail = body.get("error", {}).get("message") if isinstance(body, dict) else None
    return f"the API answered {status}: {detail or exc}"
