"""The database connection while a request waits on another service.

Every request takes a connection from the pool (MEMORYHUB_DB_POOL_MAX, 10 by default)
with its first query and holds it to its end. A request that then waits on an
embeddings endpoint, a reranker or an LLM for a second holds it for that second doing
nothing: a few such requests at once and every other request waits for a connection,
then answers 503. Giving it back before the wait costs the next query a checkout from
the pool (tens of microseconds), not a new connection.
"""

from __future__ import annotations

from django.db import connection


def connection_release() -> None:
    """Give this thread's connection back to the pool before a wait on the network;
    the next query takes one again. Inside a transaction it stays: closing would end it."""
    if not connection.in_atomic_block:
        connection.close()
