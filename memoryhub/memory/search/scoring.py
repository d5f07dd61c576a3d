"""How a search's candidates are scored: weighted fusion of the two legs (the default),
reciprocal rank fusion, or one leg alone."""

from __future__ import annotations

from memoryhub.memory.search.candidates import Candidate
from memoryhub.memory.search.request import SearchRequest


def score_candidates(results: list[Candidate], request: SearchRequest) -> None:
    """Set each candidate's score for the request's mode (docs/memory.md, "Search and scores"),
    plus what a linked entry's link adds (search/linked.py)."""
    if request.mode == "hybrid" and request.fusion == "rrf":
        by_semantic = sorted(results, key=lambda h: -(h.semantic if h.semantic is not None else -1.0))
        by_keyword = sorted([h for h in results if h.keyword], key=lambda h: -(h.keyword or 0.0))
        fused = {h.pk: 0.0 for h in results}
        for ranking in (by_semantic, by_keyword):
            for rank, hit in enumerate(ranking):
                fused[hit.pk] += 1.0 / (60 + rank + 1)
        for hit in results:
            hit.score = fused[hit.pk] * 30.5  # 1.0 for a hit ranked first by both legs
    elif request.mode == "hybrid":
        best_keyword = max((h.keyword or 0.0 for h in results), default=0.0)
        for hit in results:
            relative_keyword = (hit.keyword or 0.0) / best_keyword if best_keyword > 0 else 0.0
            weight = request.semantic_weight
            hit.score = weight * max(hit.semantic or 0.0, 0.0) + (1 - weight) * relative_keyword
    elif request.mode == "semantic":
        for hit in results:
            hit.score = max(hit.semantic or 0.0, 0.0)
    else:
        best_keyword = max((h.keyword or 0.0 for h in results), default=0.0)
        for hit in results:
            hit.score = (hit.keyword or 0.0) / best_keyword if best_keyword > 0 else 0.0
    if request.linked:
        # Here, not after: following names through every entry scores the candidates
        # again, and a linked entry must keep what its link adds. At most 1, as every score.
        for hit in results:
            if (bonus := request.linked.get(hit.pk)) is not None:
                hit.score = min(1.0, hit.score + bonus)
