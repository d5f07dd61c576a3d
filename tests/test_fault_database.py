"""PostgreSQL stopped under load and started again: 503 in the envelope while it is down,
/healthz says so, and the same hub process serves again by itself."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.conftest import Actors, start_hub
from tests.faults import (
    Load, answers_after_recovery, assert_no_request_crashed, assert_outage_answers, assert_served_since, database_stopped, healthz,
)

pytestmark = [pytest.mark.faults, pytest.mark.alone]


def test_it_answers_503_while_postgresql_is_down_and_recovers_without_a_restart(actors: Actors, transactional_db: None, tmp_path: Path) -> None:
    log = tmp_path / "hub.log"
    hub = start_hub({"MEMORYHUB_DB_POOL_TIMEOUT": "1", "MEMORYHUB_LOG_FORMAT": "plain"}, log_file=log)
    try:
        load = Load(hub.url, actors.bot_key).start()
        time.sleep(1)
        with database_stopped():
            down_since = time.monotonic()
            time.sleep(1.5)
            health = healthz(hub.url)
            assert health is not None and health.status_code == 503
            assert health.json()["status"] == "unavailable"
            time.sleep(0.5)
            restarting_at = time.monotonic()
        served_since, answers = answers_after_recovery(hub, load)
    finally:
        hub.stop()

    assert_outage_answers(answers, service="database")
    during = [a for a in answers if down_since + 1.2 < a.at < restarting_at]
    assert during and all(a.status == 503 for a in during), sorted({a.status for a in during})
    assert_served_since(answers, served_since)
    assert_no_request_crashed(log)
