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
from django.db.models import Exists, OuterRef, QuerySet

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


def _current(alias: str) -> str:
    """An entry (`alias`) current (not superseded, merged or expired), not quarantined
    and visible to the writer (params: workspace, agent id, store ids)."""
    return (
        f"{alias}.workspace_id = %(workspace)s AND {alias}.invalidated_at IS NULL "
        f"AND ({alias}.expires_at IS NULL OR {alias}.expires_at > now()) AND {alias}.review <> '{Review.QUARANTINED}' "
        f"AND CASE {alias}.scope WHEN '{Scope.AGENT}' THEN {alias}.agent_id = %(agent)s "
        f"WHEN '{Scope.SHARED}' THEN {alias}.store_id = ANY(%(stores)s) ELSE true END"
    )


def _alike(alias: str, probe: str) -> str:
    """An entry of the probe's user, scope and type."""
    return f"{alias}.user_id = {probe}.user_id AND {alias}.scope = {probe}.scope AND {alias}.memory_type = {probe}.memory_type"


def _fingerprint(text: str) -> str:
    """The same expression as the generated column's, over `text`."""
    return f"md5(btrim(regexp_replace(lower({text}), '{FINGERPRINT_SEPARATORS}', ' ', 'g')))::uuid"


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.casefold()))


def _substituted(new: str, old: str) -> bool:
    """Words of one replaced by others: another memory alike, not the same one said
    again. Sentence embeddings barely tell "leaves on Monday" from "leaves on Tuesday"
    (cosine 0.99 with the local model; `bench duplicates`); a memory said again with words
    added or dropped ("… now") keeps its words."""
    mine, theirs = _words(new), _words(old)
    return bool(mine - theirs) and bool(theirs - mine)


def _one_statement(*, dim: int, by_meaning: bool) -> str:
    """One probe (a single create, the usual call): its user's newest entries of that scope
    and type straight from the (workspace, user, created) index. A statement this small
    plans in a third of the batch one's time, which was most of a create's extra cost."""
    table = MemoryEntry._meta.db_table
    alike = "m.user_id = %(user)s AND m.scope = %(scope)s AND m.memory_type = %(type)s"
    same_text = f"""
        SELECT 0, m.id, 1.0::float8, m.created_at, NULL::text
        FROM {table} m
        WHERE {alike} AND m.content_fingerprint = {_fingerprint("%(content)s::text")} AND {_current("m")}"""
    if not by_meaning:
        return same_text
    return same_text + f"""
        UNION ALL
        SELECT 0, r.id, r.score, r.created_at, r.content FROM (
            SELECT m.id, m.created_at, m.content, 1 - (m.embedding <=> %(embedding)b::vector) AS score
            FROM {table} m
            WHERE {alike} AND {_current("m")} AND m.embedding_model = %(model)s AND m.embedding_dim = {dim}
            ORDER BY m.created_at DESC LIMIT %(window)s
        ) r
        WHERE r.score >= %(threshold)s"""


