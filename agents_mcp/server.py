"""The MCP endpoint: `/mcp`, streamable HTTP, the official `mcp` SDK (2.x `MCPServer`).

A front end beside the REST API (the top layer in `.importlinter`): each tool parses its
arguments (pydantic, from the type hints), calls the same services and selectors the
REST views call, as the agent whose key authenticated, and renders. It never imports
`agents_api`: the few outputs both need are built here again, from the same models.

How it sits in the ASGI stack (memoryhub/asgi.py): `McpMount` routes `/mcp` and
`/mcp/...` to the SDK's Starlette app with the path rewritten to `/` (the app's own
route), everything else goes on to Django's layers. The SDK's session manager must be
running before it answers anything; `make run` serves with `--lifespan off`, so it is
started on the first request (once, under a lock), and by asgi.py's lifespan handler at
start-up when the server announces one (then also stopped at shutdown). Stateless mode
with JSON answers: every request stands alone, so any worker process can answer any
request.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, Literal

from django.conf import settings
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import CallToolResult, TextContent
from django.core.exceptions import ValidationError as DjangoValidationError
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PrivateAttr

from memoryhub.approvals.selectors import approval_get
from memoryhub.approvals.services import ApprovalInput, approval_request
from memoryhub.checkpoints.selectors import checkpoint_load, checkpoint_state
from memoryhub.checkpoints.services import checkpoint_parts, checkpoint_save
from memoryhub.conversations.messages import messages_in_order
from memoryhub.conversations.models import Session
from memoryhub.conversations.sessions import session_create, session_get
from memoryhub.core.errors import ApplicationError, NotFound
from memoryhub.core.limits import json_size_problem
from memoryhub.core.models import validate_user_id
from memoryhub.core.rate_limits import rate_limit_take
from memoryhub.core.selectors import Principal, principal_for_key
from memoryhub.episodes.selectors import episodes_similar, guidance
from memoryhub.episodes.services import EpisodeInput, episode_record
from memoryhub.graph import search as graph_search
from memoryhub.graph import selectors as graph_selectors
from memoryhub.graph import services as graph_services
from memoryhub.memory import search
from memoryhub.memory import selectors as memory_selectors
from memoryhub.memory import services as memory_services
from memoryhub.memory.models import MemoryType
from memoryhub.plans.selectors import current_plan, plan_render, plan_snapshot
from memoryhub.plans.services import StepInput, plan_replace, step_transition
from memoryhub.core.text import text_problem
from memoryhub.representations import iso_datetime
from memoryhub.representations.approvals import approval_json
from memoryhub.representations.checkpoints import checkpoint_json
from memoryhub.representations.conversations import message_json
from memoryhub.representations.episodes import episode_json
from memoryhub.representations.graph import edge_json
from memoryhub.representations.memory import memory_json, revision_json, written_json
from memoryhub.representations.tools import tool_call_json
from memoryhub.serving.http_errors import envelope
from memoryhub.serving.relay import ASGIApp, Receive, Scope, Send, in_worker
from memoryhub.tools.selectors import tool_calls_by_step, tool_result_get, tool_summaries_by_step
from memoryhub.tools.services import ToolCallInput, tool_call_record

# Stateless mode opens and closes a transport for every request, and the SDK says so at
# INFO each time: the access log has that line already.
if logging.getLogger().getEffectiveLevel() > logging.DEBUG:
    for _name in ("mcp.server.streamable_http", "mcp.server.streamable_http_manager"):
        logging.getLogger(_name).setLevel(logging.WARNING)

# --- Argument types: the REST serializers' limits, as JSON Schema the agent can read -------


def _user_id_checked(value: str) -> str:
    try:
        validate_user_id(value)
    except DjangoValidationError as error:
        raise ValueError(error.messages[0]) from None
    return value


def _json_size_checked(value: dict[str, Any]) -> dict[str, Any]:
    if problem := json_size_problem(value):
        raise ValueError(problem)
    return value


# A JSON object the agent attaches (metadata, data): at most MAX_JSON_BYTES, as over REST.
JsonObject = Annotated[dict[str, Any], AfterValidator(_json_size_checked)]

Identifier = Annotated[str, Field(pattern=r"^[A-Za-z0-9\-_.:@]+$", max_length=200, description="letters, digits and -_.:@")]
UserId = Annotated[str, Field(min_length=1, max_length=255, description="the end user this is about"), AfterValidator(_user_id_checked)]
Content = Annotated[str, Field(min_length=1, max_length=settings.MEMORYHUB_MAX_CONTENT_CHARS)]
Text = Annotated[str, Field(min_length=1, max_length=4000)]
Tags = Annotated[list[Annotated[str, Field(min_length=1, max_length=100)]], Field(max_length=64)]
Ttl = Annotated[int, Field(ge=1, le=10 * 365 * 86400, description="seconds until the memory is deleted")]
StoreName = Annotated[str, Field(min_length=1, max_length=64, description="one of the agent's stores; its only or `default` store if omitted")]
MemoryScope = Literal["agent", "shared", "global"]
AnyMemoryType = Literal["note", "factual", "episodic", "semantic", "procedural", "working"]
SearchMode = Literal["hybrid", "semantic", "keyword"]
ToolStatus = Literal["ok", "error"]
StepState = Literal["pending", "running", "done", "failed"]
DecisionName = Literal["approve", "edit", "reject", "suspend"]
Outcome = Literal["success", "failure", "handoff"]
CheckpointPart = Literal["state", "messages", "plan", "summary"]
Version = Annotated[int, Field(ge=0, le=2**31 - 2)]

# --- Who is calling ---------------------------------------------------------------------------


class AgentAccessToken(AccessToken):
    """The SDK's access token, carrying the hub's principal for the tools. Private, so
    that nothing the SDK serialises (session owners, request state) ever holds it."""

    _principal: Principal = PrivateAttr()


class AgentKeyVerifier:
    """The SDK's TokenVerifier over the hub's own key lookup (`principal_for_key`: unknown,
    revoked and expired keys are None). Agents only: an operator key is refused (401),
    as is anything that is not a key."""

    async def verify_token(self, token: str) -> AccessToken | None:
        principal = await in_worker(principal_for_key, plaintext=token.strip())
        if principal is None or not principal.is_agent:
            return None
        key = principal.key
        access = AgentAccessToken(
            token=token.strip(), client_id=f"{principal.workspace.slug}/{principal.agent.name}", scopes=["agent"],
            subject=key.prefix if key else None,
            expires_at=int(key.expires_at.timestamp()) if key is not None and key.expires_at is not None else None,
        )
        access._principal = principal
        return access


def caller() -> Principal:
    token = get_access_token()
    if not isinstance(token, AgentAccessToken):
        # RequireAuthMiddleware lets nothing else through; this is the fail-closed default.
        raise ApplicationError("An agent key is required.", code="AGENT_KEY_REQUIRED", status=401)
    return token._principal


# --- Running the domain -----------------------------------------------------------------------


def _text_problem(value: Any, path: str = "") -> str | None:
    """The first text among the arguments the database could not store: a tool error up
    front, as the REST API's 400, instead of a failed statement."""
    if isinstance(value, str):
        problem = text_problem(value)
        return f"{problem} (in {path or 'an argument'})" if problem else None
    if isinstance(value, dict):
        for key, item in value.items():
            if problem := _text_problem(key, path) or _text_problem(item, f"{path}.{key}" if path else str(key)):
                return problem
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            if problem := _text_problem(item, f"{path}[{index}]"):
                return problem
    return None


