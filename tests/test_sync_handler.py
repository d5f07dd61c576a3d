"""SyncRequestHandler (memoryhub/serving/sync_handler.py): each request's sync code runs on a thread of
its own while it runs, and on a thread an earlier request left idle after it."""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any

from django.http import HttpRequest, HttpResponse

from memoryhub.serving.sync_handler import SyncRequestHandler


class RecordingHandler(SyncRequestHandler):
    """Answers every request itself (no middleware, no view), noting the thread it ran
    on; a request to /hold/ says it is `holding`, then waits until `release` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.holding = threading.Event()
        self.release = threading.Event()
        self.threads: dict[str, int] = {}

    def get_response(self, request: HttpRequest) -> HttpResponse:
        self.threads[request.GET["n"]] = threading.get_ident()
        if request.path == "/hold/":
            self.holding.set()
            self.release.wait(10)
        if request.path == "/lower/":  # bulk work that could not raise its thread back
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 5)
        return HttpResponse("ok")


async def call(handler: SyncRequestHandler, path: str, n: int, *, disconnect: asyncio.Event | None = None) -> int | None:
    scope = {"type": "http", "method": "GET", "path": path, "query_string": f"n={n}".encode(), "headers": [], "server": ("testserver", 80)}
    sent: list[dict[str, Any]] = []
    requested = False

    async def receive() -> dict[str, Any]:
        nonlocal requested
        if not requested:
            requested = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await (disconnect.wait() if disconnect else asyncio.Event().wait())
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await handler(scope, receive, send)
    return next((m["status"] for m in sent if m["type"] == "http.response.start"), None)


def test_it_runs_requests_one_after_another_on_one_kept_thread() -> None:
    handler = RecordingHandler()

    async def scenario() -> list[int | None]:
        return [await call(handler, "/", n) for n in range(20)]

    assert asyncio.run(scenario()) == [200] * 20
    assert len(set(handler.threads.values())) == 1


def test_it_gives_a_request_a_thread_of_its_own_while_another_waits() -> None:
    handler = RecordingHandler()

    async def scenario() -> tuple[int | None, int | None]:
        held = asyncio.create_task(call(handler, "/hold/", 1))
        assert await asyncio.to_thread(handler.holding.wait, 5)  # its view runs, on its thread
        quick = await asyncio.wait_for(call(handler, "/", 2), 5)  # not queued behind the held one
        handler.release.set()
        return await held, quick

    assert asyncio.run(scenario()) == (200, 200)
    assert handler.threads["1"] != handler.threads["2"]


def test_it_serves_others_while_a_client_that_left_waits_for_its_view_and_keeps_both_threads() -> None:
    handler = RecordingHandler()

    async def scenario() -> list[int | None]:
        gone = asyncio.Event()
        left = asyncio.create_task(call(handler, "/hold/", 1, disconnect=gone))
        assert await asyncio.to_thread(handler.holding.wait, 5)
        gone.set()
        # A sync view cannot be stopped: its request ends (without an answer: nobody to
        # send it to) once the view returns, and meanwhile the others go on.
        other = await asyncio.wait_for(call(handler, "/", 2), 5)
        assert not left.done()
        handler.release.set()
        return [await asyncio.wait_for(left, 5), other, await call(handler, "/", 3), await call(handler, "/", 4)]

    assert asyncio.run(scenario()) == [None, 200, 200, 200]
    assert handler.threads["1"] != handler.threads["2"]
    assert {handler.threads["3"], handler.threads["4"]} <= {handler.threads["1"], handler.threads["2"]}


def test_it_gives_no_further_request_to_a_thread_left_at_a_lower_priority() -> None:
    handler = RecordingHandler()

    async def scenario() -> list[int | None]:
        return [await call(handler, "/", 0), await call(handler, "/lower/", 1), await call(handler, "/", 2), await call(handler, "/", 3)]

    assert asyncio.run(scenario()) == [200] * 4
    assert handler.threads["0"] == handler.threads["1"]
    assert handler.threads["2"] != handler.threads["1"]
    assert handler.threads["3"] == handler.threads["2"]
