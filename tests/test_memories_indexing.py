"""Writes land outside the HNSW index and are indexed in the background; search finds
them either way."""

from __future__ import annotations

import json
from typing import Any

from django.db import connection, transaction
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from memoryhub.memory.models import GIN_PENDING_LIST_KB, MemoryEntry
from memoryhub.memory.tasks import index_vectors
from memoryhub.memory.vector_index import index_pending_vectors
from tests.conftest import Actors, api_client, remember, search


def test_it_indexes_new_entries_in_the_background(actors: Actors) -> None:
    entry = remember(actors.bot_key, "the red fox jumps")
    assert MemoryEntry.objects.get(pk=entry["id"]).vector_indexed is False
    assert index_vectors() == 1
    assert MemoryEntry.objects.get(pk=entry["id"]).vector_indexed is True
    assert index_pending_vectors() == 0


def test_it_takes_an_edited_entry_out_of_the_index_until_reindexed(actors: Actors) -> None:
    entry = remember(actors.bot_key, "the red fox jumps")
    index_pending_vectors()
    api_client(actors.bot_key).patch(f"/api/v1/memories/{entry['id']}", {"content": "the blue whale sings"}, format="json")
    assert MemoryEntry.objects.get(pk=entry["id"]).vector_indexed is False


@override_settings(MEMORYHUB_EXACT_SEARCH_MAX_ROWS=0)
def test_the_approximate_path_finds_indexed_and_fresh_entries(actors: Actors) -> None:
    # With the threshold at 0 every search takes the HNSW path.
    items = [{"content": f"background note {i} about spreadsheets", "user_id": "u1"} for i in range(30)]
    api_client(actors.bot_key).post("/api/v1/memories/batch", {"items": items}, format="json")
    index_pending_vectors()
    old = remember(actors.bot_key, "penguins huddle together in Antarctic winters")
    index_pending_vectors()
    fresh = remember(actors.bot_key, "koalas sleep most of the day in eucalyptus trees")
    assert MemoryEntry.objects.get(pk=fresh["id"]).vector_indexed is False
    assert search(actors.bot_key, query="penguins in the cold", mode="semantic")[0]["entry"]["id"] == old["id"]
    assert search(actors.bot_key, query="sleepy koala", mode="semantic")[0]["entry"]["id"] == fresh["id"]
    assert search(actors.bot_key, query="sleepy koala")[0]["entry"]["id"] == fresh["id"]


def _rows_read_for_the_waiting(plan: dict[str, Any]) -> list[int]:
    """For every scan of the rows waiting for the indexer in an EXPLAIN ANALYZE plan
    (JSON): through their own partial index, or any other with `NOT vector_indexed` as a
    condition; the rows it read, those it passed on and those it removed, over its loops."""
    read = []
    conditions = " ".join(str(plan.get(key, "")) for key in ("Index Cond", "Filter", "Recheck Cond"))
    if plan.get("Index Name") == "memory_unindexed_user" or "NOT vector_indexed" in conditions:
        rows = plan.get("Actual Rows", 0) + plan.get("Rows Removed by Filter", 0) + plan.get("Rows Removed by Index Recheck", 0)
        read.append(int(rows * plan.get("Actual Loops", 1)))
    for child in plan.get("Plans", []):
        read += _rows_read_for_the_waiting(child)
    return read


@override_settings(MEMORYHUB_EXACT_SEARCH_MAX_ROWS=0)
def test_it_reads_only_the_asked_users_rows_waiting_for_the_indexer(actors: Actors) -> None:
    # Through HNSW, the rows not yet in it are ranked exactly beside it. After a burst of
    # writes about other users a search about u2 must not read their backlog: at 1M
    # entries that cost every such search ~40 ms until the indexer caught up.
    items = [{"content": f"burst note {i} about invoices", "user_id": "u1"} for i in range(40)]
    api_client(actors.bot_key).post("/api/v1/memories/batch", {"items": items}, format="json")
    mine = remember(actors.bot_key, "Maria waters the ficus every Sunday", user_id="u2")
    with CaptureQueriesContext(connection) as queries:
        hits = search(actors.bot_key, query="who waters the plants?", user_id="u2")
    assert [hit["entry"]["id"] for hit in hits] == [mine["id"]]
    ranking = next(q["sql"] for q in queries.captured_queries if "vector_indexed" in q["sql"] and " UNION " in q["sql"])
    with transaction.atomic(), connection.cursor() as cursor:
        # A table this small is read whole by the planner's choice; with that ruled out,
        # whichever index it takes for the waiting rows must narrow them to the user (which
        # one is its call on a table this size, and moves with its statistics: CI took
        # another than ours once).
        cursor.execute("SET LOCAL enable_seqscan = off")
        # Statistics as autovacuum would leave them: the planner's pick among indexes on a
        # table this small followed whether it had run yet (one CI run read u1's backlog).
        cursor.execute("ANALYZE memory_memoryentry")
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + ranking)
        plan = cursor.fetchone()[0]
    plan = plan if isinstance(plan, list) else json.loads(plan)
    read = _rows_read_for_the_waiting(plan[0]["Plan"])
    assert read and max(read) < len(items), read  # u2's waiting row, never u1's backlog


def test_it_keeps_the_pending_lists_of_its_gin_indexes_small(actors: Actors) -> None:
    # Every search that uses a GIN index reads its pending list whole: after a batch of
    # writes, and after the indexer has rewritten those rows, at most GIN_PENDING_LIST_KB
    # may wait there in any of them (the migration bounds them in place).
    words = "garden shed ladder paint brush hammer nails fence gate hinge roof gutter moss lawn hedge rake shovel"
    items = [
        {"content": f"note {n}: {words} {n * 7919}", "user_id": f"user-{n % 7}", "tags": ["home", f"t{n % 13}"], "metadata": {"n": n, "room": f"r{n}"}}
        for n in range(500)
    ]
    assert api_client(actors.bot_key).post("/api/v1/memories/batch", {"items": items}, format="json").status_code == 201
    assert index_pending_vectors() == 500
    with connection.cursor() as cursor:
        cursor.execute("CREATE EXTENSION IF NOT EXISTS pgstattuple")
        cursor.execute("SELECT relname, (pgstatginindex(oid)).pending_pages FROM pg_class WHERE relkind = 'i' AND relname LIKE 'memory%%gin'")
        pending = dict(cursor.fetchall())
    assert pending.keys() == {"memory_tags_gin", "memory_user_tags_gin", "memory_metadata_gin", "memory_search_gin"}
    assert max(pending.values()) <= GIN_PENDING_LIST_KB // 8, pending  # 8 kB pages
