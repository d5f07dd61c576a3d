"""The timed half of `manage.py bench adapters`, run in a framework adapters' environment
(`.venv-adapters*`, which the hub's has none of): each adapter's hottest call against the
plain client call that fetches or writes the same, alternating, on an AsyncMemoryHub.

    python benchmarks/adapter_calls.py URL KEY ROUNDS NAME…

prints one JSON object: {NAME: {"adapter": [ms…], "plain": [ms…], "call": "…"}}."""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from memoryhub_client import AsyncMemoryHub, MemoryHub

# A call of either kind: CrewAI's storage is synchronous, the others' async.
Timed = Callable[[], Any]
TURNS = [f"turn {n}: order {1000 + n} was late, the customer wants a refund to the card ending {4000 + n}" for n in range(20)]
QUESTION = "was order 1007 refunded?"


@dataclass
class Hubs:
    aio: AsyncMemoryHub
    sync: MemoryHub


# name -> a coroutine that sets the pair up on the hub and answers (call, adapter's, plain).
Setup = Callable[[Hubs], Awaitable[tuple[str, Timed, Timed]]]


def user() -> str:
    return f"bench-{uuid.uuid4().hex[:8]}"


async def openai_agents(hubs: Hubs) -> tuple[str, Timed, Timed]:
    """A Runner reads the whole session before each turn: get_items() of a 20-item session."""
    from memoryhub_client.integrations.openai_agents import MemoryHubSession

    hub = hubs.aio
    session = MemoryHubSession(user(), hub=hub, user_id="bench")
    await session.add_items([{"role": "user", "content": turn} for turn in TURNS])
    return ("get_items() of 20 items vs sessions.list_messages", session.get_items,
            lambda: hub.sessions.list_messages(session.session_id, limit=200, order="asc"))


async def anthropic(hubs: Hubs) -> tuple[str, Timed, Timed]:
    """Claude reads its memory directory's files far more often than it writes: view a file."""
    from anthropic.types.beta import BetaMemoryTool20250818CreateCommand, BetaMemoryTool20250818ViewCommand

    from memoryhub_client.integrations.anthropic import TAG, AsyncMemoryHubMemoryTool

    hub, owner = hubs.aio, user()
    tool = AsyncMemoryHubMemoryTool(hub=hub, user_id=owner)
    path = "/memories/customer.md"
    await tool.create(BetaMemoryTool20250818CreateCommand(command="create", path=path, file_text="\n".join(TURNS)))
    view = BetaMemoryTool20250818ViewCommand(command="view", path=path)
    return ("view of a 20-line file vs memories.list by its path", lambda: tool.view(view),
            lambda: hub.memories.list(user_id=owner, scope="agent", tags=[TAG], metadata={"path": path}, limit=1))


async def pydantic_ai(hubs: Hubs) -> tuple[str, Timed, Timed]:
    """Each run starts from the loaded history: aload() of 20 messages."""
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart

    from memoryhub_client.integrations.pydantic_ai import MemoryHubHistory

    hub = hubs.aio
    history = MemoryHubHistory(user(), hub=hub, user_id="bench")
    messages = [m for turn in TURNS[:10] for m in (ModelRequest.user_text_prompt(turn), ModelResponse(parts=[TextPart(f"Noted: {turn}")]))]
    await history.asave(messages)
    return ("aload() of 20 messages vs sessions.list_messages", history.aload,
            lambda: hub.sessions.list_messages(history.session_id, limit=200, order="asc"))


async def llama_index(hubs: Hubs) -> tuple[str, Timed, Timed]:
    """Memory.aget() asks the block for what the latest messages are about: one search."""
    from llama_index.core.llms import ChatMessage

    from memoryhub_client.integrations.llama_index import MemoryHubMemoryBlock

    hub, owner = hubs.aio, user()
    block = MemoryHubMemoryBlock(hub=hub, user_id=owner)
    await block.aput([m for turn in TURNS for m in (ChatMessage(role="user", content=turn), ChatMessage(role="assistant", content="Noted."))])
    asked = [ChatMessage(role="user", content=QUESTION)]
    return ("aget() of the latest message vs memories.search", lambda: block.aget(asked),
            lambda: hub.memories.search(QUESTION, user_id=owner, max_results=block.max_results))


