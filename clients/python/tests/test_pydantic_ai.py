"""MemoryHubHistory and MemoryHubConversationStore (memoryhub_client.integrations.pydantic_ai)
with Pydantic AI itself, against the live hub: histories load back equal to what was saved,
saves append only what is new, what operators see, Pydantic AI's ConversationStore through
agent runs (branches, forks, conflicts, listing, deletes), and an agent (FunctionModel) that
resumes its conversation from the hub in a new process."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.conversation import Conversation
from pydantic_ai.conversation_store import ConversationConflict, ConversationStore
from pydantic_ai.messages import (
    BinaryContent, BinaryImage, ImageUrl, ModelMessage, ModelRequest, ModelResponse, TextPart, ThinkingPart, ToolCallPart, ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from conftest import Actors, run_example, unique
from memoryhub_client import AsyncMemoryHub, MemoryHub
from memoryhub_client.integrations.pydantic_ai import MemoryHubConversationStore, MemoryHubHistory, dump_messages


def order_status(order_id: str) -> str:
    """Where an order is."""
    if order_id == "bad":
        raise ModelRetry("No order has that number; ask for it again.")
    return {"1042": "shipped", "2071": "packed"}.get(order_id, "unknown")


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Thinks and calls two tools at once, then one that asks for a retry, then answers with the
    number of messages it was given (what a continued conversation changes)."""
    turn = sum(1 for message in messages if isinstance(message, ModelResponse))
    last = messages[-1].parts[-1]
    if isinstance(last, UserPromptPart) and turn == 0:
        return ModelResponse(parts=[
            ThinkingPart("Two orders: look both up. ✈", signature="sig-1"),
            ToolCallPart("order_status", {"order_id": "1042"}, tool_call_id="call_a"),
            ToolCallPart("order_status", {"order_id": "2071"}, tool_call_id="call_b"),
        ], model_name="scripted")
    if isinstance(last, ToolReturnPart) and last.tool_call_id == "call_b":
        return ModelResponse(parts=[ToolCallPart("order_status", {"order_id": "bad"}, tool_call_id="call_c")])
    return ModelResponse(parts=[TextPart(f"Order 1042 is shipped, 2071 packed (I was given {len(messages)} messages).")])


def support_agent() -> Agent[None, str]:
    return Agent(FunctionModel(scripted), system_prompt="Be brief.", instructions="Answer about orders.", tools=[order_status])


def rich_history() -> list[ModelMessage]:
    """A real run's messages (system prompt, instructions, thinking, parallel tool calls, a
    retried call, usage, timestamps), then a turn with an image URL, bytes and text beyond ASCII."""
    messages = support_agent().run_sync("Wo sind 1042 und 2071?").all_messages()
    return [
        *messages,
        # An image's bytes as BinaryImage: Pydantic AI's own adapter loads a BinaryContent of an image as one.
        ModelRequest(parts=[UserPromptPart([
            "Und dieses Foto? ü", ImageUrl("https://example.com/r.png"), BinaryImage(data=b"\x00\xffraw", media_type="image/png"),
            BinaryContent(b"%PDF-1.7", media_type="application/pdf"),
        ])]),
        ModelResponse(parts=[TextPart("A parcel.")], model_name="scripted"),
    ]


def seen_retry(messages: list[ModelMessage]) -> str:
    """What the model (and an operator) reads of the retried call's return."""
    part = messages[4].parts[0]
    assert isinstance(part, ToolReturnPart)
    return part.model_response_str()


def history_of(hub: MemoryHub | AsyncMemoryHub, session_id: str | None = None) -> MemoryHubHistory:
    return MemoryHubHistory(session_id or unique("pa"), hub=hub, user_id="ann")


