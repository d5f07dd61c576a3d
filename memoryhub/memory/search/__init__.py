"""Search of long-term memory: semantic, keyword and hybrid, in one statement per search.

The modules, in the order a search runs through them: `request` (what is asked, the
hits), `routing` (exact or HNSW for the semantic leg), `candidates` (the statement),
`linked` (entries a layer above points the search to: the graph's facts), `scoring`
(fusion), `results` (the rows shown, repeats), `names` (following names), `rerank` (the
operator's reranker), and `pipeline`, which runs them."""

from memoryhub.memory.search.candidates import vector_literal
from memoryhub.memory.search.names import names_to_follow
from memoryhub.memory.search.pipeline import memory_search
from memoryhub.memory.search.request import (
    DEFAULT_MAX_RESULTS,
    FOLLOW_NAMES,
    MODES,
    REPEATS,
    SCORE_DECIMALS,
    SEMANTIC_WEIGHT,
    SearchHit,
    SearchRequest,
)

__all__ = [
    "DEFAULT_MAX_RESULTS", "FOLLOW_NAMES", "MODES", "REPEATS", "SCORE_DECIMALS", "SEMANTIC_WEIGHT",
    "SearchHit", "SearchRequest", "memory_search", "names_to_follow", "vector_literal",
]
