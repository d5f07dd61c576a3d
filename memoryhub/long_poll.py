"""`GET /api/v1/approvals/{id}?wait=N`: the agent's answer comes when an operator
decides, without a thread or a database connection per waiting agent.

Django's request handling (authentication, throttles, the view, the output) runs as for
any request, in its worker thread with a pooled connection, and both are released when
it returns. Only when its answer says "pending" does this layer hold the request: it
waits on the Channels layer (one coroutine, no thread, no connection) for the decision's
notification, the request's expiry or `wait` seconds, then lets Django answer again.
It joins the approval's group before Django's first read, so a decision landing in
between still wakes it.
"""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qs

import orjson

from memoryhub.core import live

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

APPROVAL_PATH = re.compile(r"^/api/v1/approvals/(\d{1,18})$")
MAX_WAIT = 60


def requested_wait(scope: Scope) -> int:
    """Seconds to hold the request: 0 unless `wait` is a whole number from 1 to 60 (the
    view itself answers 400 to anything else)."""
    values = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("wait", [])
    if len(values) != 1 or not values[0].isdigit():
        return 0
    wait = int(values[0])
    return wait if 1 <= wait <= MAX_WAIT else 0


class ApprovalLongPoll:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            live.loop_bind(asyncio.get_running_loop())
            match = APPROVAL_PATH.match(scope["path"])
            if match and scope["method"] == "GET" and (wait := requested_wait(scope)):
                await self._long_poll(int(match[1]), wait, scope, receive, send)
                return
        await self.app(scope, receive, send)

    async def _long_poll(self, approval_id: int, wait: int, scope: Scope, receive: Receive, send: Send) -> None:
        async with live.listening(live.approval_group(approval_id)) as notified:
            first = await self._answer(scope, receive)
            pending = _pending(first)
            if pending is None:
                await _replay(first, send)
                return
            decided = asyncio.ensure_future(notified(_until_expiry(pending, wait)))
            gone = asyncio.ensure_future(_disconnected(receive))
            await asyncio.wait({decided, gone}, return_when=asyncio.FIRST_COMPLETED)
            client_gone = gone.done()
            for task in (decided, gone):
                task.cancel()
            await asyncio.gather(decided, gone, return_exceptions=True)
            if client_gone:
                return  # nobody to answer
        # Woken or timed out: Django reads the request afresh (decided, expired, still
        # pending, or purged meanwhile: 404).
        await _replay(await self._answer(scope, _empty_body(receive)), send)

    async def _answer(self, scope: Scope, receive: Receive) -> list[Message]:
        messages: list[Message] = []

        async def keep(message: Message) -> None:
            messages.append(message)

        await self.app(scope, receive, keep)
        return messages


def _pending(messages: list[Message]) -> dict[str, Any] | None:
    """Django's answer, if it is a pending request."""
    if not messages or messages[0].get("status") != 200:
        return None
    try:
        answer = orjson.loads(b"".join(m.get("body", b"") for m in messages[1:]))
    except orjson.JSONDecodeError:
        return None
    return answer if isinstance(answer, dict) and answer.get("status") == "pending" else None


def _until_expiry(approval: dict[str, Any], wait: int) -> float:
    """Seconds to wait: `wait`, or less when the request expires sooner (its status is
    "expired" from that moment on, whether or not the sweep has run)."""
    if not approval.get("expires_at"):
        return wait
    left = (datetime.fromisoformat(approval["expires_at"]) - datetime.now(UTC)).total_seconds()
    return max(0.0, min(wait, left + 0.05))


async def _replay(messages: list[Message], send: Send) -> None:
    for message in messages:
        await send(message)


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


def _empty_body(receive: Receive) -> Receive:
    """A GET's (empty) body again for the second answer; then the client's own events."""
    delivered = False

    async def again() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": b"", "more_body": False}
        return await receive()

    return again