def test_it_loads_a_rich_history_back_equal_and_operators_read_it(hub: MemoryHub, operator: MemoryHub) -> None:
    history = history_of(hub)
    messages = rich_history()
    assert history.load() == []  # no session yet
    history.save(messages)
    loaded = history.load()
    assert loaded == messages and dump_messages(loaded) == dump_messages(messages)
    # Each message is its own JSON form, kept whole in the hub message's item.
    rows = list(operator.sessions.iter_messages(history.session_id))
    assert [row.item for row in rows if row.item.get("kind") != "continued"] == dump_messages(messages)
    seen = [(row.role, row.content, row.tool_call_id, [c["id"] for c in row.tool_calls or ()]) for row in rows]
    assert seen == [
        ("system", "Be brief.", None, []),
        ("user", "Wo sind 1042 und 2071?", None, []),
        ("assistant", "", None, ["call_a", "call_b"]),
        ("tool", "shipped", "call_a", []),  # one request, one tool message per return
        ("tool", "packed", "call_b", []),
        ("assistant", "", None, ["call_c"]),
        ("tool", seen[6][1], "call_c", []),
        ("assistant", "Order 1042 is shipped, 2071 packed (I was given 5 messages).", None, []),
        ("user", "Und dieses Foto? ü\n[image-url]\n[binary]\n[binary]", None, []),
        ("assistant", "A parcel.", None, []),
    ]
    assert "No order has that number" in seen[6][1]
    assert rows[2].tool_calls[0]["function"] == {"name": "order_status", "arguments": '{"order_id":"1042"}'}
    assert rows[1].item == {"kind": "continued"} and rows[0].item["kind"] == "request"


def test_a_grown_history_appends_only_its_new_messages(hub: MemoryHub, operator: MemoryHub) -> None:
    history = history_of(hub)
    messages = rich_history()
    history.save(messages[:2])
    before = [(row.seq, row.content) for row in operator.sessions.iter_messages(history.session_id)]
    history.save(messages)
    after = [(row.seq, row.content) for row in operator.sessions.iter_messages(history.session_id)]
    assert after[:len(before)] == before and len(after) == 10  # the old messages kept their seqs
    history.save(messages)  # nothing new: nothing written
    assert [(row.seq, row.content) for row in operator.sessions.iter_messages(history.session_id)] == after
    assert history.load() == messages


def test_a_shorter_or_different_history_replaces_the_stored_one(hub: MemoryHub, operator: MemoryHub) -> None:
    history = history_of(hub)
    messages = rich_history()
    history.save(messages)
    kept = [messages[0], messages[-2], messages[-1]]  # trimmed by the app: no longer what is stored
    history.save(kept)
    assert history.load() == kept
    assert [row.role for row in operator.sessions.iter_messages(history.session_id)] == ["system", "user", "user", "assistant"]
    # A history that starts after its calls: their results read as user text (the hub keeps no result without its call).
    history.save(messages[2:6])
    assert history.load() == messages[2:6]
    assert [(row.role, row.content, row.tool_call_id) for row in operator.sessions.iter_messages(history.session_id)][:3] == [
        ("user", "[order_status result] shipped\n\n[order_status result] packed", None), ("assistant", "", None),
        ("tool", seen_retry(messages), "call_c"),
    ]
    history.save(messages[:1])  # a prefix of what is stored, but shorter: the history is now that
    assert history.load() == messages[:1]
    history.save([])
    assert history.load() == [] and list(operator.sessions.iter_messages(history.session_id)) == []


def test_an_agent_continues_its_conversation_from_the_hub_on_either_client(actors: Actors, hub: MemoryHub) -> None:
    session_id = unique("pa")
    agent = support_agent()

    async def scenario() -> tuple[str, str, list[ModelMessage]]:
        async with AsyncMemoryHub(base_url=actors.url, api_key=actors.agent_key) as async_hub:
            history = history_of(async_hub, session_id)
            first = await agent.run("Where are 1042 and 2071?", message_history=await history.aload())
            await history.asave(first.all_messages())
            second = await agent.run("Thanks", message_history=await history.aload())
            await history.asave(second.all_messages())
            return first.output, second.output, second.all_messages()

    first, second, everything = asyncio.run(scenario())
    assert first.endswith("(I was given 5 messages).")
    # The second run's model call got the first run's 6 messages from the hub, and the new prompt.
    assert second.endswith("(I was given 7 messages).")
    assert history_of(hub, session_id).load() == everything and len(everything) == 8


