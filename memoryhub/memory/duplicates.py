"""Reads about duplicates: which entries a new memory repeats, and the review queue's groups.

A duplicate of a new memory is an entry its writer can see, of the same user, scope and
type, current (not superseded, merged or expired) and not quarantined, whose text is the
same once case, whitespace and punctuation are set aside (`content_fingerprint`, through
an index), or whose embedding is at least MEMORYHUB_DUPLICATE_SIMILARITY similar (among
the user's MEMORYHUB_DUPLICATE_WINDOW newest entries of that scope and type). One
statement answers a single create (the one that writes it); a batch, one statement for
all its probes and a second for the few entries whose vectors' signs came near.
"""

from __future__ import annotations

import contextlib
import math
import re
import uuid
from concurrent.futures import Future
from concurrent.futures import wait as futures_wait
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import psycopg
from django.conf import settings
from django.db.models import Exists, OuterRef, QuerySet

from memoryhub.core import tasking
from memoryhub.core.models import Agent, Store
from memoryhub.core.sql import prepared_cursor
from memoryhub.memory.models import FINGERPRINT_SEPARATORS, MemoryDuplicate, MemoryEntry
from memoryhub.memory.vector_index import vector_connection
from memoryhub.memory.visibility import current_visible_params, current_visible_sql

# The best few are enough to act on and to show.
MAX_SIMILAR = 5


@dataclass(frozen=True)
class Probe:
    """A memory about to be written."""

    user_id: str
    scope: str
    memory_type: str
    content: str


@dataclass(frozen=True)
class Similar:
    id: uuid.UUID
    score: float  # 1 for the same text once normalised, else the embeddings' cosine similarity


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
        WHERE {alike} AND m.content_fingerprint = {_fingerprint("%(content)s::text")} AND {current_visible_sql("m")}"""
    if not by_meaning:
        return same_text
    return same_text + f"""
        UNION ALL
        SELECT 0, r.id, r.score, r.created_at, r.content FROM (
            SELECT m.id, m.created_at, m.content, 1 - (m.embedding <=> %(embedding)b::vector) AS score
            FROM {table} m
            WHERE {alike} AND {current_visible_sql("m")} AND m.embedding_model = %(model)s AND m.embedding_dim = {dim}
            ORDER BY m.created_at DESC LIMIT %(window)s
        ) r
        WHERE r.score >= %(threshold)s"""


# An entry's signs as the column `embedding_signs` keeps them (migration 0015: its trigger),
# for the rows written before it: `binary_quantize`'s bits without varbit_send's length.
_SIGNS_OF_VECTOR = "substring(varbit_send(binary_quantize(m.embedding)) FROM 5)"


def _batch_statement(*, by_meaning: bool) -> str:
    """Any number of probes, in one statement of two parts. The same texts: a look in the
    fingerprint index per probe. By meaning: each (user, scope, type) group's newest
    entries, as the signs of their vectors (`embedding_signs`, 48 bytes at 384 dimensions),
    one row per group with the ids and the signs each in one bytea: a group read through
    the (workspace, user, created) index, a row of Python per group, not per entry.

    Comparing every probe with every entry of its group in SQL cost 0.3-0.6 µs a pair in
    the executor alone (50,000 pairs for 500 probes over 50 users of 100 entries), plus
    every entry's whole vector read and hashed: half a batch's time (`bench duplicates`).
    The signs are compared in NumPy (`BatchLookup.similar`), and the few entries near
    enough are read whole to be compared exactly."""
    table = MemoryEntry._meta.db_table
    same_text = f"""
        SELECT 'text' AS kind, i.ord, t.id, t.created_at, NULL::bytea AS ids, NULL::bytea AS signs
        FROM unnest(%(ords)s::int[], %(users)s::text[], %(scopes)s::text[], %(types)s::text[], %(contents)s::text[])
             AS i(ord, user_id, scope, memory_type, content)
        CROSS JOIN LATERAL (
            SELECT m.id, m.created_at FROM {table} m
            WHERE m.user_id = i.user_id AND m.content_fingerprint = {_fingerprint("i.content")}
              AND m.scope = i.scope AND m.memory_type = i.memory_type AND {current_visible_sql("m")}
        ) t"""
    if not by_meaning:
        return same_text
    # A group's window through the (workspace, user, created) index in its order, stopped
    # at the window. Ordered by user too, which no other index gives, and read with sorts
    # off (`_read_by_user`): while statistics lag a burst into a new workspace, the planner
    # took the workspace for one row and read all of it once per group (then sorted) to
    # keep one user's rows: 114 ms for 50 groups at 10,000 rows, against 22.
    return same_text + f"""
        UNION ALL
        SELECT 'signs', g.n::int, NULL, NULL, string_agg(uuid_send(w.id), ''::bytea), string_agg(w.signs, ''::bytea)
        FROM unnest(%(group_users)s::text[], %(group_scopes)s::text[], %(group_types)s::text[]) WITH ORDINALITY
             AS g(user_id, scope, memory_type, n)
        CROSS JOIN LATERAL (
            SELECT m.id, COALESCE(m.embedding_signs, {_SIGNS_OF_VECTOR}) AS signs FROM {table} m
            WHERE m.user_id = g.user_id AND m.scope = g.scope AND m.memory_type = g.memory_type AND {current_visible_sql("m")}
              AND m.embedding_model = %(model)s AND m.embedding_dim = %(dim)s
            ORDER BY m.user_id, m.created_at DESC LIMIT %(window)s
        ) w
        GROUP BY g.n"""


def _candidates_statement() -> str:
    """The entries whose signs came near a probe's, whole (still current: the signs may
    have been read before the caller's transaction began)."""
    return f"""
        SELECT m.id, m.embedding, m.created_at, m.content FROM {MemoryEntry._meta.db_table} m
        WHERE m.id = ANY(%(ids)s::uuid[]) AND {current_visible_sql("m")}"""


