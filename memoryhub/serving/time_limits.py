"""No request holds the database for long: every statement of an agent's request (REST
under /api/, MCP tools) runs under PostgreSQL's `statement_timeout`
(MEMORYHUB_STATEMENT_TIMEOUT_MS, 30 s by default; 0 turns it off). A statement that runs
longer is cancelled by the server itself, whatever the hub's code asked, and the caller
gets 503 `QUERY_TIMEOUT` in the contract's envelope instead of a 500.

The limit is set on the request's pooled connection when the request starts and taken
off when it ends, before the connection goes back to the pool, so background jobs, the
console and management commands, whose long statements are expected (a purge, an
import, a migration), never inherit it: two short statements a request. (The pool's
`reset` callback would save the second, but it defers every return of a connection to
the pool's worker thread, which Django's test databases and its error wrapping do not
expect.) A project-level module, as outages.py is: the REST API and the MCP endpoint
both apply it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse
from psycopg.pq import TransactionStatus

from memoryhub.serving.http_errors import json_error_response

API_PREFIX = "/api/v1/"
QUERY_CANCELED = "57014"  # SQLSTATE of a statement cancelled by statement_timeout (or by hand)
CODE = "QUERY_TIMEOUT"


@contextmanager
def statement_limit() -> Iterator[None]:
    """Inside, this thread's connection runs each statement for at most
    MEMORYHUB_STATEMENT_TIMEOUT_MS."""
    milliseconds = settings.MEMORYHUB_STATEMENT_TIMEOUT_MS
    if milliseconds <= 0:
        yield
        return
    with connection.cursor() as cursor:
        # SET takes no bind parameters: the value is an int from the settings.
        cursor.execute(f"SET statement_timeout = {int(milliseconds)}")
    try:
        yield
    finally:
        _lift()


def _lift() -> None:
    raw = connection.connection
    # A connection that broke is not going back to the pool; one in a failed transaction
    # (a test's, around its requests) drops the SET with that transaction.
    if raw is None or raw.closed or raw.info.transaction_status == TransactionStatus.INERROR:
        return
    with connection.cursor() as cursor:
        cursor.execute("RESET statement_timeout")


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
    """Sets the limit for every request of the API's, /api/v1/ (its views map the cancelled
    statement to 503 QUERY_TIMEOUT: agents_api/errors.py); its schema and docs pages read
    no database and take no connection."""

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
