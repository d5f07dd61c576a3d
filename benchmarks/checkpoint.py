"""`manage.py bench checkpoint`: save + load latency per state size, against
LangGraph's PostgresSaver on the same server when it is installed."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from django.core.management.base import CommandParser
from django.db import connection

from benchmarks.common import WORDS, Log, Options, bench_workspace, delete_workspace, percentile
from memoryhub.core import services as core_services

NAME = "checkpoint"
HELP = "save+load latency vs LangGraph's PostgresSaver (own database)"
DATABASE: str | None = "memoryhub_bench_checkpoint"
FORWARDED: tuple[str, ...] = ("--sizes", "--repeats")
WARM_UP = 20


def add_arguments(parser: CommandParser) -> None:
    parser.add_argument("--sizes", default="1000,100000,1000000", help="state sizes in bytes, comma-separated")
    parser.add_argument("--repeats", type=int, default=50)


def run(options: Options, *, log: Log) -> dict[str, Any]:
    return bench_checkpoint(sizes=[int(x) for x in options["sizes"].split(",")], repeats=options["repeats"], log=log)


def report(result: dict[str, Any], *, write: Log) -> None:
    for size, row in result.items():
        line = "  ".join(f"{k} p50 {v['p50']:.1f} / p95 {v['p95']:.1f} ms" for k, v in row.items() if isinstance(v, dict))
        ratio = ""
        if "service_vs_langgraph_p50" in row:
            verdict = "met" if row["service_vs_langgraph_p50"] <= 1.0 else "MISSED"
            ratio = f"  (service/LangGraph p50 {row['service_vs_langgraph_p50']:.2f}: {verdict}, goal ≤ 1.00)"
        write(f"{int(size):>8} B state: {line}{ratio}")
    if not any("langgraph" in row for row in result.values()):
        write("LangGraph's PostgresSaver not installed: pip install langgraph-checkpoint-postgres==3.2.0 to compare.")


def _state_of_size(size: int, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    words = rng.choice(WORDS, size=max(1, size // 7))
    text = " ".join(words)[: max(1, size - 40)]
    return {"step": seed, "scratchpad": text}


def bench_checkpoint(*, sizes: list[int], repeats: int, log: Log) -> dict[str, Any]:
    """Save + load latency per state size: our service layer, our HTTP API, and
    LangGraph's PostgresSaver on the same PostgreSQL (if installed).

    The service and LangGraph take turns, state by state, so that whatever else the
    machine does at a moment slows both alike: run one after the other, their ratio
    moved between 0.9 and 1.16 from run to run at 1 KB, where both take ~1 ms."""
    import httpx

    from benchmarks.harness import current_database_url, start_hub
    from memoryhub.checkpoints.selectors import checkpoint_load, checkpoint_state
    from memoryhub.checkpoints.services import checkpoint_save
    from memoryhub.conversations.sessions import session_create

    workspace = bench_workspace(prefix="bench-checkpoint")
    store = core_services.store_get_or_create(workspace=workspace, name="default")
    agent = core_services.agent_get_or_create(workspace=workspace, name="bench", stores=[store])
    _, key = core_services.agent_key_issue(agent=agent)
    results: dict[str, Any] = {}
    hub = start_hub(database_url=current_database_url())
    try:
        with _langgraph_saver() as langgraph_put_and_get:
            for size in sizes:
                # Small states take ~1 ms either way: more of them, for a p50 that holds
                # still from run to run.
                count = repeats * 4 if size <= 10_000 else repeats
                states = [_state_of_size(size, i) for i in range(count + WARM_UP)]
                row: dict[str, Any] = {}
                session, _ = session_create(agent=agent, session_id=f"svc-{size}", user_id="bench")
                service_ms, langgraph_ms = [], []
                for version, state in enumerate(states):
                    started = time.perf_counter()
                    checkpoint_save(session=session, expected_version=version, state=state, actor="bench")
                    checkpoint_state(checkpoint_load(session=session))
                    elapsed = (time.perf_counter() - started) * 1000
                    took = langgraph_put_and_get(state) if langgraph_put_and_get is not None else None
                    if version >= WARM_UP:  # the first ones prepare statements and fill caches, on both sides
                        service_ms.append(elapsed)
                        if took is not None:
                            langgraph_ms.append(took)
                states = states[WARM_UP:]
                row["service"] = {"p50": percentile(service_ms, 50), "p95": percentile(service_ms, 95)}
                with httpx.Client(base_url=hub.url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as client:
                    client.post("/api/v1/sessions", json={"session_id": f"http-{size}", "user_id": "bench"}).raise_for_status()
                    url = f"/api/v1/sessions/http-{size}/checkpoints"
                    timings = []
                    for version, state in enumerate(states):
                        started = time.perf_counter()
                        client.post(url, json={"expected_version": version, "state": state}).raise_for_status()
                        client.get(f"{url}/latest").raise_for_status()
                        timings.append((time.perf_counter() - started) * 1000)
                row["http"] = {"p50": percentile(timings, 50), "p95": percentile(timings, 95)}
                if langgraph_ms:
                    row["langgraph"] = {"p50": percentile(langgraph_ms, 50), "p95": percentile(langgraph_ms, 95)}
                    row["service_vs_langgraph_p50"] = row["service"]["p50"] / row["langgraph"]["p50"]
                results[str(size)] = row
                log(f"  {size} B: " + "; ".join(f"{k} p50 {v['p50']:.1f} / p95 {v['p95']:.1f} ms" for k, v in row.items() if isinstance(v, dict)))
    finally:
        hub.stop()
        delete_workspace(workspace)
    return results


@contextmanager
def _langgraph_saver() -> Iterator[Callable[[dict[str, Any]], float] | None]:
    """put + get_tuple with LangGraph's PostgresSaver on the same server, timed in ms
    per call; None if it is not installed."""
    try:
        from langgraph.checkpoint.base import empty_checkpoint
        from langgraph.checkpoint.postgres import PostgresSaver
    except ImportError:
        yield None
        return
    from benchmarks.harness import current_database_url

    url = current_database_url().replace("%2F", "/")
    host = url.split("@", 1)[1].split(":", 1)[0]
    dbname = connection.settings_dict["NAME"]
    params = connection.get_connection_params()
    conninfo = f"host={host} port={params.get('port') or 5432} dbname={dbname} user={params.get('user') or 'postgres'}"
    if params.get("password"):
        conninfo += f" password={params['password']}"
    with PostgresSaver.from_conn_string(conninfo) as saver:
        saver.setup()
        thread = f"bench-{uuid.uuid4().hex[:8]}"
        config: dict[str, Any] = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}

        step = 0

        def put_and_get(state: dict[str, Any]) -> float:
            # Versions keep growing across sizes: a blob of a version saved before is
            # not written again.
            nonlocal config, step
            step += 1
            checkpoint = empty_checkpoint()
            checkpoint["channel_values"] = {"state": state}
            checkpoint["channel_versions"] = {"state": step}
            started = time.perf_counter()
            config = saver.put(config, checkpoint, {"source": "loop", "step": step}, {"state": step})
            saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
            return (time.perf_counter() - started) * 1000

        yield put_and_get
