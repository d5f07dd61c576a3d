"""What /healthz checks: database, vector extension, channel layer, task queue."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import connection

from memoryhub.core import tasking

CHECK_TIMEOUT_SECONDS = 3.0


def check_database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT version()")
        return cursor.fetchone()[0].split(" on ")[0]


def check_vector() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = cursor.fetchone()
    if row is None:
        raise RuntimeError("the pgvector extension is not installed in this database")
    return f"pgvector {row[0]}"


def check_channel_layer() -> str:
    layer = get_channel_layer()
    if layer is None:
        raise RuntimeError("no channel layer configured")

    async def roundtrip() -> None:
        import asyncio

        channel = await layer.new_channel("healthz.")
        token = uuid.uuid4().hex
        await layer.send(channel, {"type": "healthz", "token": token})
        message = await asyncio.wait_for(layer.receive(channel), timeout=CHECK_TIMEOUT_SECONDS)
        if message.get("token") != token:
            raise RuntimeError("the channel layer returned another message")

    async_to_sync(roundtrip)()
    return type(layer).__name__


def check_task_queue() -> str:
    if tasking.in_process():
        future = tasking.executor().submit(lambda: "ok")
        future.result(timeout=CHECK_TIMEOUT_SECONDS)
        return "in-process threads"
    from memoryhub.celery import app

    with app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, interval_start=0.1, interval_step=0, timeout=CHECK_TIMEOUT_SECONDS)
    return "redis broker"


CHECKS: dict[str, Callable[[], str]] = {
    "database": check_database,
    "vector": check_vector,
    "channel_layer": check_channel_layer,
    "task_queue": check_task_queue,
}


def run_checks() -> tuple[bool, dict[str, dict[str, object]]]:
    results: dict[str, dict[str, object]] = {}
    healthy = True
    for name, check in CHECKS.items():
        started = time.monotonic()
        try:
            detail = check()
            results[name] = {"ok": True, "detail": detail}
        except Exception as exc:  # a health check reports failures, it does not raise them
            healthy = False
            results[name] = {"ok": False, "detail": f"{type(exc).__name__}: {exc}"}
        results[name]["ms"] = round((time.monotonic() - started) * 1000, 1)
    return healthy, results