def test_messages_written_without_an_item_read_as_plain_pydantic_ai_messages(hub: MemoryHub) -> None:
    session_id = unique("pa")
    hub.sessions.create(session_id, user_id="ann")
    hub.sessions.append_messages(session_id, [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "From the old app"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c9", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\": 1}"}}]},
        {"role": "tool", "content": "found", "tool_call_id": "c9"},
    ])
    history = history_of(hub, session_id)
    loaded = history.load()
    assert [type(message).__name__ for message in loaded] == ["ModelRequest", "ModelRequest", "ModelResponse", "ModelRequest"]
    call, result = loaded[2].parts[0], loaded[3].parts[0]
    assert isinstance(call, ToolCallPart) and (call.tool_name, call.args_as_dict(), call.tool_call_id) == ("lookup", {"q": 1}, "c9")
    assert isinstance(result, ToolReturnPart) and (result.tool_name, result.content, result.tool_call_id) == ("lookup", "found", "c9")
    # Saving what was loaded, and more, appends only the more.
    history.save([*loaded, ModelResponse(parts=[TextPart("Done.")])])
    assert len(history.load()) == 5 and len(list(hub.sessions.iter_messages(session_id))) == 5


@pytest.mark.parametrize("who", ["outsider_key", "teammate_key"])
def test_another_workspace_or_agent_sees_nothing(actors: Actors, hub: MemoryHub, who: str) -> None:
    history = history_of(hub)
    history.save(rich_history())
    store = MemoryHubConversationStore(hub=hub, user_id="ann")
    conversation_id = unique("pa")
    asyncio.run(store.save(Conversation(messages=rich_history()[:6], conversation_id=conversation_id)))
    with actors.hub(getattr(actors, who)) as other:
        assert history_of(other, history.session_id).load() == []
        spy = MemoryHubConversationStore(hub=other, user_id="ann")
        assert asyncio.run(spy.load(conversation_id)) is None and asyncio.run(spy.list_conversations()) == []
    assert len(history.load()) == 8 and len(asyncio.run(store.load(conversation_id)).messages) == 6  # type: ignore[union-attr]


# -- Pydantic AI's ConversationStore --


def test_the_store_is_pydantic_ais_and_agent_runs_continue_through_it(actors: Actors, hub: MemoryHub, operator: MemoryHub) -> None:
    conversation_id = unique("pa")
    agent = support_agent()

    async def run(prompt: str) -> Any:
        store = MemoryHubConversationStore(hub=hub, user_id="ann")  # a new one per turn, as a new process has
        conversation = await store.load(conversation_id) or Conversation(conversation_id=conversation_id)
        result = await agent.run(prompt, conversation=conversation)
        return result, await store.save(result)

    assert isinstance(MemoryHubConversationStore(hub=hub, user_id="ann"), ConversationStore)
    first, first_entries = asyncio.run(run("Where are 1042 and 2071?"))
    seqs = [(row.seq, row.item.get("id")) for row in operator.sessions.iter_messages(conversation_id)]
    second, second_entries = asyncio.run(run("Thanks"))
    assert len(first_entries) == 6 and len(second_entries) == 2 and second.output.endswith("(I was given 7 messages).")
    rows = list(operator.sessions.iter_messages(conversation_id))
    assert [(row.seq, row.item.get("id")) for row in rows][:len(seqs)] == seqs  # appended, never rewritten
    assert [row.item["id"] for row in rows if row.item["kind"] == "entry"] == [entry.id for entry in first_entries + second_entries]
    loaded = asyncio.run(MemoryHubConversationStore(hub=hub, user_id="ann").load(conversation_id))
    assert loaded is not None and loaded.messages == second.all_messages()
    assert loaded.usage == second.usage and loaded.usage.requests == 4  # usage carried across runs
    assert [row.role for row in rows][-3:] == ["assistant", "user", "assistant"]
    # A window of the latest messages, as `load(limit=)` gives a run that needs only those.
    latest = asyncio.run(MemoryHubConversationStore(hub=hub, user_id="ann").load(conversation_id, limit=3))
    assert latest is not None and latest.messages == second.all_messages()[-3:]


def test_the_store_refuses_a_stale_save(hub: MemoryHub) -> None:
    conversation_id = unique("pa")
    store = MemoryHubConversationStore(hub=hub, user_id="ann")
    agent = support_agent()
    messages = rich_history()

    async def scenario() -> None:
        await store.save(Conversation(messages=messages[:6], conversation_id=conversation_id))
        one, two = await store.load(conversation_id), await MemoryHubConversationStore(hub=hub, user_id="ann").load(conversation_id)
        assert one is not None and two is not None
        await store.save(await agent.run("First writer", conversation=one))
        with pytest.raises(ConversationConflict):
            await store.save(await agent.run("Second writer", conversation=two))
        with pytest.raises(ConversationConflict):  # a new conversation under a taken id
            await store.save(Conversation(messages=messages[:1], conversation_id=conversation_id))
        # A title set in between is no conflict, and the next save keeps it.
        three = await store.load(conversation_id)
        await store.update(conversation_id, title="Orders", expected_title=None)
        await store.save(await agent.run("Third writer", conversation=three))
        record = await store.read_record(conversation_id)
        assert record is not None and record.title == "Orders"

    asyncio.run(scenario())