def _jsonable(value: Any) -> Any:
    """Tool results as plain JSON (dates as ISO 8601, like the REST API)."""
    return json.loads(json.dumps(value, default=_json_default))


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return iso_datetime(value)
    if isinstance(value, Decimal):
        return float(value)
    return str(value)


def _error(code: str, message: str, details: dict[str, Any] | None = None) -> CallToolResult:
    body = envelope(code, message, details)
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(body))], structured_content=body, is_error=True)


# The REST API's kind of request for each tool's work (MEMORYHUB_RATES); the rest are writes.
RATE_SCOPES = {
    "_search": "searches", "_similar_episodes": "searches", "_facts_by_subject": "reads", "_working_memories": "reads",
    "_stats": "reads", "_recall_tool_result": "reads", "_render_plan": "reads", "_load_checkpoint": "reads",
    "_get_approval": "reads", "_record_tool_call": "tool_calls", "_memory_revisions": "reads",
}


async def run(work: Callable[..., Any], /, **arguments: Any) -> dict[str, Any]:
    """`work(principal=…, **arguments)` in a worker thread (the connection goes back to
    the pool after), as the calling agent. The hub's errors come back as tool errors in
    the REST API's envelope, {"error": {"code", "message", "details"}}; anything else
    is a crash, which the SDK logs and reports without its text.

    Typed `dict`, though it may return the SDK's CallToolResult: the SDK passes one
    through as it is (and an error result skips the output schema)."""
    if problem := _text_problem(arguments):
        return _error("INVALID_TEXT", problem)  # type: ignore[return-value]
    principal = caller()
    # The REST API's budgets, shared with it: a key has one per kind of request.
    scope = RATE_SCOPES.get(work.__name__, "writes")
    if (wait := await in_worker(rate_limit_take, scope=scope, credential=principal.credential)) is not None:
        return _error("RATE_LIMITED", f"Too many {scope.replace('_', ' ')} for this key; retry in {wait:.0f} s.",  # type: ignore[return-value]
                      {"retry_after": max(1, round(wait))})
    try:
        return _jsonable(await in_worker(work, principal=principal, **arguments))
    except ApplicationError as exc:
        return _error(exc.code, exc.message, exc.details)  # type: ignore[return-value]


# --- The domain calls, one per tool (they run in the worker thread) ----------------------------


