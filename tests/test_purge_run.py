"""The purge job under stress: writes racing it, a hub killed in the middle of it, a
second runner, and the database fence that covers every user_id table."""

from __future__ import annotations

import threading
import time

import httpx
from django.db import connection, connections, transaction

from memoryhub.compliance.fence import fenced_tables
from memoryhub.compliance.models import AuditEntry, PurgeRequest
from memoryhub.compliance.services import purge_counts, purge_run, user_hash, user_models
from memoryhub.conversations.services import MessageInput, message_append, session_create
from memoryhub.memory.models import MemoryEntry
from memoryhub.memory.services import MemoryInput, memory_write
from memoryhub.timeline.models import Event
from tests.conftest import Actors, api_client, assert_error, start_hub


def wait_for(predicate, timeout: float = 30) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def waiting_advisory_locks() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
        return cursor.fetchone()[0]


def test_it_fences_every_table_that_holds_a_user_id(db: None) -> None:
    assert {m._meta.db_table for m in user_models()} <= fenced_tables()


def test_a_write_racing_the_purge_does_not_survive_it(actors: Actors, transactional_db: None) -> None:
    in_flight, release = threading.Event(), threading.Event()

    def slow_writer() -> None:
        # Passed every check and inserted before the purge was asked for; commits later.
        try:
            with transaction.atomic():
                memory_write(agent=actors.bot, items=[MemoryInput(content="racing canary", user_id="racer")])
                in_flight.set()
                release.wait(20)
        finally:
            connections.close_all()

    writer = threading.Thread(target=slow_writer)
    writer.start()
    assert in_flight.wait(20)
    started = api_client(actors.owner_key).post("/api/v1/purges", {"user_id": "racer"}, format="json")
    assert started.status_code == 202
    wait_for(lambda: waiting_advisory_locks() == 1)  # the purge waits for the writer, not the other way round
    # A write that starts while the purge runs is refused and changes nothing.
    refused = api_client(actors.bot_key).post("/api/v1/memories", {"content": "late canary", "user_id": "racer"}, format="json")
    assert_error(refused, 409, "PURGE_IN_PROGRESS")
    # Other users are not held up.
    assert api_client(actors.bot_key).post("/api/v1/memories", {"content": "x", "user_id": "bystander"}, format="json").status_code == 201
    release.set()
    writer.join(20)
    wait_for(lambda: PurgeRequest.objects.get(pk=started.json()["id"]).status == "done")
    assert not MemoryEntry.objects.filter(user_id="racer").exists()
    assert PurgeRequest.objects.get(pk=started.json()["id"]).counts["memory.MemoryEntry"] == 1
    # Afterwards (no block asked for) the user may be written about again.
    assert api_client(actors.bot_key).post("/api/v1/memories", {"content": "new", "user_id": "racer"}, format="json").status_code == 201


def seed_messages(actors: Actors, user_id: str, sessions: int, per_session: int) -> int:
    for s in range(sessions):
        session, _ = session_create(agent=actors.bot, session_id=f"{user_id}-{s}", user_id=user_id)
        message_append(session=session, messages=[MessageInput(role="user", content=f"m{i}") for i in range(per_session)], actor="test")
    return sum(purge_counts(workspace_id=actors.workspace.pk, user_id=user_id).values())


def test_a_hub_killed_mid_purge_finishes_it_on_restart_with_one_receipt(actors: Actors, transactional_db: None) -> None:
    total = seed_messages(actors, "doomed", sessions=4, per_session=1000)
    control = seed_messages(actors, "kept", sessions=1, per_session=10)
    # Small batches make the purge long enough to kill in the middle.
    env = {"MEMORYHUB_PURGE_BATCH_ROWS": "5", "MEMORYHUB_PURGE_STALL_SECONDS": "2"}
    hub = start_hub(extra_env=env)
    headers = {"Authorization": f"Bearer {actors.owner_key}"}
    try:
        purge_id = httpx.post(f"{hub.url}/api/v1/purges", json={"user_id": "doomed"}, headers=headers).json()["id"]
        wait_for(lambda: PurgeRequest.objects.get(pk=purge_id).progress > 0.2)
        hub.process.kill()
        hub.process.wait(10)
    finally:
        hub.stop()
    killed = PurgeRequest.objects.get(pk=purge_id)
    left = sum(purge_counts(workspace_id=actors.workspace.pk, user_id="doomed").values())
    assert killed.status == "running" and 0 < left < total
    assert sum(killed.counts.values()) == total - left  # every committed batch counted, once

    # The restarted hub's periodic job takes the stalled purge over and finishes it.
    hub = start_hub(extra_env={**env, "MEMORYHUB_RUN_SCHEDULER": "1", "MEMORYHUB_PURGE_RESUME_SECONDS": "1"})
    try:
        wait_for(lambda: PurgeRequest.objects.get(pk=purge_id).status == "done", timeout=60)
    finally:
        hub.stop()
    done = PurgeRequest.objects.get(pk=purge_id)
    assert sum(done.receipt["deleted"].values()) == total and done.receipt["verification"]["passed"]
    assert sum(purge_counts(workspace_id=actors.workspace.pk, user_id="doomed").values()) == 0
    assert sum(purge_counts(workspace_id=actors.workspace.pk, user_id="kept").values()) == control
    assert PurgeRequest.objects.filter(user_hash=done.user_hash).count() == 1
    assert AuditEntry.objects.filter(action="purge_completed", target=f"purge:{purge_id}").count() == 1
    assert Event.objects.filter(kind="purge", ref__id=purge_id).count() == 1


def test_it_lets_only_one_runner_delete(actors: Actors, transactional_db: None) -> None:
    seeded = seed_messages(actors, "twice", sessions=1, per_session=50)
    purge = PurgeRequest.objects.create(
        workspace=actors.workspace, requested_by=actors.owner.user, user_hash=user_hash(workspace_id=actors.workspace.pk, user_id="twice"),
        pending_user_id="twice",
    )
    first = purge_run(purge_id=purge.pk)
    again = purge_run(purge_id=purge.pk)  # a duplicate delivery of the same job
    assert first.status == again.status == "done"
    assert again.receipt == first.receipt and sum(first.counts.values()) == seeded > 50
    assert AuditEntry.objects.filter(action="purge_completed").count() == 1


def test_it_cleans_the_indexes_after_a_purge(actors: Actors, transactional_db: None) -> None:
    seed_messages(actors, "indexed", sessions=1, per_session=20)
    started = api_client(actors.owner_key).post("/api/v1/purges", {"user_id": "indexed"}, format="json").json()
    wait_for(lambda: PurgeRequest.objects.get(pk=started["id"]).storage_cleaned_at is not None)
    body = api_client(actors.owner_key).get(f"/api/v1/purges/{started['id']}").json()
    cleanup = body["receipt"]["storage_cleanup"]
    assert cleanup["index_cleanup"] and set(cleanup["tables"]) == {"conversations_message", "conversations_session", "timeline_event"}
    assert body["storage_cleaned_at"] is not None
