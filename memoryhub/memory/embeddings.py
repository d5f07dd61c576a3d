"""Embedding providers: the local model (default) or an OpenAI-compatible endpoint.

Every vector is stored with the provider's `model_id` and dimension; semantic search
compares only vectors of the current model, and `manage.py reembed` (also run by the
periodic job) moves older vectors to it. Vectors of two models never get mixed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpx
import numpy as np
from django.conf import settings

from memoryhub.core.connections import connection_release
from memoryhub.core.errors import ApplicationError
from memoryhub.usage import metering
from memoryhub.usage.models import Operation


class EmbeddingError(ApplicationError):
    def __init__(self, message: str) -> None:
        super().__init__(message, code="EMBEDDINGS_UNAVAILABLE", status=503)


class EmbeddingProvider(Protocol):
    model_id: str
    dimensions: int

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One unit-length vector per text, in order; one model call for the batch."""
        ...

    def embed_question(self, text: str) -> list[float]:
        """The vector of a search's question, compared with entries' vectors from `embed`:
        a provider may compute it faster and a little less precisely."""
        ...


class OpenAICompatibleProvider:
    """Any `POST {base_url}/embeddings` speaking OpenAI's format (OpenAI, vLLM, Ollama,
    LiteLLM, TEI…)."""

    def __init__(self, *, base_url: str, model: str, api_key: str, dimensions: int, timeout: float) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.model_id = f"openai:{model}"
        self.dimensions = dimensions
        self.api_key = api_key
        self.timeout = timeout
        self._usage = threading.local()

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        connection_release()
        try:
            response = httpx.post(
                f"{self.base_url}/embeddings", json={"model": self.model, "input": texts}, headers=headers, timeout=self.timeout
            )
        except httpx.HTTPError as exc:
            raise EmbeddingError(f"The embeddings endpoint did not answer: {type(exc).__name__}.") from exc
        if response.status_code != 200:
            raise EmbeddingError(f"The embeddings endpoint answered {response.status_code}.")
        try:
            answer = response.json()
            items = sorted(answer["data"], key=lambda item: item["index"])
            vectors = [list(map(float, item["embedding"])) for item in items]
            self._usage.value = _reported_tokens(answer)
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbeddingError("The embeddings endpoint answered something that is not an embeddings list.") from exc
        if len(vectors) != len(texts) or any(len(v) != self.dimensions for v in vectors):
            raise EmbeddingError(
                f"The embeddings endpoint returned {len(vectors)} vectors for {len(texts)} texts, "
                f"or vectors not of {self.dimensions} dimensions (MEMORYHUB_EMBEDDINGS_DIMENSIONS)."
            )
        return [_normalise(v) for v in vectors]

    def embed_question(self, text: str) -> list[float]:
        return self.embed([text])[0]

    def tokens_used(self) -> int | None:
        """The input tokens the endpoint said this thread's last call read, if it said."""
        used, self._usage.value = getattr(self._usage, "value", None), None
        return used


def _reported_tokens(answer: dict[str, Any]) -> int | None:
    usage = answer.get("usage") if isinstance(answer, dict) else None
    tokens = usage.get("prompt_tokens", usage.get("total_tokens")) if isinstance(usage, dict) else None
    return tokens if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens >= 0 else None


class MeteredProvider:
    """The configured provider, every call metered (memoryhub.usage) under the provider's
    name, and refused (429 BUDGET_EXCEEDED) beyond the workspace's budget when priced:
    the one place embeddings are counted, whoever asks for them."""

    def __init__(self, inner: Any, provider: str) -> None:
        self.inner, self.provider = inner, provider
        self.model_id: str = inner.model_id
        self.dimensions: int = inner.dimensions

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return self._metered(texts, lambda: self.inner.embed(texts))

    def embed_question(self, text: str) -> list[float]:
        return self._metered([text], lambda: self.inner.embed_question(text))

    def _metered[T](self, texts: list[str], call: Callable[[], T]) -> T:
        from memoryhub.memory.local_model import count_tokens

        metering.ensure_within_budget(provider=self.provider, input_tokens=lambda: metering.estimated_tokens(texts))
        self.inner.tokens_used()  # what an earlier, failed call left
        started = time.perf_counter()
        result = call()
        duration_ms = (time.perf_counter() - started) * 1000
        reported = self.inner.tokens_used()
        metering.record(
            provider=self.provider, operation=Operation.EMBED, items=len(texts),
            input_tokens=reported if reported is not None else count_tokens(texts), output_tokens=0, duration_ms=duration_ms,
        )
        return result


