from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.test import override_settings

from memoryhub.conversations.models import ChainSummary, Session, Summary
from memoryhub.memory.models import MemoryEntry
from memoryhub.timeline.models import Event
from tests.conftest import TIGHT_POOL, Actors, api_client, assert_error, poll, post_at_once, start_hub
from tests.fake_services import FakeEmbeddings, fake_openai_embeddings


def start(actors: Actors, **extra: object) -> object:
    client = api_client(actors.bot_key)
    client.post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1", **extra}, format="json")
    return client


def say(client: object, *contents: str) -> None:
    client.post("/api/v1/sessions/s1/messages", {"messages": [
        {"role": "user" if i % 2 == 0 else "assistant", "content": c} for i, c in enumerate(contents)
    ]}, format="json")


def test_it_summarises_only_what_is_new(actors: Actors) -> None:
    client = start(actors)
    say(client, "I'm Ana, my budget is 900 euros.", "Noted, 900 euros.")
    first = client.post("/api/v1/sessions/s1/summarize").json()
    assert (first["summary"]["from_seq"], first["summary"]["to_seq"], first["summary"]["index"]) == (1, 2, 1)
    assert "900" in first["summary"]["text"]
    assert first["session"]["last_summary_index"] == 2
    say(client, "We decided on Porto.", "Porto it is.")
    second = client.post("/api/v1/sessions/s1/summarize").json()
    assert (second["summary"]["from_seq"], second["summary"]["to_seq"]) == (3, 4)
    assert "Porto" in second["summary"]["text"] and "900" not in second["summary"]["text"]
    nothing = client.post("/api/v1/sessions/s1/summarize").json()
    assert nothing["summary"] is None
    state = client.get("/api/v1/sessions/s1").json()
    assert [link["index"] for link in state["summary_chain"]] == [1, 2]
    assert (state["summary_policy"], state["meta_compaction_threshold"]) == ("manual", 10)


def test_it_compacts_a_long_chain_into_a_semantic_memory(actors: Actors) -> None:
    client = start(actors, meta_compaction_threshold=2)
    for n in range(3):
        say(client, f"Fact number {n}: the code is {n}{n}{n}.", "Understood.")
        client.post("/api/v1/sessions/s1/summarize")
    memory = MemoryEntry.objects.get(memory_type="semantic")
    assert (memory.user_id, memory.tags, memory.metadata["session_id"]) == ("u1", ["session-summary"], "s1")
    assert client.get(f"/api/v1/memories/{memory.pk}").json()["source"] == {"kind": "summary", "session_id": "s1"}
    assert "000" in memory.content and "222" in memory.content
    assert ChainSummary.objects.count() == 0
    assert client.get("/api/v1/sessions/s1").json()["summary_chain"] == []
    assert Event.objects.filter(kind="summary", summary__contains="compacted").exists()
    # The compacted memory is found by the memory search.
    hits = client.post("/api/v1/memories/search", {"query": "the code", "tags": ["session-summary"]}, format="json").json()["results"]
    assert hits[0]["entry"]["id"] == str(memory.pk)


def test_it_summarises_in_the_background_with_the_rolling_policy(actors: Actors, transactional_db: None) -> None:
    client = start(actors, summary_policy="rolling")
    say(client, "My flight is on the 12th.", "Got it: the 12th.")
    assert poll(ChainSummary.objects.exists, timeout=20), "no summary was made in the background"
    link = ChainSummary.objects.get()
    assert (link.from_seq, link.to_seq) == (1, 2)
    assert Session.objects.get().last_summary_index == 2


@pytest.fixture
def chat_endpoint() -> Iterator[FakeEmbeddings]:
    with fake_openai_embeddings() as fake, override_settings(
        MEMORYHUB_SUMMARIZER="openai", MEMORYHUB_SUMMARIZER_URL=fake.url, MEMORYHUB_SUMMARIZER_MODEL="fake-chat",
        MEMORYHUB_SUMMARIZER_API_KEY="sk-chat", MEMORYHUB_SUMMARIZER_TIMEOUT=5,
    ):
        yield fake


