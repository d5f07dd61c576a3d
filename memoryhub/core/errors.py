"""The one application error type. The API's exception handler renders it in the
contract's envelope: {"error": {"code", "message", "details"}}."""

from __future__ import annotations

from typing import Any


class ApplicationError(Exception):
    status_code = 400

    def __init__(self, message: str, *, code: str = "BAD_REQUEST", status: int | None = None, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        if status is not None:
            self.status_code = status
        self.details = details or {}
        # Sent with the answer (a 429's Retry-After).
        self.headers: dict[str, str] = {}


class NotFound(ApplicationError):
    def __init__(self, message: str = "Not found.", *, code: str = "NOT_FOUND", details: dict[str, Any] | None = None) -> None:
        super().__init__(message, code=code, status=404, details=details)


class Conflict(ApplicationError):
    def __init__(self, message: str, *, code: str = "CONFLICT", details: dict[str, Any] | None = None) -> None:
        super().__init__(message, code=code, status=409, details=details)


class Forbidden(ApplicationError):
    def __init__(self, message: str = "You may not do this.", *, code: str = "FORBIDDEN", details: dict[str, Any] | None = None) -> None:
        super().__init__(message, code=code, status=403, details=details)