def _write_memory(*, principal: Principal, source: SourceArg | None = None, on_duplicate: str = "keep", **fields: Any) -> dict[str, Any]:
    named = memory_services.Source.named(**source.model_dump(exclude_none=True)) if source is not None else memory_services.Source()
    [written] = memory_services.memory_write(
        agent=principal.agent, items=[memory_services.MemoryInput(**fields, source=named)], on_duplicate=on_duplicate,
    )
    # Read back through the caller's visibility, as the REST API answers.
    entry = memory_selectors.entry_get(principal=principal, entry_id=str(written.entry.pk))
    return {**written_json(written, entry=entry), "created": written.created}


def _memory_revisions(*, principal: Principal, memory_id: str) -> dict[str, Any]:
    entry = memory_selectors.entry_get(principal=principal, entry_id=memory_id)
    return {"results": [revision_json(r) for r in memory_selectors.memory_revisions(entry=entry)]}


def _revert_memory(*, principal: Principal, memory_id: str, revision: int, reason: str) -> dict[str, Any]:
    entry = memory_selectors.entry_get(principal=principal, entry_id=memory_id)
    entry = memory_services.memory_revert(principal=principal, entry=entry, revision=revision, reason=reason)
    return memory_json(memory_selectors.entry_get(principal=principal, entry_id=str(entry.pk)))


def _flag_memory(*, principal: Principal, memory_id: str, reason: str) -> dict[str, Any]:
    entry = memory_selectors.entry_get(principal=principal, entry_id=memory_id)
    entry = memory_services.memory_review(principal=principal, entry=entry, action="flag", reason=reason)
    return memory_json(memory_selectors.entry_get(principal=principal, entry_id=str(entry.pk)))


def _search(*, principal: Principal, query: str | None, mode: str, max_results: int, min_relevance: float | None,
            repeats: str, follow_names: str, rerank: bool | None, follow_graph: bool = False, **filters: Any) -> dict[str, Any]:
    # The graph is followed above memory's search, which cannot read it (memoryhub/graph/search.py).
    run_search = graph_search.memory_search_following_graph if follow_graph and query else search.memory_search
    hits = run_search(
        principal=principal,
        request=search.SearchRequest(
            filters=memory_selectors.MemoryFilters(**filters), query=query or None, mode=mode, max_results=max_results,
            min_relevance=min_relevance, repeats=repeats, follow_names=follow_names, rerank=rerank,
        ),
    )
    return {"results": [
        {
            "entry": memory_json(hit.entry), "score": round(hit.score, search.SCORE_DECIMALS),
            "repeat_of": str(hit.repeat_of) if hit.repeat_of else None, "reranked": hit.reranked,
        }
        for hit in hits
    ]}


def _facts_by_subject(*, principal: Principal, subject: str, user_id: str | None, include_invalidated: bool, limit: int) -> dict[str, Any]:
    facts = memory_selectors.facts_about(principal=principal, subject=subject, user_id=user_id, include_invalidated=include_invalidated, limit=limit)
    return {"results": [memory_json(entry) for entry in facts]}


def _graph_add(*, principal: Principal, source: SourceArg | None = None, **fields: Any) -> dict[str, Any]:
    named = memory_services.Source.named(**source.model_dump(exclude_none=True)) if source is not None else None
    written = graph_services.graph_edge_add(agent=principal.agent, source=named, **fields)
    entry = memory_selectors.entry_get(principal=principal, entry_id=str(written.entry.pk))
    return {**written_json(written, entry=entry), "created": written.created}


def _graph_neighbors(*, principal: Principal, **query: Any) -> dict[str, Any]:
    return {"results": [edge_json(e) for e in graph_selectors.graph_neighbors(principal=principal, **query)]}


def _graph_path(*, principal: Principal, **query: Any) -> dict[str, Any]:
    return {"path": [edge_json(e) for e in graph_selectors.graph_path(principal=principal, **query)]}


def _graph_grounding(*, principal: Principal, **query: Any) -> dict[str, Any]:
    grounding = graph_selectors.graph_grounding(principal=principal, **query)
    return {"facts": [edge_json(e, score=True) for e in grounding.facts], "message": grounding.message}


def _working_memories(*, principal: Principal, user_id: str | None, limit: int) -> dict[str, Any]:
    # Expired entries are never read (the selectors filter them), so what is listed is active.
    entries, _ = memory_selectors.entry_list(
        principal=principal, filters=memory_selectors.MemoryFilters(memory_type=MemoryType.WORKING, user_id=user_id), cursor=None,
        limit=limit,
    )
    return {"results": [memory_json(entry) for entry in entries]}


def _stats(*, principal: Principal, user_id: str | None) -> dict[str, Any]:
    return memory_selectors.memory_stats(principal=principal, user_id=user_id)


def _session(principal: Principal, session_id: str) -> Session:
    return session_get(principal=principal, session_id=session_id)


