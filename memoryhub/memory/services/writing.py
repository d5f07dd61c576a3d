"""Creating entries: `memory_write`, a batch all or nothing, with duplicates looked for
(memoryhub/memory/duplicates.py), keyed writes and facts superseding, plain entries
copied in (binary COPY)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import numpy as np
from django.apps import apps
from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from memoryhub.core.errors import ApplicationError, Conflict
from memoryhub.core.models import Agent
from memoryhub.core.selectors import Principal, agent_actor
from memoryhub.memory.duplicates import Lookup, Probe, Similar, batch_lookup, run_lookup, similar_entries, similar_lookup, similar_ranked
from memoryhub.memory.embeddings import get_provider
from memoryhub.memory.models import Change, MemoryDuplicate, MemoryEntry, MemoryType, OnDuplicate, SourceKind
from memoryhub.memory.services.changes import memory_event, revision_keep, revision_next
from memoryhub.memory.services.inputs import MemoryInput, Source, Written, search_extra_text
from memoryhub.memory.services.rows import WriteRules, entry_checked, entry_columns, index_soon, store_resolved, vectors_of
from memoryhub.memory.vector_index import vector_connection
from memoryhub.privacy.services import ensure_none_blocked
from memoryhub.usage import metering


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
    rules = WriteRules.of(agent.workspace)
    now = timezone.now()
    stores = list(agent.stores.all())
    for item in items:
        entry_checked(item)  # as sent: redaction may lengthen it, and the limit is the agent's to meet
        item.content = rules.kept(item.content)
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
        columns = [entry_columns(rules=rules, item=item, store=store_resolved(agent, item.store, stores), now=now) for item in items]
        with metering.about_user(items[0].user_id if len({item.user_id for item in items}) == 1 else None):
            vectors, model_id, dimensions = vectors_of([i.content for i in items], [i.embedding for i in items])
        writer = {"workspace_id": agent.workspace_id, "agent": agent, "created_at": now, "changed_by": agent_actor(agent)}
        fields = [
            {**writer, **entry, "embedding": vector, "embedding_model": model_id, "embedding_dim": dimensions}
            for entry, vector in zip(columns, vectors, strict=True)
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
        index_soon()
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
    revision_next(entry=entry, actor=agent_actor(agent), change=Change.UPDATE, reason="the same memory written again", updates=updates)
    memory_event(principal=Principal(kind="agent", workspace=agent.workspace, agent=agent), entry=entry, action="changed")
    entry.refresh_from_db()
    return entry


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
    revision_keep(existing)
    for name in ("user_id", "scope", "memory_type", "content", "tags", "metadata", "data", "expires_at", "embedding",
                 "embedding_model", "embedding_dim", "search_extra", "store", "fact_key", "changed_by"):
        setattr(existing, name, fields[name])
    existing.change, existing.change_reason = Change.UPDATE, ""
    existing.version += 1
    existing.invalidated_at = None
    existing.vector_indexed = False  # a new vector: searched exactly until re-indexed
    existing.save()
    return existing
