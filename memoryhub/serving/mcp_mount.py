"""`/mcp`: the MCP front end (agents_mcp), mounted in front of Django and loaded on its
first use, and the ASGI lifespan that starts and stops its session manager.

The front end is named by its module path, never imported here: the serving layer sits
below the front ends (import-linter's contracts), and only this mount reaches it."""

from __future__ import annotations

import asyncio
import importlib
from typing import Any

from memoryhub.serving.relay import ASGIApp, Receive, Scope, Send

MCP_MODULE = "agents_mcp.server"


class LazyMcpMount:
    """`/mcp` to the MCP endpoint (agents_mcp/server.py), imported on its first use; the
    only place that matches `/mcp`.

    The MCP SDK and its schema models take about two seconds of CPU to import: every hub
    process would pay that at start-up (a restart after a crash, each process of a
    scale-out, each test's hub), though many never serve MCP. The first /mcp request
    waits for it instead, imported in a thread so other requests go on meanwhile."""

    PREFIX = "/mcp"

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._endpoint: Any = None
        self._lock = asyncio.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send, self)
            return
        path: str = scope.get("path", "")
        if scope["type"] == "http" and (path == self.PREFIX or path.startswith(self.PREFIX + "/")):
            # The endpoint's own route is `/`: the path it sees is the rest after the prefix.
            inner = path[len(self.PREFIX):] or "/"
            await (await self._loaded())({**scope, "path": inner, "raw_path": inner.encode()}, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _loaded(self) -> Any:
        async with self._lock:
            if self._endpoint is None:
                module = await asyncio.to_thread(importlib.import_module, MCP_MODULE)
                self._endpoint = module.McpEndpoint()
        return self._endpoint

    async def start(self) -> None:
        await (await self._loaded()).start()

    async def stop(self) -> None:
        if self._endpoint is not None:
            await self._endpoint.stop()


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
