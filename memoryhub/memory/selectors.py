"""Reads and search of long-term memory. Every filter goes into SQL."""

from __future__ import annotations

import base64
import json
import logging
import re
import time
import uuid
from contextlib import nullcontext
from functools import cache
from dataclasses import dataclass, field, replace
from datetime import datetime
from collections.abc import Callable
from typing import Any, cast

import numpy as np
import orjson
from django.conf import settings
from django.db import connection, transaction
from django.contrib.postgres.search import SearchQueryField
from django.db.models import BooleanField, Count, F, Func, IntegerField, Q, QuerySet, Sum, Value
from django.utils import timezone

from memoryhub.core.errors import ApplicationError, NotFound
from memoryhub.core.models import Agent, Store
from memoryhub.core.selectors import Principal
from memoryhub.core.sql import RowReader, prepared_cursor
from memoryhub.memory.embeddings import checked_embedding, get_provider
from memoryhub.memory.models import MemoryEntry, MemoryType, Scope, UserVectorIndex
from memoryhub.memory.rerankers import RerankError, RerankerResting, get_reranker

logger = logging.getLogger(__name__)

# Hybrid = SEMANTIC_WEIGHT × cosine similarity + (1 − SEMANTIC_WEIGHT) × keyword score
# relative to the query's best keyword match. Chosen by `manage.py bench memory-quality`.
SEMANTIC_WEIGHT = 0.6
DEFAULT_MAX_RESULTS = 10
MODES = ("hybrid", "semantic", "keyword")
# What a search does with a result that says again what a better one says (README,
# "Search and scores"): "demote" it below the distinct ones, or "keep" it in place.
REPEATS = ("demote", "keep")

# Two-hop questions ("Which city is Omar flying to?") are answered by two entries, the
# second found only through a name the first one mentions ("... to see Farid" ->
# "Farid lives in Melbourne"). The results that mention a name the best two mention (and
# the question does not) get this much added to their score: by default among the rows
# read for the results (READ_PER_RESULT times as many as asked for, no statement more), with
# follow_names="all" among all the entries the search covers (a second ranking). Chosen
# on the tuning split of our retrieval set (0.03 and 0.05 tie there; 0.05 cost the
# shipped LoCoMo-layout set a question).
FOLLOW_NAMES = ("results", "all", "off")
# Scores are shown to six decimals, and `min_relevance` compares at that precision: an
# agent that passes back the score it was shown keeps that result.
SCORE_DECIMALS = 6
# How many rows a search reads for each result it returns, to find repeats and names.
# Hybrid recall@10 on the retrieval benchmark's tuning split: 0.900 reading 2, 0.910
# reading 3, as much as looking among all ~80 candidates (offline).
READ_PER_RESULT = 3
FOLLOWED_RESULTS = 2
FOLLOWED_NAME_BONUS = 0.03
# A capitalised word that does not open a sentence: a name, most of the time.
_NAME = re.compile(r"(?<![.!?:]\s)(?<!^)\b([A-Z][\w'-]+)")
_WORD = re.compile(r"[\w'-]+")
# Capitalised, yet not names to follow: dates are matched through their own words.
_NOT_NAMES = frozenset(
    "i january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday".split()
)


def visible_entries(principal: Principal) -> QuerySet[MemoryEntry]:
    """What the caller may see: agents their own agent-scoped entries, shared entries of
    their stores and global ones; operators the whole workspace. Never expired ones.

    Vectors and tsvectors are never loaded: nothing shown needs them, and parsing 384
    floats per row was a third of a search's time."""
    entries = MemoryEntry.objects.filter(workspace=principal.workspace).live().defer("embedding", "search_vector")
    if principal.is_agent:
        entries = entries.filter(
            Q(scope=Scope.AGENT, agent=principal.agent)
            | Q(scope=Scope.SHARED, store__in=[s.pk for s in principal.stores])
            | Q(scope=Scope.GLOBAL)
        )
    return entries


def entry_get(*, principal: Principal, entry_id: str, include_invalidated: bool = True) -> MemoryEntry:
    try:
        pk = uuid.UUID(str(entry_id))
    except ValueError:
        raise NotFound("No such memory entry.", code="MEMORY_NOT_FOUND") from None
    entries = visible_entries(principal)
    if not include_invalidated:
        entries = entries.current()
    entry = entries.select_related("agent", "store").filter(pk=pk).first()
    if entry is None:
        raise NotFound("No such memory entry.", code="MEMORY_NOT_FOUND")
    return entry


