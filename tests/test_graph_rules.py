"""GET/PUT /api/v1/graph/rules (docs/graph.md, "Rules")."""

from __future__ import annotations

from memoryhub.core.models import AuditEntry
from tests.conftest import Actors, api_client, approver_key, assert_error


def put(key: str, *rules: dict[str, str]) -> object:
    return api_client(key).put("/api/v1/graph/rules", {"rules": list(rules)}, format="json")


def test_admins_replace_the_rules_folded_and_audited(actors: Actors) -> None:
    response = put(actors.owner_key, {"predicate": " Part  OF", "kind": "transitive"},
                   {"predicate": "parent of", "kind": "inverse", "inverse": "Child Of"}, {"predicate": "part of", "kind": "transitive"})
    assert response.status_code == 200, response.content
    expected = {"rules": [{"predicate": "parent of", "kind": "inverse", "inverse": "child of"}, {"predicate": "part of", "kind": "transitive"}]}
    assert response.json() == expected
    for key in (actors.bot_key, actors.teammate_key, actors.owner_key):
        assert api_client(key).get("/api/v1/graph/rules").json() == expected
    assert api_client(actors.spy_key).get("/api/v1/graph/rules").json() == {"rules": []}
    [audit] = AuditEntry.objects.filter(action="graph_rules_changed")
    assert audit.details["rules"]["to"] == ["parent of: inverse of child of", "part of: transitive"]
    assert put(actors.owner_key).json() == {"rules": []}


def test_only_admins_change_them_and_bad_rules_change_nothing(actors: Actors) -> None:
    put(actors.owner_key, {"predicate": "knows", "kind": "symmetric"})
    for key in (actors.bot_key, actors.teammate_key, approver_key(actors)):
        assert_error(put(key, {"predicate": "x", "kind": "multi"}), 403, "FORBIDDEN")
    assert_error(put(actors.owner_key, {"predicate": "x", "kind": "inverse"}), 400, "VALIDATION_ERROR")
    assert_error(put(actors.owner_key, {"predicate": "x", "kind": "symmetric", "inverse": "y"}), 400, "VALIDATION_ERROR")
    assert_error(put(actors.owner_key, {"predicate": "x", "kind": "reflexive"}), 400, "VALIDATION_ERROR")
    assert_error(put(actors.owner_key, {"predicate": "   ", "kind": "multi"}), 400, "VALIDATION_ERROR")
    assert_error(put(actors.owner_key, *[{"predicate": f"p{n}", "kind": "multi"} for n in range(201)]), 400, "VALIDATION_ERROR")
    assert_error(api_client(actors.owner_key).put("/api/v1/graph/rules", {"rules": "knows"}, format="json"), 400, "VALIDATION_ERROR")
    assert api_client(actors.owner_key).get("/api/v1/graph/rules").json() == {"rules": [{"predicate": "knows", "kind": "symmetric"}]}
    assert put(actors.outsider_key, {"predicate": "x", "kind": "multi"}).status_code == 200  # their own workspace's
    assert api_client(actors.owner_key).get("/api/v1/graph/rules").json() == {"rules": [{"predicate": "knows", "kind": "symmetric"}]}
