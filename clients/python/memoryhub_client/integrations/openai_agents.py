"""The OpenAI Agents SDK's `Session` protocol over a hub session (`pip install
"memoryhub-client[openai-agents]"`):

    session = MemoryHubSession("support-42", hub=hub, user_id="ann")
    result = await Runner.run(agent, "Where is my order?", session=session)

Each item the SDK adds is one hub message: the item itself, kept and handed back exactly
(the message's `item`), and beside it what operators read — role, text, tool calls and
their results — on the console's timeline, in search, summaries, purges and exports.
`get_items(limit)` answers the latest `limit` items, oldest first; `pop_item` deletes the
newest message and answers its item; `clear_session` deletes them all. Messages another
client wrote without an item read as the SDK's own plain items.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Optional, Union

from memoryhub_client.integrations._hub import AnyHub, call, is_missing_session
from memoryhub_client.errors import MemoryHubError
from memoryhub_client.models import Message

if TYPE_CHECKING:
    from agents.memory.session_settings import SessionSettings

# What one append and one page carry at most (the hub's limits).
APPEND_BATCH = 500
PAGE = 200
# A message's readable text stops here (the hub's content limit); its item keeps it all.
MAX_CONTENT_CHARS = 32_000
ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}


class MemoryHubSession:
    """Implements `agents.memory.session.Session` (the protocol, as the SDK asks third
    parties to): `session_id`, `session_settings`, `get_items`, `add_items`, `pop_item`,
    `clear_session`. `hub` is a `MemoryHub` or an `AsyncMemoryHub` with an agent key; the
    hub session is created for `user_id` on the first write. `session_settings` is a
    `SessionSettings` or, as the SDK's own sessions take it, a dict of its fields."""

    def __init__(
        self, session_id: str, *, hub: AnyHub, user_id: str, session_settings: Optional[Union[SessionSettings, dict[str, Any]]] = None,
    ) -> None:
        self.session_id = session_id
        self.session_settings = _settings(session_settings)
        self.hub = hub
        self.user_id = user_id
        self._created = False

    async def get_items(self, limit: Optional[int] = None) -> list[Any]:
        if limit is None and self.session_settings is not None:
            limit = self.session_settings.limit
        if limit is not None and limit <= 0:
            return []
        try:
            if limit is None:
                messages = await self._read(order="asc", wanted=None)
            else:
                messages = (await self._read(order="desc", wanted=limit))[::-1]
        except MemoryHubError as error:
            if is_missing_session(error):
                return []
            raise
        return [item_of(message) for message in messages]

    async def add_items(self, items: list[Any]) -> None:
        if not items:
            return
        await self._ensure_session()
        messages = [message_of(item) for item in items]
        for start in range(0, len(messages), APPEND_BATCH):
            await call(self.hub.sessions.append_messages, self.session_id, messages[start:start + APPEND_BATCH])

    async def pop_item(self) -> Optional[Any]:
        try:
            popped = await call(self.hub.sessions.pop_messages, self.session_id, last=1)
        except MemoryHubError as error:
            if is_missing_session(error):
                return None
            raise
        return item_of(popped[0]) if popped else None

    async def clear_session(self) -> None:
        try:
            await call(self.hub.sessions.delete_messages, self.session_id, all=True)
        except MemoryHubError as error:
            if not is_missing_session(error):
                raise

    async def _ensure_session(self) -> None:
        if not self._created:
            await call(self.hub.sessions.create, self.session_id, user_id=self.user_id)
            self._created = True

    async def _read(self, *, order: str, wanted: Optional[int]) -> list[Message]:
        """Pages of the history in `order` until `wanted` messages (None: all)."""
        found: list[Message] = []
        cursor = None
        while True:
            size = PAGE if wanted is None else min(PAGE, wanted - len(found))
            page = await call(self.hub.sessions.list_messages, self.session_id, limit=size, cursor=cursor, order=order)
            found.extend(page.results)
            cursor = page.next
            if cursor is None or (wanted is not None and len(found) >= wanted):
                return found


def _settings(settings: Optional[Union[SessionSettings, dict[str, Any]]]) -> Optional[SessionSettings]:
    """The settings as a `SessionSettings`: a dict is checked and made one (unknown fields are a
    TypeError), as the SDK's sessions do; without this the runner fails on a dict."""
    if settings is None:
        return None
    from agents.memory.session_settings import coerce_session_settings

    return coerce_session_settings(settings)


def message_of(item: Any) -> dict[str, Any]:
    """The hub message of one SDK item: the item kept whole, and what operators read."""
    item = dict(item)
    kind = item.get("type")
    message: dict[str, Any]
    if kind in (None, "message") and item.get("role") in ROLES:
        message = {"role": ROLES[item["role"]], "content": _text(item.get("content"))}
    elif kind in ("function_call", "custom_tool_call"):
        arguments = item.get("arguments") if kind == "function_call" else item.get("input")
        message = {"role": "assistant", "content": "", "tool_calls": [{
            "id": item["call_id"], "type": "function", "function": {"name": item["name"], "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)},
        }]}
    elif kind in ("function_call_output", "custom_tool_call_output"):
        message = {"role": "tool", "content": _text(item.get("output")), "tool_call_id": item["call_id"]}
    elif kind == "reasoning":
        message = {"role": "assistant", "content": _text(item.get("summary"))}
    else:
        # Hosted tools, computer use, MCP, compaction…: kept whole, shown by their type.
        message = {"role": "assistant", "content": f"[{kind}]"}
    message["content"] = message["content"][:MAX_CONTENT_CHARS]
    message["item"] = item
    return message


def item_of(message: Message) -> Any:
    """The SDK item a hub message holds: its own, or (a message another client wrote) the
    plain item that says the same."""
    if message.item is not None:
        return message.item
    if message.role == "tool":
        return {"type": "function_call_output", "call_id": message.tool_call_id, "output": message.content}
    if message.tool_calls:
        call_ = message.tool_calls[0]
        return {"type": "function_call", "call_id": call_["id"], "name": call_["function"]["name"], "arguments": call_["function"].get("arguments") or ""}
    return {"role": message.role, "content": message.content}


def _text(content: Any) -> str:
    """The readable text of an item's content, output or summary (a string, or parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                text = part.get("text", part.get("refusal"))
                parts.append(text if isinstance(text, str) else f"[{part.get('type', 'part')}]")
            else:
                parts.append(str(part))
        return "\n".join(parts)
    return json.dumps(content)
