"""What the sync and the async client share: how a call is described, when and how long
to wait before retrying it, how an answer becomes a model or an error, and how an event
stream is read. No I/O here: client.py and aio.py only send and sleep."""

from __future__ import annotations

import base64
import email.utils
import json
import random
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Optional, TypeVar, Union, overload
from urllib.parse import quote

import httpx
from pydantic import BaseModel, TypeAdapter

from memoryhub_client.errors import ConnectionFailed, MemoryHubError, error_class
from memoryhub_client.models import Event, GraphCheckpoint, Page

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

USER_AGENT = "memoryhub-client/0.1"
# The hub sends a keep-alive comment at least every 20 s: a stream silent for longer
# than this is dead even if the socket does not say so.
STREAM_READ_TIMEOUT = 45.0
# The hub holds an approval long poll at most this long (docs/api.md, "Approvals").
MAX_WAIT = 60


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of one call: up to `max_attempts` sends in all, waiting `backoff`·2ⁿ
    seconds (at most `max_backoff`, with jitter) between them, or the Retry-After the hub
    asked for when it is at most `max_retry_after` (longer: the error is raised at once)."""

    max_attempts: int = 5
    backoff: float = 0.2
    max_backoff: float = 8.0
    max_retry_after: float = 60.0
    # Jitter spreads the retries of many agents that failed together (a restart).
    jitter: float = 0.5

    def delay(self, attempt: int) -> float:
        """Seconds to wait after the `attempt`-th failed send (1-based)."""
        base = min(self.max_backoff, self.backoff * 2.0 ** (attempt - 1))
        return base * (1 - self.jitter * random.random())


NO_RETRIES = RetryPolicy(max_attempts=1)

# Errors raised before the request could reach the hub: resending never repeats an effect.
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
# Methods whose request may be sent twice with one effect. POST is one because every POST
# goes out with an Idempotency-Key (the hub answers a repeat with the first answer).
# PATCH is not: a plan step moved to "done" twice answers 409 the second time, so a
# PATCH whose answer was lost is left to the caller.
REPEATABLE = frozenset({"GET", "HEAD", "PUT", "DELETE", "POST"})


@dataclass
class Call(Generic[T]):
    """One logical call: what to send, and how to read the answer."""

    method: str
    path: str
    parse: Callable[[Any], T]
    params: Optional[dict[str, str]] = None
    json: Any = None
    timeout: Optional[float] = None
    # One key per logical call, the same on each of its retries: that is what makes a
    # retry after a lost answer safe (docs/api.md, "Conventions").
    idempotency_key: Optional[str] = field(default=None)
    # The answer's bytes as they are (a download), not JSON.
    raw: bool = False
    # A multipart body (an upload): form fields and {name: (filename, bytes)}.
    form: Optional[dict[str, str]] = None
    files: Optional[dict[str, tuple[str, bytes]]] = None

    def __post_init__(self) -> None:
        if self.method != "GET" and self.idempotency_key is None:
            self.idempotency_key = str(uuid.uuid4())

    def request(self) -> dict[str, Any]:
        """The keyword arguments of httpx's `request`."""
        headers = {"Idempotency-Key": self.idempotency_key} if self.idempotency_key else {}
        request: dict[str, Any] = {"method": self.method, "url": self.path, "params": self.params, "headers": headers}
        if self.json is not None:
            request["json"] = self.json
        if self.files is not None:
            request["data"], request["files"] = self.form or {}, self.files
        if self.timeout is not None:
            request["timeout"] = self.timeout
        return request


class Attempts(Generic[T]):
    """The retry state of one call: `after_error` and `after_response` answer how long to
    wait before the next send, or raise / answer None when there is none."""

    def __init__(self, call: Call[T], policy: RetryPolicy) -> None:
        self.call = call
        self.policy = policy
        self.sent = 0
        self.maybe_delivered = False

    def after_error(self, error: httpx.TransportError) -> float:
        self.sent += 1
        delivered = not isinstance(error, NOT_SENT)
        self.maybe_delivered |= delivered
        if self.sent >= self.policy.max_attempts or (delivered and self.call.method not in REPEATABLE):
            raise ConnectionFailed(
                f"{self.call.method} {self.call.path}: {type(error).__name__}: {error}".rstrip(": "),
                code="CONNECTION_ERROR", idempotency_key=self.call.idempotency_key,
            ) from error
        return self.policy.delay(self.sent)

    def after_response(self, response: httpx.Response) -> Optional[float]:
        """None when `response` is the answer (a success or an error to raise)."""
        self.sent += 1
        status = response.status_code
        retryable = status in (429, 503) or (status in (502, 504) and self.call.method in REPEATABLE) or (
            # The same key's first attempt is still running on the hub (its answer was lost
            # on the way, the hub was slow): the retry will get its answer.
            status == 409 and _code_of(response) == "IDEMPOTENCY_KEY_BUSY"
        )
        if not retryable or self.sent >= self.policy.max_attempts:
            return None
        retry_after = retry_after_seconds(response)
        if retry_after is None:
            return self.policy.delay(self.sent)
        if retry_after > self.policy.max_retry_after:
            return None
        return retry_after

    def result(self, response: httpx.Response) -> T:
        if response.is_success:
            if self.call.raw:
                return self.call.parse(response.content)
            return self.call.parse(response.json() if response.content else None)
        if self.call.method == "DELETE" and response.status_code == 404 and self.maybe_delivered:
            # An earlier attempt deleted it and its answer was lost.
            return self.call.parse(None)  # parses to None: a DELETE answers nothing
        raise error_from(response, idempotency_key=self.call.idempotency_key)


