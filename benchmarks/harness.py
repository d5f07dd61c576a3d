"""Starting the hub in a process of its own (uvicorn), for benchmarks and tests that
must go through real HTTP and ASGI."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import httpx

BASE_DIR = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ServerProcess(Protocol):
    """What the harness and the tests use of a server's process: `subprocess.Popen`'s,
    or a stand-in's (the tests fork their hubs, tests/forked_processes.py)."""

    pid: int
    returncode: int | None

    def poll(self) -> int | None: ...
    def wait(self, timeout: float | None = None) -> int: ...
    def send_signal(self, sig: int) -> None: ...
    def terminate(self) -> None: ...
    def kill(self) -> None: ...


# Starts `python -m uvicorn …` with this environment, its output to this file descriptor
# (or inherited when None).
Spawn = Callable[..., ServerProcess]

# How hubs of one uvicorn process are started when start_hub is not told: by a new
# interpreter (subprocess.Popen) unless the test suite, which starts a hundred, has its
# own way (tests/conftest.py); benchmarks measure what `make run` runs.
default_spawn: Spawn | None = None


@dataclass
class HubProcess:
    url: str
    process: ServerProcess
    env: dict[str, str]

    def stop(self) -> None:
        stop_process(self.process)

    # What the server process holds, as the benchmarks and the leak tests count it.
    def threads(self) -> int:
        return len(list(Path(f"/proc/{self.process.pid}/task").iterdir()))

    def fds(self) -> int:
        return len(list(Path(f"/proc/{self.process.pid}/fd").iterdir()))

    def rss_mb(self) -> float:
        """Of the server and its worker processes (hypercorn and granian serve from children)."""
        return _rss_mb(self.process.pid)


def _rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    own = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")) / 1024
    children = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            children += [int(c) for c in (task / "children").read_text().split()]
        except FileNotFoundError:  # a thread that ended meanwhile
            continue
    return own + sum(_rss_mb(child) for child in children)


def stop_process(process: ServerProcess) -> None:
    """Terminate, and kill if it does not go within 10 s."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def server_command(server: str, port: int, *, workers: int, log_level: str) -> list[str]:
    """The command that serves the hub with `server` (the ASGI servers `bench live`
    compares; uvicorn is the one `make run` uses)."""
    app = "memoryhub.asgi:application"
    commands = {
        # As `make run` serves it: forwarded headers believed from no one, a deadline on request heads.
        "uvicorn": ["uvicorn", app, "--host", "127.0.0.1", "--port", str(port), "--lifespan", "off", "--log-level", log_level,
                    "--workers", str(workers), "--no-proxy-headers", "--http", "memoryhub.serving.deadlines:HeaderDeadlineProtocol"],
        "daphne": ["daphne", "-b", "127.0.0.1", "-p", str(port), "-v", "0", app],
        "hypercorn": ["hypercorn", "--bind", f"127.0.0.1:{port}", "--workers", str(workers), "--log-level", log_level, app],
        "granian": ["granian", "--interface", "asgi", "--host", "127.0.0.1", "--port", str(port), "--workers", str(workers),
                    "--log-level", log_level, app],
    }
    return [sys.executable, "-m", *commands[server]]


def one_key_for_all(streams: int) -> dict[str, str]:
    """The environment of a hub whose `streams` streams all hold one key: a benchmark's
    key stands for as many clients, each of which would hold its own."""
    return {"MEMORYHUB_STREAMS_PER_CREDENTIAL": str(max(streams, 1))}


# Hub processes this process has started (the tests report the count at the end of a run).
hubs_started = 0


def start_hub(
    *, database_url: str, extra_env: dict[str, str] | None = None, timeout: float = 60, workers: int = 1, log_level: str = "warning",
    log_file: Path | None = None, server: str = "uvicorn", port: int | None = None, spawn: Spawn | None = None,
) -> HubProcess:
    """The hub served on `port` or a free one (by uvicorn unless `server` says otherwise);
    its output to `log_file` if given; one uvicorn process started by `spawn` (or
    `default_spawn`) if given."""
    global hubs_started
    hubs_started += 1
    port = port or free_port()
    env = {**os.environ, "DATABASE_URL": database_url, "MEMORYHUB_RUN_SCHEDULER": "0", "REDIS_URL": "", **(extra_env or {})}
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)  # the hub keeps Django's guard
    output = log_file.open("ab") if log_file else None
    command = server_command(server, port, workers=workers, log_level=log_level)
    try:
        spawn = spawn or default_spawn
        if spawn is not None and server == "uvicorn" and workers == 1:
            process = spawn(command, env=env, stdout=output.fileno() if output else None)
        else:
            process = subprocess.Popen(command, cwd=BASE_DIR, env=env, stdout=output, stderr=subprocess.STDOUT if output else None)
    finally:
        if output:
            output.close()  # the child has its own copy
    hub = HubProcess(url=f"http://127.0.0.1:{port}", process=process, env=env)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the hub exited with {process.returncode}")
        try:
            httpx.get(f"{hub.url}/healthz", timeout=10)
            return hub
        except httpx.HTTPError:
            time.sleep(0.2)
    hub.stop()
    raise RuntimeError(f"the hub did not start within {timeout:.0f} s")


def current_database_url() -> str:
    """A URL for the database this process uses, for processes we start."""
    from django.db import connection

    params = connection.get_connection_params()
    host = str(params.get("host") or "").replace("/", "%2F")
    port = params.get("port") or 5432
    password = f":{params['password']}" if params.get("password") else ""
    return f"postgresql://{params.get('user') or 'postgres'}{password}@{host}:{port}/{connection.settings_dict['NAME']}"
