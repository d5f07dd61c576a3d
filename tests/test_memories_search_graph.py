"""POST /api/v1/memories/search with `follow_graph` (memoryhub/graph/search.py): the facts
around the entities a question names join its results."""

from __future__ import annotations

import pytest

from tests.conftest import Actors, api_client, approver_key, assert_error, remember, search
from tests.graph_helpers import fact

QUESTION = {"query": "Which city is Omar flying to in April?", "user_id": "u1", "max_results": 5}


def ids(hits: list[dict]) -> list[str]:
    return [h["entry"]["id"] for h in hits]


def two_hops(actors: Actors, *, trip_key: str | None = None, trip_user: str = "u1") -> dict[str, dict]:
    """Omar's trip is a fact naming Farid, ranked below two notes (so the names of the two
    best results do not lead to her); where Farid lives is a fact one step further, which
    shares neither the question's words nor much of its meaning, among look-alikes. All
    the bot's about u1, but the trip where `trip_key` or `trip_user` say otherwise."""
    seeded = {
        "trip": fact(trip_key or actors.bot_key, "Omar", "is flying in April to see", "Farid", user_id=trip_user),
        "home": fact(actors.bot_key, "Farid", "has her home in", "Melbourne"),
        "fly": remember(actors.bot_key, "Omar: Which city should I fly to in April?"),
        "airport": remember(actors.bot_key, "Omar: The city airport was packed when I was flying last April."),
        "suitcase": remember(actors.bot_key, "Omar: I need a new suitcase before flying anywhere."),
    }
    for who, city in (("Kenji", "Lisbon"), ("Ana", "Porto"), ("Lukas", "Denver"), ("Mira", "Oslo")):
        seeded[who] = fact(actors.bot_key, who, "has a home in", city)
    return seeded


def test_it_finds_the_fact_one_step_from_the_entity_a_question_names(actors: Actors) -> None:
    seeded = two_hops(actors)
    assert seeded["home"]["id"] not in ids(search(actors.bot_key, **QUESTION))
    hits = search(actors.bot_key, **QUESTION, follow_graph=True)
    assert seeded["trip"]["id"] in ids(hits) and seeded["home"]["id"] in ids(hits)
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True) and all(0 <= s <= 1 for s in scores)
    # The search's other filters still hold: notes only, no facts, followed or not.
    notes = search(actors.bot_key, **QUESTION, memory_type="note", follow_graph=True)
    assert notes and all(h["entry"]["memory_type"] == "note" for h in notes)


def test_it_follows_nothing_unless_asked(actors: Actors) -> None:
    two_hops(actors)
    plain = search(actors.bot_key, **QUESTION)
    assert plain == search(actors.bot_key, **QUESTION, follow_graph=False)
    # A question naming nothing the graph knows is answered as without the graph.
    elsewhere = {**QUESTION, "query": "Which city has the best food?"}
    assert search(actors.bot_key, **elsewhere, follow_graph=True) == search(actors.bot_key, **elsewhere)


@pytest.mark.parametrize("bridge", ["another user's", "another agent's"])
def test_it_never_follows_another_users_or_agents_facts(actors: Actors, bridge: str) -> None:
    # Farid's home is linked to Omar only through a trip the bot cannot follow: another end
    # user's (the search is about u1), or the peer's own (agent scope: the bot never sees it).
    seeded = two_hops(actors, **({"trip_user": "u2"} if bridge == "another user's" else {"trip_key": actors.peer_key}))
    hits = search(actors.bot_key, **QUESTION, follow_graph=True)
    assert seeded["trip"]["id"] not in ids(hits) and seeded["home"]["id"] not in ids(hits)


def test_it_never_follows_a_quarantined_fact(actors: Actors) -> None:
    seeded = two_hops(actors)
    response = api_client(approver_key(actors)).post(f"/api/v1/memories/{seeded['trip']['id']}/review", {"action": "quarantine"}, format="json")
    assert response.status_code == 200, response.content[:500]
    # Where Farid lives is linked to Omar only through the quarantined trip: not followed.
    hits = search(actors.bot_key, **QUESTION, follow_graph=True)
    assert seeded["trip"]["id"] not in ids(hits) and seeded["home"]["id"] not in ids(hits)


def test_it_refuses_a_follow_graph_it_cannot_follow(actors: Actors) -> None:
    client = api_client(actors.bot_key)
    for body in ({"query": "Omar?", "follow_graph": "sometimes"}, {"query": "Omar?", "follow_graph": None}, {"follow_graph": True},
                 {"query": "", "follow_graph": True}):
        assert_error(client.post("/api/v1/memories/search", body, format="json"), 400, "VALIDATION_ERROR")


def test_the_schema_describes_follow_graph(db: None) -> None:
    schema = api_client().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    body = schema["paths"]["/api/v1/memories/search"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    field = schema["components"]["schemas"][body["$ref"].rsplit("/", 1)[1]]["properties"]["follow_graph"]
    assert field["type"] == "boolean" and field["default"] is False and "graph" in field["description"]
