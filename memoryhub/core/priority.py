"""Bulk work at a lower CPU priority than the requests people and agents wait on.

On a small machine a burst of batch writes and the searches asked meanwhile share the
same cores: the writes' parsing and validation took the time the searches needed, and
a search's p95 went from 24 to 61 ms while 20,000 entries came in (docs/memory.md,
"Read-after-write, and writes at speed"). Linux gives each thread its own nice value, so the thread doing a bulk write
can yield to the others for just that long: the writes go no slower on idle cores and
give way when the cores are full."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

logger = logging.getLogger(__name__)


def thread_niceness(native_id: int | None = None) -> int | None:
    """The nice value of a thread (this one by default), None where the OS has none."""
    if not hasattr(os, "getpriority"):
        return None
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id() if native_id is None else native_id)


@contextmanager
def lowered_priority(niceness: int) -> Iterator[None]:
    """Run the block on this thread at `niceness` (0 or less: unchanged), then put the
    thread back. Raising a thread's priority again needs root, CAP_SYS_NICE or a nice
    limit (`ulimit -e`); without them the thread stays lowered, and the hub's request
    handler (memoryhub/serving/sync_handler.py) does not give it another request."""
    before = thread_niceness()
    if before is None or niceness <= before:
        yield
        return
    thread = threading.get_native_id()
    os.setpriority(os.PRIO_PROCESS, thread, niceness)
    try:
        yield
    finally:
        try:
            os.setpriority(os.PRIO_PROCESS, thread, before)
        except PermissionError:
            _tell_once(niceness)


_told = threading.Event()


def _tell_once(niceness: int) -> None:
    # Once per process: it is the same on every batch write, and not a fault.
    if not _told.is_set():
        _told.set()
        logger.info(
            "bulk work's threads are left at niceness %s and retired: this process may not raise a thread's priority "
            "back (root, CAP_SYS_NICE or `ulimit -e` would let it)", niceness,
        )
