"""What the fault tests share: stopping and starting the embedded PostgreSQL or a Redis of
their own, and a small steady load of agent requests whose every answer is kept."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from django.conf import settings
from django.db import connections

from benchmarks.harness import free_port
from memoryhub.platform import embedded_pg
from tests.conftest import LiveHub, poll


@contextmanager
def database_stopped() -> Iterator[None]:
    """The embedded PostgreSQL stopped (fast shutdown: open sessions are cut, as in a
    crash or a restart by the operator) and started again on the same socket."""
    close_test_pools()
    embedded_pg.stop(settings.MEMORYHUB_DATA_DIR)
    try:
        yield
    finally:
        embedded_pg.ensure_running(settings.MEMORYHUB_DATA_DIR)
        close_test_pools()


def close_test_pools() -> None:
    """Drops this (the test) process's connection pools, to be made anew on next use. A
    pool whose server went away backs off between reconnection attempts, longer than the
    next test's setup waits for a connection."""
    connections.close_all()
    for connection in connections.all(initialized_only=True):
        connection.close_pool()


class RedisServer:
    """A redis-server of our own on a free port, so stopping it disturbs nobody else."""

    def __init__(self, workdir: Path) -> None:
        executable = shutil.which("redis-server")
        if executable is None:
            raise RuntimeError("redis-server is not installed (apt-get install redis-server)")
        self.executable = executable
        self.workdir = workdir
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        import redis

        self.process = subprocess.Popen(
            [self.executable, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(self.workdir)],
            stdout=subprocess.DEVNULL,
        )
        def answers() -> bool:
            try:
                return bool(redis.Redis.from_url(self.url, socket_connect_timeout=1).ping())
            except redis.ConnectionError:
                return False

        assert poll(answers, timeout=10), f"redis-server did not answer on {self.url} within 10 s"

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


@dataclass
class Answer:
    operation: str
    status: int  # 0: no answer (connection refused or cut)
    body: bytes
    headers: dict[str, str]
    at: float


@dataclass
class Load:
    """Agents sending requests one after another on a few threads until stopped."""

    url: str
    key: str
    threads: int = 3
    answers: list[Answer] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _workers: list[threading.Thread] = field(default_factory=list)

    def operations(self) -> list[tuple[str, Callable[[httpx.Client], httpx.Response]]]:
        def write(client: httpx.Client) -> httpx.Response:
            return client.post("/api/v1/memories", json={"content": f"fault load {uuid.uuid4().hex}", "user_id": "load"},
                               headers={"Idempotency-Key": uuid.uuid4().hex})

        return [
            ("write", write),
            ("search", lambda c: c.post("/api/v1/memories/search", json={"query": "fault load", "user_id": "load"})),
            ("me", lambda c: c.get("/api/v1/me")),
            ("list", lambda c: c.get("/api/v1/memories", params={"user_id": "load", "limit": 5})),
        ]

    def _run(self, offset: int) -> None:
        operations = self.operations()
        with httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {self.key}"}, timeout=30) as client:
            n = offset
            while not self._stop.is_set():
                name, call = operations[n % len(operations)]
                n += 1
                try:
                    response = call(client)
                    answer = Answer(name, response.status_code, response.content, dict(response.headers), time.monotonic())
                except httpx.TransportError:
                    answer = Answer(name, 0, b"", {}, time.monotonic())
                    time.sleep(0.05)
                self.answers.append(answer)

    def start(self) -> Load:
        self._workers = [threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(self.threads)]
        for worker in self._workers:
            worker.start()
        return self

    def stop(self) -> list[Answer]:
        self._stop.set()
        for worker in self._workers:
            worker.join(timeout=60)
        return self.answers


def in_process_tasks_settled(*, timeout: float = 30) -> None:
    """Waits until the tasks this (the test) process started on its own thread pool, as
    the API's writes do without Redis, have finished: so a test arranges its state after
    them, and a fault it makes meets the task under test, not one of these. One blocking
    job per thread of the pool: once all of them run together, no thread runs anything
    else, and what was queued before them is done."""
    from memoryhub.core import tasking

    threads = settings.MEMORYHUB_INPROCESS_WORKERS
    together = threading.Barrier(threads, timeout=timeout)
    for job in [tasking.executor().submit(together.wait) for _ in range(threads)]:
        job.result(timeout=timeout)


def wait_for(predicate: Callable[[], bool], *, timeout: float, what: str) -> float:
    """Seconds until `predicate` held; fails the test after `timeout`."""
    started = time.monotonic()
    assert poll(predicate, timeout=timeout, interval=0.2), f"{what}: not within {timeout:.0f} s"
    return time.monotonic() - started


def healthz(url: str) -> httpx.Response | None:
    try:
        return httpx.get(f"{url}/healthz", timeout=30)
    except httpx.TransportError:
        return None


def assert_outage_answers(answers: list[Answer], *, service: str, some_refused: bool = True) -> None:
    """Every answer is a success or a 503 in the envelope with Retry-After: never a 500
    (and, with `some_refused`, some request did meet the outage)."""
    statuses = sorted({a.status for a in answers})
    assert all(a.status < 500 or a.status == 503 for a in answers), statuses
    assert all(a.status != 0 for a in answers), "the hub stopped answering"
    unavailable = [a for a in answers if a.status == 503]
    assert unavailable or not some_refused, f"no request saw the outage: {statuses}"
    for answer in unavailable:
        error = json.loads(answer.body)["error"]
        assert error["code"] == "SERVICE_UNAVAILABLE", error
        assert error["details"]["service"] == service, error
        assert b"Traceback" not in answer.body
        assert int(answer.headers["retry-after"]) > 0


def answers_after_recovery(hub: LiveHub, load: Load) -> tuple[float, list[Answer]]:
    """Right after the stopped service is started again: waits for /healthz to say 200,
    lets the load run on a moment and stops it. Gives the time from which every answer
    must be a success, and all the answers; fails if the hub process died."""
    up_at = time.monotonic()
    recovered = wait_for(lambda: (h := healthz(hub.url)) is not None and h.status_code == 200, timeout=30, what="/healthz back to 200")
    time.sleep(1.5)
    answers = load.stop()
    assert hub.process.poll() is None, "the hub exited"
    return up_at + recovered + 0.5, answers


def assert_served_since(answers: list[Answer], since: float) -> None:
    after = [a for a in answers if a.at > since]
    assert after and all(200 <= a.status < 300 for a in after), sorted({(a.operation, a.status) for a in after})


def assert_no_request_crashed(log: Path) -> None:
    """A request is answered, not crashed: no 500 logged, no request logged with a
    traceback. (A background task caught by an outage may log its own; the next one
    redoes its work.)"""
    output = log.read_text()
    assert "Internal Server Error" not in output
    assert not re.search(r"django\.request[^\n]*\n(?:Traceback|[^\n]*\bTraceback)", output), output[-3000:]
