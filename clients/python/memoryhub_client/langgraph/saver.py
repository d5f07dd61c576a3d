"""`MemoryHubSaver`: LangGraph's BaseCheckpointSaver on a MemoryHub (`hub.graph_checkpoints`).

A thread is the agent's hub session of the same id: operators see its checkpoints on
the session's timeline, a purge of its end user erases them and the workspace's
retention bounds them. Values are serialised here, by LangGraph's serializer
(`serde.dumps_typed`), and the hub keeps the bytes as they are: it never reads them.

The semantics are those of LangGraph's reference savers (InMemorySaver, PostgresSaver):
channel values stored once per version, a task's writes stored once per index (special
writes, WRITES_IDX_MAP, replaced), the latest checkpoint the one with the greatest id;
it passes langgraph-checkpoint-conformance at level FULL (tests/test_langgraph_saver.py).
"""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any, Optional

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    SerializerProtocol,
    get_checkpoint_id,
    get_serializable_checkpoint_metadata,
)

from memoryhub_client import models
from memoryhub_client._transport import RetryPolicy
from memoryhub_client.errors import NotFound
from memoryhub_client.langgraph._clients import HubClients

__all__ = ["MemoryHubSaver"]

# What the hub takes in one prune or delete-for-runs request.
BATCH = 1000
# Checkpoints per page when `list` has no limit (each comes with its values and writes).
PAGE = 50
MAX_PAGE = 200
EMPTY = "empty"  # a channel in new_versions without a value (as InMemorySaver stores it)


def _json_safe(metadata: dict[str, Any]) -> dict[str, Any]:
    """Metadata as JSON (the hub filters on it); what JSON cannot hold becomes text."""
    return json.loads(json.dumps(metadata, default=str))


