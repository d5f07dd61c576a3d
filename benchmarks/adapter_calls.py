"""The timed half of `manage.py bench adapters`, run in a framework adapters' environment
(`.venv-adapters*`, which the hub's has none of): each adapter's hottest call against the
plain client call that fetches or writes the same, alternating, on an AsyncMemoryHub.

    python benchmarks/adapter_calls.py URL KEY ROUNDS NAME…

prints one JSON object: {NAME: {"adapter": [ms…], "plain": [ms…], "call": "…"}}."""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from memoryhub_client import AsyncMemoryHub

Timed = Callable[[], Awaitable[Any]]
# name -> a coroutine that sets the pair up on the hub and answers (call, adapter's, plain).
Setup = Callable[[AsyncMemoryHub], Awaitable[tuple[str, Timed, Timed]]]


async def openai_agents(hub: AsyncMemoryHub) -> tuple[str, Timed, Timed]:
    """A Runner reads the whole session before each turn: get_items() of a 20-item session."""
    from memoryhub_client.integrations.openai_agents import MemoryHubSession

    session = MemoryHubSession(f"bench-{uuid.uuid4().hex[:8]}", hub=hub, user_id="bench")
    await session.add_items([{"role": "user", "content": f"turn {n}: where is order {1000 + n}?"} for n in range(20)])
    return ("get_items() of 20 items vs sessions.list_messages", session.get_items,
            lambda: hub.sessions.list_messages(session.session_id, limit=200, order="asc"))


SETUPS: dict[str, Setup] = {"openai-agents": openai_agents}


async def main(url: str, key: str, rounds: int, names: list[str]) -> dict[str, Any]:
    results: dict[str, Any] = {}
    async with AsyncMemoryHub(base_url=url, api_key=key) as hub:
        for name in names:
            call, adapter, plain = await SETUPS[name](hub)
            timings: dict[str, list[float]] = {"adapter": [], "plain": []}
            for _ in range(10):  # warm both: connections, imports, the hub's caches
                await adapter()
                await plain()
            for n in range(rounds):
                for which, fn in (("adapter", adapter), ("plain", plain)) if n % 2 else (("plain", plain), ("adapter", adapter)):
                    started = time.perf_counter()
                    await fn()
                    timings[which].append((time.perf_counter() - started) * 1000)
            results[name] = {"call": call, **timings}
    return results


if __name__ == "__main__":
    url, key, rounds, *names = sys.argv[1:]
    print(json.dumps(asyncio.run(main(url, key, int(rounds), names))))
