"""ASGI entry point: `uvicorn memoryhub.asgi:application`."""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

import django  # noqa: E402

from memoryhub.sync_handler import SyncRequestHandler  # noqa: E402


django.setup(set_prefix=False)

# A request thread coming back from the database waits for the interpreter lock until
# the thread holding it has run for the switch interval (5 ms by default). A search
# makes a dozen such round trips; next to a batch write (200 ms of validation and
# encoding per 500 entries) each one waited the whole 5 ms. At 0.5 ms, searches during a
# burst of 20,000 writes: p50 / p95 46-52 / 89-94 -> 40-46 / 69-83 ms over three pairs
# of runs, writes 1,580-1,690 -> 1,360-1,540 entries/s (README, Benchmarks: search during a burst).
GIL_SWITCH_INTERVAL_SECONDS = 0.0005
sys.setswitchinterval(GIL_SWITCH_INTERVAL_SECONDS)
django_application = SyncRequestHandler()

from django.conf import settings  # noqa: E402

from memoryhub.core import tasking  # noqa: E402
from memoryhub.http_errors import envelope, payload_too_large_message  # noqa: E402
from memoryhub.event_stream import EventStream  # noqa: E402
from memoryhub.long_poll import ApprovalLongPoll  # noqa: E402
from memoryhub.outages import OutageGuard  # noqa: E402

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class BodySizeLimit:
    """Refuse oversize bodies with 413 before Django reads them.

    Django's ASGI handler spools the whole body to disk before any middleware runs, so
    a limit enforced in Django would still accept gigabytes first. Here a declared
    Content-Length over the limit is refused at once, and a chunked body is counted
    as it arrives and refused as soon as it crosses the limit.
    """

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send, mcp_endpoint)
            return
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


class LazyMcpMount:
    """`/mcp` to the MCP endpoint (memoryhub/mcp_server.py), imported on its first use.

    The MCP SDK and its schema models take about two seconds of CPU to import: every hub
    process would pay that at start-up (a restart after a crash, each process of a
    scale-out, each test's hub), though many never serve MCP. The first /mcp request
    waits for it instead, imported in a thread so other requests go on meanwhile."""

    PREFIX = "/mcp"

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self.app = app
        self._mount: Any = None
        self._lock = asyncio.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        if scope["type"] == "http" and (path == self.PREFIX or path.startswith(self.PREFIX + "/")):
            await (await self._loaded())(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _loaded(self) -> Any:
        async with self._lock:
            if self._mount is None:
                module = await asyncio.to_thread(importlib.import_module, "memoryhub.mcp_server")
                self._mount = module.McpMount(self.app)
        return self._mount

    async def start(self) -> None:
        await (await self._loaded()).start()

    async def stop(self) -> None:
        if self._mount is not None:
            await self._mount.stop()


async def _lifespan(receive: Receive, send: Send, endpoint: LazyMcpMount) -> None:
    """Servers that announce start-up and shutdown (hypercorn, granian, uvicorn without
    --lifespan off) get an answer: Django's handler refuses anything but HTTP. The MCP
    endpoint's session manager starts here then, and stops at shutdown; without a
    lifespan (`make run`) it starts on the first /mcp request instead."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            try:
                await endpoint.start()
            except Exception as exc:
                await send({"type": "lifespan.startup.failed", "message": f"MCP session manager: {exc!r}"})
                return
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await endpoint.stop()
            await send({"type": "lifespan.shutdown.complete"})
            return


# /mcp goes to the MCP SDK's app (memoryhub/mcp_server.py), inside the body limit and
# outside Django's layers; everything else to Django through them.
mcp_endpoint = LazyMcpMount(EventStream(ApprovalLongPoll(django_application)))
application = BodySizeLimit(OutageGuard(mcp_endpoint), settings.MEMORYHUB_MAX_BODY_BYTES)

# One process serves everything when REDIS_URL is unset: it also runs the periodic jobs.
tasking.start_scheduler()
