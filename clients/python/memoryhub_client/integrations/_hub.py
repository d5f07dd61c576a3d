"""What every adapter needs of a hub, whether the agent handed it a `MemoryHub` or an
`AsyncMemoryHub`: one awaitable call, a way for a framework's sync interface to run the
same code, and the session its conversation lives in.

Each adapter is written once, as coroutines whose hub requests go through `call`. An async
framework awaits them; a sync interface runs them with `run_here`, in the caller's thread."""

from __future__ import annotations

import asyncio
import functools
import inspect
from contextvars import ContextVar
from typing import Any, Callable, Coroutine, TypeVar, Union

from memoryhub_client.aio import AsyncMemoryHub
from memoryhub_client.client import MemoryHub
from memoryhub_client.errors import NotFound

AnyHub = Union[MemoryHub, AsyncMemoryHub]
T = TypeVar("T")

# Set while `run_here` drives a coroutine: a sync client's request is then made right there.
_HERE: ContextVar[bool] = ContextVar("memoryhub_run_here", default=False)


async def call(method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`method(*args, **kwargs)` of either client, awaited. A sync client's call runs on a
    thread, so an async framework's event loop never waits on the network; under `run_here`
    it runs in the caller's thread, which is already off any loop."""
    if inspect.iscoroutinefunction(method):
        return await method(*args, **kwargs)
    if _HERE.get():
        return method(*args, **kwargs)
    return await asyncio.to_thread(functools.partial(method, *args, **kwargs))


def run_here(coroutine: Coroutine[Any, Any, T]) -> T:
    """An adapter's coroutine run to its end in the calling thread, without an event loop, for
    a framework's sync interface over a sync `MemoryHub`: unlike `asyncio.run`, it also works
    where a loop is running already (a notebook calling the sync interface), and costs no
    thread. An `AsyncMemoryHub`'s request would need a loop: that is refused."""
    token = _HERE.set(True)
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    finally:
        _HERE.reset(token)
    coroutine.close()
    raise TypeError("a sync interface needs a MemoryHub; with an AsyncMemoryHub, use the async one")


def is_missing_session(error: Exception) -> bool:
    return isinstance(error, NotFound) and error.code == "SESSION_NOT_FOUND"
