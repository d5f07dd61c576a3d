"""Errors both front ends answer with: the contract's JSON envelope under /api/ (and
from the ASGI body-size guard), the console's HTML error page elsewhere.

A project-level module, beside urls.py: it sits above the API and the console, which
must not import each other (docs/concepts.md, "The layers")."""

from __future__ import annotations

from typing import Any

import orjson
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render


def envelope(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or {}}}


async def envelope_send(
    send: Any, status: int, payload: dict[str, Any], *, retry_after: int | None = None, close: bool = False,
) -> None:
    """Answer an ASGI request with a JSON envelope, from the layers around Django (body
    guard, streams, outages)."""
    body = orjson.dumps(payload)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if retry_after is not None:
        headers.append((b"retry-after", str(retry_after).encode()))
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def payload_too_large_message(limit: int) -> str:
    return f"The request body is larger than the limit of {limit} bytes."


def is_api_path(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def json_error_response(status: int, code: str, message: str, details: dict[str, Any] | None = None) -> JsonResponse:
    return JsonResponse(envelope(code, message, details), status=status)


def error_page(request: HttpRequest, status: int, message: str) -> HttpResponse:
    return render(request, "console/error.html", {"status": status, "message": message}, status=status)


def _error(request: HttpRequest, status: int, code: str, message: str) -> HttpResponse:
    if is_api_path(request):
        return json_error_response(status, code, message)
    return error_page(request, status, message)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _error(request, 400, "BAD_REQUEST", "The request was malformed.")


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    message = str(exception) if exception and str(exception) else "You may not see this page."
    return _error(request, 403, "FORBIDDEN", message)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _error(request, 404, "NOT_FOUND", "There is nothing at this address.")
