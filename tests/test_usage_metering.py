"""Metering closes the class, not the instance (memoryhub/usage/metering.py): every route
that can call a model, walked from the URL patterns, is metered and held to the month's
budget; a priced call that no workspace is attributed with fails closed; the console's
searches are the workspace's calls too."""

from __future__ import annotations

from typing import Any

import pytest

from memoryhub.memory.embeddings import get_provider
from memoryhub.usage import metering
from django.test import Client

from tests.conftest import Actors, api_client
from tests.test_authorization_matrix import acme, call, endpoints  # noqa: F401 - `acme` is a fixture

PRICED = '{"local": {"input_per_million": 1000000}}'  # the built-in model at one unit of money a token
# Routes that call a model for an agent with the walk's bodies (an embedding: a write of
# memory or an episode, a search; a summary): each must be refused once the budget is
# spent. The walk below fails if a route outside this set calls a model past the budget,
# or one inside does not.
CALLS_A_MODEL = {
    "post memories", "post memories/batch", "post memories/search", "patch memories/<str:entry_id>", "post episodes",
    "post episodes/similar", "post graph/edges", "post sessions/<str:session_id>/summarize",
}


# Routes that call a model only with some parameters, beyond the walk's bodies: the
# LangGraph store's indexed items and searches by meaning, a summarised context.
WITH_PARAMETERS = [
    ("put", "/api/v1/memories/items", {"namespace": ["prefs"], "key": "seat", "value": {"text": "Ann prefers the aisle."}}),
    ("post", "/api/v1/memories/items/search", {"namespace_prefix": ["prefs"], "query": "which seat?"}),
    ("get", "/api/v1/sessions/{session_id}/context", {"strategy": "summarize", "max_messages": 1, "preserve_recent": 1}),
]


def parameterised(client: Any, method: str, path: str, body: dict[str, Any], values: dict[str, str]) -> Any:
    url = path.format(**values)
    response = client.get(url, body) if method == "get" else getattr(client, method)(url, body, format="json")
    assert response.status_code < 500, (method, url, response.content[:300])
    return response


def calls_so_far(owner_key: str) -> int:
    metering.flush()
    return api_client(owner_key).get("/api/v1/usage").json()["totals"]["calls"]


def walk(actors: Actors, values: dict[str, str]) -> dict[str, Any]:
    """Every method of every API route as the agent, each route's answer by `method route`."""
    client = api_client(actors.bot_key)
    answers = {}
    for method, url, route in endpoints(values):
        response = call(client, method, url, route)
        assert response.status_code < 500, (method, url, response.content[:300])
        answers[f"{method} {route}"] = response
    return answers


def test_no_route_calls_a_priced_model_past_a_spent_budget(actors: Actors, acme: dict[str, str], settings: Any) -> None:  # noqa: F811
    settings.MEMORYHUB_PRICES = PRICED
    assert api_client(actors.owner_key).put("/api/v1/settings/budget", {"monthly_limit": 0}, format="json").status_code == 200
    before = calls_so_far(actors.owner_key)
    answers = walk(actors, acme)
    refused = {route for route, response in answers.items() if response.status_code == 429 and response.json()["error"]["code"] == "BUDGET_EXCEEDED"}
    assert refused == CALLS_A_MODEL
    for method, path, body in WITH_PARAMETERS:
        assert parameterised(api_client(actors.bot_key), method, path, body, acme).status_code == 429, path
    assert calls_so_far(actors.owner_key) == before  # not one model call made past the budget


def test_every_route_that_calls_a_model_is_metered(actors: Actors, acme: dict[str, str], settings: Any) -> None:  # noqa: F811
    settings.MEMORYHUB_PRICES = PRICED
    client = api_client(actors.bot_key)
    for method, url, route in endpoints(acme):
        if f"{method} {route}" not in CALLS_A_MODEL:
            continue
        before = calls_so_far(actors.owner_key)
        response = call(client, method, url, route)
        assert response.status_code < 300, (method, url, response.content[:300])
        assert calls_so_far(actors.owner_key) > before, (method, route)
    for method, path, body in WITH_PARAMETERS:  # in turn: the first writes what the second searches
        before = calls_so_far(actors.owner_key)
        response = parameterised(client, method, path, body, acme)
        assert response.status_code < 300, (method, path, response.content[:300])
        assert calls_so_far(actors.owner_key) > before, (method, path)


def test_a_priced_call_no_workspace_is_attributed_with_fails_closed(actors: Actors, settings: Any) -> None:
    settings.MEMORYHUB_PRICES = PRICED
    before = calls_so_far(actors.owner_key)
    with pytest.raises(metering.UnattributedModelCall):
        get_provider().embed(["Who pays for this?"])
    # The hub's own work across workspaces (re-embedding after a model change) says so, and no workspace pays.
    with metering.hub_work():
        assert len(get_provider().embed(["The hub's own."])) == 1
    with metering.attributed(workspace_id=actors.workspace.pk):
        assert len(get_provider().embed(["The workspace's."])) == 1
    assert calls_so_far(actors.owner_key) == before + 1
    settings.MEMORYHUB_PRICES = "{}"
    assert len(get_provider().embed(["A free model's call costs nobody anything."])) == 1


def test_the_consoles_searches_are_the_workspaces_calls(actors: Actors, client: Client, settings: Any) -> None:
    settings.MEMORYHUB_PRICES = PRICED
    console = client
    console.force_login(actors.owner.user)
    before = calls_so_far(actors.owner_key)
    assert console.get("/memory/", {"query": "aisle seat"}).status_code == 200
    assert console.get("/episodes/", {"task": "book a flight"}).status_code == 200
    assert calls_so_far(actors.owner_key) == before + 2
    assert api_client(actors.owner_key).put("/api/v1/settings/budget", {"monthly_limit": 0}, format="json").status_code == 200
    for page, params in (("/memory/", {"query": "window seat"}), ("/episodes/", {"task": "book a train"})):
        response = console.get(page, params)
        assert response.status_code == 200 and "budget for the month" in response.content.decode(), page
    assert calls_so_far(actors.owner_key) == before + 2
