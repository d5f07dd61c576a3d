"""What a search asks for and what it answers: the request, its knobs and defaults, the hits."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from memoryhub.memory.models import MemoryEntry
from memoryhub.memory.selectors import MemoryFilters

# Hybrid = SEMANTIC_WEIGHT × cosine similarity + (1 − SEMANTIC_WEIGHT) × keyword score
# relative to the query's best keyword match. Chosen by `manage.py bench memory-quality`.
SEMANTIC_WEIGHT = 0.6

DEFAULT_MAX_RESULTS = 10

MODES = ("hybrid", "semantic", "keyword")

# What a search does with a result that says again what a better one says (docs/memory.md, "Search and scores"): "demote" it below the distinct ones, or "keep" it in place.
REPEATS = ("demote", "keep")

# Two-hop questions ("Which city is Omar flying to?") are answered by two entries, the
# second found only through a name the first one mentions ("... to see Farid" ->
# "Farid lives in Melbourne"). The results that mention a name the best two mention (and
# the question does not) get this much added to their score: by default among the rows
# read for the results (READ_PER_RESULT times as many as asked for, no statement more), with
# follow_names="all" among all the entries the search covers (a second ranking). Chosen
# on the tuning split of our retrieval set (0.03 and 0.05 tie there; 0.05 cost the
# shipped LoCoMo-layout set a question).
FOLLOW_NAMES = ("results", "all", "off")

# Scores are shown to six decimals, and `min_relevance` compares at that precision: an
# agent that passes back the score it was shown keeps that result.
SCORE_DECIMALS = 6

# How many rows a search reads for each result it returns, to find repeats and names.
# Hybrid recall@10 on the retrieval benchmark's tuning split: 0.900 reading 2, 0.910
# reading 3, as much as looking among all ~80 candidates (offline).
READ_PER_RESULT = 3
FOLLOWED_RESULTS = 2
FOLLOWED_NAME_BONUS = 0.03


@dataclass
class SearchHit:
    entry: MemoryEntry
    score: float
    semantic: float | None = None
    keyword: float | None = None
    # The better-ranked result this one repeats, when it was demoted for it.
    repeat_of: uuid.UUID | None = None
    # Ordered and scored by the reranker (MEMORYHUB_RERANK_URL).
    reranked: bool = False


@dataclass
class SearchRequest:
    filters: MemoryFilters
    query: str | None = None
    mode: str = "hybrid"
    max_results: int = DEFAULT_MAX_RESULTS
    min_relevance: float | None = None
    query_embedding: list[float] | None = None
    # Knobs the retrieval benchmark turns; the API uses the defaults.
    fusion: str = "weighted"  # or "rrf": reciprocal rank fusion, k=60
    semantic_weight: float = SEMANTIC_WEIGHT
    keyword_match: str = "any"  # or "all" (plainto_tsquery's AND)
    repeats: str = "demote"  # or "keep"
    follow_names: str = "results"  # or "all", "off"
    # None: the hub's default, reranked where a reranker is configured and there is a
    # question in words; True asks for it (400 where it cannot be), False declines it.
    rerank: bool | None = None
    # Entries a layer above pointed the search to, with what each adds to its score: the
    # graph's facts about the entities the question names (memoryhub/graph/search.py;
    # memory cannot read the graph, which is built on it). Scored by the same legs as every
    # candidate, ranked or not, then lifted by that much (search/linked.py).
    linked: dict[uuid.UUID, float] = field(default_factory=dict)
