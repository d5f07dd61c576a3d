"""Rate limits per credential and kind of request (MEMORYHUB_RATES), for the front ends
that are not DRF views (the MCP endpoint). The REST API's throttle (agents_api/throttling.py,
DRF's SimpleRateThrottle) keeps the same entries in Django's cache, under the same keys and
in the same form (the times of the requests in the window, newest first), so a key has one
budget per kind whichever front end it calls."""

from __future__ import annotations

import time

from django.conf import settings
from django.core.cache import cache

PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def rate_limit_key(*, scope: str, credential: str) -> str:
    return f"throttle:{scope}:{credential}"


def rate_limit_take(*, scope: str, credential: str) -> float | None:
    """Count one request of kind `scope` for `credential`: None when it is within the
    rate, else the seconds until one more would be (nothing is counted then)."""
    count, period = settings.MEMORYHUB_RATES[scope].split("/")
    allowed, duration = int(count), PERIODS[period[0]]
    key, now = rate_limit_key(scope=scope, credential=credential), time.time()
    history: list[float] = cache.get(key, [])
    while history and history[-1] <= now - duration:
        history.pop()
    if len(history) >= allowed:
        return max(duration - (now - history[-1]), 0.001)
    history.insert(0, now)
    cache.set(key, history, duration)
    return None
