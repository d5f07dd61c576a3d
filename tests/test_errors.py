"""The contract's error envelope on every error path, and the body size limit."""

from __future__ import annotations

import httpx
from django.test import override_settings

from memoryhub.core.models import Agent
from tests.conftest import Actors, LiveHub, api_client, assert_error


def test_it_answers_unknown_api_paths_with_the_envelope(actors: Actors) -> None:
    assert_error(api_client(actors.bot_key).get("/api/v1/no-such-thing"), 404, "NOT_FOUND")


def test_it_answers_wrong_methods_with_the_envelope(actors: Actors) -> None:
    assert_error(api_client(actors.bot_key).delete("/api/v1/me"), 405, "METHOD_NOT_ALLOWED")


def test_it_answers_html_pages_with_html(actors: Actors) -> None:
    response = api_client().get("/no-such-page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


@override_settings(MEMORYHUB_MAX_BODY_BYTES=1000, DATA_UPLOAD_MAX_MEMORY_SIZE=1000)
def test_it_answers_oversize_bodies_with_413(actors: Actors) -> None:
    body = '{"agent": "planner", "label": "' + "x" * 2000 + '"}'
    response = api_client(actors.owner_key).post("/api/v1/keys", body, content_type="application/json")
    error = assert_error(response, 413, "PAYLOAD_TOO_LARGE")
    assert error["details"]["limit_bytes"] == 1000
    assert not Agent.objects.filter(name="planner").exists()


def test_it_refuses_oversize_bodies_before_reading_them(live_hub: LiveHub, actors: Actors) -> None:
    # Served by uvicorn: the ASGI guard answers before Django spools the body.
    too_big = b"x" * (32 * 1024 * 1024 + 1)
    response = httpx.post(f"{live_hub.url}/api/v1/keys", content=too_big, headers={"Content-Type": "application/json"}, timeout=60)
    assert_error(response, 413, "PAYLOAD_TOO_LARGE")

    def chunks():  # no Content-Length: counted as it arrives (and read for a known key only)
        for _ in range(40):
            yield b"x" * (1024 * 1024)

    response = httpx.post(f"{live_hub.url}/api/v1/keys", content=chunks(), timeout=60,
                          headers={"Content-Type": "application/json", "Authorization": f"Bearer {actors.owner_key}"})
    assert_error(response, 413, "PAYLOAD_TOO_LARGE")


def test_it_passes_small_chunked_bodies_through(live_hub: LiveHub, actors: Actors) -> None:
    def chunks():
        yield b'{"agent": '
        yield b'"chunky"}'

    response = httpx.post(
        f"{live_hub.url}/api/v1/keys",
        content=chunks(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {actors.owner_key}"},
        timeout=30,
    )
    assert response.status_code == 201, response.text
    assert response.json()["agent"] == "chunky"
