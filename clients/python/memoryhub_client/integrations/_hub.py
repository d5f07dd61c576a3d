"""What every adapter needs of a hub, whether the agent handed it a `MemoryHub` or an
`AsyncMemoryHub`: one awaitable call, and the session its conversation lives in."""

from __future__ import annotations

import asyncio
import functools
import inspect
from typing import Any, Awaitable, Callable, Coroutine, TypeVar, Union

from memoryhub_client.aio import AsyncMemoryHub
from memoryhub_client.client import MemoryHub
from memoryhub_client.errors import NotFound

AnyHub = Union[MemoryHub, AsyncMemoryHub]
T = TypeVar("T")


async def call(method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`method(*args, **kwargs)` of either client, awaited: a sync client's call runs on a
    thread, so an async framework's event loop never waits on the network."""
    if inspect.iscoroutinefunction(method):
        return await method(*args, **kwargs)
    return await asyncio.to_thread(functools.partial(method, *args, **kwargs))


def run_sync(awaitable: Awaitable[T]) -> T:
    """A coroutine run to its end from synchronous code (frameworks with sync interfaces)."""
    return asyncio.run(awaitable)  # type: ignore[arg-type]


async def call_here(method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`method(*args, **kwargs)` of a sync client, made in the calling thread: code that does
    its I/O through this never suspends, so `run_here` can finish it."""
    return method(*args, **kwargs)


def run_here(coroutine: Coroutine[Any, Any, T]) -> T:
    """A coroutine that never suspends (its I/O through `call_here`) run to its end in the
    calling thread, without an event loop: unlike `run_sync`, it also works where a loop is
    running already (a notebook calling a framework's sync interface), and costs no thread."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise RuntimeError("the coroutine suspended: run_here runs only code whose I/O goes through call_here")


def is_missing_session(error: Exception) -> bool:
    return isinstance(error, NotFound) and error.code == "SESSION_NOT_FOUND"
