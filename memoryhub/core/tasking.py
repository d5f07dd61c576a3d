"""Starting background work, in either mode.

REDIS_URL set: `apply_async` to the Redis broker; Celery workers run the task.

REDIS_URL unset (one process, nothing else to run): the task runs on a small pool of
threads inside the hub's process, through Celery's own `Task.apply`, so the task code
is the same in both modes. Not `task_always_eager`: that would run a long purge or
re-embedding inside the HTTP request's thread and hold the response until it ends.
Tasks that must survive a crash keep their state in the database and are picked up
again by the periodic schedule, so losing the thread pool loses no accepted work.

Tasks are started by name ("memoryhub.memory.tasks.index_vectors"): a service never
imports a tasks module, so tasks may call services without an import cycle.

Every other thread of the hub's own is started here too (core/live.py's event loop and
the serving layer's request threads aside): named pools, bounded, for work that overlaps a
job's or a request's own (`pool`), and named threads for loops and for one job's other
half (`thread`). Each is named after what it does, so a stack dump or py-spy says whose it
is, and every pool is shut down when the process exits (queued work cancelled: what must
survive a crash is in the database, and picked up again by the schedule).
"""

from __future__ import annotations

import atexit
import itertools
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from celery import Task
from django.conf import settings
from django.db import close_old_connections, connections, transaction

from memoryhub.platform import request_id

logger = logging.getLogger(__name__)

_pools: dict[str, ThreadPoolExecutor] = {}
_pools_lock = threading.Lock()
_scheduler_started = False
_registry_lock = threading.Lock()


def in_process() -> bool:
    return not settings.REDIS_URL


def pool(name: str, *, workers: int) -> ThreadPoolExecutor:
    """The process's pool called `name` (its threads are `name`_0, `name`_1…), of at most
    `workers` threads, made on first use. Work submitted beyond them waits its turn."""
    with _pools_lock:
        if name not in _pools:
            _pools[name] = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name)
        return _pools[name]


def thread(name: str, target: Callable[[], Any]) -> threading.Thread:
    """`target` on a daemon thread called `name`, started now: a loop that runs as long as
    the process (the scheduler, the usage flusher), or the other half of one job that its
    caller waits for (an import's reader), which a bounded pool could leave unstarted."""
    started = threading.Thread(target=target, name=name, daemon=True)
    started.start()
    return started


@atexit.register
def shutdown() -> None:
    """Every pool shut down, the work not yet started cancelled."""
    with _pools_lock:
        pools = list(_pools.values())
        _pools.clear()
    for executor in pools:
        executor.shutdown(wait=False, cancel_futures=True)


def executor() -> ThreadPoolExecutor:
    """The in-process mode's task threads."""
    return pool("memoryhub-task", workers=settings.MEMORYHUB_INPROCESS_WORKERS)


def _run_with_fresh_connections(func: Callable[[], Any]) -> Any:
    close_old_connections()
    try:
        return func()
    finally:
        connections.close_all()


def registered_task(name: str) -> Task:
    """The task called `name`. Celery registers tasks when their module is imported,
    which a worker does at start and this process does here, once."""
    from memoryhub.celery import app

    if name not in app.tasks:
        # One thread imports; the others wait for the modules to be whole (a module
        # another thread is importing is already in sys.modules, its tasks not yet).
        with _registry_lock:
            app.loader.import_default_modules()
    return app.tasks[name]


def dispatch(name: str, *args: Any, **kwargs: Any) -> Future | None:
    """Start the task called `name` now (use `enqueue` inside a transaction). The
    message carries the request id of the request starting it (docs/operations/logs-and-metrics.md,
    "Request ids") and when it was queued (the queue's age in /metrics)."""
    task = registered_task(name)
    headers = {request_id.TASK_HEADER: request_id.current(), "enqueued_at": time.time()}
    if in_process():
        ticket = next(_tickets)
        _waiting[ticket] = headers["enqueued_at"]

        def run() -> Any:
            _waiting.pop(ticket, None)
            return task.apply(args=args, kwargs=kwargs, throw=False, headers=headers)

        return executor().submit(_run_with_fresh_connections, run)
    task.apply_async(args=args, kwargs=kwargs, headers=headers)
    return None


# In-process mode: tasks submitted to the thread pool and not started yet, by ticket,
# with the time they were queued.
_tickets = itertools.count()
_waiting: dict[int, float] = {}


def in_process_queue() -> tuple[int, float | None]:
    """Tasks waiting for a thread of this process, and the oldest one's queueing time."""
    times = list(_waiting.values())
    return len(times), min(times, default=None)


def enqueue(name: str, *args: Any, **kwargs: Any) -> None:
    """Start the task called `name` once the current transaction commits, so it never
    sees rows that a rollback would undo, nor misses rows still uncommitted."""
    transaction.on_commit(lambda: dispatch(name, *args, **kwargs))


def start_scheduler() -> None:
    """In-process mode: run CELERY_BEAT_SCHEDULE on a daemon thread (what `celery beat`
    does in Redis mode). Started by the ASGI app, never by management commands."""
    global _scheduler_started
    if not in_process() or not settings.MEMORYHUB_RUN_SCHEDULER or _scheduler_started:
        return
    _scheduler_started = True
    thread("memoryhub-scheduler", _scheduler_loop)


def _scheduler_loop() -> None:
    next_run: dict[str, float] = {}
    while True:
        now = time.monotonic()
        for name, entry in settings.CELERY_BEAT_SCHEDULE.items():
            interval = float(entry["schedule"])
            # First run one interval after start: a restart loop must not hammer the jobs.
            due = next_run.setdefault(name, now + interval)
            if now >= due:
                next_run[name] = now + interval
                try:
                    dispatch(entry["task"])
                except Exception:  # the scheduler must outlive one bad job
                    logger.exception("periodic task %s failed to start", name)
        time.sleep(1.0)
