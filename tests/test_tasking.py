"""Background work in the default, in-process mode (no REDIS_URL)."""

from __future__ import annotations

import threading
import time

import pytest
from celery import shared_task
from django.conf import settings
from django.db import transaction

from memoryhub.core import tasking
from memoryhub.core.tasks import ping, sweep_login_attempts

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
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if token in ran_on:
            return ran_on[token]
        time.sleep(0.02)
    return None


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
