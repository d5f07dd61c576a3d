"""Redis down in Redis mode, under load, and started again: 503 in the envelope while it
is down (never a 500), /healthz says so, and the hub serves again by itself."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.conftest import Actors, start_hub
from tests.faults import (
    Load, RedisServer, answers_after_recovery, assert_no_request_crashed, assert_outage_answers, assert_served_since, healthz,
)

pytestmark = [pytest.mark.faults, pytest.mark.redis]


def test_it_answers_503_while_redis_is_down_and_recovers_without_a_restart(actors: Actors, transactional_db: None, tmp_path: Path) -> None:
    redis_server = RedisServer(tmp_path)
    redis_server.start()
    log = tmp_path / "hub.log"
    hub = start_hub({"REDIS_URL": redis_server.url, "MEMORYHUB_LOG_FORMAT": "plain"}, log_file=log)
    try:
        load = Load(hub.url, actors.bot_key).start()
        time.sleep(1.5)
        redis_server.stop()
        down_since = time.monotonic()
        time.sleep(3)
        health = healthz(hub.url)
        assert health is not None and health.status_code == 503
        assert health.json()["status"] == "unavailable"
        restarting_at = time.monotonic()
        redis_server.start()
        served_since, answers = answers_after_recovery(hub, load)
    finally:
        hub.stop()
        redis_server.stop()

    # Without Redis a request that needs it (a rate-limit count, a job to queue) is refused
    # with 503; how many do varies with what the agents happened to send meanwhile.
    assert_outage_answers(answers, service="redis", some_refused=False)
    during = [a for a in answers if down_since + 1.5 < a.at < restarting_at]
    assert during and all(200 <= a.status < 300 or a.status == 503 for a in during), sorted({(a.operation, a.status) for a in during})
    assert_served_since(answers, served_since)
    assert_no_request_crashed(log)
