"""The rows a search shows: its best candidates read whole in one prepared statement,
with the better result each one repeats (demoted unless the request keeps repeats)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from functools import cache
from typing import Any

from django.conf import settings
from django.utils import timezone

from memoryhub.core.models import Agent, Store
from memoryhub.core.sql import RowReader, prepared_cursor
from memoryhub.memory.models import MemoryEntry
from memoryhub.memory.search.candidates import Candidate
from memoryhub.memory.search.request import READ_PER_RESULT, SearchRequest


@dataclass(slots=True)
class ShownRow:
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
class Hit:
    candidate: Candidate
    shown: ShownRow
    score: float
    reranked: bool = False


def shown_hits(results: list[Candidate], *, request: SearchRequest, limit: int, read: int = 0) -> list[Hit]:
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
        hits.append(Hit(c, row, max(score, 0.0)))
    hits.sort(key=lambda h: -h.score)  # stable: equal scores keep the fused order
    return hits


def _shown_entries(pks: list[uuid.UUID], *, repeat_max_distance: float | None) -> dict[uuid.UUID, ShownRow]:
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
        row[pk]: ShownRow(row, row[content], row[width], 0.0 if row[width + 1] is None else 1 - float(row[width + 1]))
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
