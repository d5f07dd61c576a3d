"""A dependency that is down (PostgreSQL, Redis) is an outage, not a bug: the caller gets
503 `SERVICE_UNAVAILABLE` with `Retry-After` in the contract's envelope (an HTML page in
the console), the log gets one warning line instead of a traceback, and nothing restarts:
the connection pool checks each connection it hands out and reconnects by itself.

Three places map them, because an exception can surface in three layers: DRF's exception
handler (API views), Django's handler500 (middleware and console pages), and
`OutageGuard` around the whole ASGI application (the streams and long polls that run
beside Django). A project-level module, beside http_errors.py, for the same reason.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

import psycopg
from django.db import InterfaceError as DjangoInterfaceError
from django.db import OperationalError as DjangoOperationalError
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

from memoryhub.serving import time_limits
from memoryhub.serving.http_errors import envelope, envelope_send, error_page, is_api_path, json_error_response
from memoryhub.serving.relay import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
CODE = "SERVICE_UNAVAILABLE"
MESSAGE = "A service the hub depends on ({}) is unreachable; nothing was done. Retry in a few seconds."

# SQLSTATEs of a server that is gone or going: connection exceptions (class 08) and
# admin/crash shutdown, "cannot connect now" (starting up). Other OperationalErrors
# (a cancelled statement, a lock timeout) are about the request, not the server.
_DOWN_SQLSTATES = ("08", "57P01", "57P02", "57P03")


def _psycopg_down(exc: BaseException) -> bool:
    if not isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)):
        return False
    state = getattr(exc, "sqlstate", None)
    # No SQLSTATE: the client could not reach the server at all (refused, socket gone,
    # pool timeout: psycopg_pool.PoolTimeout is an OperationalError).
    return state is None or state.startswith(_DOWN_SQLSTATES)


def _redis_down(exc: BaseException) -> bool:
    try:
        import redis.exceptions
        from kombu.exceptions import OperationalError as KombuOperationalError
    except ImportError:  # pragma: no cover - both are requirements
        return False
    return isinstance(exc, (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, KombuOperationalError))


def unavailable_service(exc: BaseException | None) -> str | None:
    """"database" or "redis" if `exc` (or what caused it) says that service is down."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if _psycopg_down(exc):
            return "database"
        if isinstance(exc, (DjangoOperationalError, DjangoInterfaceError)) and exc.__cause__ is None:
            return "database"  # Django's own "connection already closed"
        if _redis_down(exc):
            return "redis"
        exc = exc.__cause__ or exc.__context__
    return None


def headers() -> dict[str, str]:
    return {"Retry-After": str(RETRY_AFTER_SECONDS)}


def body(service: str) -> dict[str, Any]:
    return envelope(CODE, MESSAGE.format(service), {"service": service, "retry_after_seconds": RETRY_AFTER_SECONDS})


def log(service: str, exc: BaseException, where: str) -> None:
    logger.warning("%s unavailable (%s: %s): answered 503 to %s", service, type(exc).__name__, str(exc).splitlines()[0] if str(exc) else "", where)


def response(request: HttpRequest, service: str) -> HttpResponse:
    """The answer of a Django view or middleware: the envelope under /api/, a page elsewhere
    (rendered without the request: its context processors would ask the database again)."""
    if is_api_path(request) or request.path == "/healthz":
        answer = HttpResponse(json.dumps(body(service)), status=503, content_type="application/json")
    else:
        page = render_to_string("console/unavailable.html", {"service": service, "retry_after": RETRY_AFTER_SECONDS})
        answer = HttpResponse(page, status=503)
    for name, value in headers().items():
        answer[name] = value
    # log() said it in one line; Django would log this 5xx again with the traceback.
    answer._has_been_logged = True  # type: ignore[attr-defined]
    return answer


class OutageGuard:
    """Around the ASGI application: an outage that escapes a stream, a long poll or the
    MCP endpoint becomes a 503 in the envelope if nothing was sent yet; a stream already
    under way just ends (the client reconnects with Last-Event-ID)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as exc:
            service = unavailable_service(exc)
            if service is None:
                raise
            log(service, exc, scope.get("path", ""))
            if started:  # end the body, so that the server closes the response cleanly
                try:
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                except Exception:  # noqa: BLE001 - the client may be gone already
                    pass
                return
            await envelope_send(send, 503, body(service), retry_after=RETRY_AFTER_SECONDS)


def server_error(request: HttpRequest) -> HttpResponse:
    # Django calls this inside its `except` block, so the exception is still at hand: an
    # outage of the database or Redis in a middleware or a console view is a 503.
    exc = sys.exc_info()[1]
    if service := unavailable_service(exc):
        log(service, exc, request.path)
        return response(request, service)
    if is_api_path(request) and time_limits.timed_out(exc):
        return time_limits.timeout_response()
    if is_api_path(request):
        return json_error_response(500, "INTERNAL_ERROR", "Something went wrong on our side; it has been logged.")
    return error_page(request, 500, "Something went wrong on our side.")
