"""LangGraph's store on the hub: items under (namespace, key) in one of the agent's stores."""

from __future__ import annotations

from typing import Any

from memoryhub.core.selectors import Principal
from memoryhub.memory import items
from memoryhub.operations import Made, acting_agent
from memoryhub.representations.memory import item_json


def item_put_answer(
    *, principal: Principal, store: str | None, namespace: list[str], key: str, value: dict[str, Any], index: Any,
    ttl_seconds: int | None, user_id: str | None,
) -> Made:
    """The item stored: new, or the one under that (namespace, key) replaced (not new)."""
    agent = acting_agent(principal)
    entry, created = items.item_put(
        agent=agent, store=items.item_store(agent=agent, name=store), namespace=namespace, key=key, value=value, index=index,
        ttl_seconds=ttl_seconds, user_id=user_id,
    )
    return Made(item_json(entry), new=created)


def items_get_answer(*, principal: Principal, store: str | None, keys: list[tuple[list[str], str]], refresh_ttl: bool) -> dict[str, Any]:
    """One result per key asked, None where there is no item."""
    found = items.item_get_many(store=items.item_store(agent=acting_agent(principal), name=store), keys=keys, refresh_ttl=refresh_ttl)
    return {"results": [item_json(entry) if entry is not None else None for entry in found]}


def items_search_answer(
    *, principal: Principal, store: str | None, namespace_prefix: list[str], query: str | None, filters: dict[str, Any], limit: int,
    offset: int, refresh_ttl: bool,
) -> dict[str, Any]:
    hits = items.item_search(
        store=items.item_store(agent=acting_agent(principal), name=store), namespace_prefix=namespace_prefix, query=query,
        filters=filters, limit=limit, offset=offset, refresh_ttl=refresh_ttl,
    )
    return {"results": [{**item_json(hit.entry), "score": None if hit.score is None else round(hit.score, 6)} for hit in hits]}
