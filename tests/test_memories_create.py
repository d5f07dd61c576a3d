from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from memoryhub.memory.models import MemoryEntry
from tests.conftest import Actors, api_client, assert_error, remember, search

CONTRACT_FIELDS = {
    "id", "key", "content", "user_id", "scope", "store", "agent", "memory_type", "tags", "metadata", "data",
    "created_at", "updated_at", "expires_at", "version",
}


def post(actors_key: str, body: object) -> object:
    return api_client(actors_key).post("/api/v1/memories", body, format="json")


def test_it_stores_an_entry_with_the_contracts_fields(actors: Actors) -> None:
    entry = remember(actors.bot_key, "Alice prefers tea over coffee.", tags=["prefs"], metadata={"source": "chat"})
    assert CONTRACT_FIELDS <= set(entry)
    assert entry["scope"] == "agent" and entry["memory_type"] == "note"
    assert (entry["store"], entry["agent"], entry["version"]) == ("default", "bot", 1)
    assert entry["tags"] == ["prefs"] and entry["metadata"] == {"source": "chat"}
    fetched = api_client(actors.bot_key).get(f"/api/v1/memories/{entry['id']}").json()
    # A create also says whether the entry repeats one the agent could see already.
    assert (entry.pop("duplicate"), entry.pop("similar")) == (False, [])
    assert fetched == entry


def test_it_is_searchable_as_soon_as_the_201_returns(actors: Actors) -> None:
    entry = remember(actors.bot_key, "The staging database password rotates every Tuesday.")
    semantic = search(actors.bot_key, query="when does the staging db credential change?", mode="semantic")
    assert semantic[0]["entry"]["id"] == entry["id"]
    keyword = search(actors.bot_key, query="staging password", mode="keyword")
    assert keyword[0]["entry"]["id"] == entry["id"]


def test_it_updates_an_existing_key_with_200(actors: Actors) -> None:
    first = post(actors.bot_key, {"content": "v1", "user_id": "u1", "key": "profile"})
    assert first.status_code == 201
    second = post(actors.bot_key, {"content": "v2", "user_id": "u1", "key": "profile"})
    assert second.status_code == 200
    assert second.json()["id"] == first.json()["id"]
    assert (second.json()["content"], second.json()["version"]) == ("v2", 2)
    assert MemoryEntry.objects.count() == 1
    assert search(actors.bot_key, query="v2", mode="keyword")[0]["entry"]["content"] == "v2"


def test_it_keeps_keys_per_agent(actors: Actors) -> None:
    post(actors.bot_key, {"content": "bot's", "user_id": "u1", "key": "profile"})
    assert post(actors.peer_key, {"content": "peer's", "user_id": "u1", "key": "profile"}).status_code == 201
    assert MemoryEntry.objects.count() == 2


def test_it_validates_typed_data(actors: Actors) -> None:
    good = remember(
        actors.bot_key, "How to deploy", memory_type="procedural",
        data={"task": "deploy", "steps": ["build", "ship"], "preconditions": ["tests pass"]},
    )
    assert good["data"]["steps"] == ["build", "ship"]
    concept = remember(actors.bot_key, "Vector DB", memory_type="semantic", data={"concept": "HNSW", "related_concepts": ["ANN"]})
    assert concept["data"] == {"concept": "HNSW", "category": "", "related_concepts": ["ANN"]}
    bad = [
        ("factual", {"subject": "Alice", "predicate": "likes"}),  # no object
        ("factual", {"subject": "Alice", "predicate": "likes", "object": "tea", "confidence": 1.5}),
        ("factual", {"subject": "", "predicate": "likes", "object": "tea"}),
        ("factual", {"subject": "Alice", "predicate": "likes", "object": "tea", "mood": "happy"}),
        ("procedural", {"task": "deploy", "steps": []}),
        ("procedural", {"task": "deploy", "steps": [1, 2]}),
        ("semantic", {"category": "db"}),
    ]
    for memory_type, data in bad:
        assert_error(post(actors.bot_key, {"content": "x", "user_id": "u1", "memory_type": memory_type, "data": data}), 400, "INVALID_DATA")
    assert MemoryEntry.objects.count() == 2


@pytest.mark.parametrize(
    "body, field",
    [
        ({"content": "x", "user_id": "u1", "memory_type": "dream"}, "memory_type"),
        ({"content": "x", "user_id": "u1", "scope": "everyone"}, "scope"),
        ({"content": "x", "user_id": "u1", "tags": ["ok", 3]}, "tags"),
        ({"content": "x", "user_id": "u1", "tags": [f"t{i}" for i in range(65)]}, "tags"),
        ({"content": "x", "user_id": "u1", "tags": "a,b"}, "tags"),
        ({"content": "x" * 32_001, "user_id": "u1"}, "content"),
        ({"content": "   ", "user_id": "u1"}, "content"),
        ({"content": 42, "user_id": "u1"}, "content"),
        ({"content": "x", "user_id": ""}, "user_id"),
        ({"content": "x", "user_id": "u" * 256}, "user_id"),
        ({"content": "x"}, "user_id"),
        ({"content": "x", "user_id": "u1", "ttl_seconds": 0}, "ttl_seconds"),
        ({"content": "x", "user_id": "u1", "metadata": ["not", "a", "dict"]}, "metadata"),
        ({"content": "x", "user_id": "u1", "metadata": {"blob": "x" * 70_000}}, "metadata"),
        ({"content": "x", "user_id": "u1", "embedding": ["a"]}, "embedding"),
        ({"content": "x", "user_id": "u1", "colour": "red"}, "colour"),
    ],
)
def test_it_refuses_bad_fields_and_stores_nothing(actors: Actors, body: dict, field: str) -> None:
    error = assert_error(post(actors.bot_key, body), 400, "VALIDATION_ERROR")
    assert field in error["details"]["fields"]
    assert MemoryEntry.objects.count() == 0


