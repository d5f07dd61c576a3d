"""examples/support_agent.py end to end, as processes against a live hub: it crashes on
purpose after step 2, a fresh process resumes from the checkpoint and waits for the
refund's approval, the test (as the operator) edits the amount, the task finishes
with an episode, and the next ticket's run starts from that episode's guidance."""

from __future__ import annotations

import json

import pytest

from memoryhub_client import MemoryHub
from tests.agent_processes import SUPPORT_AGENT, run_agent, run_with_decision
from tests.conftest import Actors, LiveHub, free_port

CRASH_EXIT_CODE = 3  # examples/support_agent.py's
TOOLS = ["check_order", "issue_refund", "lookup_customer", "send_email"]


@pytest.mark.timeout(120)
def test_it_crashes_resumes_without_redoing_steps_and_learns_from_its_episode(actors: Actors, live_hub: LiveHub) -> None:
    hub_options = {"hub_url": live_hub.url, "api_key": actors.bot_key}
    with MemoryHub(base_url=live_hub.url, api_key=actors.bot_key) as bot, MemoryHub(base_url=live_hub.url, api_key=actors.owner_key) as owner:
        crashed = run_agent(SUPPORT_AGENT, ["--ticket", "T-1", "--crash-after-step", "2"], **hub_options)
        assert crashed.returncode == CRASH_EXIT_CODE, crashed.output
        assert "step 2 check_order" in crashed.output and "step 3" not in crashed.output
        assert bot.checkpoints.latest("support-T-1").state["done"] == ["lookup_customer", "check_order"]

        # A fresh process resumes, skips steps 1-2, asks before refunding and waits.
        run, decided = run_with_decision(SUPPORT_AGENT, ["--ticket", "T-1"], operator=owner, session_id="support-T-1", decision="edit",
                                         args={"order": "1042", "amount": 50.0}, reason="partial refund: the charger still works",
                                         **hub_options)
        assert run.returncode == 0, run.output
        assert "resumed session support-T-1 from checkpoint v2" in run.output
        assert "step 1 lookup_customer: done before the restart, skipped" in run.output
        assert decided.requested_args == {"order": "1042", "amount": 89.9}

        # No step was done twice: one call of each tool, one approval, every step done.
        calls = list(bot.tool_calls.iter("support-T-1"))
        assert sorted(call.tool for call in calls) == TOOLS
        assert [a.id for a in owner.approvals.iter(session_id="support-T-1")] == [decided.id]
        assert {step.step_id: step.status for step in bot.plans.get("support-T-1").steps} == {
            "lookup_customer": "done", "check_order": "done", "refund": "done", "notify_customer": "done",
        }
        refund = json.loads(bot.tool_calls.result("support-T-1.refund").result)  # raw outputs come back as the text stored
        assert refund["amount"] == 50.0  # the operator's edit was what ran
        # The customer's email address and phone number are in the hub only redacted.
        lookup = bot.tool_calls.result("support-T-1.lookup_customer").result
        assert "maria.rossi@example.com" not in lookup and "555 0199" not in lookup
        assert "[EMAIL" in lookup and "[PHONE" in lookup
        [lookup_call] = [call for call in calls if call.tool == "lookup_customer"]
        assert lookup_call.redactions.get("EMAIL") == 1
        [episode] = list(bot.episodes.iter())
        assert episode.outcome == "success" and episode.session_id == "support-T-1" and episode.tools_used["issue_refund"] == 1

        # The next ticket starts from the episode's guidance.
        run, _ = run_with_decision(SUPPORT_AGENT, ["--ticket", "T-2"], operator=owner, session_id="support-T-2", decision="approve",
                                   **hub_options)
        assert run.returncode == 0, run.output
        assert "guidance from 1 past episode(s)" in run.output
        [guidance] = [m for m in bot.sessions.iter_messages("support-T-2") if m.role == "system"]
        assert "T-1" in guidance.content
        assert len(list(bot.episodes.iter())) == 2


def test_it_says_in_two_lines_that_no_hub_answers() -> None:
    # A hub started on another port than the example's: no traceback, but what to do.
    unreachable = f"http://127.0.0.1:{free_port()}"
    run = run_agent(SUPPORT_AGENT, ["--ticket", "T-1"], hub_url=unreachable, api_key="mha_not-asked-for")
    assert run.returncode == 2, run.output
    lines = run.output.strip().splitlines()
    assert len(lines) == 2 and "Traceback" not in run.output, run.output
    assert lines[0].startswith(f"error: no hub answers at {unreachable}")
    assert "PORT=9000 make example-agent" in lines[1]
