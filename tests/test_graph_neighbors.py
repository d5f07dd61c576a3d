"""GET /api/v1/graph/neighbors (docs/graph.md, "Neighbours")."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import time_machine

from memoryhub.memory.models import MemoryEntry
from tests.conftest import Actors, api_client, approver_key, assert_error
from tests.graph_helpers import fact, neighbors, rules, triples


def test_it_lists_the_facts_around_an_entity_either_way_and_case_insensitively(actors: Actors) -> None:
    fact(actors.bot_key, "Alice", "works at", "Acme")
    fact(actors.bot_key, "Bob", "works at", "ACME ")
    fact(actors.bot_key, "Acme", "located in", "Berlin")
    fact(actors.bot_key, "Berlin", "capital of", "Germany")
    assert triples(neighbors(actors.bot_key, "  acme")) == {
        ("Alice", "works at", "Acme", 1, False), ("Bob", "works at", "ACME ", 1, False), ("Acme", "located in", "Berlin", 1, False),
    }
    assert triples(neighbors(actors.bot_key, "alice", depth=2)) == {
        ("Alice", "works at", "Acme", 1, False), ("Bob", "works at", "ACME ", 2, False), ("Acme", "located in", "Berlin", 2, False),
    }
    assert ("Berlin", "capital of", "Germany", 3, False) in triples(neighbors(actors.bot_key, "alice", depth=3))
    assert triples(neighbors(actors.bot_key, "alice", depth=2, predicate="works at")) == {
        ("Alice", "works at", "Acme", 1, False), ("Bob", "works at", "ACME ", 2, False),
    }
    assert neighbors(actors.bot_key, "Nobody") == []


def test_each_edge_links_its_memory_and_objects_keep_their_type(actors: Actors) -> None:
    written = fact(actors.bot_key, "Alice", "age", 41, confidence=0.8)
    [edge] = neighbors(actors.bot_key, "Alice")
    assert (edge["object"], edge["confidence"], edge["entry_id"], edge["via"]) == (41, 0.8, written["id"], [written["id"]])
    assert api_client(actors.bot_key).get(f"/api/v1/memories/{edge['entry_id']}").json()["data"]["object"] == 41


def test_rules_infer_edges_at_read_time_naming_the_facts_they_follow_from(actors: Actors) -> None:
    rules(actors.owner_key, {"predicate": "Married to", "kind": "symmetric"},
          {"predicate": "parent of", "kind": "inverse", "inverse": "child of"},
          {"predicate": "part of", "kind": "transitive"})
    married = fact(actors.bot_key, "Ann", "married to", "Ben")
    parent = fact(actors.bot_key, "Cy", "parent of", "Di")
    parts = [fact(actors.bot_key, a, "part of", b) for a, b in [("Kreuzberg", "Berlin"), ("Berlin", "Germany"), ("Germany", "Europe")]]
    stored = MemoryEntry.objects.count()
    ben = neighbors(actors.bot_key, "Ben")
    assert ("Ben", "married to", "Ann", 1, True) in triples(ben)
    assert [e["via"] for e in ben if e["inferred"]] == [[married["id"]]]
    assert [(e["subject"], e["predicate"], e["object"], e["via"]) for e in neighbors(actors.bot_key, "di") if e["inferred"]] == [
        ("Di", "child of", "Cy", [parent["id"]]),
    ]
    kreuzberg = {(e["subject"], e["object"]): e for e in neighbors(actors.bot_key, "Kreuzberg") if e["inferred"]}
    assert set(kreuzberg) == {("Kreuzberg", "Germany"), ("Kreuzberg", "Europe")}
    assert kreuzberg[("Kreuzberg", "Europe")]["via"] == [p["id"] for p in parts]
    assert kreuzberg[("Kreuzberg", "Europe")]["entry_id"] is None
    europe = {(e["subject"], e["object"]) for e in neighbors(actors.bot_key, "Europe") if e["inferred"]}
    assert europe == {("Kreuzberg", "Europe"), ("Berlin", "Europe")}
    assert MemoryEntry.objects.count() == stored  # inferred, never stored


def test_cycles_end(actors: Actors) -> None:
    rules(actors.owner_key, {"predicate": "near", "kind": "transitive"}, {"predicate": "knows", "kind": "symmetric"})
    for a, b in [("A", "B"), ("B", "C"), ("C", "A")]:
        fact(actors.bot_key, a, "near", b)
        fact(actors.bot_key, a, "knows", b)
    found = neighbors(actors.bot_key, "A", depth=3, limit=500)
    assert {(e["subject"], e["object"]) for e in found if e["inferred"] and e["predicate"] == "near"} == {("A", "C"), ("B", "A")}
    assert len(found) == len({(e["subject"], e["predicate"], e["object"], tuple(e["via"])) for e in found})


def test_a_chain_reaches_each_entity_once_however_many_users_said_its_facts(actors: Actors) -> None:
    rules(actors.owner_key, {"predicate": "part of", "kind": "transitive"})
    for user in ("u1", "u2", "u3"):
        fact(actors.bot_key, "Alfama", "part of", "Lisbon", user_id=user)
        fact(actors.bot_key, "Lisbon", "part of", "Portugal", user_id=user)
    fact(actors.bot_key, "Portugal", "part of", "Europe", user_id="u2")
    inferred = [(e["subject"], e["object"], len(e["via"])) for e in neighbors(actors.bot_key, "Alfama", limit=500) if e["inferred"]]
    assert sorted(inferred) == [("Alfama", "Europe", 3), ("Alfama", "Portugal", 2)]
    # One user's graph: u1 never said Portugal is part of Europe.
    assert [e["object"] for e in neighbors(actors.bot_key, "Alfama", user_id="u1") if e["inferred"]] == ["Portugal"]
    # Stored facts come first, chains after them: a page the three stored facts fill has no chain.
    assert [e["inferred"] for e in neighbors(actors.bot_key, "Alfama", limit=3)] == [False, False, False]


def test_facts_over_time_a_new_object_supersedes_unless_the_predicate_is_multi(actors: Actors) -> None:
    with time_machine.travel(datetime(2026, 1, 1, tzinfo=timezone.utc), tick=False):
        fact(actors.bot_key, "Alice", "lives in", "Paris")
        fact(actors.bot_key, "Alice", "speaks", "English")
    rules(actors.owner_key, {"predicate": "speaks", "kind": "multi"})
    with time_machine.travel(datetime(2026, 3, 1, tzinfo=timezone.utc), tick=False):
        fact(actors.bot_key, "Alice", "lives in", "Berlin")
        fact(actors.bot_key, "Alice", "speaks", "French")
        fact(actors.bot_key, "Alice", "speaks", "German")
    now = {(e["predicate"], e["object"]) for e in neighbors(actors.bot_key, "Alice")}
    assert now == {("lives in", "Berlin"), ("speaks", "English"), ("speaks", "French"), ("speaks", "German")}
    before = {(e["predicate"], e["object"]) for e in neighbors(actors.bot_key, "Alice", as_of="2026-02-01T00:00:00Z")}
    assert before == {("lives in", "Paris"), ("speaks", "English")}


def test_only_what_the_caller_sees_is_walked(actors: Actors) -> None:
    mine = fact(actors.bot_key, "Alice", "works at", "Acme")
    fact(actors.peer_key, "Alice", "likes", "jazz")  # the peer's own (agent scope)
    fact(actors.peer_key, "Alice", "reports to", "Carol", scope="shared")
    fact(actors.bot_key, "Alice", "lives in", "Rome", user_id="u2")
    fact(actors.spy_key, "Alice", "owes", "money")  # another workspace
    assert {e["object"] for e in neighbors(actors.bot_key, "Alice")} == {"Acme", "Carol", "Rome"}
    assert {e["object"] for e in neighbors(actors.bot_key, "Alice", user_id="u1")} == {"Acme", "Carol"}
    assert {e["object"] for e in neighbors(actors.owner_key, "Alice")} == {"Acme", "Carol", "Rome", "jazz"}
    # The foreign workspace's own graph, and nothing of ours.
    assert {e["object"] for e in neighbors(actors.outsider_key, "Alice")} == {"money"}
    assert {e["object"] for e in neighbors(actors.spy_key, "Alice")} == {"money"}
    # Quarantined: gone for agents at once, still there for the people reviewing it.
    api_client(approver_key(actors)).post(f"/api/v1/memories/{mine['id']}/review", {"action": "quarantine"}, format="json")
    assert {e["object"] for e in neighbors(actors.bot_key, "Alice")} == {"Carol", "Rome"}
    assert "Acme" in {e["object"] for e in neighbors(actors.owner_key, "Alice")}


def test_expired_facts_leave_the_graph(actors: Actors) -> None:
    fact(actors.bot_key, "Alice", "is at", "the dentist")
    MemoryEntry.objects.update(expires_at=datetime.now(timezone.utc) - timedelta(seconds=1))
    assert neighbors(actors.bot_key, "Alice") == []


def test_it_pages_and_refuses_bad_input(actors: Actors) -> None:
    rules(actors.owner_key, {"predicate": "links", "kind": "multi"})
    for n in range(5):
        fact(actors.bot_key, "Hub", "links", f"Spoke {n}")
    first = api_client(actors.bot_key).get("/api/v1/graph/neighbors", {"entity": "hub", "limit": 3}).json()
    second = api_client(actors.bot_key).get("/api/v1/graph/neighbors", {"entity": "hub", "limit": 3, "cursor": first["next"]}).json()
    assert len(first["results"]) == 3 and len(second["results"]) == 2 and second["next"] is None
    assert {e["object"] for e in first["results"] + second["results"]} == {f"Spoke {n}" for n in range(5)}
    client = api_client(actors.bot_key)
    assert_error(client.get("/api/v1/graph/neighbors", {"entity": "hub", "depth": 4}), 400, "VALIDATION_ERROR")
    assert_error(client.get("/api/v1/graph/neighbors", {"depth": 1}), 400, "VALIDATION_ERROR")
    assert_error(client.get("/api/v1/graph/neighbors", {"entity": "hub", "cursor": "nope"}), 400, "INVALID_CURSOR")
    assert len(neighbors(actors.bot_key, "hub", limit=0)) == 1 and len(neighbors(actors.bot_key, "hub", limit=10_000)) == 5  # clamped
    assert_error(api_client().get("/api/v1/graph/neighbors", {"entity": "hub"}), 401, "UNAUTHENTICATED")


def test_rules_and_filters_fold_names_as_the_graph_does_in_any_script(actors: Actors) -> None:
    # The database folds names with lower() (graph_entity()): "ß" stays "ß" (casefold() would make it "ss").
    rules(actors.owner_key, {"predicate": "Größer  als", "kind": "transitive"})
    fact(actors.bot_key, "Zugspitze", "größer als", "Watzmann")
    fact(actors.bot_key, "Watzmann", "GRÖßER ALS", "Brocken")
    found = neighbors(actors.bot_key, "zugspitze", predicate="größer Als")
    assert {(e["object"], e["inferred"]) for e in found} == {("Watzmann", False), ("Brocken", True)}


def test_it_answers_the_same_without_prepared_statements(actors: Actors, settings: Any) -> None:
    # MEMORYHUB_PREPARED_STATEMENTS=0, for a transaction-mode pooler: the same walks, planned each time.
    rules(actors.owner_key, {"predicate": "part of", "kind": "transitive"}, {"predicate": "knows", "kind": "symmetric"})
    for a, b in [("Alfama", "Lisbon"), ("Lisbon", "Portugal")]:
        fact(actors.bot_key, a, "part of", b)
    fact(actors.bot_key, "Ana", "knows", "Alfama")
    answers = []
    for prepared in (True, False, True):
        settings.MEMORYHUB_PREPARED_STATEMENTS = prepared
        answers.append((
            triples(neighbors(actors.bot_key, "Lisbon", depth=2)), triples(neighbors(actors.bot_key, "Alfama", user_id="u1")),
            api_client(actors.bot_key).get("/api/v1/graph/path", {"from": "Ana", "to": "Portugal"}).json(),
        ))
    assert answers[0] == answers[1] == answers[2]
    assert ("Alfama", "part of", "Portugal", 1, True) in answers[0][1]
    assert len(answers[0][2]["path"]) == 3
