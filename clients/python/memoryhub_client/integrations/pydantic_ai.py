"""Pydantic AI's message history in hub sessions (`pip install "memoryhub-client[pydantic-ai]"`).

Two ways in, one per way Pydantic AI carries a conversation:

    history = MemoryHubHistory("support-42", hub=hub, user_id="ann")
    result = await agent.run("Where is my order?", message_history=await history.aload())
    await history.asave(result.all_messages())

    store = MemoryHubConversationStore(hub=hub, user_id="ann")  # Pydantic AI's ConversationStore
    conversation = await store.load("support-42") or Conversation(conversation_id="support-42")
    result = await agent.run("Where is my order?", conversation=conversation)
    await store.save(result)

Either way a conversation is a hub session, and each `ModelMessage` is kept whole as a hub
message's `item` (Pydantic AI's own JSON form, `ModelMessagesTypeAdapter`), so it loads back
equal to what was saved: parts, tool calls and returns, thinking, timestamps, usage. Beside it
the hub keeps what operators read: a request's system prompt (system), user prompt (user) and
each tool return (tool, answering the assistant's call by its id); a response as one assistant
message with its tool calls. A request with several tool returns is several hub messages, so each
call has its answer on the hub; the first carries the item, the others `{"kind": "continued"}`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Optional

from pydantic import TypeAdapter
from pydantic_ai.conversation_store import (
    ConversationConflict, ConversationDetails, ConversationEntry, ConversationRecord, ConversationStore,
)
from pydantic_ai.messages import (
    ModelMessage, ModelMessagesTypeAdapter, ModelRequest, ModelResponse, RetryFeedbackPart, SystemPromptPart,
    TextPart, ThinkingPart, ToolCallPart, ToolReturnPart, UserPromptPart,
)

from memoryhub_client.errors import Conflict, MemoryHubError, NotFound
from memoryhub_client.integrations._hub import AnyHub, call, is_missing_session, run_here
from memoryhub_client.models import Message

__all__ = ["MemoryHubConversationStore", "MemoryHubHistory"]

# What one append and one page carry at most (the hub's limits).
APPEND_BATCH = 500
PAGE = 200
# A message's readable text stops here (the hub's content limit); its item keeps it all.
MAX_CONTENT_CHARS = 32_000
# The item of a request's second, third… hub message: the first one holds the request.
CONTINUED = {"kind": "continued"}
MESSAGE_KINDS = ("request", "response")
# The checkpoint state and the listing items of MemoryHubConversationStore say they are its own.
STATE_MARK = "pydantic-ai-conversation"
LISTING = "pydantic-ai-conversations"

_records: Optional[TypeAdapter[ConversationRecord]] = None


class MemoryHubHistory:
    """A conversation's `list[ModelMessage]` in the hub session `session_id`, made for `user_id`
    on the first write. `hub` is a `MemoryHub` or an `AsyncMemoryHub` with an agent key; the sync
    `load`/`save` are for sync code with a `MemoryHub` (they run in the caller's thread).

    `save(messages)` makes the stored history exactly `messages`: when what is stored is where
    `messages` starts (the usual `result.all_messages()` of a run given `load()`), only the
    messages after it are appended, and the old ones keep their hub messages and seqs; anything
    else (a history trimmed, edited or another conversation's) replaces the stored one."""

    def __init__(self, session_id: str, *, hub: AnyHub, user_id: str) -> None:
        self.session_id = session_id
        self.hub = hub
        self.user_id = user_id
        self._created = False

    async def aload(self) -> list[ModelMessage]:
        stored, _ = await self._stored()
        return ModelMessagesTypeAdapter.validate_python(stored)

    async def asave(self, messages: Sequence[ModelMessage]) -> None:
        messages = list(messages)
        wanted = dump_messages(messages)
        stored, calls = await self._stored()
        if stored == wanted[:len(stored)]:
            new = wanted[len(stored):]
        else:
            await call(self.hub.sessions.delete_messages, self.session_id, all=True)
            new, calls = wanted, set()
        if not new:
            return
        if not self._created:
            await call(self.hub.sessions.create, self.session_id, user_id=self.user_id)
            self._created = True
        rows = [row for message, item in zip(messages[len(messages) - len(new):], new) for row in hub_messages(message, item, calls)]
        for start in range(0, len(rows), APPEND_BATCH):
            await call(self.hub.sessions.append_messages, self.session_id, rows[start:start + APPEND_BATCH])

    def load(self) -> list[ModelMessage]:
        return run_here(self.aload())

    def save(self, messages: Sequence[ModelMessage]) -> None:
        run_here(self.asave(messages))

    async def _stored(self) -> tuple[list[dict[str, Any]], set[str]]:
        """The stored history as Pydantic AI's JSON (compared as it is, so a save notices any
        change, even to what `==` of messages ignores), and the tool calls the session holds."""
        try:
            rows = await read_session(self.hub, self.session_id)
        except MemoryHubError as error:
            if is_missing_session(error):
                return [], set()
            raise
        return messages_of(rows), {c["id"] for row in rows for c in row.tool_calls or ()}


class MemoryHubConversationStore(ConversationStore):
    """Pydantic AI's `ConversationStore` over the hub, for the conversations an agent has with
    `user_id`: `load`, `save`, `branch`, `fork`, `list_conversations`, `update` and `delete` as
    the framework defines them, over its five storage primitives and `write_details`.

    - A conversation is the hub session named by its `conversation_id`, made for `user_id`.
    - Each entry (one message and the entry before it) is appended to its conversation's session
      once, as MemoryHubHistory keeps a message, its item `{"kind": "entry", "id", "parent",
      "message"}`; the first entry of a fork points into the session it was forked from
      (`parent_session`), so a fork shares that history instead of copying it.
    - The record (where the history ends, usage, deferred tool calls, scope, branches, title…) is
      the session's latest checkpoint: saves are checked against its version on the hub, so of
      two writers one gets `ConversationConflict`. A copy of it, in the hub's key-value items
      (`user_id`'s, not embedded), is what `list_conversations` reads.
    - `delete` leaves a checkpoint saying so, and deletes the session's messages unless a fork's
      history still reaches into them.

    The store's conversations are those of the agent whose key `hub` holds; another workspace's
    agent, or another agent, finds none of them."""

    def __init__(self, *, hub: AnyHub, user_id: str) -> None:
        self.hub = hub
        self.user_id = user_id
        # Where entries are: the session each one seen so far lives in (ids never move).
        self._where: dict[str, str] = {}
        # Each conversation's sessions, its own and those its history reaches into (forks).
        self._lineage: dict[str, list[str]] = {}
        self._calls: dict[str, set[str]] = {}
        self._created: set[str] = set()
        self._agent: Optional[str] = None

    # -- the framework's primitives --

    async def read_record(self, conversation_id: str) -> Optional[ConversationRecord]:
        state, _ = await self._latest(conversation_id)
        return None if state is None else self._remember(conversation_id, state)

    async def read_records(self, *, scope: Optional[str] = None, limit: Optional[int] = None) -> Sequence[ConversationRecord]:
        records = [record_adapter().validate_python(value["record"]) for value in await self._listing(scope=scope)]
        records.sort(key=lambda record: record.updated_at, reverse=True)
        return records[:limit]

    async def write_record(self, record: ConversationRecord, *, new_entries: Sequence[ConversationEntry] = (), expected_revision: Optional[str]) -> None:
        conversation_id = record.conversation_id
        state, version = await self._latest(conversation_id)
        if _revision(state) != expected_revision:
            raise ConversationConflict(conversation_id)
        new_ids = {entry.id for entry in new_entries}
        lineage = state["sessions"] if state is not None else [
            conversation_id, *(self._lineage.get(record.forked_from, [record.forked_from]) if record.forked_from else ()),
        ]
        where = dict.fromkeys(new_ids, conversation_id)
        for entry_id in {record.head_id, record.forked_at, *record.branches, *(entry.parent_id for entry in new_entries)} - {None}:
            if entry_id not in where:
                if entry_id not in self._where:
                    raise ConversationConflict(conversation_id)  # an entry this store never read: gone, or never there
                where[entry_id] = self._where[entry_id]
        await self._ensure_session(conversation_id)
        if new_entries:
            await self._append(conversation_id, new_entries, where)
        while True:
            if state is not None:
                # A save keeps what `update` set (the framework's rule for write_details).
                stored = record_adapter().validate_python(state["record"])
                record = dataclasses.replace(record, title=stored.title, metadata=stored.metadata)
            heads = {entry_id: where[entry_id] for entry_id in (record.head_id, record.forked_at, *record.branches) if entry_id is not None}
            try:
                await self._save_state(conversation_id, record, lineage, heads, version)
                return
            except ConversationConflict:
                # Saved in between: a conflict, unless only `update` changed the title or metadata.
                state, version = await self._latest(conversation_id)
                if _revision(state) != expected_revision:
                    raise

    async def write_details(
        self, conversation_id: str, details: ConversationDetails, *, expected_revision: str, expected: Optional[ConversationDetails] = None,
    ) -> ConversationRecord:
        state, version = await self._latest(conversation_id)
        if state is None or _revision(state) != expected_revision:
            raise ConversationConflict(conversation_id)
        record = record_adapter().validate_python(state["record"])
        if expected and any(getattr(record, key) != value for key, value in expected.items()):
            raise ConversationConflict(conversation_id)
        record = dataclasses.replace(record, **details)  # type: ignore[arg-type]
        await self._save_state(conversation_id, record, state["sessions"], state["heads"], version)
        return record

    async def delete_record(self, conversation_id: str, *, expected_revision: str) -> None:
        state, version = await self._latest(conversation_id)
        if state is None or _revision(state) != expected_revision:
            raise ConversationConflict(conversation_id)
        try:
            await call(self.hub.checkpoints.save, conversation_id, expected_version=version, state={"kind": STATE_MARK, "deleted": True})
        except Conflict:
            raise ConversationConflict(conversation_id) from None
        await call(self.hub.items.delete, await self._namespace(), conversation_id)
        # Its entries go with it unless a fork's history still reaches into them; so do those of
        # a deleted conversation it was forked from, which only it still read.
        reached = {session for value in await self._listing(everyone=True) for session in value.get("sessions", ())}
        for session in state["sessions"]:
            if session in reached or (session != conversation_id and (await self._latest(session))[0] is not None):
                continue
            try:
                await call(self.hub.sessions.delete_messages, session, all=True)
            except MemoryHubError as error:
                if not is_missing_session(error):
                    raise
            self._calls.pop(session, None)

    async def read_entry(self, entry_id: str) -> ConversationEntry:
        return (await self.read_history(entry_id, limit=1))[0]

    async def read_history(self, head_id: Optional[str], *, limit: Optional[int] = None) -> list[ConversationEntry]:
        """The history up to `head_id`, reading each session it runs through newest first, and
        only as far back as it goes (all of it for a whole history, its end for `limit`)."""
        readers: dict[str, _EntryReader] = {}
        entries: list[ConversationEntry] = []
        entry_id = head_id
        while entry_id is not None and (limit is None or len(entries) < limit):
            session = self._where.get(entry_id)
            if session is None:
                raise LookupError(entry_id)
            reader = readers.setdefault(session, _EntryReader(self.hub, session))
            found = await reader.find(entry_id)
            self._calls.setdefault(session, set()).update(reader.calls)
            if found is None:
                raise LookupError(entry_id)
            entry, parent_session = found
            if entry.parent_id is not None:
                self._where[entry.parent_id] = parent_session
            entries.append(entry)
            entry_id = entry.parent_id
        entries.reverse()
        return entries

    # -- on the hub --

    async def _latest(self, conversation_id: str) -> tuple[Optional[dict[str, Any]], int]:
        """The record's state and the checkpoint version it is (None: no conversation; 0: no checkpoint)."""
        try:
            checkpoint = await call(self.hub.checkpoints.latest, conversation_id, include=["state"])
        except NotFound:
            return None, 0
        state = checkpoint.state
        if not isinstance(state, dict) or state.get("kind") != STATE_MARK or state.get("deleted"):
            return None, checkpoint.version
        return state, checkpoint.version

    async def _save_state(
        self, conversation_id: str, record: ConversationRecord, lineage: list[str], heads: dict[str, str], version: int,
    ) -> None:
        dumped = record_adapter().dump_python(record, mode="json")
        state = {"kind": STATE_MARK, "record": dumped, "sessions": lineage, "heads": heads}
        try:
            await call(self.hub.checkpoints.save, conversation_id, expected_version=version, state=state)
        except Conflict:
            raise ConversationConflict(conversation_id) from None
        self._remember(conversation_id, state)
        # The listing's copy: written after the record, so it never lists what is not saved.
        await call(
            self.hub.items.put, await self._namespace(), conversation_id, {"record": dumped, "scope": record.scope, "sessions": lineage},
            index=False, user_id=self.user_id,
        )

    def _remember(self, conversation_id: str, state: dict[str, Any]) -> ConversationRecord:
        self._where.update(state["heads"])
        self._lineage[conversation_id] = state["sessions"]
        return record_adapter().validate_python(state["record"])

    async def _ensure_session(self, conversation_id: str) -> None:
        if conversation_id in self._created:
            return
        try:
            await call(self.hub.sessions.create, conversation_id, user_id=self.user_id)
        except Conflict:
            # The id is another agent's session, or this agent's with another user.
            raise ConversationConflict(conversation_id) from None
        self._created.add(conversation_id)

    async def _append(self, conversation_id: str, entries: Sequence[ConversationEntry], where: dict[str, str]) -> None:
        dumped = dump_messages([entry.message for entry in entries])
        calls = self._calls.setdefault(conversation_id, set())
        answered = {part.tool_call_id for entry in entries for part in entry.message.parts if isinstance(part, ToolReturnPart)}
        made = {part.tool_call_id for entry in entries for part in entry.message.parts if isinstance(part, ToolCallPart)}
        if answered - made - calls:
            # Results of calls made before this save: the session says which it holds.
            calls.update(c["id"] for row in await read_session(self.hub, conversation_id) for c in row.tool_calls or ())
        rows = []
        for entry, message in zip(entries, dumped):
            item: dict[str, Any] = {"kind": "entry", "id": entry.id, "parent": entry.parent_id, "message": message}
            if entry.parent_id is not None and where[entry.parent_id] != conversation_id:
                item["parent_session"] = where[entry.parent_id]
            rows.extend(hub_messages(entry.message, item, calls))
        for start in range(0, len(rows), APPEND_BATCH):
            await call(self.hub.sessions.append_messages, conversation_id, rows[start:start + APPEND_BATCH])
        self._where.update(dict.fromkeys((entry.id for entry in entries), conversation_id))

    async def _namespace(self) -> list[str]:
        if self._agent is None:
            self._agent = (await call(self.hub.me)).agent or ""
        return [LISTING, self._agent, self.user_id]

    async def _listing(self, *, scope: Optional[str] = None, everyone: bool = False) -> list[dict[str, Any]]:
        """The listing's values: this user's conversations (with `scope`), or every user's of this agent."""
        namespace = await self._namespace()
        prefix = namespace[:2] if everyone else namespace
        values: list[dict[str, Any]] = []
        while True:
            page = await call(
                self.hub.items.search, prefix, filter={"scope": scope} if scope is not None else None, limit=1000, offset=len(values),
            )
            values.extend(hit.value for hit in page)
            if len(page) < 1000:
                return values


class _EntryReader:
    """One session's entries, read newest first a page at a time, as far back as asked."""

    def __init__(self, hub: AnyHub, session_id: str) -> None:
        self.hub = hub
        self.session_id = session_id
        self.calls: set[str] = set()
        self._items: dict[str, dict[str, Any]] = {}
        self._cursor: Optional[str] = None
        self._done = False

    async def find(self, entry_id: str) -> Optional[tuple[ConversationEntry, str]]:
        while entry_id not in self._items and not self._done:
            try:
                page = await call(self.hub.sessions.list_messages, self.session_id, limit=PAGE, cursor=self._cursor, order="desc")
            except MemoryHubError as error:
                if is_missing_session(error):
                    self._done = True
                    break
                raise
            for row in page.results:
                self.calls.update(c["id"] for c in row.tool_calls or ())
                if isinstance(row.item, dict) and row.item.get("kind") == "entry":
                    self._items[row.item["id"]] = row.item
            self._cursor = page.next
            self._done = page.next is None
        item = self._items.get(entry_id)
        if item is None:
            return None
        [message] = ModelMessagesTypeAdapter.validate_python([item["message"]])
        return ConversationEntry(id=item["id"], parent_id=item["parent"], message=message), item.get("parent_session", self.session_id)


def record_adapter() -> TypeAdapter[ConversationRecord]:
    global _records
    if _records is None:
        _records = TypeAdapter(ConversationRecord)
    return _records


def _revision(state: Optional[dict[str, Any]]) -> Optional[str]:
    return None if state is None else state["record"]["revision"]


def dump_messages(messages: Sequence[ModelMessage]) -> list[dict[str, Any]]:
    """Pydantic AI's own JSON form of messages (bytes as base64), as the items keep them."""
    return ModelMessagesTypeAdapter.dump_python(list(messages), mode="json")


async def read_session(hub: AnyHub, session_id: str) -> list[Message]:
    found: list[Message] = []
    cursor = None
    while True:
        page = await call(hub.sessions.list_messages, session_id, limit=PAGE, cursor=cursor, order="asc")
        found.extend(page.results)
        cursor = page.next
        if cursor is None:
            return found


def messages_of(rows: Sequence[Message]) -> list[dict[str, Any]]:
    """The history hub messages hold, as Pydantic AI's JSON: each message's item (a store's entries
    read in the order they were written), and messages another client wrote without one read as
    the plain Pydantic AI messages that say the same."""
    found: list[dict[str, Any]] = []
    tool_names: dict[str, str] = {}
    for row in rows:
        item = row.item
        for tool_call in row.tool_calls or ():
            tool_names[tool_call["id"]] = tool_call["function"]["name"]
        if isinstance(item, dict) and item.get("kind") in MESSAGE_KINDS:
            found.append(item)
        elif isinstance(item, dict) and item.get("kind") == "entry":
            found.append(item["message"])
        elif item is None or item.get("kind") != CONTINUED["kind"]:
            found.extend(dump_messages([plain_message(row, tool_names)]))
    return found


def plain_message(row: Message, tool_names: dict[str, str]) -> ModelMessage:
    """The Pydantic AI message a hub message without an item says."""
    at: datetime = row.created_at
    if row.role == "assistant":
        parts: list[Any] = [TextPart(row.content)] if row.content else []
        parts += [ToolCallPart(c["function"]["name"], c["function"].get("arguments") or "{}", tool_call_id=c["id"]) for c in row.tool_calls or ()]
        return ModelResponse(parts=parts, timestamp=at)
    if row.role == "tool":
        return ModelRequest(parts=[ToolReturnPart(tool_names.get(row.tool_call_id or "", ""), row.content, tool_call_id=row.tool_call_id or "", timestamp=at)], timestamp=at)
    if row.role == "system":
        return ModelRequest(parts=[SystemPromptPart(row.content, timestamp=at)], timestamp=at)
    return ModelRequest(parts=[UserPromptPart(row.content, timestamp=at)], timestamp=at)


def hub_messages(parsed: ModelMessage, item: dict[str, Any], calls: set[str]) -> list[dict[str, Any]]:
    """The hub messages of one message: what operators read, the first carrying `item`. `calls`
    are the tool calls the session holds; the response's are added, and a tool return answering
    none of them reads as a user message (the hub keeps no result without its call)."""
    rows: list[dict[str, Any]] = []
    if isinstance(parsed, ModelResponse):
        tool_calls = [
            {"id": part.tool_call_id, "type": "function", "function": {"name": part.tool_name, "arguments": part.args_as_json_str()}}
            for part in parsed.parts if isinstance(part, ToolCallPart) and part.tool_call_id and part.tool_name
        ]
        text = "\n".join(part.content for part in parsed.parts if isinstance(part, TextPart))
        if not text and not tool_calls:
            thinking = [part.content for part in parsed.parts if isinstance(part, ThinkingPart) and part.content]
            text = "\n".join(thinking) if thinking else _kinds(parsed.parts)
        row: dict[str, Any] = {"role": "assistant", "content": text}
        if tool_calls:
            row["tool_calls"] = tool_calls
            calls.update(c["id"] for c in tool_calls)
        rows.append(row)
    else:
        for part in parsed.parts:
            if isinstance(part, SystemPromptPart):
                _add_text(rows, "system", part.content)
            elif isinstance(part, UserPromptPart):
                _add_text(rows, "user", _user_text(part.content))
            elif isinstance(part, ToolReturnPart):
                if part.tool_call_id in calls:
                    rows.append({"role": "tool", "content": part.model_response_str(), "tool_call_id": part.tool_call_id})
                else:
                    _add_text(rows, "user", f"[{part.tool_name} result] {part.model_response_str()}")
            elif isinstance(part, RetryFeedbackPart):
                _add_text(rows, "user", part.model_response())
        if not rows:
            # Only parts for the framework (instruction or tool changes…): named by their kinds.
            rows.append({"role": "system", "content": _kinds(parsed.parts)})
    for row in rows:
        row["content"] = row["content"][:MAX_CONTENT_CHARS]
        row["item"] = dict(CONTINUED)
    rows[0]["item"] = item
    return rows


def _add_text(rows: list[dict[str, Any]], role: str, text: str) -> None:
    """Parts of one role in a row read as one message."""
    if rows and rows[-1]["role"] == role and "tool_call_id" not in rows[-1]:
        rows[-1]["content"] += "\n\n" + text
    else:
        rows.append({"role": role, "content": text})


def _user_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(
        piece if isinstance(piece, str) else text if isinstance(text := getattr(piece, "content", None), str)
        else f"[{getattr(piece, 'kind', type(piece).__name__)}]"
        for piece in content
    )


def _kinds(parts: Sequence[Any]) -> str:
    return "[" + ", ".join(getattr(part, "part_kind", type(part).__name__) for part in parts) + "]"


