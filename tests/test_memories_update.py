from __future__ import annotations

from tests.conftest import Actors, api_client, assert_error, remember, search


def test_it_updates_and_bumps_the_version(actors: Actors) -> None:
    entry = remember(actors.bot_key, "the build server is jenkins-01", tags=["infra"])
    response = api_client(actors.bot_key).patch(
        f"/api/v1/memories/{entry['id']}", {"content": "the build server is buildkite", "version": 1, "tags": ["infra", "ci"]}, format="json"
    )
    assert response.status_code == 200
    body = response.json()
    assert (body["content"], body["version"], body["tags"]) == ("the build server is buildkite", 2, ["infra", "ci"])
    # Re-embedded and re-indexed with the new text.
    assert search(actors.bot_key, query="buildkite", mode="keyword")[0]["entry"]["id"] == entry["id"]
    assert search(actors.bot_key, query="jenkins", mode="keyword") == []


def test_it_refuses_a_stale_version_with_409(actors: Actors) -> None:
    entry = remember(actors.bot_key, "v1")
    client = api_client(actors.bot_key)
    assert client.patch(f"/api/v1/memories/{entry['id']}", {"content": "v2", "version": 1}, format="json").status_code == 200
    error = assert_error(client.patch(f"/api/v1/memories/{entry['id']}", {"content": "v3", "version": 1}, format="json"), 409, "VERSION_CONFLICT")
    assert error["details"]["current_version"] == 2
    assert client.get(f"/api/v1/memories/{entry['id']}").json()["content"] == "v2"


def test_it_validates_patches(actors: Actors) -> None:
    entry = remember(
        actors.bot_key, "Bob works at Acme", memory_type="factual", data={"subject": "Bob", "predicate": "works at", "object": "Acme"}
    )
    client = api_client(actors.bot_key)
    assert_error(client.patch(f"/api/v1/memories/{entry['id']}", {"data": {"subject": "Bob"}}, format="json"), 400, "INVALID_DATA")
    assert_error(client.patch(f"/api/v1/memories/{entry['id']}", {"tags": [1]}, format="json"), 400, "VALIDATION_ERROR")
    assert_error(client.patch(f"/api/v1/memories/{entry['id']}", {"scope": "global"}, format="json"), 400, "VALIDATION_ERROR")
    assert_error(client.patch(f"/api/v1/memories/{entry['id']}", "{", content_type="application/json"), 400, "MALFORMED_JSON")
    assert client.get(f"/api/v1/memories/{entry['id']}").json()["version"] == 1


def test_it_deletes(actors: Actors) -> None:
    entry = remember(actors.bot_key, "ephemeral")
    client = api_client(actors.bot_key)
    assert client.delete(f"/api/v1/memories/{entry['id']}").status_code == 204
    assert_error(client.get(f"/api/v1/memories/{entry['id']}"), 404, "MEMORY_NOT_FOUND")
    assert_error(client.delete(f"/api/v1/memories/{entry['id']}"), 404, "MEMORY_NOT_FOUND")
