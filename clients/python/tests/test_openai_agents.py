"""MemoryHubSession (memoryhub_client.integrations.openai_agents) with the OpenAI Agents SDK
itself, against the live hub: the SDK's Session protocol and the cases its own session tests
hold SQLiteSession to, items kept byte for byte, what operators see, and an agent (the SDK's
ScriptedModel) that resumes its conversation from the hub in a new process."""

from __future__ import annotations

import asyncio
import json
import subprocess
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner, function_tool
from agents.memory import Session, SessionSettings
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

from conftest import PYTHON, REPOSITORY, Actors, example_env, unique
from memoryhub_client import AsyncMemoryHub, MemoryHub
from memoryhub_client.integrations.openai_agents import MemoryHubSession

# One item of every kind a run keeps: keys in the SDK's order (not sorted), text beyond
# ASCII, parts, numbers, nulls.
ITEMS: list[Any] = [
    {"content": "Wo ist Bestellung 1042? ✈", "role": "user"},
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Look the order up first."}], "encrypted_content": None},
    {"arguments": "{\"order_id\":\"1042\"}", "call_id": "call_1", "name": "order_status", "type": "function_call", "id": "fc_1", "status": "completed"},
    {"call_id": "call_1", "output": "shipped", "type": "function_call_output"},
    {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "carrier delays"}},
    {"id": "msg_1", "content": [{"annotations": [], "text": "Shipped — arriving Thursday.", "type": "output_text", "logprobs": []}],
     "role": "assistant", "status": "completed", "type": "message"},
    {"role": "user", "content": [{"type": "input_text", "text": "Thanks!"}, {"type": "input_image", "image_url": "https://example.com/r.png", "detail": "auto"}]},
    {"role": "system", "content": "Be brief.", "x-score": 0.1 + 0.2, "x-count": 2**40},
]


def session_of(hub: MemoryHub | AsyncMemoryHub, session_id: str | None = None, **options: Any) -> MemoryHubSession:
    return MemoryHubSession(session_id or unique("oa"), hub=hub, user_id="ann", **options)


def test_it_is_the_sdks_session(hub: MemoryHub) -> None:
    session = session_of(hub)
    assert isinstance(session, Session)  # the SDK's runtime-checkable protocol
    assert session.session_settings is None


def test_it_keeps_every_kind_of_item_byte_for_byte_in_order(hub: MemoryHub, operator: MemoryHub) -> None:
    session = session_of(hub)

    async def scenario() -> list[Any]:
        await session.add_items(ITEMS[:3])
        await session.add_items(ITEMS[3:])
        return await session.get_items()

    assert [json.dumps(item) for item in asyncio.run(scenario())] == [json.dumps(item) for item in ITEMS]
    # What an operator reads of the same conversation: roles, text, the call and its result.
    seen = [(m.role, m.content, m.tool_call_id) for m in operator.sessions.iter_messages(session.session_id)]
    assert seen == [
        ("user", "Wo ist Bestellung 1042? ✈", None), ("assistant", "Look the order up first.", None), ("assistant", "", None),
        ("tool", "shipped", "call_1"), ("assistant", "[web_search_call]", None), ("assistant", "Shipped — arriving Thursday.", None),
        ("user", "Thanks!\n[input_image]", None), ("system", "Be brief.", None),
    ]
    [call] = [m for m in operator.sessions.iter_messages(session.session_id) if m.tool_calls]
    assert call.tool_calls == [{"id": "call_1", "type": "function", "function": {"name": "order_status", "arguments": "{\"order_id\":\"1042\"}"}}]


def test_get_items_answers_the_latest_n_oldest_first(hub: MemoryHub) -> None:
    session = session_of(hub)
    turns = [{"role": "user", "content": f"turn {n}"} for n in range(450)]  # more than one page of the hub's

    async def scenario() -> dict[str, Any]:
        await session.add_items(turns)
        return {
            "3": await session.get_items(limit=3), "250": await session.get_items(limit=250), "all": await session.get_items(),
            "0": await session.get_items(limit=0), "-1": await session.get_items(limit=-1), "more": await session.get_items(limit=1000),
        }

    got = asyncio.run(scenario())
    assert got["3"] == turns[-3:] and got["250"] == turns[-250:] and got["all"] == turns and got["more"] == turns
    assert got["0"] == [] and got["-1"] == []  # the protocol: no items for zero and negative limits
    # The session's settings give the default limit, as they do the SDK's own sessions.
    limited = session_of(hub, session.session_id, session_settings=SessionSettings(limit=2))
    assert asyncio.run(limited.get_items()) == turns[-2:] and asyncio.run(limited.get_items(limit=4)) == turns[-4:]


