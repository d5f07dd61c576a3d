"""`manage.py bench working-state`: tool calls, redaction and plan rendering."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import CommandParser

from benchmarks.common import Log, against, Options, bench_workspace, delete_workspace, percentile
from memoryhub.core import services as core_services

NAME = "working-state"
HELP = "tool-call append with redaction, redaction throughput, plan render"
GOAL_APPEND_P50_MS = 10
GOAL_REDACTION_MB_S = 5
DATABASE: str | None = None
FORWARDED: tuple[str, ...] = ()


def add_arguments(parser: CommandParser) -> None:
    parser.add_argument("--repeats", type=int, default=100)


def run(options: Options, *, log: Log) -> dict[str, Any]:
    # Its only progress line is the raw result, which the report prints readably.
    return bench_working_state(repeats=options["repeats"], log=lambda line: None)


def report(result: dict[str, Any], *, write: Log) -> None:
    append, render = result["tool_call_append_ms"], result["plan_render_200_steps_ms"]
    write(f"tool-call append, 10 KB output with redaction: p50 {append['p50']:.1f} / p95 {append['p95']:.1f} ms "
          + against(append["p50"] <= GOAL_APPEND_P50_MS, f"p50 ≤ {GOAL_APPEND_P50_MS} ms"))
    write(f"redaction throughput (one core): {result['redaction_mb_per_s']:.1f} MB/s "
          + against(result["redaction_mb_per_s"] >= GOAL_REDACTION_MB_S, f"≥ {GOAL_REDACTION_MB_S} MB/s"))
    write(f"plan render, 200 steps: p50 {render['p50']:.1f} / p95 {render['p95']:.1f} ms")


def bench_working_state(*, repeats: int, log: Log) -> dict[str, Any]:

    from memoryhub.conversations.sessions import session_create
    from memoryhub.plans import selectors as plan_selectors
    from memoryhub.plans import services as plan_services
    from memoryhub.privacy.redaction import pseudonym_key, redact_text
    from memoryhub.tools.services import ToolCallInput, tool_call_record

    workspace = bench_workspace(prefix="bench-working")
    store = core_services.store_get_or_create(workspace=workspace, name="default")
    agent = core_services.agent_get_or_create(workspace=workspace, name="bench", stores=[store])
    results: dict[str, Any] = {}
    try:
        session, _ = session_create(agent=agent, session_id="bench", user_id="bench")
        # A 10 KB tool output that reads like one: log lines with a few emails, IPs and a key.
        line = "2026-11-29 12:00:01 INFO request from 10.1.2.3 user=ann@example.com took 12 ms status=200 path=/api/items\n"
        output = (line * (10_240 // len(line) + 1))[:10_240] + "\nAuthorization: Bearer abcdefghijklmnopqrstuvwx"
        timings = []
        for i in range(repeats):
            started = time.perf_counter()
            tool_call_record(session=session, item=ToolCallInput(tool="http.get", args={"url": "https://example.org/items", "i": i}, result=output), actor="bench")
            timings.append((time.perf_counter() - started) * 1000)
        results["tool_call_append_ms"] = {"p50": percentile(timings, 50), "p95": percentile(timings, 95)}
        key = pseudonym_key(workspace.pk)
        corpus = (output + "\n") * 100  # ~1 MB
        started = time.perf_counter()
        rounds = 3
        for _ in range(rounds):
            redact_text(corpus, key=key)
        results["redaction_mb_per_s"] = rounds * len(corpus.encode()) / (time.perf_counter() - started) / 1e6
        steps = [plan_services.StepInput(step_id=f"s{i}", description=f"Step {i}: " + "do a thing " * 8, depends_on=[f"s{i-1}"] if i else []) for i in range(200)]
        plan = plan_services.plan_replace(session=session, goal="A long job", steps=steps, actor="bench")
        timings = []
        for i in range(repeats):
            started = time.perf_counter()
            plan_selectors.plan_render(plan=plan, current=f"s{i % 200}")
            timings.append((time.perf_counter() - started) * 1000)
        results["plan_render_200_steps_ms"] = {"p50": percentile(timings, 50), "p95": percentile(timings, 95)}
        log(f"  {results}")
    finally:
        delete_workspace(workspace)
    return results
