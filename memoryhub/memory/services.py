"""Writes of long-term memory."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from django.apps import apps
from django.db import IntegrityError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from memoryhub.core import tasking
from memoryhub.core.audit import audit_record
from memoryhub.core.errors import ApplicationError, Conflict, Forbidden, NotFound
from memoryhub.core.models import Agent, Membership, Role, Store, Workspace
from memoryhub.core.selectors import Principal, agent_actor, operator_actor
from memoryhub.memory.embeddings import checked_embedding, get_provider
from memoryhub.memory.duplicates import Lookup, Probe, Similar, batch_lookup, run_lookup, similar_entries, similar_lookup, similar_ranked
from memoryhub.memory.models import (
    Change, MemoryDuplicate, MemoryEntry, MemoryRevision, MemoryType, OnDuplicate, Review, Scope, SourceKind,
)
from memoryhub.memory.selectors import entry_get, multi_predicates
from memoryhub.memory.typed_data import fact_key, validate_data
from memoryhub.memory.vector_index import vector_connection
from memoryhub.privacy.redaction import redactor
from memoryhub.privacy.selectors import working_memory_ttl
from memoryhub.privacy.services import ensure_none_blocked
from memoryhub.timeline.services import event_record
from memoryhub.usage import metering


@dataclass(frozen=True)
class Source:
    """Where a memory came from: `kind` (SourceKind) and what names it."""

    kind: str = SourceKind.API
    session_id: str | None = None
    seq: int | None = None
    call_id: str | None = None
    episode_id: int | None = None
    import_id: int | None = None

    @classmethod
    def named(cls, *, session_id: str | None = None, seq: int | None = None, call_id: str | None = None,
              episode_id: int | None = None) -> Source:
        """The source an agent names: {session_id, seq}, {session_id, call_id} or {episode_id}."""
        if episode_id is not None and session_id is None and seq is None and call_id is None:
            return cls(kind=SourceKind.EPISODE, episode_id=episode_id)
        if session_id is not None and seq is not None and call_id is None and episode_id is None:
            return cls(kind=SourceKind.MESSAGE, session_id=session_id, seq=seq)
        if session_id is not None and call_id is not None and seq is None and episode_id is None:
            return cls(kind=SourceKind.TOOL_CALL, session_id=session_id, call_id=call_id)
        raise ApplicationError(
            "source names one thing: {session_id, seq} (a message), {session_id, call_id} (a tool call) or {episode_id}.",
            code="VALIDATION_ERROR",
        )

    def columns(self) -> dict[str, Any]:
        return {
            "source_kind": self.kind, "source_session_id": self.session_id, "source_seq": self.seq, "source_call_id": self.call_id,
            "source_episode_id": self.episode_id, "source_import_id": self.import_id,
        }


@dataclass
class MemoryInput:
    """One entry to write, as an agent sent it (shapes already checked by the API)."""

    content: str
    user_id: str
    scope: str = Scope.AGENT
    store: str | None = None
    memory_type: str = MemoryType.NOTE
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    data: dict[str, Any] | None = None
    key: str | None = None
    ttl_seconds: int | None = None
    expires_at: datetime | None = None
    embedding: list[float] | None = None
    source: Source = field(default_factory=Source)


@dataclass
class MemoryChanges:
    content: str | None = None
    tags: list[str] | None = None
    metadata: dict[str, Any] | None = None
    data: dict[str, Any] | None = None
    ttl_seconds: int | None = None
    expires_at: datetime | None = None
    embedding: list[float] | None = None


@dataclass
class Written:
    """What a write did with one item: the entry it created, updated or found; whether
    that entry was a duplicate the caller could already see (skipped or updated); the
    entries like it (a kept item's)."""

    entry: MemoryEntry
    created: bool
    duplicate: bool = False
    similar: list[Similar] = field(default_factory=list)


def search_extra_text(tags: list[str], moment: datetime) -> str:
    """Indexed beside the content: tags, and the date in words, so that questions that
    name a date ("in May 2023", "on Tuesday") can match by keyword."""
    return " ".join([*tags, moment.strftime("%Y-%m-%d %B %Y %A")])


def _resolve_store(agent: Agent, name: str | None, stores: list[Store]) -> Store:
    if name is None:
        if len(stores) == 1:
            return stores[0]
        default = next((s for s in stores if s.name == "default"), None)
        if default is not None:
            return default
        raise ApplicationError(
            "This agent is attached to several stores: say which one in `store`.",
            code="STORE_REQUIRED",
            details={"stores": [s.name for s in stores]},
        )
    store = next((s for s in stores if s.name == name), None)
    if store is None:
        # A store the agent is not attached to cannot be written, whether or not it exists.
        raise ApplicationError(
            f"This agent is not attached to a store named {name!r}.", code="STORE_NOT_ATTACHED", details={"store": name}
        )
    return store


def _expiry(
    memory_type: str, ttl_seconds: int | None, expires_at: datetime | None, now: datetime, working_ttl: Callable[[], timedelta]
) -> datetime | None:
    """`working_ttl` is asked only for a working memory given no expiry (it reads the
    workspace's retention policy)."""
    if ttl_seconds is not None and expires_at is not None:
        raise ApplicationError("Give ttl_seconds or expires_at, not both.", code="INVALID_EXPIRY")
    if ttl_seconds is not None:
        return now + timedelta(seconds=ttl_seconds)
    if expires_at is not None:
        if expires_at <= now:
            raise ApplicationError("expires_at must be in the future.", code="INVALID_EXPIRY")
        return expires_at
    if memory_type == MemoryType.WORKING:
        return now + working_ttl()
    return None


def _embed_all(contents: list[str], given: list[list[float] | None]) -> tuple[np.ndarray, str, int]:
    """Vectors for every item, as the rows of one float32 matrix (what COPY sends and the
    duplicate lookup compares, converted from lists once): the agent's own where given,
    the model's (one call for the whole batch) elsewhere."""
    provider = get_provider()
    missing = [i for i, vector in enumerate(given) if vector is None]
    computed = provider.embed([contents[i] for i in missing]) if missing else []
    by_index = dict(zip(missing, computed, strict=True))
    vectors = [by_index[i] if vector is None else checked_embedding(vector, provider.dimensions) for i, vector in enumerate(given)]
    return np.asarray(vectors, dtype=np.float32).reshape(len(given), provider.dimensions), provider.model_id, provider.dimensions


def _kept(workspace: Workspace) -> Callable[[str], str]:
    """Memories as the workspace keeps them; applied before embedding, so what is
    redacted is never in a vector either."""
    return redactor(workspace_id=workspace.pk, enabled=workspace.redact_memories)


def _kept_data(memory_type: str, data: dict[str, Any], kept: Callable[[str], str]) -> dict[str, Any]:
    """A fact's names as the workspace keeps text: its content says them again, and the
    graph shows them (docs/graph.md), so they are redacted like the content."""
    if memory_type != MemoryType.FACTUAL:
        return data
    return {**data, **{name: kept(data[name]) for name in ("subject", "predicate", "object") if isinstance(data[name], str)}}


def memory_write(*, agent: Agent, items: list[MemoryInput], on_duplicate: str | None = OnDuplicate.KEEP) -> list[Written]:
    """Create (or, for an existing key, update) entries, all or nothing.

    Each item is compared with what the agent can already see (memoryhub.memory.duplicates;
    not keyed writes or facts, which have their own rules): `on_duplicate` keep writes it
    and lists the similar entries (and queues the pair for review), skip answers the
    existing entry, update makes the new content its next revision. None compares
    nothing (loaders of generated data). Each entry is searchable, by keyword and by
    meaning, as soon as this returns: the vectors are computed before the commit.
    """
    if on_duplicate is not None and on_duplicate not in OnDuplicate.values:
        raise ApplicationError(
            f"Unknown on_duplicate {on_duplicate!r}.", code="VALIDATION_ERROR", details={"on_duplicate": list(OnDuplicate.values)},
        )
    ensure_none_blocked(workspace_id=agent.workspace_id, user_ids={item.user_id for item in items})
    _ensure_sources_exist(agent=agent, sources=[item.source for item in items])
    held_back = set(agent.workspace.quarantine_sources)  # sources whose memories wait for a person
    now = timezone.now()
    working_ttl = functools.cache(functools.partial(working_memory_ttl, workspace_id=agent.workspace_id))
    multi = functools.cache(functools.partial(multi_predicates, workspace_id=agent.workspace_id))  # read for facts only
    stores = list(agent.stores.all())
    kept = _kept(agent.workspace)
    for item in items:
        item.content = kept(item.content)
    # Keyed writes and facts have their own rules (a fact's key is its subject and predicate);
    # the others are copied in at once, and compared when the caller asks.
    plain_indexes = [index for index, item in enumerate(items) if item.key is None and item.memory_type != MemoryType.FACTUAL]
    compared = [] if on_duplicate is None else plain_indexes
    probes = [Probe(user_id=items[i].user_id, scope=items[i].scope, memory_type=items[i].memory_type, content=items[i].content) for i in compared]
    provider = get_provider()
    # A kept batch's answer changes nothing written, so its lookup reads while the batch is
    # checked, embedded and built (half its time in `bench duplicates`); skip and update
    # must hold their users' locks first, and a single create is looked up by its own insert.
    early = batch_lookup(
        agent=agent, stores=stores, probes=probes, model_id=provider.model_id, dimensions=provider.dimensions, background=True,
    ) if on_duplicate == OnDuplicate.KEEP and len(compared) > 1 else None
    try:
        prepared: list[dict[str, Any]] = []
        for item in items:
            if item.scope not in Scope.values:
                raise ApplicationError(f"Unknown scope {item.scope!r}.", code="INVALID_SCOPE", details={"scopes": Scope.values})
            if item.memory_type not in MemoryType.values:
                raise ApplicationError(
                    f"Unknown memory_type {item.memory_type!r}.", code="INVALID_MEMORY_TYPE", details={"memory_types": MemoryType.values}
                )
            data = _kept_data(item.memory_type, validate_data(item.memory_type, item.data), kept)
            prepared.append(
                {
                    "store": _resolve_store(agent, item.store, stores),
                    "data": data,
                    "fact_key": fact_key(item.memory_type, data, multi=multi()) if item.memory_type == MemoryType.FACTUAL else None,
                    "expires_at": _expiry(item.memory_type, item.ttl_seconds, item.expires_at, now, working_ttl),
                }
            )
        with metering.about_user(items[0].user_id if len({item.user_id for item in items}) == 1 else None):
            vectors, model_id, dimensions = _embed_all([i.content for i in items], [i.embedding for i in items])
        fields = [
            {
                "workspace_id": agent.workspace_id,
                "agent": agent,
                "user_id": item.user_id,
                "scope": item.scope,
                "memory_type": item.memory_type,
                "content": item.content,
                "tags": item.tags,
                "metadata": item.metadata,
                "data": prep["data"],
                "expires_at": prep["expires_at"],
                "embedding": vector,
                "embedding_model": model_id,
                "embedding_dim": dimensions,
                "search_extra": search_extra_text(item.tags, now),
                "store": prep["store"],
                "fact_key": prep["fact_key"],
                "created_at": now,
                "changed_by": agent_actor(agent),
                "review": Review.QUARANTINED if item.source.kind in held_back else Review.UNREVIEWED,
                **item.source.columns(),
            }
            for item, prep, vector in zip(items, prepared, vectors, strict=True)
        ]
        plain_entries = {index: MemoryEntry(**fields[index]) for index in plain_indexes}
    finally:
        if early is not None:
            early.wait()  # the connection is the transaction's again

    results: list[Written | None] = [None] * len(items)
    plain: list[tuple[int, MemoryEntry]] = []
    compared_vectors = vectors[compared]
    with transaction.atomic():
        if on_duplicate in (OnDuplicate.SKIP, OnDuplicate.UPDATE) and compared:
            _lock_users_against_duplicates(agent=agent, user_ids={items[i].user_id for i in compared})
        # One entry kept whatever it repeats (the usual create) is written and compared in one statement.
        written_with_lookup = on_duplicate == OnDuplicate.KEEP and len(items) == 1 and len(compared) == 1
        similar: dict[int, list[Similar]] = {}
        if not written_with_lookup:
            found_by_probe = early.similar(compared_vectors) if early is not None else similar_entries(
                agent=agent, stores=stores, probes=probes, vectors=compared_vectors, model_id=model_id, dimensions=dimensions,
            )
            similar = dict(zip(compared, found_by_probe, strict=True))
        originals = MemoryEntry.objects.select_related("agent", "store").in_bulk(
            {like.id for found in similar.values() for like in found} if on_duplicate != OnDuplicate.KEEP else set(),
        )
        for index, item in enumerate(items):
            found = similar.get(index, [])
            if found and on_duplicate == OnDuplicate.SKIP:
                results[index] = Written(entry=originals[found[0].id], created=False, duplicate=True, similar=found)
                continue
            # An agent changes only its own entries: a duplicate another agent wrote is kept beside.
            own = next((originals[like.id] for like in found if originals[like.id].agent_id == agent.pk), None) if (
                on_duplicate == OnDuplicate.UPDATE) else None
            if own is not None:
                entry = _duplicate_updated(agent=agent, entry=own, item=item, vector=vectors[index], model_id=model_id)
                results[index] = Written(entry=entry, created=False, duplicate=True, similar=found)
                continue
            if index in plain_entries:
                plain.append((index, plain_entries[index]))
            else:
                entry, created = _write_keyed_or_fact(agent=agent, key=item.key, fields=fields[index], now=now)
                results[index] = Written(entry=entry, created=created)
        if written_with_lookup and plain:
            [(index, entry)] = plain
            lookup = similar_lookup(
                agent=agent, stores=stores, probe=probes[0], embedding=vectors[index], model_id=model_id, dimensions=dimensions,
            )
            similar[index] = _insert_one_finding_similar(entry=entry, lookup=lookup, probe=probes[0])
        else:
            _copy_insert([entry for _, entry in plain])
        for index, entry in plain:
            results[index] = Written(entry=entry, created=True, similar=similar.get(index, []))
        MemoryDuplicate.objects.bulk_create([
            MemoryDuplicate(workspace_id=agent.workspace_id, user_id=entry.user_id, entry=entry, duplicate_of_id=like.id, score=like.score)
            for index, entry in plain for like in similar.get(index, [])
        ])
        _index_soon()
    return [r for r in results if r is not None]


def _lock_users_against_duplicates(*, agent: Agent, user_ids: set[str]) -> None:
    """Two writers of the same memory that each look for it first must not both miss the
    other's: writes that skip or update duplicates take turns per user (until commit),
    in one order, so two batches cannot wait for each other."""
    keys = sorted(f"memory-duplicates:{agent.workspace_id}:{user_id}" for user_id in user_ids)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM (SELECT unnest(%s::text[]) AS k ORDER BY 1) AS keys", [keys])


def _duplicate_updated(*, agent: Agent, entry: MemoryEntry, item: MemoryInput, vector: np.ndarray, model_id: str) -> MemoryEntry:
    """A duplicate's next revision takes the new text and vector; its tags gain the new
    ones and its metadata the new keys."""
    tags = list(dict.fromkeys([*entry.tags, *item.tags]))
    updates = {
        "content": item.content, "tags": tags, "metadata": {**entry.metadata, **item.metadata}, "embedding": vector,
        "embedding_model": model_id, "embedding_dim": len(vector), "vector_indexed": False,
        "search_extra": search_extra_text(tags, entry.created_at),
    }
    _revision_next(entry=entry, actor=agent_actor(agent), change=Change.UPDATE, reason="the same memory written again", updates=updates)
    _memory_event(principal=Principal(kind="agent", workspace=agent.workspace, agent=agent), entry=entry, action="changed")
    entry.refresh_from_db()
    return entry


def _index_soon() -> None:
    tasking.enqueue("memoryhub.memory.tasks.index_vectors")


COPY_COLUMNS = (
    "id", "workspace_id", "user_id", "created_at", "updated_at", "store_id", "agent_id", "scope", "memory_type",
    "content", "tags", "metadata", "data", "version", "expires_at", "embedding", "embedding_model", "embedding_dim",
    "search_extra", "changed_by", "source_kind", "source_session_id", "source_seq", "source_call_id", "source_episode_id",
    "source_import_id", "review",
)
COPY_TYPES = (
    "uuid", "int8", "varchar", "timestamptz", "timestamptz", "int8", "int8", "varchar", "varchar", "text", "varchar[]",
    "jsonb", "jsonb", "int4", "timestamptz", "vector", "varchar", "int4", "text", "varchar", "varchar", "varchar", "int8",
    "varchar", "int8", "int8", "varchar",
)


def _copy_insert(entries: list[MemoryEntry]) -> None:
    """The common case (no key, not a fact) through binary COPY: several times faster
    than a multi-row INSERT built by the ORM, whose cost is mostly turning vectors into
    SQL text. Runs on the transaction's own connection, so it commits or rolls back
    with everything else."""
    if not entries:
        return
    with vector_connection().cursor() as cursor, cursor.copy(
        f"COPY {MemoryEntry._meta.db_table} ({', '.join(COPY_COLUMNS)}) FROM STDIN WITH (FORMAT BINARY)"
    ) as copy:
        copy.set_types(list(COPY_TYPES))
        for e in entries:
            copy.write_row(_copy_row(e))
    _inserted(entries)


def _copy_row(e: MemoryEntry) -> tuple[Any, ...]:
    from psycopg.types.json import Jsonb

    return (
        e.pk, e.workspace_id, e.user_id, e.created_at, e.created_at, e.store_id, e.agent_id, e.scope, e.memory_type,
        e.content, e.tags, Jsonb(e.metadata), Jsonb(e.data), e.version, e.expires_at, np.asarray(e.embedding, dtype=np.float32),
        e.embedding_model, e.embedding_dim, e.search_extra, e.changed_by, e.source_kind, e.source_session_id, e.source_seq,
        e.source_call_id, e.source_episode_id, e.source_import_id, e.review,
    )


def _inserted(entries: list[MemoryEntry]) -> None:
    """Entries written behind the ORM's back, as the ORM leaves them after saving."""
    for e in entries:
        e.updated_at = e.created_at
        e._state.adding = False
        e._state.db = "default"


def _insert_one_finding_similar(*, entry: MemoryEntry, lookup: Lookup, probe: Probe) -> list[Similar]:
    """A single create kept whatever it repeats: the entry is written by the statement that
    looks for its duplicates (which reads the table as it was before the insert), one round
    trip instead of a lookup and then a COPY (`bench duplicates`)."""
    values = ", ".join(f"%(column_{n})s::{kind}" for n, kind in enumerate(COPY_TYPES))
    insert = f"INSERT INTO {MemoryEntry._meta.db_table} ({', '.join(COPY_COLUMNS)}) VALUES ({values})"
    columns = {f"column_{n}": value for n, value in enumerate(_copy_row(entry))}
    rows = run_lookup(f"WITH written AS ({insert}) {lookup.statement}", lookup.params | columns)
    _inserted([entry])
    return similar_ranked([probe], rows)[0]


def _write_keyed_or_fact(*, agent: Agent, key: str | None, fields: dict[str, Any], now: datetime) -> tuple[MemoryEntry, bool]:
    if key is not None:
        existing = MemoryEntry.objects.select_for_update().filter(agent=agent, key=key, namespace__isnull=True).first()
        if existing is not None:
            return _overwrite(existing, fields), False
    for attempt in range(3):
        try:
            with transaction.atomic():
                return _insert_superseding(key=key, fields=fields, now=now), True
        except IntegrityError:
            # Another writer made the same key or the same current fact first; the next
            # round sees its row (and supersedes it, or updates it).
            if attempt == 2:
                raise Conflict("Too many concurrent writes of this entry; retry.", code="WRITE_CONFLICT") from None
            if key is not None:
                existing = MemoryEntry.objects.select_for_update().filter(agent=agent, key=key, namespace__isnull=True).first()
                if existing is not None:
                    return _overwrite(existing, fields), False
    raise AssertionError("unreachable")


def _insert_superseding(*, key: str | None, fields: dict[str, Any], now: datetime) -> MemoryEntry:
    previous = None
    if fields["fact_key"] is not None:
        previous = (
            MemoryEntry.objects.select_for_update()
            .filter(
                agent=fields["agent"], store=fields["store"], user_id=fields["user_id"], fact_key=fields["fact_key"], invalidated_at__isnull=True
            )
            .first()
        )
        if previous is not None:
            MemoryEntry.objects.filter(pk=previous.pk).update(invalidated_at=now)
    entry = MemoryEntry.objects.create(key=key, **fields)
    if previous is not None:
        MemoryEntry.objects.filter(pk=previous.pk).update(superseded_by=entry)
    return entry


def _overwrite(existing: MemoryEntry, fields: dict[str, Any]) -> MemoryEntry:
    """A write to an existing key: the entry's next revision (`existing` is locked)."""
    _revision_keep(existing)
    for name in ("user_id", "scope", "memory_type", "content", "tags", "metadata", "data", "expires_at", "embedding",
                 "embedding_model", "embedding_dim", "search_extra", "store", "fact_key", "changed_by"):
        setattr(existing, name, fields[name])
    existing.change, existing.change_reason = Change.UPDATE, ""
    existing.version += 1
    existing.invalidated_at = None
    existing.vector_indexed = False  # a new vector: searched exactly until re-indexed
    existing.save()
    return existing


def ensure_may_change(*, principal: Principal, entry: MemoryEntry) -> None:
    """Writes follow ownership, not visibility: a shared or global entry is readable by
    other agents, changed only by the agent that wrote it, or by an operator who may
    (approver or admin: an operator's edit is a reviewed correction)."""
    _ensure_owner_or(principal=principal, entry=entry, roles=(Role.APPROVER,), needs="Changing memories needs the approver or admin role.")


def _ensure_may_delete(*, principal: Principal, entry: MemoryEntry) -> None:
    """The agent that wrote it, or an operator who erases (admin, compliance)."""
    _ensure_owner_or(
        principal=principal, entry=entry, roles=(Role.ADMIN, Role.COMPLIANCE), needs="Deleting memories needs the admin or compliance role.",
    )


def _ensure_owner_or(*, principal: Principal, entry: MemoryEntry, roles: tuple[str, ...], needs: str) -> None:
    if principal.is_agent:
        if principal.agent.pk != entry.agent_id:
            raise Forbidden("Only the agent that wrote this entry may change or delete it.", code="NOT_OWNER")
    elif not any(principal.allows(role) for role in roles):  # admins allow every role
        raise Forbidden(needs, code="NOT_OWNER")


def _memory_event(
    *, principal: Principal, entry: MemoryEntry, action: str, details: dict[str, Any] | None = None, audit_agents: bool = False,
) -> None:
    """Every change and deletion of a memory is on the timeline, and in the audit log
    when an operator made it (or an agent, for review actions), under the real actor."""
    event_record(
        workspace=entry.workspace, kind="memory", summary=f"Memory {entry.pk} {action} by {principal.actor}.", actor=principal.actor,
        user_id=entry.user_id, ref={"type": "memory", "id": str(entry.pk), "action": action},
    )
    if principal.is_operator or audit_agents:
        audit_record(action=f"memory_{action}", actor=principal.actor, workspace=entry.workspace, target=f"memory:{entry.pk}", details=details)


def _revision_next(
    *, entry: MemoryEntry, actor: str, change: str, reason: str, updates: dict[str, Any], expected_version: int | None = None,
) -> None:
    """Make `updates` the entry's next revision, in the caller's transaction: the row is
    locked, its current revision kept, then replaced; with `expected_version`, refused
    (409) if someone wrote since."""
    current = MemoryEntry.objects.select_for_update().filter(pk=entry.pk).first()
    if current is None or (expected_version is not None and current.version != expected_version):
        raise Conflict(
            "This entry changed since you read it.", code="VERSION_CONFLICT", details={"current_version": current.version if current else None},
        )
    _revision_keep(current)
    MemoryEntry.objects.filter(pk=entry.pk).update(
        **updates, version=F("version") + 1, updated_at=timezone.now(), change=change, changed_by=actor, change_reason=reason,
    )


def _revision_keep(entry: MemoryEntry) -> None:
    """Keep the entry's current revision before it is replaced (the caller holds the
    row's lock). A second keeper of the same revision hits the unique constraint."""
    MemoryRevision.objects.create(
        workspace_id=entry.workspace_id, user_id=entry.user_id, entry=entry, revision=entry.version, content=entry.content,
        tags=entry.tags, metadata=entry.metadata, data=entry.data, change=entry.change, changed_by=entry.changed_by,
        changed_at=entry.updated_at, reason=entry.change_reason,
    )


def _ensure_sources_exist(*, agent: Agent, sources: list[Source]) -> None:
    """What each source names exists in the agent's workspace and is the agent's own (its
    session's message or tool call, its episode): one query per kind named, whatever the
    batch. Looked up by name: sessions, tool calls and episodes are layers above memory."""
    wanted: dict[str, set[tuple[Any, ...]]] = {}
    for source in sources:
        if source.kind == SourceKind.MESSAGE:
            wanted.setdefault(source.kind, set()).add((source.session_id, source.seq))
        elif source.kind == SourceKind.TOOL_CALL:
            wanted.setdefault(source.kind, set()).add((source.session_id, source.call_id))
        elif source.kind == SourceKind.EPISODE:
            wanted.setdefault(source.kind, set()).add((source.episode_id,))
    for kind, keys in wanted.items():
        if kind == SourceKind.EPISODE:
            found = {(pk,) for pk in apps.get_model("episodes", "Episode").objects.filter(
                workspace_id=agent.workspace_id, agent=agent, pk__in=[k[0] for k in keys]).values_list("pk", flat=True)}
        else:
            model, field = (apps.get_model("conversations", "Message"), "seq") if kind == SourceKind.MESSAGE else (
                apps.get_model("tools", "ToolCall"), "call_id")
            condition = Q()
            for session_id, value in keys:
                condition |= Q(session__session_id=session_id, **{field: value})
            found = set(model.objects.filter(condition, workspace_id=agent.workspace_id, session__agent=agent)
                        .values_list("session__session_id", field))
        if missing := sorted(keys - found, key=str):
            raise ApplicationError(
                f"The {kind.replace('_', ' ')} named as source does not exist or is not this agent's.", code="SOURCE_NOT_FOUND",
                status=422, details={"kind": kind, "missing": [list(m) for m in missing[:10]]},
            )


def memory_update(
    *, principal: Principal, entry: MemoryEntry, changes: MemoryChanges, expected_version: int | None, reason: str = "",
    change: str | None = None,
) -> MemoryEntry:
    """Apply `changes` as the entry's next revision (an agent's update, an operator's
    edit); with `expected_version`, refuse (409) if someone wrote since."""
    ensure_may_change(principal=principal, entry=entry)
    if principal.is_operator and not reason.strip():
        raise ApplicationError("An operator's change needs a reason.", code="VALIDATION_ERROR", details={"reason": ["Required of operators."]})
    change = change or (Change.UPDATE if principal.is_agent else Change.OPERATOR_EDIT)
    now = timezone.now()
    updates: dict[str, Any] = {}
    if changes.content is not None:
        # Every path that stores text redacts first (before the text is embedded).
        updates["content"] = _kept(entry.workspace)(changes.content)
    if changes.tags is not None:
        updates["tags"] = changes.tags
        updates["search_extra"] = search_extra_text(changes.tags, entry.created_at)
    if changes.metadata is not None:
        updates["metadata"] = changes.metadata
    if changes.data is not None:
        updates["data"] = _kept_data(entry.memory_type, validate_data(entry.memory_type, changes.data), _kept(entry.workspace))
        updates["fact_key"] = fact_key(entry.memory_type, updates["data"], multi=multi_predicates(workspace_id=entry.workspace_id))
    if changes.ttl_seconds is not None or changes.expires_at is not None:
        working_ttl = functools.partial(working_memory_ttl, workspace_id=entry.workspace_id)
        updates["expires_at"] = _expiry(entry.memory_type, changes.ttl_seconds, changes.expires_at, now, working_ttl)
    if changes.content is not None or changes.embedding is not None:
        content = updates.get("content", entry.content)
        vectors, model_id, dimensions = _embed_all([content], [changes.embedding])
        updates.update(embedding=vectors[0], embedding_model=model_id, embedding_dim=dimensions, vector_indexed=False)
    if not updates:
        return entry
    try:
        with transaction.atomic():
            _revision_next(entry=entry, actor=principal.actor, change=change, reason=reason, updates=updates, expected_version=expected_version)
            _memory_event(principal=principal, entry=entry, action="changed", details={"change": change, "reason": reason} if reason else None)
    except IntegrityError:
        raise Conflict("Another current fact has this subject and predicate.", code="FACT_CONFLICT") from None
    if "embedding" in updates:
        _index_soon()
    entry.refresh_from_db()
    return entry


def review_settings_set(*, membership: Membership, quarantine_sources: list[str]) -> list[str]:
    """Which sources' new memories start quarantined (admins; audited)."""
    if not membership.allows(Role.ADMIN):
        raise Forbidden("Review settings need the admin role.")
    unknown = sorted(set(quarantine_sources) - set(SourceKind.values))
    if unknown:
        raise ApplicationError(f"Unknown source kinds: {', '.join(unknown)}.", code="VALIDATION_ERROR", details={"kinds": SourceKind.values})
    workspace, after = membership.workspace, sorted(set(quarantine_sources))
    before = sorted(workspace.quarantine_sources)
    if before != after:
        with transaction.atomic():
            Workspace.objects.filter(pk=workspace.pk).update(quarantine_sources=after)
            audit_record(action="review_settings_changed", actor=operator_actor(membership.user), workspace=workspace,
                         details={"quarantine_sources": {"from": before, "to": after}})
        workspace.quarantine_sources = after
    return after


# What each review action makes of an entry's review, and who may take it.
REVIEW_ACTIONS = {"verify": Review.VERIFIED, "flag": Review.FLAGGED, "quarantine": Review.QUARANTINED, "release": Review.UNREVIEWED}


def memory_review(*, principal: Principal, entry: MemoryEntry, action: str, reason: str = "") -> MemoryEntry:
    """A person's (or an agent's) judgement of an entry, as its next revision: agents may
    only flag what they see; approvers and admins verify, flag, quarantine and release.
    Quarantined entries are invisible to agents until verified or released."""
    if action not in REVIEW_ACTIONS:
        raise ApplicationError(f"Unknown review action {action!r}.", code="VALIDATION_ERROR", details={"actions": list(REVIEW_ACTIONS)})
    if principal.is_agent and action != "flag":
        raise Forbidden("Agents may only flag a memory; a person verifies, quarantines and releases.", code="FORBIDDEN")
    if principal.is_operator and not principal.allows(Role.APPROVER):
        raise Forbidden("Reviewing memories needs the approver or admin role.", code="FORBIDDEN")
    with transaction.atomic():
        _revision_next(entry=entry, actor=principal.actor, change=Change.REVIEW, reason=reason or action, updates={"review": REVIEW_ACTIONS[action]})
        _memory_event(principal=principal, entry=entry, action=action, details={"reason": reason} if reason else None, audit_agents=True)
    entry.refresh_from_db()
    return entry


def memory_revert(*, principal: Principal, entry: MemoryEntry, revision: int, reason: str = "") -> MemoryEntry:
    """A new revision equal to an earlier one's content, tags, metadata and data."""
    ensure_may_change(principal=principal, entry=entry)
    if revision == entry.version:
        earlier: Any = entry
    else:
        earlier = MemoryRevision.objects.filter(entry=entry, revision=revision).first()
        if earlier is None:
            raise NotFound(f"This entry has no revision {revision}.", code="REVISION_NOT_FOUND")
    changes = MemoryChanges(content=earlier.content, tags=list(earlier.tags), metadata=dict(earlier.metadata), data=dict(earlier.data) or None)
    return memory_update(
        principal=principal, entry=entry, changes=changes, expected_version=None, change=Change.REVERT,
        reason=reason or f"reverted to revision {revision}",
    )


MAX_MERGED = 100


def ensure_may_merge(*, principal: Principal, entry: MemoryEntry) -> None:
    _ensure_owner_or(principal=principal, entry=entry, roles=(Role.APPROVER,), needs="Merging memories needs the approver or admin role.")


def memory_merge(*, principal: Principal, entry: MemoryEntry, others: list[str], reason: str = "") -> MemoryEntry:
    """Keep `entry`: each of `others` is superseded by it (gone from search, lists and graph
    queries, kept as history), and it gains their tags in a `merge` revision. Approvers
    and admins merge what they see; an agent only entries that are all its own."""
    ids = list(dict.fromkeys(str(other) for other in others))
    if not ids or len(ids) > MAX_MERGED or str(entry.pk) in ids:
        raise ApplicationError(
            f"Name 1 to {MAX_MERGED} other entries to merge into this one (not itself).", code="VALIDATION_ERROR",
            details={"others": [f"1 to {MAX_MERGED} ids other than the kept entry's."]},
        )
    merged = [entry_get(principal=principal, entry_id=other, include_invalidated=False) for other in ids]
    for one in (entry, *merged):
        ensure_may_merge(principal=principal, entry=one)
    if strangers := [str(one.pk) for one in merged if one.user_id != entry.user_id]:
        # A purge of one user must not leave another's memory pointing at what it erased.
        raise ApplicationError(
            "Only entries about the same user merge.", code="VALIDATION_ERROR", details={"others": [f"Not about this user: {', '.join(strangers)}"]},
        )
    tags = list(dict.fromkeys([*entry.tags, *(tag for one in merged for tag in one.tags)]))
    with transaction.atomic():
        superseded = MemoryEntry.objects.filter(pk__in=[one.pk for one in merged], invalidated_at__isnull=True).update(
            superseded_by=entry, invalidated_at=timezone.now(),
        )
        if superseded != len(merged):
            raise Conflict("One of the entries changed since you read it.", code="VERSION_CONFLICT")
        _revision_next(
            entry=entry, actor=principal.actor, change=Change.MERGE, reason=reason or f"merged {len(merged)} duplicate(s)",
            updates={"tags": tags, "search_extra": search_extra_text(tags, entry.created_at)},
        )
        _memory_event(principal=principal, entry=entry, action="merged", details={"others": ids, "reason": reason})
    entry.refresh_from_db()
    return entry


def duplicates_dismiss(*, principal: Principal, entry: MemoryEntry) -> int:
    """A person's "these are not duplicates": the entries written like `entry` leave the
    review queue, all staying as they are (approvers and admins; audited). How many
    pairs were dismissed."""
    if not principal.allows(Role.APPROVER):
        raise Forbidden("Reviewing memories needs the approver or admin role.", code="FORBIDDEN")
    with transaction.atomic():
        dismissed, _ = MemoryDuplicate.objects.filter(workspace=principal.workspace, duplicate_of=entry).delete()
        _memory_event(principal=principal, entry=entry, action="duplicates_dismissed", details={"pairs": dismissed})
    return dismissed


BULK_ACTIONS = ("quarantine", "verify", "tag", "delete")
MAX_BULK = 200


def memories_bulk_apply(*, principal: Principal, entries: list[MemoryEntry], action: str, tag: str = "", reason: str = "") -> int:
    """One operator action over many entries (a search's results), all or none: a review
    action or a tag added is each entry's next revision; deletion needs the admin or
    compliance role. How many entries it changed."""
    if action not in BULK_ACTIONS:
        raise ApplicationError(f"Unknown action {action!r}.", code="VALIDATION_ERROR", details={"actions": list(BULK_ACTIONS)})
    if not entries or len(entries) > MAX_BULK:
        raise ApplicationError(f"Select 1 to {MAX_BULK} memories.", code="VALIDATION_ERROR")
    tag = tag.strip()
    if action == "tag" and not 0 < len(tag) <= 100:
        raise ApplicationError("Name the tag to add (up to 100 characters).", code="VALIDATION_ERROR")
    with transaction.atomic():
        for entry in entries:
            if action == "delete":
                memory_delete(principal=principal, entry=entry)
            elif action == "tag":
                if tag not in entry.tags:
                    memory_update(principal=principal, entry=entry, changes=MemoryChanges(tags=[*entry.tags, tag]), expected_version=None,
                                  reason=reason or f"tagged {tag}")
            else:
                memory_review(principal=principal, entry=entry, action=action, reason=reason)
    return len(entries)


def memory_delete(*, principal: Principal, entry: MemoryEntry) -> None:
    _ensure_may_delete(principal=principal, entry=entry)
    with transaction.atomic():
        _memory_event(principal=principal, entry=entry, action="deleted")
        entry.delete()


def memory_sweep_expired(*, batch_size: int = 5000) -> dict[int, int]:
    """Delete expired entries for real; how many per workspace (the retention job
    records the counts)."""
    now = timezone.now()
    deleted: dict[int, int] = {}
    while True:
        batch = list(MemoryEntry.objects.filter(expires_at__lte=now).values_list("pk", "workspace_id")[:batch_size])
        if not batch:
            break
        with transaction.atomic():
            MemoryEntry.objects.filter(pk__in=[pk for pk, _ in batch], expires_at__lte=now).delete()
        for _, workspace_id in batch:
            deleted[workspace_id] = deleted.get(workspace_id, 0) + 1
    return deleted


def memory_reembed(*, batch_size: int = 256, max_batches: int | None = None) -> int:
    """Move vectors of an older model (or missing vectors) to the current one.

    The HNSW index of a new dimension is made by `migrate` or `manage.py reembed`, not
    here: building it is heavy and must not run inside a periodic job's transaction."""
    provider = get_provider()
    done = 0
    batches = 0
    while max_batches is None or batches < max_batches:
        stale = list(
            MemoryEntry.objects.exclude(embedding_model=provider.model_id, embedding_dim=provider.dimensions)
            .order_by("pk")
            .values_list("pk", "content", "version")[:batch_size]
        )
        if not stale:
            break
        vectors = provider.embed([content for _, content, _ in stale])
        with transaction.atomic():
            for (pk, _, version), vector in zip(stale, vectors, strict=True):
                # Conditional on the version: an entry edited meanwhile keeps its newer vector.
                MemoryEntry.objects.filter(pk=pk, version=version).update(
                    embedding=vector, embedding_model=provider.model_id, embedding_dim=provider.dimensions, vector_indexed=False
                )
        done += len(stale)
        batches += 1
    if done:
        _index_soon()
    return done
