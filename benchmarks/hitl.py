"""`manage.py bench hitl`: agents long-polling for approvals on one ASGI process: what
waiting costs the hub, and how soon a waiting agent hears of a decision."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.management.base import CommandParser
from django.db import connection

from benchmarks.common import Log, against, Options, bench_workspace, delete_workspace, percentile
from benchmarks.harness import HubProcess
from memoryhub.core import services as core_services

NAME = "hitl"
HELP = "agents long-polling for approval decisions: hub memory, descriptors, connections, decision-to-answer latency"
GOAL_P95_MS = 200
DATABASE: str | None = None
FORWARDED: tuple[str, ...] = ()

AGENTS_PER_KEY = 20  # waiters share keys as a fleet of agents would, well under the read rate


@dataclass
class HubUse:
    rss_mb: float
    fds: int
    threads: int
    db_connections: int  # open to the hub's database (the pool keeps idle ones)
    db_busy: int  # of those, doing something (not idle in the pool)


@dataclass
class HitlResult:
    waiters: int
    pool_min: int
    before: HubUse
    waiting: HubUse
    latency_ms: dict[str, float] = field(default_factory=dict)
    failed: int = 0
    ramp_s: float = 0.0


def add_arguments(parser: CommandParser) -> None:
    parser.add_argument("--waiters", type=int, default=500, help="agents waiting at once")
    parser.add_argument("--rate", type=float, default=25.0, help="decisions per second once all wait")


def run(options: Options, *, log: Log) -> HitlResult:
    return bench_hitl(waiters=options["waiters"], rate=options["rate"], log=log)


def report(result: HitlResult, *, write: Log) -> None:
    write(f"{result.waiters} agents waiting on one uvicorn process (all waiting {result.ramp_s:.1f} s after the first request)")
    for label, use in (("idle", result.before), ("waiting", result.waiting)):
        write(
            f"  {label:8s} RSS {use.rss_mb:6.1f} MB, {use.fds:4d} descriptors, {use.threads:3d} threads, "
            f"{use.db_connections} database connections open, {use.db_busy} in use (pool minimum {result.pool_min})"
        )
    per_waiter_kb = (result.waiting.rss_mb - result.before.rss_mb) * 1024 / max(1, result.waiters)
    write(f"  memory per waiter ≈ {per_waiter_kb:.0f} KB")
    lat = result.latency_ms
    write(f"  decision → agent's answer: p50 {lat['p50']:.0f} / p95 {lat['p95']:.0f} / max {lat['max']:.0f} ms; failed waiters: {result.failed}")
    write("  connections in use while waiting: " + f"{result.waiting.db_busy} "
          + against(result.waiting.db_busy <= result.pool_min, f"≤ the pool minimum, {result.pool_min}"))
    write(f"  answer p95 {lat['p95']:.0f} ms " + against(lat["p95"] <= GOAL_P95_MS, f"≤ {GOAL_P95_MS} ms")
          + f"; failed waiters {result.failed} " + against(result.failed == 0, "none"))


def _hub_use(hub: HubProcess) -> HubUse:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*), count(*) FILTER (WHERE state <> 'idle') FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
        )
        total, busy = cursor.fetchone()
    return HubUse(
        rss_mb=hub.rss_mb(), fds=hub.fds(), threads=hub.threads(), db_connections=total, db_busy=busy,
    )


def bench_hitl(*, waiters: int, rate: float, log: Log) -> HitlResult:
    from benchmarks.harness import current_database_url, start_hub
    from memoryhub.approvals.services import ApprovalInput, approval_request
    from memoryhub.conversations.sessions import session_create
    from memoryhub.core.models import Role

    workspace = bench_workspace(prefix="bench-hitl")
    store = core_services.store_get_or_create(workspace=workspace, name="default")
    approver = core_services.operator_get_or_create(username=f"approver-{workspace.slug}", workspace=workspace, role=Role.APPROVER)
    _, operator_key = core_services.operator_key_issue(membership=approver)
    requests: list[tuple[str, int]] = []  # (agent key, approval id)
    for index in range(waiters):
        if index % AGENTS_PER_KEY == 0:
            agent = core_services.agent_get_or_create(workspace=workspace, name=f"agent-{index // AGENTS_PER_KEY}", stores=[store])
            _, key = core_services.agent_key_issue(agent=agent)
        session, _ = session_create(agent=agent, session_id=f"s{index}", user_id=f"u{index % 50}")
        approval, _ = approval_request(session=session, item=ApprovalInput(tool="payments.send", args={"n": index}, allowed_decisions=["approve"]))
        requests.append((key, approval.pk))
    pool_min = settings.DATABASES["default"]["OPTIONS"]["pool"]["min_size"]
    hub = start_hub(database_url=current_database_url())
    try:
        _warm_up(hub.url, requests)
        before = _hub_use(hub)
        result = asyncio.run(_wait_and_decide(hub, requests, operator_key, rate=rate, log=log))
        return HitlResult(waiters=waiters, pool_min=pool_min, before=before, **result)
    finally:
        hub.stop()
        delete_workspace(workspace)


def _warm_up(url: str, requests: list[tuple[str, int]]) -> None:
    """A few hundred plain reads first: a cold process pays for imports and its pool."""
    import httpx

    with httpx.Client(base_url=url, timeout=30) as client:
        for key, approval_id in requests[:200]:
            client.get(f"/api/v1/approvals/{approval_id}", headers={"Authorization": f"Bearer {key}"}).raise_for_status()
    time.sleep(1)


async def _hub_use_async(hub: HubProcess) -> HubUse:
    from memoryhub.serving.relay import in_worker

    return await in_worker(_hub_use, hub=hub)


async def _wait_and_decide(hub: HubProcess, requests: list[tuple[str, int]], operator_key: str, *, rate: float, log: Log) -> dict[str, Any]:
    import httpx
    answered: dict[int, float] = {}
    failures: list[str] = []
    limits = httpx.Limits(max_connections=len(requests) + 10, max_keepalive_connections=len(requests) + 10)
    async with httpx.AsyncClient(base_url=hub.url, timeout=90, limits=limits) as agents, httpx.AsyncClient(base_url=hub.url, timeout=30) as operator:

        async def wait(key: str, approval_id: int) -> None:
            try:
                response = await agents.get(f"/api/v1/approvals/{approval_id}", params={"wait": 60}, headers={"Authorization": f"Bearer {key}"})
                if response.status_code != 200 or response.json()["status"] != "approved":
                    failures.append(f"{approval_id}: {response.status_code} {response.text[:100]}")
            except httpx.HTTPError as exc:
                failures.append(f"{approval_id}: {exc!r}")
            answered[approval_id] = time.perf_counter()

        # The hub's use before the waiters come: measured once they had started, it counted
        # the sockets of the quick ones, and the ramp below waited its full 50 s for more.
        idle = await _hub_use_async(hub)
        started = time.perf_counter()
        tasks = [asyncio.create_task(wait(key, approval_id)) for key, approval_id in requests]
        # All wait once every socket is open and Django's first answers are done: the
        # request threads gone, no connection busy.
        deadline = time.monotonic() + 50
        while time.monotonic() < deadline and not any(task.done() for task in tasks):
            await asyncio.sleep(0.5)
            use = await _hub_use_async(hub)
            if use.fds >= idle.fds + len(requests) and use.threads <= idle.threads + 2 and use.db_busy == 0:
                break
        await asyncio.sleep(1)
        ramp = time.perf_counter() - started
        waiting = await _hub_use_async(hub)
        log(f"  {len(requests)} waiting after {ramp:.1f} s: {waiting}")
        decided: dict[int, float] = {}
        for key, approval_id in requests:
            sent = time.perf_counter()
            decided[approval_id] = sent
            response = await operator.post(f"/api/v1/approvals/{approval_id}/decision", json={"decision": "approve"},
                                           headers={"Authorization": f"Bearer {operator_key}"})
            if response.status_code != 200:
                failures.append(f"decision {approval_id}: {response.status_code}")
            await asyncio.sleep(max(0.0, 1 / rate - (time.perf_counter() - sent)))
        await asyncio.gather(*tasks)
    # From the moment the decision was sent (its own round trip included: conservative).
    latencies = [(answered[approval_id] - decided[approval_id]) * 1000 for _, approval_id in requests if approval_id in answered]
    for failure in failures[:5]:
        log(f"  failed: {failure}")
    return {
        "waiting": waiting, "ramp_s": ramp, "failed": len(failures),
        "latency_ms": {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95), "max": max(latencies, default=float("nan"))},
    }