def _batch_statement(*, dim: int, by_meaning: bool) -> str:
    """Any number of probes: the same texts in one join; by meaning, the newest entries of
    each (user, scope, type) of the batch read in one pass whatever the plan (a lateral read
    per group became a pass over the workspace per group while statistics lagged a burst),
    then compared with the group's probes."""
    table = MemoryEntry._meta.db_table
    probes = f"""
        WITH i AS (
            SELECT * FROM unnest(%(ords)s::int[], %(users)s::text[], %(scopes)s::text[], %(types)s::text[], %(contents)s::text[],
                                 %(embeddings)b::vector({dim})[])
                 AS i(ord, user_id, scope, memory_type, content, embedding)
        )"""
    # One join for the whole batch, whose worst plan is one pass over the workspace (a
    # probe at a time, a planner whose statistics lag a burst of writes read the workspace
    # once per probe: 1.1 s for 500 probes at 5,000 rows).
    same_text = f"""
        SELECT i.ord, m.id, 1.0::float8 AS score, m.created_at, NULL::text AS content
        FROM i JOIN {table} m ON m.content_fingerprint = {_fingerprint("i.content")} AND {_alike("m", "i")} AND {_current("m")}
        WHERE m.user_id = ANY(%(group_users)s)"""
    if not by_meaning:
        return probes + same_text
    # The entries' rows are read once each (by id after the window, which sorts narrow
    # rows), behind a fence (OFFSET 0): otherwise the planner, which cannot estimate the
    # join with the probes, read each row once per probe of its user (100,000 reads for
    # 500 probes over 50 users' 10,000 entries, 2x slower).
    recent = f""",
        recent AS (
            SELECT r.user_id, r.scope, r.memory_type, r.id, m.created_at, m.content, m.embedding
            FROM (
                SELECT m.user_id, m.scope, m.memory_type, m.id,
                       row_number() OVER (PARTITION BY m.user_id, m.scope, m.memory_type ORDER BY m.created_at DESC) AS n
                FROM {table} m
                WHERE m.user_id = ANY(%(group_users)s) AND m.scope = ANY(%(group_scopes)s) AND m.memory_type = ANY(%(group_types)s)
                  AND {_current("m")} AND m.embedding_model = %(model)s AND m.embedding_dim = {dim}
            ) r JOIN {table} m ON m.id = r.id
            WHERE r.n <= %(window)s
            OFFSET 0
        )"""
    return probes + recent + same_text + f"""
        UNION ALL
        SELECT i.ord, r.id, 1 - (r.embedding <=> i.embedding) AS score, r.created_at, r.content
        FROM recent r JOIN i ON {_alike("r", "i")}
        WHERE 1 - (r.embedding <=> i.embedding) >= %(threshold)s"""


@dataclass(frozen=True)
class Lookup:
    """The statement finding the probes' duplicates and its parameters (named)."""

    statement: str
    params: dict[str, Any]


def similar_lookup(*, agent: Agent, stores: list[Store], probes: list[Probe], model_id: str, dimensions: int) -> Lookup:
    """The statement behind `similar_entries`, for a caller that runs it inside its own
    (the single create writes its entry in the same statement). Meaning is compared
    between vectors of the same model only."""
    threshold = settings.MEMORYHUB_DUPLICATE_SIMILARITY
    dim = int(dimensions)
    params: dict[str, Any] = {
        "workspace": agent.workspace_id, "agent": agent.pk, "stores": [s.pk for s in stores],
        "window": settings.MEMORYHUB_DUPLICATE_WINDOW, "threshold": threshold, "model": model_id,
    }
    if len(probes) == 1:
        [probe] = probes
        return Lookup(_one_statement(dim=dim, by_meaning=threshold <= 1), params | {
            "user": probe.user_id, "scope": probe.scope, "type": probe.memory_type, "content": probe.content,
            "embedding": np.asarray(probe.embedding, dtype=np.float32),
        })
    return Lookup(_batch_statement(dim=dim, by_meaning=threshold <= 1), params | {
        "ords": list(range(len(probes))), "users": [p.user_id for p in probes], "scopes": [p.scope for p in probes],
        "types": [p.memory_type for p in probes], "contents": [p.content for p in probes],
        "embeddings": [np.asarray(p.embedding, dtype=np.float32) for p in probes],
        "group_users": sorted({p.user_id for p in probes}), "group_scopes": sorted({p.scope for p in probes}),
        "group_types": sorted({p.memory_type for p in probes}),
    })


def similar_ranked(probes: list[Probe], rows: list[tuple[int, uuid.UUID, float, datetime, str | None]]) -> list[list[Similar]]:
    """The lookup's rows as each probe's duplicates, most similar first (at most
    MAX_SIMILAR); entries alike in meaning whose words were replaced left out."""
    found: list[dict[uuid.UUID, tuple[float, datetime]]] = [{} for _ in probes]
    for ord_, entry_id, score, created_at, content in rows:
        if content is not None and _substituted(probes[ord_].content, content):
            continue
        best = found[ord_]
        best[entry_id] = (max(score, best.get(entry_id, (0.0,))[0]), created_at)
    # Of equals, the first written (the one the others repeat).
    return [
        [Similar(id=entry_id, score=round(score, 4)) for entry_id, (score, _) in sorted(best.items(), key=lambda kv: (-kv[1][0], kv[1][1]))][:MAX_SIMILAR]
        for best in found
    ]


