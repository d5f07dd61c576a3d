"""Logs hold no end user's id, no key and no memory content (security review,
finding 6): the access log keeps paths without their query strings."""

from __future__ import annotations

import json
import re
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


def test_every_line_of_a_hubs_log_is_json(actors: Actors, passwords: str, transactional_db: None, tmp_path: Path) -> None:
    # Uvicorn's own lines, Python's warnings and an operator's visit (a login, the pages'
    # static files) included: a log shipper parses every line or none.
    log = tmp_path / "hub.log"
    hub = start_hub(log_level="info", log_file=log)
    try:
        with httpx.Client(base_url=hub.url, follow_redirects=True, timeout=30) as browser:
            token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', browser.get("/login/").text).group(1)
            home = browser.post("/login/", data={"username": "owner", "password": passwords, "csrfmiddlewaretoken": token},
                                headers={"Referer": f"{hub.url}/login/"})
            assert home.url.path == "/" and home.status_code == 200
            assets = re.findall(r'(?:href|src)="(/static/[^"]+)"', home.text)
            assert assets and all(browser.get(asset).status_code == 200 for asset in assets)
    finally:
        hub.stop()
    lines = log.read_text().splitlines()
    assert any('"uvicorn.error"' in line for line in lines) and any("/static/" in line for line in lines)
    for line in lines:
        assert isinstance(json.loads(line), dict), line
