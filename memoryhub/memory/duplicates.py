"""Reads about duplicates: which entries a new memory repeats, and the review queue's groups.

A duplicate of a new memory is an entry its writer can see, of the same user, scope and
type, current (not superseded, merged or expired) and not quarantined, whose text is the
same once case, whitespace and punctuation are set aside (`content_fingerprint`, through
an index), or whose embedding is at least MEMORYHUB_DUPLICATE_SIMILARITY similar (among
the user's MEMORYHUB_DUPLICATE_WINDOW newest entries of that scope and type). One
statement answers a whole batch.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from django.conf import settings
from django.db.models import QuerySet

from memoryhub.core.models import Agent, Store
from memoryhub.memory.models import FINGERPRINT_SEPARATORS, MemoryDuplicate, MemoryEntry, Review, Scope
from memoryhub.memory.vector_index import vector_connection

# The best few are enough to act on and to show.
MAX_SIMILAR = 5


@dataclass(frozen=True)
class Probe:
    """A memory about to be written."""

    user_id: str
    scope: str
    memory_type: str
    content: str
    embedding: list[float]


@dataclass(frozen=True)
class Similar:
    id: uuid.UUID
    score: float  # 1 for the same text once normalised, else the embeddings' cosine similarity


def _visible_to(alias: str) -> str:
    """The writer's visibility of an entry of the probe's scope (params: agent id, store ids)."""
    return (
        f"CASE i.scope WHEN '{Scope.AGENT}' THEN {alias}.agent_id = %(agent)s "
        f"WHEN '{Scope.SHARED}' THEN {alias}.store_id = ANY(%(stores)s) ELSE true END"
    )


def _current(alias: str) -> str:
    return (
        f"{alias}.workspace_id = %(workspace)s AND {alias}.user_id = i.user_id AND {alias}.scope = i.scope "
        f"AND {alias}.memory_type = i.memory_type AND {alias}.invalidated_at IS NULL "
        f"AND ({alias}.expires_at IS NULL OR {alias}.expires_at > now()) AND {alias}.review <> '{Review.QUARANTINED}' "
        f"AND {_visible_to(alias)}"
    )


def similar_entries(*, agent: Agent, stores: list[Store], probes: list[Probe], model_id: str, dimensions: int) -> list[list[Similar]]:
    """For each probe, the entries it would duplicate, most similar first (at most
    MAX_SIMILAR): one statement for them all, on the caller's transaction. Meaning is
    compared between vectors of the same model only."""
    if not probes:
        return []
    threshold = settings.MEMORYHUB_DUPLICATE_SIMILARITY
    dim = int(dimensions)
    table = MemoryEntry._meta.db_table
    # The same expression as the generated column's, over the probe's text.
    fingerprint = f"md5(btrim(regexp_replace(lower(i.content), '{FINGERPRINT_SEPARATORS}', ' ', 'g')))::uuid"
    by_meaning = "" if threshold > 1 else f"""
        UNION ALL
        SELECT r.id, r.score, r.created_at FROM (
            SELECT m.id, m.created_at, 1 - (m.embedding::vector({dim}) <=> i.embedding) AS score
            FROM {table} m
            WHERE {_current("m")} AND m.embedding_model = %(model)s AND m.embedding_dim = {dim}
            ORDER BY m.created_at DESC LIMIT %(window)s
        ) r WHERE r.score >= %(threshold)s"""
    statement = f"""
        SELECT i.ord, d.id, d.score, d.created_at
        FROM unnest(%(ords)s::int[], %(users)s::text[], %(scopes)s::text[], %(types)s::text[], %(contents)s::text[],
                    %(embeddings)b::vector({dim})[])
             AS i(ord, user_id, scope, memory_type, content, embedding)
        CROSS JOIN LATERAL (
            (SELECT m.id, 1.0::float8 AS score, m.created_at FROM {table} m
             WHERE {_current("m")} AND m.content_fingerprint = {fingerprint} LIMIT {MAX_SIMILAR})
            {by_meaning}
        ) d
    """
    params: dict[str, Any] = {
        "ords": list(range(len(probes))), "users": [p.user_id for p in probes], "scopes": [p.scope for p in probes],
        "types": [p.memory_type for p in probes], "contents": [p.content for p in probes],
        "embeddings": [np.asarray(p.embedding, dtype=np.float32) for p in probes],
        "workspace": agent.workspace_id, "agent": agent.pk, "stores": [s.pk for s in stores],
        "window": settings.MEMORYHUB_DUPLICATE_WINDOW, "threshold": threshold, "model": model_id,
    }
    found: list[dict[uuid.UUID, tuple[float, datetime]]] = [{} for _ in probes]
    with vector_connection().cursor() as cursor:
        # The vectors go in binary (%b): a batch's as text would cost more than the lookup.
        cursor.execute(statement, params)
        for ord_, entry_id, score, created_at in cursor.fetchall():
            best = found[ord_]
            best[entry_id] = (max(score, best.get(entry_id, (0.0,))[0]), created_at)
    # The most similar first; of equals, the first written (the one the others repeat).
    return [
        [Similar(id=entry_id, score=round(score, 4)) for entry_id, (score, _) in sorted(best.items(), key=lambda kv: (-kv[1][0], kv[1][1]))][:MAX_SIMILAR]
        for best in found
    ]


@dataclass
class DuplicateGroup:
    """An entry and the later ones written although they repeat it."""

    original: MemoryEntry
    entries: list[MemoryEntry]
    score: float  # the lowest similarity in the group

    @property
    def members(self) -> list[MemoryEntry]:
        return [self.original, *self.entries]


def duplicate_groups(*, workspace_id: int, limit: int = 50) -> list[DuplicateGroup]:
    """The review queue's duplicates, oldest group first: pairs recorded at write time
    whose entries are both still current."""
    pairs = (
        current_pairs(workspace_id=workspace_id)
        .select_related("entry__agent", "entry__store", "duplicate_of__agent", "duplicate_of__store")
        .order_by("created_at", "id")
    )
    groups: dict[uuid.UUID, DuplicateGroup] = {}
    for pair in pairs[: limit * MAX_SIMILAR]:
        group = groups.get(pair.duplicate_of_id)
        if group is None:
            if len(groups) == limit:
                continue
            group = groups[pair.duplicate_of_id] = DuplicateGroup(original=pair.duplicate_of, entries=[], score=pair.score)
        if all(e.pk != pair.entry_id for e in group.entries):
            group.entries.append(pair.entry)
            group.score = min(group.score, pair.score)
    return list(groups.values())


def current_pairs(*, workspace_id: int) -> QuerySet[MemoryDuplicate]:
    """Pairs whose entries are both still current: merged ones leave the queue."""
    return MemoryDuplicate.objects.filter(
        workspace_id=workspace_id, entry__invalidated_at__isnull=True, duplicate_of__invalidated_at__isnull=True,
    )


def duplicate_group_count(*, workspace_id: int) -> int:
    """How many groups wait (the console's tab)."""
    return current_pairs(workspace_id=workspace_id).values("duplicate_of").distinct().count()
