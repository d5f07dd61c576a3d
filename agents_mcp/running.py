"""Running a tool: text the database cannot store refused, the REST API's rate limits,
the operation in a worker thread as the calling agent, its answer as plain JSON and the
hub's errors in the REST API's envelope."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db import DatabaseError
from mcp_types import CallToolResult, TextContent

from memoryhub.conversations.sessions import session_get
from memoryhub.core.errors import ApplicationError
from memoryhub.core.rate_limits import rate_limit_take
from memoryhub.operations import Made, Naming
from memoryhub.representations import iso_datetime
from memoryhub.serving.http_errors import envelope
from memoryhub.serving import time_limits
from memoryhub.serving.relay import in_worker
from memoryhub.usage import metering

from agents_mcp.arguments import Json, stored_text_problem
from agents_mcp.auth import caller

# `in_session` left out: the operation takes no session.
NO_SESSION: Any = object()


def _jsonable(value: Any) -> Any:
    """Tool results as plain JSON (dates as ISO 8601, like the REST API)."""
    return json.loads(json.dumps(value, default=_json_default))


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return iso_datetime(value)
    if isinstance(value, Decimal):
        return float(value)
    return str(value)


def tool_error(code: str, message: str, details: dict[str, Any] | None = None) -> CallToolResult:
    body = envelope(code, message, details)
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(body))], structured_content=body, is_error=True)


async def run(
    operation: Callable[..., Any], /, *, rate: str = "writes", made_as: str = "created", in_session: str | None = NO_SESSION,
    **arguments: Any,
) -> Json:
    """`operation(principal=…, **arguments)` (memoryhub.operations) in a worker thread (the
    connection goes back to the pool after), as the calling agent; with `in_session`, the
    agent's session of that id is its `session` (None for None), as a REST URL names it.
    `rate` is the REST API's kind of request (MEMORYHUB_RATES), whose budget a key shares
    with it. A write that may find what exists (`Made`) says which in `made_as`, where REST
    says it by its status.

    The hub's errors come back as tool errors in the REST API's envelope, {"error": {"code",
    "message", "details"}}; anything else is a crash, which the SDK logs and reports without
    its text. Typed `dict`, though it may return the SDK's CallToolResult: the SDK passes one
    through as it is (and an error result skips the output schema)."""
    if problem := stored_text_problem({**arguments, **({} if in_session is NO_SESSION else {"session_id": in_session})}):
        return tool_error("INVALID_TEXT", problem)  # type: ignore[return-value]
    principal = caller()
    if (wait := await in_worker(rate_limit_take, scope=rate, credential=principal.credential)) is not None:
        return tool_error("RATE_LIMITED", f"Too many {rate.replace('_', ' ')} for this key; retry in {wait:.0f} s.",  # type: ignore[return-value]
                          {"retry_after": max(1, round(wait))})

    def answer() -> Any:
        # The model calls this tool makes are the agent's, metered and held to the workspace's
        # budget as its REST requests' are (agents_api/base.py); its statements are under their
        # time limit (memoryhub/serving/time_limits.py).
        with time_limits.statement_limit(), metering.attributed(workspace_id=principal.workspace.pk, agent_id=principal.agent.pk):
            if in_session is not NO_SESSION:
                arguments["session"] = session_get(principal=principal, session_id=in_session) if in_session else None
            result = operation(principal=principal, **arguments)
        if isinstance(result, Made):
            return {**result.body, made_as: result.new}
        return result.body if isinstance(result, Naming) else result

    try:
        return _jsonable(await in_worker(answer))
    except ApplicationError as exc:
        return tool_error(exc.code, exc.message, exc.details)  # type: ignore[return-value]
    except DatabaseError as exc:
        if not time_limits.timed_out(exc):
            raise
        return tool_error(time_limits.CODE, time_limits.timeout_message(), time_limits.timeout_details())  # type: ignore[return-value]
