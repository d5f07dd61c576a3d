"""`manage.py bench conversation`: append and context latency per session size."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from django.core.management.base import CommandParser
from django.db import connection

from benchmarks.common import Log, against, Options, bench_workspace, delete_workspace, percentile, synthetic_sentences
from memoryhub.core import services as core_services

NAME = "conversation"
HELP = "append and context latency per session size and strategy"
GOAL_CONTEXT_P95_MS = 50
FLAT_FACTOR = 2  # "flat": the window at the largest size within twice its time at the smallest
DATABASE: str | None = None
FORWARDED: tuple[str, ...] = ()


@dataclass
class ConversationResult:
    messages: int
    append_ms: dict[str, float] = field(default_factory=dict)
    context_ms: dict[str, dict[str, float]] = field(default_factory=dict)


def add_arguments(parser: CommandParser) -> None:
    parser.add_argument("--sizes", default="100,10000,100000", help="messages per session, comma-separated")
    parser.add_argument("--repeats", type=int, default=50)


def run(options: Options, *, log: Log) -> list[ConversationResult]:
    sizes = [int(x) for x in options["sizes"].split(",")]
    return bench_conversation(sizes=sizes, repeats=options["repeats"], log=log)


def report(result: list[ConversationResult], *, write: Log) -> None:
    for r in result:
        write(f"{r.messages:>7} messages: append p50 {r.append_ms['p50']:.1f} / p95 {r.append_ms['p95']:.1f} ms")
        for strategy, v in r.context_ms.items():
            verdict = f" {against(v['p95'] <= GOAL_CONTEXT_P95_MS, f'p95 ≤ {GOAL_CONTEXT_P95_MS} ms at 10k')}" if r.messages == 10_000 else ""
            write(f"          context {strategy:9s} p50 {v['p50']:6.1f} / p95 {v['p95']:6.1f} ms (max_messages 50){verdict}")
    windows = [(r.messages, r.context_ms["window"]["p95"]) for r in sorted(result, key=lambda r: r.messages) if "window" in r.context_ms]
    if len(windows) > 1:
        (fewest, first), (most, last) = windows[0], windows[-1]
        write(f"window p95 {first:.1f} ms at {fewest:,} messages, {last:.1f} ms at {most:,} "
              + against(last <= FLAT_FACTOR * first, f"flat with history: at most {FLAT_FACTOR}× the smallest"))


def bench_conversation(*, sizes: list[int], repeats: int, log: Log) -> list[ConversationResult]:
    """Append and context latency at the service layer, for sessions of each size."""
    from memoryhub.conversations.context import context_build
    from memoryhub.conversations.messages import MessageInput, message_append
    from memoryhub.conversations.models import Message, Session
    from memoryhub.conversations.sessions import session_create

    workspace = bench_workspace(prefix="bench-conversation")
    store = core_services.store_get_or_create(workspace=workspace, name="default")
    agent = core_services.agent_get_or_create(workspace=workspace, name="bench", stores=[store])
    results = []
    try:
        for size in sizes:
            session, _ = session_create(agent=agent, session_id=f"bench-{size}", user_id="bench")
            texts = synthetic_sentences(min(size, 5000))
            rows = [
                Message(workspace=workspace, user_id="bench", session=session, seq=i + 1, role="user" if i % 2 == 0 else "assistant",
                        content=texts[i % len(texts)], pinned=(i % 500 == 0))
                for i in range(size)
            ]
            Message.objects.bulk_create(rows, batch_size=5000)
            Session.objects.filter(pk=session.pk).update(last_seq=size)
            session.refresh_from_db()
            with connection.cursor() as cursor:  # what autovacuum does soon after a bulk load
                cursor.execute("ANALYZE conversations_message")
            result = ConversationResult(messages=size)
            timings = []
            for i in range(repeats):
                started = time.perf_counter()
                message_append(
                    session=session, messages=[MessageInput(role="user", content=f"append {i}")], actor="bench"
                )
                timings.append((time.perf_counter() - started) * 1000)
            result.append_ms = {"p50": percentile(timings, 50), "p95": percentile(timings, 95)}
            for strategy in ("window", "truncate", "summarize"):
                timings = []
                for _ in range(repeats):
                    started = time.perf_counter()
                    context_build(session=session, strategy=strategy, max_messages=50, max_tokens=None, pin_first=2)
                    timings.append((time.perf_counter() - started) * 1000)
                result.context_ms[strategy] = {"p50": percentile(timings, 50), "p95": percentile(timings, 95)}
            log(f"  {size} messages: append p50 {result.append_ms['p50']:.1f} ms; "
                + "; ".join(f"{s} p50 {v['p50']:.1f} / p95 {v['p95']:.1f} ms" for s, v in result.context_ms.items()))
            results.append(result)
    finally:
        delete_workspace(workspace)
    return results
