"""The writer of `bench search-http --burst`, in a process of its own.

Run as a thread of the benchmark it shared the interpreter lock with the timed search
client: JSON-encoding a batch of 500 vectors held the lock for tens of milliseconds, and
searches were timed as slow while their answers waited to be read. Another client of
the hub (another process, another machine) does not slow ours that way. No Django here:
the process is spawned and imports only this module."""

from __future__ import annotations

import time
from multiprocessing.connection import Connection

import httpx


def write_batches(hub_url: str, key: str, batches: list[bytes], report: Connection) -> None:
    """POST each pre-encoded batch to /api/v1/memories/batch, one after the other; send
    back (seconds, error or None)."""
    started = time.perf_counter()
    error = None
    try:
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        with httpx.Client(base_url=hub_url, headers=headers, timeout=120) as writer:
            for batch in batches:
                writer.post("/api/v1/memories/batch", content=batch).raise_for_status()
    except httpx.HTTPError as failure:
        error = repr(failure)
    report.send((time.perf_counter() - started, error))
    report.close()
