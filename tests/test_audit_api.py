"""GET /api/v1/audit (an extension of the contract)."""

from __future__ import annotations

from tests.conftest import Actors, api_client, assert_error


def test_it_lists_the_workspace_entries_newest_first(actors: Actors) -> None:
    owner = api_client(actors.owner_key)
    owner.put("/api/v1/retention", {"policies": {"sessions": 90}}, format="json")
    api_client(actors.outsider_key).put("/api/v1/retention", {"policies": {"sessions": 30}}, format="json")
    body = owner.get("/api/v1/audit").json()
    assert body["results"][0]["action"] == "retention_changed" and body["results"][0]["details"] == {"from": None, "to": 90}
    assert all("outsider" not in e["actor"] for e in body["results"])
    only = owner.get("/api/v1/audit", {"action": "key_created"}).json()["results"]
    assert only and {e["action"] for e in only} == {"key_created"}


def test_it_pages(actors: Actors) -> None:
    owner = api_client(actors.owner_key)
    first = owner.get("/api/v1/audit", {"limit": 2}).json()
    second = owner.get("/api/v1/audit", {"limit": 2, "cursor": first["next"]}).json()
    assert len(first["results"]) == 2 and second["results"][0]["id"] < first["results"][-1]["id"]
    assert_error(owner.get("/api/v1/audit", {"limit": "many"}), 400, "VALIDATION_ERROR")


def test_only_compliance_operators_and_admins_read_it(actors: Actors) -> None:
    assert_error(api_client(actors.teammate_key).get("/api/v1/audit"), 403, "FORBIDDEN")
    assert_error(api_client(actors.bot_key).get("/api/v1/audit"), 403, "FORBIDDEN")
