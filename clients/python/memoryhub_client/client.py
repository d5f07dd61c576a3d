"""`MemoryHub`: the MemoryHub API over httpx.Client.

GENERATED from aio.py by clients/python/scripts/unasync.py: edit aio.py, then run the
script. Requests, retries, answers and event parsing live in _transport.py."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from datetime import date, datetime
from types import TracebackType
# typing.List: `list` is also a method name in the resource classes, where `list[…]`
# would name the method for a type checker.
from typing import Any, ClassVar, List, Literal, Optional, TypeVar, Union

import httpx

from memoryhub_client import _transport as t
from memoryhub_client._transport import Call, RetryPolicy, operation
from memoryhub_client.models import (
    AgentKey, AgentKeyCreated, Approval, ApprovalRule, AuditEntry, BranchedSession, Checkpoint, CheckpointPart, Context,
    ContextStrategy, Decision, Episode, EpisodeDraft, Event, ForkedSession, GraphCheckpoint, GraphCheckpointSaved, GraphDeleted,
    GraphEdge, GraphPath, GraphRule, GraphRules, GraphThreadCopied, Grounding, GraphWritesSaved, Item, ItemSearchHit, LoadedCheckpoint, Me, Memory, MemoryInput, MemoryRevision, MemorySearchHit,
    MemoryStats, MemoryType, Message, DeletedMessages, EditedMessage, MessageInput, OnDuplicate, Outcome, Page, Plan, PlanRender, PlanStep, Purge, Remember, Retention,
    Export, ExportScope, Import, ImportFormat, Budget, Usage, UsageGroup,
    Role, RuleScope, Scope, SearchMode, Session, SimilarEpisodes, Source, StepInput, StepStatus, Summarized, SummaryPolicy, TimelineEvent,
    ToolCall, ToolCallStatus, ToolResult, EmailEvent, Notifications, Webhook, WebhookCreated, WebhookDelivery, WebhookEvent, WebhookFormat,
    WebhookSecret,
)

JSON = Any
T = TypeVar("T")
Version = Union[int, Literal["latest"]]


class _Resource:
    def __init__(self, hub: MemoryHub) -> None:
        self._hub = hub


class MemoriesResource(_Resource):
    """Long-term memory: /api/v1/memories, /api/v1/stats."""

    @operation("POST /api/v1/memories")
    def create(
        self, content: str, *, user_id: str, scope: Optional[Scope] = None, store: Optional[str] = None,
        memory_type: Optional[MemoryType] = None, tags: Optional[List[str]] = None, metadata: Optional[dict[str, JSON]] = None,
        data: Optional[dict[str, JSON]] = None, key: Optional[str] = None, ttl_seconds: Optional[int] = None,
        expires_at: Optional[datetime] = None, embedding: Optional[List[float]] = None, source: Optional[Union[Source, dict[str, JSON]]] = None,
        on_duplicate: Optional[OnDuplicate] = None,
    ) -> Memory:
        """A new entry (201), or with `key` already used by this agent, that entry updated (200).
        `source` names what it came from: {session_id, seq}, {session_id, call_id} or {episode_id}.
        When this agent already sees the same memory, `on_duplicate` "keep" (the hub's default)
        stores it anyway and lists `similar`; "skip" answers the existing entry and "update"
        makes the new content the next revision of this agent's own (both with `duplicate`
        True; another agent's is kept beside)."""
        return self._hub._run(t.call(Memory, "POST", "/api/v1/memories", json=t.body(
            content=content, user_id=user_id, scope=scope, store=store, memory_type=memory_type, tags=tags, metadata=metadata, data=data,
            key=key, ttl_seconds=ttl_seconds, expires_at=expires_at, embedding=embedding, source=t.source_named(source),
            on_duplicate=on_duplicate,
        )))

    @operation("POST /api/v1/memories/batch")
    def create_batch(self, items: List[Union[MemoryInput, dict[str, JSON]]], *, on_duplicate: Optional[OnDuplicate] = None) -> List[Memory]:
        """All the entries, or none (an error names the item); `on_duplicate` as for `create`, for every item."""
        call = Call("POST", "/api/v1/memories/batch", parse=t.parser(dict[str, List[Memory]]),
                    json={"items": t.jsonable(items), **t.body(on_duplicate=on_duplicate)})
        return (self._hub._run(call))["items"]

    @operation("GET /api/v1/memories/{entry_id}")
    def get(self, entry_id: str) -> Memory:
        return self._hub._run(t.call(Memory, "GET", f"/api/v1/memories/{t.segment(entry_id)}"))

    @operation("PATCH /api/v1/memories/{entry_id}")
    def update(
        self, entry_id: str, *, content: Optional[str] = None, tags: Optional[List[str]] = None, metadata: Optional[dict[str, JSON]] = None,
        data: Optional[dict[str, JSON]] = None, ttl_seconds: Optional[int] = None, expires_at: Optional[datetime] = None,
        embedding: Optional[List[float]] = None, version: Optional[int] = None, reason: Optional[str] = None,
    ) -> Memory:
        """With `version`, refused (Conflict, 409) if the entry changed since that version.
        Operators (approver or admin) give a `reason`, kept in the revision."""
        return self._hub._run(t.call(Memory, "PATCH", f"/api/v1/memories/{t.segment(entry_id)}", json=t.body(
            content=content, tags=tags, metadata=metadata, data=data, ttl_seconds=ttl_seconds, expires_at=expires_at, embedding=embedding,
            version=version, reason=reason,
        )))

    @operation("GET /api/v1/memories/{entry_id}/revisions")
    def revisions(self, entry_id: str) -> List[MemoryRevision]:
        """Every revision, newest first (the first is the current one)."""
        call = Call("GET", f"/api/v1/memories/{t.segment(entry_id)}/revisions", parse=t.parser(dict[str, List[MemoryRevision]]))
        return (self._hub._run(call))["results"]

    @operation("POST /api/v1/memories/{entry_id}/review")
    def review(self, entry_id: str, action: str, *, reason: Optional[str] = None) -> Memory:
        """`action`: verify, flag, quarantine or release. Agents may only flag."""
        return self._hub._run(t.call(Memory, "POST", f"/api/v1/memories/{t.segment(entry_id)}/review", json=t.body(
            action=action, reason=reason,
        )))

    @operation("POST /api/v1/memories/{entry_id}/revert")
    def revert(self, entry_id: str, revision: int, *, reason: Optional[str] = None) -> Memory:
        """A new revision equal to `revision`'s content, tags, metadata and data."""
        return self._hub._run(t.call(Memory, "POST", f"/api/v1/memories/{t.segment(entry_id)}/revert", json=t.body(
            revision=revision, reason=reason,
        )))

    @operation("POST /api/v1/memories/{entry_id}/merge")
    def merge(self, entry_id: str, others: List[str], *, reason: Optional[str] = None) -> Memory:
        """Keep this entry; `others` are superseded by it (gone from search and lists). Approvers
        and admins, or the agent that wrote them all; only entries about the same user."""
        return self._hub._run(t.call(Memory, "POST", f"/api/v1/memories/{t.segment(entry_id)}/merge", json=t.body(
            others=others, reason=reason,
        )))

    @operation("DELETE /api/v1/memories/{entry_id}")
    def delete(self, entry_id: str) -> None:
        self._hub._run(t.call(None, "DELETE", f"/api/v1/memories/{t.segment(entry_id)}"))

    @operation("GET /api/v1/memories")
    def list(
        self, *, tags: Optional[List[str]] = None, scope: Optional[Scope] = None, user_id: Optional[str] = None,
        memory_type: Optional[MemoryType] = None, created_after: Optional[datetime] = None, created_before: Optional[datetime] = None,
        metadata: Optional[dict[str, str]] = None, store: Optional[str] = None, agent: Optional[str] = None,
        as_of: Optional[datetime] = None, include_invalidated: Optional[bool] = None, limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page[Memory]:
        """One page, newest first; `tags` means all of them, `metadata` exact matches."""
        return self._hub._run(self._list_call(locals()))

    @operation("GET /api/v1/memories")
    def iter(
        self, *, tags: Optional[List[str]] = None, scope: Optional[Scope] = None, user_id: Optional[str] = None,
        memory_type: Optional[MemoryType] = None, created_after: Optional[datetime] = None, created_before: Optional[datetime] = None,
        metadata: Optional[dict[str, str]] = None, store: Optional[str] = None, agent: Optional[str] = None,
        as_of: Optional[datetime] = None, include_invalidated: Optional[bool] = None, limit: Optional[int] = None,
    ) -> Iterator[Memory]:
        """Every entry `list` would page through (`limit` is the page size)."""
        return self._hub._iterate(self._list_call(locals()))

    @staticmethod
    def _list_call(arguments: dict[str, Any]) -> Call[Page[Memory]]:
        filters = {name: value for name, value in arguments.items() if name not in ("self", "metadata")}
        metadata = {f"metadata.{name}": value for name, value in (arguments["metadata"] or {}).items()}
        return t.call(Page[Memory], "GET", "/api/v1/memories", params={**t.query(**filters), **t.query(**metadata)})

    @operation("POST /api/v1/memories/search")
    def search(
        self, query: Optional[str] = None, *, tags: Optional[List[str]] = None, metadata: Optional[dict[str, JSON]] = None,
        scope: Optional[Scope] = None, user_id: Optional[str] = None, memory_type: Optional[MemoryType] = None,
        store: Optional[str] = None, agent: Optional[str] = None, start_time: Optional[datetime] = None,
        end_time: Optional[datetime] = None, include_invalidated: Optional[bool] = None, as_of: Optional[datetime] = None,
        mode: Optional[SearchMode] = None, max_results: Optional[int] = None, min_relevance: Optional[float] = None,
        embedding: Optional[List[float]] = None, repeats: Optional[Literal["demote", "keep"]] = None,
        follow_names: Optional[Literal["results", "all", "off"]] = None, rerank: Optional[bool] = None,
        follow_graph: Optional[bool] = None,
    ) -> List[MemorySearchHit]:
        """Best first; without `query`, a filtered listing, newest first."""
        call = Call("POST", "/api/v1/memories/search", parse=t.parser(dict[str, List[MemorySearchHit]]), json=t.body(
            query=query, tags=tags, metadata=metadata, scope=scope, user_id=user_id, memory_type=memory_type, store=store, agent=agent,
            start_time=start_time, end_time=end_time, include_invalidated=include_invalidated, as_of=as_of, mode=mode,
            max_results=max_results, min_relevance=min_relevance, embedding=embedding, repeats=repeats,
            follow_names=follow_names, rerank=rerank, follow_graph=follow_graph,
        ))
        return (self._hub._run(call))["results"]

    @operation("GET /api/v1/stats")
    def stats(self, *, user_id: Optional[str] = None) -> MemoryStats:
        return self._hub._run(t.call(MemoryStats, "GET", "/api/v1/stats", params=t.query(user_id=user_id)))


class ItemsResource(_Resource):
    """A key-value store over memories, by (namespace, key), shared by the agents of a
    store: /api/v1/memories/items…, /api/v1/memories/namespaces (what MemoryHubStore uses)."""

    @operation("PUT /api/v1/memories/items")
    def put(
        self, namespace: Sequence[str], key: str, value: dict[str, JSON], *, index: Union[None, Literal[False], List[str]] = None,
        ttl_seconds: Optional[int] = None, user_id: Optional[str] = None, store: Optional[str] = None,
    ) -> Item:
        """Creates or replaces the item. `index`: None embeds the whole value's text, False
        nothing, or the paths of the fields to embed."""
        return self._hub._run(t.call(Item, "PUT", "/api/v1/memories/items", json=t.body(
            namespace=list(namespace), key=key, value=value, index=index, ttl_seconds=ttl_seconds, user_id=user_id, store=store,
        )))

    @operation("POST /api/v1/memories/items/get")
    def get_many(
        self, keys: Sequence[tuple[Sequence[str], str]], *, refresh_ttl: Optional[bool] = None, store: Optional[str] = None,
    ) -> List[Optional[Item]]:
        """The items (None where there is none) in the order of `keys`, (namespace, key) pairs."""
        call = Call("POST", "/api/v1/memories/items/get", parse=t.parser(dict[str, List[Optional[Item]]]), json=t.body(
            items=[{"namespace": list(namespace), "key": key} for namespace, key in keys], refresh_ttl=refresh_ttl, store=store,
        ))
        return (self._hub._run(call))["results"]

    @operation("POST /api/v1/memories/items/get")
    def get(self, namespace: Sequence[str], key: str, *, refresh_ttl: Optional[bool] = None, store: Optional[str] = None) -> Optional[Item]:
        return (self.get_many([(namespace, key)], refresh_ttl=refresh_ttl, store=store))[0]

    @operation("POST /api/v1/memories/items/delete")
    def delete(self, namespace: Sequence[str], key: str, *, store: Optional[str] = None) -> None:
        """No error when there is no such item."""
        self._hub._run(t.call(None, "POST", "/api/v1/memories/items/delete", json=t.body(
            namespace=list(namespace), key=key, store=store,
        )))

    @operation("POST /api/v1/memories/items/search")
    def search(
        self, namespace_prefix: Sequence[str] = (), *, query: Optional[str] = None, filter: Optional[dict[str, JSON]] = None,
        limit: Optional[int] = None, offset: Optional[int] = None, refresh_ttl: Optional[bool] = None, store: Optional[str] = None,
    ) -> List[ItemSearchHit]:
        """By meaning with `query` (unindexed items last, score None), else newest first;
        `filter` maps field paths to values or to {$eq, $ne, $gt, $gte, $lt, $lte: value}."""
        call = Call("POST", "/api/v1/memories/items/search", parse=t.parser(dict[str, List[ItemSearchHit]]), json=t.body(
            namespace_prefix=list(namespace_prefix), query=query, filter=filter, limit=limit, offset=offset, refresh_ttl=refresh_ttl,
            store=store,
        ))
        return (self._hub._run(call))["results"]

    @operation("GET /api/v1/memories/namespaces")
    def list_namespaces(
        self, *, prefix: Optional[Sequence[str]] = None, suffix: Optional[Sequence[str]] = None, max_depth: Optional[int] = None,
        limit: Optional[int] = None, offset: Optional[int] = None, store: Optional[str] = None,
    ) -> List[List[str]]:
        """Sorted; `*` in `prefix` or `suffix` matches any one label."""
        params: dict[str, Any] = {**t.query(max_depth=max_depth, limit=limit, offset=offset, store=store)}
        params.update({name: list(labels) for name, labels in (("prefix", prefix), ("suffix", suffix)) if labels})
        call = Call("GET", "/api/v1/memories/namespaces", parse=t.parser(dict[str, List[List[str]]]), params=params)
        return (self._hub._run(call))["results"]


class SessionsResource(_Resource):
    """Sessions and their conversation: /api/v1/sessions/…"""

    @operation("POST /api/v1/sessions")
    def create(
        self, session_id: str, *, user_id: str, metadata: Optional[dict[str, JSON]] = None, state: Optional[dict[str, JSON]] = None,
        on_exists: Optional[Literal["return", "error"]] = None, summary_policy: Optional[SummaryPolicy] = None,
        meta_compaction_threshold: Optional[int] = None,
    ) -> Session:
        """201 new, 200 if it exists for the same user_id (then it keeps its own `state` and
        `metadata`; `on_exists="error"`: Conflict SESSION_EXISTS instead); Conflict if for another."""
        return self._hub._run(t.call(Session, "POST", "/api/v1/sessions", json=t.body(
            session_id=session_id, user_id=user_id, metadata=metadata, state=state, on_exists=on_exists, summary_policy=summary_policy,
            meta_compaction_threshold=meta_compaction_threshold,
        )))

    @operation("GET /api/v1/sessions")
    def list(
        self, *, user_id: Optional[str] = None, metadata: Optional[dict[str, str]] = None, limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page[Session]:
        """A page of the key's sessions (an agent's own, an operator's workspace's), newest
        first; `metadata`: only those whose metadata has each of these string values."""
        return self._hub._run(self._list_call(user_id=user_id, metadata=metadata, limit=limit, cursor=cursor))

    @operation("GET /api/v1/sessions")
    def iter(self, *, user_id: Optional[str] = None, metadata: Optional[dict[str, str]] = None, limit: Optional[int] = None) -> Iterator[Session]:
        """Every session `list` would page through (`limit` is the page size)."""
        return self._hub._iterate(self._list_call(user_id=user_id, metadata=metadata, limit=limit, cursor=None))

    @staticmethod
    def _list_call(*, user_id: Optional[str], metadata: Optional[dict[str, str]], limit: Optional[int], cursor: Optional[str]) -> Call[Page[Session]]:
        filters = {f"metadata.{name}": value for name, value in (metadata or {}).items()}
        return t.call(Page[Session], "GET", "/api/v1/sessions", params={**t.query(user_id=user_id, limit=limit, cursor=cursor), **t.query(**filters)})

    @operation("GET /api/v1/sessions/{session_id}")
    def get(self, session_id: str) -> Session:
        return self._hub._run(t.call(Session, "GET", _session(session_id)))

    @operation("PATCH /api/v1/sessions/{session_id}")
    def update(self, session_id: str, *, state: Optional[dict[str, JSON]] = None, metadata: Optional[dict[str, JSON]] = None) -> Session:
        """Set these keys of the session's state and metadata, each to its new value (an
        object replaces the old one, None is kept as null); the other keys stay."""
        return self._hub._run(t.call(Session, "PATCH", _session(session_id), json=t.body(state=state, metadata=metadata)))

    @operation("DELETE /api/v1/sessions/{session_id}")
    def delete(self, session_id: str) -> None:
        """The session and everything in it (messages, plans, checkpoints, tool calls,
        approvals) deleted; Conflict SESSION_HAS_PENDING_APPROVAL while a request waits."""
        self._hub._run(t.call(None, "DELETE", _session(session_id)))

    @operation("POST /api/v1/sessions/{session_id}/messages")
    def append_message(
        self, session_id: str, role: Role, content: Optional[str] = None, *, tool_calls: Optional[List[JSON]] = None,
        tool_call_id: Optional[str] = None, pinned: Optional[bool] = None, item: Optional[dict[str, JSON]] = None,
    ) -> Message:
        return self._hub._run(t.call(Message, "POST", _session(session_id, "messages"), json=t.body(
            role=role, content=content, tool_calls=tool_calls, tool_call_id=tool_call_id, pinned=pinned, item=item,
        )))

    @operation("POST /api/v1/sessions/{session_id}/messages")
    def append_messages(
        self, session_id: str, messages: List[Union[MessageInput, dict[str, JSON]]], *, state: Optional[dict[str, JSON]] = None,
        metadata: Optional[dict[str, JSON]] = None,
    ) -> List[Message]:
        """Several messages in one request, in order; with `state` and `metadata`, these keys
        of the session's set as `update` sets them, in the same transaction (all or nothing)."""
        body: dict[str, Any] = {"messages": t.jsonable(messages)}
        if state or metadata:
            body["session"] = t.body(state=state or None, metadata=metadata or None)
        call = Call("POST", _session(session_id, "messages"), parse=t.parser(dict[str, List[Message]]), json=body)
        return (self._hub._run(call))["messages"]

    @operation("GET /api/v1/sessions/{session_id}/messages")
    def list_messages(
        self, session_id: str, *, limit: Optional[int] = None, cursor: Optional[str] = None, order: Optional[Literal["asc", "desc"]] = None,
    ) -> Page[Message]:
        """A page of the history, oldest first (`order="desc"`: newest first)."""
        params = t.query(limit=limit, cursor=cursor, order=order)
        return self._hub._run(t.call(Page[Message], "GET", _session(session_id, "messages"), params=params))

    @operation("GET /api/v1/sessions/{session_id}/messages")
    def iter_messages(self, session_id: str, *, limit: Optional[int] = None, order: Optional[Literal["asc", "desc"]] = None) -> Iterator[Message]:
        """The whole history in order (`order="desc"`: newest first)."""
        return self._hub._iterate(t.call(Page[Message], "GET", _session(session_id, "messages"), params=t.query(limit=limit, order=order)))

    @operation("PATCH /api/v1/sessions/{session_id}/messages/{seq}")
    def edit_message(self, session_id: str, seq: int, *, content: str) -> EditedMessage:
        return self._hub._run(t.call(EditedMessage, "PATCH", _session(session_id, "messages", seq), json={"content": content}))

    @operation("DELETE /api/v1/sessions/{session_id}/messages")
    def delete_messages(self, session_id: str, *, last: Optional[int] = None, all: bool = False) -> int:
        """Delete the session's last `last` messages, or every one (`all=True`); how many went."""
        if (last is None) == (not all):
            raise ValueError("say which: last=N or all=True")
        params = t.query(last=last) if last is not None else {"all": "true"}
        return (self._hub._run(t.call(DeletedMessages, "DELETE", _session(session_id, "messages"), params=params))).deleted

    @operation("DELETE /api/v1/sessions/{session_id}/messages")
    def pop_messages(self, session_id: str, *, last: int = 1) -> List[Message]:
        """Delete the session's last `last` messages (1–200) and return them, oldest first:
        a framework's pop, in one request (nothing appended in between is taken instead)."""
        return (self._hub._run(t.call(DeletedMessages, "DELETE", _session(session_id, "messages"), params=t.query(last=last)))).messages

    @operation("GET /api/v1/sessions/{session_id}/context")
    def context(
        self, session_id: str, *, max_messages: Optional[int] = None, max_tokens: Optional[int] = None, pin_first: Optional[int] = None,
        preserve_recent: Optional[int] = None, strategy: Optional[ContextStrategy] = None, summary_ratio: Optional[float] = None,
        grounding: Optional[int] = None,
    ) -> Context:
        """Prompt-ready messages: system and pinned kept, never opening on an orphan tool result;
        with `grounding` N, one system message more stating up to N facts relevant to the
        latest user message (as GraphMemory.load() appends them)."""
        return self._hub._run(t.call(Context, "GET", _session(session_id, "context"), params=t.query(
            max_messages=max_messages, max_tokens=max_tokens, pin_first=pin_first, preserve_recent=preserve_recent, strategy=strategy,
            summary_ratio=summary_ratio, grounding=grounding,
        )))

    @operation("POST /api/v1/sessions/{session_id}/branch")
    def branch(self, session_id: str, *, new_session_id: str, upto_seq: Optional[int] = None, label: Optional[str] = None) -> BranchedSession:
        return self._hub._run(t.call(BranchedSession, "POST", _session(session_id, "branch"), json=t.body(
            new_session_id=new_session_id, upto_seq=upto_seq, label=label,
        )))

    @operation("POST /api/v1/sessions/{session_id}/summarize")
    def summarize(self, session_id: str) -> Summarized:
        return self._hub._run(t.call(Summarized, "POST", _session(session_id, "summarize")))

    @operation("POST /api/v1/sessions/{session_id}/reactivate")
    def reactivate(self, session_id: str) -> Session:
        return self._hub._run(t.call(Session, "POST", _session(session_id, "reactivate")))

    @operation("GET /api/v1/sessions/{session_id}/timeline")
    def list_timeline(self, session_id: str, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page[TimelineEvent]:
        return self._hub._run(t.call(Page[TimelineEvent], "GET", _session(session_id, "timeline"), params=t.query(limit=limit, cursor=cursor)))

    @operation("GET /api/v1/sessions/{session_id}/timeline")
    def iter_timeline(self, session_id: str, *, limit: Optional[int] = None) -> Iterator[TimelineEvent]:
        return self._hub._iterate(t.call(Page[TimelineEvent], "GET", _session(session_id, "timeline"), params=t.query(limit=limit)))


class PlansResource(_Resource):
    """A session's plan: /api/v1/sessions/{sid}/plan…"""

    @operation("PUT /api/v1/sessions/{session_id}/plan")
    def set(self, session_id: str, *, goal: str, steps: List[Union[StepInput, dict[str, JSON]]]) -> Plan:
        """Replaces the plan; an unknown dependency or a cycle is refused (BadRequest)."""
        return self._hub._run(t.call(Plan, "PUT", _session(session_id, "plan"), json={"goal": goal, "steps": t.jsonable(steps)}))

    @operation("GET /api/v1/sessions/{session_id}/plan")
    def get(self, session_id: str) -> Plan:
        return self._hub._run(t.call(Plan, "GET", _session(session_id, "plan")))

    @operation("PATCH /api/v1/sessions/{session_id}/plan/steps/{step_id}")
    def update_step(self, session_id: str, step_id: str, *, status: Optional[StepStatus] = None, summary: Optional[str] = None) -> PlanStep:
        """An invalid transition, or starting a step whose dependencies are not done: Conflict."""
        return self._hub._run(t.call(PlanStep, "PATCH", _session(session_id, "plan", "steps", step_id), json=t.body(
            status=status, summary=summary,
        )))

    @operation("GET /api/v1/sessions/{session_id}/plan/render")
    def render(self, session_id: str, *, current: Optional[str] = None) -> str:
        """The plan as a compact prompt slice."""
        return (self._hub._run(t.call(PlanRender, "GET", _session(session_id, "plan", "render"), params=t.query(current=current)))).text


class ToolCallsResource(_Resource):
    """The tool-call log: /api/v1/sessions/{sid}/tool-calls, /api/v1/tool-calls/{call_id}/result."""

    @operation("POST /api/v1/sessions/{session_id}/tool-calls")
    def record(
        self, session_id: str, tool: str, *, args: JSON = None, result: JSON = None, call_id: Optional[str] = None,
        result_summary: Optional[str] = None, status: Optional[ToolCallStatus] = None, step_id: Optional[str] = None,
        duration_ms: Optional[int] = None, cost: Optional[float] = None,
    ) -> ToolCall:
        """Logged with PII and secrets redacted (`redactions` counts them by type)."""
        return self._hub._run(t.call(ToolCall, "POST", _session(session_id, "tool-calls"), json=t.body(
            tool=tool, args=args, result=result, call_id=call_id, result_summary=result_summary, status=status, step_id=step_id,
            duration_ms=duration_ms, cost=cost,
        )))

    @operation("GET /api/v1/sessions/{session_id}/tool-calls")
    def list(self, session_id: str, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page[ToolCall]:
        return self._hub._run(t.call(Page[ToolCall], "GET", _session(session_id, "tool-calls"), params=t.query(limit=limit, cursor=cursor)))

    @operation("GET /api/v1/sessions/{session_id}/tool-calls")
    def iter(self, session_id: str, *, limit: Optional[int] = None) -> Iterator[ToolCall]:
        return self._hub._iterate(t.call(Page[ToolCall], "GET", _session(session_id, "tool-calls"), params=t.query(limit=limit)))

    @operation("GET /api/v1/tool-calls/{call_id}/result")
    def result(self, call_id: str) -> ToolResult:
        """The (redacted) raw output."""
        return self._hub._run(t.call(ToolResult, "GET", f"/api/v1/tool-calls/{t.segment(call_id)}/result"))


class CheckpointsResource(_Resource):
    """Versioned agent state: /api/v1/sessions/{sid}/checkpoints, resume, fork."""

    @operation("POST /api/v1/sessions/{session_id}/checkpoints")
    def save(
        self, session_id: str, *, expected_version: int, state: JSON, current_step: Optional[str] = None, label: Optional[str] = None,
        include: Optional[List[CheckpointPart]] = None, exclude: Optional[List[CheckpointPart]] = None,
    ) -> Checkpoint:
        """Version `expected_version + 1` (0 for the first save); a stale writer gets Conflict
        with `details["current_version"]`."""
        json = {"expected_version": expected_version, "state": t.jsonable(state), **t.body(
            current_step=current_step, label=label, include=include, exclude=exclude,
        )}
        return self._hub._run(t.call(Checkpoint, "POST", _session(session_id, "checkpoints"), json=json))

    @operation("GET /api/v1/sessions/{session_id}/checkpoints/{version}")
    def get(
        self, session_id: str, version: Version = "latest", *, include: Optional[List[CheckpointPart]] = None,
        exclude: Optional[List[CheckpointPart]] = None,
    ) -> LoadedCheckpoint:
        """A read with no side effect (`resume` records one on the timeline)."""
        return self._hub._run(t.call(LoadedCheckpoint, "GET", _session(session_id, "checkpoints", version), params=t.query(
            include=include, exclude=exclude,
        )))

    @operation("GET /api/v1/sessions/{session_id}/checkpoints/{version}")
    def latest(
        self, session_id: str, *, include: Optional[List[CheckpointPart]] = None, exclude: Optional[List[CheckpointPart]] = None,
    ) -> LoadedCheckpoint:
        return self.get(session_id, "latest", include=include, exclude=exclude)

    @operation("GET /api/v1/sessions/{session_id}/checkpoints")
    def list(self, session_id: str, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page[Checkpoint]:
        return self._hub._run(t.call(Page[Checkpoint], "GET", _session(session_id, "checkpoints"), params=t.query(limit=limit, cursor=cursor)))

    @operation("GET /api/v1/sessions/{session_id}/checkpoints")
    def iter(self, session_id: str, *, limit: Optional[int] = None) -> Iterator[Checkpoint]:
        return self._hub._iterate(t.call(Page[Checkpoint], "GET", _session(session_id, "checkpoints"), params=t.query(limit=limit)))

    @operation("POST /api/v1/sessions/{session_id}/resume")
    def resume(self, session_id: str, *, from_version: Optional[int] = None) -> LoadedCheckpoint:
        """The checkpoint (latest by default) with its messages and plan."""
        return self._hub._run(t.call(LoadedCheckpoint, "POST", _session(session_id, "resume"), json=t.body(from_version=from_version)))

    @operation("POST /api/v1/sessions/{session_id}/fork")
    def fork(self, session_id: str, *, from_version: int, new_session_id: str) -> ForkedSession:
        return self._hub._run(t.call(ForkedSession, "POST", _session(session_id, "fork"), json={
            "from_version": from_version, "new_session_id": new_session_id,
        }))


class GraphCheckpointsResource(_Resource):
    """LangGraph checkpoints, as MemoryHubSaver stores them: /api/v1/langgraph/… (beyond
    docs/api.md). Values are `serde.dumps_typed` pairs, (type, bytes); the hub never reads them."""

    @operation("POST /api/v1/langgraph/checkpoints")
    def put(
        self, thread_id: str, *, checkpoint_id: str, checkpoint: tuple[str, bytes], checkpoint_ns: str = "",
        parent_checkpoint_id: Optional[str] = None, metadata: Optional[dict[str, JSON]] = None, channel_versions: Optional[dict[str, str]] = None,
        blobs: Optional[List[tuple[str, str, str, bytes]]] = None, user_id: Optional[str] = None,
    ) -> GraphCheckpointSaved:
        """A checkpoint with the values of its new versions, `blobs` as (channel, version,
        type, bytes); `user_id` names the end user of a new thread. The same checkpoint id
        saved again replaces the checkpoint."""
        json = {
            "thread_id": thread_id, "checkpoint_id": checkpoint_id, "checkpoint_ns": checkpoint_ns, "checkpoint": t.typed_value(*checkpoint),
            "metadata": t.jsonable(metadata or {}), "channel_versions": channel_versions or {},
            "blobs": [{"channel": c, "version": v, **t.typed_value(kind, data)} for c, v, kind, data in blobs or []],
            **t.body(parent_checkpoint_id=parent_checkpoint_id, user_id=user_id),
        }
        return self._hub._run(t.call(GraphCheckpointSaved, "POST", "/api/v1/langgraph/checkpoints", json=json))

    @operation("POST /api/v1/langgraph/writes")
    def put_writes(
        self, thread_id: str, *, checkpoint_id: str, task_id: str, writes: List[tuple[int, str, str, bytes]], checkpoint_ns: str = "",
        task_path: str = "", user_id: Optional[str] = None,
    ) -> GraphWritesSaved:
        """A task's pending writes as (idx, channel, type, bytes): sent again, regular ones
        (idx ≥ 0) are kept as first stored, special ones (idx < 0) replaced."""
        json = {
            "thread_id": thread_id, "checkpoint_id": checkpoint_id, "task_id": task_id, "checkpoint_ns": checkpoint_ns, "task_path": task_path,
            "writes": [{"idx": idx, "channel": c, **t.typed_value(kind, data)} for idx, c, kind, data in writes], **t.body(user_id=user_id),
        }
        return self._hub._run(t.call(GraphWritesSaved, "POST", "/api/v1/langgraph/writes", json=json))

    @operation("GET /api/v1/langgraph/checkpoints")
    def list(
        self, *, thread_id: Optional[str] = None, checkpoint_ns: Optional[str] = None, checkpoint_id: Optional[str] = None,
        before: Optional[str] = None, filter: Optional[dict[str, JSON]] = None, limit: Optional[int] = None, cursor: Optional[str] = None,
    ) -> Page[GraphCheckpoint]:
        """Newest first, with channel values and pending writes; `checkpoint_ns=""` is the
        root namespace, None every namespace; `filter` is what the metadata must contain."""
        return self._hub._run(t.graph_list_call(
            thread_id=thread_id, checkpoint_ns=checkpoint_ns, checkpoint_id=checkpoint_id, before=before, filter=filter, limit=limit, cursor=cursor,
        ))

    @operation("GET /api/v1/langgraph/checkpoints")
    def iter(
        self, *, thread_id: Optional[str] = None, checkpoint_ns: Optional[str] = None, checkpoint_id: Optional[str] = None,
        before: Optional[str] = None, filter: Optional[dict[str, JSON]] = None, limit: Optional[int] = None,
    ) -> Iterator[GraphCheckpoint]:
        return self._hub._iterate(t.graph_list_call(
            thread_id=thread_id, checkpoint_ns=checkpoint_ns, checkpoint_id=checkpoint_id, before=before, filter=filter, limit=limit, cursor=None,
        ))

    @operation("DELETE /api/v1/langgraph/threads/{thread_id}")
    def delete_thread(self, thread_id: str) -> None:
        """Every checkpoint, value and write of the thread (its session stays)."""
        self._hub._run(t.call(None, "DELETE", f"/api/v1/langgraph/threads/{t.segment(thread_id)}"))

    @operation("POST /api/v1/langgraph/threads/{thread_id}/copy")
    def copy_thread(self, thread_id: str, *, target_thread_id: str) -> GraphThreadCopied:
        return self._hub._run(t.call(
            GraphThreadCopied, "POST", f"/api/v1/langgraph/threads/{t.segment(thread_id)}/copy", json={"target_thread_id": target_thread_id},
        ))

    @operation("POST /api/v1/langgraph/prune")
    def prune(self, thread_ids: List[str], *, strategy: Optional[Literal["keep_latest", "delete"]] = None) -> GraphDeleted:
        """`keep_latest` (default): each namespace keeps its latest checkpoint; `delete`: none."""
        return self._hub._run(t.call(GraphDeleted, "POST", "/api/v1/langgraph/prune", json={
            "thread_ids": list(thread_ids), **t.body(strategy=strategy),
        }))

    @operation("POST /api/v1/langgraph/runs/delete")
    def delete_runs(self, run_ids: List[str]) -> GraphDeleted:
        """The checkpoints (and their writes) whose metadata run_id is one of `run_ids`."""
        return self._hub._run(t.call(GraphDeleted, "POST", "/api/v1/langgraph/runs/delete", json={"run_ids": list(run_ids)}))


class EpisodesResource(_Resource):
    """Finished tasks: /api/v1/episodes…"""

    @operation("POST /api/v1/episodes")
    def create(
        self, *, user_id: str, task: str, outcome: Outcome, narrative: str, session_id: Optional[str] = None,
        tools_used: Union[List[str], dict[str, int], None] = None, elapsed_ms: Optional[int] = None, cost: Optional[float] = None,
        metadata: Optional[dict[str, JSON]] = None,
    ) -> Episode:
        return self._hub._run(t.call(Episode, "POST", "/api/v1/episodes", json=t.body(
            user_id=user_id, task=task, outcome=outcome, narrative=narrative, session_id=session_id, tools_used=tools_used,
            elapsed_ms=elapsed_ms, cost=cost, metadata=metadata,
        )))

    @operation("POST /api/v1/episodes/similar")
    def similar(self, task: str, *, k: Optional[int] = None, outcome: Optional[Outcome] = None, user_id: Optional[str] = None) -> SimilarEpisodes:
        return self._hub._run(t.call(SimilarEpisodes, "POST", "/api/v1/episodes/similar", json=t.body(
            task=task, k=k, outcome=outcome, user_id=user_id,
        )))

    @operation("GET /api/v1/episodes")
    def list(
        self, *, outcome: Optional[Outcome] = None, user_id: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None,
    ) -> Page[Episode]:
        return self._hub._run(t.call(Page[Episode], "GET", "/api/v1/episodes", params=t.query(
            outcome=outcome, user_id=user_id, limit=limit, cursor=cursor,
        )))

    @operation("GET /api/v1/episodes")
    def iter(self, *, outcome: Optional[Outcome] = None, user_id: Optional[str] = None, limit: Optional[int] = None) -> Iterator[Episode]:
        return self._hub._iterate(t.call(Page[Episode], "GET", "/api/v1/episodes", params=t.query(outcome=outcome, user_id=user_id, limit=limit)))

    @operation("POST /api/v1/sessions/{session_id}/episode-draft")
    def draft(self, session_id: str) -> EpisodeDraft:
        """An episode drafted from the session, for the agent to check and `create`."""
        return self._hub._run(t.call(EpisodeDraft, "POST", _session(session_id, "episode-draft")))


class ApprovalsResource(_Resource):
    """Human in the loop: /api/v1/approvals… (`MemoryHub.wait_for_approval` waits)."""

    @operation("POST /api/v1/approvals")
    def request(
        self, *, session_id: str, tool: str, args: JSON, allowed_decisions: Optional[List[Decision]] = None, context: JSON = None,
        expires_in: Optional[int] = None, response_schema: Optional[dict[str, JSON]] = None, idempotency_key: Optional[str] = None,
        required_approvals: Optional[int] = None, escalate_after: Optional[int] = None,
    ) -> Approval:
        """Pending (201), or already decided (200) by a remembered decision (`rule`). With
        `idempotency_key`, asking again with the same key and body (after a crash, or when
        a graph node runs again) answers the same request instead of making another.
        `required_approvals`: different approvers who must approve; `escalate_after`:
        seconds until the workspace's admins hear it is still undecided."""
        json = {"session_id": session_id, "tool": tool, "args": t.jsonable(args), **t.body(
            allowed_decisions=allowed_decisions, context=context, expires_in=expires_in, response_schema=response_schema,
            required_approvals=required_approvals, escalate_after=escalate_after,
        )}
        call = t.call(Approval, "POST", "/api/v1/approvals", json=json)
        if idempotency_key is not None:
            call.idempotency_key = idempotency_key
        return self._hub._run(call)

    @operation("GET /api/v1/approvals/{approval_id}")
    def get(self, approval_id: int, *, wait: Optional[int] = None) -> Approval:
        """With `wait` (1–60 s), held by the hub until decided or that long."""
        timeout = None if not wait else wait + self._hub._timeout
        return self._hub._run(t.call(Approval, "GET", f"/api/v1/approvals/{approval_id}", params=t.query(wait=wait), timeout=timeout))

    @operation("POST /api/v1/approvals/{approval_id}/decision")
    def decide(
        self, approval_id: int, decision: Decision, *, args: JSON = None, reason: Optional[str] = None, remember: Optional[Remember] = None,
        remember_scope: Optional[RuleScope] = None,
    ) -> Approval:
        """Operators with the approver or admin role."""
        return self._hub._run(t.call(Approval, "POST", f"/api/v1/approvals/{approval_id}/decision", json=t.body(
            decision=decision, args=args, reason=reason, remember=remember, remember_scope=remember_scope,
        )))

    @operation("GET /api/v1/approvals")
    def list(
        self, *, status: Optional[str] = None, session_id: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None,
    ) -> Page[Approval]:
        return self._hub._run(t.call(Page[Approval], "GET", "/api/v1/approvals", params=t.query(
            status=status, session_id=session_id, limit=limit, cursor=cursor,
        )))

    @operation("GET /api/v1/approvals")
    def iter(self, *, status: Optional[str] = None, session_id: Optional[str] = None, limit: Optional[int] = None) -> Iterator[Approval]:
        return self._hub._iterate(t.call(Page[Approval], "GET", "/api/v1/approvals", params=t.query(
            status=status, session_id=session_id, limit=limit,
        )))


class WebhooksResource(_Resource):
    """Where the workspace's events go (admins): /api/v1/webhooks…; `verify_webhook` checks
    a delivery on the receiving side."""

    @operation("POST /api/v1/webhooks")
    def create(
        self, *, url: str, events: List[WebhookEvent], format: Optional[WebhookFormat] = None, include_content: Optional[bool] = None,
        description: Optional[str] = None,
    ) -> WebhookCreated:
        """A new endpoint; its `secret` is shown this once."""
        return self._hub._run(t.call(WebhookCreated, "POST", "/api/v1/webhooks", json=t.body(
            url=url, events=events, format=format, include_content=include_content, description=description,
        )))

    @operation("GET /api/v1/webhooks")
    def list(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page[Webhook]:
        return self._hub._run(t.call(Page[Webhook], "GET", "/api/v1/webhooks", params=t.query(limit=limit, cursor=cursor)))

    @operation("GET /api/v1/webhooks")
    def iter(self, *, limit: Optional[int] = None) -> Iterator[Webhook]:
        return self._hub._iterate(t.call(Page[Webhook], "GET", "/api/v1/webhooks", params=t.query(limit=limit)))

    @operation("GET /api/v1/webhooks/{webhook_id}")
    def get(self, webhook_id: int) -> Webhook:
        return self._hub._run(t.call(Webhook, "GET", f"/api/v1/webhooks/{webhook_id}"))

    @operation("PATCH /api/v1/webhooks/{webhook_id}")
    def update(
        self, webhook_id: int, *, url: Optional[str] = None, events: Optional[List[WebhookEvent]] = None, enabled: Optional[bool] = None,
        include_content: Optional[bool] = None, description: Optional[str] = None,
    ) -> Webhook:
        return self._hub._run(t.call(Webhook, "PATCH", f"/api/v1/webhooks/{webhook_id}", json=t.body(
            url=url, events=events, enabled=enabled, include_content=include_content, description=description,
        )))

    @operation("DELETE /api/v1/webhooks/{webhook_id}")
    def delete(self, webhook_id: int) -> None:
        self._hub._run(t.call(None, "DELETE", f"/api/v1/webhooks/{webhook_id}"))

    @operation("POST /api/v1/webhooks/{webhook_id}/rotate-secret")
    def rotate_secret(self, webhook_id: int) -> WebhookSecret:
        """A new secret (shown this once); the old one signs too for 24 h."""
        return self._hub._run(t.call(WebhookSecret, "POST", f"/api/v1/webhooks/{webhook_id}/rotate-secret"))

    @operation("POST /api/v1/webhooks/{webhook_id}/test")
    def test(self, webhook_id: int) -> WebhookDelivery:
        """A `webhook.test` delivery, queued."""
        return self._hub._run(t.call(WebhookDelivery, "POST", f"/api/v1/webhooks/{webhook_id}/test"))

    @operation("GET /api/v1/webhooks/{webhook_id}/deliveries")
    def deliveries(self, webhook_id: int, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page[WebhookDelivery]:
        """The delivery log, newest first."""
        return self._hub._run(t.call(
            Page[WebhookDelivery], "GET", f"/api/v1/webhooks/{webhook_id}/deliveries", params=t.query(limit=limit, cursor=cursor),
        ))

    @operation("GET /api/v1/webhooks/{webhook_id}/deliveries")
    def iter_deliveries(self, webhook_id: int, *, limit: Optional[int] = None) -> Iterator[WebhookDelivery]:
        return self._hub._iterate(t.call(Page[WebhookDelivery], "GET", f"/api/v1/webhooks/{webhook_id}/deliveries", params=t.query(limit=limit)))

    @operation("POST /api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver")
    def redeliver(self, webhook_id: int, delivery_id: int) -> WebhookDelivery:
        """The same message (same `webhook-id`) sent again, as a new delivery."""
        return self._hub._run(t.call(WebhookDelivery, "POST", f"/api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver"))


class NotificationsResource(_Resource):
    """The emails the calling operator gets from the workspace: /api/v1/me/notifications."""

    @operation("GET /api/v1/me/notifications")
    def get(self) -> Notifications:
        return self._hub._run(t.call(Notifications, "GET", "/api/v1/me/notifications"))

    @operation("PUT /api/v1/me/notifications")
    def set(self, *, email: str, events: List[EmailEvent]) -> Notifications:
        return self._hub._run(t.call(Notifications, "PUT", "/api/v1/me/notifications", json={"email": email, "events": events}))


class ApprovalRulesResource(_Resource):
    """Remembered decisions: /api/v1/approval-rules…"""

    @operation("GET /api/v1/approval-rules")
    def list(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page[ApprovalRule]:
        return self._hub._run(t.call(Page[ApprovalRule], "GET", "/api/v1/approval-rules", params=t.query(limit=limit, cursor=cursor)))

    @operation("GET /api/v1/approval-rules")
    def iter(self, *, limit: Optional[int] = None) -> Iterator[ApprovalRule]:
        return self._hub._iterate(t.call(Page[ApprovalRule], "GET", "/api/v1/approval-rules", params=t.query(limit=limit)))

    @operation("DELETE /api/v1/approval-rules/{rule_id}")
    def delete(self, rule_id: int) -> None:
        self._hub._run(t.call(None, "DELETE", f"/api/v1/approval-rules/{rule_id}"))


class KeysResource(_Resource):
    """Agent keys (operators with the admin role): /api/v1/keys…"""

    @operation("POST /api/v1/keys")
    def create(
        self, *, agent: str, store: Optional[str] = None, label: Optional[str] = None, expires_at: Optional[datetime] = None,
    ) -> AgentKeyCreated:
        """A new key; its secret (`key`) is shown this once."""
        return self._hub._run(t.call(AgentKeyCreated, "POST", "/api/v1/keys", json=t.body(
            agent=agent, store=store, label=label, expires_at=expires_at,
        )))

    @operation("GET /api/v1/keys")
    def list(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page[AgentKey]:
        return self._hub._run(t.call(Page[AgentKey], "GET", "/api/v1/keys", params=t.query(limit=limit, cursor=cursor)))

    @operation("GET /api/v1/keys")
    def iter(self, *, limit: Optional[int] = None) -> Iterator[AgentKey]:
        return self._hub._iterate(t.call(Page[AgentKey], "GET", "/api/v1/keys", params=t.query(limit=limit)))

    @operation("DELETE /api/v1/keys/{prefix}")
    def revoke(self, prefix: str) -> None:
        self._hub._run(t.call(None, "DELETE", f"/api/v1/keys/{t.segment(prefix)}"))


class PurgesResource(_Resource):
    """Erasing an end user (operators with the compliance role): /api/v1/purges…"""

    @operation("POST /api/v1/purges")
    def create(self, *, user_id: str, dry_run: Optional[bool] = None, block_new_writes: Optional[bool] = None) -> Purge:
        """Queued (202): follow it with `get`."""
        return self._hub._run(t.call(Purge, "POST", "/api/v1/purges", json=t.body(
            user_id=user_id, dry_run=dry_run, block_new_writes=block_new_writes,
        )))

    @operation("GET /api/v1/purges/{purge_id}")
    def get(self, purge_id: int) -> Purge:
        return self._hub._run(t.call(Purge, "GET", f"/api/v1/purges/{purge_id}"))

    @operation("GET /api/v1/purges")
    def list(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page[Purge]:
        return self._hub._run(t.call(Page[Purge], "GET", "/api/v1/purges", params=t.query(limit=limit, cursor=cursor)))

    @operation("GET /api/v1/purges")
    def iter(self, *, limit: Optional[int] = None) -> Iterator[Purge]:
        return self._hub._iterate(t.call(Page[Purge], "GET", "/api/v1/purges", params=t.query(limit=limit)))

    @operation("POST /api/v1/purges/unblock")
    def unblock(self, *, user_id: str) -> None:
        """Lifts the block on new writes about `user_id` that a purge left."""
        self._hub._run(t.call(None, "POST", "/api/v1/purges/unblock", json={"user_id": user_id}))


class ExportsResource(_Resource):
    """Archives of the workspace or a session (admins), or of one end user's data (compliance): /api/v1/exports…"""

    @operation("POST /api/v1/exports")
    def create(
        self, *, scope: ExportScope, user_id: Optional[str] = None, session_id: Optional[str] = None, with_vectors: Optional[bool] = None,
    ) -> Export:
        """Queued (202): follow it with `get`, then `download`."""
        return self._hub._run(t.call(Export, "POST", "/api/v1/exports", json=t.body(
            scope=scope, user_id=user_id, session_id=session_id, with_vectors=with_vectors,
        )))

    @operation("GET /api/v1/exports/{export_id}")
    def get(self, export_id: str) -> Export:
        return self._hub._run(t.call(Export, "GET", f"/api/v1/exports/{t.segment(export_id)}"))

    @operation("GET /api/v1/exports/{export_id}/download")
    def download(self, export_id: str) -> bytes:
        """The finished archive (a zip), in memory: for a large one, the command line's
        `manage.py export` or a streaming HTTP client."""
        return self._hub._run(Call("GET", f"/api/v1/exports/{t.segment(export_id)}/download", parse=bytes, raw=True))



class ImportsResource(_Resource):
    """Archives, or ChatGPT, Claude and Mem0 exports, loaded into a store and agent (admins): /api/v1/imports…"""

    @operation("POST /api/v1/imports")
    def create(
        self, file: bytes, *, format: ImportFormat, store: str, agent: str, user_id: Optional[str] = None, dry_run: Optional[bool] = None,
        filename: str = "upload",
    ) -> Import:
        """Queued (202) once the file is found good: follow it with `get`. `user_id` names the
        end user of a ChatGPT or Claude export; `dry_run` counts and writes nothing."""
        form = t.query(format=format, store=store, agent=agent, user_id=user_id, dry_run=dry_run)
        return self._hub._run(Call("POST", "/api/v1/imports", parse=t.parser(Import), form=form, files={"file": (filename, file)}))

    @operation("GET /api/v1/imports/{import_id}")
    def get(self, import_id: int) -> Import:
        return self._hub._run(t.call(Import, "GET", f"/api/v1/imports/{t.segment(import_id)}"))

class UsageResource(_Resource):
    """What model calls cost, and the monthly budget: /api/v1/usage, /api/v1/settings/budget (admins set it)."""

    @operation("GET /api/v1/usage")
    def get(self, *, group_by: Optional[UsageGroup] = None, from_: Optional[date] = None, to: Optional[date] = None) -> Usage:
        """Days from `from_` (default the 1st of this month) to `to` (default today), UTC;
        an agent sees its own calls, operators the workspace's."""
        return self._hub._run(t.call(Usage, "GET", "/api/v1/usage", params=t.query(group_by=group_by, to=to, **{"from": from_})))

    @operation("GET /api/v1/settings/budget")
    def budget(self) -> Budget:
        return self._hub._run(t.call(Budget, "GET", "/api/v1/settings/budget"))

    @operation("PUT /api/v1/settings/budget")
    def set_budget(self, *, monthly_limit: Optional[float], warn_at: Optional[float] = None) -> Budget:
        """`monthly_limit` None lifts the limit."""
        return self._hub._run(t.call(Budget, "PUT", "/api/v1/settings/budget", json={"monthly_limit": monthly_limit, "warn_at": warn_at}))


class RetentionResource(_Resource):
    """Retention policies: /api/v1/retention."""

    @operation("GET /api/v1/retention")
    def get(self) -> Retention:
        return self._hub._run(t.call(Retention, "GET", "/api/v1/retention"))

    @operation("PUT /api/v1/retention")
    def update(self, *, policies: dict[str, JSON]) -> Retention:
        return self._hub._run(t.call(Retention, "PUT", "/api/v1/retention", json={"policies": t.jsonable(policies)}))


class ReviewResource(_Resource):
    """What waits for a person, and which sources' memories start quarantined: /api/v1/memories/review-queue,
    /api/v1/settings/review (operators; admins change the settings)."""

    @operation("GET /api/v1/memories/review-queue")
    def queue(self, reason: str = "flagged", *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page[Memory]:
        """`reason`: unreviewed, flagged or quarantined; oldest first."""
        return self._hub._run(t.call(Page[Memory], "GET", "/api/v1/memories/review-queue",
                                           params=t.query(reason=reason, limit=limit, cursor=cursor)))

    @operation("GET /api/v1/settings/review")
    def settings(self) -> dict[str, List[str]]:
        return self._hub._run(Call("GET", "/api/v1/settings/review", parse=t.parser(dict[str, List[str]])))

    @operation("PUT /api/v1/settings/review")
    def update_settings(self, *, quarantine_sources: List[str]) -> dict[str, List[str]]:
        """New memories from these sources (tool_call, import…) start quarantined."""
        return self._hub._run(Call("PUT", "/api/v1/settings/review", parse=t.parser(dict[str, List[str]]),
                                         json={"quarantine_sources": quarantine_sources}))


class AuditResource(_Resource):
    """The audit log (operators): /api/v1/audit."""

    @operation("GET /api/v1/audit")
    def list(self, *, action: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page[AuditEntry]:
        return self._hub._run(t.call(Page[AuditEntry], "GET", "/api/v1/audit", params=t.query(action=action, limit=limit, cursor=cursor)))

    @operation("GET /api/v1/audit")
    def iter(self, *, action: Optional[str] = None, limit: Optional[int] = None) -> Iterator[AuditEntry]:
        return self._hub._iterate(t.call(Page[AuditEntry], "GET", "/api/v1/audit", params=t.query(action=action, limit=limit)))


class GraphResource(_Resource):
    """Graph memory: facts as edges, the workspace's rules, neighbours, paths and grounding:
    /api/v1/graph/…"""

    @operation("POST /api/v1/graph/edges")
    def add(
        self, subject: str, predicate: str, object: JSON, *, user_id: str, confidence: Optional[float] = None,
        scope: Optional[Scope] = None, store: Optional[str] = None, source: Optional[Union[Source, dict[str, JSON]]] = None,
    ) -> Memory:
        """`subject —predicate→ object`, stored as the factual memory it is (201). Without a
        `multi` rule for the predicate, a new object supersedes the subject's old one."""
        return self._hub._run(t.call(Memory, "POST", "/api/v1/graph/edges", json=t.body(
            subject=subject, predicate=predicate, object=object, user_id=user_id, confidence=confidence, scope=scope, store=store,
            source=t.source_named(source),
        )))

    @operation("GET /api/v1/graph/rules")
    def rules(self) -> GraphRules:
        return self._hub._run(t.call(GraphRules, "GET", "/api/v1/graph/rules"))

    @operation("PUT /api/v1/graph/rules")
    def set_rules(self, rules: List[Union[GraphRule, dict[str, JSON]]]) -> GraphRules:
        """Replace the workspace's rules (admins): transitive, symmetric, inverse (naming
        `inverse`) or multi, per predicate."""
        return self._hub._run(t.call(GraphRules, "PUT", "/api/v1/graph/rules", json={"rules": t.jsonable(rules)}))

    @operation("GET /api/v1/graph/neighbors")
    def neighbors(
        self, entity: str, *, depth: Optional[int] = None, predicates: Optional[List[str]] = None, user_id: Optional[str] = None,
        as_of: Optional[datetime] = None, limit: Optional[int] = None, cursor: Optional[str] = None,
    ) -> Page[GraphEdge]:
        """The edges within `depth` (1–3) facts of `entity`, nearest first, with the ones the rules infer."""
        return self._hub._run(t.call(Page[GraphEdge], "GET", "/api/v1/graph/neighbors", params=t.query(
            entity=entity, depth=depth, predicate=predicates, user_id=user_id, as_of=as_of, limit=limit, cursor=cursor,
        )))

    @operation("GET /api/v1/graph/path")
    def path(
        self, source: str, to: str, *, max_depth: Optional[int] = None, user_id: Optional[str] = None, as_of: Optional[datetime] = None,
    ) -> GraphPath:
        """A shortest path of facts from `source` to `to`; NotFound (NO_PATH) if none within `max_depth`."""
        params = t.query(to=to, max_depth=max_depth, user_id=user_id, as_of=as_of)
        return self._hub._run(t.call(GraphPath, "GET", "/api/v1/graph/path", params={"from": source, **params}))

    @operation("POST /api/v1/graph/grounding")
    def grounding(
        self, text: str, *, user_id: Optional[str] = None, limit: Optional[int] = None, as_of: Optional[datetime] = None,
    ) -> Grounding:
        """The facts most relevant to `text` (the entities it names, their neighbourhood, the
        rules' closure), best first, and a system message stating them."""
        return self._hub._run(t.call(Grounding, "POST", "/api/v1/graph/grounding", json=t.body(
            text=text, user_id=user_id, limit=limit, as_of=as_of,
        )))


def _session(session_id: str, *parts: Union[str, int]) -> str:
    return "/".join(["/api/v1/sessions", t.segment(session_id), *(t.segment(part) for part in parts)])


class MemoryHub:
    """The MemoryHub API. `base_url` is the hub's address (http://127.0.0.1:8000),
    `api_key` an agent or operator key. Calls are grouped by resource
    (`hub.memories.create(...)`, `hub.sessions.append_message(...)`); every call is
    retried per `retry` (RetryPolicy) and every write carries an Idempotency-Key."""

    resources: ClassVar[dict[str, type[_Resource]]] = {
        "memories": MemoriesResource, "items": ItemsResource, "sessions": SessionsResource, "plans": PlansResource, "tool_calls": ToolCallsResource,
        "checkpoints": CheckpointsResource, "episodes": EpisodesResource, "approvals": ApprovalsResource, "approval_rules": ApprovalRulesResource,
        "keys": KeysResource, "purges": PurgesResource, "exports": ExportsResource, "imports": ImportsResource, "usage": UsageResource, "retention": RetentionResource, "review": ReviewResource, "audit": AuditResource,
        "graph_checkpoints": GraphCheckpointsResource, "graph": GraphResource, "webhooks": WebhooksResource,
        "notifications": NotificationsResource,
    }

    def __init__(
        self, *, base_url: str, api_key: str, timeout: float = 30.0, retry: Optional[RetryPolicy] = None,
        headers: Optional[dict[str, str]] = None,
    ) -> None:
        self._timeout = timeout
        self._retry = retry or RetryPolicy()
        self._http = httpx.Client(
            base_url=base_url.rstrip("/"), timeout=timeout,
            headers={"Authorization": t.authorization(api_key), "User-Agent": t.USER_AGENT, "Accept": "application/json", **(headers or {})},
        )
        self.memories = MemoriesResource(self)
        self.items = ItemsResource(self)
        self.sessions = SessionsResource(self)
        self.plans = PlansResource(self)
        self.tool_calls = ToolCallsResource(self)
        self.checkpoints = CheckpointsResource(self)
        self.episodes = EpisodesResource(self)
        self.approvals = ApprovalsResource(self)
        self.approval_rules = ApprovalRulesResource(self)
        self.keys = KeysResource(self)
        self.purges = PurgesResource(self)
        self.exports = ExportsResource(self)
        self.imports = ImportsResource(self)
        self.usage = UsageResource(self)
        self.retention = RetentionResource(self)
        self.review = ReviewResource(self)
        self.audit = AuditResource(self)
        self.graph_checkpoints = GraphCheckpointsResource(self)
        self.graph = GraphResource(self)
        self.webhooks = WebhooksResource(self)
        self.notifications = NotificationsResource(self)

    def __enter__(self) -> MemoryHub:
        return self

    def __exit__(self, kind: Optional[type[BaseException]], error: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    @operation("GET /api/v1/me")
    def me(self) -> Me:
        """Who the key is: an agent (with its stores) or an operator (with a role)."""
        return self._run(t.call(Me, "GET", "/api/v1/me"))

    def wait_for_approval(self, approval_id: int, *, timeout: float = 300.0) -> Approval:
        """The approval once decided (approved, edited, rejected, suspended or expired),
        or still pending when `timeout` seconds passed: long polls of at most 60 s each."""
        deadline = time.monotonic() + timeout
        while True:
            approval = self.approvals.get(approval_id, wait=t.approval_wait(deadline - time.monotonic()))
            if approval.decided or time.monotonic() >= deadline:
                return approval

    @operation("GET /api/v1/sessions/{session_id}/events", "GET /api/v1/events")
    def stream_events(
        self, session_id: Optional[str] = None, *, last_event_id: Optional[int] = None, kinds: Optional[List[str]] = None,
        agent: Optional[str] = None, filter_session_id: Optional[str] = None,
    ) -> Iterator[Event]:
        """The live feed: a session's events, or without `session_id` the workspace's
        (operators; `agent` and `filter_session_id` narrow it). Starts after
        `last_event_id` if given; a dropped connection is reopened with Last-Event-ID, so
        no event is missed or repeated. Runs until the caller stops iterating, or the hub
        ends the stream for good (`event: end`: the key was revoked or expired)."""
        path, params = t.events_call(session_id=session_id, kinds=kinds, agent=agent, filter_session_id=filter_session_id)
        state = t.StreamState(self._retry, last_event_id)
        while True:
            try:
                with self._http.stream(
                    "GET", path, params=params, headers=t.stream_headers(state.last_event_id), timeout=t.STREAM_TIMEOUT,
                ) as response:
                    if response.status_code != 200:
                        response.read()
                        delay = state.after_refusal(response)
                    else:
                        decoder = t.SSEDecoder()
                        for line in response.iter_lines():
                            event = decoder.feed(line)
                            if event is not None and event.kind == t.END_EVENT:
                                return  # the key was revoked or expired: reconnecting would be refused
                            if event is not None:
                                state.seen(event)
                                yield event
                        delay = state.after_drop(None)
            except httpx.TransportError as error:
                delay = state.after_drop(error)
            time.sleep(delay)

    def _run(self, call: Call[T]) -> T:
        attempts = t.Attempts(call, self._retry)
        while True:
            try:
                response = self._http.request(**call.request())
            except httpx.TransportError as error:
                time.sleep(attempts.after_error(error))
                continue
            delay = attempts.after_response(response)
            if delay is None:
                return attempts.result(response)
            time.sleep(delay)

    def _iterate(self, call: Call[Page[T]]) -> Iterator[T]:
        while True:
            page = self._run(call)
            for item in page.results:
                yield item
            if not page.next:
                return
            call = t.next_page(call, page.next)
