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
from typing import Any
from urllib.parse import parse_qs

from memoryhub.serving.relay import ASGIApp, Message, Receive, Scope, Send, answer_of, client_gone, empty_body, json_of, relay
from memoryhub.core import live

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
            first = await answer_of(self.app, scope, receive)
            pending = _pending(first)
            if pending is None:
                await relay(first, send)
                return
            decided = asyncio.ensure_future(notified(_until_expiry(pending, wait)))
            gone = asyncio.ensure_future(client_gone(receive))
            live.gauges.waiting_approvals += 1
            try:
                await asyncio.wait({decided, gone}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                live.gauges.waiting_approvals -= 1
            hung_up = gone.done()
            for task in (decided, gone):
                task.cancel()
            await asyncio.gather(decided, gone, return_exceptions=True)
            if hung_up:
                return  # nobody to answer
        # Woken or timed out: Django reads the request afresh (decided, expired, still
        # pending, or purged meanwhile: 404).
        await relay(await answer_of(self.app, scope, empty_body(receive)), send)


def _pending(messages: list[Message]) -> dict[str, Any] | None:
    """Django's answer, if it is a pending request."""
    answer = json_of(messages)
    return answer if answer is not None and answer.get("status") == "pending" else None


def _until_expiry(approval: dict[str, Any], wait: int) -> float:
    """Seconds to wait: `wait`, or less when the request expires sooner (its status is
    "expired" from that moment on, whether or not the sweep has run)."""
    if not approval.get("expires_at"):
        return wait
    left = (datetime.fromisoformat(approval["expires_at"]) - datetime.now(UTC)).total_seconds()
    return max(0.0, min(wait, left + 0.05))
