"""The MCP endpoint (/mcp, agents_mcp/server.py) under uvicorn, driven by the `mcp`
SDK's own streamable HTTP client: every tool, checked against the REST API; who may
call it; which Host it answers; the session manager with and without a lifespan."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, get_args

import httpx
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from agents_mcp import arguments as mcp_server
from memoryhub.approvals.models import Decision
from memoryhub.core.models import AgentKey
from memoryhub.core.services import api_key_revoke
from memoryhub.episodes.models import EpisodeOutcome
from memoryhub.memory.models import MemoryType, Scope
from memoryhub.plans.models import StepStatus
from memoryhub.tools.models import ToolCallStatus
from tests.conftest import Actors, LiveHub, free_port, hub_database_url, poll, stop_process

TOOLS = {
    "store_memory", "search_memories", "store_factual_memory", "search_facts_by_subject", "store_episodic_memory",
    "store_semantic_memory", "store_procedural_memory", "store_working_memory", "get_active_working_memories",
    "get_memory_statistics", "record_tool_call", "recall_tool_result", "update_plan_step", "render_plan", "save_checkpoint",
    "load_checkpoint", "request_approval", "similar_episodes", "graph_add", "graph_neighbors", "graph_path", "graph_grounding",
}
INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


class Agent:
    """One MCP client session, as an agent holds it."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session

    async def call(self, name: str, /, **arguments: Any) -> dict[str, Any]:
        result = await self.session.call_tool(name, arguments)
        assert not result.is_error, (name, result.content)
        assert isinstance(result.structured_content, dict)
        return result.structured_content

    async def error(self, name: str, /, **arguments: Any) -> dict[str, Any]:
        """The hub's error envelope of a call that fails ({"code", "message", "details"})."""
        result = await self.session.call_tool(name, arguments)
        assert result.is_error, (name, result.structured_content)
        return (result.structured_content or {}).get("error") or {"text": result.content[0].text}


@asynccontextmanager
async def connected(url: str, key: str) -> AsyncIterator[Agent]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield Agent(session)


def rest(hub: LiveHub, key: str, method: str, path: str, **kwargs: Any) -> httpx.Response:
    return httpx.request(method, f"{hub.url}/api/v1{path}", headers={"Authorization": f"Bearer {key}"}, timeout=30, **kwargs)


def test_it_offers_the_tools_with_the_models_choices() -> None:
    # The tools' Literal types are the models' choices, written out for the JSON Schema.
    assert set(get_args(mcp_server.MemoryScope)) == set(Scope.values)
    assert set(get_args(mcp_server.AnyMemoryType)) == set(MemoryType.values)
    assert set(get_args(mcp_server.ToolStatus)) == set(ToolCallStatus.values)
    assert set(get_args(mcp_server.StepState)) == set(StepStatus.values)
    assert set(get_args(mcp_server.DecisionName)) == set(Decision.values)
    assert set(get_args(mcp_server.Outcome)) == set(EpisodeOutcome.values)