def authorization(api_key: str) -> str:
    """The Authorization header for `api_key`, read from a file or an environment variable
    as often as typed: the whitespace around it goes. A key that still could not travel
    in a header is refused here, without its value: an exception must never carry it."""
    key = api_key.strip() if isinstance(api_key, str) else ""
    if not key or not key.isascii() or not key.isprintable() or " " in key:
        raise ValueError(
            "api_key must be a MemoryHub key (mha_… for agents, mho_… for operators); "
            "the one given is empty or holds spaces, line breaks or characters a header cannot carry."
        )
    return f"Bearer {key}"


def source_named(source: Any) -> Any:
    """A memory's source as the hub takes it: what names it, without `kind` (the hub works
    that out) or the fields left unset."""
    if source is None:
        return None
    fields = source.model_dump(exclude_none=True) if isinstance(source, BaseModel) else dict(source)
    fields.pop("kind", None)
    return fields


def _code_of(response: httpx.Response) -> Optional[str]:
    try:
        return str(response.json()["error"]["code"])
    except (ValueError, KeyError, TypeError):
        return None


def retry_after_seconds(response: httpx.Response) -> Optional[float]:
    value = response.headers.get("Retry-After")
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def error_from(response: httpx.Response, *, idempotency_key: Optional[str] = None) -> MemoryHubError:
    """The envelope of a refused request as an exception (a body that is not one, as from
    a proxy in front of the hub, still gives the status)."""
    try:
        error = response.json()["error"]
        code, message, details = str(error["code"]), str(error.get("message") or ""), dict(error.get("details") or {})
    except (ValueError, KeyError, TypeError):
        code, message, details = f"HTTP_{response.status_code}", response.text[:500] or response.reason_phrase, {}
    cls = error_class(response.status_code)
    retry_after = retry_after_seconds(response)
    return cls(message, code=code, status=response.status_code, details=details, retry_after=retry_after, idempotency_key=idempotency_key)


# Building calls


def segment(value: Union[str, int]) -> str:
    """A path segment: client identifiers may hold `:` and `@` (docs/api.md, "Identifiers"), kept as is."""
    return quote(str(value), safe="-_.:@")


def body(**fields: Any) -> dict[str, Any]:
    """A JSON body of the fields given (None means "not given": the hub's default)."""
    return {name: jsonable(value) for name, value in fields.items() if value is not None}


def query(**fields: Any) -> dict[str, str]:
    """Query parameters: lists comma-separated, booleans lower-case, None left out."""
    params: dict[str, str] = {}
    for name, value in fields.items():
        if value is None:
            continue
        if isinstance(value, (list, tuple)):
            value = ",".join(str(v) for v in value)
        elif isinstance(value, bool):
            value = "true" if value else "false"
        elif hasattr(value, "isoformat"):
            value = value.isoformat()
        params[name] = str(value)
    return params


def jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    if isinstance(value, Mapping):
        return {key: jsonable(item) for key, item in value.items()}
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


@overload
def parser(model: None) -> Callable[[Any], None]: ...
@overload
def parser(model: type[T]) -> Callable[[Any], T]: ...
def parser(model: Optional[type[T]]) -> Callable[[Any], Optional[T]]:
    """Reads an answer's JSON as `model` (a pydantic model or any type pydantic knows)."""
    if model is None:
        return lambda data: None
    # Building an adapter costs a schema build: once per answer type, not once per call.
    adapter = _ADAPTERS.get(model)
    if adapter is None:
        adapter = _ADAPTERS[model] = TypeAdapter(model)
    return adapter.validate_python


_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


@overload
def call(model: None, method: str, path: str, *, params: Optional[dict[str, str]] = None, json: Any = None,
         timeout: Optional[float] = None) -> Call[None]: ...
@overload
def call(model: type[T], method: str, path: str, *, params: Optional[dict[str, str]] = None, json: Any = None,
         timeout: Optional[float] = None) -> Call[T]: ...
def call(model: Optional[type[T]], method: str, path: str, *, params: Optional[dict[str, str]] = None, json: Any = None,
         timeout: Optional[float] = None) -> Call[Any]:
    return Call(method=method, path=path, parse=parser(model), params=params or None, json=json, timeout=timeout)


# LangGraph checkpoints


def typed_value(kind: str, data: bytes) -> dict[str, str]:
    """A `serde.dumps_typed` pair as the hub takes it: the bytes base64."""
    return {"type": kind, "data": base64.b64encode(data).decode()}


