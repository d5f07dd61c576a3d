"""`manage.py bench webhooks`: approvals announced to three receivers on 127.0.0.1 by one hub
process: how soon a burst's deliveries arrive, what announcing costs the request that
causes it, and a receiver that fails for a while and then recovers."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.core.management.base import CommandParser

from benchmarks.common import Log, Options, against, bench_workspace, delete_workspace, percentile
from memoryhub.core import services as core_services
from memoryhub.core.models import Role

NAME = "webhooks"
HELP = "approvals announced to webhook receivers: commit-to-2xx latency of a burst, request cost on vs off, recovery after an outage"
GOAL_DELIVERY_P95_S = 1.0
GOAL_OVERHEAD = 0.05
DATABASE: str | None = None
FORWARDED: tuple[str, ...] = ()

ENDPOINTS = 3
# The outage part runs the retry schedule ten times faster than the default (10 s, 60 s,
# 5 min… become 1 s, 6 s, 30 s…), so that a 60 s outage stands for the goal's 10 minutes.
COMPRESSED_SCHEDULE = "1,6,30,180,720,1800,3600"


@dataclass
class Receiver:
    """A fast receiver (an ASGI app under uvicorn, on its own thread): the time of each
    message's first 2xx, the attempts of each, and an outage the bench switches."""

    url: str = ""
    down: bool = False
    attempts: dict[str, int] = field(default_factory=dict)
    delivered_at: dict[str, float] = field(default_factory=dict)
    bodies: dict[str, dict[str, Any]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        message_id = dict(scope["headers"]).get(b"webhook-id", b"").decode()
        now = time.time()
        status = 500 if self.down else 204
        with self.lock:
            self.attempts[message_id] = self.attempts.get(message_id, 0) + 1
            if status == 204:
                self.delivered_at.setdefault(message_id, now)
                self.bodies.setdefault(message_id, json.loads(body))
        await send({"type": "http.response.start", "status": status, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})

    def delivered(self) -> int:
        with self.lock:
            return len(self.delivered_at)


@contextmanager
def receiving() -> Iterator[Receiver]:
    import uvicorn

    from benchmarks.harness import free_port

    receiver = Receiver()
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(receiver, host="127.0.0.1", port=port, log_level="warning", access_log=False, lifespan="off"))
    thread = threading.Thread(target=server.run, name="bench-receiver", daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    receiver.url = f"http://127.0.0.1:{port}/hook"
    try:
        yield receiver
    finally:
        server.should_exit = True
        thread.join(10)


@dataclass
class WebhooksResult:
    burst: int
    deliveries_expected: int
    deliveries_made: int
    burst_seconds: float
    delivery_s: dict[str, float]
    request_ms: dict[str, dict[str, float]]
    outage_s: float
    outage_messages: int
    outage_delivered: int
    outage_lost: int
    outage_ids_per_approval: int
    outage_recovered_s: float


def add_arguments(parser: CommandParser) -> None:
    parser.add_argument("--burst", type=int, default=1000, help="approvals requested at once")
    parser.add_argument("--alternating", type=int, default=300, help="requests timed with webhooks on, as many off, alternating")
    parser.add_argument("--outage", type=float, default=60.0, help="seconds a receiver answers 500 (schedule 10x faster)")


def run(options: Options, *, log: Log) -> WebhooksResult:
    return bench_webhooks(burst=options["burst"], alternating=options["alternating"], outage=options["outage"], log=log)


def report(result: WebhooksResult, *, write: Log) -> None:
    d, on, off = result.delivery_s, result.request_ms["on"], result.request_ms["off"]
    write(f"{result.burst} approvals requested at once ({result.burst_seconds:.1f} s), {ENDPOINTS} endpoints each, one hub process")
    write(f"  deliveries made {result.deliveries_made} of {result.deliveries_expected} "
          + against(result.deliveries_made == result.deliveries_expected, "all"))
    write(f"  commit → receiver's 2xx: p50 {d['p50']:.2f} / p95 {d['p95']:.2f} / max {d['max']:.2f} s "
          + against(d["p95"] <= GOAL_DELIVERY_P95_S, f"p95 ≤ {GOAL_DELIVERY_P95_S:g} s"))
    overhead = on["p50"] / off["p50"] - 1
    write(f"  POST /approvals, {result.request_ms['n']['count']:.0f} each way alternating: with webhooks p50 {on['p50']:.1f} / p95 {on['p95']:.1f} ms, "
          f"without p50 {off['p50']:.1f} / p95 {off['p95']:.1f} ms: {overhead:+.1%} " + against(overhead <= GOAL_OVERHEAD, "within 5%"))
    write(f"  a receiver down {result.outage_s:.0f} s (10 min at the default schedule): {result.outage_delivered} of {result.outage_messages} "
          f"messages delivered {result.outage_recovered_s:.0f} s after it came back, {result.outage_lost} lost "
          + against(result.outage_lost == 0, "none lost")
          + f", {result.outage_ids_per_approval} message id per approval " + against(result.outage_ids_per_approval == 1, "one"))


def bench_webhooks(*, burst: int, alternating: int, outage: float, log: Log) -> WebhooksResult:
    import httpx

    from benchmarks.harness import current_database_url, start_hub
    from memoryhub.approvals.models import Approval

    on_ws, off_ws = bench_workspace(prefix="bench-hooks-on"), bench_workspace(prefix="bench-hooks-off")
    keys = {}
    for name, workspace in (("on", on_ws), ("off", off_ws)):
        store = core_services.store_get_or_create(workspace=workspace, name="default")
        agent = core_services.agent_get_or_create(workspace=workspace, name="agent", stores=[store])
        keys[name] = core_services.agent_key_issue(agent=agent)[1]
    admin = core_services.operator_get_or_create(username=f"admin-{on_ws.slug}", workspace=on_ws, role=Role.ADMIN)
    admin_key = core_services.operator_key_issue(membership=admin)[1]
    env = {
        "MEMORYHUB_WEBHOOK_ALLOWED_HOSTS": "127.0.0.1", "MEMORYHUB_RUN_SCHEDULER": "1", "MEMORYHUB_WEBHOOK_RETRY_SCHEDULE": COMPRESSED_SCHEDULE,
        # A burst's agents, not its throttle, are what is measured.
        "MEMORYHUB_RATE_WRITES": "100000/minute",
    }
    hub = start_hub(database_url=current_database_url(), extra_env=env)
    try:
        with receiving() as first, receiving() as second, receiving() as third:
            receivers = [first, second, third]
            with httpx.Client(base_url=f"{hub.url}/api/v1", timeout=60) as client:
                for receiver in receivers:
                    client.post("/webhooks", json={"url": receiver.url, "events": ["approval.requested"]},
                                headers={"Authorization": f"Bearer {admin_key}"}).raise_for_status()
                for name in keys:
                    for session in ("timed", "burst", "outage"):
                        client.post("/sessions", json={"session_id": session, "user_id": "u1"}, headers={"Authorization": f"Bearer {keys[name]}"})

                def ask(name: str, session: str, n: int) -> float:
                    started = time.perf_counter()
                    answer = client.post("/approvals", json={"session_id": session, "tool": "payments.send", "args": {"n": n}},
                                         headers={"Authorization": f"Bearer {keys[name]}"})
                    answer.raise_for_status()
                    return (time.perf_counter() - started) * 1000

                for n in range(20):  # a cold process pays for imports and its pool
                    ask("off", "timed", -n)
                timings: dict[str, list[float]] = {"on": [], "off": []}
                for n in range(alternating):
                    for name in (("on", "off") if n % 2 else ("off", "on")):
                        timings[name].append(ask(name, "timed", n))
                log(f"  alternating done: on p50 {percentile(timings['on'], 50):.1f} ms, off {percentile(timings['off'], 50):.1f} ms")
                _wait(lambda: all(receiver.delivered() >= alternating for receiver in receivers), 120)
                before = {id(receiver): set(receiver.delivered_at) for receiver in receivers}

                started = time.perf_counter()
                with ThreadPoolExecutor(max_workers=16) as pool:
                    list(pool.map(lambda n: ask("on", "burst", n), range(burst)))
                burst_seconds = time.perf_counter() - started
                log(f"  burst of {burst} asked in {burst_seconds:.1f} s")
                expected = burst * ENDPOINTS
                _wait(lambda: sum(receiver.delivered() for receiver in receivers) >= expected + alternating * ENDPOINTS, 120)
                created = {str(pk): at.timestamp() for pk, at in Approval.objects.filter(session__session_id="burst", workspace=on_ws).values_list("pk", "created_at")}
                latencies = []
                for receiver in receivers:
                    for message_id, at in receiver.delivered_at.items():
                        if message_id not in before[id(receiver)]:
                            latencies.append(at - created[receiver.bodies[message_id]["data"]["approval_id"]])
                made = len(latencies)

                # One receiver down: its messages wait on the schedule, none lost, one id each.
                first.down = True
                outage_started = time.monotonic()
                marked = {message_id for message_id in first.attempts}
                count = 0
                while time.monotonic() - outage_started < outage:
                    ask("on", "outage", count)
                    count += 1
                    time.sleep(max(0.0, outage / 200))
                first.down = False
                back = time.monotonic()
                log(f"  receiver back after {back - outage_started:.0f} s with {count} messages queued; waiting for the retries")
                _wait(lambda: len({m for m in first.delivered_at if m not in marked}) >= count, 60 + 4 * outage + 200)
                recovered = time.monotonic() - back
                delivered_ids = {m for m in first.delivered_at if m not in marked}
                per_approval: dict[str, set[str]] = {}
                for message_id in delivered_ids:
                    per_approval.setdefault(first.bodies[message_id]["data"]["approval_id"], set()).add(message_id)
        return WebhooksResult(
            burst=burst, deliveries_expected=expected, deliveries_made=made, burst_seconds=burst_seconds,
            delivery_s={"p50": percentile(latencies, 50), "p95": percentile(latencies, 95), "max": max(latencies, default=float("nan"))},
            request_ms={
                "on": {"p50": percentile(timings["on"], 50), "p95": percentile(timings["on"], 95)},
                "off": {"p50": percentile(timings["off"], 50), "p95": percentile(timings["off"], 95)},
                "n": {"count": float(alternating)},
            },
            outage_s=outage, outage_messages=count, outage_delivered=len(per_approval), outage_lost=count - len(per_approval),
            outage_ids_per_approval=max((len(ids) for ids in per_approval.values()), default=0),
            outage_recovered_s=recovered,
        )
    finally:
        hub.stop()
        delete_workspace(on_ws)
        delete_workspace(off_ws)


def _wait(done: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not done() and time.monotonic() < deadline:
        time.sleep(0.05)