def test_it_stores_and_finds_memories_as_the_agent(actors: Actors, live_hub: LiveHub) -> None:
    async def scenario() -> None:
        async with connected(live_hub.url, actors.bot_key) as bot:
            names = {tool.name for tool in (await bot.session.list_tools()).tools}
            assert TOOLS <= names, TOOLS - names

            stored = await bot.call(
                "store_memory", content="Alice moved to Lisbon in May to work on tide models.", user_id="u1", tags=["travel"],
            )
            assert rest(live_hub, actors.bot_key, "GET", f"/memories/{stored['id']}").json()["content"] == stored["content"]
            found = await bot.call("search_memories", query="Where did Alice move?", user_id="u1")
            assert found["results"][0]["entry"]["id"] == stored["id"]
            again = await bot.call("store_memory", content="Alice moved to Lisbon in May, to work on tide models.", user_id="u1")
            found = await bot.call("search_memories", query="Where did Alice move?", user_id="u1")
            first, second = found["results"]
            assert {first["entry"]["id"], second["entry"]["id"]} == {stored["id"], again["id"]}
            assert (first["repeat_of"], second["repeat_of"]) == (None, first["entry"]["id"])
            found = await bot.call("search_memories", query="Where did Alice move?", user_id="u1", repeats="keep")
            assert [h["repeat_of"] for h in found["results"]] == [None, None]
            assert not any(h["reranked"] for h in found["results"])  # this hub has no reranker
            assert (await bot.error("search_memories", query="Where did Alice move?", rerank=True))["code"] == "RERANK_NOT_CONFIGURED"
            assert rest(live_hub, actors.bot_key, "DELETE", f"/memories/{again['id']}").status_code == 204

            await bot.call("store_factual_memory", subject="Alice", predicate="lives in", object="Lisbon", user_id="u1")
            porto = await bot.call("store_factual_memory", subject="Alice", predicate="lives in", object="Porto", user_id="u1")
            facts = await bot.call("search_facts_by_subject", subject="  alice ")
            assert [f["id"] for f in facts["results"]] == [porto["id"]]
            assert facts["results"][0]["data"]["object"] == "Porto"
            history = await bot.call("search_facts_by_subject", subject="Alice", include_invalidated=True)
            assert len(history["results"]) == 2
            # Subject and predicate past the key column's 600 characters: the fact is keyed by
            # a digest, and still found by its subject, folded the same way.
            long_subject = "The  quarterly report of " + "the northern region " * 30
            long_fact = await bot.call("store_factual_memory", subject=long_subject, predicate="is due on", object="Friday", user_id="u1")
            found = await bot.call("search_facts_by_subject", subject=" ".join(long_subject.upper().split()))
            assert [f["id"] for f in found["results"]] == [long_fact["id"]]

            episodic = await bot.call("store_episodic_memory", content="Booked Alice's flight to Lisbon; the first card failed.", user_id="u1")
            semantic = await bot.call(
                "store_semantic_memory", concept="tide model", content="A forecast of sea level from lunar cycles.", user_id="u1",
                category="science", related_concepts=["moon"],
            )
            procedural = await bot.call(
                "store_procedural_memory", task="book a flight", steps=["search fares", "hold a seat", "pay"], user_id="u1",
            )
            for entry, memory_type in ((episodic, "episodic"), (semantic, "semantic"), (procedural, "procedural")):
                assert rest(live_hub, actors.bot_key, "GET", f"/memories/{entry['id']}").json()["memory_type"] == memory_type
            assert procedural["data"]["steps"] == ["search fares", "hold a seat", "pay"]

            working = await bot.call("store_working_memory", content="Drafting the reply to Alice.", user_id="u1", ttl_seconds=600)
            assert working["expires_at"] is not None
            active = await bot.call("get_active_working_memories", user_id="u1")
            assert [m["id"] for m in active["results"]] == [working["id"]]

            stats = await bot.call("get_memory_statistics", user_id="u1")  # current facts: Alice's and the report's
            assert stats["memories"]["by_type"] | {"note": 1, "factual": 2, "working": 1} == stats["memories"]["by_type"]
            assert stats["memories"]["invalidated_facts"] == 1

            # Where a memory came from, and its history.
            await bot.call("start_session", session_id="s-prov", user_id="u1")
            await bot.call("record_tool_call", session_id="s-prov", tool="crm.lookup", call_id="c-1", result="city: Lisbon")
            learnt = await bot.call("store_memory", content="Alice lives in Lisbon", user_id="u1", key="alice-city",
                                    source={"session_id": "s-prov", "call_id": "c-1"})
            assert learnt["source"] == {"kind": "tool_call", "session_id": "s-prov", "call_id": "c-1"}
            await bot.call("store_memory", content="Alice lives in Porto", user_id="u1", key="alice-city")
            revisions = await bot.call("get_memory_revisions", memory_id=learnt["id"])
            assert [(r["revision"], r["change"]) for r in revisions["results"]] == [(2, "update"), (1, "create")]
            back = await bot.call("revert_memory", memory_id=learnt["id"], revision=1, reason="Porto was a typo")
            assert (back["content"], back["revision"]) == ("Alice lives in Lisbon", 3)
            flagged = await bot.call("flag_memory", memory_id=learnt["id"], reason="the CRM may be stale")
            assert (flagged["review"], flagged["revision"]) == ("flagged", 4)
            missing = await bot.error("store_memory", content="x", user_id="u1", source={"session_id": "s-prov", "call_id": "c-9"})
            assert missing["code"] == "SOURCE_NOT_FOUND"
            assert rest(live_hub, actors.bot_key, "DELETE", f"/memories/{learnt['id']}").status_code == 204

            # The hub's own errors, in the REST API's envelope; argument errors from the schema.
            assert (await bot.error("store_memory", content="x", user_id="u1", store="nowhere"))["code"] == "STORE_NOT_ATTACHED"
            assert (await bot.error("store_memory", content="nul \x00 here", user_id="u1"))["code"] == "INVALID_TEXT"
            assert "content" in (await bot.error("store_memory", content="", user_id="u1"))["text"]
            assert "scope" in (await bot.error("store_memory", content="x", user_id="u1", scope="everyone"))["text"]

        # Another workspace's agent sees none of it.
        async with connected(live_hub.url, actors.spy_key) as spy:
            assert (await spy.call("search_memories", query="Alice Lisbon"))["results"] == []
            assert (await spy.call("search_facts_by_subject", subject="Alice"))["results"] == []
            assert (await spy.call("get_memory_statistics"))["memories"]["total"] == 0

    asyncio.run(scenario())


