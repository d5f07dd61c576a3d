"""A Celery worker SIGKILLed in the middle of a job (Redis mode), and another started: the
job comes back after the visibility timeout (acks_late, MEMORYHUB_TASK_VISIBILITY_SECONDS)
and completes, exactly once in what it leaves behind. "In the middle" is made certain, not
left to timing: the test holds a lock on the table the job writes, and kills the worker
once PostgreSQL shows the job waiting for it."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import psycopg
import pytest
from django.db import models

from benchmarks.harness import ServerProcess
from tests.conftest import Actors, api_client, hub_database_url, poll, start_hub, start_python, stop_process
from tests.faults import RedisServer, in_process_tasks_settled, wait_for

pytestmark = [pytest.mark.faults, pytest.mark.redis]

VISIBILITY_SECONDS = "1"
WORKER_APPLICATION_NAME = "memoryhub-fault-worker"


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def celery_worker(redis_url: str) -> ServerProcess:
    env = {**os.environ, "REDIS_URL": redis_url, "DATABASE_URL": hub_database_url(), "MEMORYHUB_TASK_VISIBILITY_SECONDS": VISIBILITY_SECONDS,
           # A purge whose job went silent this long is taken over by the redelivered job.
           "MEMORYHUB_JOB_STALL_SECONDS": VISIBILITY_SECONDS,
           # The server notices a SIGKILLed worker's connection is gone even while its
           # statement waits for a lock, and rolls back, instead of finishing the statement
           # (committing it, outside a transaction) when the lock comes free.
           "PGOPTIONS": "-c client_connection_check_interval=100ms",
           # Tells the worker's connections from this process's own in pg_stat_activity.
           "PGAPPNAME": WORKER_APPLICATION_NAME,
           # Django's system checks (1.4 s a start here) are the suite's business, not each worker's.
           "CELERY_SKIP_CHECKS": "1"}
    return start_python(
        [sys.executable, "-m", "celery", "-A", "memoryhub", "worker", "--pool", "solo", "--loglevel", "WARNING", "--without-gossip", "--without-mingle"],
        env=env,
    )


@contextmanager
def writes_held(model: type[models.Model]) -> Iterator[int]:
    """Hold a SHARE lock on the model's table from a connection of our own: reads go on,
    every write to it waits. Yields that connection's backend pid."""
    with psycopg.connect(hub_database_url()) as holder:
        holder.execute(f'LOCK TABLE "{model._meta.db_table}" IN SHARE MODE')
        yield holder.info.backend_pid
        holder.rollback()


def kill_mid_write(redis_url: str, model: type[models.Model]) -> None:
    """Start a worker and SIGKILL it while its job waits to write `model`'s table: inside
    the job, provably, with whatever it wrote so far uncommitted. Writes go on only once
    the server has dropped the dead worker's connection and rolled its transaction back."""
    with writes_held(model) as holder, psycopg.connect(hub_database_url(), autocommit=True) as observer:
        worker = celery_worker(redis_url)
        try:
            waiting = poll(lambda: observer.execute(
                "SELECT pid FROM pg_stat_activity WHERE application_name = %s AND %s = ANY(pg_blocking_pids(pid))", [WORKER_APPLICATION_NAME, holder],
            ).fetchone(), timeout=60)
            assert waiting, f"no job came to write {model._meta.db_table} within 60 s"
            worker.send_signal(signal.SIGKILL)
            worker.wait()
            wait_for(lambda: observer.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [waiting[0]]).fetchone() is None,
                     timeout=10, what="the server to drop the killed worker's connection")
        finally:
            if worker.poll() is None:
                stop_process(worker)
    time.sleep(float(VISIBILITY_SECONDS) + 0.5)  # the next worker finds the job due as it starts


def test_it_completes_a_purge_once_after_its_worker_is_killed(actors: Actors, transactional_db: None, private_redis: RedisServer) -> None:
    from memoryhub.compliance.models import PurgeRequest
    from memoryhub.compliance.services import purge_counts
    from memoryhub.memory.models import MemoryEntry

    for n in range(20):
        api_client(actors.bot_key).post("/api/v1/memories", {"content": f"forget me {n}", "user_id": "gone"}, format="json")
    in_process_tasks_settled()
    hub = start_hub({"REDIS_URL": private_redis.url})
    try:
        headers = {"Authorization": f"Bearer {actors.owner_key}"}
        purge_id = httpx.post(f"{hub.url}/api/v1/purges", json={"user_id": "gone"}, headers=headers, timeout=30).json()["id"]
    finally:
        hub.stop()
    kill_mid_write(private_redis.url, MemoryEntry)
    worker = celery_worker(private_redis.url)
    try:
        wait_for(lambda: PurgeRequest.objects.get(pk=purge_id).storage_cleaned_at is not None, timeout=60, what="the purge done")
    finally:
        stop_process(worker)
    purge = PurgeRequest.objects.get(pk=purge_id)
    assert purge.status == "done"
    assert purge.receipt["deleted"]["memory.MemoryEntry"] == 20  # counted once, not per attempt
    assert sum(purge_counts(workspace_id=actors.workspace.pk, user_id="gone").values()) == 0


