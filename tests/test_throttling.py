"""Rate limits per API key and kind of request (security review, finding 4): beyond
them, 429 RATE_LIMITED in the envelope with Retry-After; other keys and other kinds
keep their own budgets."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import override_settings

from memoryhub.memory.models import MemoryEntry
from tests.conftest import Actors, api_client, assert_error

TIGHT = {"reads": "5/minute", "writes": "3/minute", "searches": "2/minute", "tool_calls": "2/minute", "purges": "1/hour"}


@pytest.fixture(autouse=True)
def tight_limits() -> None:
    cache.clear()  # counts of earlier tests' keys
    with override_settings(MEMORYHUB_RATES=TIGHT):
        yield
    cache.clear()


def test_it_limits_writes_per_key(actors: Actors) -> None:
    bot = api_client(actors.bot_key)
    for n in range(3):
        assert bot.post("/api/v1/memories", {"content": f"m{n}", "user_id": "u1"}, format="json").status_code == 201
    response = bot.post("/api/v1/memories", {"content": "one too many", "user_id": "u1"}, format="json")
    assert_error(response, 429, "RATE_LIMITED")
    assert 1 <= int(response["Retry-After"]) <= 60
    assert MemoryEntry.objects.count() == 3
    # Another key, and another kind of request, have budgets of their own.
    assert api_client(actors.peer_key).post("/api/v1/memories", {"content": "peer", "user_id": "u1"}, format="json").status_code == 201
    assert bot.get("/api/v1/memories").status_code == 200


def test_it_limits_searches_tool_calls_and_purges_apart(actors: Actors) -> None:
    bot = api_client(actors.bot_key)
    for _ in range(2):
        assert bot.post("/api/v1/memories/search", {"query": "q"}, format="json").status_code == 200
    assert_error(bot.post("/api/v1/memories/search", {"query": "q"}, format="json"), 429, "RATE_LIMITED")
    assert_error(bot.post("/api/v1/episodes/similar", {"task": "t"}, format="json"), 429, "RATE_LIMITED")
    bot.post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1"}, format="json")
    for _ in range(2):
        assert bot.post("/api/v1/sessions/s1/tool-calls", {"tool": "t"}, format="json").status_code == 201
    assert_error(bot.post("/api/v1/sessions/s1/tool-calls", {"tool": "t"}, format="json"), 429, "RATE_LIMITED")
    owner = api_client(actors.owner_key)
    assert owner.post("/api/v1/purges", {"user_id": "u1", "dry_run": True}, format="json").status_code == 202
    assert_error(owner.post("/api/v1/purges", {"user_id": "u2", "dry_run": True}, format="json"), 429, "RATE_LIMITED")


def test_reads_are_limited_too(actors: Actors) -> None:
    teammate = api_client(actors.teammate_key)
    for _ in range(5):
        assert teammate.get("/api/v1/me").status_code == 200
    assert_error(teammate.get("/api/v1/me"), 429, "RATE_LIMITED")
