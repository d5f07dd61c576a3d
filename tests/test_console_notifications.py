"""The console's Notifications and Webhooks pages (console/notification_views.py) through
Django's test client: each operator's emails, and the admins' webhooks, their secrets
(shown once), tests, redeliveries and the delivery log."""

from __future__ import annotations

import re

from django.test import Client

from memoryhub.core.models import AuditEntry, Membership
from memoryhub.notifications.models import NotificationSetting, WebhookDelivery, WebhookEndpoint
from memoryhub.notifications.pump import deliveries_send
from memoryhub.notifications.services import EndpointInput, webhook_create
from tests.conftest import Actors, approver
from tests.webhook_receiver import Answer, Receiver

HTMX = {"HTTP_HX_REQUEST": "true"}


def logged_in(membership: Membership) -> Client:
    client = Client()
    client.force_login(membership.user)
    return client


def test_an_approver_chooses_the_emails_of_their_role(actors: Actors, settings: object) -> None:
    settings.MEMORYHUB_EMAIL_URL = ""  # type: ignore[attr-defined]
    reviewer = logged_in(approver(actors))
    page = reviewer.get("/settings/notifications/").content.decode()
    assert 'value="approval.requested"' in page and 'value="approval.escalated"' not in page  # escalations are the admins'
    assert 'data-testid="email-off"' in page
    saved = reviewer.post("/settings/notifications/", {"email": "reviewer@example.com", "events": ["approval.requested"]})
    assert saved.status_code == 302
    assert NotificationSetting.objects.get(membership__user__username="reviewer").events == ["approval.requested"]
    assert reviewer.post("/settings/notifications/", {"email": "nope", "events": []}).status_code == 400
    refused = reviewer.post("/settings/notifications/", {"email": "reviewer@example.com", "events": ["approval.escalated"]})
    assert refused.status_code == 400 and NotificationSetting.objects.get().events == ["approval.requested"]


def test_a_viewer_is_told_their_role_gets_no_email_and_sees_no_webhooks(actors: Actors) -> None:
    viewer = logged_in(actors.teammate)
    assert "receives no emails" in viewer.get("/settings/notifications/").content.decode()
    assert viewer.get("/settings/webhooks/").status_code == 403
    assert 'href="/settings/webhooks/"' not in viewer.get("/settings/notifications/").content.decode()


def test_an_admin_adds_a_webhook_and_sees_its_secret_once(actors: Actors, receiver: Receiver) -> None:
    owner = logged_in(actors.owner)
    assert "No webhooks yet" in owner.get("/settings/webhooks/").content.decode()
    refused = owner.post("/settings/webhooks/", {"url": "http://hooks.example.com/", "events": ["approval.requested"], "format": "standard"})
    assert refused.status_code == 400 and "must be https://" in refused.content.decode()
    added = owner.post("/settings/webhooks/", {"url": receiver.url, "events": ["approval.requested"], "format": "slack", "description": "#approvals"})
    assert added.status_code == 201
    endpoint = WebhookEndpoint.objects.get()
    assert f'value="{endpoint.secret}"' in added.content.decode() and added["Cache-Control"].startswith("max-age=0")
    page = owner.get(f"/settings/webhooks/{endpoint.pk}/").content.decode()
    assert endpoint.secret not in page and "#approvals" in page
    assert receiver.url in owner.get("/settings/webhooks/").content.decode()


def test_an_admin_tests_a_webhook_reads_the_log_and_sends_again(actors: Actors, receiver: Receiver) -> None:
    receiver.answer = lambda index: Answer(503 if index == 0 else 200)
    endpoint = webhook_create(membership=actors.owner, item=EndpointInput(url=receiver.url, events=["purge.completed"]))
    owner = logged_in(actors.owner)
    log = owner.post(f"/settings/webhooks/{endpoint.pk}/test/", **HTMX).content.decode()
    assert "A webhook.test delivery is on its way." in log and ">pending<" in log and 'hx-trigger="every 5s"' in log
    deliveries_send()
    failed = WebhookDelivery.objects.get()
    WebhookDelivery.objects.filter(pk=failed.pk).update(status="failed")  # given up on
    log = owner.get(f"/settings/webhooks/{endpoint.pk}/", **HTMX).content.decode()
    assert "503" in log and "HTTP 503" in log and 'hx-trigger="every 5s"' not in log
    again = owner.post(f"/settings/webhooks/{endpoint.pk}/deliveries/{failed.pk}/redeliver/", **HTMX).content.decode()
    assert "is sent again" in again
    deliveries_send()
    assert [got.headers["webhook-id"] for got in receiver.received] == [failed.message_id, failed.message_id]


def test_an_admin_rotates_turns_off_and_deletes_a_webhook(actors: Actors) -> None:
    endpoint = webhook_create(membership=actors.owner, item=EndpointInput(url="https://hooks.example.com/x", events=["purge.completed"]))
    owner = logged_in(actors.owner)
    rotated = owner.post(f"/settings/webhooks/{endpoint.pk}/rotate/").content.decode()
    endpoint.refresh_from_db()
    assert f'value="{endpoint.secret}"' in rotated and "The old one signs deliveries too until" in rotated
    assert re.search(r'data-testid="webhook-state"><span class="badge bad">off', owner.post(f"/settings/webhooks/{endpoint.pk}/disable/").content.decode())
    assert owner.post(f"/settings/webhooks/{endpoint.pk}/enable/").status_code == 200
    deleted = owner.post(f"/settings/webhooks/{endpoint.pk}/delete/", **HTMX)
    assert deleted["HX-Redirect"] == "/settings/webhooks/" and not WebhookEndpoint.objects.exists()
    assert AuditEntry.objects.filter(action="webhook_deleted").exists()


def test_another_workspaces_webhook_is_not_found(actors: Actors) -> None:
    foreign = webhook_create(membership=actors.outsider, item=EndpointInput(url="https://hooks.example.com/g", events=["purge.completed"]))
    owner = logged_in(actors.owner)
    assert owner.get(f"/settings/webhooks/{foreign.pk}/").status_code == 404
    for action in ("test", "rotate", "disable", "delete"):
        assert owner.post(f"/settings/webhooks/{foreign.pk}/{action}/").status_code == 404
    assert WebhookEndpoint.objects.get().enabled and not WebhookDelivery.objects.exists()
