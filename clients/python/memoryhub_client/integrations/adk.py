"""Google ADK's session and memory services over the hub (`pip install
"memoryhub-client[google-adk]"`):

    runner = Runner(
        agent=agent, app_name="shop",
        session_service=MemoryHubSessionService(hub=hub),  # instead of InMemorySessionService()
        memory_service=MemoryHubMemoryService(hub=hub),    # instead of InMemoryMemoryService()
    )

Both behave as ADK's in-memory services do (what they raise, return and keep), with the
data in the hub, where any process finds it again and operators watch it. `hub` is a
`MemoryHub` or an `AsyncMemoryHub` with an agent key.

How ADK's data maps onto the hub:

- **Sessions.** ADK keys a session by (app_name, user_id, session id); a hub session id is
  unique per workspace, and a hub session is its agent's. So the hub session's id is the
  ADK id with a digest of the agent, the app, the user and the id (`<id>.<24 hex>`, or
  `adk.<24 hex>` for an id the hub's identifiers cannot spell): two users', apps' or
  agents' sessions of one name are two sessions. Its `user_id` is ADK's, and its metadata
  says the rest: `{"framework": "google-adk", "app_name", "session_id",
  "last_update_time"}`. Sessions are listed by that metadata (`GET
  /sessions?user_id=&metadata.app_name=`) and deleted with `DELETE /sessions/{sid}`
  (everything in them; audited, on the feed). A session id the caller leaves out is a new
  UUID, one with spaces around it is trimmed, as in ADK's own services.
- **Events.** Each event is one hub message whose `item` is the event's JSON (handed back
  byte for byte, read back into an equal Event), and beside it what operators read: the
  user's text (role `user`), the agent's text (`assistant`), its function calls as tool
  calls and a function's response as the tool result answering one, and a short
  `[bracketed]` description of what has no text (a state change, a transfer, an error).
  Partial events are not kept, as ADK keeps none.
- **State.** The session's own keys are the hub session's `state`; an event's change to
  them is made with its message, in one transaction, with the session's
  `last_update_time` (the event's timestamp, as ADK's services keep it). `app:` and
  `user:` keys are shared by every session of the app, or of the app's user: they are
  items of the agent's store (`PUT /memories/items`; namespaces `["adk", app_name, "app"]`
  and `["adk", app_name, "user", user_id]`, one item per key, kept out of semantic
  search), so each key is written on its own (two sessions writing other keys never undo
  each other), the user's are purged and exported with the user, and every agent of the
  store shares them (the hub's key-value store is already state shared beyond one
  session, kept by user for purges and exports: a second such store only for ADK would
  repeat it). They are written after the event: a failure in between leaves the event
  kept and the error raised. `temp:` keys are never kept. Values are kept as JSON
  (what has no JSON form, as its text).
- **Memory.** `MemoryHubMemoryService` keeps each event with text as a long-term memory
  of the user (`metadata`: framework, app_name, session_id, memory_id (the event's id),
  author, timestamp; `data.content`: the event's content), found by the hub's keyword
  search by default (`search_mode="hybrid"` finds by meaning too), at most 10 a search, the
  best first. A memory deleted through it is remembered (an item in
  `["adk", app_name, "forgotten", user_id]`), so adding its session again does not bring
  it back, as in ADK's in-memory service.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal, Optional

from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events import Event, EventActions, get_active_events
from google.adk.memory.base_memory_service import BaseMemoryService, SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.platform import time as platform_time
from google.adk.platform import uuid as platform_uuid
from google.adk.sessions.base_session_service import BaseSessionService, GetSessionConfig, ListSessionsResponse
from google.adk.sessions.session import Session
from google.adk.sessions.state import State
from google.genai import types
from pydantic import ValidationError
from pydantic_core import to_jsonable_python

from memoryhub_client.errors import Conflict, MemoryHubError
from memoryhub_client.integrations._hub import AnyHub, call, is_missing_session
from memoryhub_client.models import Message
from memoryhub_client.models import Session as HubSession

FRAMEWORK = "google-adk"
# What one page and one batch carry at most (the hub's limits).
PAGE = 200
ITEMS_PAGE = 1000
BATCH = 500
# A message's (and a memory's) readable text stops here (the hub's content limit); the item keeps it all.
MAX_CONTENT_CHARS = 32_000
# The hub's identifiers (docs/api.md, "Identifiers"); ids longer than this leave room for the digest.
_IDENTIFIER = re.compile(r"[A-Za-z0-9\-_.:@]{1,150}")
MAX_SEARCH_RESULTS = 10
# A memory's `data` (the hub's limit is 64 KiB of JSON, its custom metadata beside the content).
MAX_DATA_BYTES = 48 * 1024


def hub_session_id(agent: str, app_name: str, user_id: str, session_id: str) -> str:
    """The hub session of an agent's ADK session (app_name, user_id, session_id): the same
    four, the same id; any others, another (a digest of all of them: hub session ids are
    unique per workspace, and two agents' ADK sessions of the same name are two sessions)."""
    digest = hashlib.sha256(json.dumps([agent, app_name, user_id, session_id]).encode()).hexdigest()[:24]
    readable = session_id if _IDENTIFIER.fullmatch(session_id) else "adk"
    return f"{readable}.{digest}"


class MemoryHubSessionService(BaseSessionService):
    """ADK's `BaseSessionService` over hub sessions, as `InMemorySessionService` behaves."""

    def __init__(self, *, hub: AnyHub) -> None:
        self.hub = hub
        self._agent: Optional[str] = None

    async def create_session(
        self, *, app_name: str, user_id: str, state: Optional[dict[str, Any]] = None, session_id: Optional[str] = None,
    ) -> Session:
        session_id = (session_id.strip() if session_id else None) or platform_uuid.new_uuid()
        deltas = _state_deltas(state or {})
        now = platform_time.get_time()
        try:
            await call(
                self.hub.sessions.create, await self._hub_id(app_name, user_id, session_id), user_id=user_id, state=deltas["session"],
                metadata={"framework": FRAMEWORK, "app_name": app_name, "session_id": session_id, "last_update_time": now}, on_exists="error",
            )
        except Conflict as error:
            raise AlreadyExistsError(f"Session with id {session_id} already exists.") from error
        # As ADK's services do: a new session's app: and user: keys are the app's and user's.
        await self._put_shared(app_name, user_id, deltas)
        shared = await self._shared_state(app_name, user_id)
        return Session(app_name=app_name, user_id=user_id, id=session_id, state=_merged(shared, deltas["session"]), last_update_time=now)

    async def get_session(
        self, *, app_name: str, user_id: str, session_id: str, config: Optional[GetSessionConfig] = None,
    ) -> Optional[Session]:
        session_id = session_id.strip() if session_id else session_id
        found = await self._hub_session(app_name, user_id, session_id)
        if found is None:
            return None
        events = await self._events(found.session_id, config)
        shared = await self._shared_state(app_name, user_id)
        return _session_of(found, app_name=app_name, state=_merged(shared, found.state), events=events)

    async def list_sessions(self, *, app_name: str, user_id: Optional[str] = None) -> ListSessionsResponse:
        """Without their events, oldest activity first (as ADK's services order them)."""
        found: list[HubSession] = []
        cursor = None
        while True:
            page = await call(
                self.hub.sessions.list, user_id=user_id, metadata={"framework": FRAMEWORK, "app_name": app_name}, limit=PAGE, cursor=cursor,
            )
            found.extend(page.results)
            cursor = page.next
            if cursor is None:
                break
        app_state = await self._items(["adk", app_name, "app"])
        user_states: dict[str, dict[str, Any]] = {}
        if user_id is not None:
            user_states[user_id] = await self._items(["adk", app_name, "user", user_id])
        elif found:
            for item in await self._item_hits(["adk", app_name, "user"]):
                user_states.setdefault(item.namespace[3], {})[item.key] = item.value.get("value")
        sessions = [
            _session_of(s, app_name=app_name, state=_merged({"app": app_state, "user": user_states.get(s.user_id, {})}, s.state), events=[])
            for s in found
        ]
        sessions.sort(key=lambda s: (s.last_update_time, s.user_id, s.id))
        return ListSessionsResponse(sessions=sessions)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """A session that is not there is no error (as ADK's own)."""
        session_id = session_id.strip() if session_id else session_id
        try:
            await call(self.hub.sessions.delete, await self._hub_id(app_name, user_id, session_id))
        except MemoryHubError as error:
            if not is_missing_session(error):
                raise

    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        return await self._items(["adk", app_name, "user", user_id])

    async def append_event(self, session: Session, event: Event) -> Event:
        if event.partial:
            return event
        # An equal event delivered again (a retried call) is kept once, its state applied once.
        if any(kept == event for kept in session.events if kept.id == event.id):
            return event
        self._apply_temp_state(session, event)
        event = self._trim_temp_delta_state(event)
        deltas = _state_deltas(event.actions.state_delta if event.actions else {})
        message = {**message_of(event, answerable=_answerable_calls(session.events)), "item": json.loads(event.model_dump_json(exclude_none=True))}
        try:
            await call(
                self.hub.sessions.append_messages, await self._hub_id(session.app_name, session.user_id, session.id), [message],
                state=deltas["session"] or None, metadata={"last_update_time": event.timestamp},
            )
        except MemoryHubError as error:
            if is_missing_session(error):
                raise SessionNotFoundError(f"Session {session.id} not found.") from error
            raise
        await self._put_shared(session.app_name, session.user_id, deltas)
        session.last_update_time = event.timestamp
        return self._commit_event_to_session(session, event)

    # --- the hub ---------------------------------------------------------------------------

    async def _hub_id(self, app_name: str, user_id: str, session_id: str) -> str:
        if self._agent is None:
            me = await call(self.hub.me)
            if me.agent is None:
                raise ValueError("MemoryHubSessionService needs an agent key: sessions are written by agents")
            self._agent = me.agent
        return hub_session_id(self._agent, app_name, user_id, session_id)

    async def _hub_session(self, app_name: str, user_id: str, session_id: str) -> Optional[HubSession]:
        try:
            found = await call(self.hub.sessions.get, await self._hub_id(app_name, user_id, session_id))
        except MemoryHubError as error:
            if is_missing_session(error):
                return None
            raise
        metadata = found.metadata
        if (found.user_id, metadata.get("framework"), metadata.get("app_name"), metadata.get("session_id")) != (
            user_id, FRAMEWORK, app_name, session_id,
        ):
            return None  # the digest's one-in-2^96 chance, or a session another client made under that id
        return found

    async def _events(self, hub_id: str, config: Optional[GetSessionConfig]) -> list[Event]:
        """The session's events as ADK's `get_session` answers them: those at or after
        `after_timestamp`, of those the latest `num_recent_events`, oldest first."""
        recent = config.num_recent_events if config else None
        after = config.after_timestamp if config else None
        if recent == 0:
            return []
        wanted = (lambda e: True) if after is None else (lambda e: e.timestamp >= after)
        kept: list[Event] = []
        cursor = None
        while True:
            page = await call(self.hub.sessions.list_messages, hub_id, limit=PAGE, cursor=cursor, order="asc" if recent is None else "desc")
            for message in page.results:
                event = event_of(message)
                if wanted(event):
                    kept.append(event)
                    if recent is not None and len(kept) == recent:
                        return kept[::-1]
            cursor = page.next
            if cursor is None:
                return kept if recent is None else kept[::-1]

    async def _put_shared(self, app_name: str, user_id: str, deltas: dict[str, dict[str, Any]]) -> None:
        for namespace, delta, owner in (
            (["adk", app_name, "app"], deltas["app"], None), (["adk", app_name, "user", user_id], deltas["user"], user_id),
        ):
            for key, value in delta.items():
                await call(self.hub.items.put, namespace, key, {"value": value}, index=False, user_id=owner)

    async def _shared_state(self, app_name: str, user_id: str) -> dict[str, dict[str, Any]]:
        return {"app": await self._items(["adk", app_name, "app"]), "user": await self._items(["adk", app_name, "user", user_id])}

    async def _items(self, namespace: list[str]) -> dict[str, Any]:
        """The state kept as items in exactly this namespace, by key."""
        return {item.key: item.value.get("value") for item in await self._item_hits(namespace) if item.namespace == namespace}

    async def _item_hits(self, prefix: list[str]) -> list[Any]:
        found: list[Any] = []
        while True:
            page = await call(self.hub.items.search, prefix, limit=ITEMS_PAGE, offset=len(found))
            found.extend(page)
            if len(page) < ITEMS_PAGE:
                return found


class MemoryHubMemoryService(BaseMemoryService):
    """ADK's `BaseMemoryService` over the hub's long-term memory, as `InMemoryMemoryService`
    behaves: the events with text of a session (or the events given) are memories of the
    app's user, found again by `search_memory` (at most `max_results`, the best first).
    `search_mode`: the hub's `keyword` search (ADK's in-memory service matches words too),
    or `hybrid` / `semantic` to find by meaning."""

    def __init__(
        self, *, hub: AnyHub, search_mode: Literal["keyword", "hybrid", "semantic"] = "keyword", max_results: int = MAX_SEARCH_RESULTS,
    ) -> None:
        self.hub = hub
        self.search_mode = search_mode
        self.max_results = max_results

    async def add_session_to_memory(self, session: Session) -> None:
        """The session's memories become its events with text now (after rewinds): what it
        no longer holds is deleted, what it holds is written again (an edit updates)."""
        events = [e for e in get_active_events(session.events) if _text_of(e.content)]
        forgotten = await self._forgotten(session.app_name, session.user_id, [e.id for e in events])
        events = [e for e in events if e.id not in forgotten]
        kept = {m.metadata.get("memory_id"): m for m in await self._memories(session.app_name, session.user_id, session_id=session.id)}
        current = {e.id for e in events}
        for memory_id, memory in kept.items():
            if memory_id not in current:
                await call(self.hub.memories.delete, memory.id)
        # Written again only where the event changed: an agent adds its session after every turn.
        changed = [e for e in events if e.id not in kept or _changed(kept[e.id], e)]
        await self._write(session.app_name, session.user_id, session.id, changed)

    async def add_events_to_memory(
        self, *, app_name: str, user_id: str, events: Sequence[Event], session_id: Optional[str] = None,
        custom_metadata: Optional[Mapping[str, object]] = None,
    ) -> None:
        """Adds the events with text that are not kept yet for this session (by event id;
        without `session_id`, for no session). `custom_metadata` is not used."""
        del custom_metadata
        session_id = session_id or None
        candidates = [e for e in events if _text_of(e.content)]
        if not candidates:
            return
        kept = {m.metadata.get("memory_id") for m in await self._memories(app_name, user_id, session_id=session_id or "")}
        forgotten = await self._forgotten(app_name, user_id, [e.id for e in candidates])
        new: dict[str, Event] = {}
        for event in candidates:
            if event.id not in kept and event.id not in forgotten and event.id not in new:
                new[event.id] = event
        await self._write(app_name, user_id, session_id, list(new.values()))

    async def add_memory(
        self, *, app_name: str, user_id: str, memories: Sequence[MemoryEntry], custom_metadata: Optional[Mapping[str, object]] = None,
    ) -> None:
        """Writes each entry as a memory of its own (with text: one without is skipped); its
        `id` (a new one if it has none) names it to `delete_memory`, its `custom_metadata`
        (and `custom_metadata` here) comes back with it."""
        items = []
        for entry in memories:
            text = _text_of(entry.content)
            if not text:
                continue
            memory_id = entry.id or str(uuid.uuid4())
            extra = {**(custom_metadata or {}), **entry.custom_metadata}
            items.append(_memory_input(
                app_name, user_id, session_id=None, memory_id=memory_id, author=entry.author, content=entry.content, text=text,
                timestamp=entry.timestamp, custom_metadata=to_jsonable_python(extra, fallback=str),
            ))
        await self._write_inputs(items)

    async def search_memory(self, *, app_name: str, user_id: str, query: str) -> SearchMemoryResponse:
        if not query.strip():
            return SearchMemoryResponse()
        hits = await call(
            self.hub.memories.search, query, user_id=user_id, metadata={"framework": FRAMEWORK, "app_name": app_name}, mode=self.search_mode,
            max_results=self.max_results,
        )
        return SearchMemoryResponse(memories=[_entry_of(hit.entry) for hit in hits])

    async def delete_memory(self, *, app_name: str, user_id: str, memory_id: Optional[str] = None) -> None:
        """Deletes the memories of that id (an event's, in any session) and remembers it:
        adding the event again does not bring it back."""
        if not memory_id:
            return
        found = await self._memories(app_name, user_id, memory_id=memory_id)
        for memory in found:
            await call(self.hub.memories.delete, memory.id)
        if found:
            await call(self.hub.items.put, ["adk", app_name, "forgotten", user_id], memory_id, {"forgotten": True}, index=False, user_id=user_id)

    # --- the hub ---------------------------------------------------------------------------

    async def _memories(self, app_name: str, user_id: str, *, session_id: Optional[str] = None, memory_id: Optional[str] = None) -> list[Any]:
        metadata = {"framework": FRAMEWORK, "app_name": app_name}
        if session_id is not None:
            metadata["session_id"] = session_id
        if memory_id is not None:
            metadata["memory_id"] = memory_id
        found: list[Any] = []
        cursor = None
        while True:
            page = await call(self.hub.memories.list, user_id=user_id, metadata=metadata, limit=PAGE, cursor=cursor)
            found.extend(page.results)
            cursor = page.next
            if cursor is None:
                return found

    async def _forgotten(self, app_name: str, user_id: str, memory_ids: list[str]) -> set[str]:
        namespace = ["adk", app_name, "forgotten", user_id]
        forgotten: set[str] = set()
        for start in range(0, len(memory_ids), BATCH):
            chunk = memory_ids[start:start + BATCH]
            found = await call(self.hub.items.get_many, [(namespace, memory_id) for memory_id in chunk], refresh_ttl=False)
            forgotten.update(memory_id for memory_id, item in zip(chunk, found) if item is not None)
        return forgotten

    async def _write(self, app_name: str, user_id: str, session_id: Optional[str], events: list[Event]) -> None:
        await self._write_inputs([
            _memory_input(
                app_name, user_id, session_id=session_id, memory_id=event.id, author=event.author, content=_visible(event.content),
                text=_text_of(event.content), timestamp=_format_timestamp(event.timestamp), custom_metadata=None, event_timestamp=event.timestamp,
            )
            for event in events
        ])

    async def _write_inputs(self, items: list[dict[str, Any]]) -> None:
        for start in range(0, len(items), BATCH):
            await call(self.hub.memories.create_batch, items[start:start + BATCH])


# --- ADK's data and the hub's ---------------------------------------------------------------


def _state_deltas(state: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """A state (delta) by scope, as ADK splits it (`temp:` keys dropped), in JSON."""
    deltas: dict[str, dict[str, Any]] = {"app": {}, "user": {}, "session": {}}
    for key, value in state.items():
        if key.startswith(State.APP_PREFIX):
            deltas["app"][key.removeprefix(State.APP_PREFIX)] = _json(value)
        elif key.startswith(State.USER_PREFIX):
            deltas["user"][key.removeprefix(State.USER_PREFIX)] = _json(value)
        elif not key.startswith(State.TEMP_PREFIX):
            deltas["session"][key] = _json(value)
    return deltas


def _json(value: Any) -> Any:
    return to_jsonable_python(value, bytes_mode="base64", fallback=str)


def _merged(shared: Mapping[str, Mapping[str, Any]], session_state: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(session_state)
    merged.update({State.APP_PREFIX + key: value for key, value in shared["app"].items()})
    merged.update({State.USER_PREFIX + key: value for key, value in shared["user"].items()})
    return merged


def _session_of(found: HubSession, *, app_name: str, state: dict[str, Any], events: list[Event]) -> Session:
    return Session(
        app_name=app_name, user_id=found.user_id, id=found.metadata["session_id"], state=state, events=events,
        last_update_time=found.metadata.get("last_update_time", found.created_at.timestamp()),
    )


def _answerable_calls(events: Sequence[Event]) -> set[str]:
    """The ids of function calls kept as the hub's tool calls (every call of their event
    has an id and a name): a response to one is kept as the tool result answering it."""
    ids: set[str] = set()
    for event in events:
        calls = _calls(event)
        if calls and all(c.id and c.name for c in calls):
            ids.update(c.id for c in calls if c.id)
    return ids


def _calls(event: Event) -> list[types.FunctionCall]:
    return [p.function_call for p in (event.content.parts or []) if p.function_call] if event.content else []


def message_of(event: Event, *, answerable: Collection[str] = ()) -> dict[str, Any]:
    """What operators read of an event: its role, its text, its calls and their results."""
    parts = (event.content.parts or []) if event.content else []
    calls = _calls(event)
    responses = [p.function_response for p in parts if p.function_response]
    role = "user" if event.author == "user" else "assistant"
    text = _readable(parts)
    message: dict[str, Any]
    if calls and all(c.id and c.name for c in calls):
        message = {"role": "assistant", "content": text, "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(_json(c.args or {}), ensure_ascii=False)}}
            for c in calls
        ]}
    elif len(responses) == 1 and responses[0].id in answerable and not text:
        message = {"role": "tool", "content": _response_text(responses[0]), "tool_call_id": responses[0].id}
    else:
        described = [f"[call {c.name}({json.dumps(_json(c.args or {}), ensure_ascii=False)})]" for c in calls]
        described += [f"[{r.name} answered] {_response_text(r)}" for r in responses]
        message = {"role": role, "content": "\n".join(filter(None, [text, *described])) or _described(event)}
    message["content"] = message["content"][:MAX_CONTENT_CHARS]
    return message


def _readable(parts: Sequence[types.Part]) -> str:
    """The text of the parts a person reads (not thoughts), and what the others are."""
    lines = []
    for part in parts:
        if part.thought or part.function_call or part.function_response:
            continue
        if part.text:
            lines.append(part.text)
        elif part.inline_data is not None:
            lines.append(f"[{part.inline_data.mime_type or 'data'}]")
        elif part.file_data is not None:
            lines.append(f"[file {part.file_data.file_uri or ''}]".replace(" ]", "]"))
        elif part.executable_code is not None:
            lines.append(part.executable_code.code or "")
        elif part.code_execution_result is not None:
            lines.append(part.code_execution_result.output or "")
    return "\n".join(line for line in lines if line)


def _response_text(response: types.FunctionResponse) -> str:
    return json.dumps(_json(response.response or {}), ensure_ascii=False)


def _described(event: Event) -> str:
    """An event without text, in a few words: what it changed or did."""
    actions = event.actions or EventActions()
    said = []
    if actions.state_delta:
        said.append("state: " + ", ".join(actions.state_delta))
    if actions.transfer_to_agent:
        said.append(f"transfer to {actions.transfer_to_agent}")
    if actions.escalate:
        said.append("escalate")
    if event.error_code or event.error_message:
        said.append(f"error {event.error_code or ''}: {event.error_message or ''}".replace(" :", ":"))
    if any(p.thought for p in ((event.content.parts or []) if event.content else [])):
        said.append("thought")
    return f"[{'; '.join(said) or 'event'}]"


def event_of(message: Message) -> Event:
    """The event a hub message holds: its own, or (a message another client wrote) the
    plain event that says the same."""
    if message.item is not None:
        try:
            return Event.model_validate_json(json.dumps(message.item))
        except ValidationError:
            pass
    role = "user" if message.role == "user" else "model"
    return Event(
        id=f"memoryhub-{message.seq}", invocation_id="", author="user" if role == "user" else message.role,
        content=types.Content(role=role, parts=[types.Part(text=message.content)]), timestamp=message.created_at.timestamp(),
    )


def _visible(content: Optional[types.Content]) -> Optional[types.Content]:
    if content is None:
        return None
    return content.model_copy(deep=True, update={"parts": [p.model_copy(deep=True) for p in (content.parts or []) if not p.thought]})


def _text_of(content: Optional[types.Content]) -> str:
    """The words a memory is found by: the text of the parts that are not thoughts."""
    if content is None or not content.parts:
        return ""
    return " ".join(p.text for p in content.parts if p.text and not p.thought).strip()


def _format_timestamp(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp).isoformat()  # as ADK's in-memory service writes it


def _memory_input(
    app_name: str, user_id: str, *, session_id: Optional[str], memory_id: str, author: Optional[str], content: Optional[types.Content],
    text: str, timestamp: Optional[str], custom_metadata: Optional[Any], event_timestamp: Optional[float] = None,
) -> dict[str, Any]:
    key_digest = hashlib.sha256(json.dumps([app_name, user_id, session_id, memory_id]).encode()).hexdigest()[:40]
    metadata: dict[str, Any] = {
        "framework": FRAMEWORK, "app_name": app_name, "session_id": session_id or "", "memory_id": memory_id, "author": author or "",
    }
    if timestamp is not None:
        metadata["timestamp"] = timestamp
    if event_timestamp is not None:
        metadata["event_timestamp"] = event_timestamp
    data: dict[str, Any] = {"content": _content_data(content)}
    if custom_metadata:
        data["custom_metadata"] = custom_metadata
    return {"content": text[:MAX_CONTENT_CHARS], "user_id": user_id, "metadata": metadata, "data": data, "key": f"adk:{key_digest}"}


def _changed(memory: Any, event: Event) -> bool:
    return (memory.data or {}).get("content") != _content_data(_visible(event.content)) or memory.metadata.get("author") != (event.author or "")


def _content_data(content: Optional[types.Content]) -> Optional[dict[str, Any]]:
    """The content as a memory's data keeps it: whole, or (beyond the hub's 64 KiB for
    `data`: an inline image, say) its text parts only, or nothing (the memory's text then)."""
    if content is None:
        return None
    for kept in (content, content.model_copy(update={"parts": [p for p in content.parts or [] if p.text]})):
        as_json = json.loads(kept.model_dump_json(exclude_none=True))
        if len(json.dumps(as_json)) <= MAX_DATA_BYTES:
            return as_json
    return None


def _entry_of(memory: Any) -> MemoryEntry:
    data = memory.data or {}
    metadata = memory.metadata or {}
    try:
        content = types.Content.model_validate_json(json.dumps(data["content"])) if data.get("content") else None
    except ValidationError:
        content = None
    if content is None:
        content = types.Content(parts=[types.Part(text=memory.content)])
    return MemoryEntry(
        id=metadata.get("memory_id") or memory.id, content=content, author=metadata.get("author") or None,
        timestamp=metadata.get("timestamp"), custom_metadata=data.get("custom_metadata") or {},
    )
