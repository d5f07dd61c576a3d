"""Deliveries (memoryhub/notifications/services.py): what an event sends, to whom, signed
how, and what happens when the receiver fails, slows down, redirects or is gone.

The pump is run by the test (`deliveries_send`), in the test's transaction: the receiver
is a real HTTP server on 127.0.0.1, the clock is moved by time-machine, not waited out."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.db import transaction
from django.utils import timezone

from memoryhub.approvals.services import ApprovalInput, approval_request
from memoryhub.conversations.models import Session
from memoryhub.core.models import AuditEntry
from memoryhub.core.jobs import JobStatus
from memoryhub.notifications.models import WebhookDelivery, WebhookEndpoint
from memoryhub.notifications.pump import deliveries_resume, deliveries_send, deliveries_sweep
from memoryhub.notifications.services import EndpointInput, webhook_create, webhook_secret_rotate, webhook_test
from memoryhub.timeline.models import Event
from tests.conftest import Actors, api_client
from tests.webhook_receiver import Answer, Receiver

ARGS = {"order": "A-1", "amount": 120, "card": "4111 1111 1111 1111"}


def endpoint_for(actors: Actors, receiver: Receiver, **fields: object) -> WebhookEndpoint:
    item = EndpointInput(url=receiver.url, events=["approval.requested", "approval.decided"], **fields)  # type: ignore[arg-type]
    endpoint = webhook_create(membership=actors.owner, item=item)
    receiver.secrets.append(endpoint.secret)
    return endpoint


def ask(actors: Actors, session_id: str = "s1") -> dict:
    bot = api_client(actors.bot_key)
    bot.post("/api/v1/sessions", {"session_id": session_id, "user_id": "maria"}, format="json")
    asked = bot.post("/api/v1/approvals", {"session_id": session_id, "tool": "refund", "args": ARGS, "context": "duplicate charge"}, format="json")
    assert asked.status_code == 201, asked.content
    return asked.json()


def test_it_announces_an_approval_signed_with_names_and_link_but_no_content(actors: Actors, receiver: Receiver) -> None:
    endpoint_for(actors, receiver)
    approval = ask(actors)
    assert deliveries_send() == 1
    [got] = receiver.received
    assert got.verified, got.headers
    assert got.headers["webhook-id"].startswith("msg_") and got.headers["content-type"] == "application/json"
    body = got.json
    assert body["type"] == "approval.requested" and body["timestamp"].endswith("Z")
    assert body["data"] == {
        "workspace": "acme", "approval_id": str(approval["id"]), "status": "pending", "tool": "refund", "agent": "bot",
        "session_id": "s1", "url": f"https://hub.example.com/approvals/{approval['id']}/", "expires_at": None,
    }
    assert "4111" not in got.body.decode() and "maria" not in got.body.decode()
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == (JobStatus.DONE, 1, 200)


def test_it_sends_what_an_approver_reads_only_to_endpoints_that_ask_for_content(actors: Actors, receiver: Receiver) -> None:
    endpoint_for(actors, receiver, include_content=True)
    endpoint_for(actors, receiver)
    ask(actors)
    assert deliveries_send() == 2
    bodies = sorted((got.json for got in receiver.received), key=lambda body: "args" in body["data"])
    assert "args" not in bodies[0]["data"]
    assert bodies[1]["data"]["args"] == ARGS and bodies[1]["data"]["context"] == "duplicate charge"
    # One message, two endpoints: one id, so a receiver behind both sees it once.
    assert len({got.headers["webhook-id"] for got in receiver.received}) == 1


def test_it_sends_only_the_events_an_endpoint_wants_of_its_own_workspace(actors: Actors, receiver: Receiver) -> None:
    webhook_create(membership=actors.owner, item=EndpointInput(url=receiver.url, events=["purge.completed"]))
    webhook_create(membership=actors.outsider, item=EndpointInput(url=receiver.url, events=["approval.requested"]))
    disabled = endpoint_for(actors, receiver)
    WebhookEndpoint.objects.filter(pk=disabled.pk).update(enabled=False)
    ask(actors)
    assert deliveries_send() == 0
    assert receiver.received == [] and not WebhookDelivery.objects.exists()


def test_a_decision_is_announced_with_who_decided(actors: Actors, receiver: Receiver) -> None:
    endpoint_for(actors, receiver)
    approval = ask(actors)
    api_client(actors.owner_key).post(f"/api/v1/approvals/{approval['id']}/decision", {"decision": "approve"}, format="json")
    assert deliveries_send() == 2
    decided = next(got.json for got in receiver.received if got.json["type"] == "approval.decided")
    assert decided["data"]["status"] == "approved" and decided["data"]["decided_by"] == "operator:owner"


def test_a_failing_receiver_is_retried_on_schedule_under_the_same_message_id(actors: Actors, receiver: Receiver, settings: object) -> None:
    settings.MEMORYHUB_WEBHOOK_RETRY_SCHEDULE = [10.0, 60.0]  # type: ignore[attr-defined]
    receiver.answer = lambda index: Answer(500 if index < 2 else 204)
    endpoint_for(actors, receiver)
    ask(actors)
    with time_machine.travel(timezone.now(), tick=False) as clock:
        assert deliveries_send() == 1
        delivery = WebhookDelivery.objects.get()
        assert (delivery.status, delivery.attempts, delivery.last_status_code, delivery.error) == (JobStatus.QUEUED, 1, 500, "HTTP 500")
        assert timedelta(seconds=8) <= delivery.next_attempt_at - timezone.now() <= timedelta(seconds=12)
        assert deliveries_send() == 0  # not due yet
        clock.shift(timedelta(seconds=13))
        assert deliveries_send() == 1
        clock.shift(timedelta(seconds=73))
        assert deliveries_send() == 1
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == (JobStatus.DONE, 3, 204)
    assert len({got.headers["webhook-id"] for got in receiver.received}) == 1 and len(receiver.received) == 3
    assert all(got.verified for got in receiver.received)


def test_it_gives_up_after_the_schedule_and_says_so(actors: Actors, receiver: Receiver, settings: object) -> None:
    settings.MEMORYHUB_WEBHOOK_RETRY_SCHEDULE = [10.0]  # type: ignore[attr-defined]
    receiver.answer = lambda _: Answer(503)
    endpoint_for(actors, receiver)
    ask(actors)
    with time_machine.travel(timezone.now(), tick=False) as clock:
        deliveries_send()
        clock.shift(timedelta(seconds=13))
        deliveries_send()
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == JobStatus.FAILED and delivery.attempts == 2
    assert delivery.error == "HTTP 503; gave up after 2 attempts"


def test_it_waits_at_least_what_retry_after_asks(actors: Actors, receiver: Receiver) -> None:
    receiver.answer = lambda _: Answer(429, {"Retry-After": "120"})
    endpoint_for(actors, receiver)
    ask(actors)
    deliveries_send()
    delivery = WebhookDelivery.objects.get()
    assert delivery.next_attempt_at - timezone.now() >= timedelta(seconds=118)


def test_a_410_disables_the_endpoint_and_tells_the_admins(actors: Actors, receiver: Receiver) -> None:
    receiver.answer = lambda _: Answer(410)
    endpoint = endpoint_for(actors, receiver)
    ask(actors, "s1")
    deliveries_send()
    ask(actors, "s2")  # after the endpoint is off: nothing queued
    endpoint.refresh_from_db()
    assert not endpoint.enabled and "410" in endpoint.disabled_reason
    assert list(WebhookDelivery.objects.values_list("status", flat=True)) == [JobStatus.FAILED]
    assert AuditEntry.objects.filter(action="webhook_disabled", target=f"webhook:{endpoint.pk}").exists()
    assert Event.objects.filter(kind="webhook", workspace=actors.workspace, ref__type="webhook.disabled").exists()
    assert len(receiver.received) == 1


def test_a_slow_receiver_is_given_up_on_at_the_timeout_and_retried(actors: Actors, receiver: Receiver, settings: object) -> None:
    settings.MEMORYHUB_WEBHOOK_TIMEOUT_SECONDS = 0.3  # type: ignore[attr-defined]
    receiver.answer = lambda _: Answer(200, delay=2.0)
    endpoint_for(actors, receiver)
    ask(actors)
    deliveries_send()
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == JobStatus.QUEUED and delivery.error == "no answer within 0.3 s"


def test_a_redirect_is_not_followed(actors: Actors, receiver: Receiver) -> None:
    receiver.answer = lambda _: Answer(302, {"Location": "http://169.254.169.254/latest/meta-data/"})
    endpoint_for(actors, receiver)
    ask(actors)
    deliveries_send()
    delivery = WebhookDelivery.objects.get()
    assert delivery.last_status_code == 302 and "redirects are not followed" in delivery.error
    assert len(receiver.received) == 1


def test_a_name_resolving_to_the_hubs_own_network_is_refused_when_it_connects(actors: Actors, receiver: Receiver) -> None:
    port = receiver.url.split(":")[2].split("/")[0]
    endpoint = webhook_create(membership=actors.owner, item=EndpointInput(url=f"https://localhost:{port}/hook", events=["approval.requested"]))
    ask(actors)
    deliveries_send()
    delivery = WebhookDelivery.objects.get(endpoint=endpoint)
    assert delivery.status == JobStatus.FAILED and "loopback" in delivery.error and "localhost resolves to" in delivery.error
    assert receiver.received == []


def test_a_rotation_signs_with_both_secrets_for_a_day(actors: Actors, receiver: Receiver) -> None:
    endpoint = endpoint_for(actors, receiver)
    old = endpoint.secret
    new = webhook_secret_rotate(membership=actors.owner, endpoint=endpoint).secret
    receiver.secrets[:] = [old]
    ask(actors, "s1")
    deliveries_send()
    receiver.secrets[:] = [new]
    with time_machine.travel(timezone.now() + timedelta(hours=25), tick=False):
        ask(actors, "s2")
        deliveries_send()
    first, second = receiver.received
    assert first.verified and len(first.headers["webhook-signature"].split()) == 2
    assert second.verified and len(second.headers["webhook-signature"].split()) == 1


def test_a_rolled_back_event_is_never_announced(actors: Actors, receiver: Receiver) -> None:
    endpoint_for(actors, receiver)
    api_client(actors.bot_key).post("/api/v1/sessions", {"session_id": "s1", "user_id": "maria"}, format="json")
    session = Session.objects.get(session_id="s1")
    with pytest.raises(RuntimeError), transaction.atomic():
        approval_request(session=session, item=ApprovalInput(tool="refund", args=ARGS, allowed_decisions=["approve"]))
        assert WebhookDelivery.objects.count() == 1
        raise RuntimeError("what asked for the approval failed after it")
    assert deliveries_send() == 0 and not WebhookDelivery.objects.exists()


def test_a_delivery_its_sender_lost_is_sent_again(actors: Actors, receiver: Receiver) -> None:
    endpoint_for(actors, receiver)
    ask(actors)
    WebhookDelivery.objects.update(status=JobStatus.RUNNING, heartbeat_at=timezone.now() - timedelta(hours=1))
    assert deliveries_send() == 0
    assert deliveries_resume() == 1
    assert deliveries_send() == 1 and WebhookDelivery.objects.get().status == JobStatus.DONE


def test_finished_deliveries_leave_the_log_after_the_retention_days(actors: Actors, receiver: Receiver, settings: object) -> None:
    settings.MEMORYHUB_DELIVERY_RETENTION_DAYS = 30  # type: ignore[attr-defined]
    endpoint_for(actors, receiver)
    ask(actors, "s1")
    ask(actors, "s2")
    deliveries_send()
    old, recent = WebhookDelivery.objects.order_by("id")
    WebhookDelivery.objects.filter(pk=old.pk).update(finished_at=timezone.now() - timedelta(days=31))
    ask(actors, "s3")  # still to be sent: never swept, however old
    WebhookDelivery.objects.filter(status=JobStatus.QUEUED).update(created_at=timezone.now() - timedelta(days=60))
    assert deliveries_sweep() == 1
    assert not WebhookDelivery.objects.filter(pk=old.pk).exists() and WebhookDelivery.objects.count() == 2


def test_a_turned_off_endpoint_gets_its_test_event_and_nothing_else(actors: Actors, receiver: Receiver) -> None:
    endpoint = endpoint_for(actors, receiver)
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(enabled=False)
    endpoint.refresh_from_db()
    webhook_test(membership=actors.owner, endpoint=endpoint)
    ask(actors)  # nothing queued for a turned-off endpoint
    assert deliveries_send() == 1
    assert [got.json["type"] for got in receiver.received] == ["webhook.test"]