def _start_session(*, principal: Principal, session_id: str, user_id: str, metadata: dict[str, Any]) -> dict[str, Any]:
    session, created = session_create(agent=principal.agent, session_id=session_id, user_id=user_id, metadata=metadata)
    return {"session_id": session.session_id, "user_id": session.user_id, "created": created,
            "latest_checkpoint_version": session.checkpoint_version}


def _record_tool_call(*, principal: Principal, session_id: str, **fields: Any) -> dict[str, Any]:
    call = tool_call_record(session=_session(principal, session_id), item=ToolCallInput(**fields), actor=principal.actor)
    return tool_call_json(call)


def _recall_tool_result(*, principal: Principal, call_id: str) -> dict[str, Any]:
    call, output = tool_result_get(principal=principal, call_id=call_id)
    return {"call_id": call.call_id, "tool": call.tool, "result": output, "result_bytes": call.result_bytes}


def _set_plan(*, principal: Principal, session_id: str, goal: str, steps: list[dict[str, Any]]) -> dict[str, Any]:
    session = _session(principal, session_id)
    plan_replace(session=session, goal=goal, steps=[StepInput(**step) for step in steps], actor=principal.actor)
    return plan_snapshot(session=session, tool_calls=tool_calls_by_step(session=session)) or {}


def _update_plan_step(*, principal: Principal, session_id: str, step_id: str, status: str, summary: str | None) -> dict[str, Any]:
    step = step_transition(session=_session(principal, session_id), step_id=step_id, status=status, summary=summary, actor=principal.actor)
    return {"step_id": step.step_id, "status": step.status, "summary": step.summary, "depends_on": step.depends_on, "parent": step.parent}


def _render_plan(*, principal: Principal, session_id: str, current: str | None) -> dict[str, Any]:
    session = _session(principal, session_id)
    text = plan_render(plan=current_plan(session=session), current=current, tool_calls=tool_summaries_by_step(session=session))
    return {"text": text}


def _save_checkpoint(*, principal: Principal, session_id: str, **fields: Any) -> dict[str, Any]:
    checkpoint = checkpoint_save(session=_session(principal, session_id), actor=principal.actor, **fields)
    return checkpoint_json(checkpoint)


def _load_checkpoint(*, principal: Principal, session_id: str, version: int | None, include: list[str] | None) -> dict[str, Any]:
    session = _session(principal, session_id)
    parts = checkpoint_parts(include=include, exclude=None, default=("state", "summary"))
    checkpoint = checkpoint_load(session=session, version=version)
    if checkpoint is None:
        raise NotFound("No such checkpoint.", code="CHECKPOINT_NOT_FOUND")
    body = checkpoint_json(checkpoint)
    if "state" in parts:
        body["state"] = checkpoint_state(checkpoint)
    if "summary" in parts:
        body["summary"] = checkpoint.summary
    if "plan" in parts:
        body["plan"] = checkpoint.plan
    if "messages" in parts:
        body["messages"] = [message_json(m) for m in messages_in_order(session=session, upto_seq=checkpoint.message_seq)]
    return body


def _request_approval(*, principal: Principal, session_id: str, **fields: Any) -> dict[str, Any]:
    approval, waits = approval_request(session=_session(principal, session_id), item=ApprovalInput(**fields))
    return {**approval_json(approval), "waits": waits}


def _get_approval(*, principal: Principal, approval_id: int) -> dict[str, Any]:
    return approval_json(approval_get(principal=principal, approval_id=approval_id))


def _record_episode(*, principal: Principal, session_id: str | None, **fields: Any) -> dict[str, Any]:
    session = _session(principal, session_id) if session_id else None
    if session is not None and session.user_id != fields["user_id"]:
        raise ApplicationError("The session is about another user_id.", code="SESSION_USER_MISMATCH")
    episode = episode_record(agent=principal.agent, item=EpisodeInput(session_id=session_id, **fields), session=session)
    return episode_json(episode)


def _similar_episodes(*, principal: Principal, **query: Any) -> dict[str, Any]:
    similar = episodes_similar(principal=principal, **query)
    return {
        "results": [{"episode": episode_json(s.episode), "score": round(s.score, 6)} for s in similar],
        "guidance": guidance(similar),
    }


# --- The tools ----------------------------------------------------------------------------------
# Named as agents already call them in the memory SDKs they come from; every argument is
# checked by pydantic (from these hints) before any of the hub runs.

server: MCPServer = MCPServer(
    "memoryhub",
    instructions=(
        "MemoryHub: long-term memory, tool-call log, plans, checkpoints and human approval for this agent. "
        "Session tools need a session: start_session first (same id again is the same session)."
    ),
    token_verifier=AgentKeyVerifier(),
    # The SDK wants an issuer with a verifier; it is advertised nowhere (no OAuth routes, no
    # resource metadata): agent keys are issued by the hub itself.
    auth=AuthSettings(issuer_url="http://localhost", resource_server_url=None),
    log_level="WARNING",
)

