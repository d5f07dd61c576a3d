"""The request id: one per HTTP request, in every log line written while it is served
and in the background tasks it starts (docs/operations/logs-and-metrics.md, "Logs and metrics").

Taken from the caller's `X-Request-ID` when that is a sane token (a proxy or a client
tracing its own calls), else made here; echoed in the response's `X-Request-ID`.
Tasks carry it as a message header (`request_id`) and bind it while they run.
"""

from __future__ import annotations

import logging
import re
import uuid
from contextvars import ContextVar, Token
from typing import Any

import pythonjsonlogger.json

HEADER = "X-Request-ID"
TASK_HEADER = "request_id"
# Letters, digits and a few separators, up to 128: what tracing systems send (UUIDs,
# W3C trace ids, "req-123"); anything else (spaces, quotes, control characters that
# could forge log lines) is replaced by an id of our own.
_VALID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/+=@-]{0,127}")

_current: ContextVar[str | None] = ContextVar("memoryhub_request_id", default=None)


def accepted(value: str | None) -> str | None:
    """`value` if it may serve as a request id, else None."""
    return value if value and _VALID.fullmatch(value) else None


def new() -> str:
    return uuid.uuid4().hex


def current() -> str | None:
    return _current.get()


def bind(value: str | None) -> Token[str | None]:
    return _current.set(value)


def unbind(token: Token[str | None]) -> None:
    _current.reset(token)


class RequestIdFilter(logging.Filter):
    """Gives every record a `request_id` (empty outside a request or task), for the
    JSON formatter."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not getattr(record, "request_id", None):
            record.request_id = _current.get() or ""
        return True


def from_task_request(request: Any) -> str | None:
    """The id a task message carries: Celery puts custom headers on the request, or in
    its `headers` (in-process `apply`)."""
    value = getattr(request, TASK_HEADER, None) or (getattr(request, "headers", None) or {}).get(TASK_HEADER)
    return accepted(value) if isinstance(value, str) else None


_PLAIN = (str, int, float, bool, type(None))


# Extras meant for a terminal: uvicorn's message again with colour codes.
_TERMINAL_ONLY = frozenset({"color_message"})


class JsonFormatter(pythonjsonlogger.json.JsonFormatter):
    """python-json-logger's formatter, keeping only plain values among a record's
    extras: an object's repr can hold what logs must not (Django's `request` extra shows
    the full path, query string and a misplaced key included)."""

    def add_fields(self, log_data: dict[str, Any], record: logging.LogRecord, message_dict: dict[str, Any]) -> None:
        super().add_fields(log_data, record, message_dict)
        for key in [key for key, value in log_data.items() if not isinstance(value, _PLAIN) or key in _TERMINAL_ONLY]:
            if key in record.__dict__ and key not in ("exc_info", "stack_info"):
                del log_data[key]