def similar_entries(*, agent: Agent, stores: list[Store], probes: list[Probe], model_id: str, dimensions: int) -> list[list[Similar]]:
    """For each probe, the entries it would duplicate, most similar first: one statement
    for them all, on the caller's transaction."""
    if not probes:
        return []
    lookup = similar_lookup(agent=agent, stores=stores, probes=probes, model_id=model_id, dimensions=dimensions)
    return similar_ranked(probes, run_lookup(lookup.statement, lookup.params))


def run_lookup(statement: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
    """A lookup's statement on the transaction's own connection, through a server-side-binding
    cursor (Django's quotes parameters into the text), so that vectors go in binary (%b):
    500 as text took 100 ms to write, twice the lookup. Never prepared: the right plan for a
    batch depends on the workspace's size and the batch's, which a generic plan cannot see,
    and a single probe's ran no faster prepared (measured)."""
    with psycopg.Cursor(vector_connection()) as cursor:
        cursor.execute(statement, params, prepare=False)
        return cursor.fetchall()


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
    whose entries are both still current.

    The pairs alone first (ids and scores), then in one query the entries of the groups
    shown, with their agents and stores, without their vectors (nothing shown needs them).
    With the entries joined to the pairs, every pair read built two entries, agents and
    stores, most of them for groups past the first `limit`, and parsed both vectors: 1,750
    model instances for 50 groups, 114 ms of the API's answer at 1M entries (`bench review`)."""
    pairs = current_pairs(workspace_id=workspace_id).order_by("created_at", "id").values_list("duplicate_of_id", "entry_id", "score")
    shown: dict[uuid.UUID, list[tuple[uuid.UUID, float]]] = {}
    for original, entry, score in pairs[: limit * MAX_SIMILAR]:
        group = shown.get(original)
        if group is None:
            if len(shown) == limit:
                continue
            group = shown[original] = []
        group.append((entry, score))  # a pair is unique: each entry once
    wanted = [*shown, *(entry for group in shown.values() for entry, _ in group)]
    entries = MemoryEntry.objects.filter(workspace_id=workspace_id).select_related("agent", "store").defer("embedding", "search_vector").in_bulk(wanted)
    # An entry deleted between the two reads leaves its pair out (its group, if it was the original).
    return [
        DuplicateGroup(original=entries[original], entries=kept, score=min(score for entry, score in group if entry in entries))
        for original, group in shown.items()
        if original in entries and (kept := [entries[entry] for entry, _ in group if entry in entries])
    ]


def current_pairs(*, workspace_id: int) -> QuerySet[MemoryDuplicate]:
    """Pairs whose entries are both still current: merged ones leave the queue.

    Asked as "neither entry is among the superseded" (few, in the partial index
    memory_invalidated, migration 0013) rather than by reading both entries of every
    pair: that was two lookups in the table per pair, 21,000 pages and 30-70 ms for
    3,334 pairs at 1M entries, on every console page (the sidebar counts the groups),
    against 2 ms (`bench review`)."""
    superseded = MemoryEntry.objects.filter(invalidated_at__isnull=False)
    return MemoryDuplicate.objects.filter(workspace_id=workspace_id).exclude(
        Exists(superseded.filter(pk=OuterRef("entry_id"))),
    ).exclude(Exists(superseded.filter(pk=OuterRef("duplicate_of_id"))))


def duplicate_group_count(*, workspace_id: int) -> int:
    """How many groups wait (the console's tab)."""
    return current_pairs(workspace_id=workspace_id).values("duplicate_of").distinct().count()
