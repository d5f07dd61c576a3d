"""End users with many entries get indexes of their own (HNSW and keyword): built in the
background, taken by their searches, dropped when they shrink or are purged. Built concurrently, so
these tests run outside a wrapping transaction (transactional_db)."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from memoryhub.memory.models import GIN_PENDING_LIST_KB, MemoryEntry, UserVectorIndex
from memoryhub.memory.tasks import index_heavy_users
from memoryhub.memory.vector_index import index_pending_vectors, user_index_name, user_vector_indexes_refresh, words_index_name
from tests.conftest import Actors, api_client, purge_finished, search

HEAVY = "maria@example.com"
LIGHT = "u-light"

pytestmark = pytest.mark.usefixtures("transactional_db")


@pytest.fixture(autouse=True)
def no_indexes_left_behind(transactional_db: None) -> Iterator[None]:
    """Indexes are schema, not rows: the flush between tests would leave them, and the
    next test's refresh would drop them."""
    yield
    user_vector_indexes_refresh(min_rows=0)

# Heavy from 30 entries; such a user's searches of more than 5 rows take their index, and
# nobody else's leaves the exact route.
SMALL_HUB = override_settings(
    MEMORYHUB_USER_INDEX_MIN_ROWS=30, MEMORYHUB_USER_INDEX_EXACT_MAX_ROWS=5, MEMORYHUB_EXACT_SEARCH_MAX_ROWS=1000,
    MEMORYHUB_SEARCH_ESTIMATE_SECONDS=0,
)

TOPICS = ["sailing in Croatia", "her sister's bakery", "learning the cello", "a broken bicycle", "tax forms", "the garden shed"]


def write(actors: Actors, user_id: str, count: int) -> None:
    items = [{"content": f"{user_id} note {n} about {TOPICS[n % len(TOPICS)]}", "user_id": user_id} for n in range(count)]
    response = api_client(actors.bot_key).post("/api/v1/memories/batch", {"items": items}, format="json")
    assert response.status_code == 201, response.content[:300]
    index_pending_vectors()
    with connection.cursor() as cursor:  # the statistics autovacuum would have gathered, which route searches
        cursor.execute("ANALYZE memory_memoryentry")


def own_indexes() -> dict[str, bool]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname ~ '_u[0-9a-f]+$'"
        )
        return dict(cursor.fetchall())