@dataclass
class MemoryFilters:
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    scope: str | None = None
    user_id: str | None = None
    memory_type: str | None = None
    store: str | None = None
    agent: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    include_invalidated: bool = False
    as_of: datetime | None = None


def filtered_entries(*, principal: Principal, filters: MemoryFilters) -> QuerySet[MemoryEntry]:
    entries = visible_entries(principal)
    if filters.as_of is not None:
        entries = entries.valid_at(filters.as_of)
    elif not filters.include_invalidated:
        entries = entries.current()
    lookups = {lookup: getattr(filters, name) for name, lookup in FILTER_LOOKUPS.items() if getattr(filters, name)}
    return entries.filter(**lookups)


# Filters that only ever narrow the set the others select, left out to route a search
# (`_is_large`).
NARROWING_ONLY: dict[str, Any] = {"tags": [], "metadata": {}, "memory_type": None, "created_after": None, "created_before": None}


# MemoryFilters field -> ORM lookup (empty values filter nothing).
FILTER_LOOKUPS = {
    "tags": "tags__contains",  # all of them
    "metadata": "metadata__contains",
    "scope": "scope",
    "user_id": "user_id",
    "memory_type": "memory_type",
    "store": "store__name",
    "agent": "agent__name",
    "created_after": "created_at__gte",
    "created_before": "created_at__lt",
}


# --- Listing with a cursor -----------------------------------------------------------------


def _encode_cursor(entry: MemoryEntry) -> str:
    raw = json.dumps([entry.created_at.isoformat(), str(entry.pk)]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor: str) -> tuple[datetime, uuid.UUID]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        created, pk = json.loads(raw)
        return datetime.fromisoformat(created), uuid.UUID(pk)
    except (ValueError, TypeError):
        raise ApplicationError("The cursor is not one this API gave out.", code="INVALID_CURSOR") from None


def entry_list(*, principal: Principal, filters: MemoryFilters, cursor: str | None, limit: int) -> tuple[list[MemoryEntry], str | None]:
    """Newest first; `next` is the cursor of the following page, or None."""
    entries = filtered_entries(principal=principal, filters=filters).select_related("agent", "store")
    if cursor:
        created, pk = _decode_cursor(cursor)
        entries = entries.filter(Q(created_at__lt=created) | Q(created_at=created, pk__lt=pk))
    page = list(entries.order_by("-created_at", "-pk")[: limit + 1])
    next_cursor = _encode_cursor(page[limit - 1]) if len(page) > limit else None
    return page[:limit], next_cursor


# --- Search ------------------------------------------------------------------------------------


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


@dataclass
class SearchHit:
    entry: MemoryEntry
    score: float
    semantic: float | None = None
    keyword: float | None = None
    # The better-ranked result this one repeats, when it was demoted for it.
    repeat_of: uuid.UUID | None = None
    # Ordered and scored by the reranker (MEMORYHUB_RERANK_URL).
    reranked: bool = False


@dataclass
class SearchRequest:
    filters: MemoryFilters
    query: str | None = None
    mode: str = "hybrid"
    max_results: int = DEFAULT_MAX_RESULTS
    min_relevance: float | None = None
    query_embedding: list[float] | None = None
    # Knobs the retrieval benchmark turns; the API uses the defaults.
    fusion: str = "weighted"  # or "rrf": reciprocal rank fusion, k=60
    semantic_weight: float = SEMANTIC_WEIGHT
    keyword_match: str = "any"  # or "all" (plainto_tsquery's AND)
    repeats: str = "demote"  # or "keep"
    follow_names: str = "results"  # or "all", "off"
    # None: the hub's default, reranked where a reranker is configured and there is a
    # question in words; True asks for it (400 where it cannot be), False declines it.
    rerank: bool | None = None


def _keyword_rank_sql(match: str, column: str = "search_vector") -> str:
    # Normalisation 32 maps the rank into [0, 1): rank / (rank + 1).
    return f"ts_rank({column}, {TSQUERY_SQL[match]}, 32)"


