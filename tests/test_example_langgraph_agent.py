"""examples/langgraph_support_agent.py end to end, as processes against a live hub: the
graph crashes on purpose after node 3, a fresh process resumes from MemoryHubSaver's
checkpoint without running nodes 1-3 again and interrupts on the refund, the test (as
the operator) edits the amount in the inbox, the graph finishes with an episode and a
lesson in MemoryHubStore, and the next ticket's graph recalls both (and its refund is
rejected)."""

from __future__ import annotations

import json

import pytest

from memoryhub_client import MemoryHub
from memoryhub_client.langgraph import MemoryHubSaver
from tests.agent_processes import LANGGRAPH_SUPPORT_AGENT, run_agent, run_with_decision
from tests.conftest import Actors, LiveHub

CRASH_EXIT_CODE = 3  # examples/support_agent.py's, which the LangGraph version shares
TOOLS = ["check_order", "issue_refund", "lookup_customer", "send_email"]


@pytest.mark.timeout(150)
def test_it_resumes_the_graph_after_a_crash_waits_for_the_inbox_and_learns_in_the_store(actors: Actors, live_hub: LiveHub) -> None:
    hub_options = {"hub_url": live_hub.url, "api_key": actors.bot_key}
    with MemoryHub(base_url=live_hub.url, api_key=actors.bot_key) as bot, MemoryHub(base_url=live_hub.url, api_key=actors.owner_key) as owner:
        crashed = run_agent(LANGGRAPH_SUPPORT_AGENT, ["--ticket", "T-1", "--crash-after-step", "3"], **hub_options)
        assert crashed.returncode == CRASH_EXIT_CODE, crashed.output
        assert "step 3 check_order: order 1042" in crashed.output and "step 4" not in crashed.output
        with MemoryHubSaver(base_url=live_hub.url, api_key=actors.bot_key) as saver:
            saved = saver.get_tuple({"configurable": {"thread_id": "lg-support-T-1"}})
        assert saved is not None and saved.checkpoint["channel_values"]["facts"]["total"] == 89.9

        # A fresh process resumes at the refund node, which interrupts until the operator decides.
        run, decided = run_with_decision(LANGGRAPH_SUPPORT_AGENT, ["--ticket", "T-1"], operator=owner, session_id="lg-support-T-1",
                                         decision="edit", args={"order": "1042", "amount": 50.0},
                                         reason="partial refund: the charger still works", **hub_options)
        assert run.returncode == 0, run.output
        assert "resumed thread lg-support-T-1" in run.output and "next refund" in run.output
        assert f"waiting for an operator to approve refund #{decided.id} (89.90 EUR)" in run.output
        assert not any(f"step {n} " in run.output for n in (1, 2, 3)), run.output  # finished nodes did not run again
        assert "step 4 refund: refund rf-1042 of 50.00 EUR (edit by" in run.output
        assert decided.requested_args == {"order": "1042", "amount": 89.9}

        calls = list(bot.tool_calls.iter("lg-support-T-1"))
        assert sorted(call.tool for call in calls) == TOOLS
        assert [a.id for a in owner.approvals.iter(session_id="lg-support-T-1")] == [decided.id]
        assert {step.step_id: step.status for step in bot.plans.get("lg-support-T-1").steps} == {
            "lookup_customer": "done", "check_order": "done", "refund": "done", "reply": "done", "learn": "done",
        }
        assert json.loads(bot.tool_calls.result("lg-support-T-1.refund").result)["amount"] == 50.0
        lookup = bot.tool_calls.result("lg-support-T-1.lookup_customer").result
        assert "maria.rossi@example.com" not in lookup and "555 0199" not in lookup
        [episode] = list(bot.episodes.iter())
        assert episode.outcome == "success" and episode.session_id == "lg-support-T-1" and episode.tools_used["issue_refund"] == 1
        lesson = bot.items.get(["lessons", "refunds"], "T-1")
        assert lesson is not None and "50.00 EUR" in lesson.value["lesson"]

        # The next ticket's graph recalls the lesson and the episode; its refund is rejected.
        run, _ = run_with_decision(LANGGRAPH_SUPPORT_AGENT, ["--ticket", "T-2"], operator=owner, session_id="lg-support-T-2",
                                   decision="reject", reason="already refunded by the courier", **hub_options)
        assert run.returncode == 1, run.output
        assert "step 1 recall: 1 past lesson(s), 1 past episode(s)" in run.output
        assert "step 4 refund: reject: already refunded by the courier" in run.output and "step 5" not in run.output
        [guidance] = [m for m in bot.sessions.iter_messages("lg-support-T-2") if m.role == "system"]
        assert "T-1" in guidance.content
        steps = {step.step_id: step.status for step in bot.plans.get("lg-support-T-2").steps}
        assert steps["refund"] == "failed" and steps["reply"] == "pending" and steps["learn"] == "done"
        assert bot.items.get(["lessons", "refunds"], "T-2").value["outcome"] == "failure"
