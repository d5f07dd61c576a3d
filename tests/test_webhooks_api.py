"""/api/v1/webhooks (docs/notifications.md): admins add, change, rotate, test and delete
endpoints and read their delivery logs; nobody else sees them; a secret is shown once."""

from __future__ import annotations


import pytest

from memoryhub.core.models import AuditEntry
from memoryhub.notifications.models import WebhookDelivery
from memoryhub.notifications.pump import deliveries_send
from tests.conftest import Actors, api_client, approver_key, assert_error
from tests.webhook_receiver import Answer, Receiver

HOOK = "https://hooks.example.com/memoryhub"


def create(key: str, **body: object) -> object:
    return api_client(key).post("/api/v1/webhooks", {"url": HOOK, "events": ["approval.requested"], **body}, format="json")


def test_it_adds_a_webhook_and_shows_its_secret_once(actors: Actors) -> None:
    created = create(actors.owner_key, description="on-call channel")
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["secret"].startswith("whsec_")
    assert {key: body[key] for key in ("url", "events", "format", "include_content", "enabled", "description")} == {
        "url": HOOK, "events": ["approval.requested"], "format": "standard", "include_content": False, "enabled": True,
        "description": "on-call channel",
    }
    owner = api_client(actors.owner_key)
    listed = owner.get("/api/v1/webhooks").json()["results"]
    assert [hook["id"] for hook in listed] == [body["id"]] and "secret" not in listed[0]
    assert "secret" not in owner.get(f"/api/v1/webhooks/{body['id']}").json()
    assert AuditEntry.objects.filter(action="webhook_created", target=f"webhook:{body['id']}").exists()