def test_it_walks_the_graph_as_the_rest_api_does(actors: Actors, live_hub: LiveHub) -> None:
    rules = {"rules": [{"predicate": "part of", "kind": "transitive"}]}
    assert rest(live_hub, actors.owner_key, "PUT", "/graph/rules", json=rules).status_code == 200

    async def scenario() -> None:
        async with connected(live_hub.url, actors.bot_key) as bot:
            added = await bot.call("graph_add", subject="Kreuzberg", predicate="part of", object="Berlin", user_id="u1")
            assert (added["created"], added["memory_type"], added["data"]["object"]) == (True, "factual", "Berlin")
            await bot.call("graph_add", subject="Berlin", predicate="part of", object="Germany", user_id="u1", confidence=0.9)
            around = await bot.call("graph_neighbors", entity="kreuzberg", depth=2)
            over_rest = rest(live_hub, actors.bot_key, "GET", "/graph/neighbors", params={"entity": "kreuzberg", "depth": 2}).json()
            assert around["results"] == over_rest["results"]
            assert [(e["object"], e["inferred"]) for e in around["results"]] == [("Berlin", False), ("Germany", False), ("Germany", True)]
            path = await bot.call("graph_path", source="Kreuzberg", target="Germany")
            assert [e["object"] for e in path["path"]] == ["Berlin", "Germany"]
            assert (await bot.error("graph_path", source="Kreuzberg", target="Mars"))["code"] == "NO_PATH"
            grounding = await bot.call("graph_grounding", text="Is Kreuzberg in Germany?", limit=3)
            assert grounding["message"]["role"] == "system" and grounding["facts"][0]["score"] >= grounding["facts"][-1]["score"]
            assert "depth" in (await bot.error("graph_neighbors", entity="Berlin", depth=4))["text"]
            # A search that follows the graph, as the REST API's `follow_graph` does.
            question = {"query": "Which country is Kreuzberg in?", "user_id": "u1", "max_results": 5}
            followed = await bot.call("search_memories", **question, follow_graph=True)
            over_rest = rest(live_hub, actors.bot_key, "POST", "/memories/search", json={**question, "follow_graph": True}).json()
            assert [h["entry"]["id"] for h in followed["results"]] == [h["entry"]["id"] for h in over_rest["results"]]
            assert "Germany" in {(h["entry"].get("data") or {}).get("object") for h in followed["results"]}
        async with connected(live_hub.url, actors.spy_key) as spy:
            assert (await spy.call("graph_neighbors", entity="Berlin"))["results"] == []

    asyncio.run(scenario())


