"""The live feed's streams (`GET /api/v1/sessions/{sid}/events`, `GET /api/v1/events`):
Server-Sent Events of the timeline, sent around Django instead of through it.

Django's stream views decide whether a stream may open and what it carries (they answer
this layer with a plan, or the client with an error in the envelope). Then this layer
streams: it joins the Channels groups of the session or workspace and of the caller's
key, reads what is new from the timeline (ids in commit order, so `id > last` never
skips an event), sends it, and sleeps until the next wake-up: one coroutine per stream,
a worker thread and a pooled connection only for the few milliseconds of each read.

The wake-ups carry nothing but "something changed" (memoryhub/core/live.py): content
always comes from the table, so a purged event is never sent, and replay (Last-Event-ID)
and live delivery are the same read.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter
from datetime import datetime
from typing import Any

import orjson
from channels.layers import get_channel_layer
from django.conf import settings
from django.template.loader import render_to_string

from memoryhub.serving.http_errors import envelope, envelope_send
from memoryhub.serving.relay import ASGIApp, Receive, Scope, Send, answer_of, client_gone, empty_body, in_worker, json_of, relay
from memoryhub.insights.timeline import timeline_rows
from memoryhub.core import live
from memoryhub.timeline.selectors import feed_events, feed_item, feed_position

# The API's streams, and the console's (session page, Activity page).
STREAM_PATH = re.compile(r"^/api/v1/(?:sessions/[^/]+/)?events$|^/(?:sessions/[^/]+|activity)/events/$")
BATCH = 500
# Streams open in this process per credential (see MEMORYHUB_STREAMS_PER_CREDENTIAL).
_open_streams: Counter[str] = Counter()
LINE_BREAK = re.compile(r"\r\n|\r|\n")

HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),  # nginx: pass events on as they come
]


class EventStream:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET" and STREAM_PATH.match(scope["path"]):
            live.loop_bind(asyncio.get_running_loop())
            await self._stream(_asking_for_plan(scope), receive, send)
            return
        await self.app(scope, receive, send)

    async def _stream(self, scope: Scope, receive: Receive, send: Send) -> None:
        answer = await answer_of(self.app, scope, receive)
        plan = json_of(answer)
        if plan is None:  # refused: the envelope goes to the client as Django wrote it
            await relay(answer, send)
            return
        # The first group that ends the stream names its credential: a key, or a login.
        credential = plan["ends_on"][0] if plan["ends_on"] else ""
        if _open_streams[credential] >= settings.MEMORYHUB_STREAMS_PER_CREDENTIAL:
            await _too_many(send)
            return
        _open_streams[credential] += 1
        try:
            await self._serve(plan, scope, receive, send)
        finally:
            _open_streams[credential] -= 1
            if not _open_streams[credential]:
                del _open_streams[credential]

    async def _serve(self, plan: dict[str, Any], scope: Scope, receive: Receive, send: Send) -> None:
        layer = get_channel_layer()
        channel = await layer.new_channel()
        groups = [
            live.session_group(plan["workspace_id"], plan["session_id"]) if plan["session_id"] else live.workspace_group(plan["workspace_id"])
        ] + plan["ends_on"]
        tasks: list[asyncio.Future[Any]] = []
        live.gauges.streams += 1
        try:
            for group in groups:
                await layer.group_add(group, channel)
            # Joined before the first read: whatever commits from now on wakes us.
            wake: asyncio.Future[Any] = asyncio.ensure_future(layer.receive(channel))
            gone = asyncio.ensure_future(client_gone(receive))
            tasks += [wake, gone]
            after = plan["after"]
            if after is None:
                after = await in_worker(feed_position, workspace_id=plan["workspace_id"], session_id=plan["session_id"])
            await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
            await send({"type": "http.response.body", "body": b"retry: 2000\n\n", "more_body": True})
            ends_at = datetime.fromisoformat(plan["key_expires_at"]).timestamp() if plan["key_expires_at"] else None
            recheck_at = time.time() + settings.MEMORYHUB_STREAM_RECHECK_SECONDS
            while True:
                after = await self._send_new(plan, after, send)
                now = time.time()
                timeout = min(settings.MEMORYHUB_STREAM_KEEPALIVE_SECONDS, recheck_at - now, (ends_at or now + 3600) - now)
                done, _ = await asyncio.wait({wake, gone}, timeout=max(0.0, timeout), return_when=asyncio.FIRST_COMPLETED)
                if gone in done:
                    return
                if wake in done:
                    if revoked := wake.result().get("revoked"):
                        await _end(send, str(revoked))
                        return
                    wake = tasks[0] = asyncio.ensure_future(layer.receive(channel))
                    continue
                if ends_at is not None and time.time() >= ends_at:
                    await _end(send, "key expired")
                    return
                if time.time() >= recheck_at:
                    # Sessions, stores and keys' owners change without a wake-up: ask again. The
                    # answer must be this stream's plan, not merely a plan (an operator removed
                    # from this workspace is answered with another of theirs).
                    again = json_of(await answer_of(self.app, scope, empty_body(receive)))
                    if again is None or any(again[name] != plan[name] for name in live.STREAM_IDENTITY):
                        await _end(send, "no longer allowed")
                        return
                    recheck_at = time.time() + settings.MEMORYHUB_STREAM_RECHECK_SECONDS
                await send({"type": "http.response.body", "body": b": keep-alive\n\n", "more_body": True})
        finally:
            live.gauges.streams -= 1
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for group in groups:
                await layer.group_discard(group, channel)

    async def _send_new(self, plan: dict[str, Any], after: int, send: Send) -> int:
        """Send every event after `after` in scope, in id order; the last id sent."""
        while True:
            frames, last, count = await in_worker(
                _feed_frames, html=plan["format"] == "html", workspace_id=plan["workspace_id"], after=after,
                session_id=plan["session_id"], kinds=plan["kinds"], actor=plan["actor"],
            )
            if count:
                await send({"type": "http.response.body", "body": frames, "more_body": True})
                after = last
            if count < BATCH:
                return after


def _feed_frames(*, html: bool, **filters: Any) -> tuple[bytes, int, int]:
    """The frames of the next events, the last id among them, and how many."""
    events = feed_events(**filters, limit=BATCH)
    if html:  # for htmx's SSE extension: one `timeline` event of HTML per event
        show_session = filters["session_id"] is None
        frames = [
            _frame(row.event.id, "timeline", render_to_string("console/timeline_event.html", {"row": row, "show_session": show_session}))
            for row in timeline_rows(workspace_id=filters["workspace_id"], events=events)
        ]
    else:
        frames = [_frame(event.id, event.kind, orjson.dumps(feed_item(event)).decode()) for event in events]
    return b"".join(frames), events[-1].id if events else 0, len(events)


def _frame(event_id: int, name: str, data: str) -> bytes:
    # SSE ends lines at CR and LF only: `splitlines()` also breaks at U+2028, U+2029 and
    # U+0085, which JSON carries unescaped, and a client would join the parts with LF.
    lines = "".join(f"data: {line}\n" for line in LINE_BREAK.split(data))
    return f"id: {event_id}\nevent: {name}\n{lines}\n".encode()


async def _too_many(send: Send) -> None:
    limit = settings.MEMORYHUB_STREAMS_PER_CREDENTIAL
    message = f"This key (or login) has {limit} streams open on this hub process, the most it may; close one first."
    await envelope_send(send, 429, envelope("TOO_MANY_STREAMS", message, {"limit": limit}), retry_after=5)


async def _end(send: Send, reason: str) -> None:
    await send({"type": "http.response.body", "body": b"event: end\ndata: %s\n\n" % orjson.dumps({"reason": reason}), "more_body": False})


def _asking_for_plan(scope: Scope) -> Scope:
    """The request as Django's stream view must see it to answer with the plan; a
    client cannot send the header itself (its value would not be ours)."""
    name = live.STREAM_PLAN_HEADER.encode()
    # The plan (or the refusal) is JSON, whatever the client accepts for the stream.
    headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() not in (name, b"accept")]
    return {**scope, "headers": [*headers, (name, live.STREAM_TOKEN.encode()), (b"accept", b"application/json")]}
