"""`manage.py bench live`: the live feed on one ASGI process. How many streams it holds,
what each costs, and how soon an event reaches its stream, for each ASGI server in turn.
The load client stops by itself and talks only to 127.0.0.1."""

from __future__ import annotations

import asyncio
import importlib.util
import random
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson
from django.core.management.base import CommandParser

from benchmarks.common import Log, against, Options, bench_workspace, delete_workspace, percentile
from benchmarks.harness import HubProcess
from memoryhub.core import services as core_services

NAME = "live"
HELP = "SSE streams held by one ASGI process, memory per stream, commit-to-receipt latency; per ASGI server"
GOAL_STREAMS = 1_000
GOAL_P95_MS = 200
DATABASE: str | None = None
FORWARDED: tuple[str, ...] = ()

SERVERS = ("uvicorn", "daphne", "hypercorn", "granian")
OPENING_AT_ONCE = 50


@dataclass
class ServerResult:
    server: str
    installed: bool = True
    streams_opened: int = 0
    streams_held: int = 0  # as the hub counts them, once all were open
    rss_idle_mb: float = 0.0
    rss_streaming_mb: float = 0.0
    open_s: float = 0.0
    events_sent: int = 0
    events_received: int = 0
    latency_ms: dict[str, float] = field(default_factory=dict)
    error: str = ""


def add_arguments(parser: CommandParser) -> None:
    parser.add_argument("--streams", type=int, default=1000, help="streams held at once (one session each)")
    parser.add_argument("--rate", type=float, default=10.0, help="events per second, spread over the streams")
    parser.add_argument("--seconds", type=float, default=20.0, help="how long events are sent")
    parser.add_argument("--servers", default=",".join(SERVERS), help="ASGI servers to compare, comma-separated")


def run(options: Options, *, log: Log) -> list[ServerResult]:
    return bench_live(
        streams=options["streams"], rate=options["rate"], seconds=options["seconds"], servers=options["servers"].split(","), log=log
    )


def report(result: list[ServerResult], *, write: Log) -> None:
    for r in result:
        if not r.installed:
            write(f"{r.server:9s} not installed (make bench installs requirements-bench.txt)")
            continue
        if r.error:
            write(f"{r.server:9s} failed: {r.error}")
        per_stream_kb = (r.rss_streaming_mb - r.rss_idle_mb) * 1024 / max(1, r.streams_held)
        lat = r.latency_ms
        write(
            f"{r.server:9s} {r.streams_held}/{r.streams_opened} streams held (opened in {r.open_s:.1f} s), RSS {r.rss_idle_mb:.0f} → "
            f"{r.rss_streaming_mb:.0f} MB ({per_stream_kb:.0f} KB per stream); {r.events_received}/{r.events_sent} events, "
            f"commit → receipt p50 {lat.get('p50', float('nan')):.0f} / p95 {lat.get('p95', float('nan')):.0f} / "
            f"max {lat.get('max', float('nan')):.0f} ms "
            + against(r.streams_held >= GOAL_STREAMS and r.events_received == r.events_sent and lat.get("p95", float("inf")) <= GOAL_P95_MS,
                      f"≥ {GOAL_STREAMS:,} streams, every event, p95 ≤ {GOAL_P95_MS} ms")
        )