def memory_search(*, principal: Principal, request: SearchRequest) -> list[SearchHit]:
    if request.mode not in MODES:
        raise ApplicationError(f"Unknown mode {request.mode!r}.", code="INVALID_MODE", details={"modes": list(MODES)})
    limit = max(1, min(request.max_results, settings.MEMORYHUB_MAX_SEARCH_RESULTS))
    rerank = _reranks(request)
    read = max(limit, settings.MEMORYHUB_RERANK_CANDIDATES) if rerank else 0  # what the reranker reads
    entries = filtered_entries(principal=principal, filters=request.filters)
    if not request.query and request.query_embedding is None:
        # No question: a filtered listing, newest first; every match scores 1.
        page = entries.select_related("agent", "store").order_by("-created_at", "-pk")[:limit]
        return [SearchHit(entry=e, score=1.0) for e in page]

    # Candidates per leg: fusion needs more than the final count to reorder well.
    pool = max(40, limit * 4, read)
    use_semantic = request.mode in ("semantic", "hybrid")
    use_keyword = request.mode in ("keyword", "hybrid") and bool(request.query)
    vector = None
    if use_semantic:
        provider = get_provider()
        if request.query_embedding is not None:
            vector = checked_embedding(request.query_embedding, provider.dimensions)
        else:
            vector = provider.embed_question(request.query or "")
    ranked = _candidates(
        entries, vector=vector if use_semantic else None, query=request.query if use_keyword else None, pool=pool,
        match=request.keyword_match, principal=principal, filters=request.filters,
    )
    # Candidates are scored as plain records: building a model instance for each of the
    # ~100 of them cost more than the fusion itself.
    results = [_Candidate(pk, created_at.timestamp(), semantic, keyword) for pk, created_at, semantic, keyword in ranked]
    _score(results, request)
    results.sort(key=lambda c: (-c.score, -c.created_at))
    hits = _shown_hits(results, request=request, limit=limit, read=read)
    names = _names_in_best(hits, request=request)
    if names and request.follow_names == "all":
        followed = _followed_names(
            entries, results, hits, names=names, request=request, vector=vector, use_keyword=use_keyword, pool=pool,
            principal=principal,
        )
        hits = _shown_hits(followed, request=request, limit=limit, read=read)
    elif names:
        _lift_mentions(hits, names=names)
    if rerank:
        hits = _reranked(hits, question=request.query or "", read=read)
    if request.min_relevance is not None:
        hits = [h for h in hits if round(h.score, SCORE_DECIMALS) >= request.min_relevance]
    return [
        SearchHit(
            entry=h.shown.entry(), score=h.score, semantic=h.candidate.semantic, keyword=h.candidate.keyword,
            repeat_of=h.shown.repeat_of, reranked=h.reranked,
        )
        for h in hits[:limit]
    ]


@dataclass(slots=True)
class _ShownRow:
    """A shown row as read. Its instance is built only for the results returned: that
    costs ~20 µs a row, and repeats and names are looked for among more rows."""

    row: tuple[Any, ...]
    content: str
    repeat_of: uuid.UUID | None  # the first better result whose vector is this close
    similarity: float  # to it; 0.0 without one

    def entry(self) -> MemoryEntry:
        _, (entries, agents, stores) = _shown_entries_sql()
        entry = entries.read(self.row)
        entry.agent = agents.read(self.row, entries.width)
        entry.store = stores.read(self.row, entries.width + agents.width)
        return entry


@dataclass(slots=True)
class _Hit:
    candidate: _Candidate
    shown: _ShownRow
    score: float
    reranked: bool = False


def _shown_hits(results: list[_Candidate], *, request: SearchRequest, limit: int, read: int = 0) -> list[_Hit]:
    """The best of `results` (sorted) with their rows, their repeats demoted unless the
    request keeps them; more than `limit` of them when repeats or names are looked for,
    and at least `read` (what a reranker reads)."""
    demote = request.repeats == "demote"
    # Repeats and names are looked for among READ_PER_RESULT times as many results as are
    # asked for: demoted repeats leave room for the next distinct ones, and the entry a
    # name leads to is often just below them.
    reads_more = demote or request.follow_names == "results"
    window = results[: max(read, limit * READ_PER_RESULT if reads_more else limit)]
    max_distance = 1 - settings.MEMORYHUB_SEARCH_REPEAT_SIMILARITY if demote else None
    shown = _shown_entries([c.pk for c in window], repeat_max_distance=max_distance)
    hits = []
    for c in window:
        if c.pk not in shown:
            continue
        row = shown[c.pk]
        # A repeat keeps only what it adds to the result it repeats, so that scores stay
        # best first and `min_relevance` leaves repeats out before distinct results.
        score = c.score * (1 - row.similarity) if row.repeat_of is not None else c.score
        hits.append(_Hit(c, row, max(score, 0.0)))
    hits.sort(key=lambda h: -h.score)  # stable: equal scores keep the fused order
    return hits


