from __future__ import annotations

import httpx
from django.db import connection

from tests.conftest import Actors, LiveHub, api_client


def test_it_reports_every_check_with_details_for_operators(actors: Actors) -> None:
    response = api_client(actors.teammate_key).get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert set(body["checks"]) == {"database", "vector", "channel_layer", "task_queue"}
    assert all(check["ok"] for check in body["checks"].values())
    assert body["checks"]["vector"]["detail"].startswith("pgvector 0.8")
    assert body["checks"]["database"]["detail"].startswith("PostgreSQL 18")
    assert body["checks"]["channel_layer"]["detail"] == "InMemoryChannelLayer"
    assert body["checks"]["task_queue"]["detail"] == "in-process threads"


def test_it_needs_no_key_and_tells_others_the_status_only(actors: Actors) -> None:
    for client in (api_client(), api_client(actors.bot_key), api_client("mho_000000000000_forged")):
        body = client.get("/healthz").json()
        assert body["status"] == "ok"
        assert body["checks"] == {name: {"ok": True} for name in ("database", "vector", "channel_layer", "task_queue")}, body


def test_it_answers_503_without_the_vector_extension(db: None) -> None:
    with connection.cursor() as cursor:
        cursor.execute("DROP EXTENSION vector CASCADE")  # rolled back with the test's transaction
    response = api_client().get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["checks"]["vector"]["ok"] is False
    assert body["checks"]["database"]["ok"] is True


def test_it_answers_under_asgi(live_hub: LiveHub) -> None:
    response = httpx.get(f"{live_hub.url}/healthz", timeout=10)
    assert response.status_code == 200
    assert response.json()["status"] == "ok"


def test_it_answers_503_when_redis_is_unreachable(transactional_db: None) -> None:
    from tests.conftest import free_port, start_hub

    hub = start_hub({"REDIS_URL": f"redis://127.0.0.1:{free_port()}/0"})
    try:
        response = httpx.get(f"{hub.url}/healthz", timeout=30)
        assert response.status_code == 503
        checks = response.json()["checks"]
        assert checks["database"]["ok"] is True
        assert checks["channel_layer"]["ok"] is False
        assert checks["task_queue"]["ok"] is False
    finally:
        hub.stop()
