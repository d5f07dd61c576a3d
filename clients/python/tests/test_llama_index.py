"""MemoryHubMemoryBlock (memoryhub_client.integrations.llama_index) inside LlamaIndex's own
`Memory`, against the live hub: what Memory flushes from its short-term queue becomes the user's
hub memories, what the latest messages are about comes back in the block's part of the prompt,
other users' and other workspaces' memories never do, a FunctionAgent (a mock LLM) answers from
them, and the example agent remembers across processes."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.llms import ChatMessage
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import Memory
from llama_index.core.memory.memory import BaseMemoryBlock
from llama_index.core.storage.chat_store.sql import MessageStatus

from conftest import Actors, run_example, unique
from memoryhub_client import AsyncMemoryHub, MemoryHub
from memoryhub_client.integrations.llama_index import MemoryHubMemoryBlock

# Turns of a conversation; with a token limit this small, Memory flushes all but the last into its blocks.
TURNS = [
    ("My dog is called Rex and he loves the beach.", "Rex sounds lovely."),
    ("I am allergic to peanuts.", "Noted: no peanuts."),
    ("Book me a table for Friday.", "Done, Friday at eight."),
]


def memory_with(block: BaseMemoryBlock[Any], session_id: str | None = None) -> Memory:
    return Memory.from_defaults(session_id=session_id or unique("li"), token_limit=40, memory_blocks=[block])


def tell(memory: Memory, turns: Sequence[tuple[str, str]] = TURNS) -> None:
    for question, answer in turns:
        memory.put_messages([ChatMessage(role="user", content=question), ChatMessage(role="assistant", content=answer)])


def block_text(messages: list[ChatMessage], name: str = "MemoryHub") -> str:
    """The block's part of the `<memory>` system message Memory builds ('' when it has none)."""
    system = "\n".join(message.content or "" for message in messages if message.role.value == "system")
    start, end = system.find(f"<{name}>"), system.find(f"</{name}>")
    return system[start + len(name) + 2:end].strip() if start >= 0 else ""


def test_it_is_a_llama_index_memory_block_and_flushed_turns_become_hub_memories(actors: Actors, hub: MemoryHub, operator: MemoryHub) -> None:
    block = MemoryHubMemoryBlock(hub=hub, user_id="ann")
    assert isinstance(block, BaseMemoryBlock) and block.name == "MemoryHub" and block.priority == 0 and block.accept_short_term_memory
    memory = memory_with(block)
    tell(memory)
    short_term = [message.content for message in memory.get_all(status=MessageStatus.ACTIVE)]
    kept = operator.memories.list(user_id="ann", store=actors.store).results
    # Every turn but the last left the short-term queue, and is now one memory of the user's.
    assert sorted(memory.content for memory in kept) == [
        "user: I am allergic to peanuts.\nassistant: Noted: no peanuts.",
        "user: My dog is called Rex and he loves the beach.\nassistant: Rex sounds lovely.",
    ]
    assert short_term == ["Book me a table for Friday.", "Done, Friday at eight."]
    entry = next(memory for memory in kept if "Rex" in memory.content)
    assert entry.memory_type == "episodic" and entry.tags == ["llama-index"] and entry.user_id == "ann"
    assert entry.metadata == {"source": "llama-index", "memory_block": "MemoryHub", "roles": ["user", "assistant"], "session_id": memory.session_id}


def test_memory_get_brings_back_what_the_latest_messages_are_about(hub: MemoryHub) -> None:
    memory = memory_with(MemoryHubMemoryBlock(hub=hub, user_id="ann", max_results=1))
    tell(memory)
    memory.put(ChatMessage(role="user", content="What is my dog called?"))
    recalled = block_text(memory.get())
    assert recalled == "user: My dog is called Rex and he loves the beach.\nassistant: Rex sounds lovely."
    # In another conversation (a new Memory, nothing in its short-term queue) and from async code.
    later = memory_with(MemoryHubMemoryBlock(hub=hub, user_id="ann", max_results=1))
    assert "allergic to peanuts" in block_text(asyncio.run(later.aget(input="Can I eat peanut butter?")))
    assert block_text(memory_with(MemoryHubMemoryBlock(hub=hub, user_id="ann")).get()) == ""  # no messages: no search


