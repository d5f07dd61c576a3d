"""One exception handler: every API error is {"error": {"code", "message", "details"}}."""

from __future__ import annotations

import logging
import math
from typing import Any

import psycopg
from django.core.exceptions import PermissionDenied, RequestDataTooBig, SuspiciousOperation
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import DatabaseError
from django.http import Http404
from rest_framework import exceptions
from rest_framework.response import Response

from memoryhub.core.errors import ApplicationError
from memoryhub.privacy.fence import PURGE_IN_PROGRESS_SQLSTATE
from memoryhub.serving import outages, time_limits
from memoryhub.serving.http_errors import envelope, payload_too_large_message

logger = logging.getLogger(__name__)

DRF_CODES: dict[type[exceptions.APIException], str] = {
    exceptions.ParseError: "MALFORMED_JSON",
    exceptions.ValidationError: "VALIDATION_ERROR",
    exceptions.NotAuthenticated: "UNAUTHENTICATED",
    exceptions.AuthenticationFailed: "UNAUTHENTICATED",
    exceptions.PermissionDenied: "FORBIDDEN",
    exceptions.NotFound: "NOT_FOUND",
    exceptions.MethodNotAllowed: "METHOD_NOT_ALLOWED",
    exceptions.NotAcceptable: "NOT_ACCEPTABLE",
    exceptions.UnsupportedMediaType: "UNSUPPORTED_MEDIA_TYPE",
    exceptions.Throttled: "RATE_LIMITED",
}


def _sqlstate(exc: Exception) -> str | None:
    # Django wraps psycopg's errors (the original is the cause); the COPY path raises them bare.
    if isinstance(exc, psycopg.Error):
        return exc.sqlstate
    if isinstance(exc, DatabaseError) and isinstance(exc.__cause__, psycopg.Error):
        return exc.__cause__.sqlstate
    return None


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    from django.conf import settings

    if isinstance(exc, ApplicationError):
        return Response(envelope(exc.code, exc.message, exc.details), status=exc.status_code, headers=exc.headers or None)
    if isinstance(exc, RequestDataTooBig):
        limit = settings.MEMORYHUB_MAX_BODY_BYTES
        return Response(envelope("PAYLOAD_TOO_LARGE", payload_too_large_message(limit), {"limit_bytes": limit}), status=413)
    if _sqlstate(exc) == PURGE_IN_PROGRESS_SQLSTATE:
        # The purge fence refused a write about a user being erased (privacy/fence.py).
        return Response(
            envelope("PURGE_IN_PROGRESS", "Records about this user are being purged; nothing was written. Retry once the purge has ended."),
            status=409, headers={"Retry-After": "5"},
        )
    if time_limits.timed_out(exc):
        return Response(envelope(time_limits.CODE, time_limits.timeout_message(), time_limits.timeout_details()), status=503)
    if service := outages.unavailable_service(exc):
        outages.log(service, exc, context["request"].path if context.get("request") else "")
        answer = Response(outages.body(service), status=503, headers=outages.headers())
        answer._has_been_logged = True  # type: ignore[attr-defined]  # outages.log() said it in one line
        return answer
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(detail=exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages})
    elif isinstance(exc, SuspiciousOperation):
        exc = exceptions.ParseError(str(exc) or "The request was malformed.")
    if not isinstance(exc, exceptions.APIException):
        return None  # a bug: let Django log it and answer 500 (handler500 keeps the envelope)

    code = next((c for cls, c in DRF_CODES.items() if isinstance(exc, cls)), None)
    if code is None:
        code = str(exc.default_code).upper()
    if isinstance(exc, exceptions.AuthenticationFailed) and exc.get_codes() == "KEY_IN_QUERY_STRING":
        code = "KEY_IN_QUERY_STRING"
    if isinstance(exc, exceptions.ValidationError):
        details: dict[str, Any] = {"fields": exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}}
        message = _first_message(exc.detail) or "Invalid input."
    else:
        details = {}
        message = str(exc.detail)
    headers = {}
    if auth_header := getattr(exc, "auth_header", None):
        headers["WWW-Authenticate"] = auth_header
    if wait := getattr(exc, "wait", None):
        headers["Retry-After"] = str(math.ceil(wait))  # whole seconds, never 0 while waiting is due
    status = exc.status_code
    if isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed)):
        status = 401
        headers.setdefault("WWW-Authenticate", 'Bearer realm="memoryhub"')
    return Response(envelope(code, message, details), status=status, headers=headers)


def _first_message(detail: Any) -> str | None:
    if isinstance(detail, dict):
        for key, value in detail.items():
            inner = _first_message(value)
            if inner:
                return inner if key == "non_field_errors" else f"{key}: {inner}"
        return None
    if isinstance(detail, list):
        for item in detail:
            inner = _first_message(item)
            if inner:
                return inner
        return None
    return str(detail)
