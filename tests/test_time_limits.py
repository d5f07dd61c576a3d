"""Every statement of an API request runs under a time limit (memoryhub/serving/time_limits.py):
past it PostgreSQL cancels the statement and the agent gets 503 QUERY_TIMEOUT in the envelope,
never a 500; the limit belongs to the request, so the connection's next user from the pool,
a job or the console, runs without it."""

from __future__ import annotations

import threading
from typing import Any

from django.db import connection, connections

from memoryhub.graph.selectors import MAX_CHAIN
from memoryhub.serving import time_limits
from tests.conftest import Actors, api_client, assert_error
from tests.graph_helpers import fact, rules


def every_pooled_connection() -> dict[int, str]:
    """Each connection waiting in the pool, taken at once by as many threads (as jobs and
    console pages would take them): its statement_timeout as they find it."""
    size = connection.pool.get_stats()["pool_available"]
    barrier = threading.Barrier(size)
    found: dict[int, str] = {}

    def take() -> None:
        try:
            with connections["default"].cursor() as cursor:
                cursor.execute("SHOW statement_timeout")
                found[id(connections["default"].connection)] = cursor.fetchone()[0]
                barrier.wait(timeout=10)
        finally:
            connections["default"].close()

    threads = [threading.Thread(target=take) for _ in range(size)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return found


def test_it_stops_a_statement_past_the_limit_with_a_clear_error(actors: Actors, transactional_db: None, settings: Any) -> None:
    rules(actors.owner_key, {"predicate": "links", "kind": "multi"}, {"predicate": "links", "kind": "transitive"})
    for n in range(12):
        fact(actors.bot_key, f"Node {n}", "links", f"Node {n + 1}")
    # Planned anew each time (not prepared), a three-level walk with chains takes well over 1 ms.
    settings.MEMORYHUB_PREPARED_STATEMENTS = False
    settings.MEMORYHUB_STATEMENT_TIMEOUT_MS = 1
    connection.close()  # the next request takes its connection from the pool
    error = assert_error(api_client(actors.bot_key).get("/api/v1/graph/neighbors", {"entity": "node 0", "depth": 3}), 503, "QUERY_TIMEOUT")
    assert error["details"] == {"timeout_ms": 1} and "took longer than the hub allows one request" in error["message"]
    settings.MEMORYHUB_STATEMENT_TIMEOUT_MS = 30_000
    answer = api_client(actors.bot_key).get("/api/v1/graph/neighbors", {"entity": "node 0", "depth": 3})
    # Three levels, then the chain's further nodes (node 0 links node 2 … node MAX_CHAIN).
    assert answer.status_code == 200 and len(answer.json()["results"]) == 3 + MAX_CHAIN - 1


def test_the_limit_stays_with_the_agents_requests(actors: Actors, transactional_db: None, settings: Any) -> None:
    settings.MEMORYHUB_STATEMENT_TIMEOUT_MS = 4321
    seen: list[int] = []
    with time_limits.statement_limit():  # as an API request or an MCP tool holds it
        with connection.cursor() as cursor:
            cursor.execute("SHOW statement_timeout")
            assert cursor.fetchone()[0] == "4321ms"
        seen.append(id(connection.connection))
    connection.close()  # back to the pool, limited
    assert api_client(actors.bot_key).get("/api/v1/memories", {"user_id": "u1"}).status_code == 200
    pooled = every_pooled_connection()
    assert seen[0] in pooled and set(pooled.values()) == {"0"}  # whoever takes it next runs unlimited
    settings.MEMORYHUB_STATEMENT_TIMEOUT_MS = 0  # turned off: the API's requests run unlimited too
    with time_limits.statement_limit(), connection.cursor() as cursor:
        cursor.execute("SHOW statement_timeout")
        assert cursor.fetchone()[0] == "0"
