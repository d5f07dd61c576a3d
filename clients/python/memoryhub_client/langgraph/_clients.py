"""The hub clients the LangGraph adapters hold: made on first use, so an adapter built
at import time opens nothing, and the async one per event loop (httpx's pool belongs to
the loop that opened it)."""

from __future__ import annotations

import asyncio
from typing import Any, Optional, TypeVar

from memoryhub_client._transport import RetryPolicy
from memoryhub_client.aio import AsyncMemoryHub
from memoryhub_client.client import MemoryHub

Self = TypeVar("Self", bound="HubClients")


class HubClients:
    """Mixin: `hub` (sync), `_async_hub()` (async, for the running loop), closing both
    with the adapter (`with`, `async with`, `close`, `aclose`)."""

    _options: dict[str, Any]
    _hub: Optional[MemoryHub] = None
    _ahub: Optional[AsyncMemoryHub] = None
    _ahub_loop: Optional[asyncio.AbstractEventLoop] = None

    def _hub_options(self, *, base_url: str, api_key: str, timeout: float, retry: Optional[RetryPolicy]) -> None:
        self._options = {"base_url": base_url, "api_key": api_key, "timeout": timeout, "retry": retry}

    @property
    def hub(self) -> MemoryHub:
        if self._hub is None:
            self._hub = MemoryHub(**self._options)
        return self._hub

    def _async_hub(self) -> AsyncMemoryHub:
        loop = asyncio.get_running_loop()
        if self._ahub is None or self._ahub_loop is not loop:
            self._ahub = AsyncMemoryHub(**self._options)
            self._ahub_loop = loop
        return self._ahub

    def close(self) -> None:
        if self._hub is not None:
            self._hub.close()
            self._hub = None

    async def aclose(self) -> None:
        if self._ahub is not None:
            await self._ahub.aclose()
            self._ahub = None
        self.close()

    def __enter__(self: Self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self: Self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