Json = dict[str, Any]


class SourceArg(BaseModel):
    """What a memory came from: {session_id, seq}, {session_id, call_id} or {episode_id}."""

    model_config = ConfigDict(extra="forbid")

    session_id: Identifier | None = None
    seq: Annotated[int, Field(ge=1, le=2**63 - 1)] | None = None
    call_id: Identifier | None = None
    episode_id: Annotated[int, Field(ge=1, le=2**63 - 1)] | None = None


MemoryId = Annotated[str, Field(min_length=1, max_length=64, description="a memory's id")]


class PlanStepArg(BaseModel):
    model_config = ConfigDict(extra="forbid")

    step_id: Identifier
    description: Text
    depends_on: Annotated[list[Identifier], Field(max_length=100)] = []
    parent: Identifier | None = None


@server.tool()
async def store_memory(
    content: Content, user_id: UserId, scope: MemoryScope = "agent", store: StoreName | None = None,
    memory_type: AnyMemoryType = "note", tags: Tags | None = None, metadata: JsonObject | None = None, data: JsonObject | None = None,
    key: Annotated[str, Field(min_length=1, max_length=255)] | None = None, ttl_seconds: Ttl | None = None,
    source: SourceArg | None = None, on_duplicate: Literal["keep", "skip", "update"] = "keep",
) -> Json:
    """Store a memory about an end user. An existing `key` of this agent updates that memory. `source` names
    what it was learnt from: {session_id, seq} (a message), {session_id, call_id} (a tool call) or {episode_id}.
    When this agent already sees the same memory (same user, scope and type; the same text, or nearly the same
    meaning), `on_duplicate` keep stores it anyway and lists the `similar` ones, skip answers the existing one,
    update makes the new text the next revision of this agent's own one (both with "duplicate": true; another
    agent's is kept beside)."""
    return await run(
        _write_memory, content=content, user_id=user_id, scope=scope, store=store, memory_type=memory_type, tags=_unique(tags),
        metadata=metadata or {}, data=data, key=key, ttl_seconds=ttl_seconds, source=source, on_duplicate=on_duplicate,
    )


@server.tool()
async def get_memory_revisions(memory_id: MemoryId) -> Json:
    """Every revision of a memory this agent may see, newest first (the first is the current one): content,
    tags, metadata, data, what changed it (create, update, operator_edit, revert…), who, when and why."""
    return await run(_memory_revisions, memory_id=memory_id)


@server.tool()
async def flag_memory(memory_id: MemoryId, reason: Text) -> Json:
    """Flag a memory this agent sees as doubtful (wrong, outdated, or planted by a tool's output) for a person
    to review; a person may then quarantine it, hiding it from every agent."""
    return await run(_flag_memory, memory_id=memory_id, reason=reason)


@server.tool()
async def revert_memory(memory_id: MemoryId, revision: Annotated[int, Field(ge=1, le=2**31 - 1)], reason: Text | None = None) -> Json:
    """Make an earlier revision of one of this agent's memories current again (as a new revision)."""
    return await run(_revert_memory, memory_id=memory_id, revision=revision, reason=reason or "")


@server.tool()
async def search_memories(
    query: Annotated[str, Field(max_length=4000)] = "", user_id: UserId | None = None, mode: SearchMode = "hybrid",
    max_results: Annotated[int, Field(ge=1, le=100)] = 10, min_relevance: Annotated[float, Field(ge=0, le=1)] | None = None,
    tags: Tags | None = None, metadata: JsonObject | None = None, scope: MemoryScope | None = None, memory_type: AnyMemoryType | None = None,
    store: StoreName | None = None, repeats: Literal["demote", "keep"] = "demote",
    follow_names: Literal["results", "all", "off"] = "results", rerank: bool | None = None, follow_graph: bool = False,
) -> Json:
    """Search the memories this agent may see (hybrid, semantic or keyword), best first with scores. A result that
    repeats a better one (`repeat_of`) follows the distinct results unless `repeats` is "keep". Results that mention a
    name the two best results mention score 0.03 more (two-hop questions): among the results read by default, among
    every entry searched with `follow_names` "all". Where the hub has a reranker, the best results are reordered and
    scored by it (`reranked`) unless `rerank` is false. With `follow_graph`, the facts about the entities the query
    names, and those one fact further, join the candidates (two-hop questions through the graph)."""
    return await run(
        _search, query=query, mode=mode, max_results=max_results, min_relevance=min_relevance, repeats=repeats,
        follow_names=follow_names, rerank=rerank, follow_graph=follow_graph, tags=_unique(tags),
        metadata=metadata or {}, scope=scope, user_id=user_id, memory_type=memory_type, store=store,
    )


