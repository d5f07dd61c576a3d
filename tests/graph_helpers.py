"""Shared steps of the graph's tests: facts written and read over the API."""

from __future__ import annotations

from typing import Any

from tests.conftest import api_client


def fact(key: str, subject: str, predicate: str, obj: Any, *, user_id: str = "u1", **fields: Any) -> dict:
    response = api_client(key).post(
        "/api/v1/graph/edges", {"subject": subject, "predicate": predicate, "object": obj, "user_id": user_id, **fields}, format="json",
    )
    assert response.status_code in (200, 201), response.content[:500]
    return response.json()


def rules(key: str, *given: dict[str, str]) -> None:
    response = api_client(key).put("/api/v1/graph/rules", {"rules": list(given)}, format="json")
    assert response.status_code == 200, response.content[:500]


def neighbors(key: str, entity: str, **params: Any) -> list[dict]:
    response = api_client(key).get("/api/v1/graph/neighbors", {"entity": entity, **params})
    assert response.status_code == 200, response.content[:500]
    return response.json()["results"]


def triples(edges: list[dict]) -> set[tuple[Any, ...]]:
    """(subject, predicate, object, depth, inferred) of each edge."""
    return {(e["subject"], e["predicate"], e["object"], e["depth"], e["inferred"]) for e in edges}
