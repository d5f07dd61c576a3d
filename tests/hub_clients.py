"""The Python client (clients/python) in the tests: `Blocking` drives an AsyncMemoryHub from
sync test code, so that one test body checks both clients against a live hub."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Callable
from typing import Any

from memoryhub_client import AsyncMemoryHub, MemoryHub, RetryPolicy

# Retries in tests: quick, so that a test that provokes them stays short.
QUICK_RETRIES = RetryPolicy(max_attempts=5, backoff=0.05, max_backoff=0.5)


async def _collect(items: AsyncIterator[Any]) -> list[Any]:
    return [item async for item in items]


class Blocking:
    """An async client (or one of its resources) whose calls return their results: each
    call runs to completion on `loop` (one loop for the client's whole life, which its
    connection pool needs); async iterators come back as iterators over all their items."""

    def __init__(self, target: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._target = target
        self._loop = loop

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._target, name)
        if hasattr(attribute, "_hub"):  # a resource: hub.memories
            return Blocking(attribute, self._loop)
        if not callable(attribute):
            return attribute

        def call(*args: Any, **kwargs: Any) -> Any:
            result = attribute(*args, **kwargs)
            if inspect.isawaitable(result):
                return self._loop.run_until_complete(result)
            if hasattr(result, "__anext__"):
                return iter(self._loop.run_until_complete(_collect(result)))
            return result

        return call


class HubClients:
    """Makes clients of one flavour ("sync" or "async") for `url`, and closes them."""

    def __init__(self, flavour: str, url: str) -> None:
        self.flavour = flavour
        self.url = url
        self.loop = asyncio.new_event_loop() if flavour == "async" else None
        self._closers: list[Callable[[], None]] = []

    def __call__(self, key: str, **options: Any) -> Any:
        if self.loop is None:
            hub = MemoryHub(base_url=self.url, api_key=key, **{"retry": QUICK_RETRIES, **options})
            self._closers.append(hub.close)
            return hub
        async_hub = AsyncMemoryHub(base_url=self.url, api_key=key, **{"retry": QUICK_RETRIES, **options})
        loop = self.loop
        self._closers.append(lambda: loop.run_until_complete(async_hub.aclose()))
        return Blocking(async_hub, loop)

    def close(self) -> None:
        for close in self._closers:
            close()
        if self.loop is not None:
            self.loop.close()
