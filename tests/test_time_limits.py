"""Every statement of an API request runs under a time limit (memoryhub/serving/time_limits.py):
past it PostgreSQL cancels the statement and the agent gets 503 QUERY_TIMEOUT in the envelope,
never a 500; the limit ends with the request, so the connection's next user, a job or the
console, runs without it."""

from __future__ import annotations

from typing import Any

from django.db import connection

from memoryhub.graph.selectors import MAX_CHAIN
from tests.conftest import Actors, api_client, assert_error
from tests.graph_helpers import fact, rules


def setting_of_a_pooled_connection() -> str:
    connection.close()  # back to the pool, and a connection from it
    with connection.cursor() as cursor:
        cursor.execute("SHOW statement_timeout")
        return cursor.fetchone()[0]


def test_it_stops_a_statement_past_the_limit_with_a_clear_error(actors: Actors, transactional_db: None, settings: Any) -> None:
    rules(actors.owner_key, {"predicate": "links", "kind": "multi"}, {"predicate": "links", "kind": "transitive"})
    for n in range(12):
        fact(actors.bot_key, f"Node {n}", "links", f"Node {n + 1}")
    # Planned anew each time (not prepared), a three-level walk with chains takes well over 1 ms.
    settings.MEMORYHUB_PREPARED_STATEMENTS = False
    settings.MEMORYHUB_STATEMENT_TIMEOUT_MS = 1
    error = assert_error(api_client(actors.bot_key).get("/api/v1/graph/neighbors", {"entity": "node 0", "depth": 3}), 503, "QUERY_TIMEOUT")
    assert error["details"] == {"timeout_ms": 1} and "took longer than the hub allows one request" in error["message"]
    assert setting_of_a_pooled_connection() == "0"  # the request's limit went with it
    settings.MEMORYHUB_STATEMENT_TIMEOUT_MS = 30_000
    answer = api_client(actors.bot_key).get("/api/v1/graph/neighbors", {"entity": "node 0", "depth": 3})
    # Three levels, then the chain's further nodes (node 0 links node 2 … node MAX_CHAIN).
    assert answer.status_code == 200 and len(answer.json()["results"]) == 3 + MAX_CHAIN - 1
    assert setting_of_a_pooled_connection() == "0"


def test_it_sets_no_limit_when_turned_off_or_outside_the_api(actors: Actors, transactional_db: None, settings: Any) -> None:
    settings.MEMORYHUB_STATEMENT_TIMEOUT_MS = 0
    assert api_client(actors.bot_key).get("/api/v1/memories", {"user_id": "u1"}).status_code == 200
    with connection.cursor() as cursor:  # the request's connection, had it been limited
        cursor.execute("SHOW statement_timeout")
        assert cursor.fetchone()[0] == "0"