def sign_distance_limit(*, threshold: float, dimensions: int) -> int:
    """The most signs two vectors at least `threshold` similar may differ by, with room to
    spare. Two random directions at angle θ differ in a sign with probability θ/π; the
    limit allows twice that, plus 1/32 of the signs. At 0.95 and 384 dimensions: 90 signs,
    where the local model's pairs of the labelled set at ≥ 0.95 differ by 52 at most and
    98% of the set's other pairs (alike sentences about the same people) by more than 90
    (`bench duplicates` reports the recall this gives)."""
    angle = math.acos(max(-1.0, min(1.0, threshold)))
    return min(dimensions, math.ceil(dimensions * (2 * angle / math.pi + 1 / 32)))


@dataclass(frozen=True)
class _Windows:
    """What a batch lookup's statement found: the same texts, (probe, entry id, created),
    and each group's newest entries, ids (n × 16 bytes) and signs (n × dimensions/8)."""

    same_text: list[tuple[int, uuid.UUID, datetime]]
    ids: dict[tuple[str, str, str], np.ndarray]
    signs: dict[tuple[str, str, str], np.ndarray]  # `_sign_words`, transposed: a word's row for all entries


# Batch lookups read the database on these threads while the writer's thread prepares the batch.
READERS = 4


def _sign_words(signs: np.ndarray) -> np.ndarray:
    """Rows of sign bits as 64-bit words where they fit (384 → 6): a pair's XOR and bit
    count then take 6 operations, not 48."""
    signs = np.ascontiguousarray(signs)
    return signs.view(np.uint64) if signs.shape[1] % 8 == 0 else signs


def _group(probe: Probe) -> tuple[str, str, str]:
    return probe.user_id, probe.scope, probe.memory_type


