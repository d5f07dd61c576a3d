"""The request body limit (MEMORYHUB_MAX_BODY_BYTES), enforced before Django reads a byte."""

from __future__ import annotations

import json

from memoryhub.serving.http_errors import envelope, payload_too_large_message
from memoryhub.serving.relay import ASGIApp, Message, Receive, Scope, Send


class BodySizeLimit:
    """Refuse oversize bodies with 413 before Django reads them.

    Django's ASGI handler spools the whole body to disk before any middleware runs, so
    a limit enforced in Django would still accept gigabytes first. Here a declared
    Content-Length over the limit is refused at once, and a chunked body is counted
    as it arrives and refused as soon as it crosses the limit.
    """

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._refuse(send)
            return
        if declared is not None:
            await self.app(scope, receive, send)
            return
        # No length declared (chunked): buffer up to the limit, then hand Django the body
        # with its length, since Django reads exactly Content-Length bytes (0 if absent).
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.limit:
                await self._refuse(send)
                return
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        headers = [(k, v) for k, v in scope.get("headers", []) if k not in (b"content-length", b"transfer-encoding")]
        scope = {**scope, "headers": [*headers, (b"content-length", str(len(body)).encode())]}
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, send: Send) -> None:
        body = json.dumps(
            envelope("PAYLOAD_TOO_LARGE", payload_too_large_message(self.limit), {"limit_bytes": self.limit})
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), (b"connection", b"close")],
            }
        )
        await send({"type": "http.response.body", "body": body})
