"""Logs hold no end user's id, no key and no memory content (security review,
finding 6): the access log keeps paths without their query strings."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.conftest import Actors, start_hub


def test_a_runs_logs_hold_no_user_id_key_or_content(actors: Actors, transactional_db: None, tmp_path: Path) -> None:
    log = tmp_path / "hub.log"
    hub = start_hub(log_level="info", log_file=log)
    try:
        bot = {"Authorization": f"Bearer {actors.bot_key}"}
        memory = {"content": "canary-content-7f3a", "user_id": "canary-user-91c2"}
        assert httpx.post(f"{hub.url}/api/v1/memories", json=memory, headers=bot, timeout=30).status_code == 201
        assert httpx.get(f"{hub.url}/api/v1/memories?user_id=canary-user-91c2&tags=a", headers=bot, timeout=30).status_code == 200
        assert httpx.get(f"{hub.url}/api/v1/me?key={actors.bot_key}", timeout=30).status_code == 401
        assert httpx.get(f"{hub.url}/api/v1/stats?user_id=canary-user-91c2", headers=bot, timeout=30).status_code == 200
    finally:
        hub.stop()
    text = log.read_text()
    assert "GET /api/v1/memories" in text and "GET /api/v1/me" in text, text[-2000:]  # the access log is on
    for secret in ("canary-user-91c2", "canary-content-7f3a", actors.bot_key, actors.bot_key.split("_", 2)[2]):
        assert secret not in text, f"{secret!r} in the log"
