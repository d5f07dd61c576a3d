"""The candidates of a search: each leg's best rows (meaning, words) with both scores, in
one statement routed exactly or through HNSW (routing.py)."""

from __future__ import annotations

import uuid
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import orjson
from django.conf import settings
from django.contrib.postgres.search import SearchQueryField
from django.db import connection, transaction
from django.db.models import BooleanField, Func, QuerySet, Value

from memoryhub.core.selectors import Principal
from memoryhub.memory.embeddings import get_provider
from memoryhub.memory.models import MemoryEntry
from memoryhub.memory.search.routing import is_large
from memoryhub.memory.selectors import MemoryFilters

# Agents ask questions ("where did Alice move last year?"); plainto_tsquery ANDs every
# term and matches almost nothing for a whole question. OR'ed terms ranked by ts_rank
# do far better (see the retrieval benchmark, which measures both).
TSQUERY_SQL = {
    "any": "replace(plainto_tsquery('english'::regconfig, %s)::text, ' & ', ' | ')::tsquery",
    "all": "plainto_tsquery('english'::regconfig, %s)",
}


class KeywordQuery(Func):
    output_field = SearchQueryField()

    def __init__(self, query: str, match: str = "any") -> None:
        super().__init__(Value(query))
        self.template = TSQUERY_SQL[match].replace("%s", "%(expressions)s")


class TsMatch(Func):
    """`vector @@ query`, without Django wrapping the query in plainto_tsquery again."""

    arg_joiner = " @@ "
    template = "(%(expressions)s)"
    output_field = BooleanField()


def keyword_rank_sql(match: str, column: str = "search_vector") -> str:
    # Normalisation 32 maps the rank into [0, 1): rank / (rank + 1).
    return f"ts_rank({column}, {TSQUERY_SQL[match]}, 32)"


@dataclass(slots=True)
class Candidate:
    pk: uuid.UUID
    created_at: float  # a timestamp: only ever compared
    semantic: float | None
    keyword: float | None
    score: float = 0.0


