from __future__ import annotations

import threading
from datetime import timedelta

import time_machine

from django.db import connection
from django.utils import timezone

from memoryhub.memory.models import MemoryEntry
from tests.conftest import Actors, api_client, remember


def fact(key: str, subject: str, predicate: str, obj: str, user_id: str = "u1") -> dict:
    return remember(
        key, f"{subject} {predicate} {obj}", user_id=user_id, memory_type="factual",
        data={"subject": subject, "predicate": predicate, "object": obj, "confidence": 0.9},
    )


def listing(key: str, query: str = "") -> list[dict]:
    return api_client(key).get(f"/api/v1/memories?memory_type=factual{query}").json()["results"]


def test_it_supersedes_a_fact_with_the_same_subject_and_predicate(actors: Actors) -> None:
    old = fact(actors.bot_key, "Alice", "lives in", "Berlin")
    new = fact(actors.bot_key, "alice", "Lives  in", "Paris")
    assert [e["content"] for e in listing(actors.bot_key)] == ["alice Lives  in Paris"]
    every = {e["id"]: e for e in listing(actors.bot_key, "&include_invalidated=true")}
    assert every[old["id"]]["superseded_by"] == new["id"]
    assert every[old["id"]]["invalidated_at"] is not None
    assert every[new["id"]]["invalidated_at"] is None
    # Still readable by id, with its history link.
    assert api_client(actors.bot_key).get(f"/api/v1/memories/{old['id']}").json()["superseded_by"] == new["id"]


def test_it_answers_as_of_a_past_moment(actors: Actors) -> None:
    with time_machine.travel(timezone.now(), tick=False) as clock:
        fact(actors.bot_key, "Alice", "lives in", "Berlin")
        clock.shift(timedelta(seconds=1))
        between = timezone.now()
        clock.shift(timedelta(seconds=1))
        fact(actors.bot_key, "Alice", "lives in", "Paris")
        then = listing(actors.bot_key, f"&as_of={between.isoformat().replace('+', '%2B')}")
        assert [e["data"]["object"] for e in then] == ["Berlin"]
        assert [e["data"]["object"] for e in listing(actors.bot_key)] == ["Paris"]


def test_it_keeps_facts_of_other_users_and_predicates(actors: Actors) -> None:
    fact(actors.bot_key, "Alice", "lives in", "Berlin")
    fact(actors.bot_key, "Alice", "lives in", "Rome", user_id="u2")
    fact(actors.bot_key, "Alice", "works at", "Acme")
    assert len(listing(actors.bot_key)) == 3


def test_it_searches_current_facts_only_unless_asked(actors: Actors) -> None:
    fact(actors.bot_key, "Alice", "lives in", "Berlin")
    fact(actors.bot_key, "Alice", "lives in", "Paris")
    hits = api_client(actors.bot_key).post("/api/v1/memories/search", {"query": "Alice lives Berlin"}, format="json").json()["results"]
    assert [h["entry"]["data"]["object"] for h in hits] == ["Paris"]
    hits = api_client(actors.bot_key).post(
        "/api/v1/memories/search", {"query": "Alice lives Berlin", "include_invalidated": True}, format="json"
    ).json()["results"]
    assert {h["entry"]["data"]["object"] for h in hits} == {"Paris", "Berlin"}


def test_it_leaves_one_current_fact_under_concurrent_writers(actors: Actors, transactional_db: None) -> None:
    errors: list[BaseException] = []
    barrier = threading.Barrier(6)

    def writer(city: str) -> None:
        try:
            barrier.wait()
            response = api_client(actors.bot_key).post(
                "/api/v1/memories",
                {"content": f"Alice lives in {city}", "user_id": "u1", "memory_type": "factual",
                 "data": {"subject": "Alice", "predicate": "lives in", "object": city}},
                format="json",
            )
            assert response.status_code in (201, 409), response.content
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=writer, args=(f"City{i}",)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert MemoryEntry.objects.filter(memory_type="factual", invalidated_at__isnull=True).count() == 1
    # Every fact that lost its place points, directly or not, at the current one.
    assert MemoryEntry.objects.filter(memory_type="factual", invalidated_at__isnull=False, superseded_by__isnull=True).count() == 0
