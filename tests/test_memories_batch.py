from __future__ import annotations

from django.db import connection
from django.test import override_settings

from memoryhub.core.priority import thread_niceness
from memoryhub.memory.models import MemoryEntry
from tests.conftest import Actors, api_client, assert_error, search


def batch(key: str, items: list[dict]) -> object:
    return api_client(key).post("/api/v1/memories/batch", {"items": items}, format="json")


def test_it_creates_all_items(actors: Actors) -> None:
    items = [{"content": f"fact number {i} about otters", "user_id": "u1", "tags": ["otters"]} for i in range(20)]
    response = batch(actors.bot_key, items)
    assert response.status_code == 201
    created = response.json()["items"]
    assert [c["content"] for c in created] == [i["content"] for i in items]
    assert len(search(actors.bot_key, tags=["otters"], max_results=50)) == 20
    assert search(actors.bot_key, query="otter facts", mode="semantic")[0]["entry"]["tags"] == ["otters"]


def test_it_stores_nothing_when_one_item_is_bad(actors: Actors) -> None:
    items = [{"content": "good", "user_id": "u1"}, {"content": "bad", "user_id": "u1", "memory_type": "factual", "data": {}}]
    assert_error(batch(actors.bot_key, items), 400, "INVALID_DATA")
    items = [{"content": "good", "user_id": "u1"}, {"content": "bad", "user_id": ""}]
    error = assert_error(batch(actors.bot_key, items), 400, "VALIDATION_ERROR")
    assert "items" in error["details"]["fields"]
    assert MemoryEntry.objects.count() == 0


def test_it_mixes_keyed_facts_and_plain_items_in_order(actors: Actors) -> None:
    items = [
        {"content": "plain", "user_id": "u1"},
        {"content": "keyed", "user_id": "u1", "key": "k1"},
        {"content": "Bob works at Acme", "user_id": "u1", "memory_type": "factual", "data": {"subject": "Bob", "predicate": "works at", "object": "Acme"}},
    ]
    created = batch(actors.bot_key, items).json()["items"]
    assert [c["content"] for c in created] == ["plain", "keyed", "Bob works at Acme"]
    assert created[1]["key"] == "k1"


def test_it_refuses_empty_and_oversized_batches(actors: Actors) -> None:
    assert_error(batch(actors.bot_key, []), 400, "VALIDATION_ERROR")
    with override_settings(MEMORYHUB_MAX_BATCH_ITEMS=500):
        items = [{"content": "x", "user_id": "u1"}] * 501
        assert_error(batch(actors.bot_key, items), 400, "VALIDATION_ERROR")
    assert_error(api_client(actors.bot_key).post("/api/v1/memories/batch", {"items": "x"}, format="json"), 400, "VALIDATION_ERROR")
    assert MemoryEntry.objects.count() == 0


def test_it_writes_at_a_lower_cpu_priority_and_then_restores_it(actors: Actors) -> None:
    seen: list[int | None] = []

    def note_niceness(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        seen.append(thread_niceness())
        return execute(sql, params, many, context)

    before = thread_niceness()
    # At the hub's default niceness, stated here so that the test says what it checks.
    with override_settings(MEMORYHUB_BULK_WRITE_NICENESS=19), connection.execute_wrapper(note_niceness):
        response = batch(actors.bot_key, [{"content": "a bulk note", "user_id": "u1"}])
    assert response.status_code == 201
    assert 19 in seen  # the write's statements, at settings.MEMORYHUB_BULK_WRITE_NICENESS
    assert thread_niceness() == before  # the next request of this thread goes at full speed
    with override_settings(MEMORYHUB_BULK_WRITE_NICENESS=0), connection.execute_wrapper(note_niceness):
        seen.clear()
        assert batch(actors.bot_key, [{"content": "another", "user_id": "u1"}]).status_code == 201
    assert set(seen) == {before}