def test_pop_item_removes_exactly_the_last_item_on_the_hub_too(hub: MemoryHub, operator: MemoryHub) -> None:
    session = session_of(hub)

    async def scenario() -> tuple[Any, ...]:
        empty = await session.pop_item()
        await session.add_items(ITEMS[:4])
        popped = await session.pop_item()
        return empty, popped, await session.pop_item(), await session.get_items()

    empty, popped, second, left = asyncio.run(scenario())
    assert empty is None and popped == ITEMS[3] and second == ITEMS[2] and left == ITEMS[:2]
    assert [m.content for m in operator.sessions.iter_messages(session.session_id)] == ["Wo ist Bestellung 1042? ✈", "Look the order up first."]


def test_clear_session_leaves_it_empty_and_usable(hub: MemoryHub, operator: MemoryHub) -> None:
    session = session_of(hub)

    async def scenario() -> tuple[list[Any], list[Any]]:
        await session.clear_session()  # nothing there yet: no error
        await session.add_items(ITEMS)
        await session.clear_session()
        cleared = await session.get_items()
        await session.add_items([ITEMS[0]])
        return cleared, await session.get_items()

    cleared, after = asyncio.run(scenario())
    assert cleared == [] and after == [ITEMS[0]]
    assert [m.content for m in operator.sessions.iter_messages(session.session_id)] == [ITEMS[0]["content"]]


def test_sessions_keep_apart_by_id_and_by_workspace(actors: Actors, hub: MemoryHub) -> None:
    first, second = session_of(hub), session_of(hub)
    with actors.hub(actors.outsider_key) as foreign:
        spy = session_of(foreign, first.session_id)

        async def scenario() -> tuple[list[Any], ...]:
            await first.add_items([{"role": "user", "content": "mine"}])
            await second.add_items([{"role": "user", "content": "other"}])
            return await first.get_items(), await second.get_items(), await spy.get_items(), await spy.pop_item() or []

        mine, other, spied, popped = asyncio.run(scenario())
    assert mine == [{"role": "user", "content": "mine"}] and other == [{"role": "user", "content": "other"}]
    assert spied == [] and popped == []  # the same id in another workspace is another session
    assert asyncio.run(first.get_items()) == mine


def test_it_works_on_the_async_client_and_reads_messages_written_without_an_item(actors: Actors, hub: MemoryHub) -> None:
    session_id = unique("oa")
    hub.sessions.create(session_id, user_id="ann")
    hub.sessions.append_messages(session_id, [
        {"role": "user", "content": "From the old app"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c9", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]},
        {"role": "tool", "content": "found", "tool_call_id": "c9"},
    ])

    async def scenario() -> list[Any]:
        async with AsyncMemoryHub(base_url=actors.url, api_key=actors.agent_key) as async_hub:
            return await session_of(async_hub, session_id).get_items()

    assert asyncio.run(scenario()) == [
        {"role": "user", "content": "From the old app"},
        {"type": "function_call", "call_id": "c9", "name": "lookup", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c9", "output": "found"},
    ]


@function_tool
def order_status(order_id: str) -> str:
    """Where an order is."""
    return {"1042": "shipped"}.get(order_id, "unknown")


def test_a_runner_keeps_its_turns_in_the_session(hub: MemoryHub) -> None:
    session = session_of(hub)
    model = ScriptedModel([
        [function_call("order_status", {"order_id": "1042"}, call_id="call_a")],
        [assistant_message("Order 1042 is shipped.", item_id="msg_a")],
        ModelStep.respond(lambda call: [assistant_message(f"I see {len(call.input)} earlier items.", item_id="msg_b")]),
    ])
    agent = Agent(name="support", instructions="Answer.", tools=[order_status], model=model)
    config = RunConfig(tracing_disabled=True)

    async def scenario() -> tuple[str, str, list[Any]]:
        first = await Runner.run(agent, "Where is order 1042?", session=session, run_config=config)
        second = await Runner.run(agent, "Thanks", session=session, run_config=config)
        return first.final_output, second.final_output, await session.get_items()

    first, second, items = asyncio.run(scenario())
    assert first == "Order 1042 is shipped."
    # The second turn's model call got the whole first turn from the hub, and the new message.
    assert second == "I see 5 earlier items." and len(items) == 6
    assert [item.get("type", "message") for item in items] == ["message", "function_call", "function_call_output", "message", "message", "message"]
    assert items[2] == {"call_id": "call_a", "output": "shipped", "type": "function_call_output"}


@pytest.mark.timeout(120)
def test_the_example_agent_resumes_its_conversation_in_a_new_process(actors: Actors, operator: MemoryHub) -> None:
    session_id = unique("example")

    def run(message: str) -> str:
        done = subprocess.run(
            [PYTHON, str(REPOSITORY / "examples/openai_agents/support_agent.py"), "--session", session_id, "--user", "ann", message],
            env=example_env(actors), capture_output=True, text=True, timeout=90,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    first = run("Where is order 1042?")
    assert "history: 0 items" in first and "agent: Order 1042 is shipped on Monday, arriving Thursday." in first
    second = run("What did I ask first?")
    assert "history: 4 items" in second and "agent: You first asked: Where is order 1042?" in second
    roles = [m.role for m in operator.sessions.iter_messages(session_id)]
    assert roles == ["user", "assistant", "tool", "assistant", "user", "assistant"]