async def adk(hubs: Hubs) -> tuple[str, Timed, Timed]:
    """A Runner fetches the session (events and state) at the start of every run."""
    from google.adk.events import Event
    from google.genai import types

    from memoryhub_client.integrations.adk import MemoryHubSessionService

    hub, owner = hubs.aio, user()
    service = MemoryHubSessionService(hub=hub)
    session = await service.create_session(app_name="bench", user_id=owner, state={"tier": "gold"})
    for n, turn in enumerate(TURNS):
        author = "user" if n % 2 == 0 else "support"
        content = types.Content(role="user" if author == "user" else "model", parts=[types.Part(text=turn)])
        await service.append_event(session, Event(invocation_id=f"inv{n // 2}", author=author, content=content))
    found = await hub.sessions.list(user_id=owner, limit=1)
    hub_id = found.results[0].session_id

    async def plain() -> None:
        await hub.sessions.get(hub_id)
        await hub.sessions.list_messages(hub_id, limit=200, order="asc")
        await hub.items.search(["adk", "bench", "app"], limit=100)
        await hub.items.search(["adk", "bench", "user", owner], limit=100)

    return ("get_session() of 20 events vs the four client calls it makes",
            lambda: service.get_session(app_name="bench", user_id=owner, session_id=session.id), plain)


async def crewai(hubs: Hubs) -> tuple[str, Timed, Timed]:
    """recall() searches the storage with the query's vector (here the hub embeds its text)."""
    from crewai.memory.types import MemoryRecord

    from memoryhub_client.integrations.crewai import MemoryHubStorage

    hub, owner = hubs.sync, user()
    storage = MemoryHubStorage(hub=hub, user_id=owner)
    embed = storage.embedder()
    storage.save([MemoryRecord(content=turn, embedding=vector) for turn, vector in zip(TURNS, embed(TURNS))])
    [query] = embed([QUESTION])
    return ("search() of a query vector vs memories.search", lambda: storage.search(query, limit=10),
            lambda: hub.memories.search(QUESTION, user_id=owner, scope="agent", tags=[storage.collection], mode="semantic", max_results=10, repeats="keep"))


SETUPS: dict[str, Setup] = {"openai-agents": openai_agents, "anthropic": anthropic, "pydantic-ai": pydantic_ai, "llama-index": llama_index, "adk": adk, "crewai": crewai}


async def timed(fn: Timed) -> float:
    started = time.perf_counter()
    result = fn()
    if inspect.isawaitable(result):
        await result
    return (time.perf_counter() - started) * 1000


async def main(url: str, key: str, rounds: int, names: list[str]) -> dict[str, Any]:
    results: dict[str, Any] = {}
    async with AsyncMemoryHub(base_url=url, api_key=key) as aio:
        with MemoryHub(base_url=url, api_key=key) as sync:
            for name in names:
                call, adapter, plain = await SETUPS[name](Hubs(aio=aio, sync=sync))
                timings: dict[str, list[float]] = {"adapter": [], "plain": []}
                for _ in range(10):  # warm both: connections, imports, the hub's caches
                    await timed(adapter)
                    await timed(plain)
                for n in range(rounds):
                    for which, fn in (("adapter", adapter), ("plain", plain)) if n % 2 else (("plain", plain), ("adapter", adapter)):
                        timings[which].append(await timed(fn))
                results[name] = {"call": call, **timings}
    return results


if __name__ == "__main__":
    url, key, rounds, *names = sys.argv[1:]
    print(json.dumps(asyncio.run(main(url, key, int(rounds), names))))