def ranked_candidates(
    entries: QuerySet[MemoryEntry], *, vector: list[float] | None, query: str | None, pool: int, match: str = "any",
    principal: Principal, filters: MemoryFilters,
) -> list[tuple[uuid.UUID, datetime, float | None, float | None]]:
    """The union of each leg's best `pool` rows with both scores of every candidate, in
    one statement that returns ids, dates and scores only: (id, created_at, cosine
    similarity or None, keyword rank or None).

    The semantic leg is routed by the size of the filtered set (docs/memory.md, "Indexes
    and routing"): small sets are searched exactly, which is both faster and exact there; large
    ones through HNSW with iterative scans, so that filters cannot starve the result,
    plus the rows written since the indexer last ran, exactly, so that a write is found
    by meaning as soon as it returns."""
    table = connection.ops.quote_name(MemoryEntry._meta.db_table)
    hnsw = False
    # Each leg returns both scores of its rows, NULL where that leg is not asked for: read
    # again by id in an outer query, the candidates cost the statement a fourth scan of
    # the table to plan (every index weighed again) and a lookup by id each.
    semantic_sql, keyword_sql, score_params = "NULL::float8", "NULL::float4", []
    if vector is not None:
        provider = get_provider()
        if not is_large(principal=principal, filters=filters, model_id=provider.model_id, dim=len(vector)):
            return _exact_candidates(entries, vector=vector, model_id=provider.model_id, query=query, pool=pool, match=match)
        hnsw = True
        dim = len(vector)
        literal = vector_literal(vector)
        semantic_sql = _semantic_sql(table, dim)
        score_params += [provider.model_id, dim, literal]
    if query:
        keyword_sql = keyword_rank_sql(match, f"{table}.search_vector")
        score_params.append(query)
    # The filtered set compiled once for every leg: built by the ORM leg by leg, the same
    # visibility rules and filters were compiled three times a search.
    source, source_params = _filtered_source(entries)
    select = f"SELECT {table}.id, {table}.created_at, {semantic_sql} AS semantic, {keyword_sql} AS keyword {source}"
    legs: list[tuple[str, list[Any]]] = []
    if hnsw:
        # The index's own expression, so that the planner walks it; `+ 0` keeps it off.
        distance = f"({table}.embedding::vector({dim}) <=> %s::vector)"
        vectors = f"AND {table}.embedding_model = %s AND {table}.embedding_dim = {dim}"
        for indexed, order in (("", distance), ("NOT ", f"({distance} + 0.0)")):
            legs.append((
                f"{select} {vectors} AND {indexed}{table}.vector_indexed ORDER BY {order} LIMIT {int(pool)}",
                [*score_params, *source_params, provider.model_id, literal],
            ))
    if query:
        tsquery = TSQUERY_SQL[match]
        # Ties broken by date and id: which of equally ranked rows make the pool must not
        # change from one call to the next.
        legs.append((
            f"{select} AND {table}.search_vector @@ {tsquery} "
            f"ORDER BY {keyword_rank_sql(match, f'{table}.search_vector')} DESC, {table}.created_at DESC, {table}.id LIMIT {int(pool)}",
            [*score_params, *source_params, query, query],
        ))
    if not legs:
        return []
    # A row two legs found comes out of both with the same scores: UNION keeps one.
    union = " UNION ".join(f"({sql})" for sql, _ in legs)
    sql = (
        f"SELECT c.id, c.created_at, c.semantic, c.keyword FROM ({union}) c "
        # A fixed order: rankings that tie (equal keyword ranks, rows written together)
        # must come out the same on every call.
        "ORDER BY c.semantic DESC NULLS LAST, c.keyword DESC NULLS LAST, c.created_at DESC, c.id"
    )
    params = [p for _, leg_params in legs for p in leg_params]
    # The HNSW settings hold for this transaction only; a keyword search needs neither.
    with transaction.atomic() if hnsw else nullcontext(), connection.cursor() as cursor:
        if hnsw:
            cursor.execute(
                "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', %s, true)",
                [str(max(settings.MEMORYHUB_HNSW_EF_SEARCH, pool))],
            )
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return _scored(rows)


def _semantic_sql(table: str, dim: int) -> str:
    """Cosine similarity of an entry to the question (params: model id, dimension, vector
    literal); NULL for vectors of another model or dimension, which `<=>` would fail on."""
    return (
        f"CASE WHEN {table}.embedding_model = %s AND {table}.embedding_dim = %s "
        f"THEN 1 - ({table}.embedding::vector({dim}) <=> %s::vector({dim})) END"
    )


def _filtered_source(entries: QuerySet[MemoryEntry]) -> tuple[str, list[Any]]:
    """`FROM … WHERE …` of `entries`, the visibility rules and filters, and its params:
    what the ranking statements select their own columns from and add their own
    conditions to."""
    table = connection.ops.quote_name(MemoryEntry._meta.db_table)
    filtered_sql, filtered_params = entries.order_by().values("pk").query.sql_with_params()
    select = f'SELECT {table}."id" AS "pk" '
    if not filtered_sql.startswith(select + "FROM ") or " WHERE " not in filtered_sql:
        raise AssertionError(f"unexpected SQL for the filtered entries: {filtered_sql[:120]}")
    return filtered_sql[len(select):], list(filtered_params)


def vector_literal(vector: list[float]) -> str:
    """The query vector as PostgreSQL reads a vector: its float32 values, each written as
    the shortest text that reads back to the same float32. pgvector's own conversion
    wrote every float in 17 digits, in Python: 0.4-0.7 ms a vector, up to three times a
    search, against 0.05 here, and half the text for the server to parse."""
    return orjson.dumps(np.asarray(vector, dtype=np.float32), option=orjson.OPT_SERIALIZE_NUMPY).decode()


