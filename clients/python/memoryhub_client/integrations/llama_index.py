"""LlamaIndex's long-term memory in the hub (`pip install "memoryhub-client[llama-index]"`):

    block = MemoryHubMemoryBlock(hub=hub, user_id="ann")
    memory = Memory.from_defaults(session_id="support-42", token_limit=40_000, memory_blocks=[block])
    response = await agent.run("Where is my order?", memory=memory)

A memory block, as LlamaIndex's `VectorMemoryBlock` and `FactExtractionMemoryBlock` are: what
`Memory` flushes out of its short-term queue (the oldest turns, once the chat history outgrows its
share of `token_limit`) becomes hub memories of `user_id`, one per turn (a user message and the
replies that follow it), read as a transcript ("user: …", "assistant: …"); and each time `Memory`
builds the prompt, the block searches the user's hub memories with the text of the latest
messages and hands back the best, which `Memory` puts in its `<memory>` system message under the
block's name. What the hub holds about the user from elsewhere (other agents of the store, other
frameworks, the console) is found too, unless `include_other_memories=False`.
"""

from __future__ import annotations

from typing import Any, Optional, Union

from llama_index.core.base.llms.types import ChatMessage, TextBlock
from llama_index.core.bridge.pydantic import Field, field_validator
from llama_index.core.memory.memory import BaseMemoryBlock
from llama_index.core.prompts import BasePromptTemplate, PromptTemplate, RichPromptTemplate

from memoryhub_client.aio import AsyncMemoryHub
from memoryhub_client.client import MemoryHub
from memoryhub_client.integrations._hub import call

__all__ = ["MemoryHubMemoryBlock"]

# The hub's limits: a memory's content, a search's question, a batch's items.
MAX_CONTENT_CHARS = 32_000
MAX_QUERY_CHARS = 4_000
BATCH = 500
SOURCE = "llama-index"
DEFAULT_FORMAT_TEMPLATE = RichPromptTemplate("{{ text }}")


class MemoryHubMemoryBlock(BaseMemoryBlock[str]):
    """A LlamaIndex memory block whose long-term memory is the hub's memories of `user_id`.

    `hub` is a `MemoryHub` or an `AsyncMemoryHub` with an agent key (a sync client's calls run
    on a thread, off the event loop). Written memories are `memory_type` entries (episodic by
    default) with `metadata` `{"source": "llama-index", "memory_block": name, "session_id",
    "roles"}` and `tags`, in `scope` and `store` (the hub's defaults when None); a turn the user
    already has as a memory (the hub's duplicate check) is not written again (`on_duplicate`).
    Searches use the last `retrieval_context_window` messages' text and answer at most
    `max_results` memories (of at least `min_relevance`), best first, each on its own paragraph,
    through `format_template` (`{{ text }}`, as VectorMemoryBlock's)."""

    name: str = Field(default="MemoryHub", description="The name of the memory block.")
    hub: Union[MemoryHub, AsyncMemoryHub] = Field(exclude=True, description="The hub client, with an agent key.")
    user_id: str = Field(description="The end user the memories are about.")
    max_results: int = Field(default=5, description="How many memories a search answers at most.")
    min_relevance: Optional[float] = Field(default=None, description="The least score a memory found needs.")
    retrieval_context_window: int = Field(default=5, description="How many of the latest messages make the search's question.")
    include_other_memories: bool = Field(
        default=True, description="Search all of the user's memories this agent sees, not only those this block wrote.",
    )
    memory_type: Optional[str] = Field(default="episodic", description="The hub memory type of what the block writes.")
    scope: Optional[str] = Field(default=None, description="agent, shared or global (the hub's default when None).")
    store: Optional[str] = Field(default=None, description="The hub store written to and searched (the agent's default when None).")
    tags: list[str] = Field(default_factory=lambda: [SOURCE], description="Tags of the memories written.")
    on_duplicate: Optional[str] = Field(default="skip", description="keep, skip or update: what a repeated memory does.")
    format_template: BasePromptTemplate = Field(default=DEFAULT_FORMAT_TEMPLATE, description="How the memories found read.")

    @field_validator("format_template", mode="before")
    @classmethod
    def _template(cls, value: Any) -> BasePromptTemplate:
        # As LlamaIndex's own blocks take it: a string with {{ }} is a rich template.
        if isinstance(value, str):
            return RichPromptTemplate(value) if "{{" in value and "}}" in value else PromptTemplate(value)
        return value

    async def _aget(self, messages: Optional[list[ChatMessage]] = None, **block_kwargs: Any) -> str:
        """The user's memories that the latest messages are about (none without text)."""
        if not messages:
            return ""
        window = messages[-self.retrieval_context_window:] if self.retrieval_context_window > 0 else messages
        question = " ".join(text for text in map(_text, window) if text)[-MAX_QUERY_CHARS:].strip()
        if not question:
            return ""
        hits = await call(
            self.hub.memories.search, question, user_id=self.user_id, store=self.store, max_results=self.max_results,
            min_relevance=self.min_relevance, metadata=None if self.include_other_memories else {"memory_block": self.name},
        )
        # Repeats of a better result (the hub marks them) would only say it again.
        found = [hit.entry.content for hit in hits if hit.repeat_of is None]
        if not found:
            return ""
        return self.format_template.format(text="\n\n".join(found))

    async def _aput(self, messages: list[ChatMessage]) -> None:
        """One memory per turn of what Memory flushed: a user message and the replies after it."""
        items = [self._memory_of(turn) for turn in _turns(messages)]
        items = [item for item in items if item is not None]
        for start in range(0, len(items), BATCH):
            await call(self.hub.memories.create_batch, items[start:start + BATCH], on_duplicate=self.on_duplicate)

    def _memory_of(self, turn: list[ChatMessage]) -> Optional[dict[str, Any]]:
        lines = [(message.role.value, text) for message in turn if (text := _text(message))]
        if not lines:
            return None  # tool calls alone: nothing to remember in words
        sessions = {message.additional_kwargs.get("session_id") for message in turn} - {None}
        metadata: dict[str, Any] = {
            "source": SOURCE, "memory_block": self.name, "roles": [role for role, _ in lines],
            **({"session_id": sorted(sessions)[0]} if sessions else {}),
        }
        item: dict[str, Any] = {
            "content": "\n".join(f"{role}: {text}" for role, text in lines)[:MAX_CONTENT_CHARS], "user_id": self.user_id,
            "metadata": metadata, "tags": self.tags,
        }
        for name in ("memory_type", "scope", "store"):
            if getattr(self, name) is not None:
                item[name] = getattr(self, name)
        return item


def _text(message: ChatMessage) -> str:
    return "".join(block.text for block in message.blocks if isinstance(block, TextBlock)).strip()


def _turns(messages: list[ChatMessage]) -> list[list[ChatMessage]]:
    turns: list[list[ChatMessage]] = []
    for message in messages:
        if message.role.value == "user" or not turns:
            turns.append([message])
        else:
            turns[-1].append(message)
    return turns
