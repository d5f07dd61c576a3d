"""Entries linked to the question from outside the search (`SearchRequest.linked`): the
graph's facts about the entities a question names, found by memoryhub/graph/search.py.

They join the candidates whether or not a leg ranked them (a fact one step from the
entity a question names rarely shares its words or its meaning), are scored by the same
legs and fusion as every candidate, and gain what their link is worth (scoring.py): a
linked entry the question matches well comes first, one it does not match at all gains
only the link's bonus."""

from __future__ import annotations

from django.db.models import QuerySet

from memoryhub.memory.embeddings import get_provider
from memoryhub.memory.models import MemoryEntry
from memoryhub.memory.search.candidates import Candidate, candidates_among
from memoryhub.memory.search.request import SearchRequest


def linked_candidates(
    entries: QuerySet[MemoryEntry], results: list[Candidate], *, request: SearchRequest, vector: list[float] | None, use_keyword: bool,
) -> list[Candidate]:
    """The entries of `request.linked` that `results` (the ranked candidates) lacks, as
    candidates with both scores; those the search's filters or visibility leave out are
    not among them (they are read through `entries`)."""
    known = {c.pk for c in results}
    missing = [pk for pk in request.linked if pk not in known]
    if not missing:
        return []
    rows = candidates_among(
        entries, pks=missing, vector=vector, model_id=get_provider().model_id if vector is not None else "",
        query=request.query if use_keyword else None, match=request.keyword_match,
    )
    return [Candidate(pk, created_at.timestamp(), semantic, keyword) for pk, created_at, semantic, keyword in rows]