def run_through_a_killed_worker(redis_url: str, writes: type[models.Model], task: str, *args: object) -> object:
    """Queue `task` with no worker running, let a worker take it and kill it as it comes to
    write the table of `writes`, then let another finish it; its result."""
    from celery import Celery

    client = Celery(broker=redis_url, backend=redis_url)
    result = client.send_task(task, args=list(args))
    kill_mid_write(redis_url, writes)
    worker = celery_worker(redis_url)
    try:
        return result.get(timeout=60)
    finally:
        stop_process(worker)


def test_it_summarises_a_session_once_after_its_worker_is_killed(actors: Actors, transactional_db: None, private_redis: RedisServer) -> None:
    from memoryhub.conversations.models import ChainSummary, Session

    bot = api_client(actors.bot_key)
    bot.post("/api/v1/sessions", {"session_id": "s-kill", "user_id": "u1"}, format="json")
    messages = [{"role": "user" if n % 2 == 0 else "assistant", "content": f"turn {n} about the trip to Lisbon"} for n in range(12)]
    assert bot.post("/api/v1/sessions/s-kill/messages", {"messages": messages}, format="json").status_code == 201
    in_process_tasks_settled()
    session = Session.objects.get(session_id="s-kill")
    ChainSummary.objects.filter(session=session).delete()  # whatever the in-process policy did: the job below is the one
    Session.objects.filter(pk=session.pk).update(last_summary_index=0)

    run_through_a_killed_worker(private_redis.url, ChainSummary, "memoryhub.conversations.tasks.summarise_session", session.pk)

    links = list(ChainSummary.objects.filter(session=session).values_list("from_seq", "to_seq"))
    assert links == [(1, 12)], links  # one link over every message, not one per delivery


def test_it_indexes_vectors_once_after_its_worker_is_killed(actors: Actors, transactional_db: None, private_redis: RedisServer) -> None:
    from memoryhub.memory.models import MemoryEntry

    bot = api_client(actors.bot_key)
    for n in range(30):
        bot.post("/api/v1/memories", {"content": f"indexed fact {n}", "user_id": "u1"}, format="json")
    in_process_tasks_settled()
    MemoryEntry.objects.update(vector_indexed=False)  # as if the in-process indexer had not run yet

    run_through_a_killed_worker(private_redis.url, MemoryEntry, "memoryhub.memory.tasks.index_vectors")

    assert MemoryEntry.objects.count() == 30
    assert not MemoryEntry.objects.filter(vector_indexed=False).exists()


def test_it_reembeds_once_after_its_worker_is_killed(actors: Actors, transactional_db: None, private_redis: RedisServer) -> None:
    from memoryhub.memory.models import MemoryEntry

    bot = api_client(actors.bot_key)
    for n in range(20):
        bot.post("/api/v1/memories", {"content": f"re-embedded fact {n}", "user_id": "u1"}, format="json")
    in_process_tasks_settled()
    model = MemoryEntry.objects.values_list("embedding_model", flat=True).first()
    versions = dict(MemoryEntry.objects.values_list("pk", "version"))
    MemoryEntry.objects.update(embedding_model="an-older-model")

    run_through_a_killed_worker(private_redis.url, MemoryEntry, "memoryhub.memory.tasks.reembed")

    assert set(MemoryEntry.objects.values_list("embedding_model", flat=True)) == {model}
    assert dict(MemoryEntry.objects.values_list("pk", "version")) == versions  # vectors moved, entries untouched


def test_it_enforces_retention_once_after_its_worker_is_killed(actors: Actors, transactional_db: None, private_redis: RedisServer) -> None:
    from memoryhub.checkpoints.models import Checkpoint
    from memoryhub.compliance.models import RetentionRun
    from memoryhub.privacy.services import retention_policy_set

    bot = api_client(actors.bot_key)
    bot.post("/api/v1/sessions", {"session_id": "s-kept", "user_id": "u1"}, format="json")
    for version in range(6):
        bot.post("/api/v1/sessions/s-kept/checkpoints", {"expected_version": version, "state": {"v": version}}, format="json")
    in_process_tasks_settled()
    retention_policy_set(membership=actors.owner, kind="checkpoints", value=2)

    run_through_a_killed_worker(private_redis.url, Checkpoint, "memoryhub.compliance.tasks.enforce_retention")

    assert sorted(Checkpoint.objects.filter(session__session_id="s-kept").values_list("version", flat=True)) == [5, 6]
    removed = sum(run.counts.get("checkpoints", 0) for run in RetentionRun.objects.filter(workspace=actors.workspace))
    assert removed == 4  # recorded once, however often the job ran
