"""`MemoryHubStore`: LangGraph's BaseStore over a MemoryHub's items (`hub.items`).

Items live in the agent's store on the hub, so every agent attached to it (and every
process of one) shares them, operators see them, and purges and expiry reach them. The
hub embeds the text of the `index` fields itself: there is no embedding function to
configure here, only which fields (`index={"fields": [...]}`, as LangGraph's stores take
it; `dims` and `embed` are accepted and ignored).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterable, Sequence
from typing import Any, Optional, Union

from langgraph.store.base import (
    BaseStore, GetOp, Item, ListNamespacesOp, Op, PutOp, Result, SearchItem, SearchOp, TTLConfig,
)

from memoryhub_client import models
from memoryhub_client._transport import RetryPolicy
from memoryhub_client.langgraph._clients import HubClients

__all__ = ["MemoryHubStore"]


def _ttl_seconds(minutes: Optional[float]) -> Optional[int]:
    # LangGraph counts TTLs in minutes; the hub in whole seconds (at least one).
    return None if minutes is None else max(1, math.ceil(minutes * 60))


def _item(answer: models.Item) -> Item:
    return Item(value=answer.value, key=answer.key, namespace=tuple(answer.namespace), created_at=answer.created_at,
                updated_at=answer.updated_at)


def _hit(answer: models.ItemSearchHit) -> SearchItem:
    return SearchItem(namespace=tuple(answer.namespace), key=answer.key, value=answer.value, created_at=answer.created_at,
                      updated_at=answer.updated_at, score=answer.score)


def _namespaces(op: ListNamespacesOp) -> dict[str, Any]:
    conditions = {condition.match_type: tuple(condition.path) for condition in op.match_conditions or ()}
    return {"prefix": conditions.get("prefix"), "suffix": conditions.get("suffix"), "max_depth": op.max_depth, "limit": op.limit,
            "offset": op.offset}


def _last_puts(ops: Sequence[Op]) -> dict[tuple[tuple[str, ...], str], PutOp]:
    """The puts of a batch, the last one per item winning (as in LangGraph's stores)."""
    return {(tuple(op.namespace), op.key): op for op in ops if isinstance(op, PutOp)}


class MemoryHubStore(HubClients, BaseStore):
    """A LangGraph store kept by a MemoryHub (an agent key). `store` names the hub store
    when the agent has several; `user_id` is the end user items are about (what a purge
    erases them by). `ttl`: LangGraph's TTLConfig (`default_ttl` in minutes,
    `refresh_on_read`); expired items are hidden at once and swept by the hub."""

    supports_ttl = True

    def __init__(
        self, *, base_url: str, api_key: str, store: Optional[str] = None, user_id: Optional[str] = None,
        index: Optional[dict[str, Any]] = None, ttl: Optional[TTLConfig] = None, timeout: float = 30.0,
        retry: Optional[RetryPolicy] = None,
    ) -> None:
        self._hub_options(base_url=base_url, api_key=api_key, timeout=timeout, retry=retry)
        self.store = store
        self.user_id = user_id
        self.index_fields: Optional[list[str]] = list(index["fields"]) if index and index.get("fields") else None
        self.ttl_config = ttl

    def _put_arguments(self, op: PutOp) -> dict[str, Any]:
        index: Union[None, bool, list[str]] = op.index
        if index is None:
            index = self.index_fields
        return {"index": index, "ttl_seconds": _ttl_seconds(op.ttl), "user_id": self.user_id, "store": self.store}

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Reads first (the gets in one request), then the writes, each put once (the
        last of a batch for one item): what LangGraph's Postgres store does."""
        ops = list(ops)
        results: list[Result] = [None] * len(ops)
        items = self.hub.items
        gets = [(i, op) for i, op in enumerate(ops) if isinstance(op, GetOp)]
        for refresh in (True, False):
            chosen = [(i, op) for i, op in gets if bool(op.refresh_ttl) is refresh]
            if chosen:
                found = items.get_many([(op.namespace, op.key) for _, op in chosen], refresh_ttl=refresh, store=self.store)
                for (i, _), answer in zip(chosen, found):
                    results[i] = None if answer is None else _item(answer)
        for i, op in enumerate(ops):
            if isinstance(op, SearchOp):
                hits = items.search(op.namespace_prefix, query=op.query, filter=op.filter or None, limit=op.limit, offset=op.offset,
                                    refresh_ttl=op.refresh_ttl, store=self.store)
                results[i] = [_hit(hit) for hit in hits]
            elif isinstance(op, ListNamespacesOp):
                results[i] = [tuple(ns) for ns in items.list_namespaces(**_namespaces(op), store=self.store)]
        for op in _last_puts(ops).values():
            if op.value is None:
                items.delete(op.namespace, op.key, store=self.store)
            else:
                items.put(op.namespace, op.key, op.value, **self._put_arguments(op))
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """As `batch`, with the requests of each phase sent concurrently."""
        ops = list(ops)
        results: list[Result] = [None] * len(ops)
        items = self._async_hub().items
        gets = [(i, op) for i, op in enumerate(ops) if isinstance(op, GetOp)]

        async def read_gets(refresh: bool) -> None:
            chosen = [(i, op) for i, op in gets if bool(op.refresh_ttl) is refresh]
            if chosen:
                found = await items.get_many([(op.namespace, op.key) for _, op in chosen], refresh_ttl=refresh, store=self.store)
                for (i, _), answer in zip(chosen, found):
                    results[i] = None if answer is None else _item(answer)

        async def read(i: int, op: Op) -> None:
            if isinstance(op, SearchOp):
                hits = await items.search(op.namespace_prefix, query=op.query, filter=op.filter or None, limit=op.limit,
                                          offset=op.offset, refresh_ttl=op.refresh_ttl, store=self.store)
                results[i] = [_hit(hit) for hit in hits]
            elif isinstance(op, ListNamespacesOp):
                results[i] = [tuple(ns) for ns in await items.list_namespaces(**_namespaces(op), store=self.store)]

        async def write(op: PutOp) -> None:
            if op.value is None:
                await items.delete(op.namespace, op.key, store=self.store)
            else:
                await items.put(op.namespace, op.key, op.value, **self._put_arguments(op))

        await asyncio.gather(read_gets(True), read_gets(False), *(read(i, op) for i, op in enumerate(ops)))
        await asyncio.gather(*(write(op) for op in _last_puts(ops).values()))
        return results

