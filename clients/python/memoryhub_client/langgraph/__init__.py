"""LangGraph adapters backed by a MemoryHub: a checkpointer and a store.

`from memoryhub_client.langgraph import MemoryHubSaver, MemoryHubStore`; both are
constructed with `base_url=` and `api_key=`. They need the `langgraph` extra
(`pip install "memoryhub-client[langgraph]"`); the names are resolved on first use so
that importing the plain client never requires LangGraph.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memoryhub_client.langgraph.saver import MemoryHubSaver
    from memoryhub_client.langgraph.store import MemoryHubStore

__all__ = ["MemoryHubSaver", "MemoryHubStore"]

_MODULES = {"MemoryHubSaver": "saver", "MemoryHubStore": "store"}


def __getattr__(name: str) -> Any:
    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_MODULES[name]}"), name)
