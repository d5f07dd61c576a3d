"""The console's graph page (console/graph_views.py)."""

from __future__ import annotations

from django.test import Client

from memoryhub.core.models import Membership
from tests.conftest import Actors, api_client
from tests.graph_helpers import fact, rules


def logged_in(client: Client, membership: Membership) -> Client:
    client.force_login(membership.user)
    return client


def test_it_draws_an_entitys_facts_and_lists_them_with_their_memories(actors: Actors, client: Client) -> None:
    rules(actors.owner_key, {"predicate": "part of", "kind": "transitive"})
    street = fact(actors.bot_key, "Kreuzberg", "part of", "Berlin")
    city = fact(actors.bot_key, "Berlin", "part of", "Germany")
    fact(actors.spy_key, "Kreuzberg", "part of", "Atlantis")  # another workspace
    page = logged_in(client, actors.teammate).get("/graph/", {"name": "kreuzberg", "depth": 2})
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-testid="entity-graph"' in html and html.count("<circle") == 3  # Kreuzberg, Berlin, Germany
    assert 'stroke-dasharray="5 4"' in html  # Kreuzberg part of Germany, inferred
    assert f'href="/memory/{street["id"]}/"' in html and f'href="/memory/{city["id"]}/"' in html
    assert "inferred</span> from" in html and "Atlantis" not in html
    assert "<strong>part of</strong>: transitive" in html


def test_it_shows_the_facts_of_a_chosen_time(actors: Actors, client: Client) -> None:
    fact(actors.bot_key, "Alice", "lives in", "Paris")
    page = logged_in(client, actors.owner).get("/graph/", {"name": "Alice", "at": "2000-01-01T00:00"})
    assert "No fact about this entity was valid then" in page.content.decode()
    assert "Paris" in client.get("/graph/", {"name": "Alice"}).content.decode()


def test_without_a_name_it_offers_the_busiest_entities_or_says_how_to_add_facts(actors: Actors, client: Client) -> None:
    logged_in(client, actors.owner)
    assert "No facts yet" in client.get("/graph/").content.decode()
    fact(actors.bot_key, "Alice", "works at", "Acme")
    fact(actors.bot_key, "Alice", "lives in", "Paris")
    fact(actors.bot_key, "Bob", "works at", "Acme")
    html = client.get("/graph/").content.decode()
    assert html.index(">Alice</a>") < html.index(">Bob</a>") and "2 facts" in html
    assert client.get("/graph/", {"at": "not a time", "name": "Alice"}).status_code == 200  # the form says what is wrong


def test_memory_pages_link_facts_to_the_graph(actors: Actors, client: Client) -> None:
    written = fact(actors.bot_key, "Alice & Co", "works at", "Acme")
    logged_in(client, actors.owner)
    assert 'href="/graph/?name=Alice%20%26%20Co"' in client.get(f"/memory/{written['id']}/").content.decode()
    assert 'href="/graph/?name=Alice%20%26%20Co"' in client.get("/memory/").content.decode()


def test_only_operators_of_the_workspace_see_it_and_agent_text_stays_text(actors: Actors, client: Client) -> None:
    fact(actors.bot_key, "<script>alert(1)</script>", "likes", '"><img src=x onerror=alert(2)>')
    assert client.get("/graph/").status_code == 302  # to the login
    outsider = logged_in(Client(), actors.outsider).get("/graph/", {"name": "<script>alert(1)</script>"})
    assert "No fact about this entity" in outsider.content.decode()
    html = logged_in(client, actors.owner).get("/graph/", {"name": "<script>alert(1)</script>"}).content.decode()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html and "<img src=x" not in html
    assert api_client(actors.bot_key).get("/api/v1/graph/neighbors", {"entity": "<script>alert(1)</script>"}).json()["results"]
