"""`manage.py bench load`: a realistic agent mix at fixed concurrency for a bounded time,
against one ASGI process, then against two processes and a Celery worker on Redis.

Our own asyncio + httpx client rather than locust: httpx is already pinned, one event
loop holds hundreds of agents and SSE streams on this 2-core machine without locust's
gevent workers competing with the hub for the cores, and the hubs come from the same
harness as every other benchmark. 127.0.0.1 only; it stops by itself after --seconds.

Each agent has its own key and session and, one request after another, writes memories,
searches, appends a message and reads the context, logs tool calls, saves and loads
checkpoints, and asks for approvals that an approver decides while the agent waits
(long poll). Beside them, --streams clients hold a session's SSE stream open. Goal:
zero 5xx; reported: p50/p95/p99 per operation, throughput, and the CPU and memory of
every process (psutil)."""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

import httpx
from django.core.management.base import CommandParser

from benchmarks.common import Log, Options, bench_workspace, delete_workspace, percentile
from benchmarks.harness import BASE_DIR, current_database_url, one_key_for_all, start_hub, stop_process

NAME = "load"
HELP = "agent mix (writes, searches, context, tool calls, checkpoints, approvals, streams) at fixed concurrency: 5xx, p50/p95/p99, CPU and memory"
DATABASE: str | None = None
FORWARDED: tuple[str, ...] = ()

# Relative weights of an agent's next request.
MIX = {"write": 25, "search": 20, "context": 15, "tool_call": 15, "checkpoint": 10, "approval": 5, "me": 10}


@dataclass
class ProcessUse:
    role: str
    pid: int
    cpu_percent: float  # of one core, averaged over the run
    rss_peak_mb: float


@dataclass
class ModeResult:
    mode: str
    seconds: float
    requests: int
    server_errors: int
    statuses: dict[str, int]
    latency_ms: dict[str, dict[str, float]]
    processes: list[ProcessUse]
    stream_events: int = 0
    stream_failures: int = 0
    note: str = ""


@dataclass
class LoadResult:
    concurrency: int
    streams: int
    modes: list[ModeResult] = field(default_factory=list)


def add_arguments(parser: CommandParser) -> None:
    parser.add_argument("--seconds", type=float, default=60.0, help="how long each mode runs")
    parser.add_argument("--concurrency", type=int, default=20, help="agents sending requests at once")
    parser.add_argument("--streams", type=int, default=10, help="SSE streams held open meanwhile")
    parser.add_argument("--modes", default="one,redis", help="one (a process, tasks in it) and/or redis (two processes + a worker)")
    parser.add_argument("--redis-url", default=os.environ.get("MEMORYHUB_BENCH_REDIS_URL", "redis://127.0.0.1:6379/12"))


def run(options: Options, *, log: Log) -> LoadResult:
    return bench_load(
        seconds=options["seconds"], concurrency=options["concurrency"], streams=options["streams"],
        modes=[m.strip() for m in options["modes"].split(",") if m.strip()], redis_url=options["redis_url"], log=log,
    )


def report(result: LoadResult, *, write: Log) -> None:
    for mode in result.modes:
        if mode.note:
            write(f"{mode.mode}: {mode.note}")
            continue
        verdict = "met" if mode.server_errors == 0 else "MISSED"
        write(
            f"{mode.mode}: {result.concurrency} agents + {result.streams} streams for {mode.seconds:.0f} s: "
            f"{mode.requests} requests, {mode.requests / mode.seconds:.1f}/s; 5xx: {mode.server_errors} ({verdict}, goal 0); "
            f"statuses {dict(sorted(mode.statuses.items()))}"
        )
        for op, lat in sorted(mode.latency_ms.items()):
            write(f"  {op:11s} n {lat['n']:5.0f}  p50 {lat['p50']:7.1f}  p95 {lat['p95']:7.1f}  p99 {lat['p99']:7.1f} ms")
        write(f"  streams: {mode.stream_events} events received, {mode.stream_failures} failed")
        for proc in mode.processes:
            write(f"  {proc.role:10s} pid {proc.pid}: CPU {proc.cpu_percent:5.1f}% of a core, RSS peak {proc.rss_peak_mb:6.1f} MB")


def bench_load(*, seconds: float, concurrency: int, streams: int, modes: list[str], redis_url: str, log: Log) -> LoadResult:
    from memoryhub.core import services as core_services
    from memoryhub.core.models import Role

    workspace = bench_workspace(prefix="bench-load")
    result = LoadResult(concurrency=concurrency, streams=streams)
    try:
        store = core_services.store_get_or_create(workspace=workspace, name="default")
        keys = []
        for n in range(concurrency):
            agent = core_services.agent_get_or_create(workspace=workspace, name=f"agent-{n}", stores=[store])
            keys.append(core_services.agent_key_issue(agent=agent)[1])
        approver = core_services.operator_get_or_create(username=f"approver-{workspace.slug}", workspace=workspace, role=Role.APPROVER)
        approver_key = core_services.operator_key_issue(membership=approver)[1]
        for mode in modes:
            log(f"load: mode {mode}, {seconds:.0f} s")
            result.modes.append(_run_mode(mode, seconds=seconds, concurrency=concurrency, streams=streams, keys=keys,
                                          approver_key=approver_key, redis_url=redis_url))
    finally:
        delete_workspace(workspace)
    return result