def test_it_refuses_an_embedding_of_the_wrong_dimension(actors: Actors) -> None:
    error = assert_error(post(actors.bot_key, {"content": "x", "user_id": "u1", "embedding": [0.1] * 10}), 400, "INVALID_EMBEDDING")
    assert error["details"]["expected_dimensions"] == 384
    assert MemoryEntry.objects.count() == 0


def test_it_accepts_the_agents_own_embedding(actors: Actors) -> None:
    vector = [0.0] * 384
    vector[7] = 1.0
    entry = remember(actors.bot_key, "opaque", embedding=vector)
    hits = search(actors.bot_key, embedding=vector, mode="semantic")
    assert hits[0]["entry"]["id"] == entry["id"]
    assert hits[0]["score"] == pytest.approx(1.0, abs=1e-5)


def test_it_refuses_stores_the_agent_is_not_attached_to(actors: Actors) -> None:
    assert_error(post(actors.bot_key, {"content": "x", "user_id": "u1", "store": "other"}), 400, "STORE_NOT_ATTACHED")
    assert_error(post(actors.bot_key, {"content": "x", "user_id": "u1", "store": "nope", "scope": "shared"}), 400, "STORE_NOT_ATTACHED")
    assert MemoryEntry.objects.count() == 0


def test_it_refuses_writes_with_an_operator_key(actors: Actors) -> None:
    assert_error(post(actors.owner_key, {"content": "x", "user_id": "u1"}), 403, "AGENT_KEY_REQUIRED")


def test_it_gives_working_memory_a_default_ttl(actors: Actors) -> None:
    entry = remember(actors.bot_key, "currently editing report.docx", memory_type="working")
    expires = timezone.datetime.fromisoformat(entry["expires_at"])
    assert timedelta(minutes=59) < expires - timezone.now() <= timedelta(hours=1)
    note = remember(actors.bot_key, "a lasting note")
    assert note["expires_at"] is None


def test_it_takes_ttl_seconds_or_expires_at(actors: Actors) -> None:
    entry = remember(actors.bot_key, "short lived", ttl_seconds=120)
    assert timezone.datetime.fromisoformat(entry["expires_at"]) - timezone.now() <= timedelta(seconds=120)
    later = (timezone.now() + timedelta(days=2)).isoformat()
    assert remember(actors.bot_key, "two days", expires_at=later)["expires_at"] is not None
    past = (timezone.now() - timedelta(days=2)).isoformat()
    assert_error(post(actors.bot_key, {"content": "x", "user_id": "u1", "expires_at": past}), 400, "INVALID_EXPIRY")
    assert_error(post(actors.bot_key, {"content": "x", "user_id": "u1", "expires_at": later, "ttl_seconds": 5}), 400, "INVALID_EXPIRY")


def test_it_answers_exactly_what_the_schema_describes(actors: Actors) -> None:
    # api_client() checks every answer against the schema (tests/schema_validation.py);
    # this states it for the entry: every field the schema names, no other.
    from agents_api.outputs import MemorySerializer, MemoryWrittenSerializer

    entry = remember(actors.bot_key, "schema check", tags=["a"], ttl_seconds=60)
    assert set(entry) == set(MemoryWrittenSerializer().fields) == {*MemorySerializer().fields, "duplicate", "similar"}
    fetched = api_client(actors.bot_key).get(f"/api/v1/memories/{entry['id']}").json()
    assert set(fetched) == set(MemorySerializer().fields)


def test_it_keeps_an_entrys_vector_and_words_in_its_row(actors: Actors) -> None:
    # Every search reads the vector and the full-text vector of each entry it ranks
    # exactly; out of line, each was a TOAST index lookup and another page (a user's
    # 1,000 entries of ~200 characters ranked in 7-10 ms instead of 0.7-1).
    rng = random.Random(7)
    words = "garage sister Melbourne flight pricing customer email deploy Thursday cello ramen heartworm Toronto quarterly".split()

    def text(n: int) -> str:
        return " ".join(f"{rng.choice(words)}{rng.randrange(1000)}" for _ in range(n))  # compresses poorly, like ids and codes

    for n in (20, 60, 250):
        remember(actors.bot_key, text(n))
    batch = [{"content": text(n), "user_id": "u1"} for n in (30, 120, 400)]
    response = api_client(actors.bot_key).post("/api/v1/memories/batch", {"items": batch}, format="json")
    assert response.status_code == 201, response.content[:300]
    remember(actors.bot_key, text(2500))  # ~20,000 characters: the text goes out of line, not the vector
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT length(content), pg_column_toast_chunk_id(embedding) IS NULL, pg_column_toast_chunk_id(search_vector) IS NULL "
            "FROM memory_memoryentry WHERE workspace_id = %s ORDER BY length(content)",
            [actors.workspace.pk],
        )
        rows = cursor.fetchall()
    assert len(rows) == 7 and rows[-1][0] > 20_000
    assert all(vector_inline for _, vector_inline, _ in rows)
    assert all(words_inline for length, _, words_inline in rows if length < 3000)
