"""`manage.py bench usage`: what metering costs, and how fast usage is read.

Two hubs on this database, one metering (with a price on the local model and a budget,
so that every call also checks the budget and estimates its input) and one not
(MEMORYHUB_USAGE_METERING=0), asked the same in turns: batches written with the hub's
model, then searches. Then GET /api/v1/usage over a month of 10M calls, grouped each way.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import httpx
import numpy as np
from django.core.management.base import CommandParser

from benchmarks.common import Log, Options, against, bench_workspace, delete_workspace, percentile, synthetic_sentences
from benchmarks.harness import current_database_url, start_hub
from memoryhub.core import services as core_services
from memoryhub.core.models import Role
from memoryhub.usage.models import Budget, UsageDaily
from memoryhub.usage.selectors import GROUPS

NAME = "usage"
HELP = "metering's cost on ingest and search (hubs with and without it, in turns), GET /usage over a month of 10M calls"
DATABASE: str | None = None
FORWARDED: tuple[str, ...] = ()

INGEST_GOAL = 0.02  # metering costs at most 2% of ingest throughput
SEARCH_GOAL_MS = 0.5  # and at most 0.5 ms p50 a search
READ_GOAL_MS = 100.0
PRICES = json.dumps({"local": {"input_per_million": 0.02}})


def add_arguments(parser: CommandParser) -> None:
    parser.add_argument("--rounds", type=int, default=4, help="turns of each hub, for ingest")
    parser.add_argument("--items", type=int, default=500, help="entries a turn writes, in batches of 100, embedded by the hub")
    parser.add_argument("--searches", type=int, default=300, help="searches each hub answers, in turns")
    parser.add_argument("--calls", type=int, default=10_000_000, help="calls in the month GET /usage reads")


def run(options: Options, *, log: Log) -> dict[str, Any]:
    return bench_usage(rounds=options["rounds"], items=options["items"], searches=options["searches"], calls=options["calls"], log=log)


def report(result: dict[str, Any], *, write: Log) -> None:
    ingest = result["ingest"]
    write(f"ingest with the hub's model, batches of 100, {ingest['rounds']} turns each: metered {ingest['on']:.1f} entries/s, "
          f"not metered {ingest['off']:.1f} entries/s: costs {ingest['cost']:+.1%} {against(ingest['cost'] <= INGEST_GOAL, '≤ 2%')}")
    search = result["search"]
    write(f"search (hybrid, one user), {search['count']} each in turns: p50 metered {search['on_p50']:.2f} ms, not {search['off_p50']:.2f} ms: "
          f"{search['delta_p50']:+.2f} ms {against(search['delta_p50'] <= SEARCH_GOAL_MS, '≤ 0.5 ms')} "
          f"(two hubs without it differ by {search['noise_p50']:+.2f} ms; the order shuffled each search)")
    for group, numbers in result["read"].items():
        write(f"GET /usage?group_by={group:9s} over a month of {result['calls']:,} calls ({result['daily_rows']:,} daily rows): "
              f"p50 {numbers['p50']:.1f} ms, p95 {numbers['p95']:.1f} ms {against(numbers['p95'] <= READ_GOAL_MS, '≤ 100 ms')}")


def bench_usage(*, rounds: int, items: int, searches: int, calls: int, log: Log) -> dict[str, Any]:
    workspace = bench_workspace(prefix="bench-usage")
    store = core_services.store_get_or_create(workspace=workspace, name="default")
    agent = core_services.agent_get_or_create(workspace=workspace, name="bench", stores=[store])
    _, key = core_services.agent_key_issue(agent=agent)
    admin = core_services.operator_get_or_create(username="bench-usage", workspace=workspace, role=Role.ADMIN)
    _, admin_key = core_services.operator_key_issue(membership=admin)
    Budget.objects.create(workspace=workspace, monthly_limit=Decimal(1_000_000), warn_at=Decimal(900_000))
    url = current_database_url()
    off = {"MEMORYHUB_USAGE_METERING": "0", "MEMORYHUB_EMBEDDINGS_THREADS": "1"}
    hubs = {
        "on": start_hub(database_url=url, extra_env={"MEMORYHUB_PRICES": PRICES, "MEMORYHUB_EMBEDDINGS_THREADS": "1"}),
        "off": start_hub(database_url=url, extra_env=off),
        # A second hub without metering: the difference between two identical hubs is the noise
        # a difference of a fraction of a millisecond has to stand out from.
        "control": start_hub(database_url=url, extra_env=off),
    }
    clients = {name: httpx.Client(base_url=hub.url, headers={"Authorization": f"Bearer {key}"}, timeout=300) for name, hub in hubs.items()}
    try:
        texts = synthetic_sentences(items * rounds * 2, seed=3)
        for client in clients.values():  # each loads the model
            client.post("/api/v1/memories", json={"content": "warm-up", "user_id": "warm"}).raise_for_status()
        seconds = {"on": 0.0, "off": 0.0}
        offset = 0
        for turn in range(rounds):
            for name in ("on", "off") if turn % 2 == 0 else ("off", "on"):
                started = time.perf_counter()
                for start in range(0, items, 100):
                    batch = [{"content": texts[offset + i], "user_id": f"user-{(offset + i) % 20}"} for i in range(start, min(start + 100, items))]
                    clients[name].post("/api/v1/memories/batch", json={"items": batch}).raise_for_status()
                seconds[name] += time.perf_counter() - started
                offset += items
            log(f"  ingest turn {turn + 1}: on {seconds['on']:.1f} s, off {seconds['off']:.1f} s so far")
        on, off = items * rounds / seconds["on"], items * rounds / seconds["off"]
        result: dict[str, Any] = {"ingest": {"rounds": rounds, "on": on, "off": off, "cost": 1 - on / off}}

        timings: dict[str, list[float]] = {name: [] for name in hubs}
        rng = np.random.default_rng(9)
        for q in range(searches):
            body = {"query": " ".join(rng.choice(texts[:200]).split()[:6]), "user_id": f"user-{q % 20}", "max_results": 10}
            order = list(hubs)
            rng.shuffle(order)  # no hub always first (a warm cache) or last
            for name in order:
                started = time.perf_counter()
                clients[name].post("/api/v1/memories/search", json=body).raise_for_status()
                timings[name].append((time.perf_counter() - started) * 1000)
        result["search"] = {
            "count": searches, "on_p50": percentile(timings["on"], 50), "off_p50": percentile(timings["off"], 50),
            "delta_p50": percentile(timings["on"], 50) - percentile(timings["off"], 50),
            "noise_p50": percentile(timings["control"], 50) - percentile(timings["off"], 50),
        }
        log(f"  searches: {result['search']}")

        daily_rows = _month_of_calls(workspace_id=workspace.pk, agent_ids=_agents(workspace, 20), calls=calls)
        reader = httpx.Client(base_url=hubs["on"].url, headers={"Authorization": f"Bearer {admin_key}"}, timeout=60)
        month = datetime.now(UTC).date().replace(day=1) - timedelta(days=1)
        window = {"from": month.replace(day=1).isoformat(), "to": month.isoformat()}
        result["read"] = {}
        for group in GROUPS:
            spent = []
            for _ in range(50):
                started = time.perf_counter()
                answer = reader.get("/api/v1/usage", params={**window, "group_by": group})
                spent.append((time.perf_counter() - started) * 1000)
                answer.raise_for_status()
            result["read"][group] = {"p50": percentile(spent, 50), "p95": percentile(spent, 95)}
        assert answer.json()["totals"]["calls"] == calls, answer.json()["totals"]
        reader.close()
        result.update(calls=calls, daily_rows=daily_rows)
        return result
    finally:
        for client in clients.values():
            client.close()
        for hub in hubs.values():
            hub.stop()
        delete_workspace(workspace)


def _agents(workspace: Any, n: int) -> list[int]:
    store = core_services.store_get_or_create(workspace=workspace, name="default")
    return [core_services.agent_get_or_create(workspace=workspace, name=f"agent-{i}", stores=[store]).pk for i in range(n)]


def _month_of_calls(*, workspace_id: int, agent_ids: list[int], calls: int) -> int:
    """Last month's days, as metering leaves them: a row a day per agent, provider and
    operation, their calls summing to `calls`."""
    last = datetime.now(UTC).date().replace(day=1) - timedelta(days=1)
    days = [last.replace(day=d) for d in range(1, last.day + 1)]
    keys = [(agent, provider, operation) for agent in agent_ids for provider, operation in
            (("local", "embed"), ("api.openai.com", "embed"), ("llm.internal", "summarize"), ("rerank.internal", "rerank"))]
    per_row, extra = divmod(calls, len(days) * len(keys))
    rows = [
        UsageDaily(workspace_id=workspace_id, day=day, agent_id=agent, provider=provider, operation=operation,
                   calls=per_row + (1 if i < extra else 0), items=per_row * 10, input_tokens=per_row * 120, output_tokens=0,
                   duration_ms=per_row * 8, cost=Decimal(per_row) * Decimal("0.0000024"))
        for i, (day, (agent, provider, operation)) in enumerate((day, key) for day in days for key in keys)
    ]
    UsageDaily.objects.bulk_create(rows, batch_size=5000)
    return len(rows)