def test_the_store_branches_forks_lists_and_deletes(hub: MemoryHub, operator: MemoryHub) -> None:
    store = MemoryHubConversationStore(hub=hub, user_id="ann")
    source, fork_id = unique("pa"), unique("pa")
    messages = rich_history()

    async def scenario() -> None:
        await store.save(Conversation(messages=messages[:8], conversation_id=source), scope="ann")
        # A fork shares the history before it and adds its own in a session of its own.
        fork = await store.fork(source, at=3, new_conversation_id=fork_id, scope="bob")
        fork.messages.extend(messages[3:5])
        await store.save(fork)
        assert (await store.load(fork_id)).messages == messages[:5]  # type: ignore[union-attr]
        assert [row.tool_call_id for row in operator.sessions.iter_messages(fork_id)] == [None, "call_c"]
        loaded = await store.load(source)
        assert loaded is not None
        # Regenerate from the second message: the old history stays as a branch.
        branched = await store.branch(source, at=2, expected_revision=loaded.revision)
        regenerated = ModelResponse(parts=[TextPart("Let me check.")])
        branched.messages.append(regenerated)
        await store.save(branched)
        record = await store.read_record(source)
        assert record is not None and len(record.branches) == 1
        again = await store.load(source)
        assert again is not None and again.messages == [*messages[:2], regenerated]
        listed = await store.list_conversations()
        assert [record.conversation_id for record in listed] == [source, fork_id]
        assert [record.conversation_id for record in await store.list_conversations(scope="ann")] == [source]
        await store.update(source, title="Orders", metadata={"model": "scripted"})
        assert (await store.read_record(source)).title == "Orders"  # type: ignore[union-attr]
        # Deleting the source keeps the entries the fork reads; deleting the fork too removes them.
        await store.delete(source)
        assert await store.load(source) is None and source not in [r.conversation_id for r in await store.list_conversations()]
        assert (await store.load(fork_id)).messages == messages[:5]  # type: ignore[union-attr]
        assert list(operator.sessions.iter_messages(source))
        await store.delete(fork_id)
        assert await store.load(fork_id) is None
        assert list(operator.sessions.iter_messages(fork_id)) == list(operator.sessions.iter_messages(source)) == []
        # A conversation deleted can start again under its id.
        await store.save(Conversation(messages=messages[:1], conversation_id=source))
        assert (await store.load(source)).messages == messages[:1]  # type: ignore[union-attr]

    asyncio.run(scenario())


@pytest.mark.timeout(120)
def test_the_example_agent_resumes_its_conversation_in_a_new_process(actors: Actors, operator: MemoryHub) -> None:
    session_id = unique("example")

    def run(message: str) -> str:
        return run_example(actors, "examples/pydantic_ai/agent.py", "--session", session_id, "--user", "ann", message)

    first = run("Where is order 1042?")
    assert "history: 0 messages" in first and "agent: Order 1042 is shipped on Monday, arriving Thursday." in first
    second = run("What did I ask first?")
    assert "history: 4 messages" in second and "agent: You first asked: Where is order 1042?" in second
    roles = [m.role for m in operator.sessions.iter_messages(session_id)]
    assert roles == ["user", "assistant", "tool", "assistant", "user", "assistant"]


def test_the_sync_calls_run_in_the_callers_thread_even_where_a_loop_runs(actors: Actors, hub: MemoryHub) -> None:
    # A notebook or an async web handler calling the sync interface: asyncio.run would refuse.
    history = MemoryHubHistory(unique("pa"), hub=hub, user_id="ann")
    messages = rich_history()

    async def inside_a_loop() -> list[ModelMessage]:
        history.save(messages)
        return history.load()

    assert asyncio.run(inside_a_loop()) == messages

    async def with_the_async_client() -> None:
        async with AsyncMemoryHub(base_url=actors.url, api_key=actors.agent_key) as async_hub:
            MemoryHubHistory(unique("pa"), hub=async_hub, user_id="ann").load()

    with pytest.raises(TypeError, match="needs a MemoryHub"):
        asyncio.run(with_the_async_client())
