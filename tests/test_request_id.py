"""The request id: taken from a sane X-Request-ID or made, echoed in the response, in
every log line of the request and of the tasks it started."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import httpx
import pytest
from django.test import Client

from memoryhub.platform import request_id
from memoryhub.celery import app
from memoryhub.core import tasking
from tests.conftest import Actors, hub_database_url, poll, start_hub, start_python, stop_process


def test_it_echoes_a_sane_incoming_id(db: None) -> None:
    response = Client().get("/healthz", HTTP_X_REQUEST_ID="trace-7f3a:span/01")
    assert response["X-Request-ID"] == "trace-7f3a:span/01"


@pytest.mark.parametrize("sent", [None, "", "two words", 'quote"d', "line\nbreak", "x" * 129, "-leading-dash"])
def test_it_makes_its_own_id_for_a_missing_or_odd_one(db: None, sent: str | None) -> None:
    headers = {} if sent is None else {"HTTP_X_REQUEST_ID": sent}
    first, second = (Client().get("/healthz", **headers)["X-Request-ID"] for _ in range(2))
    assert re.fullmatch(r"[0-9a-f]{32}", first) and first != second


def test_the_requests_and_its_tasks_log_lines_carry_it(actors: Actors, transactional_db: None, tmp_path: Path) -> None:
    log = tmp_path / "hub.log"
    hub = start_hub(log_level="info", log_file=log)
    try:
        answer = httpx.post(
            f"{hub.url}/api/v1/memories", json={"content": "the customer prefers email", "user_id": "u-1"},
            headers={"Authorization": f"Bearer {actors.bot_key}", "X-Request-ID": "trace-task-42"}, timeout=30,
        )
        assert answer.status_code == 201 and answer.headers["X-Request-ID"] == "trace-task-42"
        # An odd request id in the same run: its 404 is logged with an id of our own.
        lost = httpx.get(f"{hub.url}/no-such-page", headers={"X-Request-ID": "a b"}, timeout=30)

        def task_logged() -> list[dict]:
            ours = [line for line in _json_lines(log) if line.get("request_id") == "trace-task-42"]
            return ours if any(line["logger"].startswith("celery") for line in ours) else []

        ours = poll(task_logged, timeout=30, interval=0.2)
        assert ours, f"no task line with the request id: {_json_lines(log)[-10:]}"
    finally:
        hub.stop()
    task_lines = [line for line in ours if line["logger"].startswith("celery")]
    assert any("memoryhub.memory.tasks" in line["message"] for line in task_lines), task_lines
    assert {"time", "level", "logger", "message"} <= set(ours[0])
    not_found = [line for line in _json_lines(log) if line.get("logger") == "django.request" and "/no-such-page" in line["message"]]
    assert not_found and not_found[0]["request_id"] == lost.headers["X-Request-ID"] != "a b"


@pytest.mark.redis
def test_a_celery_worker_logs_the_task_with_the_id_of_its_request(transactional_db: None, redis_url: str, tmp_path: Path, settings) -> None:  # type: ignore[no-untyped-def]
    log = tmp_path / "worker.log"
    env = {**os.environ, "REDIS_URL": redis_url, "DATABASE_URL": hub_database_url(), "MEMORYHUB_LOG_LEVEL": "INFO"}
    with log.open("wb") as output:
        worker = start_python(
            [sys.executable, "-m", "celery", "-A", "memoryhub", "worker", "--pool", "solo", "--without-gossip", "--without-mingle"],
            env=env, stdout=output.fileno(),
        )
    try:
        # This process as a hub in Redis mode, for one dispatch.
        settings.REDIS_URL = redis_url
        broker, app.conf.broker_url, app._pool = app.conf.broker_url, redis_url, None
        request_id.bind("trace-worker-7")
        try:
            tasking.dispatch("memoryhub.core.tasks.ping")
        finally:
            request_id.bind(None)
            app.conf.broker_url, app._pool = broker, None
        def worker_logged() -> list[dict]:
            assert worker.poll() is None, log.read_text()[-2000:]
            return [line for line in _json_lines(log) if line.get("request_id") == "trace-worker-7"]

        ours = poll(worker_logged, timeout=60, interval=0.2)
        assert ours, log.read_text()[-2000:]
    finally:
        stop_process(worker)
    assert any("memoryhub.core.tasks.ping" in line["message"] for line in ours), ours


def _json_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.startswith("{")]
