from __future__ import annotations

from django.test import Client

from memoryhub.core import services
from memoryhub.core.models import Agent, AgentKey, OperatorKey
from tests.conftest import Actors, api_client

HTMX = {"HTTP_HX_REQUEST": "true"}


def logged_in(client: Client, membership: object) -> Client:
    client.force_login(membership.user)
    return client


def test_it_sends_anonymous_visitors_to_login(db: None, client: Client) -> None:
    response = client.get("/keys/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_it_lists_the_workspaces_agent_keys(actors: Actors, client: Client) -> None:
    response = logged_in(client, actors.teammate).get("/keys/")
    assert response.status_code == 200
    prefix = AgentKey.objects.get(agent=actors.bot).prefix
    assert f"mha_{prefix}" in response.content.decode()
    foreign_prefix = AgentKey.objects.get(agent=actors.spy).prefix
    assert foreign_prefix not in response.content.decode()
    assert "Only admins create and revoke agent keys." in response.content.decode()


def test_it_creates_a_key_and_shows_it_once(actors: Actors, client: Client) -> None:
    logged_in(client, actors.owner)
    response = client.post("/keys/agent/", {"agent": "planner", "store": "research", "label": "laptop"})
    assert response.status_code == 200
    html = response.content.decode()
    key = AgentKey.objects.get(agent__name="planner")
    start = html.index('data-testid="new-agent-key"')
    plaintext = html[html.index('value="', start - 200) + 7 :].split('"')[0]
    assert plaintext.startswith(f"mha_{key.prefix}_")
    assert api_client(plaintext).get("/api/v1/me").json()["stores"] == ["research"]
    assert plaintext not in client.get("/keys/").content.decode()


def test_it_answers_htmx_with_the_fragment(actors: Actors, client: Client) -> None:
    response = logged_in(client, actors.owner).post("/keys/agent/", {"agent": "planner", "store": "default"}, **HTMX)
    html = response.content.decode()
    assert html.lstrip().startswith('<section class="card" id="agent-keys">')
    assert "<html" not in html


def test_it_shows_form_errors_without_creating_anything(actors: Actors, client: Client) -> None:
    response = logged_in(client, actors.owner).post("/keys/agent/", {"agent": "no spaces allowed", "store": "default"}, **HTMX)
    assert response.status_code == 422
    assert "errorlist" in response.content.decode()
    assert not Agent.objects.filter(name="no spaces allowed").exists()


def test_it_forbids_viewers_from_creating_keys(actors: Actors, client: Client) -> None:
    response = logged_in(client, actors.teammate).post("/keys/agent/", {"agent": "planner", "store": "default"})
    assert response.status_code == 403
    assert not Agent.objects.filter(name="planner").exists()


def test_it_revokes_a_key_with_htmx(actors: Actors, client: Client) -> None:
    key = AgentKey.objects.get(agent=actors.bot)
    response = logged_in(client, actors.owner).post(f"/keys/agent/{key.pk}/revoke/", **HTMX)
    assert response.status_code == 200
    assert f'id="agent-key-{key.pk}"' in response.content.decode()
    assert "revoked" in response.content.decode()
    assert api_client(actors.bot_key).get("/api/v1/me").status_code == 401


def test_it_revokes_without_javascript(actors: Actors, client: Client) -> None:
    key = AgentKey.objects.get(agent=actors.bot)
    response = logged_in(client, actors.owner).post(f"/keys/agent/{key.pk}/revoke/")
    assert response.status_code == 302 and response["Location"] == "/keys/"


def test_it_hides_keys_of_a_foreign_workspace(actors: Actors, client: Client) -> None:
    key = AgentKey.objects.get(agent=actors.spy)
    assert logged_in(client, actors.owner).post(f"/keys/agent/{key.pk}/revoke/").status_code == 404
    assert api_client(actors.spy_key).get("/api/v1/me").status_code == 200


def test_it_forbids_viewers_from_revoking(actors: Actors, client: Client) -> None:
    key = AgentKey.objects.get(agent=actors.bot)
    assert logged_in(client, actors.teammate).post(f"/keys/agent/{key.pk}/revoke/").status_code == 403
    assert api_client(actors.bot_key).get("/api/v1/me").status_code == 200


def test_it_lets_operators_manage_their_own_keys(actors: Actors, client: Client) -> None:
    # Only admins mint operator keys (a key carries its owner's role); anyone revokes their own.
    assert logged_in(client, actors.teammate).post("/keys/operator/", {"label": "script"}, **HTMX).status_code == 403
    assert "Create operator key" not in client.get("/keys/").content.decode()
    created, _ = services.operator_key_issue(membership=actors.teammate, label="script")
    assert client.post(f"/keys/operator/{created.pk}/revoke/", **HTMX).status_code == 200
    html = logged_in(client, actors.owner).post("/keys/operator/", {"label": "admin-script"}, **HTMX).content.decode()
    minted = OperatorKey.objects.get(membership=actors.owner, label="admin-script")
    assert f"mho_{minted.prefix}_" in html
    logged_in(client, actors.teammate)
    other = OperatorKey.objects.filter(membership=actors.owner).first()
    assert client.post(f"/keys/operator/{other.pk}/revoke/").status_code == 404
    assert api_client(actors.owner_key).get("/api/v1/me").status_code == 200


def test_it_tells_operators_without_a_workspace_what_to_do(db: None, client: Client, django_user_model: object) -> None:
    user = django_user_model.objects.create_user("nobody", password="x")
    client.force_login(user)
    response = client.get("/keys/")
    assert response.status_code == 403
    assert "issue_key --operator nobody" in response.content.decode()
