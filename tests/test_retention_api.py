"""GET/PUT /api/v1/retention (an extension of the contract)."""

from __future__ import annotations

from memoryhub.core.models import AuditEntry
from memoryhub.privacy.models import RetentionPolicy
from tests.conftest import Actors, api_client, assert_error


def test_it_shows_policies_with_defaults_and_meanings(actors: Actors) -> None:
    body = api_client(actors.owner_key).get("/api/v1/retention").json()
    assert body["policies"] == body["defaults"] == {"tool_outputs": None, "checkpoints": 50, "working_memories": 1, "sessions": None, "approvals": None, "usage": 90}
    assert body["meaning"]["checkpoints"].startswith("newest checkpoints kept") and body["runs"] == []


def test_it_changes_policies_all_or_nothing(actors: Actors) -> None:
    owner = api_client(actors.owner_key)
    changed = owner.put("/api/v1/retention", {"policies": {"tool_outputs": 30, "checkpoints": 5}}, format="json")
    assert changed.status_code == 200 and changed.json()["policies"]["tool_outputs"] == 30
    assert AuditEntry.objects.filter(action="retention_changed", actor="operator:owner").count() == 2
    refused = owner.put("/api/v1/retention", {"policies": {"tool_outputs": 7, "checkpoints": None}}, format="json")
    assert_error(refused, 400, "INVALID_RETENTION_VALUE")
    assert_error(owner.put("/api/v1/retention", {"policies": {"forever": 3}}, format="json"), 400, "INVALID_RETENTION_KIND")
    assert_error(owner.put("/api/v1/retention", {"policies": {"tool_outputs": 0}}, format="json"), 400, "VALIDATION_ERROR")
    assert_error(owner.put("/api/v1/retention", {"policies": {}}, format="json"), 400, "VALIDATION_ERROR")
    for huge in (10**12, 876_001):  # beyond int4, and beyond a century of hours: dates would overflow
        assert_error(owner.put("/api/v1/retention", {"policies": {"working_memories": huge}}, format="json"), 400, "INVALID_RETENTION_VALUE")
    assert dict(RetentionPolicy.objects.values_list("kind", "value")) == {"tool_outputs": 30, "checkpoints": 5}


def test_only_compliance_operators_and_admins_use_it(actors: Actors) -> None:
    assert_error(api_client(actors.teammate_key).get("/api/v1/retention"), 403, "FORBIDDEN")
    assert_error(api_client(actors.bot_key).put("/api/v1/retention", {"policies": {"sessions": 9}}, format="json"), 403, "FORBIDDEN")
    api_client(actors.outsider_key).put("/api/v1/retention", {"policies": {"sessions": 9}}, format="json")
    assert api_client(actors.owner_key).get("/api/v1/retention").json()["policies"]["sessions"] is None  # globex's policy stays there