@server.tool()
async def store_factual_memory(
    subject: Annotated[str, Field(min_length=1, max_length=2000)], predicate: Annotated[str, Field(min_length=1, max_length=2000)],
    object: str | int | float | bool, user_id: UserId, confidence: Annotated[float, Field(ge=0, le=1)] = 1.0,
    content: Content | None = None, scope: MemoryScope = "agent", store: StoreName | None = None, tags: Tags | None = None,
    metadata: JsonObject | None = None,
) -> Json:
    """Store a fact (subject, predicate, object). A newer fact with the same subject and predicate supersedes the older one."""
    return await run(
        _write_memory, content=content or f"{subject} {predicate} {object}", user_id=user_id, scope=scope, store=store,
        memory_type="factual", tags=_unique(tags), metadata=metadata or {},
        data={"subject": subject, "predicate": predicate, "object": object, "confidence": confidence},
    )


@server.tool()
async def search_facts_by_subject(
    subject: Annotated[str, Field(min_length=1, max_length=2000)], user_id: UserId | None = None, include_invalidated: bool = False,
    limit: Annotated[int, Field(ge=1, le=200)] = 50,
) -> Json:
    """The facts about a subject (case and spacing ignored), newest first; superseded ones only with include_invalidated."""
    return await run(_facts_by_subject, subject=subject, user_id=user_id, include_invalidated=include_invalidated, limit=limit)


Entity = Annotated[str, Field(min_length=1, max_length=2000, description="an entity's name (case and spacing ignored)")]


@server.tool()
async def graph_add(
    subject: Entity, predicate: Annotated[str, Field(min_length=1, max_length=2000)], object: str | int | float | bool,
    user_id: UserId, confidence: Annotated[float, Field(ge=0, le=1)] = 1.0, scope: MemoryScope = "agent",
    source: SourceArg | None = None,
) -> Json:
    """Add a fact to the graph: subject —predicate→ object (stored as a factual memory). A new object for the
    same subject and predicate supersedes the old one, unless the workspace's rules make the predicate multi."""
    return await run(_graph_add, subject=subject, predicate=predicate, object=object, user_id=user_id, confidence=confidence,
                     scope=scope, source=source)


@server.tool()
async def graph_neighbors(
    entity: Entity, depth: Annotated[int, Field(ge=1, le=3)] = 1,
    predicates: Annotated[list[Annotated[str, Field(min_length=1, max_length=2000)]], Field(max_length=50)] | None = None,
    user_id: UserId | None = None, limit: Annotated[int, Field(ge=1, le=500)] = 100,
) -> Json:
    """The facts within `depth` of an entity, nearest first, either way along each fact; with the edges the
    workspace's rules infer (inferred: true, `via` the facts they follow from)."""
    return await run(_graph_neighbors, entity=entity, depth=depth, predicates=predicates or [], user_id=user_id, limit=limit)


@server.tool()
async def graph_path(
    source: Entity, target: Entity, max_depth: Annotated[int, Field(ge=1, le=6)] = 4, user_id: UserId | None = None,
) -> Json:
    """A shortest chain of facts linking two entities (NO_PATH when none within max_depth facts)."""
    return await run(_graph_path, source=source, target=target, max_depth=max_depth, user_id=user_id)


@server.tool()
async def graph_grounding(
    text: Annotated[str, Field(min_length=1, max_length=20_000)], user_id: UserId | None = None,
    limit: Annotated[int, Field(ge=1, le=50)] = 8,
) -> Json:
    """The facts most relevant to a text (the entities it names, their neighbours, the rules' closure), best
    first, and a system message stating them to add to a prompt."""
    return await run(_graph_grounding, text=text, user_id=user_id, limit=limit)


@server.tool()
async def store_episodic_memory(
    content: Content, user_id: UserId, data: JsonObject | None = None, scope: MemoryScope = "agent", store: StoreName | None = None,
    tags: Tags | None = None, metadata: JsonObject | None = None, ttl_seconds: Ttl | None = None,
) -> Json:
    """Store an episodic memory: something that happened, told as it happened."""
    return await run(
        _write_memory, content=content, user_id=user_id, scope=scope, store=store, memory_type="episodic", tags=_unique(tags),
        metadata=metadata or {}, data=data, ttl_seconds=ttl_seconds,
    )


@server.tool()
async def store_semantic_memory(
    concept: Annotated[str, Field(min_length=1, max_length=2000)], content: Content, user_id: UserId,
    category: Annotated[str, Field(max_length=2000)] = "", related_concepts: list[Annotated[str, Field(min_length=1)]] | None = None,
    scope: MemoryScope = "agent", store: StoreName | None = None, tags: Tags | None = None, metadata: JsonObject | None = None,
) -> Json:
    """Store a semantic memory: what a concept is (its description in `content`)."""
    data = {"concept": concept, "category": category or None, "related_concepts": related_concepts or []}
    return await run(
        _write_memory, content=content, user_id=user_id, scope=scope, store=store, memory_type="semantic", tags=_unique(tags),
        metadata=metadata or {}, data=data,
    )