def _reranks(request: SearchRequest) -> bool:
    """Whether the search goes through the reranker; 400 where it was asked for and
    cannot (none configured, or no question in words to read with the results)."""
    if request.rerank is False:
        return False
    configured = bool(settings.MEMORYHUB_RERANK_URL)
    if request.rerank is None:
        return configured and bool(request.query)
    if not configured:
        raise ApplicationError("No reranker is configured (MEMORYHUB_RERANK_URL).", code="RERANK_NOT_CONFIGURED")
    if not request.query:
        raise ApplicationError("rerank needs a query in words: the reranker reads it with each result.", code="VALIDATION_ERROR")
    return True


def _reranked(hits: list[_Hit], *, question: str, read: int) -> list[_Hit]:
    """The best `read` of `hits`, scored by the reranker and sorted by its scores; a
    repeat keeps only what it adds, as before. Where the reranker fails or is late, `hits`
    as they were: the search still answers, in its own order, each hit `reranked` false."""
    reranker = get_reranker()
    best = hits[:read]
    if reranker is None or not best:
        return hits
    try:
        scores = reranker.scores(query=question, documents=[h.shown.content for h in best])
    except RerankerResting:
        return hits
    except RerankError as exc:
        logger.warning("Search results left in their own order: %s.", exc)
        return hits
    for hit, score in zip(best, scores, strict=True):
        hit.score = score * (1 - hit.shown.similarity) if hit.shown.repeat_of is not None else score
        hit.reranked = True
    best.sort(key=lambda h: -h.score)  # stable: equal scores keep the search's order
    return best


def _names_in_best(hits: list[_Hit], *, request: SearchRequest) -> list[str]:
    """The names worth following from the best hits, if the request follows any."""
    if request.follow_names == "off" or not request.query or not hits:
        return []
    return names_to_follow(
        question=request.query, followed=[h.shown.content for h in hits[:FOLLOWED_RESULTS]], seen=[h.shown.content for h in hits]
    )


def _lift_mentions(hits: list[_Hit], *, names: list[str]) -> None:
    """Add FOLLOWED_NAME_BONUS to the hits after the best ones that mention one of
    `names`, then sort them again: following names among the rows already read."""
    mentions = _mentions(names)
    for hit in hits[FOLLOWED_RESULTS:]:
        if mentions.search(hit.shown.content):
            hit.score = min(1.0, hit.score + FOLLOWED_NAME_BONUS)
    hits.sort(key=lambda h: -h.score)


def _followed_names(
    entries: QuerySet[MemoryEntry], results: list[_Candidate], hits: list[_Hit], *, names: list[str], request: SearchRequest,
    vector: list[float] | None, use_keyword: bool, pool: int, principal: Principal,
) -> list[_Candidate]:
    """`results` with the entries that mention `names` (found in the best hits), each
    with FOLLOWED_NAME_BONUS added, sorted: following names among all the entries the
    search covers.

    The names' entries are ranked for the same question and with the same scores as the
    first round, routed as it was: exactly for a small set (a name narrows a user's
    entries to a few), through HNSW for a large one, where a common name could match
    too many entries to score them all."""
    mentioning = entries.filter(TsMatch(F("search_vector"), KeywordQuery(" ".join(names))))
    ranked = _candidates(
        mentioning, vector=vector, query=request.query if use_keyword else None, pool=pool, match=request.keyword_match,
        principal=principal, filters=request.filters,
    )
    known = {c.pk for c in results}
    merged = results + [_Candidate(pk, created.timestamp(), semantic, keyword) for pk, created, semantic, keyword in ranked if pk not in known]
    _score(merged, request)
    followed = {h.candidate.pk for h in hits[:FOLLOWED_RESULTS]}
    mention = {row[0] for row in ranked} - followed
    for c in merged:
        if c.pk in mention:
            c.score = min(1.0, c.score + FOLLOWED_NAME_BONUS)
    merged.sort(key=lambda c: (-c.score, -c.created_at))
    return merged


