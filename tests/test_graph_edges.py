"""POST /api/v1/graph/edges (docs/graph.md, "Edges are facts")."""

from __future__ import annotations

from memoryhub.memory.models import MemoryEntry, MemoryType
from tests.conftest import Actors, api_client, assert_error
from tests.graph_helpers import fact, neighbors


def test_an_edge_is_a_factual_memory(actors: Actors) -> None:
    response = api_client(actors.bot_key).post("/api/v1/graph/edges", {
        "subject": "Alice", "predicate": "works at", "object": "Acme", "user_id": "u7", "confidence": 0.9, "scope": "shared",
    }, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["memory_type"], body["content"], body["scope"], body["user_id"]) == ("factual", "Alice works at Acme", "shared", "u7")
    assert body["data"] == {"subject": "Alice", "predicate": "works at", "object": "Acme", "confidence": 0.9}
    entry = MemoryEntry.objects.get(pk=body["id"])
    assert entry.memory_type == MemoryType.FACTUAL and entry.embedding is not None  # searchable like any memory
    found = api_client(actors.bot_key).post("/api/v1/memories/search", {"query": "Where does Alice work?", "user_id": "u7"}, format="json")
    assert body["id"] in [r["entry"]["id"] for r in found.json()["results"]]


def test_a_new_object_supersedes_the_old_as_facts_over_time(actors: Actors) -> None:
    first = fact(actors.bot_key, "Alice", "lives in", "Paris")
    moved = fact(actors.bot_key, "alice", "Lives  in", "Berlin")  # the same subject and predicate, folded
    assert str(MemoryEntry.objects.get(pk=first["id"]).superseded_by_id) == moved["id"]
    assert [e["object"] for e in neighbors(actors.bot_key, "Alice")] == ["Berlin"]


def test_bad_edges_are_refused_and_change_nothing(actors: Actors) -> None:
    client = api_client(actors.bot_key)
    good = {"subject": "Alice", "predicate": "likes", "object": "tea", "user_id": "u1"}
    for bad in ({**good, "object": {"nested": 1}}, {**good, "object": ""}, {**good, "subject": " "}, {**good, "confidence": 1.5},
                {k: v for k, v in good.items() if k != "user_id"}, {**good, "colour": "red"}, {**good, "scope": "galaxy"}):
        response = client.post("/api/v1/graph/edges", bad, format="json")
        assert response.status_code == 400, (bad, response.content)
    assert_error(api_client(actors.owner_key).post("/api/v1/graph/edges", good, format="json"), 403, "AGENT_KEY_REQUIRED")
    assert_error(api_client().post("/api/v1/graph/edges", good, format="json"), 401, "UNAUTHENTICATED")
    assert MemoryEntry.objects.count() == 0
