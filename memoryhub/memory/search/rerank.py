"""The operator's reranker (memoryhub/memory/rerankers.py) applied to a search's best rows."""

from __future__ import annotations

import logging

from django.conf import settings

from memoryhub.core.errors import ApplicationError
from memoryhub.memory.rerankers import RerankerResting, RerankError, get_reranker
from memoryhub.memory.search.request import SearchRequest
from memoryhub.memory.search.results import Hit

logger = logging.getLogger(__name__)


def reranks(request: SearchRequest) -> bool:
    """Whether the search goes through the reranker; 400 where it was asked for and
    cannot (none configured, or no question in words to read with the results)."""
    if request.rerank is False:
        return False
    configured = bool(settings.MEMORYHUB_RERANK_URL)
    if request.rerank is None:
        return configured and bool(request.query)
    if not configured:
        raise ApplicationError("No reranker is configured (MEMORYHUB_RERANK_URL).", code="RERANK_NOT_CONFIGURED")
    if not request.query:
        raise ApplicationError("rerank needs a query in words: the reranker reads it with each result.", code="VALIDATION_ERROR")
    return True


def reranked(hits: list[Hit], *, question: str, read: int) -> list[Hit]:
    """The best `read` of `hits`, scored by the reranker and sorted by its scores; a
    repeat keeps only what it adds, as before. Where the reranker fails or is late, `hits`
    as they were: the search still answers, in its own order, each hit `reranked` false."""
    reranker = get_reranker()
    best = hits[:read]
    if reranker is None or not best:
        return hits
    try:
        scores = reranker.scores(query=question, documents=[h.shown.content for h in best])
    except RerankerResting:
        return hits
    except RerankError as exc:
        logger.warning("Search results left in their own order: %s.", exc)
        return hits
    for hit, score in zip(best, scores, strict=True):
        hit.score = score * (1 - hit.shown.similarity) if hit.shown.repeat_of is not None else score
        hit.reranked = True
    best.sort(key=lambda h: -h.score)  # stable: equal scores keep the search's order
    return best
