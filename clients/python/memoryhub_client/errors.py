"""Errors: every answer the hub refuses becomes a `MemoryHubError` carrying the envelope
(docs/api.md, "Errors"): `{"error": {"code", "message", "details"}}`."""

from __future__ import annotations

from typing import Any, Optional


class MemoryHubError(Exception):
    """A refused request (`status` set) or a hub that could not be reached (`status`
    None, code CONNECTION_ERROR)."""

    def __init__(
        self, message: str, *, code: str, status: Optional[int] = None, details: Optional[dict[str, Any]] = None,
        retry_after: Optional[float] = None, idempotency_key: Optional[str] = None,
    ) -> None:
        super().__init__(f"{status or '-'} {code}: {message}")
        self.message = message
        self.code = code
        self.status = status
        self.details = details or {}
        self.retry_after = retry_after
        # The Idempotency-Key the call went out with: resend it to make sure of a POST
        # whose answer was lost.
        self.idempotency_key = idempotency_key


class BadRequest(MemoryHubError):
    """400: malformed or invalid input (`details.fields` names the fields)."""


class AuthenticationError(MemoryHubError):
    """401: missing, invalid, expired or revoked key."""


class PermissionDenied(MemoryHubError):
    """403: the key may not do this (an operator key where an agent key is needed…)."""


class NotFound(MemoryHubError):
    """404: absent, or not the caller's to see."""


class Conflict(MemoryHubError):
    """409: a stale version (`details.current_version`), an invalid transition, a decision
    already taken, a purge in progress."""


class PayloadTooLarge(MemoryHubError):
    """413."""


class UnprocessableEntity(MemoryHubError):
    """422: e.g. IDEMPOTENCY_KEY_REUSED."""


class RateLimited(MemoryHubError):
    """429 that outlasted the retries, or whose Retry-After was longer than the policy
    allows waiting; `retry_after` in seconds."""


class ServerError(MemoryHubError):
    """5xx: 503 when the embedding model or the summariser did not answer (nothing
    changed); a 500 is a bug of the hub."""


class ConnectionFailed(MemoryHubError):
    """The hub could not be reached, or the connection broke, on every attempt."""


_BY_STATUS: dict[int, type[MemoryHubError]] = {
    400: BadRequest, 401: AuthenticationError, 403: PermissionDenied, 404: NotFound, 409: Conflict, 413: PayloadTooLarge,
    422: UnprocessableEntity, 429: RateLimited,
}


def error_class(status: int) -> type[MemoryHubError]:
    if status >= 500:
        return ServerError
    return _BY_STATUS.get(status, MemoryHubError)
