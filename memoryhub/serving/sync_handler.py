"""Django's ASGI handler as the hub runs it (memoryhub/asgi.py builds the application).

Its own module so that it can be imported, and tested, without what importing the
application starts (the in-process scheduler among them)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.core.handlers.asgi import ASGIHandler
from django.http import HttpRequest, HttpResponseBase, StreamingHttpResponse

from memoryhub.core.priority import thread_niceness


class _RequestThread(ThreadPoolExecutor):
    """The one thread a request's sync code runs on, kept for the next request once
    nothing of this one runs on it any more."""

    def __init__(self) -> None:
        super().__init__(max_workers=1, thread_name_prefix="request", initializer=self._started)
        self.running = 0  # calls submitted and not finished; touched on the event loop only
        self.native_id: int | None = None

    def _started(self) -> None:
        self.native_id = threading.get_native_id()

    def lowered(self) -> bool:
        """Left at a lower CPU priority than the event loop's by a request's bulk work
        (memoryhub/core/priority.py) that could not raise it back."""
        if self.native_id is None:
            return False
        try:
            return (thread_niceness(self.native_id) or 0) > (thread_niceness() or 0)
        except ProcessLookupError:  # the thread has ended
            return True

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future = super().submit(fn, *args, **kwargs)
        self.running += 1
        # A call outlives its request when the client goes away mid-view: a sync view
        # cannot be stopped. The count falls when the call really ends.
        loop = asyncio.get_running_loop()
        future.add_done_callback(lambda _: self._ended_on(loop))
        return future

    def _ended_on(self, loop: asyncio.AbstractEventLoop) -> None:
        try:
            loop.call_soon_threadsafe(self._ended)
        except RuntimeError:  # the loop closed first (shutdown): nothing to keep the thread for
            pass

    def _ended(self) -> None:
        self.running -= 1


class SyncRequestHandler(ASGIHandler):
    """Django's ASGI handler with the request's middleware and view run as one sync call,
    on a thread kept from one request to the next.

    Every middleware and view of ours is sync. Django's async path runs the middleware
    in a worker thread, comes back to the event loop for its async response step, and
    goes out to the thread again for the view: two more hops than needed, ~1 ms of the
    ~4 ms an API request costs before its own work (docs/operations/background-work.md, "Background work").

    Django also gives each request a thread of its own (a new ThreadSensitiveContext, so
    a new single-thread executor), started for it and joined after it: py-spy put a
    fifth of the event loop's time in starting those threads. A request here runs on an
    idle thread of an earlier one, as under WSGI; thread-local state (the database
    connection) is handed over the way Django's request signals do there."""

    # Enough for the requests a small hub serves at once; beyond them a request starts
    # (and ends) a thread of its own, as under Django's handler. Idle threads are few so
    # that a count of the hub's threads still shows what requests hold.
    IDLE_THREADS_KEPT = 4

    def __init__(self) -> None:
        super().__init__()
        self._idle: list[_RequestThread] = []

    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        thread = self._idle.pop() if self._idle else _RequestThread()
        try:
            async with ThreadSensitiveContext(executor=thread):
                await self.handle(scope, receive, send)
        finally:
            if thread.running == 0 and len(self._idle) < self.IDLE_THREADS_KEPT and not thread.lowered():
                self._idle.append(thread)
            else:
                thread.shutdown(wait=False)  # its thread ends with the call still on it

    async def get_response_async(self, request: HttpRequest) -> HttpResponseBase:
        return await sync_to_async(self.get_response, thread_sensitive=True)(request)

    async def send_response(self, response: HttpResponseBase, send: Callable[..., Any]) -> None:
        # A streaming response over a sync iterator (WhiteNoise's static files, downloads)
        # made Django print a plain-text warning into the JSON log on every new page, then
        # read the whole body into memory. Its parts are read in a worker thread instead,
        # up to STREAM_READ_BYTES a hop.
        if isinstance(response, StreamingHttpResponse) and not response.is_async:
            response.streaming_content = _read_in_a_thread(response.streaming_content)
        await super().send_response(response, send)


# What a streaming response's sync iterator is read in, per trip to a worker thread.
STREAM_READ_BYTES = 256 * 1024


async def _read_in_a_thread(parts: Iterable[bytes]) -> AsyncIterator[bytes]:
    iterator = iter(parts)

    def read() -> bytes:
        chunk = bytearray()
        for part in iterator:
            chunk += part
            if len(chunk) >= STREAM_READ_BYTES:
                break
        return bytes(chunk)

    while chunk := await sync_to_async(read, thread_sensitive=False)():
        yield chunk