def graph_list_call(
    *, thread_id: Optional[str], checkpoint_ns: Optional[str], checkpoint_id: Optional[str], before: Optional[str],
    filter: Optional[dict[str, Any]], limit: Optional[int], cursor: Optional[str],
) -> Call[Any]:
    params = query(
        thread_id=thread_id, checkpoint_ns=checkpoint_ns, checkpoint_id=checkpoint_id, before=before, limit=limit, cursor=cursor,
        filter=json.dumps(jsonable(filter), separators=(",", ":")) if filter else None,
    )
    return call(Page[GraphCheckpoint], "GET", "/api/v1/langgraph/checkpoints", params=params)


# Pagination


def next_page(call: Call[Any], cursor: str) -> Call[Any]:
    """The same list call for the page after `cursor`."""
    return Call(method=call.method, path=call.path, parse=call.parse, params={**(call.params or {}), "cursor": cursor}, json=call.json,
                timeout=call.timeout)


# The live feed


def events_call(*, session_id: Optional[str], kinds: Optional[list[str]], agent: Optional[str], filter_session_id: Optional[str]) -> tuple[str, dict[str, str]]:
    if session_id is not None:
        return f"/api/v1/sessions/{segment(session_id)}/events", query(kind=kinds or None)
    return "/api/v1/events", query(kind=kinds or None, agent=agent, session_id=filter_session_id)


def stream_headers(last_event_id: Optional[int]) -> dict[str, str]:
    headers = {"Accept": "text/event-stream", "Cache-Control": "no-cache"}
    if last_event_id is not None:
        headers["Last-Event-ID"] = str(last_event_id)
    return headers


STREAM_TIMEOUT = httpx.Timeout(10.0, read=STREAM_READ_TIMEOUT)
# The hub's last word on a stream it will not serve again (data: {"reason": …}).
END_EVENT = "end"


class SSEDecoder:
    """Server-Sent Events, one line at a time (the WHATWG rules the hub needs: id, event,
    data over several lines, comments)."""

    def __init__(self) -> None:
        self.fields: dict[str, str] = {}
        self.data: list[str] = []

    def feed(self, line: str) -> Optional[Event]:
        line = line.rstrip("\r\n")
        if line == "":
            event = self._dispatch()
            self.fields, self.data = {}, []
            return event
        if line.startswith(":"):
            return None  # a keep-alive
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            self.data.append(value)
        elif name in ("id", "event", "retry"):
            self.fields[name] = value
        return None

    def _dispatch(self) -> Optional[Event]:
        if not self.data and "event" not in self.fields:
            return None
        raw = "\n".join(self.data)
        try:
            data: Any = json.loads(raw) if raw else None
        except ValueError:
            data = raw
        event_id = self.fields.get("id", "")
        return Event(id=int(event_id) if event_id.isdigit() else None, kind=self.fields.get("event") or "message", data=data)


class StreamState:
    """Reconnection state of `stream_events`: the last id seen, and the failures since
    the last event (the policy's max_attempts of them in a row end the stream)."""

    def __init__(self, policy: RetryPolicy, last_event_id: Optional[int]) -> None:
        self.policy = policy
        self.last_event_id = last_event_id
        self.failures = 0

    def seen(self, event: Event) -> None:
        if event.id is not None:
            self.last_event_id = event.id
        self.failures = 0

    def after_drop(self, error: Optional[BaseException]) -> float:
        """The stream ended or broke: how long to wait before reconnecting."""
        self.failures += 1
        if self.failures >= self.policy.max_attempts:
            raise ConnectionFailed(f"the event stream kept failing: {error!r}", code="CONNECTION_ERROR") from error
        return self.policy.delay(self.failures)

    def after_refusal(self, response: httpx.Response) -> float:
        """The stream did not open: wait and retry (429, 503), or raise."""
        self.failures += 1
        if response.status_code in (429, 502, 503, 504) and self.failures < self.policy.max_attempts:
            retry_after = retry_after_seconds(response)
            if retry_after is None:
                return self.policy.delay(self.failures)
            if retry_after <= self.policy.max_retry_after:
                return retry_after
        raise error_from(response)


def approval_wait(remaining: float) -> int:
    """The `wait` of the next long poll: what is left of the timeout, at least 1 s (the
    hub ignores 0) and at most what the hub holds."""
    return max(1, min(MAX_WAIT, int(remaining + 0.999)))



# The operations of /api/schema/ each client method makes (tests/test_client_coverage.py
# checks that every operation has one).


def operation(*operations: str) -> Callable[[F], F]:
    """Marks a client method with the operations ("METHOD /api/v1/path") it calls."""

    def mark(method: F) -> F:
        method.__memoryhub_operations__ = operations  # type: ignore[attr-defined]
        return method

    return mark


def operations_of(hub_class: type) -> dict[str, set[str]]:
    """Every operation a client class makes, with the methods ("memories.create") making it."""
    found: dict[str, set[str]] = {}
    resources: dict[str, type] = getattr(hub_class, "resources")
    owners: list[tuple[str, type]] = [("", hub_class), *((f"{name}.", cls) for name, cls in resources.items())]
    for prefix, owner in owners:
        for name in dir(owner):
            for op in getattr(getattr(owner, name), "__memoryhub_operations__", ()):
                found.setdefault(op, set()).add(prefix + name)
    return found