def test_it_answers_with_the_same_json_as_the_rest_api(actors: Actors, live_hub: LiveHub) -> None:
    # One representation per resource (memoryhub/representations/): an entry, an approval,
    # a tool call, an episode and a checkpoint read the same over MCP and over REST.
    def get(path: str) -> Any:
        response = rest(live_hub, actors.bot_key, "GET", path)
        assert response.status_code == 200, response.text
        return response.json()

    async def scenario() -> None:
        async with connected(live_hub.url, actors.bot_key) as bot:
            stored = await bot.call("store_memory", content="Ana prefers aisle seats.", user_id="u1", tags=["travel"], metadata={"n": 1})
            assert (stored.pop("created"), stored.pop("duplicate"), stored.pop("similar")) == (True, False, [])
            assert get(f"/memories/{stored['id']}") == stored and set(stored) >= {"superseded_by", "invalidated_at"}

            await bot.call("start_session", session_id="shapes", user_id="u1")
            call = await bot.call("record_tool_call", session_id="shapes", tool="crm.lookup", args={"email": "ana@example.com"},
                                  result="gold customer", call_id="c1", duration_ms=12)
            assert get("/sessions/shapes/tool-calls")["results"] == [call]

            asked = await bot.call("request_approval", session_id="shapes", tool="payments.send", args={"amount": 5},
                                   context={"why": "refund"})
            assert asked.pop("waits") is True
            assert get(f"/approvals/{asked['id']}") == asked == await bot.call("get_approval", approval_id=asked["id"])
            assert (asked["agent"], asked["context"]) == ("bot", {"why": "refund"}) and "response_schema" in asked and "rule" in asked

            saved = await bot.call("save_checkpoint", session_id="shapes", expected_version=0, state={"step": 1})
            loaded = await bot.call("load_checkpoint", session_id="shapes", include=["state"])
            assert get("/sessions/shapes/checkpoints/latest?include=state") == loaded == {**saved, "state": {"step": 1}}

            episode = await bot.call("record_episode", user_id="u1", task="seat", outcome="success", narrative="Booked an aisle seat.",
                                     session_id="shapes")
            similar = rest(live_hub, actors.bot_key, "POST", "/episodes/similar", json={"task": "seat", "user_id": "u1"}).json()
            assert similar["results"][0]["episode"] == episode

    asyncio.run(scenario())


def test_it_keeps_a_sessions_log_plan_checkpoints_approvals_and_episodes(actors: Actors, live_hub: LiveHub) -> None:
    async def scenario() -> None:
        async with connected(live_hub.url, actors.bot_key) as bot:
            assert (await bot.error("record_tool_call", session_id="s1", tool="crm.lookup"))["code"] == "SESSION_NOT_FOUND"
            assert (await bot.call("start_session", session_id="s1", user_id="u1"))["created"] is True

            call = await bot.call(
                "record_tool_call", session_id="s1", tool="crm.lookup", args={"email": "alice@example.com"},
                result={"name": "Alice", "email": "alice@example.com", "tier": "gold"}, call_id="c1", duration_ms=42,
            )
            assert "alice@example.com" not in str(call["args"]) and call["redactions"]
            recalled = await bot.call("recall_tool_result", call_id="c1")
            assert "gold" in recalled["result"] and "alice@example.com" not in recalled["result"]
            assert rest(live_hub, actors.bot_key, "GET", "/tool-calls/c1/result").json()["result"] == recalled["result"]

            await bot.call(
                "set_plan", session_id="s1", goal="Answer Alice",
                steps=[{"step_id": "look", "description": "Look Alice up"}, {"step_id": "reply", "description": "Reply", "depends_on": ["look"]}],
            )
            assert (await bot.call("update_plan_step", session_id="s1", step_id="look", status="running"))["status"] == "running"
            await bot.call("update_plan_step", session_id="s1", step_id="look", status="done", summary="gold tier")
            assert (await bot.error("update_plan_step", session_id="s1", step_id="look", status="running"))["code"] == "INVALID_TRANSITION"
            rendered = (await bot.call("render_plan", session_id="s1"))["text"]
            assert "step 2 of 2" in rendered and "gold tier" in rendered
            assert rest(live_hub, actors.bot_key, "GET", "/sessions/s1/plan").json()["steps"][0]["status"] == "done"

            saved = await bot.call("save_checkpoint", session_id="s1", expected_version=0, state={"cursor": 7}, current_step="reply")
            assert saved["version"] == 1
            conflict = await bot.error("save_checkpoint", session_id="s1", expected_version=0, state={"cursor": 8})
            assert (conflict["code"], conflict["details"]) == ("VERSION_CONFLICT", {"current_version": 1})
            loaded = await bot.call("load_checkpoint", session_id="s1")
            assert (loaded["version"], loaded["state"]) == (1, {"cursor": 7})
            with_plan = await bot.call("load_checkpoint", session_id="s1", version=1, include=["plan"])
            assert "state" not in with_plan and with_plan["plan"]["goal"] == "Answer Alice"
            assert rest(live_hub, actors.bot_key, "GET", "/sessions/s1/checkpoints/latest").json()["state"] == {"cursor": 7}

            approval = await bot.call("request_approval", session_id="s1", tool="payments.send", args={"amount": 1200})
            assert (approval["status"], approval["waits"]) == ("pending", True)
            assert rest(live_hub, actors.owner_key, "GET", f"/approvals/{approval['id']}").json()["status"] == "pending"

            await bot.call(
                "record_episode", user_id="u1", session_id="s1", task="Refund a double charge for Alice", outcome="success",
                narrative="Found the duplicate payment in the CRM. Asked for approval. Refunded it.", tools_used=["crm.lookup"],
            )
            similar = await bot.call("similar_episodes", task="Alice was charged twice; refund her")
            assert similar["results"][0]["episode"]["task"] == "Refund a double charge for Alice"

        async with connected(live_hub.url, actors.spy_key) as spy:
            assert (await spy.error("recall_tool_result", call_id="c1"))["code"] == "TOOL_CALL_NOT_FOUND"
            assert (await spy.error("load_checkpoint", session_id="s1"))["code"] == "SESSION_NOT_FOUND"
            assert (await spy.error("render_plan", session_id="s1"))["code"] == "SESSION_NOT_FOUND"
            assert (await spy.call("similar_episodes", task="Alice was charged twice; refund her"))["results"] == []

    asyncio.run(scenario())


