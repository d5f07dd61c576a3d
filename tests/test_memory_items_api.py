"""The item endpoints under /api/v1/memories/items and /namespaces (the key-value store
LangGraph's BaseStore needs): upsert, read, delete, search with filters, namespaces;
store-scoped, agents only, bad input refused with nothing written."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from memoryhub.memory.models import MemoryEntry
from tests.conftest import Actors, api_client, assert_error

ITEMS = "/api/v1/memories/items"


def put(key: str, namespace: list[str], item_key: str, value: dict[str, Any], **fields: Any) -> Any:
    return api_client(key).put(ITEMS, {"namespace": namespace, "key": item_key, "value": value, **fields}, format="json")


def get(key: str, *keys: tuple[list[str], str], **fields: Any) -> list[Any]:
    body = {"items": [{"namespace": ns, "key": k} for ns, k in keys], **fields}
    response = api_client(key).post(f"{ITEMS}/get", body, format="json")
    assert response.status_code == 200, response.content[:500]
    return response.json()["results"]


def search(key: str, **body: Any) -> list[dict[str, Any]]:
    response = api_client(key).post(f"{ITEMS}/search", body, format="json")
    assert response.status_code == 200, response.content[:500]
    return response.json()["results"]


def namespaces(key: str, query: str = "") -> list[list[str]]:
    response = api_client(key).get(f"/api/v1/memories/namespaces{query}")
    assert response.status_code == 200, response.content[:500]
    return response.json()["results"]


def test_it_creates_then_replaces_an_item_idempotently(actors: Actors) -> None:
    first = put(actors.bot_key, ["prefs", "u1"], "seat", {"text": "window seat", "n": 1})
    assert first.status_code == 201, first.content
    assert first.json()["namespace"] == ["prefs", "u1"] and first.json()["value"] == {"text": "window seat", "n": 1}
    again = put(actors.bot_key, ["prefs", "u1"], "seat", {"text": "window seat", "n": 1})
    assert again.status_code == 200
    assert again.json()["created_at"] == first.json()["created_at"] and again.json()["updated_at"] >= first.json()["updated_at"]
    # The store's other agent reads and replaces it: items belong to the store.
    assert get(actors.peer_key, (["prefs", "u1"], "seat"), (["prefs", "u1"], "none"))[0]["value"]["n"] == 1
    assert put(actors.peer_key, ["prefs", "u1"], "seat", {"text": "aisle", "n": 2}).status_code == 200
    assert MemoryEntry.objects.filter(namespace=["prefs", "u1"], key="seat").count() == 1
    [item, missing] = get(actors.bot_key, (["prefs", "u1"], "seat"), (["prefs", "u1"], "none"))
    assert item["value"] == {"text": "aisle", "n": 2} and missing is None
    # A plain memory with the same key is another thing.
    response = api_client(actors.bot_key).post("/api/v1/memories", {"content": "c", "user_id": "u1", "key": "seat"}, format="json")
    assert response.status_code == 201

    assert api_client(actors.bot_key).post(f"{ITEMS}/delete", {"namespace": ["prefs", "u1"], "key": "seat"}, format="json").status_code == 204
    assert api_client(actors.bot_key).post(f"{ITEMS}/delete", {"namespace": ["prefs", "u1"], "key": "seat"}, format="json").status_code == 204
    assert get(actors.bot_key, (["prefs", "u1"], "seat")) == [None]


def test_it_searches_by_meaning_and_filters_on_values(actors: Actors) -> None:
    docs = {
        "doc1": {"text": "red apple", "color": "red", "score": 4.5},
        "doc2": {"text": "red sports car", "color": "red", "score": 3.0},
        "doc3": {"text": "green apple", "color": "green", "score": 4.0},
        "doc4": {"text": "blue car", "color": "blue", "score": 3.5, "meta": {"k": "v", "x": 1}},
    }
    for name, value in docs.items():
        assert put(actors.bot_key, ["test"], name, value, index=["text"]).status_code == 201
    put(actors.bot_key, ["test", "sub"], "plain", {"text": "an apple a day"}, index=False)
    put(actors.bot_key, ["testing"], "other", {"text": "apple"})
    put(actors.bot_key, ["testing"], "flags", {"on": True})
    # Items are memories of the store: listed (content: their text) like any other.
    listed = {m["content"] for m in api_client(actors.peer_key).get("/api/v1/memories").json()["results"]}
    assert {"an apple a day", '{"on": true}', "red apple"} <= listed

    hits = search(actors.bot_key, namespace_prefix=["test"], query="apple", filter={"color": "red"})
    assert [h["key"] for h in hits] == ["doc1", "doc2"] and hits[0]["score"] > hits[1]["score"]
    assert [h["key"] for h in search(actors.bot_key, namespace_prefix=["test"], query="car", filter={"score": {"$gt": 3.2}})][0] == "doc4"
    assert {h["key"] for h in search(actors.bot_key, namespace_prefix=["test"], filter={"score": {"$gte": 4.0, "$lt": 4.5}})} == {"doc3"}
    assert {h["key"] for h in search(actors.bot_key, namespace_prefix=["test"], filter={"score": {"$lte": 3.0}})} == {"doc2"}
    assert {h["key"] for h in search(actors.bot_key, namespace_prefix=["test"], filter={"color": {"$ne": "red"}})} == {"doc3", "doc4", "plain"}
    assert {h["key"] for h in search(actors.bot_key, namespace_prefix=["test"], filter={"color": {"$eq": "blue"}})} == {"doc4"}
    assert {h["key"] for h in search(actors.bot_key, filter={"meta": {"k": "v"}})} == {"doc4"}
    # A string is never greater than a number: types are not mixed.
    assert search(actors.bot_key, namespace_prefix=["test"], filter={"color": {"$gt": 1}}) == []
    # Not indexed: found, last, without a score; the prefix stops at a label's end.
    hits = search(actors.bot_key, namespace_prefix=["test"], query="apple", limit=10)
    assert hits[-1]["key"] == "plain" and hits[-1]["score"] is None and "other" not in {h["key"] for h in hits}
    page1 = search(actors.bot_key, namespace_prefix=["test"], limit=2)
    page2 = search(actors.bot_key, namespace_prefix=["test"], limit=2, offset=2)
    assert len(page1) == 2 and len(page2) == 2 and not {h["key"] for h in page1} & {h["key"] for h in page2}
    assert len(search(actors.bot_key, limit=100)) == 7


def test_it_lists_namespaces_with_prefix_suffix_wildcards_and_depth(actors: Actors) -> None:
    for i, ns in enumerate([["a", "b", "c"], ["a", "b", "d", "e"], ["a", "b", "f"], ["a", "c", "f"], ["b", "a", "f"], ["users", "1"]]):
        put(actors.bot_key, ns, f"k{i}", {"i": i})
    assert namespaces(actors.bot_key, "?prefix=a&prefix=b") == [["a", "b", "c"], ["a", "b", "d", "e"], ["a", "b", "f"]]
    assert namespaces(actors.bot_key, "?suffix=f") == [["a", "b", "f"], ["a", "c", "f"], ["b", "a", "f"]]
    assert namespaces(actors.bot_key, "?prefix=a&prefix=*&prefix=f") == [["a", "b", "f"], ["a", "c", "f"]]
    assert namespaces(actors.bot_key, "?prefix=a&suffix=f") == [["a", "b", "f"], ["a", "c", "f"]]
    assert namespaces(actors.bot_key, "?max_depth=2") == [["a", "b"], ["a", "c"], ["b", "a"], ["users", "1"]]
    assert namespaces(actors.bot_key, "?prefix=a&limit=2&offset=1") == [["a", "b", "d", "e"], ["a", "b", "f"]]
    assert namespaces(actors.loner_key) == []


def test_it_hides_expired_items_and_refreshes_a_ttl_on_read(actors: Actors) -> None:
    put(actors.bot_key, ["t"], "short", {"v": 1}, ttl_seconds=60)
    put(actors.bot_key, ["t"], "kept", {"v": 2}, ttl_seconds=60)
    entry = MemoryEntry.objects.get(key="short")
    MemoryEntry.objects.filter(pk=entry.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert get(actors.bot_key, (["t"], "short")) == [None]
    assert [h["key"] for h in search(actors.bot_key, namespace_prefix=["t"])] == ["kept"]
    soon = timezone.now() + timedelta(seconds=5)
    MemoryEntry.objects.filter(key="kept").update(expires_at=soon)
    get(actors.bot_key, (["t"], "kept"), refresh_ttl=False)
    assert MemoryEntry.objects.get(key="kept").expires_at == soon
    get(actors.bot_key, (["t"], "kept"))
    assert MemoryEntry.objects.get(key="kept").expires_at > soon + timedelta(seconds=50)
    # An expired item put again is new again.
    assert put(actors.bot_key, ["t"], "short", {"v": 3}).status_code == 201
    assert namespaces(actors.bot_key) == [["t"]]


def test_it_keeps_items_to_the_store_and_agents(actors: Actors) -> None:
    put(actors.bot_key, ["secret"], "k", {"pin": "1234"})
    # Another store's agent, a foreign workspace's agent: nothing there.
    assert get(actors.loner_key, (["secret"], "k")) == [None]
    assert get(actors.spy_key, (["secret"], "k")) == [None]
    assert search(actors.spy_key) == [] and namespaces(actors.spy_key) == []
    assert_error(api_client(actors.loner_key).post(f"{ITEMS}/get", {"store": "default", "items": [{"namespace": ["secret"], "key": "k"}]},
                                                   format="json"), 404, "STORE_NOT_FOUND")
    assert_error(put(actors.spy_key, ["secret"], "k", {"pin": "0"}, store="other"), 404, "STORE_NOT_FOUND")
    # The spy's own store `default` is globex's: the same namespace and key there is its own item.
    assert put(actors.spy_key, ["secret"], "k", {"pin": "0"}, store="default").status_code == 201
    assert get(actors.bot_key, (["secret"], "k"))[0]["value"] == {"pin": "1234"}
    # Operators (of this workspace or another) use agent keys for items.
    assert_error(put(actors.owner_key, ["secret"], "k", {"pin": "0"}), 403, "AGENT_KEY_REQUIRED")
    assert_error(api_client(actors.outsider_key).get("/api/v1/memories/namespaces"), 403, "AGENT_KEY_REQUIRED")
    assert_error(api_client(actors.outsider_key).post(f"{ITEMS}/search", {}, format="json"), 403, "AGENT_KEY_REQUIRED")
    assert_error(api_client().post(f"{ITEMS}/get", {"items": []}, format="json"), 401, "UNAUTHENTICATED")
    assert MemoryEntry.objects.get(key="k", workspace=actors.workspace).data == {"pin": "1234"}


@pytest.mark.parametrize(
    "body",
    [
        {"namespace": [], "key": "k", "value": {}},
        {"namespace": ["a", ""], "key": "k", "value": {}},
        {"namespace": ["a"], "key": "k", "value": "text"},
        {"namespace": ["a"], "key": "k", "value": {}, "index": "text"},
        {"namespace": ["a"], "key": "k", "value": {}, "ttl_seconds": 0},
        {"namespace": ["a"], "key": "x" * 256, "value": {}},
        {"namespace": ["a"] * 33, "key": "k", "value": {}},
        {"namespace": ["a"], "key": "k", "value": {}, "extra": 1},
    ],
)
def test_it_refuses_bad_puts_and_writes_nothing(actors: Actors, body: dict[str, Any]) -> None:
    assert_error(api_client(actors.bot_key).put(ITEMS, body, format="json"), 400, "VALIDATION_ERROR")
    assert not MemoryEntry.objects.exists()


def test_it_refuses_bad_searches(actors: Actors) -> None:
    put(actors.bot_key, ["a"], "k", {"n": 1}, ttl_seconds=60)
    before = MemoryEntry.objects.get().expires_at
    for body, code in [
        ({"filter": {"n": {"$regex": "."}}}, "INVALID_FILTER"),
        ({"filter": {"n": {"$gt": [1]}}}, "INVALID_FILTER"),
        ({"filter": {"": 1}}, "INVALID_FILTER"),
        ({"limit": 0}, "VALIDATION_ERROR"),
        ({"offset": -1}, "VALIDATION_ERROR"),
    ]:
        assert_error(api_client(actors.bot_key).post(f"{ITEMS}/search", body, format="json"), 400, code)
    assert_error(api_client(actors.bot_key).get("/api/v1/memories/namespaces?max_depth=x"), 400, "VALIDATION_ERROR")
    assert MemoryEntry.objects.get().expires_at == before  # a refused read refreshed nothing