@server.tool()
async def store_procedural_memory(
    task: Annotated[str, Field(min_length=1, max_length=2000)], steps: Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1, max_length=200)],
    user_id: UserId, preconditions: list[Annotated[str, Field(min_length=1)]] | None = None, content: Content | None = None,
    scope: MemoryScope = "agent", store: StoreName | None = None, tags: Tags | None = None, metadata: JsonObject | None = None,
) -> Json:
    """Store a procedure: how to do a task, step by step."""
    text = content or f"How to {task}: " + "; ".join(f"{n}. {step}" for n, step in enumerate(steps, 1))
    return await run(
        _write_memory, content=text, user_id=user_id, scope=scope, store=store, memory_type="procedural", tags=_unique(tags),
        metadata=metadata or {}, data={"task": task, "steps": steps, "preconditions": preconditions or []},
    )


@server.tool()
async def store_working_memory(
    content: Content, user_id: UserId, ttl_seconds: Ttl | None = None, key: Annotated[str, Field(min_length=1, max_length=255)] | None = None,
    tags: Tags | None = None, metadata: JsonObject | None = None, scope: MemoryScope = "agent", store: StoreName | None = None,
) -> Json:
    """Store a short-lived working memory (deleted after ttl_seconds, or the workspace's working-memory retention)."""
    return await run(
        _write_memory, content=content, user_id=user_id, scope=scope, store=store, memory_type="working", tags=_unique(tags),
        metadata=metadata or {}, key=key, ttl_seconds=ttl_seconds,
    )


@server.tool()
async def get_active_working_memories(user_id: UserId | None = None, limit: Annotated[int, Field(ge=1, le=200)] = 50) -> Json:
    """The working memories not yet expired, newest first."""
    return await run(_working_memories, user_id=user_id, limit=limit)


@server.tool()
async def get_memory_statistics(user_id: UserId | None = None) -> Json:
    """Counts of the memories this agent may see, per type and scope, and their storage."""
    return await run(_stats, user_id=user_id)


@server.tool()
async def start_session(session_id: Identifier, user_id: UserId, metadata: JsonObject | None = None) -> Json:
    """Start a session (the same id for the same user again is the same session)."""
    return await run(_start_session, session_id=session_id, user_id=user_id, metadata=metadata or {})


@server.tool()
async def record_tool_call(
    session_id: Identifier, tool: Annotated[str, Field(min_length=1, max_length=200)], args: Json | None = None,
    result: Any = "", result_summary: Annotated[str, Field(max_length=20_000)] | None = None, status: ToolStatus = "ok",
    call_id: Identifier | None = None, step_id: Identifier | None = None, duration_ms: Annotated[int, Field(ge=0, le=2**31 - 1)] | None = None,
    cost: Annotated[float, Field(ge=0)] | None = None,
) -> Json:
    """Log a tool call of a session; personal data and secrets are redacted before anything is stored."""
    return await run(
        _record_tool_call, session_id=session_id, tool=tool, args=args or {}, result=result, result_summary=result_summary,
        status=status, call_id=call_id, step_id=step_id, duration_ms=duration_ms, cost=cost,
    )


@server.tool()
async def recall_tool_result(call_id: Identifier) -> Json:
    """The (redacted) raw output of an earlier tool call, by call_id."""
    return await run(_recall_tool_result, call_id=call_id)


@server.tool()
async def set_plan(
    session_id: Identifier, goal: Text,
    steps: Annotated[list[PlanStepArg], Field(max_length=1000)],
) -> Json:
    """Replace the session's plan (the old one stays in history)."""
    return await run(_set_plan, session_id=session_id, goal=goal, steps=[step.model_dump() for step in steps])


@server.tool()
async def update_plan_step(session_id: Identifier, step_id: Identifier, status: StepState, summary: Text | None = None) -> Json:
    """Move a plan step: pending → running → done or failed."""
    return await run(_update_plan_step, session_id=session_id, step_id=step_id, status=status, summary=summary)


@server.tool()
async def render_plan(session_id: Identifier, current: Identifier | None = None) -> Json:
    """The session's plan as a compact prompt slice ("step 3 of 7", done steps with their results)."""
    return await run(_render_plan, session_id=session_id, current=current)


@server.tool()
async def save_checkpoint(
    session_id: Identifier, state: Any, expected_version: Version, current_step: Annotated[str, Field(max_length=200)] = "",
    label: Annotated[str, Field(max_length=200)] = "", include: list[CheckpointPart] | None = None,
) -> Json:
    """Save the agent's state as version expected_version + 1; refused (VERSION_CONFLICT) if another writer saved since."""
    return await run(
        _save_checkpoint, session_id=session_id, state=state, expected_version=expected_version, current_step=current_step,
        label=label, include=include,
    )


@server.tool()
async def load_checkpoint(
    session_id: Identifier, version: Annotated[int, Field(ge=1, le=2**31 - 1)] | None = None, include: list[CheckpointPart] | None = None,
) -> Json:
    """A checkpoint (the latest unless `version`), with state and summary unless `include` says otherwise."""
    return await run(_load_checkpoint, session_id=session_id, version=version, include=include)


