"""The hub's one prepared-statement policy (memoryhub/core/sql.py): the hot paths prepare
their statements on the connection, and MEMORYHUB_PREPARED_STATEMENTS=0 leaves none
prepared, as a transaction-mode pooler (PgBouncer before 1.21) needs."""

from __future__ import annotations


from django.db import connection
from django.test import override_settings

from tests.conftest import Actors, api_client, remember
from tests.graph_helpers import fact, neighbors, rules


def _prepared() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [statement for (statement,) in cursor.fetchall()]


def _walk_the_hot_paths(actors: Actors) -> None:
    """A key lookup, a create with its duplicates lookup, a search, a checkpoint saved and
    loaded, a graph walk: every statement that asks to be prepared."""
    agent = api_client(actors.bot_key)
    remember(actors.bot_key, "Ana prefers aisle seats.", user_id="u1")
    assert agent.post("/api/v1/memories/search", {"query": "Where does Ana sit?", "user_id": "u1"}, format="json").status_code == 200
    agent.post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1"}, format="json")
    assert agent.post("/api/v1/sessions/s1/checkpoints", {"expected_version": 0, "state": {"n": 1}}, format="json").status_code == 201
    assert agent.get("/api/v1/sessions/s1/checkpoints/latest").status_code == 200
    rules(actors.owner_key, {"predicate": "part of", "kind": "transitive"})
    fact(actors.bot_key, "Alfama", "part of", "Lisbon")
    assert neighbors(actors.bot_key, "Alfama")


def _deallocated() -> None:
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")


def test_the_hot_paths_prepare_their_statements(actors: Actors) -> None:
    _deallocated()
    _walk_the_hot_paths(actors)
    # The API client runs the hub in this thread, on this connection: what it prepared is here.
    statements = _prepared()
    assert len(statements) >= 5, statements
    assert any("graph_entity" in statement for statement in statements)


def test_with_prepared_statements_off_nothing_is_prepared(actors: Actors) -> None:
    _deallocated()
    with override_settings(MEMORYHUB_PREPARED_STATEMENTS=False):
        _walk_the_hot_paths(actors)
    assert _prepared() == []
