"""A limit on failed console logins per address, across usernames.

django-axes locks a username at an address after MEMORYHUB_LOGIN_FAILURE_LIMIT
failures; one address trying many usernames (password spraying) stays under that for
each. This backend, first in AUTHENTICATION_BACKENDS, refuses every login from an
address that failed MEMORYHUB_LOGIN_ADDRESS_LIMIT times within the cool-off period.
The counts live in Django's cache (Redis when REDIS_URL is set)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest


def _address(request: HttpRequest | None) -> str | None:
    # REMOTE_ADDR only: a forwarded-for header is whatever the client says it is.
    return request.META.get("REMOTE_ADDR") if request is not None else None


def _cache_key(address: str) -> str:
    return f"login-failures:{address}"


class AddressLimitBackend:
    # Authenticates no one and has no get_user: Django's force_login (and the session's
    # user lookup) use the first backend that has one, and this must not be it.

    def authenticate(self, request: HttpRequest | None, **credentials: Any) -> None:
        address = _address(request)
        if address and cache.get(_cache_key(address), 0) >= settings.MEMORYHUB_LOGIN_ADDRESS_LIMIT:
            raise PermissionDenied("Too many failed logins from this address.")  # ends authenticate(): no backend is asked
        return None


def count_failure(sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **_: Any) -> None:
    """user_login_failed: one more failure for the address, for the cool-off period."""
    address = _address(request)
    if not address:
        return
    key = _cache_key(address)
    if not cache.add(key, 1, timeout=int(settings.AXES_COOLOFF_TIME.total_seconds())):
        cache.incr(key)
