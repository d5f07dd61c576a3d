"""Human in the loop over the API (docs/api.md, "Approvals"): agents ask, approvers decide (exactly
one decision wins), remembered decisions answer at once, nothing is approved by
default."""

from __future__ import annotations

import threading
from datetime import timedelta

from django.db import connection
from django.utils import timezone

from memoryhub.approvals.models import Approval, ApprovalRule
from memoryhub.approvals.services import approvals_expire
from memoryhub.core.models import AuditEntry
from memoryhub.timeline.models import Event
from tests.conftest import Actors, api_client, assert_error

ARGS = {"to": "ceo@example.com", "amount": 1200}


def ask(actors: Actors, **body: object) -> object:
    bot = api_client(actors.bot_key)
    bot.post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1"}, format="json")
    return bot.post("/api/v1/approvals", {"session_id": "s1", "tool": "payments.send", "args": ARGS, **body}, format="json")


def decide(key: str, approval_id: int, decision: str, **body: object) -> object:
    return api_client(key).post(f"/api/v1/approvals/{approval_id}/decision", {"decision": decision, **body}, format="json")


def test_an_agent_asks_and_finds_its_pending_request_again(actors: Actors) -> None:
    asked = ask(actors, context={"why": "a payment above 1000"}, expires_in=600)
    assert asked.status_code == 201, asked.content
    body = asked.json()
    assert body["status"] == "pending" and body["allowed_decisions"] == ["approve", "edit", "reject", "suspend"]
    bot = api_client(actors.bot_key)
    pending = bot.get("/api/v1/approvals", {"session_id": "s1", "status": "pending"}).json()["results"]
    assert [a["id"] for a in pending] == [body["id"]]
    assert bot.get(f"/api/v1/approvals/{body['id']}").json()["context"] == {"why": "a payment above 1000"}
    assert Event.objects.filter(kind="approval", session_id="s1").count() == 1


def test_approvers_decide_once_and_agents_get_the_decision(actors: Actors) -> None:
    approval = ask(actors).json()
    assert_error(decide(actors.teammate_key, approval["id"], "approve"), 403, "FORBIDDEN")  # a viewer
    assert_error(decide(actors.bot_key, approval["id"], "approve"), 403, "FORBIDDEN")
    assert_error(decide(actors.outsider_key, approval["id"], "approve"), 404, "APPROVAL_NOT_FOUND")
    decided = decide(actors.owner_key, approval["id"], "reject", reason="Too large; ask for 500.")
    assert decided.status_code == 200 and decided.json()["status"] == "rejected"
    error = assert_error(decide(actors.owner_key, approval["id"], "approve"), 409, "APPROVAL_DECIDED")
    assert error["details"]["decided_by"] == "operator:owner"
    seen = api_client(actors.bot_key).get(f"/api/v1/approvals/{approval['id']}").json()
    assert (seen["status"], seen["reason"], seen["decided_by"]) == ("rejected", "Too large; ask for 500.", "operator:owner")
    assert AuditEntry.objects.filter(action="approval_decided", actor="operator:owner").count() == 1


def test_edits_must_satisfy_the_response_schema_and_allowed_decisions_hold(actors: Actors) -> None:
    schema = {"type": "object", "properties": {"amount": {"type": "integer", "maximum": 1000}}, "required": ["amount"]}
    approval = ask(actors, allowed_decisions=["approve", "edit"], response_schema=schema).json()
    assert_error(decide(actors.owner_key, approval["id"], "reject"), 400, "HITL_DECISION")
    assert_error(decide(actors.owner_key, approval["id"], "edit", args=[1]), 400, "HITL_DECISION")
    assert_error(decide(actors.owner_key, approval["id"], "edit", args={"amount": 5000}), 400, "HITL_SCHEMA")
    edited = decide(actors.owner_key, approval["id"], "edit", args={"to": "ceo@example.com", "amount": 900}).json()
    assert edited["status"] == "edited" and edited["args"]["amount"] == 900 and edited["requested_args"] == ARGS


