"""POST /api/v1/exports, GET /api/v1/exports/{id} and its download (docs/portability.md)."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from typing import Any

import base64

import numpy as np
import pytest

from memoryhub.core import services
from memoryhub.core.models import Role
from memoryhub.portability.models import Export, ExportPart
from memoryhub.portability.services import exports_expired_delete
from tests.conftest import Actors, api_client, assert_error, poll, remember
from tests.graph_helpers import fact, rules


def compliance_key(actors: Actors) -> str:
    officer = services.operator_get_or_create(username="officer", workspace=actors.workspace, role=Role.COMPLIANCE)
    return services.operator_key_issue(membership=officer)[1]


def finished(key: str, export: dict[str, Any]) -> dict[str, Any]:
    done = poll(lambda: (body := api_client(key).get(f"/api/v1/exports/{export['id']}").json())["status"] in ("done", "failed") and body)
    assert done and done["status"] == "done", done
    return done


def archive(key: str, export: dict[str, Any]) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]], bytes]:
    response = api_client(key).get(f"/api/v1/exports/{export['id']}/download")
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    body = b"".join(response.streaming_content)
    with zipfile.ZipFile(io.BytesIO(body)) as zipped:
        manifest = json.loads(zipped.read("manifest.json"))
        files = {name: zipped.read(name) for name in zipped.namelist() if name.endswith(".jsonl")}
    for name, data in files.items():
        assert hashlib.sha256(data).hexdigest() == manifest["files"][name], name
    kinds = {name.removesuffix(".jsonl"): [json.loads(line) for line in data.decode().splitlines()] for name, data in files.items()}
    return manifest, kinds, body


def seed(actors: Actors) -> dict[str, Any]:
    agent = api_client(actors.bot_key)
    ann = remember(actors.bot_key, "Ann prefers the window seat.", user_id="ann")
    agent.patch(f"/api/v1/memories/{ann['id']}", {"content": "Ann prefers the aisle seat.", "version": ann["version"]}, format="json")
    remember(actors.bot_key, "Bo likes tea.", user_id="bo")
    agent.post("/api/v1/sessions", {"session_id": "trip", "user_id": "ann"}, format="json")
    agent.post("/api/v1/sessions/trip/messages", {"role": "user", "content": "Book me a flight to Oslo."}, format="json")
    agent.post("/api/v1/sessions/trip/messages", {"role": "assistant", "content": "Done: Friday 9:40."}, format="json")
    rules(actors.owner_key, {"predicate": "part of", "kind": "transitive"})
    fact(actors.bot_key, "Oslo", "part of", "Norway", user_id="ann")
    return {"ann": ann}


def test_it_exports_the_workspace_as_a_checksummed_archive(actors: Actors, transactional_db: None) -> None:
    seeded = seed(actors)
    started = api_client(actors.owner_key).post("/api/v1/exports", {"scope": "workspace"}, format="json")
    assert started.status_code == 202 and started.json()["status"] == "queued"
    done = finished(actors.owner_key, started.json())
    manifest, kinds, body = archive(actors.owner_key, started.json())
    assert (manifest["format"], manifest["version"], manifest["scope"]) == ("memoryhub-archive", 1, "workspace")
    assert done["sha256"] == hashlib.sha256(body).hexdigest() and done["bytes"] == len(body) and done["progress"] == 1.0
    assert manifest["counts"] == done["counts"] and done["counts"]["memories"] == 3 and done["counts"]["messages"] == 2
    ann = next(m for m in kinds["memories"] if m["id"] == seeded["ann"]["id"])
    assert (ann["content"], ann["agent"], ann["store"], ann["user_id"]) == ("Ann prefers the aisle seat.", "bot", "default", "ann")
    assert "embedding" not in ann and "search_vector" not in ann
    assert [r["content"] for r in kinds["memory_revisions"]] == ["Ann prefers the window seat."]
    assert [(m["session"], m["seq"], m["content"]) for m in kinds["messages"]] == [
        ("trip", 1, "Book me a flight to Oslo."), ("trip", 2, "Done: Friday 9:40."),
    ]
    assert [(r["predicate"], r["kind"]) for r in kinds["graph_rules"]] == [("part of", "transitive")]
    assert {m["data"].get("object") for m in kinds["memories"] if m["memory_type"] == "factual"} == {"Norway"}
    assert set(Export.objects.get(pk=done["id"]).user_ids) == {"ann", "bo"}


def test_it_carries_vectors_when_asked(actors: Actors, transactional_db: None) -> None:
    remember(actors.bot_key, "Ann prefers the aisle seat.", user_id="ann", embedding=[0.6, 0.8, *[0.0] * 382])
    started = api_client(actors.owner_key).post("/api/v1/exports", {"scope": "workspace", "with_vectors": True}, format="json").json()
    finished(actors.owner_key, started)
    _, kinds, _ = archive(actors.owner_key, started)
    [memory] = kinds["memories"]
    # Base64 of the stored float32 values, little-endian, as docs/portability.md says a reader finds them.
    vector = np.frombuffer(base64.b64decode(memory["embedding"]), dtype="<f4")
    assert len(vector) == 384 and vector[:3].tolist() == pytest.approx([0.6, 0.8, 0.0], abs=1e-7)



def test_a_users_export_is_an_access_request_for_compliance(actors: Actors, transactional_db: None) -> None:
    seed(actors)
    officer = compliance_key(actors)
    started = api_client(officer).post("/api/v1/exports", {"scope": "user", "user_id": "ann"}, format="json").json()
    assert started["user_id"] == "ann"
    finished(officer, started)
    manifest, kinds, _ = archive(officer, started)
    assert manifest["user_id"] == "ann"
    assert {m["user_id"] for m in kinds["memories"]} == {"ann"} and len(kinds["memories"]) == 2
    assert kinds["graph_rules"] == [] and {s["session_id"] for s in kinds["sessions"]} == {"trip"}
    audit = api_client(actors.owner_key).get("/api/v1/audit").json()["results"]
    requested = next(e for e in audit if e["action"] == "export_requested")
    assert "ann" not in json.dumps(requested) and requested["details"]["user_hash"]


def test_a_sessions_export_holds_that_session(actors: Actors, transactional_db: None) -> None:
    seed(actors)
    api_client(actors.bot_key).post("/api/v1/sessions", {"session_id": "other", "user_id": "bo"}, format="json")
    started = api_client(actors.owner_key).post("/api/v1/exports", {"scope": "session", "session_id": "trip"}, format="json").json()
    finished(actors.owner_key, started)
    _, kinds, _ = archive(actors.owner_key, started)
    assert [s["session_id"] for s in kinds["sessions"]] == ["trip"] and len(kinds["messages"]) == 2


def test_roles_decide_who_exports_what(actors: Actors) -> None:
    viewer, officer = api_client(actors.teammate_key), api_client(compliance_key(actors))
    assert_error(viewer.post("/api/v1/exports", {"scope": "workspace"}, format="json"), 403, "FORBIDDEN")
    assert_error(viewer.post("/api/v1/exports", {"scope": "user", "user_id": "ann"}, format="json"), 403, "FORBIDDEN")
    assert_error(officer.post("/api/v1/exports", {"scope": "workspace"}, format="json"), 403, "FORBIDDEN")
    assert_error(api_client(actors.bot_key).post("/api/v1/exports", {"scope": "workspace"}, format="json"), 403, "FORBIDDEN")
    assert_error(api_client().post("/api/v1/exports", {"scope": "workspace"}, format="json"), 401, "UNAUTHENTICATED")
    mine = api_client(actors.owner_key).post("/api/v1/exports", {"scope": "workspace"}, format="json").json()
    # Another workspace's admin, and a compliance officer for a workspace export: not theirs to read.
    assert_error(api_client(actors.outsider_key).get(f"/api/v1/exports/{mine['id']}"), 404, "EXPORT_NOT_FOUND")
    assert_error(officer.get(f"/api/v1/exports/{mine['id']}"), 403, "FORBIDDEN")
    assert_error(viewer.get(f"/api/v1/exports/{mine['id']}/download"), 403, "FORBIDDEN")
    assert Export.objects.count() == 1


def test_it_refuses_bad_requests_and_unfinished_downloads(actors: Actors) -> None:
    admin = api_client(actors.owner_key)
    assert_error(admin.post("/api/v1/exports", {"scope": "user"}, format="json"), 400, "VALIDATION_ERROR")
    assert_error(admin.post("/api/v1/exports", {"scope": "session"}, format="json"), 400, "VALIDATION_ERROR")
    assert_error(admin.post("/api/v1/exports", {"scope": "galaxy"}, format="json"), 400, "VALIDATION_ERROR")
    assert_error(admin.post("/api/v1/exports", {"scope": "session", "session_id": "nope"}, format="json"), 404, "SESSION_NOT_FOUND")
    assert_error(admin.get("/api/v1/exports/not-an-id"), 404, "EXPORT_NOT_FOUND")
    queued = admin.post("/api/v1/exports", {"scope": "workspace"}, format="json").json()  # db, not transactional: never started
    assert_error(admin.get(f"/api/v1/exports/{queued['id']}/download"), 409, "EXPORT_NOT_READY")
    assert Export.objects.count() == 1


def test_expired_exports_are_gone_and_swept(actors: Actors, transactional_db: None) -> None:
    remember(actors.bot_key, "Ann prefers the aisle seat.", user_id="ann")
    started = api_client(actors.owner_key).post("/api/v1/exports", {"scope": "workspace"}, format="json").json()
    finished(actors.owner_key, started)
    Export.objects.update(expires_at="2000-01-01T00:00:00Z")
    assert_error(api_client(actors.owner_key).get(f"/api/v1/exports/{started['id']}"), 404, "EXPORT_NOT_FOUND")
    assert exports_expired_delete() == 1 and not ExportPart.objects.exists()


def test_a_purge_deletes_every_export_holding_the_user(actors: Actors, transactional_db: None) -> None:
    seed(actors)
    officer = compliance_key(actors)
    of_ann = api_client(officer).post("/api/v1/exports", {"scope": "user", "user_id": "ann"}, format="json").json()
    whole = api_client(actors.owner_key).post("/api/v1/exports", {"scope": "workspace"}, format="json").json()
    of_bo = api_client(officer).post("/api/v1/exports", {"scope": "user", "user_id": "bo"}, format="json").json()
    for started in (of_ann, of_bo):
        finished(officer, started)
    finished(actors.owner_key, whole)
    purge = api_client(officer).post("/api/v1/purges", {"user_id": "ann"}, format="json").json()
    receipt = poll(lambda: (body := api_client(officer).get(f"/api/v1/purges/{purge['id']}").json())["status"] == "done" and body)
    assert receipt and receipt["receipt"]["deleted"]["portability.Export"] == 2
    assert [str(pk) for pk in Export.objects.values_list("pk", flat=True)] == [of_bo["id"]]
    assert ExportPart.objects.exclude(export_id=of_bo["id"]).count() == 0
