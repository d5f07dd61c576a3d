"""MemoryHubSession (memoryhub_client.integrations.openai_agents) with the OpenAI Agents SDK
itself, against the live hub: the SDK's Session protocol and the cases its own session tests
hold SQLiteSession to, items kept byte for byte, what operators see, and an agent (the SDK's
ScriptedModel) that resumes its conversation from the hub in a new process."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner, function_tool
from agents.memory import Session, SessionSettings
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

from conftest import Actors, run_example, unique
from memoryhub_client import AsyncMemoryHub, MemoryHub
from memoryhub_client.errors import Conflict, NotFound
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
        return run_example(actors, "examples/openai_agents/support_agent.py", "--session", session_id, "--user", "ann", message)

    first = run("Where is order 1042?")
    assert "history: 0 items" in first and "agent: Order 1042 is shipped on Monday, arriving Thursday." in first
    second = run("What did I ask first?")
    assert "history: 4 items" in second and "agent: You first asked: Where is order 1042?" in second
    roles = [m.role for m in operator.sessions.iter_messages(session_id)]
    assert roles == ["user", "assistant", "tool", "assistant", "user", "assistant"]


# The SDK's own session tests (tests/memory/test_session.py, tests/memory/test_session_limit.py,
# tests/extensions/memory/test_redis_session.py in openai/openai-agents-python), ported to
# MemoryHubSession on the live hub wherever they hold for a third-party session: each test
# names the ones it ports. What only concerns SQLite or Redis themselves (file locks, rollbacks,
# TTLs, connections, clients they own, corrupt rows, close) has no counterpart here.

RUNNERS = ["run", "run_sync", "run_streamed"]


def config(**options: Any) -> RunConfig:
    return RunConfig(tracing_disabled=True, **options)


def run_turn(method: str, agent: Agent, turn: Any, **options: Any) -> Any:
    """One run of `agent` through `method` of the SDK's Runner, as the SDK's tests take it
    (their `run_agent_async`): `run_sync` on a thread of its own with a loop of its own,
    `run_streamed` with every event consumed."""
    options.setdefault("run_config", config())
    if method == "run":
        return asyncio.run(Runner.run(agent, turn, **options))
    if method == "run_streamed":
        async def streamed() -> Any:
            result = Runner.run_streamed(agent, turn, **options)
            async for _event in result.stream_events():
                pass
            return result
        return asyncio.run(streamed())

    def synchronously() -> Any:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            return Runner.run_sync(agent, turn, **options)
        finally:
            asyncio.set_event_loop(None)
            loop.close()

    with ThreadPoolExecutor(1) as thread:
        return thread.submit(synchronously).result()


def text_of(item: Any) -> str:
    """A message item's text: its content string, or its parts' text."""
    content = item.get("content")
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)


def scripted_agent(*replies: str) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel([[assistant_message(reply, item_id=f"msg_{n}")] for n, reply in enumerate(replies)])
    return Agent(name="test", model=model), model


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, str]:
    return {"role": "assistant", "content": text}


@pytest.mark.parametrize("runner", RUNNERS)
def test_runner_turns_carry_their_history_through_the_session(hub: MemoryHub, runner: str) -> None:
    # Ports test_session_memory_basic_functionality_parametrized and
    # test_session_memory_with_explicit_instance_parametrized (test_session.py), and
    # test_runner_integration (test_redis_session.py).
    session = session_of(hub)
    agent, model = scripted_agent("San Francisco", "California")

    first = run_turn(runner, agent, "What city is the Golden Gate Bridge in?", session=session)
    second = run_turn(runner, agent, "What state is it in?", session=session)

    assert (first.final_output, second.final_output) == ("San Francisco", "California")
    assert [call.streamed for call in model.calls] == [runner == "run_streamed"] * 2
    assert model.calls[0].input == [{"content": "What city is the Golden Gate Bridge in?", "role": "user"}]
    # The second model call got the first turn back from the hub, then the new message.
    assert [text_of(item) for item in model.calls[1].input] == ["What city is the Golden Gate Bridge in?", "San Francisco", "What state is it in?"]
    stored = asyncio.run(session.get_items())
    assert model.calls[1].input == stored[:3]
    assert [text_of(item) for item in stored] == ["What city is the Golden Gate Bridge in?", "San Francisco", "What state is it in?", "California"]


@pytest.mark.parametrize("runner", RUNNERS)
def test_without_a_session_a_run_neither_reads_nor_writes_one(hub: MemoryHub, runner: str) -> None:
    # Ports test_session_memory_disabled_parametrized (test_session.py): with a hub session
    # holding history beside it, a run given no session sees none of it and adds nothing.
    session = session_of(hub)
    asyncio.run(session.add_items([user("Earlier"), assistant("Kept")]))
    agent, model = scripted_agent("Hello", "I don't remember")

    assert run_turn(runner, agent, "Hi there").final_output == "Hello"
    assert run_turn(runner, agent, "Do you remember what I said?").final_output == "I don't remember"

    assert model.calls[-1].input == [{"content": "Do you remember what I said?", "role": "user"}]
    assert asyncio.run(session.get_items()) == [user("Earlier"), assistant("Kept")]


@pytest.mark.parametrize("runner", RUNNERS)
def test_runs_on_different_sessions_keep_their_histories_apart(hub: MemoryHub, runner: str) -> None:
    # Ports test_session_memory_different_sessions_parametrized (test_session.py) and
    # test_session_isolation (test_redis_session.py).
    cats, dogs = session_of(hub), session_of(hub)
    agent, model = scripted_agent("I like cats", "I like dogs", "Yes, you mentioned cats")

    run_turn(runner, agent, "I like cats", session=cats)
    run_turn(runner, agent, "I like dogs", session=dogs)
    result = run_turn(runner, agent, "What did I say I like?", session=cats)

    assert result.final_output == "Yes, you mentioned cats"
    assert [text_of(item) for item in model.calls[1].input] == ["I like dogs"]
    assert [text_of(item) for item in model.calls[2].input] == ["I like cats", "I like cats", "What did I say I like?"]
    assert [text_of(item) for item in asyncio.run(dogs.get_items())] == ["I like dogs", "I like dogs"]


def test_add_get_pop_and_clear_directly(hub: MemoryHub) -> None:
    # Ports test_sqlite_session_memory_direct (test_session.py) and test_redis_session_direct_ops
    # (test_redis_session.py).
    session = session_of(hub)

    async def scenario() -> list[list[Any] | Any]:
        await session.add_items([user("Hello"), assistant("Hi there!")])
        added = await session.get_items()
        popped = await session.pop_item()
        after_pop = await session.get_items()
        await session.clear_session()
        return [added, popped, after_pop, await session.get_items()]

    assert asyncio.run(scenario()) == [[user("Hello"), assistant("Hi there!")], assistant("Hi there!"), [user("Hello")], []]


def test_pop_item_answers_the_newest_until_none_are_left(hub: MemoryHub) -> None:
    # Ports test_sqlite_session_memory_pop_item (test_session.py) and test_pop_from_empty_session
    # (test_redis_session.py).
    session = session_of(hub)
    items = [user("Hello"), assistant("Hi there!"), user("How are you?")]

    async def scenario() -> list[Any]:
        seen: list[Any] = [await session.pop_item()]
        await session.add_items(items)
        seen.append(await session.get_items())
        for _ in range(3):
            seen += [await session.pop_item(), await session.get_items()]
        return seen + [await session.pop_item(), await session.get_items()]

    assert asyncio.run(scenario()) == [
        None, items,
        items[2], items[:2],
        items[1], items[:1],
        items[0], [],
        None, [],
    ]


def test_pop_item_takes_only_from_its_own_session(hub: MemoryHub) -> None:
    # Ports test_session_memory_pop_different_sessions (test_session.py).
    first, second = session_of(hub), session_of(hub)

    async def scenario() -> tuple[Any, list[Any], list[Any]]:
        await first.add_items([user("Session 1 message")])
        await second.add_items([user("Session 2 message 1"), user("Session 2 message 2")])
        popped = await second.pop_item()
        return popped, await first.get_items(), await second.get_items()

    assert asyncio.run(scenario()) == (user("Session 2 message 2"), [user("Session 1 message")], [user("Session 2 message 1")])


def test_get_items_with_a_limit_answers_the_latest_that_many(hub: MemoryHub) -> None:
    # Ports test_sqlite_session_get_items_with_limit (test_session.py), and test_get_items_with_limit
    # and test_get_items_limit_returns_fewer_when_history_exhausted (test_redis_session.py).
    session, short = session_of(hub), session_of(hub)
    items = [user("Message 1"), assistant("Response 1"), user("Message 2"), assistant("Response 2"), user("Message 3"), assistant("Response 3")]

    async def scenario() -> dict[str, list[Any]]:
        await session.add_items(items)
        await short.add_items([user("only valid")])
        return {
            "all": await session.get_items(), "2": await session.get_items(limit=2), "4": await session.get_items(limit=4),
            "10": await session.get_items(limit=10), "0": await session.get_items(limit=0), "short": await short.get_items(limit=5),
        }

    got = asyncio.run(scenario())
    assert got == {"all": items, "2": items[-2:], "4": items[-4:], "10": items, "0": [], "short": [user("only valid")]}


@pytest.mark.parametrize("runner", RUNNERS)
def test_a_list_input_is_added_after_the_history(hub: MemoryHub, runner: str) -> None:
    # Ports test_session_memory_appends_list_input_by_default (test_session.py).
    session = session_of(hub)
    history = [user("Earlier message"), assistant("Saved reply")]
    asyncio.run(session.add_items(history))
    agent, model = scripted_agent("This should run")

    run_turn(runner, agent, [user("Test message")], session=session)

    assert model.calls[-1].input == history + [user("Test message")]
    stored = asyncio.run(session.get_items())
    assert stored[:3] == history + [user("Test message")] and [text_of(item) for item in stored[3:]] == ["This should run"]


@pytest.mark.parametrize("runner", RUNNERS)
def test_a_session_input_callback_prepares_the_model_input(hub: MemoryHub, runner: str) -> None:
    # Ports test_session_callback_prepared_input (test_session.py): the callback's list is what
    # the model gets; the session keeps its whole history and gains only the new turn.
    session = session_of(hub)
    history = [user("Hello there."), assistant("Hi, I'm here to assist you.")]
    asyncio.run(session.add_items(history))
    agent, model = scripted_agent("I'm gpt-4o")

    def users_only(past: list[Any], new: list[Any]) -> list[Any]:
        return [item for item in past if item["role"] == "user"] + new

    run_turn(runner, agent, [user("What your name?")], session=session, run_config=config(session_input_callback=users_only))

    assert model.calls[-1].input == [history[0], user("What your name?")]
    stored = asyncio.run(session.get_items())
    assert stored[:3] == history + [user("What your name?")] and [text_of(item) for item in stored[3:]] == ["I'm gpt-4o"]


@pytest.mark.parametrize("runner", RUNNERS)
def test_a_session_input_callback_repeating_history_does_not_grow_the_session(hub: MemoryHub, runner: str) -> None:
    # Ports test_session_callback_repeating_history_does_not_grow_session (test_session.py).
    session = session_of(hub)
    agent, model = scripted_agent("assistant 0", "assistant 1", "assistant 2")

    def repeat_first(past: list[Any], new: list[Any]) -> list[Any]:
        return past + [past[0]] + new if past else new

    for turn in range(3):
        run_turn(runner, agent, f"user {turn}", session=session, run_config=config(session_input_callback=repeat_first))

    stored = asyncio.run(session.get_items())
    assert [text_of(item) for item in stored] == ["user 0", "assistant 0", "user 1", "assistant 1", "user 2", "assistant 2"]
    # The model did get the repeated item, from the history the hub answered.
    assert [text_of(item) for item in model.calls[-1].input].count("user 0") == 2


def test_unicode_is_kept_exactly(hub: MemoryHub, operator: MemoryHub) -> None:
    # Ports test_sqlite_session_unicode_content (test_session.py) and test_unicode_content
    # (test_redis_session.py).
    session = session_of(hub)
    items = [user("こんにちは"), assistant("😊👍"), user("Привет"), assistant("👩‍👩‍👧 مرحبا ﷽ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢")]

    async def scenario() -> list[Any]:
        await session.add_items(items)
        return await session.get_items()

    assert asyncio.run(scenario()) == items
    assert [m.content for m in operator.sessions.iter_messages(session.session_id)] == [item["content"] for item in items]


def test_special_characters_and_json_unsafe_strings_are_kept_exactly(hub: MemoryHub, operator: MemoryHub) -> None:
    # Ports test_sqlite_session_special_characters_and_sql_injection (test_session.py), and
    # test_special_characters_and_json_safety and test_data_integrity_with_problematic_strings
    # (test_redis_session.py).
    session = session_of(hub)
    texts = [
        "O'Reilly", "DROP TABLE sessions;", '"SELECT * FROM users WHERE name = "admin";"', "Robert'); DROP TABLE students;--",
        '{"nested": "json"}', '{"malicious": "json"}', 'Quote: "Hello world"', "Line1\nLine2\tTabbed", "\\n\\t\\r Special escapes",
        "\\", "\"", "</script><script>alert(1)</script>", "%s %d {0} ${x}", "null", "\u2028\u2029", "Normal message",
    ]
    items = [(user if n % 2 == 0 else assistant)(text) for n, text in enumerate(texts)]

    async def scenario() -> list[Any]:
        await session.add_items(items)
        return await session.get_items()

    assert asyncio.run(scenario()) == items
    assert [m.content for m in operator.sessions.iter_messages(session.session_id)] == texts


def test_concurrent_add_items_from_several_tasks_keep_every_item(hub: MemoryHub) -> None:
    # Ports test_concurrent_access (test_redis_session.py): three tasks adding to one new session.
    session = session_of(hub)
    batches = [[user(f"Message {start + n}") for n in range(5)] for start in (0, 5, 10)]

    async def scenario() -> list[Any]:
        await asyncio.gather(*(session.add_items(batch) for batch in batches))
        return await session.get_items()

    stored = asyncio.run(scenario())
    assert sorted(text_of(item) for item in stored) == sorted(f"Message {n}" for n in range(15))
    for batch in batches:  # each add keeps its own order
        assert [item for item in stored if item in batch] == batch


def test_concurrent_add_items_from_several_threads_keep_every_item(hub: MemoryHub) -> None:
    # Ports test_sqlite_session_concurrent_access (test_session.py): one session, five threads,
    # each adding items from an event loop of its own.
    session = session_of(hub)
    items = [user(f"Message {n}") for n in range(10)]

    with ThreadPoolExecutor(5) as threads:
        list(threads.map(lambda item: asyncio.run(session.add_items([item])), items))

    assert sorted(text_of(item) for item in asyncio.run(session.get_items())) == sorted(text_of(item) for item in items)


def test_adding_no_items_changes_nothing(hub: MemoryHub, operator: MemoryHub) -> None:
    # Ports test_add_empty_items_list (test_redis_session.py): nor is the hub session made.
    session = session_of(hub)

    async def scenario() -> tuple[list[Any], list[Any]]:
        before = await session.get_items()
        await session.add_items([])
        return before, await session.get_items()

    assert asyncio.run(scenario()) == ([], [])
    with pytest.raises(NotFound):
        operator.sessions.get(session.session_id)


def test_the_same_session_id_in_two_workspaces_is_two_sessions(actors: Actors, hub: MemoryHub) -> None:
    # Ports test_key_prefix_isolation (test_redis_session.py): a workspace is what sets apart
    # the sessions of one id, as Redis's key prefix does.
    mine = session_of(hub)
    with actors.hub(actors.outsider_key) as foreign:
        theirs = session_of(foreign, mine.session_id)

        async def scenario() -> tuple[list[Any], list[Any]]:
            await mine.add_items([user("app1 message")])
            await theirs.add_items([user("app2 message")])
            return await mine.get_items(), await theirs.get_items()

        assert asyncio.run(scenario()) == ([user("app1 message")], [user("app2 message")])


@pytest.mark.parametrize("runner", RUNNERS)
def test_without_settings_a_session_reads_its_whole_history(hub: MemoryHub, runner: str) -> None:
    # Ports test_session_settings_default (test_session.py, test_redis_session.py). The SDK's
    # own sessions default to an empty SessionSettings; MemoryHubSession to None, which the
    # protocol allows: no limit either way.
    session = session_of(hub)
    history = [user(f"Turn {n}") for n in range(250)]  # more than one page of the hub's
    asyncio.run(session.add_items(history))
    agent, model = scripted_agent("Got it")

    assert session.session_settings is None and asyncio.run(session.get_items()) == history
    run_turn(runner, agent, "New question", session=session)
    assert model.calls[-1].input == history + [{"content": "New question", "role": "user"}]


@pytest.mark.parametrize("settings", [SessionSettings(limit=5), {"limit": 5}], ids=["class", "dictionary"])
def test_session_settings_from_the_constructor(hub: MemoryHub, settings: Any) -> None:
    # Ports test_session_settings_constructor (test_session.py; test_redis_session.py, both of
    # its ids) and test_session_settings_constructor_normalizes_dictionary (test_session.py).
    session = session_of(hub, session_settings=settings)
    assert isinstance(session.session_settings, SessionSettings) and session.session_settings.limit == 5
    assert session.session_settings.resolve({"limit": 4}).limit == 4
    items = [user(f"Message {n}") for n in range(7)]

    async def scenario() -> list[Any]:
        await session.add_items(items)
        return await session.get_items()

    assert asyncio.run(scenario()) == items[-5:]


def test_session_settings_refuse_unknown_fields(hub: MemoryHub) -> None:
    # Ports test_session_settings_rejects_unknown_dictionary_fields (test_session.py).
    with pytest.raises(TypeError, match="limitt"):
        session_of(hub, session_settings={"limitt": 1})


def test_get_items_takes_the_settings_limit_unless_given_one(hub: MemoryHub) -> None:
    # Ports test_get_items_uses_session_settings_limit and
    # test_get_items_explicit_limit_overrides_session_settings (test_session.py, test_redis_session.py).
    three = session_of(hub, session_settings=SessionSettings(limit=3))
    five = session_of(hub, session_settings=SessionSettings(limit=5))
    items = [user(f"Message {n}") for n in range(10)]

    async def scenario() -> tuple[list[Any], ...]:
        await three.add_items(items[:5])
        await five.add_items(items)
        return await three.get_items(), await five.get_items(), await five.get_items(limit=2)

    assert asyncio.run(scenario()) == (items[2:5], items[5:], items[8:])


@pytest.mark.parametrize("runner", RUNNERS)
def test_run_config_session_settings_override_the_sessions(hub: MemoryHub, runner: str) -> None:
    # Ports test_runner_with_session_settings_override (test_session.py, test_redis_session.py).
    session = session_of(hub, session_settings=SessionSettings(limit=100))
    history = [user(f"Turn {n}") for n in range(10)]
    asyncio.run(session.add_items(history))
    agent, model = scripted_agent("Got it")

    run_turn(runner, agent, "New question", session=session, run_config=config(session_settings=SessionSettings(limit=2)))

    assert model.calls[-1].input == history[-2:] + [{"content": "New question", "role": "user"}]
    assert session.session_settings == SessionSettings(limit=100)  # the run's override is the run's only


@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.parametrize("limit", [2, 0, None, 100])
def test_run_config_session_limit_bounds_the_history_the_model_gets(hub: MemoryHub, runner: str, limit: int | None) -> None:
    # Ports test_session_limit_parameter, test_session_limit_zero, test_session_limit_none_gets_all_history
    # and test_session_limit_larger_than_history (test_session_limit.py).
    session = session_of(hub)
    agent, model = scripted_agent("Reply 1", "Reply 2", "Reply 3", "Reply 4")
    for n in (1, 2, 3):
        run_turn(runner, agent, f"Message {n}", session=session)
    history = ["Message 1", "Reply 1", "Message 2", "Reply 2", "Message 3", "Reply 3"]
    assert [text_of(item) for item in asyncio.run(session.get_items())] == history

    run_turn(runner, agent, "Message 4", session=session, run_config=config(session_settings=SessionSettings(limit=limit)))

    expected = history if limit is None else history[len(history) - min(limit, len(history)):]
    assert [text_of(item) for item in model.calls[-1].input] == expected + ["Message 4"]
    assert len(asyncio.run(session.get_items())) == 8  # the limit bounds what is read, never what is kept


@pytest.mark.parametrize("runner", RUNNERS)
def test_a_session_limit_drops_an_output_whose_call_it_cut_off(hub: MemoryHub, runner: str) -> None:
    # Ports test_session_limit_drops_unmatched_history_function_call_output (test_session_limit.py).
    session = session_of(hub)
    history: list[Any] = [
        user("What is the weather?"),
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "It is sunny.", "annotations": []}]},
    ]
    asyncio.run(session.add_items(history))
    assert asyncio.run(session.get_items(limit=2)) == history[-2:]
    agent, model = scripted_agent("Tomorrow is sunny too.")

    run_turn(runner, agent, "What about tomorrow?", session=session, run_config=config(session_settings=SessionSettings(limit=2)))

    assert model.calls[-1].input == [history[-1], {"role": "user", "content": "What about tomorrow?"}]
    assert asyncio.run(session.get_items())[:4] == history  # the call's output stays on the hub


@pytest.mark.timeout(60)
@pytest.mark.parametrize("runner", RUNNERS)
def test_a_failing_add_items_fails_the_run(hub: MemoryHub, runner: str) -> None:
    # Ports test_session_add_items_exception_propagates_in_streamed (test_session.py), for
    # every runner and with a real failure: the hub session belongs to another user, so the
    # first write is refused (Conflict), and the run raises it rather than hang.
    session = session_of(hub)
    hub.sessions.create(session.session_id, user_id="bob")
    agent, _model = scripted_agent("This should not be reached")

    with pytest.raises(Conflict):
        run_turn(runner, agent, "Hello", session=session)
    assert list(hub.sessions.iter_messages(session.session_id)) == []
