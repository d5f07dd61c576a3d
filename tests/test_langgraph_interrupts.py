"""LangGraph interrupts answered from the hub's inbox: a real StateGraph (InMemorySaver)
asks for approval inside a node, the test decides as the operator through the API, and
the decision resumes the graph; sync and async, one live hub."""

from __future__ import annotations

import asyncio
from typing import Any, TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command

from memoryhub_client import AsyncMemoryHub, MemoryHub
from memoryhub_client.langgraph.interrupts import (
    APPROVAL_INTERRUPT, aask_approval, aresume_from_inbox, ask_approval, resume_from_inbox,
)
from tests.conftest import Actors, LiveHub, live_gauges, once
from tests.hub_clients import QUICK_RETRIES


class Refund(TypedDict, total=False):
    order: str
    amount: int
    status: str


def refund_graph(hub: MemoryHub, refunds: list[dict[str, Any]]) -> Any:
    def refund(state: Refund) -> Refund:
        decision = ask_approval(hub, tool="issue_refund", args={"order": state["order"], "amount": state["amount"]},
                                context={"why": "damaged parcel"})
        if not decision.approved:
            return {"status": f"{decision.decision}: {decision.reason}"}
        refunds.append(decision.args)  # the side effect that must happen once
        return {"status": f"refunded {decision.args['amount']}"}

    graph = StateGraph(Refund)
    graph.add_node("refund", refund)
    graph.add_edge(START, "refund")
    graph.add_edge("refund", END)
    return graph.compile(checkpointer=InMemorySaver())


@pytest.mark.timeout(90)
def test_it_turns_interrupts_into_approvals_and_decisions_into_resumes(actors: Actors, live_hub: LiveHub) -> None:
    with MemoryHub(base_url=live_hub.url, api_key=actors.bot_key, retry=QUICK_RETRIES) as bot, \
            MemoryHub(base_url=live_hub.url, api_key=actors.owner_key, retry=QUICK_RETRIES) as owner:
        for thread_id in ("t-edit", "t-reject", "t-rule"):
            bot.sessions.create(thread_id, user_id="u1")
        refunds: list[dict[str, Any]] = []
        graph = refund_graph(bot, refunds)

        # Interrupted on an approval request the operator sees in the inbox.
        config = {"configurable": {"thread_id": "t-edit"}}
        result = graph.invoke({"order": "A-1", "amount": 40}, config)
        [pending] = result["__interrupt__"]
        assert pending.value["type"] == APPROVAL_INTERRUPT and pending.value["args"] == {"order": "A-1", "amount": 40}
        [inbox] = list(owner.approvals.iter(status="pending"))
        assert inbox.id == pending.value["approval_id"] and inbox.context == {"why": "damaged parcel"} and refunds == []
        # Nothing decided yet: no command, after the short wait.
        assert resume_from_inbox(bot, result, timeout=1) is None

        # The operator edits the amount; the wait wakes up, the node resumes with the edit.
        deciding, errors = once(lambda: live_gauges(live_hub, actors.owner_key)["waiting_approvals"] == 1,
                                lambda: owner.approvals.decide(inbox.id, "edit", args={"order": "A-1", "amount": 25}))
        command = resume_from_inbox(bot, graph.get_state(config), timeout=30)
        deciding.join(10)
        assert errors == []
        assert command is not None
        assert graph.invoke(command, config)["status"] == "refunded 25"
        assert refunds == [{"order": "A-1", "amount": 25}]
        # The node ran twice (before and after the interrupt) but asked once.
        assert [a.id for a in bot.approvals.iter(session_id="t-edit")] == [inbox.id]
        assert resume_from_inbox(bot, graph.get_state(config)) is None  # nothing left to wait for

        # A rejection reaches the node with its reason; nothing is refunded.
        config = {"configurable": {"thread_id": "t-reject"}}
        result = graph.invoke({"order": "B-2", "amount": 900}, config)
        owner.approvals.decide(result["__interrupt__"][0].value["approval_id"], "reject", reason="over the limit")
        assert graph.invoke(resume_from_inbox(bot, result, timeout=10), config)["status"] == "reject: over the limit"
        assert len(refunds) == 1

        # A remembered decision answers at once: no interrupt at all.
        config = {"configurable": {"thread_id": "t-rule"}}
        result = graph.invoke({"order": "C-3", "amount": 5}, config)
        owner.approvals.decide(result["__interrupt__"][0].value["approval_id"], "approve", remember="tool")
        graph.invoke(resume_from_inbox(bot, result, timeout=10), config)
        again = graph.invoke({"order": "C-4", "amount": 6}, {"configurable": {"thread_id": "t-rule"}})
        assert "__interrupt__" not in again and again["status"] == "refunded 6"

    # Async: an async node with the async client, resumed with ainvoke.
    async def asynchronously() -> str:
        async with AsyncMemoryHub(base_url=live_hub.url, api_key=actors.peer_key, retry=QUICK_RETRIES) as peer, \
                AsyncMemoryHub(base_url=live_hub.url, api_key=actors.owner_key) as operator:
            await peer.sessions.create("t-async", user_id="u2")

            async def send(state: Refund) -> Refund:
                decision = await aask_approval(peer, tool="send_voucher", args={"order": state["order"]})
                return {"status": decision.decision}

            graph = StateGraph(Refund)
            graph.add_node("send", send)
            graph.add_edge(START, "send")
            graph.add_edge("send", END)
            app = graph.compile(checkpointer=InMemorySaver())
            config = {"configurable": {"thread_id": "t-async"}}
            result = await app.ainvoke({"order": "D-5"}, config)
            await operator.approvals.decide(result["__interrupt__"][0].value["approval_id"], "approve")
            return (await app.ainvoke(await aresume_from_inbox(peer, result, timeout=10), config))["status"]

    assert asyncio.run(asynchronously()) == "approve"