def names_to_follow(*, question: str, followed: list[str], seen: list[str]) -> list[str]:
    """The names in `followed` (the best results' texts) worth following: not in the
    question, and in at most a quarter of `seen` (all the rows read; or two of them,
    for few): a name every entry has (the user's own, a speaker's) leads nowhere.

    Only the few names found are counted in `seen`: splitting every text into words to
    count them all cost more than the rest of following together."""
    asked = {w.lower() for w in _WORD.findall(question)}
    names: list[str] = []
    for text in followed:
        for name in _NAME.findall(text):
            low = name.lower()
            if low not in asked and low not in _NOT_NAMES and not low.startswith("i'") and name not in names:
                names.append(name)
    if not names:
        return []
    limit = max(len(seen) / 4, 2)
    kept = []
    for name in names:
        mentions = _mentions([name])
        if sum(1 for text in seen if mentions.search(text)) <= limit:
            kept.append(name)
    return kept


def _mentions(names: list[str]) -> re.Pattern[str]:
    return re.compile(r"(?<![\w'-])(?:" + "|".join(map(re.escape, names)) + r")(?![\w'-])", re.IGNORECASE)


def _shown_entries(pks: list[uuid.UUID], *, repeat_max_distance: float | None) -> dict[uuid.UUID, _ShownRow]:
    """The shown rows whole (without their vectors), with their agent and store, by id,
    each with the first result before it in `pks` (best first) whose vector is within
    `repeat_max_distance` of its own (cosine distance, same model).

    The ids come from the ranking statement, which applied every visibility rule and
    filter. One deleted or expired since that statement is left out, not failed on.

    One prepared statement: built by the ORM (`in_bulk` with `select_related`) the same
    read cost 3-5 ms, most of it compiling the query, against 0.6-0.8 ms. The vectors
    are compared in it, never leaving the database: 20 rows with their repeats read in
    0.35 ms at 100,000 entries, 10 without in 0.25."""
    if not pks:
        return {}
    sql, (entries, agents, stores) = _shown_entries_sql()
    with prepared_cursor() as cursor:
        cursor.execute(sql, [pks, timezone.now(), repeat_max_distance], prepare=True)
        rows = cursor.fetchall()
    width = entries.width + agents.width + stores.width
    pk, content = entries.index("id"), entries.index("content")
    return {
        row[pk]: _ShownRow(row, row[content], row[width], 0.0 if row[width + 1] is None else 1 - float(row[width + 1]))
        for row in rows
    }


@cache
def _shown_entries_sql() -> tuple[str, tuple[RowReader[MemoryEntry], RowReader[Agent], RowReader[Store]]]:
    readers = (RowReader(MemoryEntry, "e", leave_out=("embedding", "search_vector")), RowReader(Agent, "a"), RowReader(Store, "s"))
    table = MemoryEntry._meta.db_table
    sql = (
        f"WITH e AS MATERIALIZED ("
        f"  SELECT u.rank, m.* FROM unnest(%s::uuid[]) WITH ORDINALITY AS u(id, rank) JOIN {table} m ON m.id = u.id"
        # MemoryEntryQuerySet.live(), in SQL.
        "   WHERE m.expires_at IS NULL OR m.expires_at > %s"
        f") SELECT {', '.join(reader.columns for reader in readers)}, r.id, r.distance FROM e "
        f"JOIN {Agent._meta.db_table} a ON a.id = e.agent_id JOIN {Store._meta.db_table} s ON s.id = e.store_id "
        "LEFT JOIN LATERAL ("
        "  SELECT better.id, better.distance FROM ("
        # The CASE keeps vectors of other dimensions apart: `<=>` fails on them.
        "    SELECT b.id, b.rank, CASE WHEN b.embedding_model = e.embedding_model AND b.embedding_dim = e.embedding_dim"
        "      THEN b.embedding <=> e.embedding END AS distance FROM e b WHERE b.rank < e.rank"
        "  ) better WHERE better.distance <= %s ORDER BY better.rank LIMIT 1"
        ") r ON true ORDER BY e.rank"
    )
    return sql, readers


@dataclass(slots=True)
class _Candidate:
    pk: uuid.UUID
    created_at: float  # a timestamp: only ever compared
    semantic: float | None
    keyword: float | None
    score: float = 0.0


