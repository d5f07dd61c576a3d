"""GET /api/v1/usage and /api/v1/settings/budget (docs/usage.md): every model call metered
by provider, budgets that hold."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import time_machine
from django.test import override_settings

from memoryhub.memory.local_model import count_tokens
from memoryhub.memory.models import MemoryEntry
from memoryhub.timeline.models import Event
from tests.conftest import Actors, api_client, assert_error, remember
from tests.fake_services import FAKE_DIMENSIONS, FakeEmbeddings, fake_openai_embeddings, word_count

PRICED = json.dumps({"embedder": {"input_per_million": 1_000_000}})  # one unit of money a token


@pytest.fixture
def embedder() -> Iterator[FakeEmbeddings]:
    with fake_openai_embeddings() as fake, override_settings(
        MEMORYHUB_EMBEDDINGS="openai", MEMORYHUB_EMBEDDINGS_URL=fake.url, MEMORYHUB_EMBEDDINGS_MODEL="fake-embed",
        MEMORYHUB_EMBEDDINGS_DIMENSIONS=FAKE_DIMENSIONS, MEMORYHUB_EMBEDDINGS_TIMEOUT=5, MEMORYHUB_EMBEDDINGS_PROVIDER_NAME="embedder",
        MEMORYHUB_PRICES=PRICED,
    ):
        yield fake


def usage(key: str, **params: str) -> dict[str, Any]:
    response = api_client(key).get("/api/v1/usage", params)
    assert response.status_code == 200, response.content[:500]
    return response.json()


def line(body: dict[str, Any], key: str) -> dict[str, Any]:
    return next(item for item in body["results"] if item["key"] == key)


def set_budget(key: str, **budget: Any) -> Any:
    return api_client(key).put("/api/v1/settings/budget", budget, format="json")


def test_it_meters_a_provider_that_reports_its_usage(actors: Actors, embedder: FakeEmbeddings) -> None:
    bot = api_client(actors.bot_key)
    texts = ["Ann prefers the aisle seat.", "Bo likes green tea in the morning."]
    assert bot.post("/api/v1/memories/batch", {"items": [{"content": t, "user_id": "u1"} for t in texts]}, format="json").status_code == 201
    assert bot.post("/api/v1/memories/search", {"query": "which seat", "user_id": "u1"}, format="json").status_code == 200
    body = usage(actors.owner_key, group_by="operation")
    embed = line(body, "embed")
    # The endpoint's own count (words, in this fake), not the hub's tokenizer's.
    reported = word_count(texts) + word_count(["which seat"])
    assert (embed["calls"], embed["items"], embed["input_tokens"], embed["output_tokens"]) == (2, 3, reported, 0)
    assert embed["cost"] == pytest.approx(reported) and body["totals"]["cost"] == pytest.approx(reported)
    assert [item["key"] for item in usage(actors.owner_key, group_by="provider")["results"]] == ["embedder"]
    assert line(usage(actors.owner_key, group_by="agent"), "bot")["calls"] == 2
    assert line(usage(actors.owner_key, group_by="day"), datetime.now(UTC).date().isoformat())["calls"] == 2


def test_it_counts_tokens_itself_when_the_provider_reports_none(actors: Actors, embedder: FakeEmbeddings) -> None:
    embedder.reports_usage = False
    remember(actors.bot_key, "Ann prefers the aisle seat on long flights.")
    embed = line(usage(actors.owner_key, group_by="operation"), "embed")
    assert embed["input_tokens"] == count_tokens(["Ann prefers the aisle seat on long flights."]) != word_count(["Ann prefers the aisle seat on long flights."])


def test_it_meters_the_local_model_under_its_name(actors: Actors) -> None:
    remember(actors.bot_key, "Ann prefers the aisle seat.")
    body = usage(actors.owner_key)
    local = line(body, "local")
    assert local["calls"] == 1 and local["input_tokens"] >= count_tokens(["Ann prefers the aisle seat."]) and local["cost"] == 0


def test_it_refuses_a_batch_that_would_cross_the_budget_whole(actors: Actors, embedder: FakeEmbeddings) -> None:
    bot = api_client(actors.bot_key)
    assert set_budget(actors.owner_key, monthly_limit=20).status_code == 200
    remember(actors.bot_key, "Ann prefers the aisle seat.")  # 5 tokens of the 20
    batch = [{"content": f"Note number {i} about the trip to Lisbon in May.", "user_id": "u1"} for i in range(3)]  # 30 more
    refused = bot.post("/api/v1/memories/batch", {"items": batch}, format="json")
    body = assert_error(refused, 429, "BUDGET_EXCEEDED")
    assert body["details"] == {"limit": 20.0, "spent": 5.0}
    assert not MemoryEntry.objects.filter(content__startswith="Note number").exists()
    # What needs no priced call goes on: reads, keyword search, an agent's own vectors.
    assert bot.get("/api/v1/memories").status_code == 200
    assert bot.post("/api/v1/memories/search", {"query": "aisle", "mode": "keyword"}, format="json").status_code == 200
    own = bot.post("/api/v1/memories", {"content": "Bo likes tea.", "user_id": "u1", "embedding": [1.0] + [0.0] * (FAKE_DIMENSIONS - 1)},
                   format="json")
    assert own.status_code == 201
    set_budget(actors.owner_key, monthly_limit=5)  # spent, to the unit
    assert_error(bot.post("/api/v1/memories/search", {"query": "tea"}, format="json"), 429, "BUDGET_EXCEEDED")
    lifted = set_budget(actors.owner_key, monthly_limit=None)
    assert lifted.json()["monthly_limit"] is None and bot.post("/api/v1/memories/batch", {"items": batch}, format="json").status_code == 201


def test_it_starts_each_calendar_month_afresh(actors: Actors, embedder: FakeEmbeddings) -> None:
    with time_machine.travel(datetime(2026, 11, 30, 23, 50, tzinfo=UTC)):
        set_budget(actors.owner_key, monthly_limit=10)
        remember(actors.bot_key, "Ann prefers the aisle seat.")  # 5 spent; the next would read about 9 more
        longer = {"content": "Bo likes green tea every morning.", "user_id": "u1"}
        assert_error(api_client(actors.bot_key).post("/api/v1/memories", longer, format="json"), 429, "BUDGET_EXCEEDED")
    with time_machine.travel(datetime(2026, 12, 1, 0, 10, tzinfo=UTC)):
        remember(actors.bot_key, "Bo likes tea.")
        assert api_client(actors.owner_key).get("/api/v1/settings/budget").json() == {
            "monthly_limit": 10.0, "warn_at": None, "month": "2026-12", "spent": 3.0,
        }
        assert usage(actors.owner_key, **{"from": "2026-11-01", "to": "2026-11-30"})["totals"]["cost"] == 5.0


@pytest.mark.parametrize("limit", [100, None])
def test_it_warns_once_a_month_on_the_workspace_feed(actors: Actors, embedder: FakeEmbeddings, limit: int | None) -> None:
    set_budget(actors.owner_key, monthly_limit=limit, warn_at=8)
    remember(actors.bot_key, "Ann prefers the aisle seat.")
    usage(actors.owner_key)  # what the hub counted is written (every few seconds when it runs)
    assert not Event.objects.filter(workspace=actors.workspace, kind="budget").exists()
    remember(actors.bot_key, "Bo likes green tea.")
    remember(actors.bot_key, "Cy flies to Oslo on Friday.")
    usage(actors.owner_key)
    usage(actors.owner_key)
    [warning] = Event.objects.filter(workspace=actors.workspace, kind="budget")
    assert "past the warning at 8" in warning.summary and warning.ref["limit"] == (None if limit is None else float(limit))


def test_it_shows_an_agent_only_its_own_calls(actors: Actors) -> None:
    remember(actors.bot_key, "Ann prefers the aisle seat.")
    remember(actors.peer_key, "Bo likes tea.")
    assert [item["key"] for item in usage(actors.bot_key, group_by="agent")["results"]] == ["bot"]
    assert [item["key"] for item in usage(actors.owner_key, group_by="agent")["results"]] == ["bot", "peer"]
    assert usage(actors.outsider_key)["totals"]["calls"] == 0
    assert usage(actors.teammate_key)["totals"]["calls"] == 2


def test_it_lets_only_admins_set_the_budget(actors: Actors) -> None:
    assert_error(set_budget(actors.teammate_key, monthly_limit=5), 403, "FORBIDDEN")
    assert_error(set_budget(actors.bot_key, monthly_limit=5), 403, "FORBIDDEN")
    assert_error(set_budget(actors.owner_key, monthly_limit=-1), 400, "VALIDATION_ERROR")
    assert api_client(actors.teammate_key).get("/api/v1/settings/budget").json()["monthly_limit"] is None
    assert set_budget(actors.owner_key, monthly_limit=5, warn_at=4).json()["warn_at"] == 4.0
    assert api_client(actors.outsider_key).get("/api/v1/settings/budget").json()["monthly_limit"] is None
    assert_error(api_client(actors.owner_key).get("/api/v1/usage", {"group_by": "user"}), 400, "VALIDATION_ERROR")
    assert_error(api_client(actors.owner_key).get("/api/v1/usage", {"from": "2026-12-05", "to": "2026-12-01"}), 400, "VALIDATION_ERROR")


def test_it_keeps_daily_totals_when_retention_removes_the_minutes(actors: Actors) -> None:
    from memoryhub.compliance.retention import retention_enforce
    from memoryhub.usage.models import UsageDaily, UsageRecord

    with time_machine.travel(datetime(2026, 6, 1, 12, tzinfo=UTC)):
        remember(actors.bot_key, "Ann prefers the aisle seat.")
        usage(actors.owner_key)
    remember(actors.bot_key, "Bo likes tea.")
    usage(actors.owner_key)
    retention_enforce(workspace=actors.workspace)  # minutes kept 90 days by default
    assert [r.minute.date().isoformat() for r in UsageRecord.objects.filter(workspace=actors.workspace)] == [datetime.now(UTC).date().isoformat()]
    assert UsageDaily.objects.filter(workspace=actors.workspace).count() == 2
    june = usage(actors.owner_key, **{"from": "2026-06-01", "to": "2026-06-30"})
    assert june["totals"]["calls"] == 1


def test_it_meters_summaries_with_the_tokens_the_endpoint_reports(actors: Actors) -> None:
    with fake_openai_embeddings() as chat, override_settings(
        MEMORYHUB_SUMMARIZER="openai", MEMORYHUB_SUMMARIZER_URL=chat.url, MEMORYHUB_SUMMARIZER_MODEL="fake-chat",
        MEMORYHUB_SUMMARIZER_PROVIDER_NAME="llm", MEMORYHUB_PRICES=json.dumps({"llm": {"input_per_million": 2_000_000, "output_per_million": 4_000_000}}),
    ):
        bot = api_client(actors.bot_key)
        bot.post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1"}, format="json")
        bot.post("/api/v1/sessions/s1/messages", {"messages": [
            {"role": "user", "content": "Book a table for four."}, {"role": "assistant", "content": "Booked for 8pm."},
        ]}, format="json")
        assert bot.post("/api/v1/sessions/s1/summarize").status_code == 200
    summary = line(usage(actors.owner_key, group_by="operation"), "summarize")
    transcript = "user: Book a table for four.\nassistant: Booked for 8pm."
    summary_text = "Summary: Book a table for four. / Booked for 8pm."
    assert (summary["calls"], summary["items"], summary["input_tokens"], summary["output_tokens"]) == (
        1, 2, word_count([transcript]), word_count([summary_text]),
    )
    assert summary["cost"] == pytest.approx(2 * word_count([transcript]) + 4 * word_count([summary_text]))


def test_it_meters_reranking(actors: Actors) -> None:
    from memoryhub.memory import rerankers
    from tests.fake_services import fake_reranker

    remember(actors.bot_key, "We roast marshmallows by the fire.")
    remember(actors.bot_key, "The theme park opened a roller coaster.")
    with fake_reranker() as fake, override_settings(MEMORYHUB_RERANK_URL=fake.url, MEMORYHUB_RERANK_PROVIDER_NAME="ranker"):
        found = api_client(actors.bot_key).post("/api/v1/memories/search", {"query": "campfire treats", "user_id": "u1"}, format="json")
    rerankers._failed_at.clear()
    assert found.status_code == 200 and all(hit["reranked"] for hit in found.json()["results"])
    rerank = line(usage(actors.owner_key, group_by="operation"), "rerank")
    assert rerank["calls"] == 1 and rerank["items"] == 2
    assert rerank["input_tokens"] == 2 * count_tokens(["campfire treats"]) + count_tokens(
        ["We roast marshmallows by the fire.", "The theme park opened a roller coaster."],
    )
    assert [item["key"] for item in usage(actors.owner_key)["results"]] == ["local", "ranker"]
