"""The memory tools: store, revise, review and search memories; the graph of facts.

Named as agents already call them in the memory SDKs they come from; each parses its
arguments into the domain's inputs and makes one call to memoryhub.operations, the
same the REST API makes."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from memoryhub.memory.models import MemoryType
from memoryhub.memory.search import SearchRequest
from memoryhub.memory.selectors import MemoryFilters
from memoryhub.memory.services import MemoryInput, Source
from memoryhub.operations import graph, memory

from agents_mcp.app import server
from agents_mcp.arguments import (
    AnyMemoryType,
    Content,
    Entity,
    Json,
    JsonObject,
    MemoryId,
    MemoryScope,
    SearchMode,
    SourceArg,
    StoreName,
    Tags,
    Text,
    Ttl,
    UserId,
    unique,
)
from agents_mcp.running import run


async def _store(*, source: SourceArg | None = None, on_duplicate: str = "keep", **fields: Any) -> Json:
    item = MemoryInput(**fields, source=source.source() if source is not None else Source())
    return await run(memory.memory_store_answer, item=item, on_duplicate=on_duplicate)


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
    return await _store(
        content=content, user_id=user_id, scope=scope, store=store, memory_type=memory_type, tags=unique(tags),
        metadata=metadata or {}, data=data, key=key, ttl_seconds=ttl_seconds, source=source, on_duplicate=on_duplicate,
    )


@server.tool()
async def get_memory_revisions(memory_id: MemoryId) -> Json:
    """Every revision of a memory this agent may see, newest first (the first is the current one): content,
    tags, metadata, data, what changed it (create, update, operator_edit, revert…), who, when and why."""
    return await run(memory.memory_revisions_answer, rate="reads", memory_id=memory_id)


@server.tool()
async def flag_memory(memory_id: MemoryId, reason: Text) -> Json:
    """Flag a memory this agent sees as doubtful (wrong, outdated, or planted by a tool's output) for a person
    to review; a person may then quarantine it, hiding it from every agent."""
    return await run(memory.memory_review_answer, memory_id=memory_id, action="flag", reason=reason)


@server.tool()
async def revert_memory(memory_id: MemoryId, revision: Annotated[int, Field(ge=1, le=2**31 - 1)], reason: Text | None = None) -> Json:
    """Make an earlier revision of one of this agent's memories current again (as a new revision)."""
    return await run(memory.memory_revert_answer, memory_id=memory_id, revision=revision, reason=reason or "")


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
    filters = MemoryFilters(tags=unique(tags), metadata=metadata or {}, scope=scope, user_id=user_id, memory_type=memory_type, store=store)
    request = SearchRequest(
        filters=filters, query=query or None, mode=mode, max_results=max_results, min_relevance=min_relevance, repeats=repeats,
        follow_names=follow_names, rerank=rerank,
    )
    return await run(memory.memory_search_answer, rate="searches", request=request, follow_graph=follow_graph)


@server.tool()
async def store_factual_memory(
    subject: Annotated[str, Field(min_length=1, max_length=2000)], predicate: Annotated[str, Field(min_length=1, max_length=2000)],
    object: str | int | float | bool, user_id: UserId, confidence: Annotated[float, Field(ge=0, le=1)] = 1.0,
    content: Content | None = None, scope: MemoryScope = "agent", store: StoreName | None = None, tags: Tags | None = None,
    metadata: JsonObject | None = None,
) -> Json:
    """Store a fact (subject, predicate, object). A newer fact with the same subject and predicate supersedes the older one."""
    return await _store(
        content=content or f"{subject} {predicate} {object}", user_id=user_id, scope=scope, store=store,
        memory_type="factual", tags=unique(tags), metadata=metadata or {},
        data={"subject": subject, "predicate": predicate, "object": object, "confidence": confidence},
    )


@server.tool()
async def search_facts_by_subject(
    subject: Annotated[str, Field(min_length=1, max_length=2000)], user_id: UserId | None = None, include_invalidated: bool = False,
    limit: Annotated[int, Field(ge=1, le=200)] = 50,
) -> Json:
    """The facts about a subject (case and spacing ignored), newest first; superseded ones only with include_invalidated."""
    return await run(memory.facts_about_answer, rate="reads", subject=subject, user_id=user_id, include_invalidated=include_invalidated, limit=limit)


@server.tool()
async def graph_add(
    subject: Entity, predicate: Annotated[str, Field(min_length=1, max_length=2000)], object: str | int | float | bool,
    user_id: UserId, confidence: Annotated[float, Field(ge=0, le=1)] = 1.0, scope: MemoryScope = "agent",
    source: SourceArg | None = None,
) -> Json:
    """Add a fact to the graph: subject —predicate→ object (stored as a factual memory). A new object for the
    same subject and predicate supersedes the old one, unless the workspace's rules make the predicate multi."""
    return await run(graph.graph_edge_add_answer, subject=subject, predicate=predicate, object=object, user_id=user_id, confidence=confidence,
                     scope=scope, source=source.source() if source is not None else None)


@server.tool()
async def graph_neighbors(
    entity: Entity, depth: Annotated[int, Field(ge=1, le=3)] = 1,
    predicates: Annotated[list[Annotated[str, Field(min_length=1, max_length=2000)]], Field(max_length=50)] | None = None,
    user_id: UserId | None = None, limit: Annotated[int, Field(ge=1, le=500)] = 100,
) -> Json:
    """The facts within `depth` of an entity, nearest first, either way along each fact; with the edges the
    workspace's rules infer (inferred: true, `via` the facts they follow from)."""
    return await run(graph.graph_neighbors_answer, rate="reads", entity=entity, depth=depth, predicates=predicates or [], user_id=user_id, limit=limit)


@server.tool()
async def graph_path(
    source: Entity, target: Entity, max_depth: Annotated[int, Field(ge=1, le=6)] = 4, user_id: UserId | None = None,
) -> Json:
    """A shortest chain of facts linking two entities (NO_PATH when none within max_depth facts)."""
    return await run(graph.graph_path_answer, rate="reads", source=source, target=target, max_depth=max_depth, user_id=user_id)


@server.tool()
async def graph_grounding(
    text: Annotated[str, Field(min_length=1, max_length=20_000)], user_id: UserId | None = None,
    limit: Annotated[int, Field(ge=1, le=50)] = 8,
) -> Json:
    """The facts most relevant to a text (the entities it names, their neighbours, the rules' closure), best
    first, and a system message stating them to add to a prompt."""
    return await run(graph.graph_grounding_answer, text=text, user_id=user_id, limit=limit)


@server.tool()
async def store_episodic_memory(
    content: Content, user_id: UserId, data: JsonObject | None = None, scope: MemoryScope = "agent", store: StoreName | None = None,
    tags: Tags | None = None, metadata: JsonObject | None = None, ttl_seconds: Ttl | None = None,
) -> Json:
    """Store an episodic memory: something that happened, told as it happened."""
    return await _store(
        content=content, user_id=user_id, scope=scope, store=store, memory_type="episodic", tags=unique(tags),
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
    return await _store(
        content=content, user_id=user_id, scope=scope, store=store, memory_type="semantic", tags=unique(tags),
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
    return await _store(
        content=text, user_id=user_id, scope=scope, store=store, memory_type="procedural", tags=unique(tags),
        metadata=metadata or {}, data={"task": task, "steps": steps, "preconditions": preconditions or []},
    )


@server.tool()
async def store_working_memory(
    content: Content, user_id: UserId, ttl_seconds: Ttl | None = None, key: Annotated[str, Field(min_length=1, max_length=255)] | None = None,
    tags: Tags | None = None, metadata: JsonObject | None = None, scope: MemoryScope = "agent", store: StoreName | None = None,
) -> Json:
    """Store a short-lived working memory (deleted after ttl_seconds, or the workspace's working-memory retention)."""
    return await _store(
        content=content, user_id=user_id, scope=scope, store=store, memory_type="working", tags=unique(tags),
        metadata=metadata or {}, key=key, ttl_seconds=ttl_seconds,
    )


@server.tool()
async def get_active_working_memories(user_id: UserId | None = None, limit: Annotated[int, Field(ge=1, le=200)] = 50) -> Json:
    """The working memories not yet expired, newest first."""
    return await run(
        memory.memory_list_answer, rate="reads", filters=MemoryFilters(memory_type=MemoryType.WORKING, user_id=user_id), cursor=None,
        limit=limit,
    )


@server.tool()
async def get_memory_statistics(user_id: UserId | None = None) -> Json:
    """Counts of the memories this agent may see, per type and scope, and their storage."""
    return await run(memory.memory_stats_answer, rate="reads", user_id=user_id)
