from __future__ import annotations

from typing import Any

from memoryhub.graph.selectors import Edge


def edge_json(edge: Edge, *, score: bool = False, depth: bool = True) -> dict[str, Any]:
    """An edge of the graph: a stored fact (`entry_id`) or one the rules infer (`via`)."""
    shown: dict[str, Any] = {
        "subject": edge.subject,
        "predicate": edge.predicate,
        "object": edge.object,
        "confidence": edge.confidence,
        "entry_id": str(edge.entry_id) if edge.entry_id else None,
        # The end user the fact is about; an inferred edge's, when its facts are all one user's.
        "user_id": edge.users[0] if len(edge.users) == 1 else None,
        "inferred": edge.inferred,
        "via": [str(v) for v in edge.via],
    }
    if depth:
        shown["depth"] = edge.depth
    if score:
        shown["score"] = edge.score
    return shown
