"""Memories: store, read, revise, review and search."""

from __future__ import annotations

from typing import Any

from memoryhub.core.selectors import Principal
from memoryhub.graph import search as graph_search
from memoryhub.memory import duplicates, search, selectors, services
from memoryhub.memory.models import MemoryEntry
from memoryhub.operations import Made, acting_agent
from memoryhub.representations.memory import memory_json, revision_json, written_json


def memory_store_answer(*, principal: Principal, item: services.MemoryInput, on_duplicate: str) -> Made:
    """One memory written as the calling agent: new, or an existing key or duplicate (not new)."""
    [written] = services.memory_write(agent=acting_agent(principal), items=[item], on_duplicate=on_duplicate)
    return Made(written_json(written), new=written.created)


def memory_batch_answer(*, principal: Principal, items: list[services.MemoryInput], on_duplicate: str) -> dict[str, Any]:
    """Many memories written as the calling agent, all or nothing."""
    results = services.memory_write(agent=acting_agent(principal), items=items, on_duplicate=on_duplicate)
    return {"items": [written_json(written) for written in results]}


def review_queue_answer(*, principal: Principal, reason: str, cursor: str | None, limit: int) -> dict[str, Any]:
    """The memories in one review state, oldest first, a page at a time; or, for
    `duplicates`, the oldest groups of near-duplicates with their score."""
    if reason == "duplicates":
        groups = duplicates.duplicate_groups(workspace_id=principal.workspace.pk)
        return {"results": [{"entries": [memory_json(e) for e in group.members], "score": group.score} for group in groups], "next": None}
    page, next_cursor = selectors.review_queue(principal=principal, review=reason, cursor=cursor, limit=limit)
    return {"results": [memory_json(entry) for entry in page], "next": next_cursor}


def memory_get_answer(*, principal: Principal, memory_id: str) -> dict[str, Any]:
    return memory_json(selectors.entry_get(principal=principal, entry_id=memory_id))


def _read_back(principal: Principal, entry: MemoryEntry) -> dict[str, Any]:
    # Through the caller's visibility again, with its agent and store: what a GET answers now.
    return memory_get_answer(principal=principal, memory_id=str(entry.pk))


def memory_revisions_answer(*, principal: Principal, memory_id: str) -> dict[str, Any]:
    entry = selectors.entry_get(principal=principal, entry_id=memory_id)
    return {"results": [revision_json(revision) for revision in selectors.memory_revisions(entry=entry)]}


def memory_revert_answer(*, principal: Principal, memory_id: str, revision: int, reason: str) -> dict[str, Any]:
    entry = selectors.entry_get(principal=principal, entry_id=memory_id)
    return _read_back(principal, services.memory_revert(principal=principal, entry=entry, revision=revision, reason=reason))


def memory_review_answer(*, principal: Principal, memory_id: str, action: str, reason: str) -> dict[str, Any]:
    entry = selectors.entry_get(principal=principal, entry_id=memory_id)
    return _read_back(principal, services.memory_review(principal=principal, entry=entry, action=action, reason=reason))


def memory_search_answer(*, principal: Principal, request: search.SearchRequest, follow_graph: bool) -> dict[str, Any]:
    # The graph is followed above memory's search, which cannot read it (memoryhub/graph/search.py).
    run = graph_search.memory_search_following_graph if follow_graph else search.memory_search
    hits = run(principal=principal, request=request)
    return {"results": [
        {
            "entry": memory_json(hit.entry), "score": round(hit.score, search.SCORE_DECIMALS),
            "repeat_of": str(hit.repeat_of) if hit.repeat_of else None, "reranked": hit.reranked,
        }
        for hit in hits
    ]}


def memory_list_answer(*, principal: Principal, filters: selectors.MemoryFilters, cursor: str | None, limit: int) -> dict[str, Any]:
    page, next_cursor = selectors.entry_list(principal=principal, filters=filters, cursor=cursor, limit=limit)
    return {"results": [memory_json(entry) for entry in page], "next": next_cursor}


def memory_stats_answer(*, principal: Principal, user_id: str | None) -> dict[str, Any]:
    return selectors.memory_stats(principal=principal, user_id=user_id)


def facts_about_answer(*, principal: Principal, subject: str, user_id: str | None, include_invalidated: bool, limit: int) -> dict[str, Any]:
    facts = selectors.facts_about(principal=principal, subject=subject, user_id=user_id, include_invalidated=include_invalidated, limit=limit)
    return {"results": [memory_json(entry) for entry in facts]}
