"""MCP's tools held as the REST API's endpoints are (tests/test_authorization_matrix.py,
tests/test_fuzz_schema.py): every tool, tried by an agent of a foreign workspace on this
workspace's objects named by their ids, reaches none of them and changes none of them;
every tool fuzzed with arguments drawn from its own input schema answers, or refuses in
the envelope, and never crashes; and the REST API's limits and rate limits hold here too."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import httpx
import schemathesis
from hypothesis import HealthCheck, given, settings

from memoryhub.core.registry import own_models
from tests.conftest import Actors, LiveHub, start_hub
from tests.test_mcp import connected

CANARY = "canary7q"  # in the content of every object of `acme` the foreign agent must not see
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "4"))

# Ids of acme's objects (no canary in them: an error may repeat the id it was given).
SESSION, CALL, USER = "acme-s1", "acme-call-1", "acme-user"

# Each tool with arguments naming acme's objects: what the foreign agent tries.
FOREIGN_CALLS: dict[str, dict[str, Any]] = {
    "store_memory": {"content": "intruder note", "user_id": USER, "key": "k1"},
    "search_memories": {"query": CANARY, "user_id": USER, "scope": "global"},
    "store_factual_memory": {"subject": "Ada", "predicate": "lives_in", "object": "Nowhere", "user_id": USER},
    "search_facts_by_subject": {"subject": "Ada", "user_id": USER, "include_invalidated": True},
    "store_episodic_memory": {"content": "intruder episode", "user_id": USER},
    "store_semantic_memory": {"concept": "Ada", "content": "intruder", "user_id": USER},
    "store_procedural_memory": {"task": "t", "steps": ["s"], "user_id": USER},
    "store_working_memory": {"content": "intruder", "user_id": USER, "key": "k1"},
    "get_active_working_memories": {"user_id": USER},
    "get_memory_statistics": {"user_id": USER},
    "start_session": {"session_id": SESSION, "user_id": USER},
    "record_tool_call": {"session_id": SESSION, "tool": "t", "call_id": CALL, "result": "intruder"},
    "recall_tool_result": {"call_id": CALL},
    "set_plan": {"session_id": SESSION, "goal": "take over", "steps": [{"step_id": "a", "description": "d"}]},
    "update_plan_step": {"session_id": SESSION, "step_id": "look", "status": "done"},
    "render_plan": {"session_id": SESSION},
    "save_checkpoint": {"session_id": SESSION, "state": {"owned": True}, "expected_version": 1},
    "load_checkpoint": {"session_id": SESSION},
    "request_approval": {"session_id": SESSION, "tool": "t", "args": {}},
    "get_approval": {"approval_id": 1},  # replaced by acme's approval id
    "get_memory_revisions": {"memory_id": "-"},  # replaced by acme's memory id
    "revert_memory": {"memory_id": "-", "revision": 1},
    "flag_memory": {"memory_id": "-", "reason": "doubtful"},
    "record_episode": {"user_id": USER, "task": "t", "outcome": "success", "narrative": "n", "session_id": SESSION},
    "similar_episodes": {"task": CANARY, "user_id": USER},
    "graph_add": {"subject": "Ada", "predicate": "lives_in", "object": "Nowhere", "user_id": USER},
    "graph_neighbors": {"entity": "Ada", "depth": 3, "user_id": USER},
    "graph_path": {"source": "Ada", "target": "Nowhere", "user_id": USER},
    "graph_grounding": {"text": "Where does Ada live?", "user_id": USER},
}


async def seed_acme(bot: Any) -> dict[str, Any]:
    """One of each object in acme, the canary in each; the ids a foreign agent will name."""
    await bot.call("start_session", session_id=SESSION, user_id=USER)
    memory = await bot.call("store_memory", content=f"{CANARY} prefers tea", user_id=USER, scope="shared", key="k1")
    await bot.call("store_memory", content=f"{CANARY} prefers green tea", user_id=USER, scope="shared", key="k1")  # a revision
    await bot.call("store_factual_memory", subject="Ada", predicate="lives_in", object=f"{CANARY} town", user_id=USER)
    await bot.call("store_working_memory", content=f"{CANARY} draft", user_id=USER, key="k1")
    await bot.call("record_tool_call", session_id=SESSION, tool="lookup", call_id=CALL, result=f"{CANARY} result")
    await bot.call("set_plan", session_id=SESSION, goal=f"{CANARY} goal", steps=[{"step_id": "look", "description": "Look"}])
    await bot.call("save_checkpoint", session_id=SESSION, state={"secret": CANARY}, expected_version=0)
    approval = await bot.call("request_approval", session_id=SESSION, tool="pay", args={"to": CANARY})
    await bot.call("record_episode", user_id=USER, task=f"{CANARY} task", outcome="success", narrative=f"{CANARY} story", session_id=SESSION)
    return {"approval_id": approval["id"], "memory_id": memory["id"]}


def acme_rows() -> dict[str, int]:
    from memoryhub.core.models import Workspace

    acme = Workspace.objects.get(slug="acme")
    return {
        model._meta.label: model.objects.filter(workspace=acme).count()
        for model in own_models() if any(f.name == "workspace" for f in model._meta.fields)
    }


def test_a_foreign_agent_reaches_nothing_of_this_workspace_through_any_tool(actors: Actors, live_hub: LiveHub) -> None:
    async def scenario() -> dict[str, Any]:
        async with connected(live_hub.url, actors.bot_key) as bot:
            ids = await seed_acme(bot)
        tools = {tool.name for tool in (await _tools(live_hub, actors.spy_key))}
        assert tools == set(FOREIGN_CALLS), "a tool without a foreign call here: add one"
        answers = {}
        async with connected(live_hub.url, actors.spy_key) as spy:
            for name, arguments in FOREIGN_CALLS.items():
                arguments = {**arguments, **{k: v for k, v in ids.items() if k in arguments}}
                result = await spy.session.call_tool(name, arguments)
                answers[name] = result.structured_content or [c.text for c in result.content]
        return answers

    before = acme_rows()
    answers = asyncio.run(scenario())
    after_seed = acme_rows()
    leaked = {name: answer for name, answer in answers.items() if CANARY in json.dumps(answer)}
    assert leaked == {}
    # The spy's writes landed in its own workspace: acme holds what the bot seeded, nothing more.
    assert after_seed == acme_rows()
    assert sum(after_seed.values()) > sum(before.values())


async def _tools(hub: LiveHub, key: str) -> list[Any]:
    async with connected(hub.url, key) as agent:
        return (await agent.session.list_tools()).tools


def test_no_tool_crashes_on_arguments_drawn_from_its_schema(actors: Actors, live_hub: LiveHub) -> None:
    tools = asyncio.run(_tools(live_hub, actors.bot_key))
    drawn = {tool.name: _arguments_drawn(tool.input_schema) for tool in tools}
    crashes: list[tuple[str, Any, str]] = []

    async def fuzz() -> None:
        async with connected(live_hub.url, actors.bot_key) as bot:
            await bot.call("start_session", session_id=SESSION, user_id=USER)
            for name, cases in drawn.items():
                for arguments in cases:
                    result = await bot.session.call_tool(name, arguments)
                    if result.is_error and not _refused_cleanly(result):
                        crashes.append((name, arguments, result.content[0].text[:300]))

    asyncio.run(fuzz())
    assert crashes == []


def _arguments_drawn(input_schema: dict[str, Any]) -> list[Any]:
    """EXAMPLES argument objects drawn from a tool's JSON Schema by schemathesis (as it
    draws the REST API's bodies): the schema made the body of a one-operation OpenAPI
    document, its `$defs` moved where such a document keeps them."""
    defs = input_schema.get("$defs", {})
    body = json.loads(json.dumps({k: v for k, v in input_schema.items() if k != "$defs"}).replace("#/$defs/", "#/components/schemas/"))
    components = json.loads(json.dumps(defs).replace("#/$defs/", "#/components/schemas/"))
    document = {
        "openapi": "3.1.0", "info": {"title": "tool", "version": "1"}, "components": {"schemas": components},
        "paths": {"/tool": {"post": {
            "requestBody": {"required": True, "content": {"application/json": {"schema": body}}},
            "responses": {"200": {"description": "the tool's answer"}},
        }}},
    }
    cases: list[Any] = []

    @given(schemathesis.openapi.from_dict(document)["/tool"]["POST"].as_strategy())
    @settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    def draw(case: Any) -> None:
        cases.append(case.body)

    draw()
    return cases


def _refused_cleanly(result: Any) -> bool:
    """An error in the hub's envelope, or the SDK's refusal of arguments that break the
    schema; anything else (an exception's text) is a crash."""
    if isinstance(result.structured_content, dict) and isinstance(result.structured_content.get("error"), dict):
        return True
    text = result.content[0].text if result.content else ""
    return "validation error" in text.lower()


def test_the_rest_apis_limits_and_budgets_hold_over_mcp(actors: Actors, transactional_db: None) -> None:
    # The built-in model priced ($1 a token), so that a budget has something to refuse.
    hub = start_hub({"MEMORYHUB_RATE_WRITES": "4/minute", "MEMORYHUB_PRICES": '{"local": {"input_per_million": 1000000}}'})
    owner = {"Authorization": f"Bearer {actors.owner_key}"}

    def usage() -> dict[str, Any]:
        return httpx.get(f"{hub.url}/api/v1/usage", headers=owner, timeout=30).json()["totals"]

    async def scenario() -> None:
        async with connected(hub.url, actors.bot_key) as bot:
            for user_id in ("", "   ", "x" * 300):
                assert "user_id" in json.dumps(await bot.error("store_memory", content="c", user_id=user_id))
            assert "65536 bytes" in json.dumps(await bot.error("store_memory", content="c", user_id="u1", metadata={"x": "y" * 70_000}))
            await bot.call("start_session", session_id="s1", user_id="u1")
            error = await bot.error("request_approval", session_id="s1", tool="t", args={"x": "y" * 300_000})
            assert error["code"] == "PAYLOAD_TOO_LARGE"
            # Writes: 4 a minute for this key, counted with the REST API's.
            rest = httpx.post(f"{hub.url}/api/v1/memories", json={"content": "over REST", "user_id": "u1"},
                              headers={"Authorization": f"Bearer {actors.bot_key}"}, timeout=30)
            assert rest.status_code == 201
            await bot.call("store_memory", content="one", user_id="u1")
            limited = await bot.error("store_memory", content="two", user_id="u1")
            assert limited["code"] == "RATE_LIMITED" and limited["details"]["retry_after"] >= 1
            # Reads have their own budget.
            assert (await bot.call("get_memory_statistics", user_id="u1"))
            # The model calls a tool makes are the agent's, counted and priced as over REST.
            before = usage()
            await bot.call("search_memories", query="Where does Ann live?", user_id="u1")
            after = usage()
            assert after["calls"] == before["calls"] + 1 and after["cost"] > before["cost"]
            # And held to the month's budget: spent, a priced call is refused over MCP too.
            assert httpx.put(f"{hub.url}/api/v1/settings/budget", json={"monthly_limit": after["cost"]}, headers=owner, timeout=30).status_code == 200
            refused = await bot.error("search_memories", query="Where does Bo live?", user_id="u1")
            assert refused["code"] == "BUDGET_EXCEEDED"
            assert (await bot.call("search_memories", query="Bo", mode="keyword", user_id="u1"))["results"] is not None  # no model: served

    try:
        asyncio.run(scenario())
    finally:
        hub.stop()