@dataclass
class BatchLookup:
    """A batch's duplicates in two steps: `batch_lookup` sends the statement (from a thread
    when `background`, on the caller's connection), `similar` compares the signs it read with the batch's vectors and
    reads the few entries near enough whole. Between the two the caller may do anything
    but use the connection: `wait` before it does."""

    probes: list[Probe]
    threshold: float
    dimensions: int
    params: dict[str, Any]
    read: Future[_Windows]

    def wait(self) -> None:
        futures_wait([self.read])

    def similar(self, vectors: np.ndarray) -> list[list[Similar]]:
        windows = self.read.result()
        rows: list[tuple[int, uuid.UUID, float, datetime, str | None]] = [
            (ord_, entry_id, 1.0, created_at, None) for ord_, entry_id, created_at in windows.same_text
        ]
        near = self._near(windows, vectors)
        if near:
            ids = sorted({entry_id for pairs in near.values() for entry_id in pairs})
            with psycopg.Cursor(vector_connection()) as cursor:
                cursor.execute(_candidates_statement(), self.params | {"ids": ids}, prepare=False, binary=True)
                entries = {entry_id: (embedding.to_numpy().astype(np.float64), created_at, content)
                           for entry_id, embedding, created_at, content in cursor.fetchall()}
            for ord_, pairs in near.items():
                probe = np.asarray(vectors[ord_], dtype=np.float64)
                probe /= np.linalg.norm(probe)
                for entry_id in pairs:
                    if (found := entries.get(entry_id)) is None:
                        continue
                    embedding, created_at, content = found
                    score = float(probe @ embedding / np.linalg.norm(embedding))
                    if score >= self.threshold:
                        rows.append((ord_, entry_id, score, created_at, content))
        return similar_ranked(self.probes, rows)

    def _near(self, windows: _Windows, vectors: np.ndarray) -> dict[int, list[uuid.UUID]]:
        """Each probe's entries whose signs differ from its own by at most the limit."""
        if not windows.signs:
            return {}
        limit = sign_distance_limit(threshold=self.threshold, dimensions=self.dimensions)
        by_group: dict[tuple[str, str, str], list[int]] = {}
        for ord_, probe in enumerate(self.probes):
            by_group.setdefault(_group(probe), []).append(ord_)
        signs = _sign_words(np.packbits(vectors > 0, axis=1))  # binary_quantize: 1 where > 0
        near: dict[int, list[uuid.UUID]] = {}
        for group, ords in by_group.items():
            window = windows.signs.get(group)
            if window is None:
                continue
            # Word by word over all the group's entries at once: twice as fast as one XOR of
            # (probes × entries × words) summed over its last axis.
            mine = signs[ords]
            distance = np.zeros((len(ords), window.shape[1]), dtype=np.uint16)
            for word in range(window.shape[0]):
                distance += np.bitwise_count(mine[:, word : word + 1] ^ window[word])
            for row, column in zip(*np.nonzero(distance <= limit), strict=True):
                near.setdefault(ords[row], []).append(uuid.UUID(bytes=windows.ids[group][column].tobytes()))
        return near


