"""`manage.py bench memory-ingest`: entries per second through the batch write API."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.core.management.base import CommandParser
from django.db import connection

from benchmarks.common import Log, against, Options, bench_workspace, delete_workspace, synthetic_sentences
from memoryhub.core import services as core_services

NAME = "memory-ingest"
HELP = "entries/s through POST /api/v1/memories/batch"
GOAL_CLIENT_PER_SECOND = 3_000
GOAL_MODEL_RATIO = 0.8  # the hub ingests at 80% or more of the raw model's speed
DATABASE: str | None = None
FORWARDED: tuple[str, ...] = ()


@dataclass
class IngestResult:
    mode: str
    items: int
    batch: int
    workers: int
    seconds: float
    items_per_second: float
    raw_model_per_second: float | None = None


def add_arguments(parser: CommandParser) -> None:
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--mode", choices=["client", "model"], default="client", help="client-supplied vectors or the hub's model")
    parser.add_argument("--workers", type=int, default=1, help="uvicorn worker processes (and as many concurrent clients)")


def run(options: Options, *, log: Log) -> IngestResult:
    return bench_ingest(items=options["items"], batch=options["batch"], mode=options["mode"], workers=options["workers"], log=log)


def report(result: IngestResult, *, write: Log) -> None:
    verdict = against(result.items_per_second >= GOAL_CLIENT_PER_SECOND, f"≥ {GOAL_CLIENT_PER_SECOND:,}/s") if result.mode == "client" else ""
    write(
        f"{result.items} entries in {result.seconds:.1f} s: {result.items_per_second:.0f} entries/s "
        f"({result.mode} vectors, {result.workers} worker(s), batches of {result.batch}) {verdict}"
    )
    if result.raw_model_per_second:
        ratio = result.items_per_second / result.raw_model_per_second
        write(f"raw model {result.raw_model_per_second:.0f} texts/s: the hub ingests at {ratio:.0%} of it "
              + against(ratio >= GOAL_MODEL_RATIO, f"within {1 - GOAL_MODEL_RATIO:.0%} of the raw model"))


def _vacuum() -> None:
    # Deleted rows stay in the HNSW graph until vacuumed and slow every insert that has
    # to walk past them; each run starts from a clean index and leaves one behind.
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE memory_memoryentry")


def bench_ingest(*, items: int, batch: int, mode: str, workers: int, log: Log) -> IngestResult:
    """POST /api/v1/memories/batch over real HTTP to a uvicorn hub on this database,
    one client per hub worker process, each sending its share of the batches."""
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    from benchmarks.harness import current_database_url, start_hub
    from memoryhub.memory.embeddings import get_provider

    provider = get_provider()
    workspace = bench_workspace(prefix="bench-ingest")
    store = core_services.store_get_or_create(workspace=workspace, name="default")
    agent = core_services.agent_get_or_create(workspace=workspace, name="bench", stores=[store])
    _, key = core_services.agent_key_issue(agent=agent)
    texts = synthetic_sentences(items)
    vectors = None
    raw_rate = None
    if mode == "client":
        rng = np.random.default_rng(1)
        array = rng.normal(size=(items, provider.dimensions)).astype(np.float32)
        vectors = (array / np.linalg.norm(array, axis=1, keepdims=True)).round(6).tolist()
    else:
        started = time.perf_counter()
        provider.embed(texts[: min(items, 2000)])
        raw_rate = min(items, 2000) / (time.perf_counter() - started)
        log(f"  raw model speed (in this process): {raw_rate:.0f} texts/s")
    _vacuum()
    hub = start_hub(database_url=current_database_url(), workers=workers)
    headers = {"Authorization": f"Bearer {key}"}
    bodies = []
    for start in range(0, items, batch):
        chunk = []
        for i in range(start, min(start + batch, items)):
            item: dict[str, Any] = {"content": texts[i], "user_id": f"user-{i % 50}", "tags": ["bench"]}
            if vectors is not None:
                item["embedding"] = vectors[i]
            chunk.append(item)
        bodies.append(json.dumps({"items": chunk}).encode())
    done = 0

    def send(client: httpx.Client, body: bytes) -> None:
        nonlocal done
        client.post("/api/v1/memories/batch", content=body, headers={"Content-Type": "application/json"}).raise_for_status()
        done += body.count(b'"content"')

    try:
        clients = [httpx.Client(base_url=hub.url, headers=headers, timeout=300) for _ in range(workers)]
        for client in clients:  # loads the model (and opens a DB connection) in each worker
            send(client, json.dumps({"items": [{"content": "warm-up", "user_id": "bench"}]}).encode())
        done = 0
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for n, _ in enumerate(pool.map(lambda pair: send(*pair), [(clients[i % workers], b) for i, b in enumerate(bodies)])):
                if (n + 1) % 10 == 0:
                    log(f"  {done}/{items} ({done / (time.perf_counter() - started):.0f}/s)")
        seconds = time.perf_counter() - started
        for client in clients:
            client.close()
    finally:
        hub.stop()
        delete_workspace(workspace)
        _vacuum()
    return IngestResult(
        mode=mode, items=items, batch=batch, workers=workers, seconds=seconds, items_per_second=items / seconds, raw_model_per_second=raw_rate
    )
