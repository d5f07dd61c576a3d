"""The graph's reads are bounded in work whatever the data holds (memoryhub/graph/selectors.py,
"Bounds"): any agent can give one entity thousands of facts, so a dense entity is sampled,
a neighbours walk ends at MAX_WALK edges, cursors past it are refused, and each answer
says when a bound cut it short (`truncated`) instead of reading on for minutes."""

from __future__ import annotations

from typing import Any

from memoryhub.graph.selectors import CHAIN_WIDTH, FANOUT, MAX_WALK
from memoryhub.operations.graph import _cursor
from tests.conftest import Actors, api_client, assert_error
from tests.graph_helpers import fact, rules


# The agent's own vector (of the local model's 384 dimensions): the graph reads facts, not
# vectors, and embedding thousands of facts on the test's one model thread took half a minute.
VECTOR = [1.0] + [0.0] * 383


def facts_of(key: str, pairs: list[tuple[str, str]], *, predicate: str = "links") -> None:
    """`subject predicate object` for each pair, written 500 a batch as any agent may."""
    for start in range(0, len(pairs), 500):
        items = [
            {"content": f"{s} {predicate} {o}", "user_id": "u1", "memory_type": "factual", "data": {"subject": s, "predicate": predicate, "object": o},
             "embedding": VECTOR}
            for s, o in pairs[start:start + 500]
        ]
        response = api_client(key).post("/api/v1/memories/batch", {"items": items}, format="json")
        assert response.status_code == 201, response.content[:300]


def walk(key: str, entity: str, **params: Any) -> dict:
    response = api_client(key).get("/api/v1/graph/neighbors", {"entity": entity, **params})
    assert response.status_code == 200, response.content[:300]
    return response.json()


def test_it_samples_a_dense_entity_and_says_so(actors: Actors) -> None:
    rules(actors.owner_key, {"predicate": "links", "kind": "multi"})
    facts_of(actors.bot_key, [("Hub", f"spoke {n}") for n in range(FANOUT + 40)])
    dense = walk(actors.bot_key, "hub", limit=500)
    assert len(dense["results"]) == FANOUT and dense["truncated"] is True and dense["next"] is None
    assert len({e["object"] for e in dense["results"]}) == FANOUT  # a sample of distinct facts, each once
    # A sparse entity's answer is whole, and says so.
    sparse = walk(actors.bot_key, "spoke 7")
    assert len(sparse["results"]) == 1 and sparse["next"] is None and sparse["truncated"] is False
    # Paged, the walk meets the bound where the sample ends: that page says so, and has no next.
    pages = [walk(actors.bot_key, "hub", limit=150)]
    pages.append(walk(actors.bot_key, "hub", limit=150, cursor=pages[0]["next"]))
    assert [(len(p["results"]), bool(p["next"]), p["truncated"]) for p in pages] == [(150, True, False), (FANOUT - 150, False, True)]
    # Reached from the other side, the hub is one entity among a spoke's neighbours' neighbours.
    around = walk(actors.bot_key, "spoke 3", depth=2, limit=500)
    assert len(around["results"]) == 1 + FANOUT and around["truncated"] is True


def test_a_walk_ends_at_its_bound_and_refuses_cursors_past_it(actors: Actors) -> None:
    # Symmetric: each fact is walked twice (itself and its mirror), so half as many facts fill the walk.
    rules(actors.owner_key, {"predicate": "links", "kind": "multi"}, {"predicate": "links", "kind": "symmetric"})
    spokes = [f"spoke {n}" for n in range(FANOUT)]
    leaves = MAX_WALK // FANOUT // 2 + 1
    facts_of(actors.bot_key, [("Hub", s) for s in spokes] + [(s, f"{s} leaf {k}") for s in spokes for k in range(leaves)])
    seen: list[dict] = []
    cursor = None
    while True:
        page = walk(actors.bot_key, "hub", depth=2, limit=500, **({"cursor": cursor} if cursor else {}))
        seen += page["results"]
        cursor = page["next"]
        if not cursor:
            break
    assert len(seen) == MAX_WALK and page["truncated"] is True
    assert [e["depth"] for e in seen] == sorted(e["depth"] for e in seen)  # still nearest first
    assert len({(e["subject"], e["object"], e["inferred"]) for e in seen}) == MAX_WALK  # each edge once across the pages
    client = api_client(actors.bot_key)
    assert_error(client.get("/api/v1/graph/neighbors", {"entity": "hub", "cursor": _cursor(MAX_WALK)}), 400, "INVALID_CURSOR")
    assert_error(client.get("/api/v1/graph/neighbors", {"entity": "hub", "depth": 3, "cursor": _cursor(100_000)}), 400, "INVALID_CURSOR")


def test_grounding_reads_a_dense_entity_in_part_and_says_so(actors: Actors) -> None:
    rules(actors.owner_key, {"predicate": "links", "kind": "multi"}, {"predicate": "reports to", "kind": "transitive"})
    facts_of(actors.bot_key, [("Hub", f"spoke {n}") for n in range(FANOUT + 40)])
    fact(actors.bot_key, "Alice", "works at", "Acme")
    response = api_client(actors.bot_key).post("/api/v1/graph/grounding", {"text": "What does Hub link?", "limit": 50}, format="json")
    assert response.status_code == 200 and response.json()["truncated"] is True and len(response.json()["facts"]) == 50
    sparse = api_client(actors.bot_key).post("/api/v1/graph/grounding", {"text": "Where does Alice work?"}, format="json").json()
    assert sparse["truncated"] is False and [(f["subject"], f["object"]) for f in sparse["facts"]] == [("Alice", "Acme")]
    # A long transitive chain fans out: the entities reached at each distance are bounded too.
    bosses = [f"boss {k}" for k in range(3)]
    reports = [(f"report {k}.{n}", boss) for k, boss in enumerate(bosses) for n in range(CHAIN_WIDTH // 2)]
    facts_of(actors.bot_key, reports + [(boss, "ceo") for boss in bosses], predicate="reports to")
    chained = api_client(actors.bot_key).post("/api/v1/graph/grounding", {"text": "Who does ceo lead?", "limit": 50}, format="json").json()
    assert chained["truncated"] is True and any(f["inferred"] for f in chained["facts"])


def test_a_path_search_through_dense_entities_says_when_it_looked_at_part_of_them(actors: Actors) -> None:
    rules(actors.owner_key, {"predicate": "links", "kind": "multi"})
    facts_of(actors.bot_key, [("Hub", f"spoke {n}") for n in range(FANOUT + 40)] + [("Other hub", f"spoke {n}") for n in range(1000, 1000 + FANOUT + 40)])
    client = api_client(actors.bot_key)
    found = client.get("/api/v1/graph/path", {"from": "spoke 1", "to": "spoke 2"}).json()
    assert {(e["subject"], e["object"]) for e in found["path"]} == {("Hub", "spoke 1"), ("Hub", "spoke 2")}
    error = assert_error(client.get("/api/v1/graph/path", {"from": "hub", "to": "other hub"}), 404, "NO_PATH")
    assert error["details"] == {"truncated": True}
    fact(actors.bot_key, "Lonely", "links", "Nobody")
    assert assert_error(client.get("/api/v1/graph/path", {"from": "lonely", "to": "spoke 1"}), 404, "NO_PATH")["details"] == {}