def test_it_answers_agent_keys_only_and_the_hubs_hosts_only(actors: Actors, live_hub: LiveHub) -> None:
    def initialize(key: str | None, host: str | None = None, path: str = "/mcp") -> httpx.Response:
        headers = {**MCP_HEADERS, **({"Authorization": f"Bearer {key}"} if key else {}), **({"Host": host} if host else {})}
        return httpx.post(f"{live_hub.url}{path}", json=INITIALIZE, headers=headers, timeout=30)

    assert initialize(actors.bot_key).status_code == 200
    assert initialize(actors.bot_key, path="/mcp/").status_code == 200
    port = live_hub.url.rsplit(":", 1)[1]
    assert initialize(actors.bot_key, host=f"localhost:{port}").status_code == 200
    assert initialize(actors.bot_key, host=f"attacker.example:{port}").status_code == 421
    for key in (None, "mha_000000000000_nope", actors.owner_key):
        refused = initialize(key)
        assert refused.status_code == 401, (key, refused.text)
        assert refused.headers["www-authenticate"].startswith("Bearer")
    prefix = actors.bot_key.split("_")[1]
    api_key_revoke(key=AgentKey.objects.get(prefix=prefix))
    assert initialize(actors.bot_key).status_code == 401
    # The REST API and the console are still Django's.
    assert httpx.get(f"{live_hub.url}/healthz", timeout=30).status_code == 200
    assert httpx.get(f"{live_hub.url}/mcpx", timeout=30).status_code == 404


def test_it_runs_the_session_manager_under_a_lifespan_too(actors: Actors, transactional_db: None) -> None:
    # `make run` serves with --lifespan off (the other tests); a server that announces
    # start-up and shutdown starts the session manager then, and stops it cleanly.
    port = free_port()
    env = {**os.environ, "DATABASE_URL": hub_database_url(), "MEMORYHUB_RUN_SCHEDULER": "0", "REDIS_URL": ""}
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "memoryhub.asgi:application", "--port", str(port), "--lifespan", "on", "--log-level", "info"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        def up() -> bool:
            assert process.poll() is None, "the hub exited"
            try:
                return httpx.get(f"{url}/healthz", timeout=5).status_code == 200
            except httpx.HTTPError:
                return False

        assert poll(up, timeout=60, interval=0.2), "the hub did not start within 60 s"

        async def scenario() -> None:
            async with connected(url, actors.bot_key) as bot:
                assert TOOLS <= {tool.name for tool in (await bot.session.list_tools()).tools}

        asyncio.run(scenario())
    finally:
        stop_process(process)
    output = process.stdout.read() if process.stdout else ""
    assert "Application startup complete" in output and "Application shutdown complete" in output, output
    assert "Traceback" not in output, output