def test_other_users_and_other_workspaces_memories_never_appear(actors: Actors, hub: MemoryHub) -> None:
    hub.memories.create("Bob's dog is called Max.", user_id="bob")
    tell(memory_with(MemoryHubMemoryBlock(hub=hub, user_id="ann")))
    ann = memory_with(MemoryHubMemoryBlock(hub=hub, user_id="ann", max_results=10, min_relevance=0.0))
    recalled = block_text(asyncio.run(ann.aget(input="What is the dog called?")))
    assert "Rex" in recalled and "Max" not in recalled
    bob = memory_with(MemoryHubMemoryBlock(hub=hub, user_id="bob", max_results=10))
    assert "Rex" not in block_text(asyncio.run(bob.aget(input="What is the dog called?")))
    with actors.hub(actors.outsider_key) as foreign:
        spy = memory_with(MemoryHubMemoryBlock(hub=foreign, user_id="ann", max_results=10))
        assert block_text(asyncio.run(spy.aget(input="What is the dog called? Rex? Peanuts?"))) == ""


def test_it_can_search_only_what_it_wrote(hub: MemoryHub) -> None:
    hub.memories.create("Ann's dog Rex was adopted in 2019.", user_id="ann")
    tell(memory_with(MemoryHubMemoryBlock(hub=hub, user_id="ann")))
    own = memory_with(MemoryHubMemoryBlock(hub=hub, user_id="ann", max_results=10, include_other_memories=False))
    recalled = block_text(asyncio.run(own.aget(input="Tell me about Rex")))
    assert "My dog is called Rex" in recalled and "adopted" not in recalled
    everything = memory_with(MemoryHubMemoryBlock(hub=hub, user_id="ann", max_results=10))
    assert "adopted in 2019" in block_text(asyncio.run(everything.aget(input="Tell me about Rex")))


def remembered(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
    """A model that answers from the memory the prompt holds (and only from it)."""
    recalled = block_text(list(messages))
    if "Rex" in recalled:
        return ChatMessage(role="assistant", content="Your dog is Rex.")
    return ChatMessage(role="assistant", content="I don't know.")


def test_a_function_agent_answers_from_hub_memory_on_the_async_client(actors: Actors, hub: MemoryHub) -> None:
    tell(memory_with(MemoryHubMemoryBlock(hub=hub, user_id="ann")))

    async def scenario() -> tuple[str, str]:
        async with AsyncMemoryHub(base_url=actors.url, api_key=actors.agent_key) as async_hub:
            agent = FunctionAgent(llm=MockFunctionCallingLLM(response_generator=remembered), system_prompt="Answer briefly.")
            ann = memory_with(MemoryHubMemoryBlock(hub=async_hub, user_id="ann"))
            bob = memory_with(MemoryHubMemoryBlock(hub=async_hub, user_id="bob"))
            return str(await agent.run(user_msg="What is my dog called?", memory=ann)), str(await agent.run(user_msg="What is my dog called?", memory=bob))

    assert asyncio.run(scenario()) == ("Your dog is Rex.", "I don't know.")


@pytest.mark.timeout(120)
def test_the_example_agent_remembers_in_a_new_process(actors: Actors, operator: MemoryHub) -> None:
    def run(session: str, message: str) -> str:
        return run_example(actors, "examples/llama_index/agent.py", "--session", session, "--user", "ann", message)

    first = run(unique("example"), "My dog is called Rex and he loves the beach.")
    assert "agent: Noted." in first
    second = run(unique("example"), "What do you remember about me?")
    assert "agent: You told me: My dog is called Rex and he loves the beach." in second
    kept = [memory.content for memory in operator.memories.list(user_id="ann", store=actors.store).results]
    assert any(content.startswith("user: My dog is called Rex") for content in kept)
