"""The operations agents call, each answered once: the REST API and the MCP tools parse
their input their own way (serializers, pydantic from type hints), then make one call
here and render what it returns. So an operation both front ends offer cannot drift
between them: the same rules (who may, which session, `follow_graph` needs a query), the
same reads and the same JSON (memoryhub.representations).

A function here takes the caller (`principal`) and validated arguments, keyword-only, and
returns the whole answer. Session operations take the session already resolved as the
caller's (REST from the URL, MCP from a `session_id` argument), so that a session the
caller may not see is a 404 before anything else is looked at, in both.

A layer of its own above the domain and its representations and below the front ends
(.importlinter)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memoryhub.core.errors import Forbidden
from memoryhub.core.models import Agent
from memoryhub.core.selectors import Principal


@dataclass(frozen=True)
class Made:
    """The answer to a write that may find what is there already (an existing key, a
    duplicate skipped, a session started again, a remembered decision): REST tells which
    by its status (201 or 200), MCP by a field of its result."""

    body: dict[str, Any]
    new: bool


@dataclass(frozen=True)
class Naming:
    """An answer that names facts of end users other than one the request named: a kept
    answer (REST's Idempotency-Key) is theirs too, so that a purge of any of them takes it."""

    body: dict[str, Any]
    user_ids: list[str]


def acting_agent(principal: Principal) -> Agent:
    """The agent a write is made as. The front ends refuse operator keys before parsing
    (REST's AgentAPIView; MCP takes agent keys only); this is the fail-closed default."""
    if not principal.is_agent or principal.agent is None:
        raise Forbidden("This is written by agents; use an agent key.", code="AGENT_KEY_REQUIRED")
    return principal.agent
