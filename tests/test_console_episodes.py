from __future__ import annotations

from django.test import Client

from tests.conftest import Actors
from tests.test_episodes_api import record, seed


def test_it_lists_episodes_of_the_workspace(actors: Actors, client: Client) -> None:
    seed(actors)
    record(actors.spy_key, "Globex secret task", "success", "One. Two. Three.")
    client.force_login(actors.teammate.user)
    html = client.get("/episodes/").content.decode()
    assert "Book a flight from Berlin to Lisbon" in html and "Globex secret task" not in html
    assert "flights.search ×3" in html
    assert "Summarise" not in client.get("/episodes/", {"outcome": "failure"}).content.decode()


def test_it_searches_by_similarity(actors: Actors, client: Client) -> None:
    seed(actors)
    client.force_login(actors.teammate.user)
    html = client.get("/episodes/", {"task": "write a summary of the sales numbers"}, HTTP_HX_REQUEST="true").content.decode()
    assert html.lstrip().startswith('<section class="card" id="results">')
    assert html.index("Summarise the quarterly sales report") < html.index("Book a flight")


def test_it_guides_an_empty_workspace(actors: Actors, client: Client) -> None:
    client.force_login(actors.owner.user)
    assert "No episodes yet" in client.get("/episodes/").content.decode()
