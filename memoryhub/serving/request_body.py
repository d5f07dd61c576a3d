"""The request body, before Django reads a byte of it: how large it may be, who may send
a large one, and how long it may take to arrive.

Django's ASGI handler spools the whole body before any middleware runs, so limits kept
in Django would accept gigabytes first, from anyone. Here:

- a body over MEMORYHUB_MAX_BODY_BYTES is refused with 413: a declared Content-Length at
  once, a chunked body as soon as it crosses the limit;
- a body larger than MEMORYHUB_ANONYMOUS_BODY_BYTES (64 KB), or chunked, is read only
  for a caller with a usable key or a logged-in console session (401 otherwise, before
  any of it is read): eight never-finished 31 MiB uploads of nobody held 195 MB;
- a body must keep coming: MEMORYHUB_BODY_IDLE_SECONDS at most between two parts,
  MEMORYHUB_BODY_SECONDS in all, or the answer is 408 and the connection closes;
- chunked bodies (which this layer must hold to give Django a length) share
  MEMORYHUB_BUFFERED_BODY_BYTES in all; beyond it, 503 with Retry-After.

(How long the request line and headers may take is uvicorn's part: memoryhub/serving/deadlines.py.)
"""

from __future__ import annotations

import asyncio
from http.cookies import CookieError, SimpleCookie
from typing import Any

from django.conf import settings

from memoryhub.core import live
from memoryhub.core.selectors import caller_known
from memoryhub.serving.http_errors import envelope, envelope_send, payload_too_large_message
from memoryhub.serving.relay import ASGIApp, Message, Receive, Scope, Send, in_worker

DRAIN_SECONDS = 1.0


class RequestBodyGuard:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        chunked = declared is None and b"chunked" in headers.get(b"transfer-encoding", b"").lower()
        size = int(declared) if declared is not None and declared.isdigit() else 0
        if size > settings.MEMORYHUB_MAX_BODY_BYTES:
            await _answer(send, 413, "PAYLOAD_TOO_LARGE", payload_too_large_message(settings.MEMORYHUB_MAX_BODY_BYTES),
                          {"limit_bytes": settings.MEMORYHUB_MAX_BODY_BYTES})
            return
        if not chunked and size == 0:
            await self.app(scope, receive, send)  # no body: nothing to guard (streams and long polls among them)
            return
        if (chunked or size > settings.MEMORYHUB_ANONYMOUS_BODY_BYTES) and not await _caller_known(headers):
            await _answer(send, 401, "UNAUTHENTICATED", "A body this large needs a valid key (Authorization: Bearer …) or a console login.")
            return
        timed = _TimedBody(receive, send)
        if chunked:
            await self._buffered(scope, timed, send)
        else:
            await self.app(scope, timed.receive, timed.send)

    async def _buffered(self, scope: Scope, timed: _TimedBody, send: Send) -> None:
        """A chunked body, held whole (Django reads exactly Content-Length bytes, 0 if absent)."""
        chunks: list[bytes] = []
        size = held = 0
        try:
            while True:
                message = await timed.receive()
                if message["type"] != "http.request":
                    return  # the client went away, or took too long (answered)
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > settings.MEMORYHUB_MAX_BODY_BYTES:
                    await timed.drain()
                    await _answer(send, 413, "PAYLOAD_TOO_LARGE", payload_too_large_message(settings.MEMORYHUB_MAX_BODY_BYTES),
                                  {"limit_bytes": settings.MEMORYHUB_MAX_BODY_BYTES})
                    return
                if live.gauges.buffered_body_bytes + len(chunk) > settings.MEMORYHUB_BUFFERED_BODY_BYTES:
                    await timed.drain()
                    await _answer(send, 503, "BUSY", "The hub holds as many chunked bodies as it may; send again shortly, or with a Content-Length.",
                                  retry_after=5)
                    return
                live.gauges.buffered_body_bytes += len(chunk)
                held += len(chunk)
                chunks.append(chunk)
                if not message.get("more_body", False):
                    break
            body = b"".join(chunks)
            del chunks
            headers = [(k, v) for k, v in scope.get("headers", []) if k not in (b"content-length", b"transfer-encoding")]
            scope = {**scope, "headers": [*headers, (b"content-length", str(len(body)).encode())]}
            delivered = False

            async def replay() -> Message:
                nonlocal delivered
                if not delivered:
                    delivered = True
                    return {"type": "http.request", "body": body, "more_body": False}
                return await timed.receive()

            await self.app(scope, replay, timed.send)
        finally:
            live.gauges.buffered_body_bytes -= held


class _TimedBody:
    """`receive` with the body's deadlines until its last part has come (then as it is:
    a stream waits on it for the client to go away), and `send` that goes quiet once
    the deadline has answered for the application."""

    def __init__(self, receive: Receive, send: Send) -> None:
        self._receive, self._send = receive, send
        loop = asyncio.get_running_loop()
        self._loop = loop
        self._ends_at = loop.time() + settings.MEMORYHUB_BODY_SECONDS
        self._complete = False
        self._answered = False

    async def receive(self) -> Message:
        if self._answered:
            return {"type": "http.disconnect"}
        if self._complete:
            return await self._receive()
        wait = min(settings.MEMORYHUB_BODY_IDLE_SECONDS, self._ends_at - self._loop.time())
        try:
            message = await asyncio.wait_for(self._receive(), max(wait, 0))
        except TimeoutError:
            self._answered = True
            await _answer(self._send, 408, "REQUEST_TIMEOUT", "The request body came too slowly.",
                          {"idle_seconds": settings.MEMORYHUB_BODY_IDLE_SECONDS, "total_seconds": settings.MEMORYHUB_BODY_SECONDS})
            return {"type": "http.disconnect"}
        if message["type"] != "http.request" or not message.get("more_body", False):
            self._complete = True
        return message

    async def send(self, message: Message) -> None:
        if not self._answered:
            await self._send(message)

    async def drain(self) -> None:
        """Read, and drop, what the client still sends of a body refused halfway, for a
        moment, before the refusal goes out: the connection closes after it, and closed
        with unread bytes it would be reset, which can destroy the refusal before the
        client has read it."""
        try:
            async with asyncio.timeout(DRAIN_SECONDS):
                while (message := await self._receive())["type"] == "http.request" and message.get("more_body", False):
                    pass
        except TimeoutError:
            pass
        self._complete = True


async def _caller_known(headers: dict[bytes, bytes]) -> bool:
    authorization = headers.get(b"authorization", b"").decode("latin-1")
    session_key = None
    if cookie_header := headers.get(b"cookie"):
        try:
            morsel = SimpleCookie(cookie_header.decode("latin-1")).get(settings.SESSION_COOKIE_NAME)
        except CookieError:
            morsel = None
        session_key = morsel.value if morsel else None
    if not authorization and not session_key:
        return False
    return await in_worker(caller_known, authorization=authorization, session_key=session_key)


async def _answer(send: Send, status: int, code: str, message: str, details: dict[str, Any] | None = None, *, retry_after: int | None = None) -> None:
    # The connection closes after: what is left of the body is not read.
    await envelope_send(send, status, envelope(code, message, details), retry_after=retry_after, close=True)