def _score(results: list[_Candidate], request: SearchRequest) -> None:
    """Set each candidate's score for the request's mode (README, "Search and scores")."""
    if request.mode == "hybrid" and request.fusion == "rrf":
        by_semantic = sorted(results, key=lambda h: -(h.semantic if h.semantic is not None else -1.0))
        by_keyword = sorted([h for h in results if h.keyword], key=lambda h: -(h.keyword or 0.0))
        fused = {h.pk: 0.0 for h in results}
        for ranking in (by_semantic, by_keyword):
            for rank, hit in enumerate(ranking):
                fused[hit.pk] += 1.0 / (60 + rank + 1)
        for hit in results:
            hit.score = fused[hit.pk] * 30.5  # 1.0 for a hit ranked first by both legs
    elif request.mode == "hybrid":
        best_keyword = max((h.keyword or 0.0 for h in results), default=0.0)
        for hit in results:
            relative_keyword = (hit.keyword or 0.0) / best_keyword if best_keyword > 0 else 0.0
            weight = request.semantic_weight
            hit.score = weight * max(hit.semantic or 0.0, 0.0) + (1 - weight) * relative_keyword
    elif request.mode == "semantic":
        for hit in results:
            hit.score = max(hit.semantic or 0.0, 0.0)
    else:
        best_keyword = max((h.keyword or 0.0 for h in results), default=0.0)
        for hit in results:
            hit.score = (hit.keyword or 0.0) / best_keyword if best_keyword > 0 else 0.0


def _candidates(
    entries: QuerySet[MemoryEntry], *, vector: list[float] | None, query: str | None, pool: int, match: str = "any",
    principal: Principal, filters: MemoryFilters,
) -> list[tuple[uuid.UUID, datetime, float | None, float | None]]:
    """The union of each leg's best `pool` rows with both scores of every candidate, in
    one statement that returns ids, dates and scores only: (id, created_at, cosine
    similarity or None, keyword rank or None).

    The semantic leg is routed by the size of the filtered set (DESIGN.md, measured
    facts): small sets are searched exactly, which is both faster and exact there; large
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
        if not _is_large(principal=principal, filters=filters, model_id=provider.model_id, dim=len(vector)):
            return _exact_candidates(entries, vector=vector, model_id=provider.model_id, query=query, pool=pool, match=match)
        hnsw = True
        dim = len(vector)
        literal = vector_literal(vector)
        semantic_sql = _semantic_sql(table, dim)
        score_params += [provider.model_id, dim, literal]
    if query:
        keyword_sql = _keyword_rank_sql(match, f"{table}.search_vector")
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
            f"ORDER BY {_keyword_rank_sql(match, f'{table}.search_vector')} DESC, {table}.created_at DESC, {table}.id LIMIT {int(pool)}",
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
    """`_candidates` for a filtered set small enough to search exactly, in one pass over
    it: both scores of every row, then each leg's best `pool` by window functions.

    Built as two legs (an exact scan for meaning, a full-text index scan for words) the
    statement found the filtered rows twice, through the same bitmap indexes, and the
    ORM took about as long to build it as PostgreSQL to run it: at 100,000 entries this
    step went from p50 15.7 ms (8.1 of them SQL) to 9.9 (4.8), and a heavy user's
    statement from 14 ms to 9 (README, "Search and scores"), then to 5.1 with top-N
    sorts for the legs' pools."""
    table = connection.ops.quote_name(MemoryEntry._meta.db_table)
    source, filtered_params = _filtered_source(entries)
    dim = len(vector)
    semantic_sql = _semantic_sql(table, dim)
    params: list[Any] = [model_id, dim, vector_literal(vector)]
    keyword_sql = "NULL::float4"
    if query:
        tsquery = TSQUERY_SQL[match]
        keyword_sql = f"CASE WHEN {table}.search_vector @@ {tsquery} THEN {_keyword_rank_sql(match, f'{table}.search_vector')} END"
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


# Routing estimates: {estimate key: (estimate, taken at)}.
_estimates: dict[tuple[Any, ...], tuple[int, float]] = {}
_ESTIMATES_KEPT = 10_000


def _scored(rows: list[tuple[Any, ...]]) -> list[tuple[uuid.UUID, datetime, float | None, float | None]]:
    """(id, created_at, semantic, keyword) rows of a ranking statement, scores as floats."""
    return [
        (pk, created_at, None if semantic is None else float(semantic), None if keyword is None else float(keyword))
        for pk, created_at, semantic, keyword in rows
    ]