def _normalise(vector: list[float]) -> list[float]:
    norm = sum(x * x for x in vector) ** 0.5
    return [x / norm for x in vector] if norm else vector


def checked_embedding(vector: list[float], dimensions: int, *, mismatch_code: str = "INVALID_EMBEDDING") -> list[float]:
    """An agent's own vector, unit length, or 400 if it cannot be one of ours (`mismatch_code`
    when only its dimension is wrong: a search's caller then searches by text instead)."""
    if len(vector) != dimensions:
        raise ApplicationError(
            f"embedding must have {dimensions} dimensions (the hub's model), not {len(vector)}.",
            code=mismatch_code,
            details={"expected_dimensions": dimensions, "got": len(vector)},
        )
    array = np.asarray(vector, dtype=np.float64)
    norm = float(np.linalg.norm(array))
    if norm == 0 or not np.isfinite(norm):
        raise ApplicationError("embedding must be a finite, non-zero vector.", code="INVALID_EMBEDDING")
    return (array / norm).tolist()


_provider_lock = threading.Lock()


@lru_cache(maxsize=4)
def _build_provider(
    kind: str, url: str, model: str, api_key: str, dimensions: int, timeout: float, threads: int, int8_questions: bool,
    question_threads: int,
) -> EmbeddingProvider:
    if kind == "openai":
        return OpenAICompatibleProvider(base_url=url, model=model, api_key=api_key, dimensions=dimensions, timeout=timeout)
    if kind == "local":
        from memoryhub.memory.local_model import LocalMiniLM

        return LocalMiniLM(threads=threads, int8_questions=int8_questions, question_threads=question_threads)
    raise ValueError(f"MEMORYHUB_EMBEDDINGS must be 'local' or 'openai', not {kind!r}")


def get_provider() -> EmbeddingProvider:
    """The configured provider, metered; built once per configuration (the local model
    loads once)."""
    with _provider_lock:
        built = _build_provider(
            settings.MEMORYHUB_EMBEDDINGS,
            settings.MEMORYHUB_EMBEDDINGS_URL,
            settings.MEMORYHUB_EMBEDDINGS_MODEL,
            settings.MEMORYHUB_EMBEDDINGS_API_KEY,
            settings.MEMORYHUB_EMBEDDINGS_DIMENSIONS,
            settings.MEMORYHUB_EMBEDDINGS_TIMEOUT,
            settings.MEMORYHUB_EMBEDDINGS_THREADS,
            settings.MEMORYHUB_EMBEDDINGS_INT8_QUESTIONS,
            settings.MEMORYHUB_EMBEDDINGS_QUESTION_THREADS,
        )
        return _metered_provider(provider_name(), built) if settings.MEMORYHUB_USAGE_METERING else built


@lru_cache(maxsize=4)
def _metered_provider(name: str, inner: Any) -> EmbeddingProvider:
    return MeteredProvider(inner, name)


def provider_name() -> str:
    """How usage names the embeddings provider: MEMORYHUB_EMBEDDINGS_PROVIDER_NAME, else
    `local` for the built-in model and the endpoint's host for a remote one."""
    if settings.MEMORYHUB_EMBEDDINGS_PROVIDER_NAME:
        return settings.MEMORYHUB_EMBEDDINGS_PROVIDER_NAME
    if settings.MEMORYHUB_EMBEDDINGS == "local":
        return "local"
    return urlsplit(settings.MEMORYHUB_EMBEDDINGS_URL).hostname or "embeddings"

