"""REST/MCP parity: every tool the MCP endpoint registers answers what its REST operation
answers, field for field, because both make the same call to memoryhub.operations.

The walk keeps two identical worlds in one workspace, one written and read over MCP and
one over REST (their own end user, session and call ids), step by step in the same order,
and compares each tool's result with the REST body of the same step. What must differ is
named and masked: the worlds' own ids, generated ids and times. Where REST says something
by its status (201 or 200), the tool says it in a field (`created`, `waits`)."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Any

import httpx

from agents_mcp.server import server
from tests.conftest import Actors, LiveHub
from tests.test_mcp import Agent, connected

# Each world's own names; the bodies are compared with these masked.
WORLDS = {
    "mcp": {"user": "user-mcp", "session": "parity-mcp", "call": "call-mcp", "key": "seat-mcp"},
    "rest": {"user": "user-rest", "session": "parity-rest", "call": "call-rest", "key": "seat-rest"},
}
# Tools with no REST operation to compare with, and why.
MCP_ONLY = {"search_facts_by_subject": "REST has no read of facts by subject (GET /memories filters by type, tags and metadata)"}

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
MOMENT = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")
# Integer ids the database hands out (approvals, episodes): each world has its own.
GENERATED_IDS = {"id", "approval_id", "episode_id"}


def masked(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: masked(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(item) for item in value]
    if isinstance(value, int) and not isinstance(value, bool) and key in GENERATED_IDS:
        return "<id>"
    if isinstance(value, str):
        if UUID.match(value):
            return "<uuid>"
        if MOMENT.match(value):
            return "<time>"
        for world in WORLDS.values():
            for name, own in world.items():
                value = value.replace(own, f"<{name}>")
    return value


@dataclass
class Walk:
    hub: LiveHub
    key: str
    mcp: Agent
    walked: set[str] = field(default_factory=set)

    def rest(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        response = httpx.request(method, f"{self.hub.url}/api/v1{path}", headers={"Authorization": f"Bearer {self.key}"}, timeout=60, **kwargs)
        assert response.status_code < 300, (method, path, response.status_code, response.text)
        return response

    async def same(self, tool: str, arguments: dict[str, Any], method: str, path: str, *, status_as: str | None = None,
                   **rest: Any) -> dict[str, Any]:
        """The tool over MCP (the MCP world's names) and its REST operation (the REST
        world's), compared; the tool's result."""
        answer = await self.mcp.call(tool, **arguments)
        response = self.rest(method, path, **rest)
        expected = response.json()
        if status_as is not None:
            expected[status_as] = response.status_code == 201
        assert masked(answer) == masked(expected), tool
        self.walked.add(tool)
        return answer


def test_every_mcp_tool_answers_what_its_rest_operation_answers(actors: Actors, live_hub: LiveHub) -> None:
    m, r = WORLDS["mcp"], WORLDS["rest"]

    async def scenario() -> set[str]:
        async with connected(live_hub.url, actors.bot_key) as agent:
            walk = Walk(live_hub, actors.bot_key, agent)

            async def both(tool: str, mcp_args: dict[str, Any], method: str, path: str, body: dict[str, Any] | None = None,
                           params: dict[str, Any] | None = None, status_as: str | None = None) -> dict[str, Any]:
                return await walk.same(tool, mcp_args, method, path, status_as=status_as,
                                       **({"json": body} if body is not None else {}), **({"params": params} if params else {}))

            await both("start_session", {"session_id": m["session"], "user_id": m["user"]},
                       "POST", "/sessions", {"session_id": r["session"], "user_id": r["user"]}, status_as="created")

            # Memories of every type, as each store tool writes them and POST /memories takes them.
            note = {"content": "Ana prefers aisle seats.", "tags": ["travel"], "metadata": {"n": 1}}
            stored = await both("store_memory", {**note, "user_id": m["user"], "key": m["key"]},
                                "POST", "/memories", {**note, "user_id": r["user"], "key": r["key"]}, status_as="created")
            rest_stored = walk.rest("GET", "/memories", params={"user_id": r["user"], "tags": "travel"}).json()["results"][0]
            await both("store_factual_memory", {"subject": "Ana", "predicate": "lives in", "object": "Lisbon", "user_id": m["user"]},
                       "POST", "/memories", {"content": "Ana lives in Lisbon", "memory_type": "factual", "user_id": r["user"],
                                             "data": {"subject": "Ana", "predicate": "lives in", "object": "Lisbon", "confidence": 1.0}},
                       status_as="created")
            episodic = "Booked Ana's flight to Lisbon; the first card failed."
            await both("store_episodic_memory", {"content": episodic, "user_id": m["user"]},
                       "POST", "/memories", {"content": episodic, "memory_type": "episodic", "user_id": r["user"]}, status_as="created")
            tide = "A forecast of sea level from lunar cycles."
            await both("store_semantic_memory", {"concept": "tide model", "content": tide, "category": "science",
                                                 "related_concepts": ["moon"], "user_id": m["user"]},
                       "POST", "/memories", {"content": tide, "memory_type": "semantic", "user_id": r["user"],
                                             "data": {"concept": "tide model", "category": "science", "related_concepts": ["moon"]}},
                       status_as="created")
            await both("store_procedural_memory", {"task": "book a flight", "steps": ["search fares", "pay"], "user_id": m["user"]},
                       "POST", "/memories", {"content": "How to book a flight: 1. search fares; 2. pay", "memory_type": "procedural",
                                             "user_id": r["user"],
                                             "data": {"task": "book a flight", "steps": ["search fares", "pay"], "preconditions": []}},
                       status_as="created")
            await both("store_working_memory", {"content": "Drafting the reply to Ana.", "ttl_seconds": 600, "user_id": m["user"]},
                       "POST", "/memories", {"content": "Drafting the reply to Ana.", "memory_type": "working", "ttl_seconds": 600,
                                             "user_id": r["user"]}, status_as="created")
            await both("get_active_working_memories", {"user_id": m["user"]},
                       "GET", "/memories", params={"memory_type": "working", "user_id": r["user"]})
            await both("get_memory_statistics", {"user_id": m["user"]}, "GET", "/stats", params={"user_id": r["user"]})
            question = {"query": "Where does Ana live?", "max_results": 5}
            await both("search_memories", {**question, "user_id": m["user"]}, "POST", "/memories/search", {**question, "user_id": r["user"]})

            # A memory's history: a second revision by its key, the list, a revert, a flag.
            window = {**note, "content": "Ana prefers window seats."}
            await both("store_memory", {**window, "user_id": m["user"], "key": m["key"]},
                       "POST", "/memories", {**window, "user_id": r["user"], "key": r["key"]}, status_as="created")
            await both("get_memory_revisions", {"memory_id": stored["id"]}, "GET", f"/memories/{rest_stored['id']}/revisions")
            await both("revert_memory", {"memory_id": stored["id"], "revision": 1, "reason": "typo"},
                       "POST", f"/memories/{rest_stored['id']}/revert", {"revision": 1, "reason": "typo"})
            await both("flag_memory", {"memory_id": stored["id"], "reason": "stale"},
                       "POST", f"/memories/{rest_stored['id']}/review", {"action": "flag", "reason": "stale"})

            # The graph.
            for subject, place in (("Kreuzberg", "Berlin"), ("Berlin", "Germany")):
                edge = {"subject": subject, "predicate": "part of", "object": place}
                await both("graph_add", {**edge, "user_id": m["user"]}, "POST", "/graph/edges", {**edge, "user_id": r["user"]},
                           status_as="created")
            await both("graph_neighbors", {"entity": "kreuzberg", "depth": 2, "user_id": m["user"]},
                       "GET", "/graph/neighbors", params={"entity": "kreuzberg", "depth": 2, "user_id": r["user"]})
            await both("graph_path", {"source": "Kreuzberg", "target": "Germany", "user_id": m["user"]},
                       "GET", "/graph/path", params={"from": "Kreuzberg", "to": "Germany", "user_id": r["user"]})
            grounding = {"text": "Is Kreuzberg in Germany?", "limit": 3}
            await both("graph_grounding", {**grounding, "user_id": m["user"]}, "POST", "/graph/grounding", {**grounding, "user_id": r["user"]})

            # A session's tool calls, plan, checkpoints, approval and episode.
            call = {"tool": "crm.lookup", "args": {"email": "ana@example.com"}, "result": "gold customer", "duration_ms": 12}
            await both("record_tool_call", {**call, "session_id": m["session"], "call_id": m["call"]},
                       "POST", f"/sessions/{r['session']}/tool-calls", {**call, "call_id": r["call"]})
            await both("recall_tool_result", {"call_id": m["call"]}, "GET", f"/tool-calls/{r['call']}/result")
            plan = {"goal": "Answer Ana", "steps": [{"step_id": "look", "description": "Look Ana up"},
                                                    {"step_id": "reply", "description": "Reply", "depends_on": ["look"]}]}
            await both("set_plan", {**plan, "session_id": m["session"]}, "PUT", f"/sessions/{r['session']}/plan", plan)
            await both("update_plan_step", {"session_id": m["session"], "step_id": "look", "status": "running"},
                       "PATCH", f"/sessions/{r['session']}/plan/steps/look", {"status": "running"})
            await both("render_plan", {"session_id": m["session"]}, "GET", f"/sessions/{r['session']}/plan/render")
            state = {"expected_version": 0, "state": {"cursor": 7}, "current_step": "look"}
            await both("save_checkpoint", {**state, "session_id": m["session"]}, "POST", f"/sessions/{r['session']}/checkpoints", state)
            await both("load_checkpoint", {"session_id": m["session"], "include": ["state", "plan", "messages"]},
                       "GET", f"/sessions/{r['session']}/checkpoints/latest", params={"include": "state,plan,messages"})
            ask = {"tool": "payments.send", "args": {"amount": 5}, "context": {"why": "refund"}}
            asked = await both("request_approval", {**ask, "session_id": m["session"]}, "POST", "/approvals",
                               {**ask, "session_id": r["session"]}, status_as="waits")
            rest_asked = walk.rest("GET", "/approvals", params={"session_id": r["session"]}).json()["results"][0]
            await both("get_approval", {"approval_id": asked["id"]}, "GET", f"/approvals/{rest_asked['id']}")
            episode = {"task": "Refund Ana's double charge", "outcome": "success", "narrative": "Found it. Refunded it.",
                       "tools_used": ["crm.lookup"]}
            await both("record_episode", {**episode, "user_id": m["user"], "session_id": m["session"]},
                       "POST", "/episodes", {**episode, "user_id": r["user"], "session_id": r["session"]})
            await both("similar_episodes", {"task": "Ana was charged twice", "user_id": m["user"]},
                       "POST", "/episodes/similar", {"task": "Ana was charged twice", "user_id": r["user"]})
            return walk.walked

    walked = asyncio.run(scenario())
    registered = {tool.name for tool in asyncio.run(server.list_tools())}
    assert walked | set(MCP_ONLY) == registered, registered - walked - set(MCP_ONLY)


def test_the_parity_masks_only_what_differs_between_the_worlds() -> None:
    # The comparison above would pass anything if masking swallowed the values it compares.
    assert masked({"id": 5, "content": "Ana", "user_id": "user-mcp", "version": 2}) == {
        "id": "<id>", "content": "Ana", "user_id": "<user>", "version": 2,
    }
    assert masked({"user_id": "user-mcp"}) == masked({"user_id": "user-rest"})
    assert masked({"content": "Ana prefers aisle seats."}) != masked({"content": "Ana prefers window seats."})
    assert masked({"score": 0.5}) != masked({"score": 0.51})
