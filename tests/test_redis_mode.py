"""With REDIS_URL set: Redis channel layer, Redis broker, tasks run in Celery workers."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import httpx
import pytest
from celery import Celery

from memoryhub.timeline.models import EVENT_KINDS
from tests.conftest import Actors, LiveHub, poll, purge_finished, start_hub
from tests.event_walk import walk_every_event_kind
from tests.sse import Stream

pytestmark = pytest.mark.redis


@pytest.fixture
def redis_hub(transactional_db: None, redis_url: str) -> Iterator[LiveHub]:
    hub = start_hub({"REDIS_URL": redis_url})
    try:
        yield hub
    finally:
        hub.stop()


def test_it_uses_redis_for_the_channel_layer_and_the_queue(actors: Actors, redis_hub: LiveHub) -> None:
    operator = {"Authorization": f"Bearer {actors.teammate_key}"}  # the details are for operators
    body = httpx.get(f"{redis_hub.url}/healthz", headers=operator, timeout=30).json()
    assert body["status"] == "ok", body
    assert body["checks"]["channel_layer"]["detail"] == "RedisChannelLayer"
    assert body["checks"]["task_queue"]["detail"] == "redis broker"


def test_it_runs_tasks_in_a_celery_worker_process(worker: subprocess.Popen, redis_url: str) -> None:
    client = Celery(broker=redis_url, backend=redis_url)
    result = client.send_task("memoryhub.core.tasks.ping")
    answer = result.get(timeout=60)
    assert answer["pong"] is True
    assert answer["pid"] == worker.pid
    assert answer["pid"] != os.getpid()


def test_it_delivers_group_messages_between_layer_instances(redis_url: str) -> None:
    from asgiref.sync import async_to_sync
    from channels_redis.core import RedisChannelLayer

    # Separate layer instances (as in separate ASGI workers) see each other's groups
    # only through Redis: this is what lets the live feed run on several workers.
    sender = RedisChannelLayer(hosts=[redis_url])
    receiver = RedisChannelLayer(hosts=[redis_url])

    async def roundtrip() -> dict:
        import asyncio

        channel = await receiver.new_channel()
        await receiver.group_add("workspace.test", channel)
        await sender.group_send("workspace.test", {"type": "event", "n": 1})
        return await asyncio.wait_for(receiver.receive(channel), timeout=10)

    assert async_to_sync(roundtrip)()["n"] == 1


def test_a_purge_runs_in_a_celery_worker(actors: Actors, redis_hub: LiveHub, worker: subprocess.Popen) -> None:

    from memoryhub.compliance.services import purge_counts
    from tests.conftest import api_client

    api_client(actors.bot_key).post("/api/v1/memories", {"content": "remember me not", "user_id": "gone"}, format="json")
    headers = {"Authorization": f"Bearer {actors.owner_key}"}
    purge_id = httpx.post(f"{redis_hub.url}/api/v1/purges", json={"user_id": "gone"}, headers=headers, timeout=30).json()["id"]
    purge = purge_finished(purge_id, storage_cleaned=True)
    assert purge.status == "done" and purge.receipt["deleted"]["memory.MemoryEntry"] == 1
    assert sum(purge_counts(workspace_id=actors.workspace.pk, user_id="gone").values()) == 0


def test_an_idle_stream_gets_its_keep_alives(actors: Actors, redis_url: str, transactional_db: None) -> None:
    # Proxies cut a stream that stays silent. On Redis a stream waits for wake-ups in
    # blocks of 5 s (channels-redis's BZPOPMIN); a keep-alive interval longer than that
    # shows the wait neither ends the stream nor holds back the keep-alive.
    hub = start_hub({"REDIS_URL": redis_url, "MEMORYHUB_STREAM_KEEPALIVE_SECONDS": "6"})
    headers = {"Authorization": f"Bearer {actors.bot_key}"}
    stream = None
    try:
        httpx.post(f"{hub.url}/api/v1/sessions", json={"session_id": "quiet", "user_id": "u1"}, headers=headers).raise_for_status()
        stream = Stream(f"{hub.url}/api/v1/sessions/quiet/events", headers=headers).start()
        assert stream.status == 200
        assert poll(lambda: stream.comments >= 1 or stream.ended(), timeout=12)
        assert stream.comments == 1 and not stream.ended(), "the stream ended before its first keep-alive"
    finally:
        if stream is not None:
            stream.close()
        hub.stop()


def test_every_kind_of_event_wakes_the_streams_at_once(actors: Actors, redis_hub: LiveHub, worker: subprocess.Popen, redis_url: str) -> None:
    # Summaries, purges and the retention job run in the Celery worker: their events
    # reach the hub's streams through Redis.
    def run_retention() -> None:
        Celery(broker=redis_url, backend=redis_url).send_task("memoryhub.compliance.tasks.enforce_retention").get(timeout=60)

    assert sorted(walk_every_event_kind(redis_hub, actors, run_retention=run_retention)) == sorted(EVENT_KINDS)