def _exact_candidates(
    entries: QuerySet[MemoryEntry], *, vector: list[float], model_id: str, query: str | None, pool: int, match: str
) -> list[tuple[uuid.UUID, datetime, float | None, float | None]]:
    """`ranked_candidates` for a filtered set small enough to search exactly, in one pass over
    it: both scores of every row, then each leg's best `pool` by window functions.

    Built as two legs (an exact scan for meaning, a full-text index scan for words) the
    statement found the filtered rows twice, through the same bitmap indexes, and the
    ORM took about as long to build it as PostgreSQL to run it: at 100,000 entries this
    step went from p50 15.7 ms (8.1 of them SQL) to 9.9 (4.8), and a heavy user's
    statement from 14 ms to 9 (docs/memory.md, "Search and scores"), then to 5.1 with top-N
    sorts for the legs' pools."""
    table = connection.ops.quote_name(MemoryEntry._meta.db_table)
    source, filtered_params = _filtered_source(entries)
    dim = len(vector)
    semantic_sql = _semantic_sql(table, dim)
    params: list[Any] = [model_id, dim, vector_literal(vector)]
    keyword_sql = "NULL::float4"
    if query:
        tsquery = TSQUERY_SQL[match]
        keyword_sql = f"CASE WHEN {table}.search_vector @@ {tsquery} THEN {keyword_rank_sql(match, f'{table}.search_vector')} END"
        params += [query, query]
    sql = (
        f"WITH scored AS MATERIALIZED ("
        f"  SELECT {table}.id, {table}.created_at, {semantic_sql} AS semantic, {keyword_sql} AS keyword {source}"
        # Each leg's best `pool` as a top-N sort: numbering every row of the set with two
        # window functions (two full sorts) cost a heavy user's statement 1.2 of 6.4 ms.
        # Ties broken by date and id, as in the keyword leg of the other route.
        ") (SELECT id, created_at, semantic, keyword FROM scored WHERE semantic IS NOT NULL"
        "   ORDER BY semantic DESC, created_at DESC, id LIMIT %s)"
        " UNION (SELECT id, created_at, semantic, keyword FROM scored WHERE keyword IS NOT NULL"
        "   ORDER BY keyword DESC, created_at DESC, id LIMIT %s) "
        "ORDER BY semantic DESC NULLS LAST, keyword DESC NULLS LAST, created_at DESC, id"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, *filtered_params, pool, pool])
        rows = cursor.fetchall()
    return _scored(rows)


def candidates_among(
    entries: QuerySet[MemoryEntry], *, pks: list[uuid.UUID], vector: list[float] | None, model_id: str, query: str | None, match: str,
) -> list[tuple[uuid.UUID, datetime, float | None, float | None]]:
    """(id, created_at, cosine similarity or None, keyword rank or None) of each of `pks`
    that `entries` holds (every visibility rule and filter of the search), whatever its
    rank: the few entries a search is pointed to from outside (search/linked.py), scored
    exactly as the ranking statement scores its candidates. A lookup by id, whatever the
    size of the filtered set."""
    if not pks:
        return []
    table = connection.ops.quote_name(MemoryEntry._meta.db_table)
    source, filtered_params = _filtered_source(entries)
    semantic_sql, keyword_sql, params = "NULL::float8", "NULL::float4", []
    if vector is not None:
        semantic_sql = _semantic_sql(table, len(vector))
        params += [model_id, len(vector), vector_literal(vector)]
    if query:
        keyword_sql = f"CASE WHEN {table}.search_vector @@ {TSQUERY_SQL[match]} THEN {keyword_rank_sql(match, f'{table}.search_vector')} END"
        params += [query, query]
    sql = f"SELECT {table}.id, {table}.created_at, {semantic_sql}, {keyword_sql} {source} AND {table}.id = ANY(%s::uuid[])"
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, *filtered_params, pks])
        rows = cursor.fetchall()
    return _scored(rows)


def _scored(rows: list[tuple[Any, ...]]) -> list[tuple[uuid.UUID, datetime, float | None, float | None]]:
    """(id, created_at, semantic, keyword) rows of a ranking statement, scores as floats."""
    return [
        (pk, created_at, None if semantic is None else float(semantic), None if keyword is None else float(keyword))
        for pk, created_at, semantic, keyword in rows
    ]