class MemoryHubSaver(HubClients, BaseCheckpointSaver[str]):
    """A LangGraph checkpointer kept by a MemoryHub (an agent key).

    `user_id` is the end user a new thread is about (what a purge erases it by); a
    config's `configurable["user_id"]` wins over it, and without either the thread id
    stands for the user. An existing thread keeps the user it was started for."""

    def __init__(
        self, *, base_url: str, api_key: str, user_id: Optional[str] = None, serde: Optional[SerializerProtocol] = None,
        timeout: float = 30.0, retry: Optional[RetryPolicy] = None,
    ) -> None:
        super().__init__(serde=serde)
        self._hub_options(base_url=base_url, api_key=api_key, timeout=timeout, retry=retry)
        self.user_id = user_id

    # What the sync and async methods share: requests built, answers read.

    def _user(self, config: RunnableConfig) -> str:
        configurable = config["configurable"]
        user_id = configurable.get("user_id")
        return user_id if isinstance(user_id, str) and user_id.strip() else self.user_id or str(configurable["thread_id"])

    def _put_arguments(
        self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, new_versions: ChannelVersions,
    ) -> dict[str, Any]:
        configurable = config["configurable"]
        stored = checkpoint.copy()
        values: dict[str, Any] = stored.pop("channel_values")  # type: ignore[misc]
        blobs = [
            (channel, str(version), *(self.serde.dumps_typed(values[channel]) if channel in values else (EMPTY, b"")))
            for channel, version in new_versions.items()
        ]
        return {
            "thread_id": str(configurable["thread_id"]), "checkpoint_id": checkpoint["id"], "checkpoint": self.serde.dumps_typed(stored),
            "checkpoint_ns": configurable.get("checkpoint_ns", ""), "parent_checkpoint_id": configurable.get("checkpoint_id"),
            "metadata": _json_safe(dict(get_serializable_checkpoint_metadata(config, metadata))),
            "channel_versions": {channel: str(version) for channel, version in checkpoint["channel_versions"].items()},
            "blobs": blobs, "user_id": self._user(config),
        }

    @staticmethod
    def _saved_config(arguments: dict[str, Any]) -> RunnableConfig:
        return {"configurable": {
            "thread_id": arguments["thread_id"], "checkpoint_ns": arguments["checkpoint_ns"], "checkpoint_id": arguments["checkpoint_id"],
        }}

    def _writes_arguments(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str) -> dict[str, Any]:
        configurable = config["configurable"]
        return {
            "thread_id": str(configurable["thread_id"]), "checkpoint_id": configurable["checkpoint_id"], "task_id": task_id,
            "checkpoint_ns": configurable.get("checkpoint_ns", ""), "task_path": task_path, "user_id": self._user(config),
            "writes": [(WRITES_IDX_MAP.get(channel, idx), channel, *self.serde.dumps_typed(value)) for idx, (channel, value) in enumerate(writes)],
        }

    def _tuple(self, stored: models.GraphCheckpoint) -> CheckpointTuple:
        checkpoint: Checkpoint = self.serde.loads_typed(stored.checkpoint.typed)
        where = {"thread_id": stored.thread_id, "checkpoint_ns": stored.checkpoint_ns}
        return CheckpointTuple(
            config={"configurable": {**where, "checkpoint_id": stored.checkpoint_id}},
            checkpoint={
                **checkpoint,
                "channel_values": {v.channel: self.serde.loads_typed(v.typed) for v in stored.channel_values if v.type != EMPTY},
            },
            metadata=stored.metadata,  # type: ignore[arg-type]
            parent_config={"configurable": {**where, "checkpoint_id": stored.parent_checkpoint_id}} if stored.parent_checkpoint_id else None,
            pending_writes=[(w.task_id, w.channel, self.serde.loads_typed(w.typed)) for w in stored.pending_writes],
        )

    @staticmethod
    def _get_query(config: RunnableConfig) -> dict[str, Any]:
        configurable = config["configurable"]
        return {
            "thread_id": str(configurable["thread_id"]), "checkpoint_ns": configurable.get("checkpoint_ns", ""),
            "checkpoint_id": get_checkpoint_id(config), "limit": 1,
        }

    @staticmethod
    def _list_query(
        config: Optional[RunnableConfig], filter: Optional[dict[str, Any]], before: Optional[RunnableConfig], limit: Optional[int],
    ) -> dict[str, Any]:
        configurable = config["configurable"] if config else {}
        return {
            "thread_id": str(configurable["thread_id"]) if "thread_id" in configurable else None,
            "checkpoint_ns": configurable.get("checkpoint_ns"), "checkpoint_id": get_checkpoint_id(config) if config else None,
            "before": get_checkpoint_id(before) if before else None, "filter": filter or None,
            "limit": min(limit, MAX_PAGE) if limit else PAGE,
        }

    # BaseCheckpointSaver, sync (httpx.Client)

    def get_tuple(self, config: RunnableConfig) -> Optional[CheckpointTuple]:
        page = self.hub.graph_checkpoints.list(**self._get_query(config))
        return self._tuple(page.results[0]) if page.results else None

    def list(
        self, config: Optional[RunnableConfig], *, filter: Optional[dict[str, Any]] = None, before: Optional[RunnableConfig] = None,
        limit: Optional[int] = None,
    ) -> Iterator[CheckpointTuple]:
        if limit is not None and limit <= 0:
            return
        for n, stored in enumerate(self.hub.graph_checkpoints.iter(**self._list_query(config, filter, before, limit)), start=1):
            yield self._tuple(stored)
            if limit is not None and n >= limit:
                return

    def put(
        self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, new_versions: ChannelVersions,
    ) -> RunnableConfig:
        arguments = self._put_arguments(config, checkpoint, metadata, new_versions)
        self.hub.graph_checkpoints.put(arguments.pop("thread_id"), **arguments)
        return self._saved_config({**arguments, "thread_id": config["configurable"]["thread_id"]})

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = "") -> None:
        if writes:
            arguments = self._writes_arguments(config, writes, task_id, task_path)
            self.hub.graph_checkpoints.put_writes(arguments.pop("thread_id"), **arguments)

    def delete_thread(self, thread_id: str) -> None:
        try:
            self.hub.graph_checkpoints.delete_thread(str(thread_id))
        except NotFound:
            pass  # nothing to delete

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        ids = [str(run_id) for run_id in run_ids]
        for start in range(0, len(ids), BATCH):
            self.hub.graph_checkpoints.delete_runs(ids[start:start + BATCH])

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self.hub.graph_checkpoints.copy_thread(str(source_thread_id), target_thread_id=str(target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        ids = [str(thread_id) for thread_id in thread_ids]
        for start in range(0, len(ids), BATCH):
            self.hub.graph_checkpoints.prune(ids[start:start + BATCH], strategy=strategy)  # type: ignore[arg-type]

    # BaseCheckpointSaver, async (httpx.AsyncClient)

    async def aget_tuple(self, config: RunnableConfig) -> Optional[CheckpointTuple]:
        page = await self._async_hub().graph_checkpoints.list(**self._get_query(config))
        return self._tuple(page.results[0]) if page.results else None

    async def alist(
        self, config: Optional[RunnableConfig], *, filter: Optional[dict[str, Any]] = None, before: Optional[RunnableConfig] = None,
        limit: Optional[int] = None,
    ) -> AsyncIterator[CheckpointTuple]:
        if limit is not None and limit <= 0:
            return
        n = 0
        async for stored in self._async_hub().graph_checkpoints.iter(**self._list_query(config, filter, before, limit)):
            yield self._tuple(stored)
            n += 1
            if limit is not None and n >= limit:
                return

    async def aput(
        self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, new_versions: ChannelVersions,
    ) -> RunnableConfig:
        arguments = self._put_arguments(config, checkpoint, metadata, new_versions)
        await self._async_hub().graph_checkpoints.put(arguments.pop("thread_id"), **arguments)
        return self._saved_config({**arguments, "thread_id": config["configurable"]["thread_id"]})

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = "") -> None:
        if writes:
            arguments = self._writes_arguments(config, writes, task_id, task_path)
            await self._async_hub().graph_checkpoints.put_writes(arguments.pop("thread_id"), **arguments)

    async def adelete_thread(self, thread_id: str) -> None:
        try:
            await self._async_hub().graph_checkpoints.delete_thread(str(thread_id))
        except NotFound:
            pass

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        ids = [str(run_id) for run_id in run_ids]
        for start in range(0, len(ids), BATCH):
            await self._async_hub().graph_checkpoints.delete_runs(ids[start:start + BATCH])

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await self._async_hub().graph_checkpoints.copy_thread(str(source_thread_id), target_thread_id=str(target_thread_id))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        ids = [str(thread_id) for thread_id in thread_ids]
        for start in range(0, len(ids), BATCH):
            await self._async_hub().graph_checkpoints.prune(ids[start:start + BATCH], strategy=strategy)  # type: ignore[arg-type]

    def get_next_version(self, current: Optional[str], channel: None) -> str:
        """As LangGraph's own savers: a zero-padded counter (so versions order as text)
        with a random fraction."""
        if current is None:
            current_v = 0
        elif isinstance(current, int):
            current_v = current
        else:
            current_v = int(current.split(".")[0])
        return f"{current_v + 1:032}.{random.random():016}"
