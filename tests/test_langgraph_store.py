"""MemoryHubStore against a live hub: the behaviours of LangGraph's own store tests
(libs/checkpoint/tests/test_store.py and the Postgres store's tests), ported. No
conformance suite for stores is published, so these are it. Each test starts one hub
and covers a family of behaviours, sync and async, to keep the hub starts few."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import GetOp, InvalidNamespaceError, Item, ListNamespacesOp, MatchCondition, PutOp, SearchOp

from memoryhub.memory.models import MemoryEntry
from memoryhub_client.langgraph import MemoryHubStore
from tests.conftest import Actors, LiveHub
from tests.hub_clients import QUICK_RETRIES

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def store(actors: Actors, live_hub: LiveHub) -> Iterator[MemoryHubStore]:
    with MemoryHubStore(base_url=live_hub.url, api_key=actors.bot_key, retry=QUICK_RETRIES) as hub_store:
        yield hub_store


def keys(results: list[Any]) -> list[str]:
    return [item.key for item in results]


def test_it_gets_puts_deletes_and_batches_in_order(actors: Actors, live_hub: LiveHub, store: MemoryHubStore) -> None:
    # test_basic_store_ops
    namespace = ("test", "documents")
    store.put(namespace, "doc1", {"title": "Test Document", "content": "Hello, World!"})
    item = store.get(namespace, "doc1")
    assert item and item.namespace == namespace and item.key == "doc1" and item.value["title"] == "Test Document"
    store.put(namespace, "doc1", {"title": "Updated Document", "content": "Hello, Updated!"})
    updated = store.get(namespace, "doc1")
    assert updated.value["title"] == "Updated Document" and updated.updated_at > item.updated_at
    assert updated.created_at == item.created_at
    assert store.get(("test", "other_documents"), "doc1") is None
    store.delete(namespace, "doc1")
    assert store.get(namespace, "doc1") is None

    # test_batch_order
    store.put(("test", "foo"), "key1", {"data": "value1"})
    store.put(("test", "bar"), "key2", {"data": "value2"})
    results = store.batch([
        GetOp(namespace=("test", "foo"), key="key1"),
        PutOp(namespace=("test", "bar"), key="key2", value={"data": "value2"}),
        SearchOp(namespace_prefix=("test",), filter={"data": "value1"}, limit=10, offset=0),
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
        GetOp(namespace=("test",), key="key3"),
    ])
    assert isinstance(results[0], Item) and results[0].value == {"data": "value1"}
    assert results[1] is None and keys(results[2]) == ["key1"] and ("test", "foo") in results[3] and results[4] is None

    # test_batch_put_ops: a put of None deletes; the last put of an item in a batch wins
    assert store.batch([
        PutOp(("test",), "key1", {"data": "value1"}), PutOp(("test",), "key2", {"data": "first"}),
        PutOp(("test",), "key2", {"data": "value2"}), PutOp(("test",), "key3", None),
    ]) == [None] * 4
    assert [store.get(("test",), k).value if store.get(("test",), k) else None for k in ("key1", "key2", "key3")] == [
        {"data": "value1"}, {"data": "value2"}, None,
    ]

    # test_cannot_put_empty_namespace: LangGraph's checks, then the hub's own
    for bad in [(), ("the", "thing.about"), ("some", "fun", ""), ("langgraph", "foo")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(bad, "foo", {"foo": "bar"})
    store.batch([PutOp(("langgraph", "foo"), "bar", {"foo": "bar"})])  # past the public API, as LangGraph allows
    assert store.get(("langgraph", "foo"), "bar").value == {"foo": "bar"}
    assert store.search(("langgraph", "foo"))[0].value == {"foo": "bar"}

    # Async: the same store object, its own client on the running loop.
    async def asynchronously() -> None:
        await store.aput(("foo", "langgraph", "foo"), "bar", {"doc": 1})
        assert (await store.aget(("foo", "langgraph", "foo"), "bar")).value == {"doc": 1}
        assert (await store.asearch(("foo", "langgraph", "foo"), query="bar"))[0].value == {"doc": 1}
        await store.adelete(("foo", "langgraph", "foo"), "bar")
        assert await store.aget(("foo", "langgraph", "foo"), "bar") is None
        await store.aclose()

    asyncio.run(asynchronously())
    # Drop-in: a graph compiled with the store hands it to its nodes.
    def remember(state: dict[str, Any], runtime: Runtime) -> dict[str, Any]:
        runtime.store.put(("users", state["user"], "prefs"), "seat", {"text": "window seat, please"})
        return {"found": [i.value["text"] for i in runtime.store.search(("users", state["user"]), query="where to sit")]}

    graph = StateGraph(dict)
    graph.add_node("remember", remember)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", END)
    assert graph.compile(store=store).invoke({"user": "u7"})["found"] == ["window seat, please"]

    # A second agent of the store sees the same items: they belong to the store.
    with MemoryHubStore(base_url=live_hub.url, api_key=actors.peer_key) as peer:
        assert peer.get(("test",), "key2").value == {"data": "value2"}
    with MemoryHubStore(base_url=live_hub.url, api_key=actors.loner_key) as loner:
        assert loner.get(("test",), "key2") is None and loner.list_namespaces() == []


def test_it_searches_by_meaning_with_filters_and_pages(store: MemoryHubStore) -> None:
    # test_search (Postgres): prefixes, value filters, limit and offset
    store.put(("test", "docs"), "doc1", {"title": "First Doc", "author": "Alice", "tags": ["important"]})
    store.put(("test", "docs"), "doc2", {"title": "Second Doc", "author": "Bob", "tags": ["draft"]})
    store.put(("test", "images"), "img1", {"title": "Image 1", "author": "Alice", "tags": ["final"]})
    assert len(store.search(("test",))) == 3
    assert {i.namespace for i in store.search(("test", "docs"))} == {("test", "docs")}
    assert sorted(keys(store.search(("test",), filter={"author": "Alice"}))) == ["doc1", "img1"]
    assert keys(store.search(("test",), filter={"tags": ["draft"]})) == ["doc2"]
    assert len(store.search(("test",), limit=2)) == 2 and len(store.search(("test",), offset=2)) == 1

    # test_search_namespace_segment_boundary / like metacharacters / empty prefix
    for ns in [("foo",), ("foo", "child"), ("foobar",), ("user_1",), ("userX1",), ("a%b",), ("axxb",)]:
        store.put(ns, "k", {"v": 1})
    assert {i.namespace for i in store.search(("foo",), limit=100)} == {("foo",), ("foo", "child")}
    assert {i.namespace for i in store.search(("user_1",), limit=100)} == {("user_1",)}
    assert {i.namespace for i in store.search(("a%b",), limit=100)} == {("a%b",)}
    assert {i.namespace for i in store.search(("fo",), limit=100)} == set()
    assert len(store.search((), limit=100)) == 10

    # test_vector_search_with_filters
    docs = [
        ("doc1", {"text": "red apple", "color": "red", "score": 4.5}),
        ("doc2", {"text": "red car", "color": "red", "score": 3.0}),
        ("doc3", {"text": "green apple", "color": "green", "score": 4.0}),
        ("doc4", {"text": "blue car", "color": "blue", "score": 3.5}),
    ]
    for key, value in docs:
        store.put(("vec",), key, value, index=["text"])
    assert keys(store.search(("vec",), query="apple", filter={"color": "red"})) == ["doc1", "doc2"]
    assert keys(store.search(("vec",), query="car", filter={"color": "red"})) == ["doc2", "doc1"]
    found = store.search(("vec",), query="blue", filter={"score": {"$gt": 3.2}})
    assert len(found) == 3 and found[0].key == "doc4"
    assert keys(store.search(("vec",), query="apple", filter={"score": {"$gte": 4.0}, "color": "green"})) == ["doc3"]
    assert keys(store.search(("vec",), filter={"score": {"$lt": 3.5}})) == ["doc2"]
    assert sorted(keys(store.search(("vec",), filter={"color": {"$ne": "red"}}))) == ["doc3", "doc4"]

    # test_vector_update_with_embedding: a new value means a new vector; index=False leaves it out
    store.put(("upd",), "doc1", {"text": "zany zebra Xerxes"})
    store.put(("upd",), "doc2", {"text": "something about dogs"})
    store.put(("upd",), "doc3", {"text": "text about birds"})
    initial = store.search(("upd",), query="Zany Xerxes")
    assert initial[0].key == "doc1" and initial[0].score is not None
    store.put(("upd",), "doc1", {"text": "new text about dogs"})
    after = next(r.score for r in store.search(("upd",), query="Zany Xerxes") if r.key == "doc1")
    assert after < initial[0].score
    store.put(("upd",), "doc4", {"text": "new text about dogs"}, index=False)
    assert "doc4" not in keys(store.search(("upd",), query="new text about dogs", limit=3))
    assert store.search(("upd",), query="new text about dogs")[-1].score is None  # found, unscored, last

    # test_embed_with_path: operation-level fields
    store.put(("path",), "doc3", {"key0": "aaa", "key1": "bbb", "key2": "ccc", "key3": "ddd"}, index=["key0", "key1"])
    store.put(("path",), "doc4", {"key0": "eee", "key1": "bbb", "key2": "fff", "key3": "ggg"}, index=["key1", "key3"])
    store.put(("path",), "doc5", {"key0": "hhh", "key1": "iii"}, index=False)
    assert store.search(("path",), query="aaa")[0].key == "doc3"
    assert store.search(("path",), query="ggg")[0].key == "doc4"
    results = store.search(("path",), query="hhh")
    assert len(results) == 3 and next(r for r in results if r.key == "doc5").score is None

    # test_vector_search_pagination / edge cases
    for i in range(5):
        store.put(("page",), f"doc{i}", {"text": f"test document number {i}"})
    page1, page2 = store.search(("page",), query="test", limit=2), store.search(("page",), query="test", limit=2, offset=2)
    assert len(page1) == 2 and len(page2) == 2 and not set(keys(page1)) & set(keys(page2))
    assert len(store.search(("page",), query="test", limit=10)) == 5
    for query in ["", None, "test " * 100, "test!@#$%^&*()"]:
        assert len(store.search(("page",), query=query)) == 5

    # test_non_ascii
    texts = ["这是中文", "これは日本語です", "Это русский"]
    for i, text in enumerate(texts):
        store.put(("user_123", "memories"), str(i), {"text": text})
    for i, text in enumerate(texts):
        assert store.search(("user_123", "memories"), query=text)[0].key == str(i)


def test_it_lists_namespaces_like_langgraph(store: MemoryHubStore) -> None:
    # test_list_namespaces_basic
    namespaces = [
        ("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f"),
        ("users", "123"), ("users", "456", "settings"), ("admin", "users", "789"),
    ]
    store.batch([PutOp(ns, f"id_{i}", {"data": f"value_{i:02d}"}) for i, ns in enumerate(namespaces)])
    ab = [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f")]
    assert store.list_namespaces(prefix=("a", "b")) == ab
    assert store.list_namespaces(suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    assert store.list_namespaces(prefix=("a",), suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [("a", "b", "c"), ("a", "b", "d"), ("a", "b", "f")]
    assert store.list_namespaces(prefix=("a", "b"), limit=2) == ab[:2]
    assert store.list_namespaces(prefix=("a", "b"), offset=2) == ab[2:]
    assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(suffix=("*", "f")) == [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    assert store.list_namespaces(prefix=("nonexistent",)) == []
    assert store.list_namespaces(prefix=("users", "123")) == [("users", "123")]
    assert store.list_namespaces(prefix=("users", "*")) == [("users", "123"), ("users", "456", "settings")]
    assert store.list_namespaces(prefix=("*", "users"), suffix=("*", "settings")) == []
    assert store.list_namespaces() == sorted(namespaces)
    assert store.list_namespaces(max_depth=2) == sorted({ns[:2] for ns in namespaces})
    # test_batch_list_namespaces_ops
    [every, shallow, public] = store.batch([
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=100, offset=0),
        ListNamespacesOp(match_conditions=None, max_depth=1, limit=100, offset=0),
        ListNamespacesOp(match_conditions=(MatchCondition("suffix", ("settings",)),), max_depth=None, limit=100, offset=0),
    ])
    assert len(every) == len(namespaces) and shallow == [("a",), ("admin",), ("b",), ("users",)]
    assert public == [("users", "456", "settings")]
    # test_list_namespaces_segment_boundary / labels with a trailing newline
    for ns in [("uid", "users", "alice"), ("uid", "users", "malice"), ("uid", "x", "y", "alice"), ("users", "alice\n")]:
        store.put(ns, "k", {"v": 1})
    assert store.list_namespaces(suffix=("alice",)) == [("uid", "users", "alice"), ("uid", "x", "y", "alice")]
    assert store.list_namespaces(prefix=("uid", "*", "alice")) == [("uid", "users", "alice")]
    # test_list_namespaces_pagination
    store.batch([PutOp(("namespace", f"sub_{i:02d}"), f"id_{i:02d}", {"i": i}) for i in range(20)])
    for offset in (0, 5, 15):
        assert store.list_namespaces(prefix=("namespace",), limit=5, offset=offset) == [
            ("namespace", f"sub_{i:02d}") for i in range(offset, offset + 5)
        ]


def test_it_expires_items_and_refreshes_their_ttl(actors: Actors, live_hub: LiveHub) -> None:
    ttl = {"default_ttl": 1.0, "refresh_on_read": True}  # minutes; expiry moved by hand below
    with MemoryHubStore(base_url=live_hub.url, api_key=actors.bot_key, ttl=ttl) as store:
        ns = ("ttl",)
        store.put(ns, "item1", {"foo": "bar"})
        store.put(ns, "forever", {"foo": "baz"}, ttl=None)
        before_short = timezone.now()
        store.put(ns, "short", {"foo": "qux"}, ttl=2 / 60)  # two seconds
        after_short = timezone.now()
        # Two seconds after the write, however long the write took.
        short = MemoryEntry.objects.get(key="short")
        assert short.ttl_seconds == 2
        assert before_short + timedelta(seconds=2) <= short.expires_at <= after_short + timedelta(seconds=2)
        entry = MemoryEntry.objects.get(key="item1")
        assert entry.ttl_seconds == 60 and MemoryEntry.objects.get(key="forever").expires_at is None

        def expires_in(seconds: float) -> None:
            MemoryEntry.objects.filter(pk=entry.pk).update(expires_at=timezone.now() + timedelta(seconds=seconds))

        expires_in(5)
        assert store.get(ns, "item1", refresh_ttl=False) is not None
        assert MemoryEntry.objects.get(pk=entry.pk).expires_at < timezone.now() + timedelta(seconds=6)
        assert store.get(ns, "item1") is not None  # refresh_on_read
        assert MemoryEntry.objects.get(pk=entry.pk).expires_at > timezone.now() + timedelta(seconds=50)
        expires_in(5)
        assert len(store.search(ns, query="foo")) == 3  # a search refreshes too
        assert MemoryEntry.objects.get(pk=entry.pk).expires_at > timezone.now() + timedelta(seconds=50)
        # test_omit_expired_*: expired rows, not yet swept, are in no read path and not revived
        expires_in(-60)
        before = MemoryEntry.objects.get(pk=entry.pk).expires_at
        assert store.get(ns, "item1", refresh_ttl=True) is None
        assert "item1" not in keys(store.search(ns, refresh_ttl=True))
        assert MemoryEntry.objects.get(pk=entry.pk).expires_at == before
        # Once "short"'s two seconds have passed (moved there, rather than waited for), it is
        # in no read path.
        MemoryEntry.objects.filter(pk=short.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
        assert store.get(ns, "short") is None
        assert keys(store.search(ns)) == ["forever"]
        store.delete(ns, "forever")
        assert store.list_namespaces(prefix=("ttl",)) == []


def test_it_runs_concurrent_async_batches(actors: Actors, live_hub: LiveHub) -> None:
    # test_async_batched_vector_search_concurrent, smaller: puts, deletes and puts again at once
    colors, things, scores = ["red", "blue", "green"], ["apple", "car", "house"], [3.0, 4.0, 5.0]
    docs = [(f"doc{i}", {"text": f"{colors[i % 3]} {things[i % 3]}", "color": colors[i % 3], "score": scores[i % 3], "index": i})
            for i in range(12)]

    async def scenario() -> list[list[Any]]:
        async with MemoryHubStore(base_url=live_hub.url, api_key=actors.bot_key, retry=QUICK_RETRIES) as store:
            await asyncio.gather(*(store.aput(("test",), key, value) for key, value in docs))
            await asyncio.gather(*(store.adelete(("test",), key) for key, _ in docs[:6]))
            await asyncio.gather(*(store.aput(("test",), key, value) for key, value in docs[:6]))
            queries: list[tuple[str, dict[str, Any]]] = [
                ("apple", {"color": "red"}), ("car", {"score": {"$gt": 3.5}}), ("house", {"index": {"$lte": 5}}),
            ]
            found = await asyncio.gather(*(store.asearch(("test",), query=q, filter=f) for q, f in queries))
            found.append(await store.abatch([GetOp(("test",), "doc0"), GetOp(("test",), "nope"),
                                             ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0)]))
            return found

    red, dear, early, batched = asyncio.run(scenario())
    assert {i.value["color"] for i in red} == {"red"} and len(red) == 4 and red[0].value["text"] == "red apple"
    assert {i.value["score"] for i in dear} == {4.0, 5.0} and len(dear) == 8
    assert sorted(i.value["index"] for i in early) == [0, 1, 2, 3, 4, 5]
    assert batched[0].value["index"] == 0 and batched[1] is None and batched[2] == [("test",)]
