"""Retention policies per workspace and kind, and the job that enforces them."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memoryhub.approvals.models import Approval
from memoryhub.checkpoints.models import Checkpoint
from memoryhub.compliance.models import RetentionRun
from memoryhub.compliance.retention import retention_enforce
from memoryhub.compliance.tasks import enforce_retention
from memoryhub.conversations.models import Message, Session
from memoryhub.core.errors import ApplicationError
from memoryhub.privacy.selectors import retention_policies
from memoryhub.privacy.services import retention_policy_set
from memoryhub.tools.models import ToolCall, ToolResult
from tests.conftest import Actors, api_client, assert_error


def age(model: type, days: int, **filters: object) -> None:
    past = timezone.now() - timedelta(days=days)
    model.objects.filter(**filters).update(created_at=past, **({"updated_at": past} if model is Session else {}))


def session_with(client: object, session_id: str, user_id: str = "u1") -> None:
    client.post("/api/v1/sessions", {"session_id": session_id, "user_id": user_id}, format="json")
    client.post(f"/api/v1/sessions/{session_id}/messages", {"messages": [{"role": "user", "content": "hi"}]}, format="json")


def test_defaults_come_from_the_settings(actors: Actors) -> None:
    assert retention_policies(workspace_id=actors.workspace.pk) == {
        "tool_outputs": None, "checkpoints": 50, "working_memories": 1, "sessions": None, "approvals": None, "usage": 90,
    }


def test_it_refuses_nonsense_limits(actors: Actors) -> None:
    for kind, value in (("tool_outputs", 0), ("checkpoints", None), ("nothing", 3)):
        with pytest.raises(ApplicationError):
            retention_policy_set(membership=actors.owner, kind=kind, value=value)
    assert retention_policies(workspace_id=actors.workspace.pk)["checkpoints"] == 50


def test_it_drops_old_raw_tool_outputs_and_keeps_their_summaries(actors: Actors) -> None:
    bot = api_client(actors.bot_key)
    session_with(bot, "s1")
    for call_id in ("old", "new"):
        bot.post("/api/v1/sessions/s1/tool-calls", {"call_id": call_id, "tool": "t", "result": f"{call_id} output " * 50}, format="json")
    age(ToolResult, 40, call__call_id="old")
    spy = api_client(actors.spy_key)
    session_with(spy, "g1")
    spy.post("/api/v1/sessions/g1/tool-calls", {"call_id": "foreign", "tool": "t", "result": "globex output"}, format="json")
    age(ToolResult, 40, call__call_id="foreign")

    assert enforce_retention() == 0  # no policy: kept forever
    retention_policy_set(membership=actors.owner, kind="tool_outputs", value=30)
    assert enforce_retention() == 1
    assert_error(bot.get("/api/v1/tool-calls/old/result"), 410, "TOOL_OUTPUT_EXPIRED")
    assert bot.get("/api/v1/tool-calls/new/result").status_code == 200
    assert ToolCall.objects.get(call_id="old").result_summary.startswith("old output")
    assert ToolResult.objects.filter(call__call_id="foreign").exists()  # globex has no such policy
    run = RetentionRun.objects.get()
    assert run.workspace == actors.workspace and run.counts == {"tool_outputs": 1}


def test_it_keeps_the_newest_checkpoints_the_workspace_asks_for(actors: Actors) -> None:
    for client, session_id in ((api_client(actors.bot_key), "s1"), (api_client(actors.spy_key), "g1")):
        session_with(client, session_id)
        for version in range(6):
            client.post(f"/api/v1/sessions/{session_id}/checkpoints", {"expected_version": version, "state": {"v": version}}, format="json")
    retention_policy_set(membership=actors.owner, kind="checkpoints", value=2)
    [run] = retention_enforce()
    assert run.counts == {"checkpoints": 4}
    assert sorted(Checkpoint.objects.filter(session__session_id="s1").values_list("version", flat=True)) == [5, 6]
    assert Checkpoint.objects.filter(session__session_id="g1").count() == 6


def test_it_deletes_sessions_idle_longer_than_the_limit(actors: Actors) -> None:
    bot = api_client(actors.bot_key)
    for session_id in ("idle", "busy", "fresh"):
        session_with(bot, session_id)
    age(Session, 100, session_id__in=["idle", "busy"])
    age(Message, 100, session__session_id="idle")
    retention_policy_set(membership=actors.owner, kind="sessions", value=90)
    [run] = retention_enforce()
    assert run.counts == {"sessions": 1}
    assert sorted(Session.objects.values_list("session_id", flat=True)) == ["busy", "fresh"]  # busy had a message today
    assert not Message.objects.filter(session__session_id="idle").exists()
    # A new session under the old id starts with a timeline of its own.
    session_with(bot, "idle")
    kinds = [e["kind"] for e in bot.get("/api/v1/sessions/idle/timeline", {"limit": 200}).json()["results"]]
    assert kinds.count("run") == 1, kinds


def test_working_memories_live_as_long_as_the_workspace_says(actors: Actors) -> None:
    retention_policy_set(membership=actors.owner, kind="working_memories", value=24)
    bot = api_client(actors.bot_key)
    entry = bot.post("/api/v1/memories", {"content": "editing chapter 3", "user_id": "u1", "memory_type": "working"}, format="json").json()
    expires = timezone.datetime.fromisoformat(entry["expires_at"])
    assert timedelta(hours=23, minutes=59) < expires - timezone.now() <= timedelta(hours=24)
    foreign = api_client(actors.spy_key).post("/api/v1/memories", {"content": "x", "user_id": "u1", "memory_type": "working"}, format="json").json()
    assert timezone.datetime.fromisoformat(foreign["expires_at"]) - timezone.now() <= timedelta(hours=1)


def test_it_deletes_decided_approvals_older_than_the_limit_and_keeps_pending_ones(actors: Actors) -> None:
    bot, owner = api_client(actors.bot_key), api_client(actors.owner_key)
    session_with(bot, "s1")
    ids = {}
    for name in ("old decided", "new decided", "old pending"):
        ids[name] = bot.post("/api/v1/approvals", {"session_id": "s1", "tool": name, "args": {}}, format="json").json()["id"]
    for name in ("old decided", "new decided"):
        owner.post(f"/api/v1/approvals/{ids[name]}/decision", {"decision": "approve"}, format="json")
    Approval.objects.filter(pk=ids["old decided"]).update(decided_at=timezone.now() - timedelta(days=8))
    Approval.objects.filter(pk=ids["old pending"]).update(created_at=timezone.now() - timedelta(days=8))

    assert enforce_retention() == 0  # no policy: kept forever
    retention_policy_set(membership=actors.owner, kind="approvals", value=7)
    assert enforce_retention() == 1
    assert set(Approval.objects.values_list("tool", flat=True)) == {"new decided", "old pending"}
    assert RetentionRun.objects.get().counts == {"approvals": 1}
