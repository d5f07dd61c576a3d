"""Search that follows the graph (`"follow_graph": true` on a memory search): the facts
about the entities a question names, and the facts one step further, join its results.

Here and not in memoryhub.memory.search: the graph is built on memory (the layers of
.importlinter), so memory's search cannot read it. This layer finds the facts, through
the same grounding as `POST /api/v1/graph/grounding`, and hands their ids to the search
(`SearchRequest.linked`) with what each link is worth; the search scores them as any
candidate and ranks them among its own, in the same statement's terms.

How they are merged, and why:

- The facts are those graph grounding finds for the question (docs/graph.md,
  "Grounding"): touching an entity it names, or one fact further, with the rules' mirrors
  and transitive chains; its best FOLLOWED_FACTS (50).
- Every linked fact is scored by the search's own legs and fusion (meaning and words),
  ranked or not: a fact one step away ("Clara lives in Lisbon", for "Which city is Maya
  flying to?") seldom shares the question's words, and among many look-alike facts is
  rarely in a leg's best 40.
- Then it gains FOLLOWED_FACT_BONUS (0.1) × (0.5 + 0.5 × its confidence), whether it
  touches an entity the question names or is a step further. The graph says which facts
  are linked; the question's words and meaning still order them, so a linked fact about
  something else seldom crowds out a plain result that answers (it can: an entity with
  many facts, such as the user every question names, lifts them all a little).
- An inferred edge (a rule's mirror or a transitive chain) is not an entry: the stored
  facts it follows from (`via`) are linked in its place.
- Scores stay within 0 and 1; `min_relevance`, repeats, names and the reranker then
  apply as to any result.

Visibility, quarantine, expiry and supersession hold because the grounding reads the
graph as the same principal, for the search's `user_id` and `as_of`, and the search
reads the linked facts through its own filtered entries: a fact the caller cannot see
is neither walked nor shown, and a fact outside the search's other filters (tags, store,
memory_type…) is not shown either.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import datetime

from memoryhub.core.errors import ApplicationError
from memoryhub.core.selectors import Principal
from memoryhub.graph.selectors import MAX_GROUNDING, graph_grounding
from memoryhub.memory.search import SearchHit, SearchRequest, memory_search

# What a linked fact adds to its search score (0 to 1), times (0.5 + 0.5 × confidence): the
# same for a fact touching an entity the question names and for one a step further, since
# the first usually shares the question's words already and the second, which a two-hop
# question needs, does not. Chosen on the tuning splits of `bench memory-quality`'s chain
# set and of our set with --facts (docs/memory.md, "Following the graph"): 0.05 helped less,
# 0.15 and 0.2 crowded out single-hop answers on our set, whose questions all name the user.
FOLLOWED_FACT_BONUS = 0.1
# The facts read around the entities a question names: the most a grounding gives, so that
# the search, not the grounding's order among equals, picks which of them come first. (100
# found no more on the tuning splits, and each lookup reads four times as many per entity.)
FOLLOWED_FACTS = MAX_GROUNDING


def graph_links(
    *, principal: Principal, text: str, user_id: str | None, as_of: datetime | None = None, bonus: float = FOLLOWED_FACT_BONUS,
) -> dict[uuid.UUID, float]:
    """The stored facts around the entities `text` names, each with what its link adds to
    its search score: `bonus` × (0.5 + 0.5 × confidence) (the most, for a fact linked twice)."""
    grounding = graph_grounding(principal=principal, text=text, user_id=user_id, limit=FOLLOWED_FACTS, as_of=as_of)
    links: dict[uuid.UUID, float] = {}
    for fact in grounding.facts:
        worth = round(bonus * (0.5 + 0.5 * fact.confidence), 6)
        for pk in fact.via:  # a stored fact's `via` is itself; an inferred edge's, the facts it follows from
            links[pk] = max(links.get(pk, 0.0), worth)
    return links


def memory_search_following_graph(*, principal: Principal, request: SearchRequest, bonus: float = FOLLOWED_FACT_BONUS) -> list[SearchHit]:
    """`memory_search`, the facts around the entities the question names among its
    candidates (the module's docstring says how). Without a question in words there are
    no names to follow: refused, rather than quietly searched without the graph."""
    if not request.query:
        message = "Needs a query in words: the entities to follow are read from it."
        raise ApplicationError(f"follow_graph: {message}", code="VALIDATION_ERROR", details={"fields": {"follow_graph": [message]}})
    links = graph_links(principal=principal, text=request.query, user_id=request.filters.user_id, as_of=request.filters.as_of, bonus=bonus)
    return memory_search(principal=principal, request=replace(request, linked={**links, **request.linked}))
