"""Rate limits per API key (security review, finding 4).

One budget per key and kind of request: reads, writes, searches (they embed the query
and scan vectors), tool calls (they run redaction over outputs) and purges. The counts
live in Django's cache: one process's memory by default, Redis when REDIS_URL is set, so
hosts share them. Rates come from settings on every request (MEMORYHUB_RATE_*)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from memoryhub.core.rate_limits import rate_limit_key


class KeyRateThrottle(SimpleRateThrottle):
    """A view names its kind in `throttle_scope` (or `throttle_scopes`, by method);
    otherwise safe methods are reads and the others writes."""

    def __init__(self) -> None:
        pass  # the scope, and so the rate, are known per request (allow_request)

    def allow_request(self, request: Request, view: Any) -> bool:
        scopes = getattr(view, "throttle_scopes", {})
        self.scope = scopes.get(request.method) or getattr(view, "throttle_scope", None) or (
            "reads" if request.method in ("GET", "HEAD", "OPTIONS") else "writes"
        )
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)

    def get_rate(self) -> str:
        return settings.MEMORYHUB_RATES[self.scope]

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        principal = request.user
        if not getattr(principal, "is_authenticated", False):
            return None  # refused by authentication anyway
        return rate_limit_key(scope=self.scope, credential=principal.credential)
