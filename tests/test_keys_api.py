from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from memoryhub.core.models import Agent, AgentKey, OperatorKey
from tests.conftest import Actors, api_client, assert_error


def test_it_lets_an_admin_issue_an_agent_key(actors: Actors) -> None:
    response = api_client(actors.owner_key).post(
        "/api/v1/keys", {"agent": "planner", "store": "research", "label": "ci"}, format="json"
    )
    assert response.status_code == 201
    body = response.json()
    assert body["agent"] == "planner"
    assert body["stores"] == ["research"]
    assert body["status"] == "active"
    me = api_client(body["key"]).get("/api/v1/me").json()
    assert (me["workspace"], me["agent"], me["stores"]) == ("acme", "planner", ["research"])


def test_it_stores_only_a_prefix_and_a_hash(actors: Actors) -> None:
    body = api_client(actors.owner_key).post("/api/v1/keys", {"agent": "planner"}, format="json").json()
    stored = AgentKey.objects.get(prefix=body["prefix"])
    assert body["key"] not in stored.key_hash
    assert body["key"].split("_", 2)[2] not in {stored.prefix, stored.key_hash, stored.label}
    listing = api_client(actors.owner_key).get("/api/v1/keys").json()
    assert body["key"] not in str(listing)


def test_it_lists_only_the_callers_workspace(actors: Actors) -> None:
    listing = api_client(actors.teammate_key).get("/api/v1/keys").json()["results"]
    assert {item["agent"] for item in listing} == {"bot", "peer", "loner"}
    foreign = api_client(actors.outsider_key).get("/api/v1/keys").json()["results"]
    assert {item["agent"] for item in foreign} == {"spy"}


def test_it_forbids_viewers_from_issuing(actors: Actors) -> None:
    response = api_client(actors.teammate_key).post("/api/v1/keys", {"agent": "planner"}, format="json")
    assert_error(response, 403, "FORBIDDEN")
    assert not Agent.objects.filter(name="planner").exists()


def test_it_forbids_agents(actors: Actors) -> None:
    assert_error(api_client(actors.bot_key).get("/api/v1/keys"), 403, "FORBIDDEN")
    assert_error(api_client(actors.bot_key).post("/api/v1/keys", {"agent": "x"}, format="json"), 403, "FORBIDDEN")


def test_it_answers_malformed_json_with_400(actors: Actors) -> None:
    response = api_client(actors.owner_key).post("/api/v1/keys", '{"agent": "planner"', content_type="application/json")
    assert_error(response, 400, "MALFORMED_JSON")
    assert not Agent.objects.filter(name="planner").exists()


def test_it_answers_wrong_types_with_400(actors: Actors) -> None:
    client = api_client(actors.owner_key)
    error = assert_error(client.post("/api/v1/keys", {"agent": ["a"]}, format="json"), 400, "VALIDATION_ERROR")
    assert "agent" in error["details"]["fields"]
    assert_error(client.post("/api/v1/keys", {"agent": "a", "expires_at": 12}, format="json"), 400, "VALIDATION_ERROR")
    assert_error(client.post("/api/v1/keys", ["agent"], format="json"), 400, "VALIDATION_ERROR")
    assert_error(client.post("/api/v1/keys", {"agent": "has spaces"}, format="json"), 400, "VALIDATION_ERROR")
    assert AgentKey.objects.count() == 4


def test_it_refuses_unknown_fields(actors: Actors) -> None:
    error = assert_error(
        api_client(actors.owner_key).post("/api/v1/keys", {"agent": "a", "expiry": "never"}, format="json"), 400, "VALIDATION_ERROR"
    )
    assert "expiry" in error["details"]["fields"]


def test_it_refuses_an_expiry_in_the_past(actors: Actors) -> None:
    past = (timezone.now() - timedelta(days=1)).isoformat()
    assert_error(api_client(actors.owner_key).post("/api/v1/keys", {"agent": "a", "expires_at": past}, format="json"), 400, "VALIDATION_ERROR")


def test_it_refuses_non_json_bodies(actors: Actors) -> None:
    response = api_client(actors.owner_key).post("/api/v1/keys", "agent=a", content_type="application/x-www-form-urlencoded")
    assert_error(response, 415, "UNSUPPORTED_MEDIA_TYPE")


def test_it_lets_an_admin_revoke_an_agent_key(actors: Actors) -> None:
    prefix = AgentKey.objects.get(agent=actors.bot).prefix
    assert api_client(actors.owner_key).delete(f"/api/v1/keys/{prefix}").status_code == 204
    assert_error(api_client(actors.bot_key).get("/api/v1/me"), 401, "UNAUTHENTICATED")


def test_it_hides_keys_of_another_workspace(actors: Actors) -> None:
    prefix = AgentKey.objects.get(agent=actors.spy).prefix
    assert_error(api_client(actors.owner_key).delete(f"/api/v1/keys/{prefix}"), 404, "KEY_NOT_FOUND")
    assert api_client(actors.spy_key).get("/api/v1/me").status_code == 200


def test_it_hides_agent_keys_from_viewers(actors: Actors) -> None:
    prefix = AgentKey.objects.get(agent=actors.bot).prefix
    assert_error(api_client(actors.teammate_key).delete(f"/api/v1/keys/{prefix}"), 404, "KEY_NOT_FOUND")
    assert api_client(actors.bot_key).get("/api/v1/me").status_code == 200


def test_it_lets_an_operator_revoke_their_own_key(actors: Actors) -> None:
    prefix = OperatorKey.objects.get(membership=actors.teammate).prefix
    assert api_client(actors.teammate_key).delete(f"/api/v1/keys/{prefix}").status_code == 204
    assert_error(api_client(actors.teammate_key).get("/api/v1/me"), 401, "UNAUTHENTICATED")


def test_it_answers_unknown_prefixes_with_404(actors: Actors) -> None:
    assert_error(api_client(actors.owner_key).delete("/api/v1/keys/000000000000"), 404, "KEY_NOT_FOUND")


def test_it_keeps_no_minted_key_for_a_retry(actors: Actors) -> None:
    from memoryhub.core.models import IdempotencyRecord

    owner = api_client(actors.owner_key)
    issued = owner.post("/api/v1/keys", {"agent": "courier"}, format="json", HTTP_IDEMPOTENCY_KEY="mint-1")
    assert issued.status_code == 201
    plaintext, prefix = issued.json()["key"], issued.json()["prefix"]
    secret = plaintext.rsplit("_", 1)[1]
    # Stored answers travel in the database and its backups: the secret is in none of them.
    assert not any(secret.encode() in bytes(record.body) for record in IdempotencyRecord.objects.all())
    error = assert_error(owner.post("/api/v1/keys", {"agent": "courier"}, format="json", HTTP_IDEMPOTENCY_KEY="mint-1"), 409, "KEY_NOT_REPLAYED")
    assert error["details"] == {"prefix": prefix, "agent": "courier"} and secret not in str(error)
    assert AgentKey.objects.filter(agent__name="courier").count() == 1  # and no second key