def test_a_retried_create_never_shows_the_secret_again(actors: Actors) -> None:
    owner = api_client(actors.owner_key)
    first = owner.post("/api/v1/webhooks", {"url": HOOK, "events": ["approval.requested"]}, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    again = owner.post("/api/v1/webhooks", {"url": HOOK, "events": ["approval.requested"]}, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code == 201
    assert_error(again, 409, "SECRET_NOT_REPLAYED")
    assert first.json()["secret"] not in again.content.decode()
    assert len(owner.get("/api/v1/webhooks").json()["results"]) == 1


@pytest.mark.parametrize("url", [
    "http://hooks.example.com/x",           # plain http to a host not allowed
    "https://169.254.169.254/latest/meta-data/",
    "https://127.0.0.1:8000/",
    "http://169.254.169.254/latest/meta-data/",  # the metadata service, plainly
    "https://10.0.0.7/hook",
    "https://[::1]/hook",
    "https://[::ffff:127.0.0.1]/hook",      # IPv4 in IPv6's clothes
    "https://[::ffff:a9fe:a9fe]/hook",      # 169.254.169.254, mapped
    "https://[fd00:ec2::254]/hook",         # a cloud's IPv6 metadata address
    "https://[64:ff9b::a00:1]/hook",        # NAT64 of 10.0.0.1
    "https://user:pass@hooks.example.com/",
    "ftp://hooks.example.com/",
    "hooks.example.com",
])
def test_it_refuses_urls_that_point_into_the_hubs_network_or_are_not_https(actors: Actors, url: str, settings: object) -> None:
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = []  # type: ignore[attr-defined]
    error = assert_error(create(actors.owner_key, url=url), 400, "INVALID_WEBHOOK_URL")
    assert error["details"]["url"] == url
    assert api_client(actors.owner_key).get("/api/v1/webhooks").json()["results"] == []


def test_an_allowed_host_may_be_plain_http_and_private(actors: Actors, settings: object) -> None:
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = ["10.0.0.7", "receiver.internal"]  # type: ignore[attr-defined]
    assert create(actors.owner_key, url="http://10.0.0.7:9000/hook").status_code == 201
    assert create(actors.owner_key, url="http://receiver.internal/hook").status_code == 201


def test_it_refuses_unknown_events_and_fields(actors: Actors) -> None:
    assert_error(create(actors.owner_key, events=["approval.requested", "memory.eaten"]), 400, "VALIDATION_ERROR")
    assert_error(create(actors.owner_key, events=[]), 400, "VALIDATION_ERROR")
    assert_error(create(actors.owner_key, secret="whsec_mine"), 400, "VALIDATION_ERROR")


def test_only_admins_of_the_workspace_reach_its_webhooks(actors: Actors) -> None:
    hook = create(actors.owner_key).json()
    for key in (actors.teammate_key, approver_key(actors), actors.bot_key):
        assert_error(api_client(key).get("/api/v1/webhooks"), 403, "FORBIDDEN")
        assert_error(create(key), 403, "FORBIDDEN")
        assert_error(api_client(key).delete(f"/api/v1/webhooks/{hook['id']}"), 403, "FORBIDDEN")
    outsider = api_client(actors.outsider_key)
    assert outsider.get("/api/v1/webhooks").json()["results"] == []
    for method, path in (
        ("get", ""), ("patch", ""), ("delete", ""), ("post", "/rotate-secret"), ("post", "/test"), ("get", "/deliveries"),
    ):
        assert_error(getattr(outsider, method)(f"/api/v1/webhooks/{hook['id']}{path}", {}, format="json"), 404, "WEBHOOK_NOT_FOUND")


def test_it_changes_disables_and_deletes_a_webhook(actors: Actors) -> None:
    owner = api_client(actors.owner_key)
    hook = create(actors.owner_key).json()
    changed = owner.patch(f"/api/v1/webhooks/{hook['id']}", {"events": ["purge.completed", "budget.exceeded"], "enabled": False}, format="json")
    assert changed.status_code == 200 and changed.json()["events"] == ["purge.completed", "budget.exceeded"] and not changed.json()["enabled"]
    assert_error(owner.patch(f"/api/v1/webhooks/{hook['id']}", {"url": "http://example.com/"}, format="json"), 400, "INVALID_WEBHOOK_URL")
    assert owner.get(f"/api/v1/webhooks/{hook['id']}").json()["url"] == HOOK
    assert owner.delete(f"/api/v1/webhooks/{hook['id']}").status_code == 204
    assert_error(owner.get(f"/api/v1/webhooks/{hook['id']}"), 404, "WEBHOOK_NOT_FOUND")
    assert list(AuditEntry.objects.filter(target=f"webhook:{hook['id']}").values_list("action", flat=True).order_by("id")) == [
        "webhook_created", "webhook_changed", "webhook_deleted",
    ]


def test_a_rotation_answers_the_new_secret_once(actors: Actors) -> None:
    owner = api_client(actors.owner_key)
    hook = create(actors.owner_key).json()
    rotated = owner.post(f"/api/v1/webhooks/{hook['id']}/rotate-secret")
    assert rotated.status_code == 200 and rotated.json()["secret"] != hook["secret"]
    assert owner.get(f"/api/v1/webhooks/{hook['id']}").json()["previous_secret_until"] == rotated.json()["previous_secret_until"]


def test_a_test_event_is_delivered_and_logged_and_can_be_sent_again(actors: Actors, receiver: Receiver) -> None:
    owner = api_client(actors.owner_key)
    receiver.answer = lambda index: Answer(500 if index == 0 else 200)
    hook = create(actors.owner_key, url=receiver.url, events=["purge.completed"]).json()
    receiver.secrets.append(hook["secret"])
    tested = owner.post(f"/api/v1/webhooks/{hook['id']}/test")
    assert tested.status_code == 202 and tested.json()["event"] == "webhook.test" and tested.json()["status"] == "pending"
    deliveries_send()
    [logged] = owner.get(f"/api/v1/webhooks/{hook['id']}/deliveries").json()["results"]
    assert (logged["status"], logged["attempts"], logged["last_status_code"], logged["error"]) == ("pending", 1, 500, "HTTP 500")
    again = owner.post(f"/api/v1/webhooks/{hook['id']}/deliveries/{logged['id']}/redeliver")
    assert again.status_code == 202 and again.json()["message_id"] == logged["message_id"] and again.json()["redelivery_of"] == logged["id"]
    WebhookDelivery.objects.filter(pk=logged["id"]).update(status="failed")  # given up on; the redelivery is what is sent now
    deliveries_send()
    newest, oldest = owner.get(f"/api/v1/webhooks/{hook['id']}/deliveries").json()["results"]
    assert newest["status"] == "succeeded" and oldest["status"] == "failed"
    assert [got.json["type"] for got in receiver.received] == ["webhook.test", "webhook.test"]
    assert receiver.received[0].headers["webhook-id"] == receiver.received[1].headers["webhook-id"]
    assert all(got.verified for got in receiver.received)
    assert_error(owner.post(f"/api/v1/webhooks/{hook['id']}/deliveries/999999/redeliver"), 404, "DELIVERY_NOT_FOUND")
