"""Live notifications: how the hub tells the clients that wait (agents long-polling for
a decision, the live feed's streams) that something changed. Everything leaves through the Channels
layer, after the writing transaction commits: nothing is announced for a rolled-back
write. With REDIS_URL the layer is Redis, so a decision taken in one process (or a
Celery worker) wakes a waiter held by another."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import secrets
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from concurrent.futures import Future
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.db import transaction

from memoryhub.core import metrics

logger = logging.getLogger(__name__)

# The event loop of the ASGI server in this process, once it has served a request. The
# in-memory layer's queues belong to that loop: a send from any other thread (the
# in-process scheduler, a sync view's worker thread) has to be handed to it.
_hub_loop: asyncio.AbstractEventLoop | None = None
_own_loop: asyncio.AbstractEventLoop | None = None
_own_loop_lock = threading.Lock()
# Messages committed and not yet sent, and whether a pass of the sending loop is due.
_queued: list[tuple[list[str], dict[str, Any]]] = []
_queue_lock = threading.Lock()
_flush_scheduled = False


@dataclass
class Gauges:
    """What this process holds open for clients right now (changed on its event loop),
    mirrored in /metrics."""

    def __init__(self) -> None:
        self._streams = 0
        self._waiting_approvals = 0
        # Chunked request bodies held whole before Django reads them (serving/request_body.py).
        self.buffered_body_bytes = 0

    @property
    def streams(self) -> int:
        return self._streams

    @streams.setter
    def streams(self, value: int) -> None:
        self._streams = value
        metrics.STREAMS_OPEN.set(value)

    @property
    def waiting_approvals(self) -> int:
        return self._waiting_approvals

    @waiting_approvals.setter
    def waiting_approvals(self, value: int) -> None:
        self._waiting_approvals = value
        metrics.APPROVAL_WAITERS.set(value)


gauges = Gauges()


def held() -> dict[str, int | None]:
    """The gauges, and the Channels group memberships this process's in-memory layer
    holds (None with Redis: there they are shared by every process)."""
    layer = get_channel_layer()
    memberships: int | None = None
    if isinstance(layer, InMemoryChannelLayer):
        try:
            memberships = sum(len(channels) for channels in list(layer.groups.values()))
        except RuntimeError:  # changed under us by the loop: try again next time
            memberships = None
    return {
        "streams": gauges.streams, "waiting_approvals": gauges.waiting_approvals, "group_memberships": memberships,
        "buffered_body_bytes": gauges.buffered_body_bytes,
    }


def loop_bind(loop: asyncio.AbstractEventLoop) -> None:
    global _hub_loop
    _hub_loop = loop


# The event-stream layer (memoryhub/serving/event_stream.py) asks Django's stream views for the
# stream's plan with this header; only that layer, in this process, knows the value.
STREAM_PLAN_HEADER = "x-memoryhub-stream-plan"
STREAM_TOKEN = secrets.token_hex(16)


# A timeline kind as stream filters name it (message, tool, approval…).
EVENT_KIND = re.compile(r"^[a-z_]{1,32}$")


def stream_plan(
    *, workspace_id: int, session_id: str | None, kinds: list[str], after: int | None, ends_on: list[str],
    actor: str | None = None, ends_at: datetime | None = None, html: bool = False,
) -> dict[str, Any]:
    """What a stream view answers the stream layer: the scope and filters of the
    stream, where replay starts (None: at the newest event), the groups whose message
    ends it (a key's revocation, a login's end, a membership's change) and when it must
    end anyway."""
    return {
        "workspace_id": workspace_id, "session_id": session_id, "kinds": kinds, "actor": actor, "after": after,
        "ends_on": ends_on, "key_expires_at": ends_at.isoformat() if ends_at else None, "format": "html" if html else "json",
    }


# What must stay the same for a stream to go on when it asks again whether it may.
STREAM_IDENTITY = ("workspace_id", "session_id", "kinds", "actor", "ends_on", "format")


def key_group(key: Any) -> str:
    """Where the revocation of an API key is announced: its streams end."""
    return f"key.{key._meta.model_name}.{key.pk}"


def login_group(session_key: str) -> str:
    """Where the end of a console login is announced: its streams end."""
    return f"login.{hashlib.sha256(session_key.encode()).hexdigest()[:32]}"


def login_ended(sender: Any, request: Any, **_: Any) -> None:
    """user_logged_out: end the console streams of this login."""
    session_key = getattr(getattr(request, "session", None), "session_key", None)
    if session_key:
        publish(groups=[login_group(session_key)], message={"revoked": "logged out"})


def membership_group(membership_id: int) -> str:
    """Where a change of an operator's membership (its role, its removal) is announced:
    the streams opened through it end, and the operator's next request sees the change."""
    return f"membership.{membership_id}"


def approval_group(approval_id: int) -> str:
    return f"approval.{approval_id}"


def workspace_group(workspace_id: int) -> str:
    """Every timeline event of the workspace (operators' feed)."""
    return f"timeline.{workspace_id}"


def session_group(workspace_id: int, session_id: str) -> str:
    """The events of one session. Client session ids may hold characters a group name
    may not (`:@`), and any length up to 200: hashed."""
    return f"timeline.{workspace_id}.{hashlib.sha256(session_id.encode()).hexdigest()[:32]}"


def publish(*, groups: Iterable[str], message: dict[str, Any]) -> None:
    """Send `message` to every group once the current transaction commits (at once
    outside one). A failed send is logged, never raised: the write it reports has
    committed, and waiters re-read the database when they wake or time out."""
    transaction.on_commit(partial(_send, list(groups), {"type": "hub.event", **message}), robust=True)


def _send(groups: list[str], message: dict[str, Any]) -> None:
    """Queue the message for the sending loop. Writes that record many events at once
    (a batch of 500 messages) commit many wake-ups for the same groups: the loop sends
    each group one message per pass, however many were queued meanwhile."""
    global _flush_scheduled
    with _queue_lock:
        _queued.append((groups, message))
        if _flush_scheduled:
            return
        _flush_scheduled = True
    # Fire and forget: the writer does not wait for listeners.
    try:
        asyncio.run_coroutine_threadsafe(_flush(), _sending_loop()).add_done_callback(_log_failure)
    except RuntimeError:  # the loop is gone (shutting down): the next send tries again
        with _queue_lock:
            _flush_scheduled = False
        raise


async def _flush() -> None:
    global _flush_scheduled
    with _queue_lock:
        batch = list(_queued)
        _queued.clear()
        _flush_scheduled = False
    by_group: dict[str, dict[str, Any]] = {}
    for groups, message in batch:
        for group in groups:
            if "revoked" not in by_group.get(group, {}):  # an ending outranks a wake-up
                by_group[group] = message
    layer = get_channel_layer()
    if layer is None:
        return
    for group, message in by_group.items():
        await layer.group_send(group, message)


def _sending_loop() -> asyncio.AbstractEventLoop:
    """The server's loop in an ASGI process; elsewhere (a Celery worker, a command) one
    loop of our own on a daemon thread, so that the Redis layer keeps its connections
    instead of opening one per event."""
    global _own_loop
    if _hub_loop is not None and _hub_loop.is_running():
        return _hub_loop
    with _own_loop_lock:
        if _own_loop is None:
            _own_loop = asyncio.new_event_loop()
            threading.Thread(target=_own_loop.run_forever, name="memoryhub-live", daemon=True).start()
    return _own_loop


def _log_failure(future: Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        logger.warning("live notification not sent: %r", future.exception())


@asynccontextmanager
async def listening(group: str) -> AsyncIterator[Callable[[float], Awaitable[bool]]]:
    """Join `group` for the duration of the block; yields `wait(timeout)`, true when a
    notification arrived in time. Joining before reading the database closes the race
    in which a decision lands between the read and the join."""
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(group, channel)

    async def wait(timeout: float) -> bool:
        try:
            await asyncio.wait_for(layer.receive(channel), timeout)
        except TimeoutError:
            return False
        return True

    try:
        yield wait
    finally:
        await layer.group_discard(group, channel)
