"""Counts and times every request Django answers, by route template (never the raw
path: ids would make a time series per entry)."""

from __future__ import annotations

import time
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from memoryhub.core import metrics

METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}


def route_of(request: HttpRequest) -> str:
    match = getattr(request, "resolver_match", None)
    if match is not None:
        return "/" + match.route if match.route else "/"
    if request.path.startswith("/" + settings.STATIC_URL.lstrip("/")):
        return "static"
    return "unmatched"


class RequestMetrics:
    sync_capable = True
    async_capable = False

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        elapsed = time.perf_counter() - started
        method = request.method if request.method in METHODS else "other"
        route = route_of(request)
        metrics.REQUEST_SECONDS.labels(method, route).observe(elapsed)
        metrics.REQUESTS.labels(method, route, str(response.status_code)).inc()
        return response