def indexes_read_by(statement: str) -> str:
    """The plan of a captured ranking statement, as the search ran it."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true)")
        # A few dozen rows are cheaper read and sorted than walked as a graph; at scale
        # the planner walks one, and which one is what this asks.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute(f"EXPLAIN {statement}")
        return "\n".join(row[0] for row in cursor.fetchall())


@SMALL_HUB
def test_it_builds_an_index_for_a_heavy_user_only(actors: Actors) -> None:
    write(actors, HEAVY, 40)
    write(actors, LIGHT, 10)

    assert index_heavy_users() == {"built": 1, "dropped": 0}

    record = UserVectorIndex.objects.get()
    assert (record.workspace_id, record.user_id, record.entries) == (actors.workspace.pk, HEAVY, 40)
    assert own_indexes() == {record.name: True, words_index_name(record.name): True}
    with connection.cursor() as cursor:  # every search of theirs reads its pending list whole
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = %s", [words_index_name(record.name)])
        assert cursor.fetchone()[0] == [f"gin_pending_list_limit={GIN_PENDING_LIST_KB}"]
    assert HEAVY not in record.name and "maria" not in record.name  # names show up in plans and logs
    assert user_vector_indexes_refresh() == {"built": 0, "dropped": 0}  # nothing new to do


@SMALL_HUB
def test_a_heavy_users_search_reads_their_index_and_finds_what_the_exact_route_finds(actors: Actors) -> None:
    write(actors, HEAVY, 40)
    write(actors, LIGHT, 20)
    question = {"query": "who plays the cello?", "user_id": HEAVY, "max_results": 5, "repeats": "keep"}
    with override_settings(MEMORYHUB_USER_INDEX_EXACT_MAX_ROWS=1000):
        exact = [hit["entry"]["id"] for hit in search(actors.bot_key, **question)]
    user_vector_indexes_refresh()
    name = UserVectorIndex.objects.get().name

    with CaptureQueriesContext(connection) as queries:
        hits = search(actors.bot_key, **question)

    assert [hit["entry"]["id"] for hit in hits] == exact
    assert all(hit["entry"]["user_id"] == HEAVY for hit in hits)
    ranking = next(q["sql"] for q in queries.captured_queries if "<=>" in q["sql"] and "UNION" in q["sql"])
    plan = indexes_read_by(ranking)
    assert name in plan  # the semantic leg
    assert words_index_name(name) in plan  # the keyword leg
    light = search(actors.bot_key, query="who plays the cello?", user_id=LIGHT, max_results=5)
    assert light and all(hit["entry"]["user_id"] == LIGHT for hit in light)  # the light user's own rows, exactly


@SMALL_HUB
def test_it_drops_the_index_of_a_user_fallen_under_half_the_size(actors: Actors) -> None:
    write(actors, HEAVY, 40)
    user_vector_indexes_refresh()
    MemoryEntry.objects.filter(user_id=HEAVY, content__contains="bakery").delete()  # 33 left: still kept
    assert user_vector_indexes_refresh() == {"built": 0, "dropped": 0}

    MemoryEntry.objects.filter(user_id=HEAVY).exclude(content__contains="cello").delete()

    assert user_vector_indexes_refresh() == {"built": 0, "dropped": 1}
    assert own_indexes() == {}
    assert not UserVectorIndex.objects.exists()


@SMALL_HUB
def test_it_drops_every_users_index_when_switched_off(actors: Actors) -> None:
    write(actors, HEAVY, 40)
    user_vector_indexes_refresh()
    with override_settings(MEMORYHUB_USER_INDEX_MIN_ROWS=0):
        assert user_vector_indexes_refresh() == {"built": 0, "dropped": 1}
    assert own_indexes() == {}


@SMALL_HUB
def test_it_rebuilds_an_index_whose_build_was_cut_short(actors: Actors) -> None:
    write(actors, HEAVY, 40)
    user_vector_indexes_refresh()
    record = UserVectorIndex.objects.get()
    with connection.cursor() as cursor:  # what a build killed half-way leaves: an invalid index
        cursor.execute("UPDATE pg_index SET indisvalid = false WHERE indexrelid = %s::regclass", [record.name])

    assert user_vector_indexes_refresh() == {"built": 1, "dropped": 1}
    assert own_indexes() == {record.name: True, words_index_name(record.name): True}
    assert UserVectorIndex.objects.get().name == record.name


@SMALL_HUB
def test_a_purge_takes_the_users_index_out_of_the_catalog(actors: Actors) -> None:
    write(actors, HEAVY, 40)
    user_vector_indexes_refresh()
    name = user_index_name(workspace_id=actors.workspace.pk, user_id=HEAVY, dim=UserVectorIndex.objects.get().dim)
    assert own_indexes() == {name: True, words_index_name(name): True}

    started = api_client(actors.owner_key).post("/api/v1/purges", {"user_id": HEAVY}, format="json").json()

    purge_finished(started["id"], storage_cleaned=True)
    assert own_indexes() == {}
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_indexes WHERE indexdef LIKE %s", [f"%{HEAVY}%"])
        assert cursor.fetchone()[0] == 0  # the user_id is nowhere in the catalog
    receipt = api_client(actors.owner_key).get(f"/api/v1/purges/{started['id']}").json()["receipt"]
    assert receipt["deleted"]["memory.UserVectorIndex"] == 1


def test_it_is_nobodys_business_outside_the_workspace(actors: Actors) -> None:
    # A user_id of the same name in another workspace is another user: another index.
    mine = user_index_name(workspace_id=actors.workspace.pk, user_id=HEAVY, dim=384)
    theirs = user_index_name(workspace_id=actors.foreign_workspace.pk, user_id=HEAVY, dim=384)
    assert mine != theirs and len(mine) <= 63


@SMALL_HUB
def test_an_operator_can_build_them_at_once(actors: Actors) -> None:
    write(actors, HEAVY, 40)
    output = io.StringIO()

    call_command("index_heavy_users", stdout=output)

    assert "built 1, dropped 0" in output.getvalue()
    assert "users with indexes of their own: 1" in output.getvalue()
    assert UserVectorIndex.objects.filter(user_id=HEAVY).exists()


@SMALL_HUB
def test_it_gives_them_to_the_largest_users_only_when_capped(actors: Actors) -> None:
    write(actors, LIGHT, 35)
    write(actors, HEAVY, 45)
    with override_settings(MEMORYHUB_USER_INDEX_MAX_USERS=1):
        assert user_vector_indexes_refresh() == {"built": 1, "dropped": 0}
    assert list(UserVectorIndex.objects.values_list("user_id", flat=True)) == [HEAVY]