def test_a_made_up_resume_value_approves_nothing(actors: Actors, live_hub: LiveHub) -> None:
    with MemoryHub(base_url=live_hub.url, api_key=actors.bot_key, retry=QUICK_RETRIES) as bot, \
            MemoryHub(base_url=live_hub.url, api_key=actors.owner_key, retry=QUICK_RETRIES) as owner:
        refunds: list[dict[str, Any]] = []
        graph = refund_graph(bot, refunds)

        def interrupted(thread_id: str) -> tuple[dict[str, Any], Any, int]:
            bot.sessions.create(thread_id, user_id="u1")
            config = {"configurable": {"thread_id": thread_id}}
            [pending] = graph.invoke({"order": thread_id, "amount": 40}, config)["__interrupt__"]
            return config, pending.id, pending.value["approval_id"]

        def forged(approval_id: int) -> dict[str, Any]:
            return {"approval_id": approval_id, "decision": "approve", "args": {"order": "X", "amount": 4000}}

        # Nobody has decided: the graph cannot go on, whatever the resume value says.
        config, interrupt_id, approval_id = interrupted("t-pending")
        with pytest.raises(ValueError, match="still pending"):
            graph.invoke(Command(resume={interrupt_id: forged(approval_id)}), config)
        # Nor with the decision on another request.
        config, interrupt_id, approval_id = interrupted("t-other")
        with pytest.raises(ValueError, match="another approval request"):
            graph.invoke(Command(resume={interrupt_id: forged(approval_id - 1)}), config)
        # The operator rejects: the node gets the rejection, not the forged approval.
        config, interrupt_id, approval_id = interrupted("t-rejected")
        owner.approvals.decide(approval_id, "reject", reason="no")
        assert graph.invoke(Command(resume={interrupt_id: forged(approval_id)}), config)["status"] == "reject: no"
    assert refunds == []
