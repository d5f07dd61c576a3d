from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from memoryhub.core import services
from memoryhub.core.models import AgentKey
from tests.conftest import Actors, api_client, assert_error


def test_it_describes_an_agent(actors: Actors) -> None:
    response = api_client(actors.bot_key).get("/api/v1/me")
    assert response.status_code == 200
    body = response.json()
    assert body["kind"] == "agent"
    assert body["workspace"] == "acme"
    assert body["agent"] == "bot"
    assert body["stores"] == ["default"]


def test_it_describes_an_operator(actors: Actors) -> None:
    body = api_client(actors.owner_key).get("/api/v1/me").json()
    assert body["kind"] == "operator"
    assert body["workspace"] == "acme"
    assert body["agent"] is None
    assert body["operator"] == "owner"
    assert body["role"] == "admin"


def test_it_keeps_each_agent_in_its_workspace(actors: Actors) -> None:
    body = api_client(actors.spy_key).get("/api/v1/me").json()
    assert body["workspace"] == "globex"
    assert body["stores"] == ["default"]
    assert body["agent"] == "spy"


def test_it_requires_a_key(actors: Actors) -> None:
    error = assert_error(api_client().get("/api/v1/me"), 401, "UNAUTHENTICATED")
    assert "credentials" in error["message"].lower()


def test_it_asks_for_bearer_in_www_authenticate(actors: Actors) -> None:
    response = api_client().get("/api/v1/me")
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_it_rejects_an_unknown_key(actors: Actors) -> None:
    forged = actors.bot_key[:-4] + "XXXX"
    assert_error(api_client(forged).get("/api/v1/me"), 401, "UNAUTHENTICATED")
    assert_error(api_client("not-a-key").get("/api/v1/me"), 401, "UNAUTHENTICATED")


def test_it_rejects_other_schemes(actors: Actors) -> None:
    client = api_client()
    client.credentials(HTTP_AUTHORIZATION=f"Basic {actors.bot_key}")
    assert_error(client.get("/api/v1/me"), 401, "UNAUTHENTICATED")


def test_it_rejects_a_revoked_key(actors: Actors) -> None:
    key = AgentKey.objects.get(agent=actors.bot)
    assert services.api_key_revoke(key=key)
    assert_error(api_client(actors.bot_key).get("/api/v1/me"), 401, "UNAUTHENTICATED")


def test_it_rejects_an_expired_key(actors: Actors) -> None:
    _, plaintext = services.agent_key_issue(agent=actors.bot, expires_at=timezone.now() + timedelta(hours=1))
    assert api_client(plaintext).get("/api/v1/me").status_code == 200
    AgentKey.objects.filter(agent=actors.bot, expires_at__isnull=False).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert_error(api_client(plaintext).get("/api/v1/me"), 401, "UNAUTHENTICATED")


def test_it_refuses_a_key_in_the_query_string(actors: Actors) -> None:
    assert_error(api_client().get("/api/v1/me", {"api_key": actors.bot_key}), 401, "KEY_IN_QUERY_STRING")
    # Even alongside a valid header: the key has leaked into a URL and must not be rewarded.
    assert_error(api_client(actors.bot_key).get("/api/v1/me", {"x": actors.owner_key}), 401, "KEY_IN_QUERY_STRING")


def test_it_records_when_a_key_was_last_used(actors: Actors) -> None:
    assert AgentKey.objects.get(agent=actors.bot).last_used_at is None
    api_client(actors.bot_key).get("/api/v1/me")
    assert AgentKey.objects.get(agent=actors.bot).last_used_at is not None