def _is_large(*, principal: Principal, filters: MemoryFilters, model_id: str, dim: int) -> bool:
    """Whether the search's filtered set is too many rows to search exactly.

    The same search without the filters that only narrow it is asked first: an agent asks
    about one user with tags that change from turn to turn, and a user small enough is
    then routed without planning each new set of tags."""
    limit = settings.MEMORYHUB_EXACT_SEARCH_MAX_ROWS
    wider = replace(filters, **NARROWING_ONLY)
    bound = _user_rows_bound(filters.user_id) if filters.user_id is not None else None
    if bound is not None and bound <= limit and (
        wider != filters or bound <= settings.MEMORYHUB_USER_INDEX_EXACT_MAX_ROWS
        or (principal.workspace.pk, filters.user_id, dim) not in _users_with_own_index()
    ):
        # Whatever else the search filters on, the planner's estimate of its set is at
        # most this: the same decision the estimates below would make, without their plan.
        return False
    if wider != filters and _estimated_rows(principal=principal, filters=wider, model_id=model_id, dim=dim) <= limit:
        return False
    rows = _estimated_rows(principal=principal, filters=filters, model_id=model_id, dim=dim)
    if rows > limit:
        return True
    # A user with an index of their own: a few thousand of their rows, one heap page each,
    # take longer to rank exactly than their own graph takes to walk (README, "Search and
    # scores"). Asked only of sets this large, so most searches never ask it.
    return (
        filters.user_id is not None and rows > settings.MEMORYHUB_USER_INDEX_EXACT_MAX_ROWS
        and (principal.workspace.pk, filters.user_id, dim) in _users_with_own_index()
    )


class _Kept[T]:
    """A value read from the database again once MEMORYHUB_SEARCH_ESTIMATE_SECONDS have
    passed since it was last read (every time at 0): what routing knows of the table,
    kept as its estimates are."""

    def __init__(self, read: Callable[[], T]) -> None:
        self._read = read
        self._value: T | None = None
        self._taken: float | None = None

    def get(self) -> T:
        now = time.monotonic()
        if self._taken is None or now - self._taken >= settings.MEMORYHUB_SEARCH_ESTIMATE_SECONDS:
            self._value, self._taken = self._read(), now
        return cast(T, self._value)

    def forget(self) -> None:
        self._taken = None


def _users_with_own_index() -> frozenset[tuple[int, str, int]]:
    """(workspace, user_id, dim) of every user with an index of their own; a handful of
    rows. A stale answer routes a search to the other, equally correct, route for those
    seconds."""
    return _own_indexes.get()


_own_indexes = _Kept(lambda: frozenset(UserVectorIndex.objects.values_list("workspace_id", "user_id", "dim")))


def _user_rows_bound(user_id: str) -> int | None:
    """At most how many rows the planner estimates any search filtered on `user_id` to
    match (None: no statistics to tell). The planner multiplies the selectivity of each
    condition of a search (no extended statistics on this table), so its estimate of a
    set filtered on the user and anything else is at most the user's selectivity times
    the table's rows; both worked out here as it works them out (eqsel, estimate_rel_size).

    Most searches are for users well under MEMORYHUB_EXACT_SEARCH_MAX_ROWS, and a user
    the hub had not been asked about in MEMORYHUB_SEARCH_ESTIMATE_SECONDS cost a search
    an EXPLAIN to route: 1.8 ms, a fifth of the searches at 100,000 entries."""
    if settings.MEMORYHUB_SEARCH_ESTIMATE_SECONDS <= 0:
        return None  # the planner is asked every time
    stats = _user_stats.get()
    if stats is None:
        return None
    frequencies, other_frequency, rows = stats
    return max(1, round(frequencies.get(user_id, other_frequency) * rows))  # rounded as the planner rounds (clamp_row_est)


def _user_column_stats() -> tuple[dict[str, float], float, float] | None:
    table = MemoryEntry._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT s.most_common_vals::text::text[], s.most_common_freqs, s.n_distinct, s.null_frac, "
            "c.reltuples, c.relpages, pg_relation_size(c.oid) / current_setting('block_size')::int "
            "FROM pg_class c LEFT JOIN pg_stats s ON s.schemaname = current_schema() AND s.tablename = c.relname "
            "AND s.attname = 'user_id' AND NOT s.inherited "
            "WHERE c.oid = to_regclass(%s)",
            [table],
        )
        found = cursor.fetchone()
    if found is None:
        return None
    values, frequencies, distinct, null_fraction, reltuples, relpages, pages = found
    if distinct is None or reltuples is None or reltuples < 0 or relpages <= 0:
        return None  # never analysed: the planner guesses from the table's width
    # The rows the planner counts: the density ANALYZE saw, over the pages there are now.
    rows = reltuples / relpages * pages
    values, frequencies = values or [], frequencies or []
    # A user outside the most common values: the rest of the rows shared evenly among the
    # rest of the distinct values, and never more than the least common listed value.
    other = min(max(1.0 - sum(frequencies) - null_fraction, 0.0), 1.0)
    distinct = distinct if distinct >= 0 else -distinct * rows
    if distinct - len(values) > 1:
        other /= distinct - len(values)
    if frequencies:
        other = min(other, frequencies[-1])
    return dict(zip(values, frequencies, strict=True)), other, rows


