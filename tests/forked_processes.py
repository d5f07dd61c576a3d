"""Hubs and workers for the tests, forked from a process that has imported their libraries once.

`python -m uvicorn memoryhub.asgi:application` spends about 2 s of CPU importing Django,
DRF, Celery, psycopg, NumPy and the rest before it answers its first request, and the
suite starts a hundred hubs and Celery workers on two cores. A forked one imports only
MemoryHub itself and reads its settings from its own environment (0.5 s): what it runs
is what `make run` and `make worker` run, `python -m …` in a fresh interpreter's state.

The launcher is a child of the test process that imports those libraries without
settings. For each process it forks twice and the middle process exits, so the new one
is adopted by the test process (a Linux "child subreaper"), which can wait for it, signal
it and read its exit code like any child's (`ForkedProcess`, the part of `subprocess.Popen`
that tests use). The test's stdout and stderr are handed over with each request, so a
process's output lands in the test that started it.
"""

from __future__ import annotations

import ctypes
import functools
import importlib
import json
import os
import runpy
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent

# Every module here imports without Django's settings (the launcher has none: each hub
# brings its own environment); together they are 3/4 of a hub's import time.
PRELOAD = (
    "django.db.models", "django.http", "django.core.handlers.asgi", "django.forms", "django.template.defaulttags",
    "django.contrib.admin", "django.views.generic", "rest_framework.serializers",
    "celery", "celery.app.base", "kombu", "psycopg", "psycopg_pool", "pgvector.psycopg", "numpy",
    "uvicorn.main", "uvicorn.protocols.http.httptools_impl", "httpx", "rich.console", "jinja2", "pygments",
    "phonenumbers", "yaml", "markdown", "prometheus_client", "sqlparse", "dateutil.parser", "requests",
    "channels.layers", "whitenoise.middleware", "stdnum", "anyio", "starlette.routing", "pydantic",
)
PR_SET_CHILD_SUBREAPER = 36
PID = struct.Struct("!q")


class ForkedProcess:
    """A forked process, adopted by this one: `subprocess.Popen`'s pid, poll, wait and signals."""

    def __init__(self, pid: int, args: list[str]) -> None:
        self.pid = pid
        self.args = args
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(self.args, timeout)
            time.sleep(0.01)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def run(launcher: Launcher, args: list[str], *, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    """`subprocess.run(args, capture_output=True, text=True, timeout=…)`, forked."""
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    try:
        process = launcher.spawn(args, env=env, stdout=out_write, stderr=err_write)
    finally:
        os.close(out_write)
        os.close(err_write)
    chunks: dict[int, list[bytes]] = {out_read: [], err_read: []}

    def drain(fd: int) -> None:
        with os.fdopen(fd, "rb") as pipe:
            chunks[fd].append(pipe.read())

    readers = [threading.Thread(target=drain, args=(fd,), daemon=True) for fd in (out_read, err_read)]
    for reader in readers:
        reader.start()
    try:
        returncode = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise
    for reader in readers:
        reader.join(timeout=10)
    stdout, stderr = (b"".join(chunks[fd]).decode(errors="replace") for fd in (out_read, err_read))
    return subprocess.CompletedProcess(args, returncode, stdout, stderr)


class Launcher:
    """The test process's end of the launcher."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self._socket = ours
        self._lock = threading.Lock()
        # Ends when this process does: its end of the socket closes.
        self._process = subprocess.Popen(
            [sys.executable, "-m", __name__, str(theirs.fileno())], cwd=BASE_DIR, pass_fds=[theirs.fileno()],
            env={key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"},
        )
        theirs.close()

    def spawn(self, args: list[str], *, env: dict[str, str], stdout: int | None = None, stderr: int | None = None) -> ForkedProcess:
        """`args` is `[sys.executable, "-m", module, …]` or `[sys.executable, "script.py", …]`
        as it would be run, from the project's folder; the output goes to `stdout` and
        `stderr` (file descriptors; `stderr` defaults to `stdout`) or to this process's."""
        if args[0] != sys.executable or len(args) < 2:
            raise ValueError(f"only `python -m module` and `python script.py` are forked, not {args}")
        request = json.dumps({"args": args[1:], "env": env, "cwd": str(BASE_DIR)}).encode()
        if stdout is None:
            fds = [sys.stdout.fileno(), sys.stderr.fileno()]
        else:
            fds = [stdout, stderr if stderr is not None else stdout]
        with self._lock:
            socket.send_fds(self._socket, [PID.pack(len(request)) + request], fds)
            reply = _read_exactly(self._socket.recv, PID.size, gone="the hub launcher exited")
        return ForkedProcess(PID.unpack(reply)[0], args)


_launcher: Launcher | None = None


def launcher() -> Launcher | None:
    """This process's launcher, started on first use; None where no process can adopt
    its grandchildren (outside Linux), where processes are started as usual."""
    global _launcher
    if _launcher is None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
                return None
        except (OSError, AttributeError):
            return None
        _launcher = Launcher()
    return _launcher


def _read_exactly(read: Callable[[int], bytes], size: int, *, gone: str) -> bytes:
    """`size` bytes from `read` (a socket's recv, a pipe's os.read), or RuntimeError(`gone`)
    when the other end closes first."""
    data = b""
    while len(data) < size:
        chunk = read(size - len(data))
        if not chunk:
            raise RuntimeError(gone)
        data += chunk
    return data


def _serve(sock: socket.socket) -> None:
    """The launcher's loop: a request in, a process's pid out, until the test process goes."""
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 (an optional package missing costs time, not correctness)
            continue
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(sock, 1 << 20, 2)
        except OSError:
            return
        if not message:
            return
        (size,) = PID.unpack(message[:PID.size])
        body = message[PID.size:]
        body += _read_exactly(sock.recv, size - len(body), gone="the test process went mid-request")
        request = json.loads(body)
        pid_reader, pid_writer = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        middle = os.fork()
        if middle == 0:
            os.close(pid_reader)
            child = os.fork()
            if child == 0:
                os.close(pid_writer)
                _become(request, fds)
            os.write(pid_writer, PID.pack(child))
            os._exit(0)
        os.close(pid_writer)
        for fd in fds:
            os.close(fd)
        forked = PID.unpack(_read_exactly(functools.partial(os.read, pid_reader), PID.size, gone="the process was not forked"))[0]
        os.close(pid_reader)
        # Once the middle process is gone, the new one is the test process's: only then may it wait for it.
        os.waitpid(middle, 0)
        sock.sendall(PID.pack(forked))



def _become(request: dict, fds: list[int]) -> None:
    code = 1
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(fds[0], 1)
        os.dup2(fds[1], 2)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        try:
            if request["args"][0] == "-m":
                module, *args = request["args"][1:]
                sys.argv = [module, *args]
                runpy.run_module(module, run_name="__main__", alter_sys=True)
            else:
                sys.argv = list(request["args"])
                sys.path[0] = str(Path(request["args"][0]).resolve().parent)
                runpy.run_path(request["args"][0], run_name="__main__")
            code = 0
        except SystemExit as exit_:  # as the interpreter would end
            if exit_.code is None or isinstance(exit_.code, int):
                code = exit_.code or 0
            else:
                print(exit_.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


if __name__ == "__main__":
    _serve(socket.socket(fileno=int(sys.argv[1])))