def _run_mode(mode: str, *, seconds: float, concurrency: int, streams: int, keys: list[str], approver_key: str, redis_url: str) -> ModeResult:
    import psutil

    database_url = current_database_url()
    hubs, worker = [], None
    if mode == "redis":
        import redis

        try:
            redis.Redis.from_url(redis_url, socket_connect_timeout=2).ping()
        except redis.ConnectionError:
            return ModeResult(mode, 0, 0, 0, {}, {}, [], note=f"skipped: Redis not reachable at {redis_url}")
        env = {"REDIS_URL": redis_url, **one_key_for_all(streams)}
        hubs = [start_hub(database_url=database_url, extra_env=env) for _ in range(2)]
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "memoryhub", "worker", "--concurrency", "2", "--loglevel", "WARNING",
             "--without-gossip", "--without-mingle"],
            cwd=BASE_DIR, env={**os.environ, "DATABASE_URL": database_url, "REDIS_URL": redis_url},
        )
    elif mode == "one":
        hubs = [start_hub(database_url=database_url, extra_env=one_key_for_all(streams))]
    else:
        raise ValueError(f"unknown mode {mode!r} (one, redis)")
    roles = [(f"hub-{n + 1}", hub.process.pid) for n, hub in enumerate(hubs)] + ([("worker", worker.pid)] if worker else [])
    watched = {role: psutil.Process(pid) for role, pid in roles}
    try:
        cpu_start = {role: _cpu_seconds(proc) for role, proc in watched.items()}
        began = time.monotonic()
        peaks: dict[str, float] = defaultdict(float)
        run = asyncio.run(_drive([h.url for h in hubs], seconds=seconds, concurrency=concurrency, streams=streams, keys=keys,
                                 approver_key=approver_key, watched=watched, peaks=peaks))
        wall = time.monotonic() - began
        cpu = {role: (_cpu_seconds(proc) - cpu_start[role]) / wall * 100 for role, proc in watched.items()}
        processes = [ProcessUse(role, watched[role].pid, cpu[role], peaks[role]) for role, _ in roles]
    finally:
        for hub in hubs:
            hub.stop()
        if worker is not None:
            stop_process(worker)
    latency = {op: {"n": len(v), "p50": percentile(v, 50), "p95": percentile(v, 95), "p99": percentile(v, 99)} for op, v in run["times"].items()}
    statuses = Counter(str(s) for s in run["statuses"])
    return ModeResult(
        mode=mode, seconds=run["seconds"], requests=len(run["statuses"]), server_errors=sum(1 for s in run["statuses"] if s >= 500 or s == 0),
        statuses=dict(statuses), latency_ms=latency, processes=processes, stream_events=run["events"], stream_failures=run["stream_failures"],
    )


def _cpu_seconds(proc: Any) -> float:
    """User + system time of a process and its children (Celery's prefork workers, uvicorn's)."""
    total = 0.0
    for each in (proc, *proc.children(recursive=True)):
        try:
            times = each.cpu_times()
            total += times.user + times.system
        except Exception:  # noqa: BLE001 - a child that ended meanwhile
            pass
    return total


