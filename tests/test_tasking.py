"""Background work in the default, in-process mode (no REDIS_URL)."""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import pytest
from celery import shared_task
from django.conf import settings
from django.db import transaction

from memoryhub.core import tasking
from memoryhub.core.tasks import ping, sweep_login_attempts
from tests.conftest import BASE_DIR, poll

ran_on: dict[str, str] = {}


@shared_task
def remember_thread(token: str) -> None:
    ran_on[token] = threading.current_thread().name


_meetings: dict[str, threading.Barrier] = {}


@shared_task
def meet(name: str) -> None:
    _meetings[name].wait(timeout=10)


def drained() -> None:
    """Return once every task dispatched so far has run. The pool takes tasks in order: a
    task on each of its threads at once, all meeting at a barrier, means none dispatched
    before them is left running or waiting."""
    workers = settings.MEMORYHUB_INPROCESS_WORKERS
    _meetings["drain"] = threading.Barrier(workers)
    for future in [tasking.dispatch(meet.name, "drain") for _ in range(workers)]:
        assert future is not None and future.result(timeout=15).successful()


def wait_for(token: str, timeout: float = 10.0) -> str | None:
    return poll(lambda: ran_on.get(token), timeout=timeout, interval=0.02)


def test_it_runs_tasks_off_the_callers_thread(transactional_db: None) -> None:
    with transaction.atomic():
        tasking.enqueue(remember_thread.name, "committed")
        drained()
        assert "committed" not in ran_on, "started before the transaction committed"
    thread = wait_for("committed")
    assert thread is not None and thread.startswith("memoryhub-task")
    assert thread != threading.current_thread().name


def test_it_drops_tasks_of_a_rolled_back_transaction(transactional_db: None) -> None:
    with pytest.raises(RuntimeError), transaction.atomic():
        tasking.enqueue(remember_thread.name, "rolled-back")
        raise RuntimeError("abort")
    drained()
    assert "rolled-back" not in ran_on


def test_it_runs_the_task_through_celery(db: None) -> None:
    future = tasking.dispatch(ping.name)
    assert future is not None
    result = future.result(timeout=10)
    assert result.successful()
    assert result.result["pong"] is True


def test_it_sweeps_old_login_records(db: None) -> None:
    from datetime import timedelta

    from axes.models import AccessAttempt
    from django.utils import timezone

    old = AccessAttempt.objects.create(username="x", ip_address="127.0.0.1", user_agent="t", failures_since_start=1)
    AccessAttempt.objects.filter(pk=old.pk).update(attempt_time=timezone.now() - timedelta(days=400))
    recent = AccessAttempt.objects.create(username="y", ip_address="127.0.0.1", user_agent="t", failures_since_start=1)
    assert sweep_login_attempts() == 1
    assert list(AccessAttempt.objects.values_list("pk", flat=True)) == [recent.pk]


# Where the hub may start threads of its own: tasking (pools and named threads), the live
# feed's event loop, and the serving layer's request threads.
THREAD_OWNERS = {"memoryhub/core/tasking.py", "memoryhub/core/live.py", "memoryhub/serving/sync_handler.py"}
THREAD_MAKERS = {"Thread", "ThreadPoolExecutor"}


def threads_started(path: Path, root: Path) -> list[str]:
    """Where the module at `path` makes a thread or a pool of its own: `file:line Name`."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in THREAD_MAKERS:
                found.append((node.lineno, name))
        elif isinstance(node, ast.ClassDef) and any(getattr(base, "id", getattr(base, "attr", "")) in THREAD_MAKERS for base in node.bases):
            found.append((node.lineno, node.name))
    return [f"{path.relative_to(root)}:{line} {name}" for line, name in sorted(found)]


def test_only_tasking_starts_the_hubs_threads() -> None:
    modules = [path for package in ("memoryhub", "agents_api", "agents_mcp", "console") for path in (BASE_DIR / package).rglob("*.py")]
    started = [where for path in sorted(modules) if str(path.relative_to(BASE_DIR)) not in THREAD_OWNERS for where in threads_started(path, BASE_DIR)]
    assert started == []


def test_it_finds_a_thread_started_elsewhere(tmp_path: Path) -> None:
    module = tmp_path / "mod.py"
    module.write_text("import threading\nfrom concurrent import futures\nthreading.Thread(target=print).start()\npool = futures.ThreadPoolExecutor(2)\n")
    assert threads_started(module, tmp_path) == ["mod.py:3 Thread", "mod.py:4 ThreadPoolExecutor"]


def test_its_pools_are_named_bounded_and_shut_down() -> None:
    pool = tasking.pool("memoryhub-test-pool", workers=2)
    assert tasking.pool("memoryhub-test-pool", workers=2) is pool
    names = {pool.submit(lambda: threading.current_thread().name).result(timeout=5) for _ in range(20)}
    assert names and all(name.startswith("memoryhub-test-pool_") for name in names) and len(names) <= 2
    tasking.shutdown()
    with pytest.raises(RuntimeError):  # shut down: nothing more runs on it
        pool.submit(print)
    assert tasking.pool("memoryhub-test-pool", workers=2) is not pool  # a later use makes a new one
    tasking.shutdown()
