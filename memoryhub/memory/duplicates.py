"""Reads about duplicates: which entries a new memory repeats, and the review queue's groups.

A duplicate of a new memory is an entry its writer can see, of the same user, scope and
type, current (not superseded, merged or expired) and not quarantined, whose text is the
same once case, whitespace and punctuation are set aside (`content_fingerprint`, through
an index), or whose embedding is at least MEMORYHUB_DUPLICATE_SIMILARITY similar (among
the user's MEMORYHUB_DUPLICATE_WINDOW newest entries of that scope and type). One
statement answers a whole batch.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import psycopg
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


def _current(alias: str, probe: str) -> str:
    """An entry (`alias`) of the probe's (`probe`) user, scope and type, current, not
    quarantined, and visible to the writer (params: workspace, agent id, store ids)."""
    return (
        f"{alias}.workspace_id = %(workspace)s AND {alias}.user_id = {probe}.user_id AND {alias}.scope = {probe}.scope "
        f"AND {alias}.memory_type = {probe}.memory_type AND {alias}.invalidated_at IS NULL "
        f"AND ({alias}.expires_at IS NULL OR {alias}.expires_at > now()) AND {alias}.review <> '{Review.QUARANTINED}' "
        f"AND CASE {probe}.scope WHEN '{Scope.AGENT}' THEN {alias}.agent_id = %(agent)s "
        f"WHEN '{Scope.SHARED}' THEN {alias}.store_id = ANY(%(stores)s) ELSE true END"
    )


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.casefold()))


def _substituted(new: str, old: str) -> bool:
    """Words of one replaced by others: another memory alike, not the same one said
    again. Sentence embeddings barely tell "leaves on Monday" from "leaves on Tuesday"
    (cosine 0.99 with the local model; `bench duplicates`); a memory said again with words
    added or dropped ("… now") keeps its words."""
    mine, theirs = _words(new), _words(old)
    return bool(mine - theirs) and bool(theirs - mine)


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
    # By meaning: the newest entries of each (user, scope, type) of the batch, read in one
    # pass whatever the plan (a lateral read per group became a pass over the workspace
    # per group while statistics lagged a burst), then compared with the group's probes.
    by_meaning = "" if threshold > 1 else """
        UNION ALL
        SELECT i.ord, r.id, 1 - (r.embedding <=> i.embedding) AS score, r.created_at, r.content
        FROM i JOIN recent r ON r.user_id = i.user_id AND r.scope = i.scope AND r.memory_type = i.memory_type
        WHERE 1 - (r.embedding <=> i.embedding) >= %(threshold)s"""
    recent = "" if threshold > 1 else f""",
        g AS (SELECT DISTINCT user_id, scope, memory_type FROM i),
        recent AS MATERIALIZED (
            SELECT r.user_id, r.scope, r.memory_type, r.id, r.created_at, m.content, m.embedding::vector({dim}) AS embedding
            FROM (
                SELECT m.user_id, m.scope, m.memory_type, m.id, m.created_at,
                       row_number() OVER (PARTITION BY m.user_id, m.scope, m.memory_type ORDER BY m.created_at DESC) AS n
                FROM {table} m JOIN g ON {_current("m", "g")}
                WHERE m.workspace_id = %(workspace)s AND m.user_id = ANY(%(users)s)
                  AND m.embedding_model = %(model)s AND m.embedding_dim = {dim}
            ) r JOIN {table} m ON m.id = r.id
            WHERE r.n <= %(window)s
        )"""
    statement = f"""
        WITH i AS (
            SELECT * FROM unnest(%(ords)s::int[], %(users)s::text[], %(scopes)s::text[], %(types)s::text[], %(contents)s::text[],
                                 %(embeddings)b::vector({dim})[])
                 AS i(ord, user_id, scope, memory_type, content, embedding)
        ){recent}
        -- The same text: one join for the whole batch, whose worst plan is one pass over the
        -- workspace (a probe at a time, a planner whose statistics lag a burst of writes
        -- read the workspace once per probe: 1.1 s for 500 probes at 5,000 rows).
        SELECT i.ord, m.id, 1.0::float8 AS score, m.created_at, NULL::text AS content
        FROM i JOIN {table} m ON m.content_fingerprint = {fingerprint} AND {_current("m", "i")}
        WHERE m.workspace_id = %(workspace)s AND m.user_id = ANY(%(users)s)
        {by_meaning}
    """
    params: dict[str, Any] = {
        "ords": list(range(len(probes))), "users": [p.user_id for p in probes], "scopes": [p.scope for p in probes],
        "types": [p.memory_type for p in probes], "contents": [p.content for p in probes],
        "embeddings": [np.asarray(p.embedding, dtype=np.float32) for p in probes],
        "workspace": agent.workspace_id, "agent": agent.pk, "stores": [s.pk for s in stores],
        "window": settings.MEMORYHUB_DUPLICATE_WINDOW, "threshold": threshold, "model": model_id,
    }
    found: list[dict[uuid.UUID, tuple[float, datetime]]] = [{} for _ in probes]
    # A server-side-binding cursor (Django's quote parameters into the text), so the
    # vectors go in binary (%b): 500 as text took 100 ms to write, twice the lookup. Never
    # prepared: the right plan depends on the workspace's size and the batch's, which a
    # generic plan cannot see (planning costs ~1.5 ms; no faster prepared, measured).
    with psycopg.Cursor(vector_connection()) as cursor:
        cursor.execute(statement, params, prepare=False)
        for ord_, entry_id, score, created_at, content in cursor.fetchall():
            if content is not None and _substituted(probes[ord_].content, content):
                continue
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
        group.entries.append(pair.entry)  # a pair is unique: each entry once
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