def _read_by_user(raw: psycopg.Connection, statement: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The batch statement's rows, planned with sorts off (see `_batch_statement`), which
    only this statement sees: in a transaction of its own when the connection has none (a
    kept batch reads before its transaction), else reset after it."""
    with contextlib.nullcontext() if not raw.autocommit else raw.transaction(), psycopg.Cursor(raw) as cursor:
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute(statement, params, prepare=False, binary=True)  # the bytea as they are, not in hex
        rows = cursor.fetchall()
        cursor.execute("SET LOCAL enable_sort TO DEFAULT")
    return rows


def batch_lookup(
    *, agent: Agent, stores: list[Store], probes: list[Probe], model_id: str, dimensions: int, background: bool,
) -> BatchLookup:
    """Start looking for the duplicates of a batch of probes (see BatchLookup), on the
    transaction's own connection. Meaning is compared between vectors of the same model
    only."""
    threshold = settings.MEMORYHUB_DUPLICATE_SIMILARITY
    groups = sorted({_group(p) for p in probes})
    params: dict[str, Any] = {
        **current_visible_params(agent=agent, stores=stores),
        "window": settings.MEMORYHUB_DUPLICATE_WINDOW, "model": model_id, "dim": int(dimensions),
    }
    statement_params = params | {
        "ords": list(range(len(probes))), "users": [p.user_id for p in probes], "scopes": [p.scope for p in probes],
        "types": [p.memory_type for p in probes], "contents": [p.content for p in probes],
        "group_users": [g[0] for g in groups], "group_scopes": [g[1] for g in groups], "group_types": [g[2] for g in groups],
    }
    statement = _batch_statement(by_meaning=threshold <= 1)
    raw = vector_connection()  # the caller's thread's connection: Django's are per thread

    def read() -> _Windows:
        rows = _read_by_user(raw, statement, statement_params)
        same_text, ids, signs = [], {}, {}
        row_bytes = (int(dimensions) + 7) // 8
        for kind, n, entry_id, created_at, group_ids, group_signs in rows:
            if kind == "text":
                same_text.append((n, entry_id, created_at))
                continue
            ids[groups[n - 1]] = np.frombuffer(group_ids, dtype=np.uint8).reshape(-1, 16)
            words = _sign_words(np.frombuffer(group_signs, dtype=np.uint8).reshape(-1, row_bytes))
            signs[groups[n - 1]] = np.ascontiguousarray(words.T)
        return _Windows(same_text=same_text, ids=ids, signs=signs)

    if background:
        future = tasking.pool("memoryhub-duplicates", workers=READERS).submit(read)
    else:
        future = Future()
        try:
            future.set_result(read())
        except BaseException as exc:
            future.set_exception(exc)
    return BatchLookup(probes=probes, threshold=threshold, dimensions=int(dimensions), params=params, read=future)


@dataclass(frozen=True)
class Lookup:
    """The statement finding the probes' duplicates and its parameters (named)."""

    statement: str
    params: dict[str, Any]


def similar_lookup(*, agent: Agent, stores: list[Store], probe: Probe, embedding: np.ndarray, model_id: str, dimensions: int) -> Lookup:
    """The statement finding one probe's duplicates, for a caller that runs it inside its
    own (the single create writes its entry in the same statement). Meaning is compared
    between vectors of the same model only."""
    threshold = settings.MEMORYHUB_DUPLICATE_SIMILARITY
    return Lookup(_one_statement(dim=int(dimensions), by_meaning=threshold <= 1), {
        **current_visible_params(agent=agent, stores=stores),
        "window": settings.MEMORYHUB_DUPLICATE_WINDOW, "threshold": threshold, "model": model_id,
        "user": probe.user_id, "scope": probe.scope, "type": probe.memory_type, "content": probe.content,
        "embedding": np.asarray(embedding, dtype=np.float32),
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


def similar_entries(
    *, agent: Agent, stores: list[Store], probes: list[Probe], vectors: np.ndarray, model_id: str, dimensions: int,
) -> list[list[Similar]]:
    """For each probe, the entries it would duplicate, most similar first, on the caller's
    transaction: one statement for one probe, a batch's two (BatchLookup)."""
    if not probes:
        return []
    if len(probes) > 1:
        lookup = batch_lookup(agent=agent, stores=stores, probes=probes, model_id=model_id, dimensions=dimensions, background=False)
        return lookup.similar(vectors)
    [probe], [embedding] = probes, vectors
    single = similar_lookup(agent=agent, stores=stores, probe=probe, embedding=embedding, model_id=model_id, dimensions=dimensions)
    return similar_ranked(probes, run_lookup(single.statement, single.params))


def run_lookup(statement: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
    """A single probe's statement on the transaction's own connection, vectors in binary
    (%b), prepared once per pooled connection (`prepared_cursor`): planning its two
    reads of a table of 27 indexes was three quarters of its time on the server (0.3-0.5
    ms of 0.45-0.65), a third of a create's time with detection (`bench duplicates`);
    the generic plan is the same two index scans."""
    vector_connection()  # pgvector's types, registered on the connection
    with prepared_cursor() as cursor:
        cursor.execute(statement, params, prepare=True)
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
