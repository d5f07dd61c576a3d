"""The authorization matrix: every endpoint and method of the API (walked from the URL
patterns, so an endpoint is covered the day it lands) against every kind of caller.

- Without credentials, everything answers 401.
- A foreign workspace's agent and admin never see this workspace's objects: object
  URLs answer 403 or 404, lists and searches hold none of them, and writes change
  nothing here.
- A viewer changes nothing.
- Workspaces, agents and user_ids smuggled into bodies, queries or headers are ignored."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.urls import URLPattern

from agents_api.urls import urlpatterns
from memoryhub.approvals.models import ApprovalRule
from memoryhub.compliance.models import PurgeRequest
from memoryhub.core.registry import own_models
from memoryhub.usage import metering
from tests.conftest import Actors, api_client

CANARY = "canary7q"  # in every object of the workspace `acme` the callers must not see
METHODS = ("get", "post", "put", "patch", "delete")
CALL = {"id": f"{CANARY}-call", "type": "function", "function": {"name": "f", "arguments": "{}"}}
# What a body needs to get past validation, so that what answers is the authorization.
BODIES: dict[str, dict[str, Any]] = {
    "keys": {"agent": "intruder"},
    "memories": {"content": "x", "user_id": "u1"},
    "memories/batch": {"items": [{"content": "x", "user_id": "u1"}]},
    "memories/search": {"query": CANARY},
    "memories/<str:entry_id>": {"content": "overwritten", "reason": "a test"},
    "memories/<str:entry_id>/revert": {"revision": 1},
    "memories/<str:entry_id>/review": {"action": "quarantine"},
    "memories/<str:entry_id>/merge": {"others": ["00000000-0000-4000-8000-000000000001"]},
    "sessions": {"session_id": "intruder-s", "user_id": "u1"},
    "sessions/<str:session_id>/messages": {"role": "user", "content": "x"},
    "sessions/<str:session_id>/messages/<int64:seq>": {"content": "overwritten"},
    "sessions/<str:session_id>/branch": {"new_session_id": "intruder-b"},
    "sessions/<str:session_id>/checkpoints": {"expected_version": 1, "state": {}},
    "sessions/<str:session_id>/fork": {"from_version": 1, "new_session_id": "intruder-f"},
    "sessions/<str:session_id>/resume": {},
    "sessions/<str:session_id>/plan": {"goal": "g", "steps": [{"step_id": "x", "description": "d"}]},
    "sessions/<str:session_id>/plan/steps/<str:step_id>": {"status": "running"},
    "sessions/<str:session_id>/tool-calls": {"tool": "t", "result": "r"},
    "episodes": {"user_id": "u1", "task": "t", "outcome": "success", "narrative": "Done."},
    "episodes/similar": {"task": CANARY},
    "graph/edges": {"subject": "Ada", "predicate": "lives in", "object": "Nowhere", "user_id": "u1"},
    "graph/rules": {"rules": []},
    "graph/grounding": {"text": f"What about {CANARY}?"},
    "purges": {"user_id": f"{CANARY}-user", "dry_run": True},
    "webhooks": {"url": "https://hooks.example.com/intruder", "events": ["approval.requested"]},
    "webhooks/<int64:webhook_id>": {"enabled": False, "url": "https://hooks.example.com/intruder"},
    "exports": {"scope": "workspace"},
    "settings/budget": {"monthly_limit": 1},
    "purges/unblock": {"user_id": f"{CANARY}-user"},
    "approvals": {"session_id": f"{CANARY}-s", "tool": "t", "args": {}},
    "approvals/<int64:approval_id>/decision": {"decision": "approve"},
    "retention": {"policies": {"sessions": 7}},
    "langgraph/checkpoints": {"thread_id": "intruder-t", "user_id": "u1", "checkpoint_id": "x", "checkpoint": {"type": "msgpack", "data": ""}},
    "langgraph/writes": {
        "thread_id": "intruder-t", "user_id": "u1", "checkpoint_id": "x", "task_id": "t",
        "writes": [{"idx": 0, "channel": "c", "type": "msgpack", "data": ""}],
    },
    "langgraph/threads/<str:thread_id>/copy": {"target_thread_id": "intruder-t"},
    "langgraph/prune": {"thread_ids": [f"{CANARY}-t"], "strategy": "delete"},
    "langgraph/runs/delete": {"run_ids": [f"{CANARY}-run"]},
}
# Endpoints any authenticated caller may use, whose answers are about the caller only.
OWN = {"me", "stats", "me/notifications"}
# POSTs that read (a search, a draft): a viewer may.
READS_BY_POST = {"memories/search", "episodes/similar", "sessions/<str:session_id>/episode-draft", "graph/grounding"}


@pytest.fixture
def acme(actors: Actors) -> dict[str, str]:
    """Objects of every kind in `acme`, by bot; the values fill the URL patterns."""
    bot = api_client(actors.bot_key)
    session = f"{CANARY}-s"
    bot.post("/api/v1/sessions", {"session_id": session, "user_id": f"{CANARY}-user"}, format="json")
    bot.post(f"/api/v1/sessions/{session}/messages", {"messages": [
        {"role": "user", "content": f"{CANARY} hello", "item": {"role": "user", "content": f"{CANARY} hello"}},
        {"role": "assistant", "content": "", "tool_calls": [CALL]},
    ]}, format="json")
    bot.put(f"/api/v1/sessions/{session}/plan", {"goal": CANARY, "steps": [{"step_id": f"{CANARY}-step", "description": CANARY}]}, format="json")
    bot.post(f"/api/v1/sessions/{session}/tool-calls", {"call_id": f"{CANARY}-c", "tool": CANARY, "result": CANARY}, format="json")
    bot.post(f"/api/v1/sessions/{session}/checkpoints", {"expected_version": 0, "state": {"note": CANARY}}, format="json")
    bot.post("/api/v1/langgraph/checkpoints", {
        "thread_id": f"{CANARY}-t", "user_id": f"{CANARY}-user", "checkpoint_id": "0001", "checkpoint": {"type": "msgpack", "data": "Y2FuYXJ5N3E="},
        "metadata": {"note": CANARY, "run_id": f"{CANARY}-run"},
    }, format="json")
    bot.post("/api/v1/episodes", {"user_id": f"{CANARY}-user", "task": CANARY, "outcome": "success", "narrative": CANARY}, format="json")
    entry = bot.post("/api/v1/memories", {"content": f"{CANARY} memory", "user_id": f"{CANARY}-user", "scope": "global"}, format="json").json()
    purge = api_client(actors.owner_key).post("/api/v1/purges", {"user_id": "someone", "dry_run": True}, format="json").json()
    PurgeRequest.objects.filter(pk=purge["id"]).update(dry_run=False)
    remembered = bot.post("/api/v1/approvals", {"session_id": session, "tool": f"{CANARY}-tool", "args": {"q": CANARY}}, format="json").json()
    api_client(actors.owner_key).post(f"/api/v1/approvals/{remembered['id']}/decision", {"decision": "approve", "remember": "exact"}, format="json")
    pending = bot.post("/api/v1/approvals", {"session_id": session, "tool": f"{CANARY}-tool", "args": {"q": 2}, "context": CANARY}, format="json").json()
    export = api_client(actors.owner_key).post("/api/v1/exports", {"scope": "workspace"}, format="json").json()
    mem0 = SimpleUploadedFile("mem0.json", json.dumps([{"id": "m1", "memory": CANARY, "user_id": "u1"}]).encode())
    imported = api_client(actors.owner_key).post(
        "/api/v1/imports", {"file": mem0, "format": "mem0", "store": "default", "agent": "bot"}, format="multipart",
    ).json()
    webhook = api_client(actors.owner_key).post(
        "/api/v1/webhooks", {"url": f"https://{CANARY}.example.com/hook", "events": ["approval.requested"], "description": CANARY}, format="json",
    ).json()
    delivery = api_client(actors.owner_key).post(f"/api/v1/webhooks/{webhook['id']}/test").json()
    metering.flush()  # the seed's model calls written now, not by whichever request reads usage first
    return {
        "session_id": session, "seq": "1", "step_id": f"{CANARY}-step", "version": "1", "entry_id": entry["id"],
        "call_id": f"{CANARY}-c", "purge_id": str(purge["id"]), "prefix": actors.bot_key.split("_")[1],
        "approval_id": str(pending["id"]), "rule_id": str(ApprovalRule.objects.get().pk), "thread_id": f"{CANARY}-t",
        "export_id": export["id"], "import_id": str(imported["id"]), "webhook_id": str(webhook["id"]), "delivery_id": str(delivery["id"]),
    }


def endpoints(values: dict[str, str]) -> list[tuple[str, str, str]]:
    """(method, url, pattern) for every method of every API URL pattern."""
    found = []
    for pattern in urlpatterns:
        assert isinstance(pattern, URLPattern)
        route = str(pattern.pattern)
        url = "/api/v1/" + re.sub(r"<\w+:(\w+)>", lambda m: values[m.group(1)], route)
        for method in METHODS:
            if hasattr(pattern.callback.view_class, method):
                found.append((method, url, route))
    return found


def call(client: Any, method: str, url: str, route: str) -> Any:
    if method in ("get", "delete"):
        return getattr(client, method)(url)
    return getattr(client, method)(url, BODIES.get(route, {}), format="json")


def acme_rows() -> dict[str, int]:
    """Rows of every model of ours in `acme`, and every audit entry."""
    counts = {}
    with connection.cursor() as cursor:
        # Not the metering of model calls: a viewer's search is a read that costs an embedding.
        for model in (m for m in own_models() if m._meta.app_label != "usage"):
            field_names = {f.column for f in model._meta.concrete_fields}
            if "workspace_id" in field_names:
                cursor.execute(f'SELECT count(*) FROM "{model._meta.db_table}" WHERE workspace_id = (SELECT id FROM core_workspace WHERE slug = %s)', ["acme"])
                counts[model._meta.label] = cursor.fetchone()[0]
    return counts


def test_every_endpoint_needs_credentials(acme: dict[str, str]) -> None:
    for method, url, route in endpoints(acme):
        response = call(api_client(), method, url, route)
        assert response.status_code == 401, (method, url, response.status_code)
        assert response.json()["error"]["code"] == "UNAUTHENTICATED"


@pytest.mark.parametrize("who", ["spy", "outsider"])
def test_a_foreign_workspace_sees_and_changes_nothing(actors: Actors, acme: dict[str, str], who: str) -> None:
    client = api_client(getattr(actors, f"{who}_key"))
    before = acme_rows()
    for method, url, route in endpoints(acme):
        response = call(client, method, url, route)
        assert response.status_code < 500, (who, method, url, response.content[:300])
        body = response.content.decode()
        if "<" in route or route in ("purges/unblock",):
            # An object of acme's, named in the URL (or a user only acme knows).
            assert response.status_code in (400, 403, 404, 405, 409), (who, method, url, response.status_code, body[:300])
        assert CANARY not in body.replace(json.dumps(BODIES.get(route, {})), ""), (who, method, url, body[:300])
    assert acme_rows() == before, "a foreign caller changed something in acme"


def test_a_viewer_changes_nothing(actors: Actors, acme: dict[str, str]) -> None:
    client = api_client(actors.teammate_key)
    before = acme_rows()
    for method, url, route in endpoints(acme):
        response = call(client, method, url, route)
        assert response.status_code < 500, (method, url, response.content[:300])
        if method == "get" or route in READS_BY_POST or route in OWN:
            continue
        assert response.status_code in (403, 404, 405), (method, url, response.status_code, response.content[:300])
    assert acme_rows() == before, "a viewer changed something"


# What each operator role may change (docs/api.md, "Authentication"; docs/concepts.md, roles):
# every other write answers 403 (or 404/405) and changes nothing.
ROLE_WRITES = {
    "approver": {
        "approvals/<int64:approval_id>/decision", "approval-rules/<int64:rule_id>", "sessions/<str:session_id>/reactivate",
        "patch memories/<str:entry_id>", "memories/<str:entry_id>/revert", "memories/<str:entry_id>/review",
        "memories/<str:entry_id>/merge",
    },
    "compliance": {"purges", "retention", "delete memories/<str:entry_id>"},
}


@pytest.mark.parametrize("role", sorted(ROLE_WRITES))
def test_each_role_writes_only_what_it_may(actors: Actors, acme: dict[str, str], role: str) -> None:
    from memoryhub.core import services

    membership = services.operator_get_or_create(username=f"a-{role}", workspace=actors.workspace, role=role)
    client = api_client(services.operator_key_issue(membership=membership)[1])
    for method, url, route in endpoints(acme):
        if method == "get" or route in READS_BY_POST or route in OWN or {route, f"{method} {route}"} & ROLE_WRITES[role]:
            continue
        before = acme_rows()
        response = call(client, method, url, route)
        assert response.status_code in (403, 404, 405), (role, method, url, response.status_code, response.content[:300])
        assert acme_rows() == before, (role, method, url)


def test_smuggled_tenancy_is_ignored(actors: Actors, acme: dict[str, str]) -> None:
    spy = api_client(actors.spy_key)
    smuggled = {"workspace": "acme", "workspace_id": actors.workspace.pk, "agent": "bot", "store": "default"}
    # Unknown fields in bodies are refused outright…
    response = spy.post("/api/v1/memories", {"content": "x", "user_id": "u1", **smuggled}, format="json")
    assert response.status_code == 400
    # …so are unknown query parameters; known ones and headers change nothing of what is seen.
    assert spy.get("/api/v1/memories", {"workspace": "acme"}).status_code == 400
    listing = spy.get("/api/v1/memories", {"agent": "bot", "user_id": f"{CANARY}-user"}, HTTP_X_WORKSPACE="acme", HTTP_X_FORWARDED_HOST="acme")
    assert listing.status_code == 200 and listing.json()["results"] == []
    found = spy.post("/api/v1/memories/search", {"query": CANARY, "user_id": f"{CANARY}-user"}, format="json", HTTP_X_WORKSPACE="acme")
    assert found.json()["results"] == []
    assert spy.get(f"/api/v1/sessions/{acme['session_id']}", HTTP_X_WORKSPACE="acme").status_code == 404
