from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from memoryhub.compliance.models import RetentionRun
from memoryhub.compliance.tasks import sweep_expired_memories as sweep_expired
from memoryhub.memory.models import MemoryEntry
from memoryhub.memory.services import memory_sweep_expired
from memoryhub.timeline.models import Event
from tests.conftest import Actors, api_client, assert_error, remember, search


def expire(entry_id: str) -> None:
    MemoryEntry.objects.filter(pk=entry_id).update(expires_at=timezone.now() - timedelta(seconds=1))


def test_it_never_returns_an_expired_entry(actors: Actors) -> None:
    entry = remember(actors.bot_key, "secret launch code is swordfish", ttl_seconds=60, user_id="carol")
    expire(entry["id"])
    client = api_client(actors.bot_key)
    assert_error(client.get(f"/api/v1/memories/{entry['id']}"), 404, "MEMORY_NOT_FOUND")
    assert client.get("/api/v1/memories").json()["results"] == []
    for mode in ("hybrid", "semantic", "keyword"):
        assert search(actors.bot_key, query="launch code swordfish", mode=mode) == []
    assert search(actors.bot_key) == []
    assert client.get("/api/v1/stats").json()["memories"]["total"] == 0
    assert_error(client.patch(f"/api/v1/memories/{entry['id']}", {"content": "x"}, format="json"), 404, "MEMORY_NOT_FOUND")


def test_it_lists_active_working_memories(actors: Actors) -> None:
    active = remember(actors.bot_key, "editing chapter 3", memory_type="working")
    stale = remember(actors.bot_key, "editing chapter 2", memory_type="working")
    expire(stale["id"])
    remember(actors.bot_key, "not working memory")
    listed = api_client(actors.bot_key).get("/api/v1/memories?memory_type=working").json()["results"]
    assert [e["id"] for e in listed] == [active["id"]]


def test_the_sweep_deletes_expired_rows_and_records_counts_only(actors: Actors) -> None:
    doomed = [remember(actors.bot_key, f"carol's card ends 4242 #{i}", user_id="carol", ttl_seconds=60) for i in range(3)]
    kept = remember(actors.bot_key, "kept forever")
    foreign = remember(actors.spy_key, "globex note", ttl_seconds=60)
    for entry in [*doomed, foreign]:
        expire(entry["id"])
    assert sweep_expired() == 4
    assert list(MemoryEntry.objects.values_list("pk", flat=True)) == [__import__("uuid").UUID(kept["id"])]
    # The counts are reported with the other retention work (Compliance page) and on the timeline.
    runs = {run.workspace.slug: run for run in RetentionRun.objects.select_related("workspace")}
    assert runs["acme"].counts == {"memories_expired": 3} and runs["globex"].counts == {"memories_expired": 1}
    events = {e.workspace.slug: e for e in Event.objects.filter(kind="retention").select_related("workspace")}
    assert events["acme"].summary == "Retention removed 3 memories expired."
    assert "carol" not in events["acme"].summary and "4242" not in events["acme"].summary
    assert events["acme"].user_id == ""
    assert memory_sweep_expired() == {}
