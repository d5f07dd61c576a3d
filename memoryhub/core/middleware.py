"""Middleware of our own."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth import logout
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse

from memoryhub.platform import request_id


class SyncChain:
    """Sync-only, and last: every middleware above it then runs in sync mode, in the one
    thread Django gives the request, instead of hopping between the event loop and a
    worker thread around each old-style middleware hook (about a dozen hops per request
    in async mode, several milliseconds together; see docs/operations/background-work.md, "Background work")."""

    sync_capable = True
    async_capable = False

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)


LOGIN_AT = "memoryhub_login_at"


class SessionLifetime:
    """A console session ends MEMORYHUB_SESSION_MAX_HOURS after its login, however busy
    it is (the idle limit is the cookie's age). API requests carry keys, not sessions,
    and pass untouched."""

    sync_capable = True
    async_capable = False

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            now = time.time()
            started = request.session.setdefault(LOGIN_AT, now)
            if now - started > settings.MEMORYHUB_SESSION_MAX_HOURS * 3600:
                logout(request)
                return redirect_to_login(request.get_full_path())
        return self.get_response(request)


def session_started(sender: Any, request: HttpRequest, user: Any, **_: Any) -> None:
    """user_logged_in: the absolute lifetime counts from here."""
    request.session[LOGIN_AT] = time.time()


class RequestId:
    """First of all: binds the request id (memoryhub/platform/request_id.py) for every log line
    of the request and every task it starts, and echoes it in `X-Request-ID`."""

    sync_capable = True
    async_capable = False

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        value = request_id.accepted(request.headers.get(request_id.HEADER)) or request_id.new()
        request.request_id = value  # type: ignore[attr-defined]
        # Left bound when the chain returns: Django logs a 4xx/5xx after the middleware
        # (BaseHandler.get_response), and under ASGI asgiref carries the binding back to
        # the request's own task, which ends with the request. The next request in a
        # thread binds its own first.
        request_id.bind(value)
        response = self.get_response(request)
        response[request_id.HEADER] = value
        return response