def bench_live(*, streams: int, rate: float, seconds: float, servers: list[str], log: Log) -> list[ServerResult]:
    from benchmarks.harness import current_database_url, one_key_for_all, start_hub
    from memoryhub.conversations.sessions import session_create
    from memoryhub.core.models import Role

    workspace = bench_workspace(prefix="bench-live")
    store = core_services.store_get_or_create(workspace=workspace, name="default")
    agent = core_services.agent_get_or_create(workspace=workspace, name="bench", stores=[store])
    _, agent_key = core_services.agent_key_issue(agent=agent)
    operator = core_services.operator_get_or_create(username=f"op-{workspace.slug}", workspace=workspace, role=Role.VIEWER)
    _, operator_key = core_services.operator_key_issue(membership=operator)
    sessions = [f"s{i}" for i in range(streams)]
    for session_id in sessions:
        session_create(agent=agent, session_id=session_id, user_id=f"u{hash(session_id) % 100}")
    results = []
    try:
        for server in servers:
            result = ServerResult(server=server)
            results.append(result)
            if importlib.util.find_spec(server) is None:
                result.installed = False
                continue
            hub = start_hub(database_url=current_database_url(), server=server, extra_env=one_key_for_all(len(sessions)))
            try:
                port = int(hub.url.rsplit(":", 1)[1])
                time.sleep(1)
                result.rss_idle_mb = hub.rss_mb()
                asyncio.run(_measure(result, port, hub, agent_key, operator_key, sessions, rate=rate, seconds=seconds))
            except Exception as exc:  # noqa: BLE001 - one server's failure is a result, the others still run
                result.error = repr(exc)[:300]
            finally:
                hub.stop()
            log(f"  {server}: {result}")
    finally:
        delete_workspace(workspace)
    return results


async def _measure(
    result: ServerResult, port: int, hub: HubProcess, agent_key: str, operator_key: str, sessions: list[str], *, rate: float, seconds: float
) -> None:
    import httpx

    latencies: list[float] = []
    opened = asyncio.Semaphore(OPENING_AT_ONCE)
    started = time.perf_counter()
    readers = [asyncio.create_task(_stream(port, agent_key, session_id, opened, latencies)) for session_id in sessions]
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
        deadline = time.monotonic() + 120
        held = 0
        while time.monotonic() < deadline:
            await asyncio.sleep(1)
            held = (await client.get("/healthz", headers={"Authorization": f"Bearer {operator_key}"})).json()["live"]["streams"]
            if held >= len(sessions) or all(task.done() for task in readers):
                break
        result.open_s = time.perf_counter() - started
        result.streams_opened = sum(1 for task in readers if not task.done())
        result.streams_held = held
        result.rss_streaming_mb = hub.rss_mb()
        # Events at `rate` per second, each in a random session (so on one stream).
        rng = random.Random(7)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            tick = time.monotonic()
            response = await client.post(
                f"/api/v1/sessions/{rng.choice(sessions)}/messages", json={"role": "user", "content": "ping"},
                headers={"Authorization": f"Bearer {agent_key}"},
            )
            result.events_sent += response.status_code == 201
            await asyncio.sleep(max(0.0, 1 / rate - (time.monotonic() - tick)))
        await asyncio.sleep(2)  # the last ones in flight
    for task in readers:
        task.cancel()
    await asyncio.gather(*readers, return_exceptions=True)
    result.events_received = len(latencies)
    if latencies:
        result.latency_ms = {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95), "max": max(latencies)}


async def _stream(port: int, key: str, session_id: str, opened: asyncio.Semaphore, latencies: list[float]) -> None:
    """One SSE client over a raw connection (HTTP/1.0: the body ends with the
    connection, no chunking to undo): the delay from each message event's `at` to its
    arrival."""
    async with opened:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=2**20)
        writer.write(
            f"GET /api/v1/sessions/{session_id}/events HTTP/1.0\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
            "Accept: text/event-stream\r\n\r\n".encode()
        )
        await writer.drain()
        status = await reader.readline()
        if b" 200 " not in status:
            writer.close()
            raise RuntimeError(f"stream refused: {status!r}")
        while (await reader.readline()) not in (b"\r\n", b"\n", b""):
            pass
    try:
        while line := await reader.readline():
            if line.startswith(b"data: "):
                item: dict[str, Any] = orjson.loads(line[6:])
                if item.get("kind") == "message":
                    latencies.append((time.time() - datetime.fromisoformat(item["at"]).timestamp()) * 1000)
    finally:
        writer.close()
