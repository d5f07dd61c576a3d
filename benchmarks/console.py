"""`manage.py bench console`: the server time of every console page, in a workspace
with the demo data and one session of 10,000 events (goal: ≤ 150 ms each)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from django.core.management.base import CommandParser

from benchmarks.common import Log, Options, bench_workspace, delete_workspace, percentile

NAME = "console"
HELP = "server time of every console page with the demo data and a session of 10,000 events (goal ≤ 150 ms)"
DATABASE: str | None = None
FORWARDED: tuple[str, ...] = ()

GOAL_MS = 150.0
LONG_SESSION = "long-session"


@dataclass
class ConsoleResult:
    events: int
    build_s: float
    pages: dict[str, dict[str, float]] = field(default_factory=dict)  # page → p50, p95, max, queries


def add_arguments(parser: CommandParser) -> None:
    parser.add_argument("--events", type=int, default=10_000, help="events in the long session")
    parser.add_argument("--repeat", type=int, default=20, help="requests per page (after one warm-up)")


def run(options: Options, *, log: Log) -> ConsoleResult:
    return bench_console(events=options["events"], repeat=options["repeat"], log=log)


def report(result: ConsoleResult, *, write: Log) -> None:
    write(f"console pages, server time over Django's test client; a session of {result.events:,} events (built in {result.build_s:.0f} s)")
    for page, timing in result.pages.items():
        verdict = "ok" if timing["p95"] <= GOAL_MS else "MISS"
        write(
            f"  {page:34s} p50 {timing['p50']:6.1f} ms  p95 {timing['p95']:6.1f} ms  max {timing['max']:6.1f} ms"
            f"  {timing['queries']:3.0f} queries  {verdict} (goal ≤ {GOAL_MS:.0f} ms)"
        )


def _long_session(*, workspace: Any, events: int, log: Log) -> None:
    """A session as a busy agent leaves it: turns, a tool call every few turns, a
    checkpoint now and then, in batches through the same services the API uses."""
    from memoryhub.checkpoints.services import checkpoint_save
    from memoryhub.conversations.messages import MessageInput, message_append
    from memoryhub.conversations.sessions import session_create
    from memoryhub.core import services as core_services
    from memoryhub.tools.services import ToolCallInput, tool_call_record

    store = core_services.store_get_or_create(workspace=workspace, name="default")
    agent = core_services.agent_get_or_create(workspace=workspace, name="busy-agent", stores=[store])
    session, _ = session_create(agent=agent, session_id=LONG_SESSION, user_id="user-long")
    written, turn, version = 1, 0, 0
    while written < events:
        batch = [
            MessageInput(role="user" if (turn + n) % 2 == 0 else "assistant", content=f"Turn {turn + n}: about the order and its delivery.")
            for n in range(min(40, events - written))
        ]
        message_append(session=session, messages=batch, actor="agent:busy-agent")
        turn += len(batch)
        written += len(batch)
        if written < events:
            tool_call_record(
                session=session, item=ToolCallInput(tool="orders.lookup", args={"turn": turn}, result={"status": "shipped"}),
                actor="agent:busy-agent",
            )
            written += 1
        if written < events and turn % 400 == 0:
            checkpoint_save(session=session, expected_version=version, state={"turn": turn}, actor="agent:busy-agent")
            version += 1
            written += 1
        if turn % 2000 == 0:
            log(f"  {written:,} events written")


def bench_console(*, events: int, repeat: int, log: Log) -> ConsoleResult:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from console.demo import DEMO_SLUG, demo_seed
    from memoryhub.core import services as core_services
    from memoryhub.core.models import Role, Workspace

    workspace = bench_workspace(prefix="bench-console")
    try:
        started = time.perf_counter()
        log(f"  demo data: {demo_seed().message}")  # seeded once, kept: the workspace `make run` shows
        _long_session(workspace=workspace, events=events, log=log)
        build_s = time.perf_counter() - started
        demo = Workspace.objects.get(slug=DEMO_SLUG)
        username = f"bench-{workspace.slug}"
        memberships = [core_services.operator_get_or_create(username=username, workspace=each, role=Role.ADMIN) for each in (demo, workspace)]
        client = Client(HTTP_HOST="127.0.0.1")
        client.force_login(memberships[0].user)
        result = ConsoleResult(events=events, build_s=build_s)
        for each, pages in ((demo, _demo_pages(demo)), (workspace, _long_session_pages(workspace))):
            client.post("/workspace/", {"workspace": each.pk})
            for name, path in pages.items():
                client.get(path)  # warm-up: templates compiled, plans cached
                timings = []
                with CaptureQueriesContext(connection) as queries:
                    for _ in range(repeat):
                        start = time.perf_counter()
                        response = client.get(path)
                        timings.append((time.perf_counter() - start) * 1000)
                        if response.status_code != 200:
                            raise RuntimeError(f"{path} answered {response.status_code}")
                result.pages[name] = {
                    "p50": percentile(timings, 50), "p95": percentile(timings, 95), "max": max(timings), "queries": len(queries) / repeat,
                }
                log(f"  {name}: p95 {result.pages[name]['p95']:.1f} ms")
        return result
    finally:
        delete_workspace(workspace)


def _demo_pages(workspace: Any) -> dict[str, str]:
    from memoryhub.conversations.models import Session
    from memoryhub.memory.models import MemoryEntry

    pages = {
        "demo: overview": "/", "demo: activity": "/activity/", "demo: sessions": "/sessions/", "demo: memory": "/memory/",
        "demo: episodes": "/episodes/", "demo: approvals": "/approvals/", "demo: approval history": "/approvals/history/",
        "demo: approval rules": "/approvals/rules/", "demo: compliance": "/compliance/", "demo: keys": "/keys/",
        "demo: export & import": "/portability/", "demo: usage": "/usage/",
    }
    busiest = Session.objects.filter(workspace=workspace).order_by("-last_seq").first()
    if busiest is not None:
        for tab in ("", "conversation/", "plan/", "checkpoints/", "summaries/", "family/"):
            pages[f"demo: busiest session {tab or 'timeline'}".rstrip("/")] = f"/sessions/{busiest.session_id}/{tab}"
    entry = MemoryEntry.objects.filter(workspace=workspace).order_by("-pk").first()
    if entry is not None:
        pages["demo: a memory"] = f"/memory/{entry.pk}/"
    return pages


def _long_session_pages(workspace: Any) -> dict[str, str]:
    from memoryhub.timeline.models import Event

    long = f"/sessions/{LONG_SESSION}"
    ids = Event.objects.filter(workspace=workspace, session_id=LONG_SESSION).order_by("id").values_list("id", flat=True)
    middle = ids[len(ids) // 2] if ids else 1
    return {
        "long session: overview": "/", "long session: activity": "/activity/", "long session: sessions": "/sessions/",
        "long session: newest events": f"{long}/", "long session: a middle page": f"{long}/?before={middle}",
        "long session: tool calls only": f"{long}/?kind=tool_call", "long session: conversation": f"{long}/conversation/?from=5000",
        "long session: plan & tool calls": f"{long}/plan/", "long session: checkpoints": f"{long}/checkpoints/",
        "long session: summaries": f"{long}/summaries/", "long session: family": f"{long}/family/",
    }
