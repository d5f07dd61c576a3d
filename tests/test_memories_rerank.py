"""Searches through a reranker of the operator's own (MEMORYHUB_RERANK_URL), faked by a
real HTTP server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.test import override_settings

from memoryhub.memory import rerankers
from tests.conftest import TIGHT_POOL, Actors, api_client, assert_error, post_at_once, remember, search, start_hub
from tests.fake_services import FakeReranker, fake_reranker

QUESTION = "Would Melanie rather visit a national park or a theme park?"


@pytest.fixture
def reranker() -> Iterator[FakeReranker]:
    with fake_reranker() as fake, override_settings(
        MEMORYHUB_RERANK_URL=fake.url, MEMORYHUB_RERANK_MODEL="rerank-test", MEMORYHUB_RERANK_API_KEY="secret", MEMORYHUB_RERANK_TIMEOUT=2.0,
    ):
        fake.relevance = {"marshmallows": 0.92, "roller coaster": 0.30}
        yield fake
    rerankers._failed_at.clear()  # a failure in one test leaves the next alone


def seed(actors: Actors) -> dict[str, dict]:
    return {
        "camping": remember(actors.bot_key, "Our family camping trip is the best week of the year: we roast marshmallows by the fire."),
        "coaster": remember(actors.bot_key, "The theme park downtown opened a new roller coaster, the park says it is the fastest."),
        "shoes": remember(actors.bot_key, "Melanie bought a new pair of running shoes."),
    }


def ids(hits: list[dict]) -> list[str]:
    return [h["entry"]["id"] for h in hits]


def test_it_orders_and_scores_results_by_the_reranker(actors: Actors, reranker: FakeReranker) -> None:
    seeded = seed(actors)
    own_order = search(actors.bot_key, query=QUESTION, rerank=False)
    assert ids(own_order)[0] != seeded["camping"]["id"]  # the words and the vectors point at the theme park
    assert not reranker.requests and not any(h["reranked"] for h in own_order)

    hits = search(actors.bot_key, query=QUESTION)
    assert ids(hits) == [seeded["camping"]["id"], seeded["coaster"]["id"], seeded["shoes"]["id"]]
    assert [h["score"] for h in hits] == [0.92, 0.30, 0.01]
    assert all(h["reranked"] for h in hits)
    [asked] = reranker.requests
    assert asked["query"] == QUESTION and asked["model"] == "rerank-test"
    assert asked["documents"] == [h["entry"]["content"] for h in own_order]  # in the search's own order
    assert reranker.headers[0]["Authorization"] == "Bearer secret"


def test_it_applies_min_relevance_and_max_results_to_the_rerankers_scores(actors: Actors, reranker: FakeReranker) -> None:
    seeded = seed(actors)
    assert ids(search(actors.bot_key, query=QUESTION, min_relevance=0.3)) == [seeded["camping"]["id"], seeded["coaster"]["id"]]
    # The reranker reads more than is shown, so the best of them can come from below.
    assert ids(search(actors.bot_key, query=QUESTION, max_results=1)) == [seeded["camping"]["id"]]
    assert len(reranker.requests[-1]["documents"]) == 3


def test_it_sends_the_reranker_as_many_results_as_configured(actors: Actors, reranker: FakeReranker) -> None:
    seed(actors)
    with override_settings(MEMORYHUB_RERANK_CANDIDATES=2):
        search(actors.bot_key, query=QUESTION, max_results=1)
        assert len(reranker.requests[-1]["documents"]) == 2
        search(actors.bot_key, query=QUESTION, max_results=3)  # never fewer than asked for
        assert len(reranker.requests[-1]["documents"]) == 3


def test_it_keeps_a_repeat_below_what_it_repeats(actors: Actors, reranker: FakeReranker) -> None:
    first = remember(actors.bot_key, "We roast marshmallows on every camping trip.")
    again = remember(actors.bot_key, "We roast marshmallows on every camping trip.")
    other = remember(actors.bot_key, "The theme park has a roller coaster.")
    hits = search(actors.bot_key, query=QUESTION)
    # Both copies score 0.92; the one the search itself put second repeats the other.
    assert set(ids(hits)) == {first["id"], again["id"], other["id"]} and ids(hits)[1] == other["id"]
    assert hits[0]["score"] == 0.92 and hits[0]["repeat_of"] is None
    assert hits[2]["repeat_of"] == hits[0]["entry"]["id"] and hits[2]["score"] < hits[1]["score"]


@pytest.mark.parametrize(
    "trouble",
    [
        {"fail_with": 503},
        {"delay": 3.0},  # beyond MEMORYHUB_RERANK_TIMEOUT
        {"answer": [{"index": 0, "relevance_score": 0.9}]},  # two documents left unscored
        {"answer": [{"index": 7, "relevance_score": 0.9}, {"index": 1, "relevance_score": 0.5}, {"index": 2, "relevance_score": 0.1}]},
        {"answer": [{"index": 0, "relevance_score": "high"}, {"index": 1, "relevance_score": 0.5}, {"index": 2, "relevance_score": 0.1}]},
        {"answer": [{"index": 0, "relevance_score": 0.9}, {"index": 0, "relevance_score": 0.5}, {"index": 2, "relevance_score": 0.1}]},
        {"answer": {"unexpected": True}},
    ],
    ids=["5xx", "late", "some unscored", "unknown index", "not a number", "scored twice", "no list"],
)
def test_it_answers_in_its_own_order_when_the_reranker_fails(actors: Actors, reranker: FakeReranker, trouble: dict) -> None:
    seed(actors)
    own_order = search(actors.bot_key, query=QUESTION, rerank=False)
    for name, value in trouble.items():
        setattr(reranker, name, value)
    hits = search(actors.bot_key, query=QUESTION)
    assert reranker.requests
    assert ids(hits) == ids(own_order)
    assert [h["score"] for h in hits] == [h["score"] for h in own_order]
    assert not any(h["reranked"] for h in hits)


def test_it_leaves_a_failed_reranker_alone_for_a_while(actors: Actors, reranker: FakeReranker) -> None:
    seed(actors)
    reranker.fail_with = 500
    search(actors.bot_key, query=QUESTION)
    reranker.fail_with = None
    # Down moments ago: the next searches answer at once, in their own order, without it.
    assert not any(h["reranked"] for h in search(actors.bot_key, query=QUESTION))
    assert len(reranker.requests) == 1
    with override_settings(MEMORYHUB_RERANK_RETRY_SECONDS=0.0):
        reranker.fail_with = 500
        search(actors.bot_key, query=QUESTION)
        reranker.fail_with = None
        assert all(h["reranked"] for h in search(actors.bot_key, query=QUESTION))
    assert len(reranker.requests) == 3


def test_it_reads_logits_as_relevances(actors: Actors, reranker: FakeReranker) -> None:
    seeded = seed(actors)
    reranker.relevance = {"marshmallows": 4.5, "roller coaster": -1.0}  # llama.cpp's server answers raw logits
    hits = search(actors.bot_key, query=QUESTION)
    assert ids(hits)[0] == seeded["camping"]["id"]
    assert all(0 < h["score"] < 1 for h in hits)
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)


def test_it_speaks_text_embeddings_inference(actors: Actors, reranker: FakeReranker) -> None:
    seeded = seed(actors)
    with override_settings(MEMORYHUB_RERANK_API="tei"):
        hits = search(actors.bot_key, query=QUESTION)
    assert ids(hits)[0] == seeded["camping"]["id"] and hits[0]["reranked"]
    assert set(reranker.requests[-1]) == {"query", "texts", "truncate"}


def test_it_asks_the_reranker_only_with_a_question_in_words(actors: Actors, reranker: FakeReranker) -> None:
    seed(actors)
    listing = search(actors.bot_key)
    vector = [1.0] + [0.0] * 383
    by_vector = search(actors.bot_key, embedding=vector, mode="semantic")
    assert len(listing) == 3 and len(by_vector) == 3
    assert not reranker.requests
    client = api_client(actors.bot_key)
    assert_error(client.post("/api/v1/memories/search", {"embedding": vector, "rerank": True}, format="json"), 400, "VALIDATION_ERROR")
    assert not reranker.requests


def test_it_refuses_a_rerank_it_cannot_do(actors: Actors) -> None:
    seed(actors)
    client = api_client(actors.bot_key)
    response = client.post("/api/v1/memories/search", {"query": QUESTION, "rerank": True}, format="json")
    assert_error(response, 400, "RERANK_NOT_CONFIGURED")
    # Without a reranker, the default searches as ever.
    assert not any(h["reranked"] for h in search(actors.bot_key, query=QUESTION))


def test_it_sends_the_reranker_only_what_the_caller_may_see(actors: Actors, reranker: FakeReranker) -> None:
    seed(actors)
    remember(actors.spy_key, "Globex's camping trip: we roast marshmallows too.")
    remember(actors.loner_key, "Loner's own marshmallows, in another store.")
    search(actors.spy_key, query=QUESTION)
    assert reranker.requests[-1]["documents"] == ["Globex's camping trip: we roast marshmallows too."]
    search(actors.bot_key, query=QUESTION)
    assert len(reranker.requests[-1]["documents"]) == 3
    assert not any("Globex" in d or "Loner" in d for d in reranker.requests[-1]["documents"])


def test_it_frees_its_database_connection_while_the_reranker_reads(actors: Actors, transactional_db: None) -> None:
    seed(actors)
    with fake_reranker() as reranker:
        reranker.relevance, reranker.delay = {"marshmallows": 0.92}, 2.0
        hub = start_hub(extra_env={"MEMORYHUB_RERANK_URL": reranker.url, **TIGHT_POOL})
        try:
            # The model loads on the first question, holding that search's connection.
            [warm_up] = post_at_once(hub, actors.bot_key, [("/api/v1/memories/search", {"query": QUESTION, "rerank": False})])
            assert warm_up.status_code == 200
            responses = post_at_once(hub, actors.bot_key, [("/api/v1/memories/search", {"query": QUESTION})] * 6)
        finally:
            hub.stop()
    assert [r.status_code for r in responses] == [200] * 6, [r.text[:200] for r in responses]
    assert all(r.json()["results"][0]["reranked"] for r in responses)
    assert len(reranker.requests) == 6
