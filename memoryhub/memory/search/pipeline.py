"""`memory_search`: candidates (with the entries linked from outside), scores, the rows
shown, names followed, the reranker, in that order."""

from __future__ import annotations

from django.conf import settings

from memoryhub.core.errors import ApplicationError
from memoryhub.core.selectors import Principal
from memoryhub.memory.embeddings import checked_embedding, get_provider
from memoryhub.memory.search.candidates import Candidate, ranked_candidates
from memoryhub.memory.search.linked import linked_candidates
from memoryhub.memory.search.names import followed_names, lift_mentions, names_in_best
from memoryhub.memory.search.request import MODES, SCORE_DECIMALS, SearchHit, SearchRequest
from memoryhub.memory.search.rerank import reranked, reranks
from memoryhub.memory.search.results import shown_hits
from memoryhub.memory.search.scoring import score_candidates
from memoryhub.memory.selectors import filtered_entries
from memoryhub.usage import metering


def memory_search(*, principal: Principal, request: SearchRequest) -> list[SearchHit]:
    if request.mode not in MODES:
        raise ApplicationError(f"Unknown mode {request.mode!r}.", code="INVALID_MODE", details={"modes": list(MODES)})
    limit = max(1, min(request.max_results, settings.MEMORYHUB_MAX_SEARCH_RESULTS))
    rerank = reranks(request)
    read = max(limit, settings.MEMORYHUB_RERANK_CANDIDATES) if rerank else 0  # what the reranker reads
    entries = filtered_entries(principal=principal, filters=request.filters)
    if not request.query and request.query_embedding is None:
        # No question: a filtered listing, newest first; every match scores 1.
        page = entries.select_related("agent", "store").order_by("-created_at", "-pk")[:limit]
        return [SearchHit(entry=e, score=1.0) for e in page]

    # Candidates per leg: fusion needs more than the final count to reorder well.
    pool = max(40, limit * 4, read)
    use_semantic = request.mode in ("semantic", "hybrid")
    use_keyword = request.mode in ("keyword", "hybrid") and bool(request.query)
    vector = None
    if use_semantic:
        provider = get_provider()
        if request.query_embedding is not None:
            # A framework that embeds its own queries (CrewAI) learns from this code to send text instead.
            vector = checked_embedding(request.query_embedding, provider.dimensions, mismatch_code="DIMENSION_MISMATCH")
        else:
            with metering.about_user(request.filters.user_id):
                vector = provider.embed_question(request.query or "")
    ranked = ranked_candidates(
        entries, vector=vector if use_semantic else None, query=request.query if use_keyword else None, pool=pool,
        match=request.keyword_match, principal=principal, filters=request.filters,
    )
    # Candidates are scored as plain records: building a model instance for each of the
    # ~100 of them cost more than the fusion itself.
    results = [Candidate(pk, created_at.timestamp(), semantic, keyword) for pk, created_at, semantic, keyword in ranked]
    if request.linked:
        results += linked_candidates(entries, results, request=request, vector=vector, use_keyword=use_keyword)
    score_candidates(results, request)
    results.sort(key=lambda c: (-c.score, -c.created_at))
    hits = shown_hits(results, request=request, limit=limit, read=read)
    names = names_in_best(hits, request=request)
    if names and request.follow_names == "all":
        followed = followed_names(
            entries, results, hits, names=names, request=request, vector=vector, use_keyword=use_keyword, pool=pool,
            principal=principal,
        )
        hits = shown_hits(followed, request=request, limit=limit, read=read)
    elif names:
        lift_mentions(hits, names=names)
    if rerank:
        hits = reranked(hits, question=request.query or "", read=read)
    if request.min_relevance is not None:
        hits = [h for h in hits if round(h.score, SCORE_DECIMALS) >= request.min_relevance]
    return [
        SearchHit(
            entry=h.shown.entry(), score=h.score, semantic=h.candidate.semantic, keyword=h.candidate.keyword,
            repeat_of=h.shown.repeat_of, reranked=h.reranked,
        )
        for h in hits[:limit]
    ]
