"""The MCP server (the official `mcp` SDK's `MCPServer`) and the ASGI endpoint that serves
it, streamable HTTP, for `memoryhub.serving.mcp_mount`, which routes `/mcp` here.

The SDK's session manager must be running before it answers anything; `make run` serves
with `--lifespan off`, so it is started on the first request (once, under a lock), and by
the mount's lifespan handler at start-up when the server announces one (then also
stopped at shutdown). Stateless mode with JSON answers: every request stands alone, so
any worker process can answer any request."""

from __future__ import annotations

import asyncio
import logging

from django.conf import settings
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from memoryhub.serving.relay import Receive, Scope, Send

from agents_mcp.auth import AgentKeyVerifier

# Stateless mode opens and closes a transport for every request, and the SDK says so at
# INFO each time: the access log has that line already.
if logging.getLogger().getEffectiveLevel() > logging.DEBUG:
    for _name in ("mcp.server.streamable_http", "mcp.server.streamable_http_manager"):
        logging.getLogger(_name).setLevel(logging.WARNING)

server: MCPServer = MCPServer(
    "memoryhub",
    instructions=(
        "MemoryHub: long-term memory, tool-call log, plans, checkpoints and human approval for this agent. "
        "Session tools need a session: start_session first (same id again is the same session)."
    ),
    token_verifier=AgentKeyVerifier(),
    # The SDK wants an issuer with a verifier; it is advertised nowhere (no OAuth routes, no
    # resource metadata): agent keys are issued by the hub itself.
    auth=AuthSettings(issuer_url="http://localhost", resource_server_url=None),
    log_level="WARNING",
)


def transport_security() -> TransportSecuritySettings:
    """DNS-rebinding protection from the hub's own ALLOWED_HOSTS: a Host the hub does not
    serve is refused (421), and so is a browser Origin other than those hosts (403).

    The SDK matches exact hosts, with any port; Django's `.example.com` (the domain and
    its subdomains) keeps the domain only, and `*` (every host, for Django too) turns
    the check off."""
    hosts = [host.lstrip(".") for host in settings.ALLOWED_HOSTS]
    if "*" in hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    origins = [origin for host in hosts for origin in (f"http://{host}", f"https://{host}", f"http://{host}:*", f"https://{host}:*")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[pattern for host in hosts for pattern in (host, f"{host}:*")],
        allowed_origins=[*origins, *settings.CSRF_TRUSTED_ORIGINS],
    )


class McpEndpoint:
    """The SDK's app for requests the mount routed here (their path already `/`-based),
    with its session manager started once per process."""

    def __init__(self) -> None:
        self.mcp_app = server.streamable_http_app(
            streamable_http_path="/", stateless_http=True, json_response=True, transport_security=transport_security(),
            max_request_body_size=settings.MEMORYHUB_MAX_BODY_BYTES,
        )
        self._lock = asyncio.Lock()
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._runner: asyncio.Task[None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.start()
        await self.mcp_app(scope, receive, send)

    async def start(self) -> None:
        """Run the SDK's session manager, once per process. Its task group outlives any
        one request, so it runs in a task of its own until `stop` (or the process ends)."""
        if self._ready.is_set():
            return
        async with self._lock:
            if self._runner is None:
                self._runner = asyncio.create_task(self._run(), name="mcp-session-manager")
        waiting = asyncio.ensure_future(self._ready.wait())
        await asyncio.wait({waiting, self._runner}, return_when=asyncio.FIRST_COMPLETED)
        if not self._ready.is_set():
            waiting.cancel()
            self._runner.result()  # raises why it could not start
            raise RuntimeError("The MCP session manager stopped before it started.")

    async def stop(self) -> None:
        if self._runner is not None:
            self._stop.set()
            await self._runner

    async def _run(self) -> None:
        async with server.session_manager.run():
            self._ready.set()
            await self._stop.wait()
