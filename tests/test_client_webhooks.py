"""The Python client's webhooks and notifications against a live hub (sync and async), and
`verify_webhook` on the receiving side: the spec's example, the hub's own deliveries, and
what it refuses."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memoryhub_client import PermissionDenied, WebhookVerificationError, verify_webhook
from tests.conftest import Actors, LiveHub, poll
from tests.hub_clients import HubClients
from tests.webhook_receiver import Receiver

SPEC = {
    "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    "headers": {"webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek", "webhook-timestamp": "1614265330",
                "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="},
    "body": b'{"test": 2432232314}',
}


@pytest.fixture(params=["sync", "async"])
def hubs(request: pytest.FixtureRequest, live_hub: LiveHub) -> Iterator[HubClients]:
    clients = HubClients(request.param, live_hub.url)
    yield clients
    clients.close()


def test_verify_webhook_accepts_the_specifications_example_and_nothing_changed() -> None:
    assert verify_webhook(SPEC["secret"], SPEC["headers"], SPEC["body"], now=1614265330 + 60) == {"test": 2432232314}
    with pytest.raises(WebhookVerificationError, match="too far"):
        verify_webhook(SPEC["secret"], SPEC["headers"], SPEC["body"])  # 2021's delivery, replayed today
    with pytest.raises(WebhookVerificationError, match="no signature"):
        verify_webhook(SPEC["secret"], SPEC["headers"], b'{"test": 2432232315}', now=1614265330)
    with pytest.raises(WebhookVerificationError, match="webhook-id"):
        verify_webhook(SPEC["secret"], {k: v for k, v in SPEC["headers"].items() if k != "webhook-id"}, SPEC["body"], now=1614265330)


def test_an_admin_manages_webhooks_and_a_receiver_verifies_their_deliveries(actors: Actors, hubs: HubClients, receiver: Receiver) -> None:
    owner = hubs(actors.owner_key)
    created = owner.webhooks.create(url=receiver.url, events=["approval.requested"], description="on-call")
    assert created.secret.startswith("whsec_") and [hook.id for hook in owner.webhooks.iter()] == [created.id]
    owner.webhooks.test(created.id)
    [got] = receiver.wait_for(1)
    assert verify_webhook(created.secret, got.headers, got.body)["type"] == "webhook.test"
    delivered = poll(lambda: (page := owner.webhooks.deliveries(created.id)).results[0].status == "succeeded" and page)
    assert delivered and delivered.results[0].last_status_code == 200
    rotated = owner.webhooks.rotate_secret(created.id)
    again = owner.webhooks.redeliver(created.id, delivered.results[0].id)
    assert again.message_id == delivered.results[0].message_id
    second = receiver.wait_for(2)[1]
    # During the rotation's day either secret verifies what the hub sends.
    assert verify_webhook(rotated.secret, second.headers, second.body) == verify_webhook(created.secret, second.headers, second.body)
    assert owner.webhooks.update(created.id, enabled=False).enabled is False
    owner.webhooks.delete(created.id)
    assert owner.webhooks.list().results == []
    with pytest.raises(PermissionDenied):
        hubs(actors.bot_key).webhooks.list()


def test_an_approval_for_two_approvers_and_an_operators_emails(actors: Actors, hubs: HubClients) -> None:
    bot, owner = hubs(actors.bot_key), hubs(actors.owner_key)
    assert owner.notifications.set(email="owner@example.com", events=["approval.escalated"]).events == ["approval.escalated"]
    assert owner.notifications.get().email == "owner@example.com"
    bot.sessions.create(session_id="s1", user_id="u1")
    asked = bot.approvals.request(session_id="s1", tool="payments.send", args={"amount": 5}, required_approvals=2, escalate_after=600)
    assert asked.required_approvals == 2 and asked.escalate_at is not None
    counted = owner.approvals.decide(asked.id, "approve")
    assert counted.status == "pending" and [given.by for given in counted.approvals] == ["operator:owner"]
