"""The scope matrix: who sees which entry, on every path.

bot and peer share the store `default`; loner is attached to `other` only; spy is in
the foreign workspace. An entry outside the caller's reach is a 404, never a leak."""

from __future__ import annotations

import pytest

from memoryhub.core.models import AuditEntry
from memoryhub.memory.models import MemoryEntry
from memoryhub.timeline.models import Event
from tests.conftest import Actors, api_client, assert_error, remember, search

UNIQUE = "zebra quartz marmalade"

# scope -> which agents can see an entry that bot wrote in store `default`
VISIBLE = {
    "agent": {"bot"},
    "shared": {"bot", "peer"},
    "global": {"bot", "peer", "loner"},
}


def keys_of(actors: Actors) -> dict[str, str]:
    return {"bot": actors.bot_key, "peer": actors.peer_key, "loner": actors.loner_key, "spy": actors.spy_key}


@pytest.mark.parametrize("scope", ["agent", "shared", "global"])
def test_it_enforces_the_scope_on_every_read_path(actors: Actors, scope: str) -> None:
    entry = remember(actors.bot_key, f"{UNIQUE} {scope}", scope=scope)
    for name, key in keys_of(actors).items():
        client = api_client(key)
        visible = name in VISIBLE[scope]
        get = client.get(f"/api/v1/memories/{entry['id']}")
        listed = [e["id"] for e in client.get("/api/v1/memories").json()["results"]]
        found = {mode: [h["entry"]["id"] for h in search(key, query=f"{UNIQUE} {scope}", mode=mode)] for mode in ("hybrid", "semantic", "keyword")}
        if visible:
            assert get.status_code == 200, name
            assert entry["id"] in listed, name
            assert all(entry["id"] in ids for ids in found.values()), (name, found)
        else:
            assert_error(get, 404, "MEMORY_NOT_FOUND")
            assert entry["id"] not in listed, name
            assert all(entry["id"] not in ids for ids in found.values()), (name, found)


@pytest.mark.parametrize("scope", ["agent", "shared", "global"])
def test_it_enforces_the_scope_on_patch_and_delete(actors: Actors, scope: str) -> None:
    for name, key in keys_of(actors).items():
        entry = remember(actors.bot_key, f"{UNIQUE} {scope} {name}", scope=scope)
        client = api_client(key)
        patch = client.patch(f"/api/v1/memories/{entry['id']}", {"content": "changed"}, format="json")
        delete = client.delete(f"/api/v1/memories/{entry['id']}")
        if name == "bot":  # the author
            assert patch.status_code == 200, name
            assert delete.status_code == 204, name
            assert not MemoryEntry.objects.filter(pk=entry["id"]).exists()
        elif name in VISIBLE[scope]:
            # Seeing an entry is not owning it: writes follow ownership.
            assert_error(patch, 403, "NOT_OWNER")
            assert_error(delete, 403, "NOT_OWNER")
            assert MemoryEntry.objects.get(pk=entry["id"]).content == f"{UNIQUE} {scope} {name}"
        else:
            assert_error(patch, 404, "MEMORY_NOT_FOUND")
            assert_error(delete, 404, "MEMORY_NOT_FOUND")
            assert MemoryEntry.objects.get(pk=entry["id"]).content == f"{UNIQUE} {scope} {name}"


def test_it_shows_operators_their_workspace_only(actors: Actors) -> None:
    mine = remember(actors.bot_key, f"{UNIQUE} mine")
    theirs = remember(actors.spy_key, f"{UNIQUE} theirs")
    assert api_client(actors.teammate_key).get(f"/api/v1/memories/{mine['id']}").status_code == 200
    assert_error(api_client(actors.teammate_key).get(f"/api/v1/memories/{theirs['id']}"), 404, "MEMORY_NOT_FOUND")
    ids = [h["entry"]["id"] for h in search(actors.owner_key, query=UNIQUE)]
    assert ids == [mine["id"]]


def test_it_lets_only_admin_or_compliance_operators_delete(actors: Actors) -> None:
    entry = remember(actors.bot_key, "to be deleted")
    assert_error(api_client(actors.teammate_key).delete(f"/api/v1/memories/{entry['id']}"), 403, "NOT_OWNER")
    assert_error(api_client(actors.outsider_key).delete(f"/api/v1/memories/{entry['id']}"), 404, "MEMORY_NOT_FOUND")
    assert api_client(actors.owner_key).delete(f"/api/v1/memories/{entry['id']}").status_code == 204


def test_every_change_and_deletion_is_recorded_under_its_real_actor(actors: Actors) -> None:
    entry = remember(actors.bot_key, f"{UNIQUE} audited", scope="global")
    api_client(actors.bot_key).patch(f"/api/v1/memories/{entry['id']}", {"content": "changed"}, format="json")
    api_client(actors.owner_key).delete(f"/api/v1/memories/{entry['id']}")
    events = list(Event.objects.filter(kind="memory").order_by("id").values_list("actor", "ref"))
    assert [(actor, ref["action"]) for actor, ref in events] == [("agent:bot", "changed"), ("operator:owner", "deleted")]
    assert AuditEntry.objects.filter(action="memory_deleted", actor="operator:owner", target=f"memory:{entry['id']}").exists()
    assert not AuditEntry.objects.filter(action="memory_changed").exists()  # agents' writes are on the timeline


def test_it_answers_malformed_ids_with_404(actors: Actors) -> None:
    assert_error(api_client(actors.bot_key).get("/api/v1/memories/not-a-uuid"), 404, "MEMORY_NOT_FOUND")
    assert_error(api_client(actors.bot_key).get("/api/v1/memories/00000000-0000-0000-0000-000000000000"), 404, "MEMORY_NOT_FOUND")