def test_it_summarises_with_an_openai_compatible_endpoint(actors: Actors, chat_endpoint: FakeEmbeddings) -> None:
    client = start(actors)
    say(client, "Book a table for four.", "Booked for 8pm.")
    body = client.post("/api/v1/sessions/s1/summarize").json()
    assert body["summary"]["summariser"] == "openai:fake-chat"
    assert body["summary"]["text"].startswith("Summary: Book a table for four.")
    request = chat_endpoint.requests[-1]
    assert request["model"] == "fake-chat" and "user: Book a table for four." in request["messages"][-1]["content"]
    assert chat_endpoint.headers[-1]["Authorization"] == "Bearer sk-chat"


def test_it_explains_a_failing_summariser_and_changes_nothing(actors: Actors, chat_endpoint: FakeEmbeddings) -> None:
    client = start(actors)
    say(client, "hello", "hi")
    chat_endpoint.fail_with = 500
    error = assert_error(client.post("/api/v1/sessions/s1/summarize"), 503, "SUMMARIZER_UNAVAILABLE")
    assert "500" in error["message"]
    assert Session.objects.get().last_summary_index == 0 and ChainSummary.objects.count() == 0


def test_it_refuses_bad_policies_and_foreign_sessions(actors: Actors) -> None:
    response = api_client(actors.bot_key).post("/api/v1/sessions", {"session_id": "s2", "user_id": "u1", "summary_policy": "often"}, format="json")
    assert_error(response, 400, "VALIDATION_ERROR")
    start(actors)
    assert_error(api_client(actors.spy_key).post("/api/v1/sessions/s1/summarize"), 404, "SESSION_NOT_FOUND")


def test_an_operators_context_read_stores_nothing_and_calls_no_outside_summariser(
    actors: Actors, chat_endpoint: FakeEmbeddings
) -> None:
    client = start(actors)
    for n in range(6):
        say(client, f"Question {n} about the 12 invoices.", f"Answer {n}: we decided to pay.")
    query = {"strategy": "summarize", "summary_ratio": 0.5, "preserve_recent": 2}
    looked = api_client(actors.owner_key).get("/api/v1/sessions/s1/context", query)
    assert looked.status_code == 200 and looked.json()["summary"]["summariser"] == "extractive-v1"
    assert Summary.objects.count() == 0 and chat_endpoint.requests == []
    # The agent's own read is the one cache: it summarises through the endpoint and keeps it…
    assert client.get("/api/v1/sessions/s1/context", query).json()["summary"]["summariser"] == "openai:fake-chat"
    assert Summary.objects.count() == 1 and len(chat_endpoint.requests) == 1
    # …which an operator's read then shows as it is.
    assert api_client(actors.owner_key).get("/api/v1/sessions/s1/context", query).json()["summary"]["summariser"] == "openai:fake-chat"
    assert len(chat_endpoint.requests) == 1


def test_it_frees_its_database_connection_while_the_endpoint_summarises(actors: Actors, transactional_db: None) -> None:
    client = api_client(actors.bot_key)
    for n in range(6):
        client.post("/api/v1/sessions", {"session_id": f"trip-{n}", "user_id": "u1"}, format="json")
        client.post(f"/api/v1/sessions/trip-{n}/messages", {"messages": [{"role": "user", "content": f"Seat {n}A, please."}]}, format="json")
    with fake_openai_embeddings() as endpoint:
        endpoint.delay = 2.0
        hub = start_hub(extra_env={"MEMORYHUB_SUMMARIZER": "openai", "MEMORYHUB_SUMMARIZER_URL": endpoint.url, **TIGHT_POOL})
        try:
            responses = post_at_once(hub, actors.bot_key, [(f"/api/v1/sessions/trip-{n}/summarize", None) for n in range(6)])
        finally:
            hub.stop()
    assert [r.status_code for r in responses] == [200] * 6, [r.text[:200] for r in responses]
    assert sorted(r.json()["summary"]["text"] for r in responses) == [f"Summary: Seat {n}A, please." for n in range(6)]
    assert ChainSummary.objects.count() == 6
