"""The purge job under stress: writes racing it, a hub killed in the middle of it, a
second runner, and the database fence that covers every user_id table."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

import httpx
from django.conf import settings
from django.db import connection, connections, transaction
from django.utils import timezone

from memoryhub.compliance.models import PurgeRequest
from memoryhub.compliance.services import purge_counts, purge_run
from memoryhub.conversations.messages import MessageInput, message_append
from memoryhub.conversations.models import Message
from memoryhub.conversations.sessions import session_create
from memoryhub.core.models import AuditEntry
from memoryhub.core.registry import user_models
from memoryhub.memory.models import MemoryEntry
from memoryhub.memory.services import MemoryInput, memory_write
from memoryhub.privacy.fence import fenced_tables
from memoryhub.privacy.services import user_hash
from memoryhub.timeline.models import Event
from tests.conftest import Actors, api_client, assert_error, poll, start_hub


def wait_for(predicate, timeout: float = 30) -> None:  # type: ignore[no-untyped-def]
    assert poll(predicate, timeout=timeout, interval=0.02), "timed out"


def waiting_advisory_locks() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
        return cursor.fetchone()[0]


def test_it_fences_every_table_that_holds_a_user_id(db: None) -> None:
    assert {m._meta.db_table for m in user_models()} <= fenced_tables()


@dataclass
class HeldWriter:
    thread: threading.Thread
    release: threading.Event
    released: list[bool]


def purge_behind_a_writer(actors: Actors, *, then: Callable[[], object] = lambda: None) -> tuple[HeldWriter, httpx.Response]:
    """A writer that passed the fence about "racer" and inserted, its transaction held open;
    then a purge of "racer", waiting for it. Once released, the writer runs `then` in its
    transaction and commits."""
    in_flight, release = threading.Event(), threading.Event()
    released: list[bool] = []

    def slow_writer() -> None:
        try:
            with transaction.atomic():
                memory_write(agent=actors.bot, items=[MemoryInput(content="racing canary", user_id="racer")])
                in_flight.set()
                released.append(release.wait(20))
                then()
        finally:
            connections.close_all()

    writer = HeldWriter(threading.Thread(target=slow_writer), release, released)
    writer.thread.start()
    assert in_flight.wait(20)
    started = api_client(actors.owner_key).post("/api/v1/purges", {"user_id": "racer"}, format="json")
    assert started.status_code == 202
    wait_for(lambda: waiting_advisory_locks() == 1)  # the purge waits for the writer, not the other way round
    return writer, started


def test_a_write_racing_the_purge_does_not_survive_it(actors: Actors, transactional_db: None) -> None:
    writer, started = purge_behind_a_writer(actors)
    # A write that starts while the purge runs is refused and changes nothing.
    refused = api_client(actors.bot_key).post("/api/v1/memories", {"content": "late canary", "user_id": "racer"}, format="json")
    assert_error(refused, 409, "PURGE_IN_PROGRESS")
    # Other users are not held up.
    assert api_client(actors.bot_key).post("/api/v1/memories", {"content": "x", "user_id": "bystander"}, format="json").status_code == 201
    writer.release.set()
    writer.thread.join(20)
    # Neither waited for the writer in flight: it was let go, it did not time out.
    assert writer.released == [True]
    wait_for(lambda: PurgeRequest.objects.get(pk=started.json()["id"]).status == "done")
    assert not MemoryEntry.objects.filter(user_id="racer").exists()
    assert PurgeRequest.objects.get(pk=started.json()["id"]).counts["memory.MemoryEntry"] == 1
    # Afterwards (no block asked for) the user may be written about again.
    assert api_client(actors.bot_key).post("/api/v1/memories", {"content": "new", "user_id": "racer"}, format="json").status_code == 201


def test_a_writer_past_the_fence_may_write_more_about_its_user_and_the_purge_takes_it_all(actors: Actors, transactional_db: None) -> None:
    # The fence checks a (workspace, user) once per transaction: the shared lock that
    # check took makes the purge, asked for meanwhile, wait for the whole transaction.
    def write_again() -> None:
        memory_write(agent=actors.bot, items=[MemoryInput(content="second canary", user_id="racer")])

    writer, started = purge_behind_a_writer(actors, then=write_again)
    writer.release.set()
    writer.thread.join(20)
    wait_for(lambda: PurgeRequest.objects.get(pk=started.json()["id"]).status == "done")
    assert not MemoryEntry.objects.filter(user_id="racer").exists()
    assert PurgeRequest.objects.get(pk=started.json()["id"]).counts["memory.MemoryEntry"] == 2


def seed_messages(actors: Actors, user_id: str, sessions: int, per_session: int) -> int:
    for s in range(sessions):
        session, _ = session_create(agent=actors.bot, session_id=f"{user_id}-{s}", user_id=user_id)
        message_append(session=session, messages=[MessageInput(role="user", content=f"m{i}") for i in range(per_session)], actor="test")
    return sum(purge_counts(workspace_id=actors.workspace.pk, user_id=user_id).values())


def test_a_hub_killed_mid_purge_finishes_it_on_restart_with_one_receipt(actors: Actors, transactional_db: None) -> None:
    total = seed_messages(actors, "doomed", sessions=4, per_session=1000)
    control = seed_messages(actors, "kept", sessions=1, per_session=10)
    # Small batches make the purge long enough to kill in the middle.
    env = {"MEMORYHUB_PURGE_BATCH_ROWS": "5", "MEMORYHUB_JOB_STALL_SECONDS": "2"}
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


def live_purge(actors: Actors, user_id: str, **fields: object) -> PurgeRequest:
    return PurgeRequest.objects.create(
        workspace=actors.workspace, requested_by=actors.owner.user, user_hash=user_hash(workspace_id=actors.workspace.pk, user_id=user_id),
        pending_user_id=user_id, **fields,
    )


def test_it_leaves_a_purge_to_its_live_runner_and_takes_over_a_silent_one(actors: Actors, transactional_db: None) -> None:
    seeded = seed_messages(actors, "twice", sessions=1, per_session=50)
    purge = live_purge(actors, "twice", status="running", runner="another-job", heartbeat_at=timezone.now(), attempts=1)
    assert purge_run(purge_id=purge.pk).status == "running"  # a duplicate delivery while the job is alive
    assert sum(purge_counts(workspace_id=actors.workspace.pk, user_id="twice").values()) == seeded  # nothing touched
    PurgeRequest.objects.filter(pk=purge.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=10))
    done = purge_run(purge_id=purge.pk)
    assert done.status == "done" and done.attempts == 2 and sum(done.counts.values()) == seeded
    assert purge_run(purge_id=purge.pk).receipt == done.receipt  # and again: nothing more happens
    assert AuditEntry.objects.filter(action="purge_completed").count() == 1


def test_a_purge_that_keeps_failing_ends_as_failed(actors: Actors, transactional_db: None) -> None:
    seeded = seed_messages(actors, "stuck", sessions=1, per_session=5)
    purge = live_purge(actors, "stuck", status="running", attempts=settings.MEMORYHUB_PURGE_MAX_ATTEMPTS, error="OperationalError")
    failed = purge_run(purge_id=purge.pk)
    assert failed.status == "failed" and failed.pending_user_id == ""
    assert sum(failed.receipt["verification"]["remaining"].values()) == seeded and failed.receipt["error"] == "OperationalError"
    assert "stuck" not in str(failed.receipt)
    assert AuditEntry.objects.get(action="purge_failed").details["attempts"] == settings.MEMORYHUB_PURGE_MAX_ATTEMPTS + 1
    # The fence lifts with it: the user may be written about (and purged) again.
    assert api_client(actors.bot_key).post("/api/v1/memories", {"content": "x", "user_id": "stuck"}, format="json").status_code == 201


def index_entries(index: str, user_id: str) -> int:
    """Rows a btree index points to under a key holding `user_id` (pageinspect; a
    deduplicated entry lists several rows)."""
    needle = " ".join(f"{b:02x}" for b in user_id.encode())
    with connection.cursor() as cursor:
        cursor.execute("CREATE EXTENSION IF NOT EXISTS pageinspect")
        cursor.execute(
            "SELECT coalesce(sum(coalesce(cardinality(item.tids), 1)), 0) "
            "FROM generate_series(1, (pg_relation_size(%s::regclass) / 8192)::int - 1) AS page, "
            "LATERAL bt_page_stats(%s, page) AS stats, LATERAL bt_page_items(%s, page) AS item "
            # Leaf pages only; on all but the rightmost, the first item is the high key.
            "WHERE stats.type = 'l' AND NOT (item.itemoffset = 1 AND stats.btpo_next <> 0) AND item.data LIKE %s",
            [index, index, index, f"%{needle}%"],
        )
        return cursor.fetchone()[0]


def seed_copies_of_a_message(actors: Actors, user_id: str, *, count: int) -> None:
    """A session of `count` messages, all but the first copied in SQL: the rows only need
    to be there, and appending 20,000 through the service takes seconds."""
    seed_messages(actors, user_id, sessions=1, per_session=1)
    columns = [field.column for field in Message._meta.concrete_fields if not field.primary_key]
    copied = ["g" if column == "seq" else column for column in columns]
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {Message._meta.db_table} ({', '.join(columns)}) "
            f"SELECT {', '.join(copied)} FROM {Message._meta.db_table}, generate_series(2, %s) AS g WHERE user_id = %s",
            [count, user_id],
        )


def test_it_removes_a_purged_user_from_the_indexes(actors: Actors, transactional_db: None) -> None:
    seed_copies_of_a_message(actors, "crowd", count=20000)  # the user's rows are then under 2% of the table
    seed_messages(actors, "indexed", sessions=1, per_session=20)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE conversations_message")
        cursor.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'conversations_message' AND indexdef LIKE '%%(user_id)'")
        index = cursor.fetchone()[0]
    assert index_entries(index, "indexed") == 20
    # What a plain VACUUM does after deleting them: PostgreSQL skips the index scan.
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM conversations_message WHERE user_id = 'indexed' AND seq > 10")
        cursor.execute("VACUUM conversations_message")
    assert index_entries(index, "indexed") == 20

    started = api_client(actors.owner_key).post("/api/v1/purges", {"user_id": "indexed"}, format="json").json()
    wait_for(lambda: PurgeRequest.objects.get(pk=started["id"]).storage_cleaned_at is not None)
    assert index_entries(index, "indexed") == 0
    body = api_client(actors.owner_key).get(f"/api/v1/purges/{started['id']}").json()
    assert {"conversations_message", "compliance_purgerequest"} <= set(body["receipt"]["storage_cleanup"]["tables"])
    assert index_entries(index, "crowd") == 20000


def test_usage_counted_about_the_user_and_not_yet_written_stays_counted_as_no_ones(actors: Actors, transactional_db: None) -> None:
    from memoryhub.usage import metering
    from memoryhub.usage.models import UsageRecord

    # Counted in this process (written every few seconds): the purge comes before the flush.
    with metering.attributed(workspace_id=actors.workspace.pk, agent_id=actors.bot.pk, user_id="leaving"):
        metering.record(provider="local", operation="embed", items=3, input_tokens=30, output_tokens=0, duration_ms=5)
    started = api_client(actors.owner_key).post("/api/v1/purges", {"user_id": "leaving"}, format="json")
    assert started.status_code == 202, started.content
    wait_for(lambda: PurgeRequest.objects.get(pk=started.json()["id"]).status == "done")
    metering.flush()
    assert not UsageRecord.objects.filter(user_id="leaving").exists()
    kept = UsageRecord.objects.get(workspace=actors.workspace, agent=actors.bot)
    assert (kept.user_id, kept.calls, kept.items, kept.input_tokens) == ("", 1, 3, 30)
