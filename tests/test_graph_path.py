"""GET /api/v1/graph/path (docs/graph.md, "Paths")."""

from __future__ import annotations

from tests.conftest import Actors, api_client, assert_error
from tests.graph_helpers import fact, rules


def path(key: str, source: str, to: str, **params: object) -> object:
    return api_client(key).get("/api/v1/graph/path", {"from": source, "to": to, **params})


def hops(response: object) -> list[tuple[object, ...]]:
    assert response.status_code == 200, response.content[:500]
    return [(e["subject"], e["predicate"], e["object"], e["inferred"]) for e in response.json()["path"]]


def test_it_finds_a_shortest_path_either_way_along_facts(actors: Actors) -> None:
    fact(actors.bot_key, "Alice", "works at", "Acme")
    fact(actors.bot_key, "Bob", "works at", "Acme")
    fact(actors.bot_key, "Bob", "mentors", "Cleo")
    fact(actors.bot_key, "Cleo", "lives in", "Oslo")
    fact(actors.bot_key, "Alice", "friend of", "Dan")
    fact(actors.bot_key, "Dan", "cousin of", "Eve")
    fact(actors.bot_key, "Eve", "lives in", "Oslo")
    fact(actors.bot_key, "Alice", "visited", "Rome")
    assert hops(path(actors.bot_key, "alice", "ACME")) == [("Alice", "works at", "Acme", False)]
    assert hops(path(actors.bot_key, "Alice", "Cleo")) == [
        ("Alice", "works at", "Acme", False), ("Bob", "works at", "Acme", False), ("Bob", "mentors", "Cleo", False),
    ]
    # Two of four facts each way: the shorter (Acme, Bob, Cleo: 4) and Dan, Eve (3) — the 3.
    assert hops(path(actors.bot_key, "Alice", "Oslo")) == [
        ("Alice", "friend of", "Dan", False), ("Dan", "cousin of", "Eve", False), ("Eve", "lives in", "Oslo", False),
    ]
    assert_error(path(actors.bot_key, "Alice", "Oslo", max_depth=2), 404, "NO_PATH")
    assert_error(path(actors.bot_key, "Rome", "Nowhere"), 404, "NO_PATH")
    assert hops(path(actors.bot_key, "Rome", "rome")) == []


def test_the_rules_mirrors_are_walked_and_marked(actors: Actors) -> None:
    rules(actors.owner_key, {"predicate": "parent of", "kind": "inverse", "inverse": "child of"})
    parent = fact(actors.bot_key, "Cy", "parent of", "Di")
    response = path(actors.bot_key, "Di", "Cy")
    assert response.json()["path"][0]["via"] == [parent["id"]]
    assert {h[1:] for h in hops(response)} <= {("parent of", "Di", False), ("child of", "Cy", True)}


def test_only_what_the_caller_sees_is_walked_and_bad_input_is_refused(actors: Actors) -> None:
    fact(actors.peer_key, "Alice", "knows", "Zed")  # the peer's own
    fact(actors.spy_key, "Alice", "knows", "Zed")  # another workspace
    assert_error(path(actors.bot_key, "Alice", "Zed"), 404, "NO_PATH")
    assert hops(path(actors.owner_key, "Alice", "Zed")) == [("Alice", "knows", "Zed", False)]
    assert_error(path(actors.bot_key, "Alice", "Zed", max_depth=7), 400, "VALIDATION_ERROR")
    assert_error(api_client(actors.bot_key).get("/api/v1/graph/path", {"from": "Alice"}), 400, "VALIDATION_ERROR")
