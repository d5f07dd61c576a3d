"""Each event the hub announces besides approvals (docs/notifications.md, "Events"), caused
the way people cause it and received by a real receiver: memories flagged and
quarantined, purges, exports and imports finished, budgets reached."""

from __future__ import annotations

import json

from django.core.files.uploadedfile import SimpleUploadedFile

from memoryhub.notifications.pump import deliveries_send
from memoryhub.notifications.services import EndpointInput, webhook_create
from tests.conftest import Actors, api_client, approver_key, remember
from tests.webhook_receiver import Receiver


def subscribe(actors: Actors, receiver: Receiver, *events: str, include_content: bool = False) -> None:
    endpoint = webhook_create(membership=actors.owner, item=EndpointInput(url=receiver.url, events=list(events), include_content=include_content))
    receiver.secrets.append(endpoint.secret)


def received(receiver: Receiver, count: int) -> list[dict]:
    got = receiver.wait_for(count)
    assert len(got) == count and all(item.verified for item in got), got
    return [item.json for item in got]


def test_a_flagged_and_a_quarantined_memory_are_announced_with_their_content_only_on_request(actors: Actors, receiver: Receiver) -> None:
    subscribe(actors, receiver, "memory.flagged", "memory.quarantined")
    subscribe(actors, receiver, "memory.quarantined", include_content=True)
    entry = remember(actors.bot_key, "Dana's PIN is 4455.", user_id="dana")
    api_client(actors.bot_key).post(f"/api/v1/memories/{entry['id']}/review", {"action": "flag", "reason": "looks like a secret"}, format="json")
    api_client(approver_key(actors)).post(f"/api/v1/memories/{entry['id']}/review", {"action": "quarantine"}, format="json")
    api_client(approver_key(actors)).post(f"/api/v1/memories/{entry['id']}/review", {"action": "verify"}, format="json")  # no event
    assert deliveries_send() == 3
    by_type = sorted((body["type"], "content" in body["data"]) for body in received(receiver, 3))
    assert by_type == [("memory.flagged", False), ("memory.quarantined", False), ("memory.quarantined", True)]
    flagged = next(body for body in (item.json for item in receiver.received) if body["type"] == "memory.flagged")
    assert flagged["data"] == {
        "workspace": "acme", "memory_id": entry["id"], "memory_type": "note", "by": "agent:bot",
        "url": f"https://hub.example.com/memory/{entry['id']}/",
    }
    assert "4455" not in json.dumps([item.json for item in receiver.received if "content" not in item.json["data"]])


def test_a_budget_warning_and_a_spent_budget_are_announced_once_a_month(actors: Actors, receiver: Receiver) -> None:
    subscribe(actors, receiver, "budget.warning", "budget.exceeded")
    api_client(actors.owner_key).put("/api/v1/settings/budget", {"monthly_limit": 0, "warn_at": 0}, format="json")
    for text in ("Dana flies on Friday.", "Dana flies on Monday."):
        remember(actors.bot_key, text, user_id="dana")
        api_client(actors.owner_key).get("/api/v1/usage")  # what was counted is written, and the month judged
    assert deliveries_send() == 2
    bodies = {body["type"]: body["data"] for body in received(receiver, 2)}
    assert set(bodies) == {"budget.warning", "budget.exceeded"}
    assert bodies["budget.exceeded"]["limit"] == 0 and bodies["budget.exceeded"]["url"] == "https://hub.example.com/usage/"


def test_a_finished_purge_is_announced_without_the_user(actors: Actors, receiver: Receiver, transactional_db: None) -> None:
    subscribe(actors, receiver, "purge.completed")
    remember(actors.bot_key, "Erin lives in Lyon.", user_id="erin")
    purge = api_client(actors.owner_key).post("/api/v1/purges", {"user_id": "erin"}, format="json").json()
    [body] = received(receiver, 1)
    assert body["type"] == "purge.completed"
    assert body["data"]["purge_id"] == str(purge["id"]) and body["data"]["status"] == "done" and body["data"]["verification_passed"]
    assert "erin" not in json.dumps(body).lower()


def test_a_finished_export_and_import_are_announced(actors: Actors, receiver: Receiver, transactional_db: None) -> None:
    subscribe(actors, receiver, "export.completed", "import.completed")
    remember(actors.bot_key, "Fay drinks oolong.", user_id="fay")
    export = api_client(actors.owner_key).post("/api/v1/exports", {"scope": "workspace"}, format="json").json()
    [exported] = received(receiver, 1)
    assert exported["type"] == "export.completed" and exported["data"]["export_id"] == export["id"] and exported["data"]["bytes"] > 0
    mem0 = {"results": [{"id": "m-1", "memory": "Prefers window seats", "user_id": "ann"}]}
    upload = {"file": SimpleUploadedFile("m.json", json.dumps(mem0).encode()), "format": "mem0", "store": "default", "agent": "bot"}
    job = api_client(actors.owner_key).post("/api/v1/imports", upload, format="multipart").json()
    imported = received(receiver, 2)[1]
    assert imported["type"] == "import.completed" and imported["data"]["import_id"] == str(job["id"])
    assert imported["data"]["counts"] and imported["data"]["dry_run"] is False
