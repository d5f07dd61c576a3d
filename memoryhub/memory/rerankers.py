"""A reranker behind an HTTP endpoint of the operator's own (MEMORYHUB_RERANK_URL).

A cross-encoder reads the question and a result together, which the two legs of a search
cannot: they compare the question's vector with the entry's, and its words with the
entry's. Questions whose evidence shares neither with them ("Would Melanie rather go to
a national park or a theme park?" against "We roast marshmallows on our camping trip")
are where it helps (docs/memory.md, "Reranking"). The hub runs no such model itself: none is on
PyPI with its weights, and the hub downloads nothing.
"""

from __future__ import annotations

import functools
import logging
import math
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

import httpx
from django.conf import settings

from memoryhub.core.connections import connection_release
from memoryhub.memory.local_model import count_tokens
from memoryhub.usage import metering
from memoryhub.usage.models import Operation

logger = logging.getLogger(__name__)

APIS = ("cohere", "tei")


class RerankError(Exception):
    """The reranker did not answer, or not with a score for every document."""


class RerankerResting(RerankError):
    """The reranker failed moments ago and is not asked until MEMORYHUB_RERANK_RETRY_SECONDS
    have passed: while it is down, every search would otherwise wait out its timeout."""


# When each reranker (by URL) last failed, on the monotonic clock; per process.
_failed_at: dict[str, float] = {}


@dataclass(frozen=True)
class HttpReranker:
    url: str
    api: str
    model: str
    api_key: str
    timeout: float

    def scores(self, *, query: str, documents: list[str]) -> list[float]:
        """One relevance in [0, 1] per document, in the documents' order."""
        if not documents:
            return []
        if time.monotonic() - _failed_at.get(self.url, -math.inf) < settings.MEMORYHUB_RERANK_RETRY_SECONDS:
            raise RerankerResting("the reranker failed moments ago (MEMORYHUB_RERANK_RETRY_SECONDS)")
        if not settings.MEMORYHUB_USAGE_METERING:
            return self._asked(query=query, documents=documents)
        name = reranker_name()
        # Metered here, the one place reranking is asked for (a rerank reads the question
        # beside every document: tokens by the local model's tokenizer, the APIs report none).
        tokens = functools.cache(lambda: count_tokens([query]) * len(documents) + count_tokens(documents))
        metering.ensure_within_budget(provider=name, input_tokens=tokens)
        started = time.perf_counter()
        scores = self._asked(query=query, documents=documents)
        metering.record(
            provider=name, operation=Operation.RERANK, items=len(documents), input_tokens=tokens(), output_tokens=0,
            duration_ms=(time.perf_counter() - started) * 1000,
        )
        return scores

    def _asked(self, *, query: str, documents: list[str]) -> list[float]:
        try:
            return self._ask(query=query, documents=documents)
        except RerankError:
            _failed_at[self.url] = time.monotonic()
            raise

    def _ask(self, *, query: str, documents: list[str]) -> list[float]:
        if self.api == "tei":
            body: dict[str, Any] = {"query": query, "texts": documents, "truncate": True}
        else:
            body = {"query": query, "documents": documents, "top_n": len(documents), "return_documents": False}
            if self.model:
                body["model"] = self.model
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        connection_release()
        try:
            response = _client().post(f"{self.url.rstrip('/')}/rerank", json=body, headers=headers, timeout=self.timeout)
        except httpx.HTTPError as exc:
            raise RerankError(f"the reranker did not answer: {type(exc).__name__}") from exc
        if response.status_code != 200:
            raise RerankError(f"the reranker answered {response.status_code}")
        try:
            answer = response.json()
        except ValueError as exc:
            raise RerankError("the reranker answered something that is not JSON") from exc
        return _relevances(answer, count=len(documents))


def _relevances(answer: Any, *, count: int) -> list[float]:
    """The scores of Cohere's shape (`{"results": [{"index", "relevance_score"}]}`) or
    TEI's (`[{"index", "score"}]`), in document order. Servers that answer logits
    (llama.cpp's, TEI asked for raw scores) go through a sigmoid, so that a score always
    reads as a relevance in [0, 1], as `min_relevance` expects."""
    items = answer.get("results") if isinstance(answer, dict) else answer
    if not isinstance(items, list):
        raise RerankError("the reranker's answer holds no list of scores")
    scores: list[float | None] = [None] * count
    for item in items:
        if not isinstance(item, dict):
            raise RerankError("the reranker's answer holds a score that is not an object")
        index, score = item.get("index"), item.get("relevance_score", item.get("score"))
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count or scores[index] is not None:
            raise RerankError(f"the reranker scored a document that was not sent, or twice: index {index!r}")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            raise RerankError(f"the reranker's score for document {index} is not a number")
        scores[index] = float(score)
    if any(score is None for score in scores):
        raise RerankError(f"the reranker scored {sum(s is not None for s in scores)} of {count} documents")
    found = [float(score) for score in scores if score is not None]
    if all(0.0 <= score <= 1.0 for score in found):
        return found
    return [1 / (1 + math.exp(-max(min(score, 60.0), -60.0))) for score in found]


@lru_cache(maxsize=1)
def _client() -> httpx.Client:
    # One pool of kept-alive connections, shared by the request threads (httpx's client
    # is thread-safe): a new connection per search costs a round trip more, and every
    # search with a question asks the reranker.
    return httpx.Client()


def reranker_name() -> str:
    """How usage names the reranker: MEMORYHUB_RERANK_PROVIDER_NAME, else its host."""
    return settings.MEMORYHUB_RERANK_PROVIDER_NAME or urlsplit(settings.MEMORYHUB_RERANK_URL).hostname or "reranker"


def get_reranker() -> HttpReranker | None:
    """The configured reranker, or None where MEMORYHUB_RERANK_URL is empty."""
    if not settings.MEMORYHUB_RERANK_URL:
        return None
    if settings.MEMORYHUB_RERANK_API not in APIS:
        raise ValueError(f"MEMORYHUB_RERANK_API must be one of {', '.join(APIS)}, not {settings.MEMORYHUB_RERANK_API!r}")
    return HttpReranker(
        url=settings.MEMORYHUB_RERANK_URL,
        api=settings.MEMORYHUB_RERANK_API,
        model=settings.MEMORYHUB_RERANK_MODEL,
        api_key=settings.MEMORYHUB_RERANK_API_KEY,
        timeout=settings.MEMORYHUB_RERANK_TIMEOUT,
    )
