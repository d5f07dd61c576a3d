"""What the ASGI layers around Django share (long polls, event streams): ask Django for
its answer without sending it yet, send it later, notice a client that went away, and
read the database for a moment from a worker thread.

They let Django's request handling (authentication, throttles, validation, errors in the
envelope) decide whether and what to wait for, and then wait themselves, as coroutines,
holding neither its worker thread nor a database connection.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, TypeVar

import orjson
from asgiref.sync import sync_to_async
from django.db import connection

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
T = TypeVar("T")


async def answer_of(app: ASGIApp, scope: Scope, receive: Receive) -> list[Message]:
    """Django's answer to the request, kept instead of sent."""
    messages: list[Message] = []

    async def keep(message: Message) -> None:
        messages.append(message)

    await app(scope, receive, keep)
    return messages


def json_of(messages: list[Message]) -> dict[str, Any] | None:
    """The JSON object of a 200 answer (None for any other)."""
    if not messages or messages[0].get("status") != 200:
        return None
    try:
        body = orjson.loads(b"".join(m.get("body", b"") for m in messages[1:]))
    except orjson.JSONDecodeError:
        return None
    return body if isinstance(body, dict) else None


async def relay(messages: list[Message], send: Send) -> None:
    for message in messages:
        await send(message)


async def client_gone(receive: Receive) -> None:
    """Returns when the client disconnects."""
    while (await receive())["type"] != "http.disconnect":
        pass


def empty_body(receive: Receive) -> Receive:
    """A GET's (empty) body again, for asking Django a second time; then the client's own
    events."""
    delivered = False

    async def again() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": b"", "more_body": False}
        return await receive()

    return again


async def in_worker(read: Callable[..., T], **kwargs: Any) -> T:
    """A read in a worker thread, its connection back to the pool right after."""

    def run() -> T:
        try:
            return read(**kwargs)
        finally:
            connection.close()

    return await sync_to_async(run, thread_sensitive=False)()