# The planner's statistics of the user_id column: (MCV frequencies by user, the others'
# frequency each, live rows), or None where the table has none yet.
_user_stats = _Kept(_user_column_stats)


def _estimated_rows(*, principal: Principal, filters: MemoryFilters, model_id: str, dim: int) -> int:
    """The planner's estimate of how many rows of the caller's with this model's vectors
    match `filters`: costs a plan, not a scan.

    Counting the rows exactly (even with a LIMIT) meant fetching every row of a heavy
    user from the heap to check its other filters: most of a search's time at 1M rows.

    An agent asks about the same user with the same filters turn after turn, so the
    estimate is kept for MEMORYHUB_SEARCH_ESTIMATE_SECONDS: planning it was a round trip
    and a plan of its own on every search (README, "Search and scores"). A stale estimate
    only routes a search to the other, equally correct, leg for those seconds.
    """
    ttl = settings.MEMORYHUB_SEARCH_ESTIMATE_SECONDS
    # Who sees what (DESIGN.md, tenancy) and what they ask for; not the SQL, which would
    # have to be built first, as it was: that cost as much as the estimate saved.
    seen = (principal.agent.pk, tuple(sorted(s.pk for s in principal.stores))) if principal.is_agent else None
    key = (principal.workspace.pk, seen, repr(filters), model_id, dim)
    now = time.monotonic()
    cached = _estimates.get(key)
    if cached is not None and now - cached[1] < ttl:
        return cached[0]
    rows = filtered_entries(principal=principal, filters=filters).filter(embedding_model=model_id, embedding_dim=dim)
    plan = json.loads(rows.values("pk").explain(format="json"))
    estimate = int(plan[0]["Plan"]["Plan Rows"])
    if ttl > 0:
        if len(_estimates) >= _ESTIMATES_KEPT:
            _estimates.clear()  # cheaper than an LRU, and refilled by the next searches
        _estimates[key] = (estimate, now)
    return estimate


# --- Stats -------------------------------------------------------------------------------------


def memory_stats(*, principal: Principal, user_id: str | None) -> dict[str, Any]:
    entries = visible_entries(principal)
    if user_id:
        entries = entries.filter(user_id=user_id)
    by_type = dict(entries.current().values_list("memory_type").annotate(n=Count("pk")).order_by())
    by_scope = dict(entries.current().values_list("scope").annotate(n=Count("pk")).order_by())
    storage = entries.aggregate(
        bytes=Sum(
            Func(F("content"), function="pg_column_size", output_field=IntegerField())
            + Func(F("embedding"), function="pg_column_size", output_field=IntegerField())
        )
    )["bytes"]
    provider = get_provider()
    return {
        "memories": {
            "total": sum(by_type.values()),
            "by_type": {t: by_type.get(t, 0) for t in MemoryType.values},
            "by_scope": {s: by_scope.get(s, 0) for s in Scope.values},
            "invalidated_facts": entries.filter(invalidated_at__isnull=False).count(),
            "expiring": entries.current().filter(expires_at__isnull=False).count(),
        },
        "storage_bytes": int(storage or 0),
        "embedding_model": {"model": provider.model_id, "dimensions": provider.dimensions},
        "as_of": timezone.now(),
    }


def fact_history(*, principal: Principal, entry: MemoryEntry) -> list[MemoryEntry]:
    """Every version of the fact `entry` holds (same agent, store, user, subject and
    predicate), oldest first; [] for entries that are not facts."""
    if entry.fact_key is None:
        return []
    return list(
        visible_entries(principal)
        .filter(agent_id=entry.agent_id, store_id=entry.store_id, user_id=entry.user_id, fact_key=entry.fact_key)
        .order_by("created_at")
    )
