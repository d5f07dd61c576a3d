"""Middleware of our own."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse


class SyncChain:
    """Sync-only, and last: every middleware above it then runs in sync mode, in the one
    thread Django gives the request, instead of hopping between the event loop and a
    worker thread around each old-style middleware hook (about a dozen hops per request
    in async mode, several milliseconds together; see README, "Background work")."""

    sync_capable = True
    async_capable = False

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)
