"""No request holds the database for long: every statement of an agent's request (REST
under /api/v1/, MCP tools) runs under PostgreSQL's `statement_timeout`
(MEMORYHUB_STATEMENT_TIMEOUT_MS, 30 s by default; 0 turns it off). A statement that runs
longer is cancelled by the server itself, whatever the hub's code asked, and the caller
gets 503 `QUERY_TIMEOUT` in the contract's envelope instead of a 500.

The limit belongs to the work, not to the connection: background jobs, the console, the
streams and management commands, whose long statements are expected (a purge, an import,
an index build), never run under it, though they share the pool with the API. Each pooled
connection remembers the limit it has; when a thread takes one from the pool (Django's
`connection_created`, sent at every checkout), the limit is set if the thread is serving
an agent's request and the connection has none, and lifted if it is not and the
connection has one. A pool that serves mostly the API keeps its connections limited: no
statement is added to a request (a search is three), only to the rare checkout that
switches. A project-level module, as outages.py is: the REST API and the MCP endpoint
both apply it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import psycopg
from django.conf import settings
from django.db import DatabaseError, connection
from django.db.backends.signals import connection_created
from django.http import HttpRequest, HttpResponse

from memoryhub.serving.http_errors import json_error_response

API_PREFIX = "/api/v1/"
QUERY_CANCELED = "57014"  # SQLSTATE of a statement cancelled by statement_timeout (or by hand)
CODE = "QUERY_TIMEOUT"
# The limit a pooled connection has (ms; 0 none), kept on the connection itself.
_HAS = "memoryhub_statement_timeout"

_serving_agent: ContextVar[bool] = ContextVar("memoryhub_serving_agent", default=False)


def _wanted() -> int:
    return max(0, int(settings.MEMORYHUB_STATEMENT_TIMEOUT_MS)) if _serving_agent.get() else 0


def _fit(raw: Any) -> None:
    """The connection's limit made the one the current work wants."""
    wanted = _wanted()
    if getattr(raw, _HAS, 0) != wanted:
        # SET takes no bind parameters: the value is an int from the settings.
        raw.execute(f"SET statement_timeout = {wanted}")
        setattr(raw, _HAS, wanted)


def _on_checkout(sender: Any, connection: Any, **kwargs: Any) -> None:
    if connection.vendor == "postgresql" and connection.connection is not None:
        _fit(connection.connection)


connection_created.connect(_on_checkout, dispatch_uid="memoryhub.serving.time_limits")


@contextmanager
def statement_limit() -> Iterator[None]:
    """Inside, the thread serves an agent: its statements run for at most
    MEMORYHUB_STATEMENT_TIMEOUT_MS (on the connection it takes from the pool, or the one
    it holds already)."""
    token = _serving_agent.set(True)
    try:
        if connection.connection is not None:
            _fit(connection.connection)
        yield
    finally:
        _serving_agent.reset(token)


def timed_out(exc: BaseException | None) -> bool:
    """Whether `exc` (or what caused it) is a statement cancelled by its time limit."""
    while exc is not None:
        if isinstance(exc, psycopg.Error) and exc.sqlstate == QUERY_CANCELED:
            return True
        exc = exc.__cause__ if isinstance(exc, DatabaseError) else None
    return False


def timeout_message() -> str:
    seconds = settings.MEMORYHUB_STATEMENT_TIMEOUT_MS / 1000
    return (f"This request's database work took longer than the hub allows one request ({seconds:g} s) and was stopped. "
            "Ask for less (a smaller limit, a narrower filter) or retry later.")


def timeout_details() -> dict[str, Any]:
    return {"timeout_ms": settings.MEMORYHUB_STATEMENT_TIMEOUT_MS}


class StatementTimeLimit:
    """Every request of the API's, /api/v1/, serves an agent (its views map the cancelled
    statement to 503 QUERY_TIMEOUT: agents_api/errors.py)."""

    sync_capable = True
    async_capable = False

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith(API_PREFIX):
            return self.get_response(request)
        with statement_limit():
            return self.get_response(request)


def timeout_response() -> HttpResponse:
    return json_error_response(503, CODE, timeout_message(), timeout_details())