@server.tool()
async def request_approval(
    session_id: Identifier, tool: Annotated[str, Field(min_length=1, max_length=200)], args: Json,
    allowed_decisions: Annotated[list[DecisionName], Field(min_length=1)] | None = None, context: Any = None,
    expires_in: Annotated[int, Field(ge=1, le=30 * 86400)] | None = None,
) -> Json:
    """Ask a human before a risky tool call. Pending until an operator decides (poll get_approval); a remembered decision answers at once."""
    return await run(
        _request_approval, session_id=session_id, tool=tool, args=args,
        allowed_decisions=list(allowed_decisions or ["approve", "edit", "reject", "suspend"]), context=context, expires_in=expires_in,
    )


@server.tool()
async def get_approval(approval_id: Annotated[int, Field(ge=1, le=2**63 - 1)]) -> Json:
    """An approval request and its decision, if taken."""
    return await run(_get_approval, approval_id=approval_id)


@server.tool()
async def record_episode(
    user_id: UserId, task: Text, outcome: Outcome, narrative: Text, session_id: Identifier | None = None,
    tools_used: list[Annotated[str, Field(min_length=1, max_length=200)]] | None = None,
    elapsed_ms: Annotated[int, Field(ge=0, le=2**63 - 1)] | None = None, cost: Annotated[float, Field(ge=0)] | None = None,
    metadata: JsonObject | None = None,
) -> Json:
    """Record a finished task (3–5 sentences of narrative) for similar_episodes to find."""
    counts: dict[str, int] = {}
    for name in tools_used or []:
        counts[name] = counts.get(name, 0) + 1
    return await run(
        _record_episode, session_id=session_id, user_id=user_id, task=task, outcome=outcome, narrative=narrative, tools_used=counts,
        elapsed_ms=elapsed_ms, cost=cost, metadata=metadata or {},
    )


@server.tool()
async def similar_episodes(
    task: Text, k: Annotated[int, Field(ge=1, le=20)] = 3, outcome: Outcome | None = None, user_id: UserId | None = None,
) -> Json:
    """The past episodes most similar to a task, with guidance drawn from them."""
    return await run(_similar_episodes, task=task, k=k, outcome=outcome, user_id=user_id)


def _unique(tags: list[str] | None) -> list[str]:
    return list(dict.fromkeys(tags or []))


# --- Serving ------------------------------------------------------------------------------------


def transport_security() -> TransportSecuritySettings:
    """DNS-rebinding protection from the hub's own ALLOWED_HOSTS: a Host the hub does not
    serve is refused (421), and so is a browser Origin other than those hosts (403).

    The SDK matches exact hosts, with any port; Django's `.example.com` (the domain and
    its subdomains) keeps the domain only, and `*` (every host, for Django too) turns
    the check off."""
    hosts = [host.lstrip(".") for host in settings.ALLOWED_HOSTS]
    if "*" in hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    origins = [origin for host in hosts for origin in (f"http://{host}", f"https://{host}", f"http://{host}:*", f"https://{host}:*")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[pattern for host in hosts for pattern in (host, f"{host}:*")],
        allowed_origins=[*origins, *settings.CSRF_TRUSTED_ORIGINS],
    )


class McpMount:
    """`/mcp` (and `/mcp/…`) to the MCP app, seen there as `/`; everything else to `app`."""

    PREFIX = "/mcp"

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.mcp_app = server.streamable_http_app(
            streamable_http_path="/", stateless_http=True, json_response=True, transport_security=transport_security(),
            max_request_body_size=settings.MEMORYHUB_MAX_BODY_BYTES,
        )
        self._lock = asyncio.Lock()
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._runner: asyncio.Task[None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        if scope["type"] != "http" or not (path == self.PREFIX or path.startswith(self.PREFIX + "/")):
            await self.app(scope, receive, send)
            return
        await self.start()
        inner = path[len(self.PREFIX):] or "/"
        await self.mcp_app({**scope, "path": inner, "raw_path": inner.encode()}, receive, send)

    async def start(self) -> None:
        """Run the SDK's session manager, once per process. Its task group outlives any
        one request, so it runs in a task of its own until `stop` (or the process ends)."""
        if self._ready.is_set():
            return
        async with self._lock:
            if self._runner is None:
                self._runner = asyncio.create_task(self._run(), name="mcp-session-manager")
        waiting = asyncio.ensure_future(self._ready.wait())
        await asyncio.wait({waiting, self._runner}, return_when=asyncio.FIRST_COMPLETED)
        if not self._ready.is_set():
            waiting.cancel()
            self._runner.result()  # raises why it could not start
            raise RuntimeError("The MCP session manager stopped before it started.")

    async def stop(self) -> None:
        if self._runner is not None:
            self._stop.set()
            await self._runner

    async def _run(self) -> None:
        async with server.session_manager.run():
            self._ready.set()
            await self._stop.wait()

