"""Graph memory: add a fact, neighbours, paths, grounding."""

from __future__ import annotations

import base64
import binascii
from datetime import datetime
from typing import Any

from memoryhub.core.errors import ApplicationError
from memoryhub.core.selectors import Principal
from memoryhub.graph import selectors, services
from memoryhub.memory.services import Source
from memoryhub.operations import Made, Naming, acting_agent
from memoryhub.representations.graph import edge_json
from memoryhub.representations.memory import written_json



def graph_edge_add_answer(
    *, principal: Principal, subject: str, predicate: str, object: Any, user_id: str, confidence: float, scope: str,
    store: str | None = None, source: Source | None = None,
) -> Made:
    written = services.graph_edge_add(
        agent=acting_agent(principal), subject=subject, predicate=predicate, object=object, user_id=user_id, confidence=confidence,
        scope=scope, store=store, source=source,
    )
    return Made(written_json(written), new=written.created)


def _offset(cursor: str | None) -> int:
    if not cursor:
        return 0
    try:
        offset = int(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode())
    except (binascii.Error, UnicodeDecodeError, ValueError):
        offset = -1
    # A cursor given out points inside the walk (selectors.MAX_WALK edges at most).
    if not 0 < offset < selectors.MAX_WALK:
        raise ApplicationError("The cursor is not one this API gave out.", code="INVALID_CURSOR")
    return offset


def _cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(str(offset).encode()).decode().rstrip("=")


def graph_neighbors_answer(
    *, principal: Principal, entity: str, depth: int, predicates: list[str], user_id: str | None, limit: int,
    as_of: datetime | None = None, cursor: str | None = None,
) -> dict[str, Any]:
    """A page of the edges around `entity`, nearest first; `next` while there are more.
    The pages are slices of one bounded walk (selectors.MAX_WALK edges): `truncated` says
    that the walk left edges out (past its end, or a dense entity sampled)."""
    limit = max(1, min(limit, selectors.MAX_LIMIT))  # clamped, as every list's limit is
    offset = _offset(cursor)
    end = min(offset + limit, selectors.MAX_WALK)
    walk = selectors.graph_neighbors(
        principal=principal, entity=entity, depth=depth, predicates=predicates, user_id=user_id, as_of=as_of, limit=end + 1,
    )
    more = len(walk.edges) > end
    past_the_walk = more and end == selectors.MAX_WALK
    return {
        "results": [edge_json(edge) for edge in walk.edges[offset:end]],
        "next": _cursor(end) if more and not past_the_walk else None,
        "truncated": walk.truncated or past_the_walk,
    }


def graph_path_answer(
    *, principal: Principal, source: str, target: str, max_depth: int, user_id: str | None, as_of: datetime | None = None,
) -> dict[str, Any]:
    path = selectors.graph_path(principal=principal, source=source, target=target, max_depth=max_depth, user_id=user_id, as_of=as_of)
    return {"path": [edge_json(edge) for edge in path]}


def graph_grounding_answer(*, principal: Principal, text: str, user_id: str | None, limit: int, as_of: datetime | None = None) -> Naming:
    grounding = selectors.graph_grounding(principal=principal, text=text, user_id=user_id, limit=limit, as_of=as_of)
    return Naming(
        {"facts": [edge_json(edge, score=True) for edge in grounding.facts], "message": grounding.message, "truncated": grounding.truncated},
        user_ids=sorted({user for fact in grounding.facts for user in fact.users}),
    )