async def _drive(urls: list[str], *, seconds: float, concurrency: int, streams: int, keys: list[str], approver_key: str,
                 watched: dict[str, Any], peaks: dict[str, float]) -> dict[str, Any]:
    times: dict[str, list[float]] = defaultdict(list)
    sids = [f"load-{uuid.uuid4().hex[:12]}" for _ in range(concurrency)]
    opened = [asyncio.Event() for _ in range(concurrency)]
    statuses: list[int] = []
    counters = {"events": 0, "stream_failures": 0}
    started = time.monotonic()
    deadline = started + seconds
    limits = httpx.Limits(max_connections=concurrency + streams + 10, max_keepalive_connections=concurrency + 10)
    clients = [httpx.AsyncClient(base_url=url, timeout=60, limits=limits) for url in urls]

    async def call(client: httpx.AsyncClient, op: str, method: str, path: str, key: str, **kw: Any) -> httpx.Response | None:
        begun = time.monotonic()
        headers = {"Authorization": f"Bearer {key}", **kw.pop("headers", {})}
        try:
            response = await client.request(method, path, headers=headers, **kw)
        except httpx.HTTPError:
            statuses.append(0)
            return None
        times[op].append((time.monotonic() - begun) * 1000)
        statuses.append(response.status_code)
        return response

    async def agent(n: int) -> None:
        client, key = clients[n % len(clients)], keys[n]
        rng = random.Random(n)
        sid, user = sids[n], f"user-{n % 7}"
        await call(client, "session", "POST", "/api/v1/sessions", key, json={"session_id": sid, "user_id": user})
        opened[n].set()
        version = 0
        ops, weights = zip(*MIX.items(), strict=True)
        while time.monotonic() < deadline:
            op = rng.choices(ops, weights)[0]
            idem = {"Idempotency-Key": uuid.uuid4().hex}
            if op == "write":
                await call(client, op, "POST", "/api/v1/memories", key, headers=idem,
                           json={"content": f"{user} prefers option {rng.randrange(1000)} for task {rng.randrange(50)}", "user_id": user})
            elif op == "search":
                await call(client, op, "POST", "/api/v1/memories/search", key, json={"query": f"option for task {rng.randrange(50)}", "user_id": user})
            elif op == "context":
                await call(client, "message", "POST", f"/api/v1/sessions/{sid}/messages", key, headers=idem,
                           json={"role": "user", "content": f"step {rng.randrange(100)} please"})
                await call(client, op, "GET", f"/api/v1/sessions/{sid}/context", key, params={"max_messages": 20})
            elif op == "tool_call":
                await call(client, op, "POST", f"/api/v1/sessions/{sid}/tool-calls", key, headers=idem,
                           json={"tool": "search.web", "args": {"q": "weather"}, "result": "x" * 2000 + " mail me at a@example.com"})
            elif op == "checkpoint":
                saved = await call(client, op, "POST", f"/api/v1/sessions/{sid}/checkpoints", key, headers=idem,
                                   json={"expected_version": version, "state": {"step": version, "notes": "y" * 1000}})
                if saved is not None and saved.status_code == 201:
                    version = saved.json()["version"]
                await call(client, "checkpoint_load", "GET", f"/api/v1/sessions/{sid}/checkpoints/latest", key)
            elif op == "approval":
                asked = await call(client, op, "POST", "/api/v1/approvals", key, headers=idem,
                                   json={"session_id": sid, "tool": "payments.send", "args": {"n": rng.randrange(10**6)}})
                if asked is not None and asked.status_code == 201:
                    await call(client, "approval_wait", "GET", f"/api/v1/approvals/{asked.json()['id']}", key, params={"wait": max(1, min(10, int(deadline - time.monotonic())))})
            else:
                await call(client, op, "GET", "/api/v1/me", key)

    async def approver() -> None:
        client = clients[0]
        while time.monotonic() < deadline:
            pending = await call(client, "approvals_list", "GET", "/api/v1/approvals", approver_key, params={"status": "pending", "limit": 50})
            for item in (pending.json()["results"] if pending is not None and pending.status_code == 200 else []):
                await call(client, "decision", "POST", f"/api/v1/approvals/{item['id']}/decision", approver_key,
                           headers={"Idempotency-Key": uuid.uuid4().hex}, json={"decision": "approve"})
            await asyncio.sleep(0.2)

    async def stream(n: int) -> None:
        # An agent's own session, watched by a second client with its key (a UI beside it).
        watched_agent = n % concurrency
        client, key, sid = clients[(n + 1) % len(clients)], keys[watched_agent], sids[watched_agent]
        await opened[watched_agent].wait()
        try:
            async with client.stream("GET", f"/api/v1/sessions/{sid}/events", headers={"Authorization": f"Bearer {key}"},
                                     timeout=httpx.Timeout(seconds + 30)) as response:
                if response.status_code != 200:
                    counters["stream_failures"] += 1
                    statuses.append(response.status_code)
                    return
                async for line in response.aiter_lines():
                    counters["events"] += line.startswith("id:")
        except httpx.HTTPError:
            counters["stream_failures"] += 1

    async def sample() -> None:
        while time.monotonic() < deadline:
            for role, proc in watched.items():
                try:
                    rss = proc.memory_info().rss + sum(c.memory_info().rss for c in proc.children(recursive=True))
                    peaks[role] = max(peaks[role], rss / 2**20)
                except Exception:  # noqa: BLE001 - a process that ended is reported as it was
                    pass
            await asyncio.sleep(1)

    stream_tasks = [asyncio.create_task(stream(n)) for n in range(streams)]
    await asyncio.gather(*(agent(n) for n in range(concurrency)), approver(), sample())
    elapsed = time.monotonic() - started
    for task in stream_tasks:
        task.cancel()
    await asyncio.gather(*stream_tasks, return_exceptions=True)
    for client in clients:
        await client.aclose()
    return {"times": times, "statuses": statuses, "seconds": elapsed, **counters}