def test_an_expired_request_is_never_approved(actors: Actors) -> None:
    approval = ask(actors, expires_in=60).json()
    Approval.objects.filter(pk=approval["id"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    bot = api_client(actors.bot_key)
    # Expired from its expiry on, before the periodic sweep has recorded it.
    assert bot.get(f"/api/v1/approvals/{approval['id']}").json()["status"] == "expired"
    assert bot.get("/api/v1/approvals", {"status": "pending"}).json()["results"] == []
    assert [a["id"] for a in bot.get("/api/v1/approvals", {"status": "expired"}).json()["results"]] == [approval["id"]]
    assert_error(decide(actors.owner_key, approval["id"], "approve"), 409, "APPROVAL_EXPIRED")
    assert approvals_expire() == 1
    assert api_client(actors.bot_key).get(f"/api/v1/approvals/{approval['id']}").json()["status"] == "expired"
    assert_error(decide(actors.owner_key, approval["id"], "approve"), 409, "APPROVAL_DECIDED")


def test_remembered_decisions_answer_at_once_and_can_be_revoked(actors: Actors) -> None:
    first = ask(actors).json()
    decide(actors.owner_key, first["id"], "approve", remember="exact")
    again = ask(actors, args={"amount": 1200, "to": "ceo@example.com"})  # other key order: the same args
    assert again.status_code == 200 and again.json()["status"] == "approved" and again.json()["rule"]
    assert ask(actors, args={"to": "ceo@example.com", "amount": 1}).status_code == 201  # other args: a human decides
    other = ask(actors, tool="payments.refund").json()
    decide(actors.owner_key, other["id"], "reject", reason="No refunds.", remember="tool")
    refused = ask(actors, tool="payments.refund", args={"anything": True}).json()
    assert (refused["status"], refused["reason"]) == ("rejected", "No refunds.")
    rules = api_client(actors.teammate_key).get("/api/v1/approval-rules").json()["results"]
    assert {(r["tool"], r["match"]) for r in rules} == {("payments.send", "exact"), ("payments.refund", "tool")}
    assert_error(api_client(actors.teammate_key).delete(f"/api/v1/approval-rules/{rules[0]['id']}"), 403, "FORBIDDEN")
    assert api_client(actors.owner_key).delete(f"/api/v1/approval-rules/{rules[0]['id']}").status_code == 204
    assert ask(actors, tool="payments.refund", args={"anything": True}).status_code == 201
    assert ApprovalRule.objects.count() == 1


def test_two_operators_at_once_one_wins(actors: Actors, transactional_db: None) -> None:
    from memoryhub.core import services
    from memoryhub.core.models import Role

    other = services.operator_get_or_create(username="second", workspace=actors.workspace, role=Role.APPROVER)
    _, second_key = services.operator_key_issue(membership=other)
    approval = ask(actors).json()
    start, answers = threading.Barrier(2), []

    def run(key: str, decision: str) -> None:
        start.wait()
        try:
            answers.append(decide(key, approval["id"], decision).status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(actors.owner_key, "approve")), threading.Thread(target=run, args=(second_key, "reject"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(answers) == [200, 409]
    assert Approval.objects.get().status in ("approved", "rejected")


def test_bad_requests_change_nothing(actors: Actors) -> None:
    bot = api_client(actors.bot_key)
    bot.post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1"}, format="json")
    for body in ({"session_id": "s1", "tool": "t", "args": [1]}, {"session_id": "s1", "tool": "t", "args": {}, "allowed_decisions": ["maybe"]},
                 {"session_id": "s1", "tool": "t", "args": {}, "response_schema": {"type": "nonsense"}}, {"session_id": "s1", "tool": "t", "args": {}, "expires_in": 0}):
        response = bot.post("/api/v1/approvals", body, format="json")
        assert response.status_code == 400, (body, response.content)
    assert_error(bot.post("/api/v1/approvals", {"session_id": "s1", "tool": "t", "args": {"x": "y" * 300_000}}, format="json"), 413, "PAYLOAD_TOO_LARGE")
    assert_error(bot.post("/api/v1/approvals", {"session_id": "nope", "tool": "t", "args": {}}, format="json"), 404, "SESSION_NOT_FOUND")
    assert_error(api_client(actors.spy_key).post("/api/v1/approvals", {"session_id": "s1", "tool": "t", "args": {}}, format="json"), 404, "SESSION_NOT_FOUND")
    assert_error(bot.get("/api/v1/approvals/999999"), 404, "APPROVAL_NOT_FOUND")
    assert not Approval.objects.exists()


def test_a_retried_request_is_one_request(actors: Actors) -> None:
    bot = api_client(actors.bot_key)
    bot.post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1"}, format="json")
    body = {"session_id": "s1", "tool": "t", "args": {"a": 1}}
    first = bot.post("/api/v1/approvals", body, format="json", HTTP_IDEMPOTENCY_KEY="ask-1")
    retry = bot.post("/api/v1/approvals", body, format="json", HTTP_IDEMPOTENCY_KEY="ask-1")
    assert first.json()["id"] == retry.json()["id"] and Approval.objects.count() == 1


def test_a_remembered_decision_applies_where_it_was_scoped(actors: Actors) -> None:
    first = ask(actors).json()
    decide(actors.owner_key, first["id"], "approve", remember="tool", remember_scope="session")
    assert ask(actors).json()["status"] == "approved"  # the same session
    bot = api_client(actors.bot_key)
    bot.post("/api/v1/sessions", {"session_id": "s2", "user_id": "u1"}, format="json")
    elsewhere = bot.post("/api/v1/approvals", {"session_id": "s2", "tool": "payments.send", "args": ARGS}, format="json")
    assert elsewhere.status_code == 201  # another session: a human decides
    decide(actors.owner_key, elsewhere.json()["id"], "reject", remember="tool", remember_scope="agent")
    peer = api_client(actors.peer_key)
    peer.post("/api/v1/sessions", {"session_id": "p1", "user_id": "u1"}, format="json")
    assert peer.post("/api/v1/approvals", {"session_id": "p1", "tool": "payments.send", "args": ARGS}, format="json").status_code == 201
    bot.post("/api/v1/sessions", {"session_id": "s3", "user_id": "u1"}, format="json")
    assert bot.post("/api/v1/approvals", {"session_id": "s3", "tool": "payments.send", "args": ARGS}, format="json").json()["status"] == "rejected"
    scopes = {r["scope"] for r in api_client(actors.owner_key).get("/api/v1/approval-rules").json()["results"]}
    assert scopes == {"session", "agent"}


def test_it_pauses_a_suspended_session_until_an_approver_reactivates_it(actors: Actors) -> None:
    approval = ask(actors).json()
    api_client(actors.bot_key).post("/api/v1/sessions/s1/checkpoints", {"expected_version": 0, "state": {"step": 1}}, format="json")
    suspended = decide(actors.owner_key, approval["id"], "suspend", reason="Checking with finance.").json()
    assert suspended["status"] == "suspended"
    bot = api_client(actors.bot_key)
    session = bot.get("/api/v1/sessions/s1").json()
    assert session["suspended_at"] and session["suspended_by"] == "operator:owner"
    error = assert_error(ask(actors), 409, "SESSION_SUSPENDED")
    assert error["details"]["suspended_by"] == "operator:owner"
    assert_error(bot.post("/api/v1/sessions/s1/resume", {}, format="json"), 409, "SESSION_SUSPENDED")
    assert bot.post("/api/v1/sessions/s1/messages", {"role": "assistant", "content": "Paused."}, format="json").status_code == 201

    assert_error(bot.post("/api/v1/sessions/s1/reactivate"), 403, "FORBIDDEN")
    assert_error(api_client(actors.teammate_key).post("/api/v1/sessions/s1/reactivate"), 403, "FORBIDDEN")  # a viewer
    assert_error(api_client(actors.outsider_key).post("/api/v1/sessions/s1/reactivate"), 404, "SESSION_NOT_FOUND")
    reactivated = api_client(actors.owner_key).post("/api/v1/sessions/s1/reactivate")
    assert reactivated.status_code == 200 and reactivated.json()["suspended_at"] is None
    assert_error(api_client(actors.owner_key).post("/api/v1/sessions/s1/reactivate"), 409, "SESSION_NOT_SUSPENDED")
    assert ask(actors).status_code == 201
    assert AuditEntry.objects.filter(action="session_reactivated", actor="operator:owner").count() == 1
    assert list(Event.objects.filter(session_id="s1", kind="run").values_list("summary", flat=True).order_by("id"))[-2:] == [
        "Session suspended by operator:owner: Checking with finance.",
        "Session reactivated by operator:owner.",
    ]
