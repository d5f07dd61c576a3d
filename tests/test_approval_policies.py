"""Approval policies (docs/human-in-the-loop.md, "Policies"): several approvers, the first
reject, each approver once, escalation once; the agent sees the final decision only."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
import time_machine
from django.db import connection
from django.utils import timezone

from memoryhub.approvals.services import approvals_escalate
from memoryhub.core import services
from memoryhub.core.models import Role
from memoryhub.notifications.pump import deliveries_send
from memoryhub.notifications.services import EndpointInput, webhook_create
from memoryhub.timeline.models import Event
from tests.conftest import Actors, api_client, approver_key, assert_error
from tests.webhook_receiver import Receiver

ARGS = {"to": "ceo@example.com", "amount": 1200}


@pytest.fixture
def subscribed(actors: Actors, receiver: Receiver) -> Receiver:
    """The receiver, the endpoint of acme's approval events."""
    events = ["approval.requested", "approval.decided", "approval.escalated"]
    receiver.secrets.append(webhook_create(membership=actors.owner, item=EndpointInput(url=receiver.url, events=events)).secret)
    return receiver


def second_approver_key(actors: Actors) -> str:
    membership = services.operator_get_or_create(username="second", workspace=actors.workspace, role=Role.APPROVER)
    return services.operator_key_issue(membership=membership)[1]


def ask(actors: Actors, **policy: object) -> dict:
    bot = api_client(actors.bot_key)
    bot.post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1"}, format="json")
    asked = bot.post("/api/v1/approvals", {"session_id": "s1", "tool": "payments.send", "args": ARGS, **policy}, format="json")
    assert asked.status_code == 201, asked.content
    return asked.json()


def decide(key: str, approval_id: int, decision: str, **body: object) -> object:
    return api_client(key).post(f"/api/v1/approvals/{approval_id}/decision", {"decision": decision, **body}, format="json")


def test_two_approvers_must_approve_each_once(actors: Actors, subscribed: Receiver) -> None:
    receiver = subscribed
    approval = ask(actors, required_approvals=2)
    assert approval["required_approvals"] == 2 and approval["approvals"] == []
    first = decide(approver_key(actors), approval["id"], "approve")
    assert first.status_code == 200 and first.json()["status"] == "pending"
    assert [given["by"] for given in first.json()["approvals"]] == ["operator:reviewer"]
    assert_error(decide(approver_key(actors), approval["id"], "approve"), 409, "APPROVAL_ALREADY_APPROVED_BY_YOU")
    # The agent sees it pending, not half approved.
    seen = api_client(actors.bot_key).get(f"/api/v1/approvals/{approval['id']}").json()
    assert seen["status"] == "pending" and seen["decision"] is None
    final = decide(actors.owner_key, approval["id"], "approve").json()
    assert final["status"] == "approved" and final["decided_by"] == "operator:owner" and final["args"] == ARGS
    assert [given["by"] for given in final["approvals"]] == ["operator:reviewer", "operator:owner"]
    assert_error(decide(second_approver_key(actors), approval["id"], "approve"), 409, "APPROVAL_DECIDED")
    deliveries_send()
    assert sorted(got.json["type"] for got in receiver.received) == ["approval.decided", "approval.requested"]  # one decision announced
    assert Event.objects.filter(kind="approval", summary__contains="1 of 2 approvals").count() == 1


def test_the_first_reject_rejects(actors: Actors) -> None:
    approval = ask(actors, required_approvals=3)
    decide(approver_key(actors), approval["id"], "approve")
    rejected = decide(actors.owner_key, approval["id"], "reject", reason="Not this month.").json()
    assert rejected["status"] == "rejected" and [given["by"] for given in rejected["approvals"]] == ["operator:reviewer"]


def test_one_approver_cannot_edit_or_remember_for_several(actors: Actors) -> None:
    approval = ask(actors, required_approvals=2)
    assert_error(decide(actors.owner_key, approval["id"], "edit", args={"amount": 1}), 400, "HITL_DECISION")
    assert_error(decide(actors.owner_key, approval["id"], "approve", remember="tool"), 400, "HITL_DECISION")
    assert api_client(actors.bot_key).get(f"/api/v1/approvals/{approval['id']}").json()["status"] == "pending"


def test_a_remembered_approval_does_not_stand_in_for_several_approvers(actors: Actors) -> None:
    first = ask(actors)
    decide(actors.owner_key, first["id"], "approve", remember="tool")
    bot = api_client(actors.bot_key)
    again = bot.post("/api/v1/approvals", {"session_id": "s1", "tool": "payments.send", "args": ARGS}, format="json")
    assert again.status_code == 200 and again.json()["status"] == "approved"
    several = bot.post("/api/v1/approvals", {"session_id": "s1", "tool": "payments.send", "args": ARGS, "required_approvals": 2}, format="json")
    assert several.status_code == 201 and several.json()["status"] == "pending"


def test_two_approvers_at_once_decide_it_once(actors: Actors, transactional_db: None) -> None:
    approval = ask(actors, required_approvals=2)
    keys = [approver_key(actors), second_approver_key(actors)]
    answers: list[object] = []
    together = threading.Barrier(len(keys))

    def approve(key: str) -> None:
        together.wait(10)
        answers.append(decide(key, approval["id"], "approve"))
        connection.close()

    threads = [threading.Thread(target=approve, args=(key,)) for key in keys]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(answer.status_code for answer in answers) == [200, 200]  # type: ignore[attr-defined]
    final = api_client(actors.owner_key).get(f"/api/v1/approvals/{approval['id']}").json()
    assert final["status"] == "approved" and len(final["approvals"]) == 2
    assert Event.objects.filter(kind="approval", summary__contains=": approve by").count() == 1


def test_an_undecided_request_is_escalated_once(actors: Actors, subscribed: Receiver) -> None:
    receiver = subscribed
    approval = ask(actors, escalate_after=600)
    assert approvals_escalate() == 0
    with time_machine.travel(timezone.now() + timedelta(seconds=601), tick=False):
        assert approvals_escalate() == 1
        assert approvals_escalate() == 0
        deliveries_send()
    decided = ask(actors, escalate_after=600)
    decide(actors.owner_key, decided["id"], "approve")
    with time_machine.travel(timezone.now() + timedelta(seconds=601), tick=False):
        assert approvals_escalate() == 0  # decided in time: nothing to escalate
    escalated = [got.json for got in receiver.received if got.json["type"] == "approval.escalated"]
    assert len(escalated) == 1 and escalated[0]["data"]["approval_id"] == str(approval["id"])
    body = api_client(actors.owner_key).get(f"/api/v1/approvals/{approval['id']}").json()
    assert body["escalated_at"] is not None and body["status"] == "pending"
