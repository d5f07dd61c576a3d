"""POST /api/v1/imports and GET /api/v1/imports/{id} (docs/portability.md, "Imports")."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import zipfile
from typing import Any

import numpy as np
import pytest

from django.core.files.uploadedfile import SimpleUploadedFile

from memoryhub.conversations.models import Message, Session
from memoryhub.core import services
from memoryhub.core.models import Role, Workspace
from memoryhub.memory.models import MemoryEntry, MemoryRevision, Review
from memoryhub.portability.models import Import
from tests.conftest import Actors, api_client, assert_error, poll, remember
from tests.test_exports_api import archive, compliance_key, finished, seed

# Fields that name a record in one workspace only: ids and what refers to them by id.
ID_FIELDS = {"id", "entry", "plan", "rule", "memory", "superseded_by", "source_import_id", "source_episode_id"}


class Target:
    """An empty workspace to import into: its admin's key, a store and an agent."""

    def __init__(self, slug: str = "initech") -> None:
        self.workspace = services.workspace_get_or_create(slug=slug)
        admin = services.operator_get_or_create(username=f"{slug}-admin", workspace=self.workspace, role=Role.ADMIN)
        self.admin_key = services.operator_key_issue(membership=admin)[1]
        store = services.store_get_or_create(workspace=self.workspace, name="default")
        agent = services.agent_get_or_create(workspace=self.workspace, name="bot", stores=[store])
        self.agent_key = services.agent_key_issue(agent=agent)[1]


def exported(key: str, scope: str = "workspace", **fields: Any) -> bytes:
    started = api_client(key).post("/api/v1/exports", {"scope": scope, **fields}, format="json").json()
    finished(key, started)
    return archive(key, started)[2]


def imported(key: str, data: bytes, *, fmt: str = "memoryhub", name: str = "archive.zip", **fields: Any) -> dict[str, Any]:
    response = api_client(key).post(
        "/api/v1/imports", {"file": SimpleUploadedFile(name, data), "format": fmt, "store": "default", "agent": "bot", **fields},
        format="multipart",
    )
    assert response.status_code == 202, response.content[:500]
    job = response.json()
    done = poll(lambda: (body := api_client(key).get(f"/api/v1/imports/{job['id']}").json())["status"] in ("done", "failed") and body)
    assert done and done["status"] == "done", (done or {}).get("error")
    return done


def records(kinds: dict[str, list[dict[str, Any]]]) -> dict[str, list[str]]:
    """Each kind's records with ids aside, comparable across workspaces."""
    return {
        kind: sorted(json.dumps({k: v for k, v in r.items() if k not in ID_FIELDS}, sort_keys=True) for r in rows)
        for kind, rows in kinds.items()
    }


def assert_same_records(before: dict[str, list[dict[str, Any]]], after: dict[str, list[dict[str, Any]]]) -> None:
    old, new = records(before), records(after)
    assert set(old) == set(new)
    for kind in old:
        assert new[kind] == old[kind], (kind, *sorted(set(old[kind]) ^ set(new[kind])))


def archive_kinds(data: bytes) -> dict[str, list[dict[str, Any]]]:
    with zipfile.ZipFile(io.BytesIO(data)) as zipped:
        return {
            name.removesuffix(".jsonl"): [json.loads(line) for line in zipped.read(name).decode().splitlines()]
            for name in zipped.namelist() if name.endswith(".jsonl")
        }


def search(key: str, query: str) -> list[str]:
    response = api_client(key).post("/api/v1/memories/search", {"query": query, "user_id": "ann", "max_results": 5}, format="json")
    assert response.status_code == 200, response.content[:500]
    return [hit["entry"]["content"] for hit in response.json()["results"]]


def test_it_round_trips_a_workspace_into_an_empty_one(actors: Actors, transactional_db: None) -> None:
    seed(actors)
    first = exported(actors.owner_key)
    target = Target()
    done = imported(target.admin_key, first)
    assert done["counts"]["refused"] == 0 and done["refusals"] == [], done
    assert done["counts"]["kinds"]["memories"]["created"] == 3 and done["counts"]["kinds"]["messages"]["created"] == 2
    assert_same_records(archive_kinds(first), archive_kinds(exported(target.admin_key)))
    # The same answers to the same question, in both workspaces.
    assert search(target.agent_key, "which seat does Ann like") == search(actors.bot_key, "which seat does Ann like")
    # A session carries on where the archive left it.
    appended = api_client(target.agent_key).post("/api/v1/sessions/trip/messages", {"role": "user", "content": "Thanks!"}, format="json")
    assert appended.status_code == 201, appended.content
    history = api_client(target.agent_key).get("/api/v1/sessions/trip/messages").json()["results"]
    assert [(m["seq"], m["content"]) for m in history][-1] == (3, "Thanks!")



def test_it_reads_vectors_written_as_arrays_of_numbers(actors: Actors, transactional_db: None) -> None:
    # Exports write a vector in base64; a file written by hand may give it as numbers (docs/portability.md).
    remember(actors.bot_key, "Ann prefers the aisle seat.", user_id="ann", embedding=[0.6, 0.8, *[0.0] * 382])
    written = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(exported(actors.owner_key, with_vectors=True))) as source, zipfile.ZipFile(written, "w") as out:
        [memory] = [json.loads(line) for line in source.read("memories.jsonl").splitlines()]
        memory["embedding"] = np.frombuffer(base64.b64decode(memory["embedding"]), dtype="<f4").tolist()
        memories = (json.dumps(memory) + "\n").encode()
        manifest = json.loads(source.read("manifest.json"))
        manifest["files"]["memories.jsonl"] = hashlib.sha256(memories).hexdigest()
        for name in source.namelist():
            out.writestr(name, memories if name == "memories.jsonl" else json.dumps(manifest) if name == "manifest.json" else source.read(name))
    target = Target()
    assert imported(target.admin_key, written.getvalue())["counts"]["kinds"]["memories"]["created"] == 1
    entry = MemoryEntry.objects.get(workspace=target.workspace)
    assert list(entry.embedding)[:3] == pytest.approx([0.6, 0.8, 0.0], abs=1e-7)
    assert search(target.agent_key, "which seat does Ann like") == ["Ann prefers the aisle seat."]

CALL = {"id": "c1", "type": "function", "function": {"name": "book", "arguments": "{}"}}


def test_it_round_trips_every_kind_with_its_references(actors: Actors, transactional_db: None) -> None:
    bot, owner = api_client(actors.bot_key), api_client(actors.owner_key)
    bot.post("/api/v1/sessions", {"session_id": "s", "user_id": "ann"}, format="json")
    bot.post("/api/v1/sessions/s/messages", {"messages": [
        {"role": "user", "content": "Book it.", "item": {"role": "user", "content": "Book it.", "id": 7}},
        {"role": "assistant", "content": "", "tool_calls": [CALL]},
        {"role": "tool", "content": "booked", "tool_call_id": "c1"},
    ]}, format="json")
    bot.post("/api/v1/sessions/s/branch", {"new_session_id": "s-alt", "upto_seq": 1}, format="json")
    bot.put("/api/v1/sessions/s/plan", {"goal": "Trip", "steps": [{"step_id": "fly", "description": "Fly"}, {"step_id": "stay", "description": "Hotel"}]},
            format="json")
    bot.post("/api/v1/sessions/s/tool-calls", {"call_id": "c1", "tool": "book", "result": "booked"}, format="json")
    assert bot.post("/api/v1/sessions/s/checkpoints", {"expected_version": 0, "state": {"step": "fly"}}, format="json").status_code == 201
    episode = bot.post("/api/v1/episodes", {"user_id": "ann", "session_id": "s", "task": "Book", "outcome": "success", "narrative": "Booked."},
                       format="json").json()
    remember(actors.bot_key, "Ann flew to Oslo.", user_id="ann", source={"episode_id": episode["id"]})
    remember(actors.bot_key, "Ann booked by phone.", user_id="ann", source={"session_id": "s", "seq": 1})
    asked = bot.post("/api/v1/approvals", {"session_id": "s", "tool": "pay", "args": {"eur": 40}}, format="json").json()
    owner.post(f"/api/v1/approvals/{asked['id']}/decision", {"decision": "approve", "remember": "exact"}, format="json")
    by_rule = bot.post("/api/v1/approvals", {"session_id": "s", "tool": "pay", "args": {"eur": 40}}, format="json").json()
    assert by_rule["status"] == "approved", by_rule
    first = exported(actors.owner_key)
    target = Target()
    done = imported(target.admin_key, first)
    assert done["counts"]["refused"] == 0, done["refusals"]
    before, after = archive_kinds(first), archive_kinds(exported(target.admin_key))
    assert all(before[kind] for kind in before if kind not in ("graph_rules", "memory_revisions")), {kind: len(rows) for kind, rows in before.items()}
    assert_same_records(before, after)
    # References followed: a branch its parent, steps their plan, a memory its episode, an approval its rule.
    assert Session.objects.get(workspace=target.workspace, session_id="s-alt").parent.session_id == "s"
    [by_episode] = [m for m in after["memories"] if m["content"] == "Ann flew to Oslo."]
    assert by_episode["source_episode_id"] == after["episodes"][0]["id"]
    assert [a["rule"] for a in after["approvals"]] == [None, after["approval_rules"][0]["id"]]
    assert {s["plan"] for s in after["plan_steps"]} == {after["plans"][0]["id"]}
    # What a person reading the archive needs, readable: a tool's output (issue 53, finding 8:
    # every round trip lost them) and a checkpoint's state, as JSON.
    assert [(c["call_id"], c["output"]) for c in before["tool_calls"]] == [("c1", "booked")]
    assert [c["state"] for c in before["checkpoints"]] == [{"step": "fly"}]
    # A framework's item comes back exactly (key order too), as the agent reads it.
    [first_message] = api_client(target.agent_key).get("/api/v1/sessions/s/messages?limit=1").json()["results"]
    assert json.dumps(first_message["item"]) == json.dumps({"role": "user", "content": "Book it.", "id": 7})
    recalled = api_client(target.agent_key).get("/api/v1/tool-calls/c1/result")
    assert recalled.status_code == 200 and recalled.json()["result"] == "booked"
    loaded = api_client(target.agent_key).get("/api/v1/sessions/s/checkpoints/latest").json()
    assert loaded["state"] == {"step": "fly"}


def test_it_creates_nothing_the_second_time(actors: Actors, transactional_db: None) -> None:
    seed(actors)
    data = exported(actors.owner_key)
    target = Target()
    first = imported(target.admin_key, data)
    second = imported(target.admin_key, data)
    assert second["counts"]["created"] == 0 and second["counts"]["skipped"] == first["counts"]["created"], second
    assert MemoryEntry.objects.filter(workspace=target.workspace).count() == 3
    assert Message.objects.filter(workspace=target.workspace).count() == 2


def test_it_never_brings_back_a_purged_user(actors: Actors, transactional_db: None) -> None:
    seed(actors)
    data = exported(actors.owner_key)
    compliance = api_client(compliance_key(actors))
    purge = compliance.post("/api/v1/purges", {"user_id": "ann", "block_new_writes": True}, format="json").json()
    assert poll(lambda: compliance.get(f"/api/v1/purges/{purge['id']}").json()["status"] == "done")
    MemoryEntry.objects.filter(workspace=actors.workspace, user_id="bo").delete()  # lost since the backup
    done = imported(actors.owner_key, data)
    refused = {r["kind"]: r["count"] for r in done["refusals"] if r["reason"] == "blocked"}
    assert refused["memories"] == 2 and refused["sessions"] == 1 and refused["messages"] == 2, done
    assert not MemoryEntry.objects.filter(workspace=actors.workspace, user_id="ann").exists()
    assert not Session.objects.filter(workspace=actors.workspace, user_id="ann").exists()
    assert not MemoryRevision.objects.filter(workspace=actors.workspace, user_id="ann").exists()
    # Bo's memory, restored with the id it had.
    assert list(MemoryEntry.objects.filter(workspace=actors.workspace, user_id="bo").values_list("content", flat=True)) == ["Bo likes tea."]


def test_it_refuses_an_archive_whose_checksums_do_not_match(actors: Actors, transactional_db: None) -> None:
    remember(actors.bot_key, "Ann prefers the aisle seat.", user_id="ann")
    data = exported(actors.owner_key)
    tampered = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(tampered, "w") as out:
        for name in source.namelist():
            body = source.read(name)
            out.writestr(name, body.replace(b"aisle", b"wing!") if name == "memories.jsonl" else body)
    response = api_client(actors.owner_key).post(
        "/api/v1/imports", {"file": SimpleUploadedFile("a.zip", tampered.getvalue()), "format": "memoryhub", "store": "default", "agent": "bot"},
        format="multipart",
    )
    body = assert_error(response, 422, "ARCHIVE_CHECKSUM_MISMATCH")
    assert "memories.jsonl" in body["message"]
    not_zip = api_client(actors.owner_key).post(
        "/api/v1/imports", {"file": SimpleUploadedFile("a.zip", b"hello"), "format": "memoryhub", "store": "default", "agent": "bot"},
        format="multipart",
    )
    assert_error(not_zip, 422, "INVALID_IMPORT_FILE")
    assert not Import.objects.exists()


def test_it_counts_a_dry_run_and_writes_nothing(actors: Actors, transactional_db: None) -> None:
    seed(actors)
    data = exported(actors.owner_key)
    target = Target()
    dry = imported(target.admin_key, data, dry_run="true")
    assert dry["dry_run"] and dry["counts"]["kinds"]["memories"]["created"] == 3 and dry["counts"]["kinds"]["sessions"]["created"] == 1
    assert not MemoryEntry.objects.filter(workspace=target.workspace).exists()
    assert not Session.objects.filter(workspace=target.workspace).exists()
    real = imported(target.admin_key, data)
    assert real["counts"] == dry["counts"]


def test_it_applies_redaction_and_quarantine_to_what_it_imports(actors: Actors, transactional_db: None) -> None:
    remember(actors.bot_key, "Call Ann on +44 20 7946 0958.", user_id="ann")
    data = exported(actors.owner_key)
    target = Target()
    Workspace.objects.filter(pk=target.workspace.pk).update(redact_memories=True, quarantine_sources=["import"])
    imported(target.admin_key, data)
    [entry] = MemoryEntry.objects.filter(workspace=target.workspace)
    assert "7946" not in entry.content and entry.review == Review.QUARANTINED and entry.source_import_id is not None


CHATGPT = [{
    "id": "conv-1", "title": "Trip to Oslo", "create_time": 1700000000.0, "current_node": "n3",
    "mapping": {
        "n1": {"id": "n1", "parent": None, "children": ["n2"], "message": None},
        "n2": {"id": "n2", "parent": "n1", "children": ["n3"], "message": {
            "author": {"role": "user"}, "create_time": 1700000001.0, "content": {"content_type": "text", "parts": ["Find me a flight to Oslo."]}}},
        "n3": {"id": "n3", "parent": "n2", "children": [], "message": {
            "author": {"role": "assistant"}, "create_time": 1700000002.0, "content": {"content_type": "text", "parts": ["Friday 9:40 it is."]}}},
    },
}]
CLAUDE = [{
    "uuid": "c-1", "name": "Tea", "created_at": "2024-05-01T10:00:00Z", "updated_at": "2024-05-01T10:05:00Z",
    "chat_messages": [
        {"uuid": "m1", "sender": "human", "text": "Which tea is calming?", "created_at": "2024-05-01T10:00:00Z"},
        {"uuid": "m2", "sender": "assistant", "text": "Chamomile.", "created_at": "2024-05-01T10:00:05Z"},
    ],
}]
MEM0 = {"results": [
    {"id": "m-1", "memory": "Prefers window seats", "user_id": "ann", "metadata": {"origin": "app"}, "categories": ["travel"],
     "created_at": "2024-07-20T10:00:00-07:00"},
    {"id": "m-2", "memory": "Allergic to peanuts", "user_id": "bo", "created_at": "2024-07-21T10:00:00Z"},
]}


def test_it_imports_a_chatgpt_export_as_sessions(actors: Actors, transactional_db: None) -> None:
    done = imported(actors.owner_key, json.dumps(CHATGPT).encode(), fmt="chatgpt", name="conversations.json", user_id="ann")
    assert done["counts"]["kinds"]["sessions"]["created"] == 1 and done["counts"]["kinds"]["messages"]["created"] == 2
    session = Session.objects.get(workspace=actors.workspace, session_id="chatgpt-conv-1")
    assert session.user_id == "ann" and session.metadata["title"] == "Trip to Oslo"
    assert list(session.messages.order_by("seq").values_list("role", "content")) == [
        ("user", "Find me a flight to Oslo."), ("assistant", "Friday 9:40 it is."),
    ]
    again = imported(actors.owner_key, json.dumps(CHATGPT).encode(), fmt="chatgpt", name="conversations.json", user_id="ann")
    assert again["counts"]["created"] == 0 and again["counts"]["skipped"] == 3


def test_it_imports_a_claude_export_as_sessions(actors: Actors, transactional_db: None) -> None:
    imported(actors.owner_key, json.dumps(CLAUDE).encode(), fmt="claude", name="conversations.json", user_id="bo")
    session = Session.objects.get(workspace=actors.workspace, session_id="claude-c-1")
    assert list(session.messages.order_by("seq").values_list("role", "content")) == [
        ("user", "Which tea is calming?"), ("assistant", "Chamomile."),
    ]
    history = api_client(actors.bot_key).get("/api/v1/sessions/claude-c-1/messages")
    assert [m["content"] for m in history.json()["results"]] == ["Which tea is calming?", "Chamomile."]


def test_it_imports_mem0_memories_with_their_users_and_metadata(actors: Actors, transactional_db: None) -> None:
    done = imported(actors.owner_key, json.dumps(MEM0).encode(), fmt="mem0", name="mem0.json")
    assert done["counts"]["kinds"]["memories"] == {"created": 2, "skipped": 0, "refused": 0}
    ann = MemoryEntry.objects.get(workspace=actors.workspace, user_id="ann")
    assert (ann.content, ann.tags, ann.metadata["origin"], ann.source_kind) == ("Prefers window seats", ["travel"], "app", "import")
    found = api_client(actors.bot_key).post("/api/v1/memories/search", {"query": "seat", "user_id": "ann"}, format="json")
    assert [hit["entry"]["content"] for hit in found.json()["results"]] == ["Prefers window seats"]


def test_it_refuses_a_malformed_foreign_file_naming_what_is_wrong(actors: Actors, transactional_db: None) -> None:
    response = api_client(actors.owner_key).post(
        "/api/v1/imports", {"file": SimpleUploadedFile("c.json", b'[{"id": "x", "mapping": 3}]'), "format": "chatgpt",
                            "store": "default", "agent": "bot", "user_id": "ann"}, format="multipart",
    )
    body = assert_error(response, 422, "INVALID_IMPORT_FILE")
    assert "mapping" in body["message"]
    nobody = api_client(actors.owner_key).post(
        "/api/v1/imports", {"file": SimpleUploadedFile("c.json", json.dumps(CLAUDE).encode()), "format": "claude", "store": "default", "agent": "bot"},
        format="multipart",
    )
    assert_error(nobody, 400, "VALIDATION_ERROR")


def test_it_lets_only_the_workspaces_admins_import(actors: Actors, transactional_db: None) -> None:
    upload = {"file": SimpleUploadedFile("m.json", json.dumps(MEM0).encode()), "format": "mem0", "store": "default", "agent": "bot"}
    assert_error(api_client(actors.teammate_key).post("/api/v1/imports", upload, format="multipart"), 403, "FORBIDDEN")
    assert_error(api_client(actors.bot_key).post("/api/v1/imports", upload, format="multipart"), 403, "FORBIDDEN")
    unknown_store = {**upload, "file": SimpleUploadedFile("m.json", json.dumps(MEM0).encode()), "store": "nope"}
    assert_error(api_client(actors.owner_key).post("/api/v1/imports", unknown_store, format="multipart"), 404, "STORE_NOT_FOUND")
    done = imported(actors.owner_key, json.dumps(MEM0).encode(), fmt="mem0")
    assert_error(api_client(actors.outsider_key).get(f"/api/v1/imports/{done['id']}"), 404, "IMPORT_NOT_FOUND")
    assert_error(api_client(actors.teammate_key).get(f"/api/v1/imports/{done['id']}"), 403, "FORBIDDEN")


def test_it_holds_back_a_memory_by_the_source_it_names_as_memory_writes_do(actors: Actors, transactional_db: None) -> None:
    # quarantine_sources names what a memory came from; an import is one source, the tool call a record names another.
    agent = api_client(actors.bot_key)
    agent.post("/api/v1/sessions", {"session_id": "s1", "user_id": "ann"}, format="json")
    agent.post("/api/v1/sessions/s1/tool-calls", {"tool": "crm.lookup", "call_id": "c1", "result": "Ann lives in Oslo"}, format="json")
    learnt = agent.post("/api/v1/memories", {"content": "Ann lives in Oslo", "user_id": "ann", "source": {"session_id": "s1", "call_id": "c1"}},
                        format="json")
    assert learnt.status_code == 201 and learnt.json()["source"]["kind"] == "tool_call"
    data = exported(actors.owner_key)
    target = Target()
    Workspace.objects.filter(pk=target.workspace.pk).update(quarantine_sources=["tool_call"])
    imported(target.admin_key, data)
    [entry] = MemoryEntry.objects.filter(workspace=target.workspace)
    assert (entry.source_kind, entry.review) == ("tool_call", Review.QUARANTINED)
    assert search(target.agent_key, "Where does Ann live?") == []  # no agent sees it


def _rewritten(data: bytes, change: dict[str, Any]) -> bytes:
    """The archive with some of its files' records changed (`change`: kind → records),
    and its manifest's checksums made to match, as a person with a text editor would."""
    written = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(written, "w") as out:
        manifest = json.loads(source.read("manifest.json"))
        files = {name: source.read(name) for name in source.namelist() if name != "manifest.json"}
        for kind, rows in change.items():
            files[f"{kind}.jsonl"] = b"".join(json.dumps(row).encode() + b"\n" for row in rows)
            manifest["files"][f"{kind}.jsonl"] = hashlib.sha256(files[f"{kind}.jsonl"]).hexdigest()
            manifest["counts"][kind] = len(rows)
        for name, body in files.items():
            out.writestr(name, body)
        out.writestr("manifest.json", json.dumps(manifest))
    return written.getvalue()


def test_an_archive_naming_another_workspaces_memories_changes_nothing_there(actors: Actors, transactional_db: None) -> None:
    # Issue 53, finding 1: globex's admin edits an export of globex to name acme's memories, so
    # that a "restore" (ids kept) supersedes one of them and gives it a revision of globex's text.
    first = remember(actors.bot_key, "Ann lives in Oslo.", user_id="ann")
    second = remember(actors.bot_key, "Ann lives in Bergen.", user_id="ann")
    spy = api_client(actors.spy_key)
    theirs = remember(actors.spy_key, "Bo likes tea.", user_id="bo")
    spy.patch(f"/api/v1/memories/{theirs['id']}", {"content": "Bo likes green tea."}, format="json")
    kinds = archive_kinds(exported(actors.outsider_key))
    [memory], [revision] = kinds["memories"], kinds["memory_revisions"]
    crafted = _rewritten(exported(actors.outsider_key), {
        "memories": [{**memory, "id": first["id"], "superseded_by": second["id"]}],
        "memory_revisions": [{**revision, "entry": first["id"], "revision": 9, "content": "INJECTED"}],
    })
    response = api_client(actors.outsider_key).post(
        "/api/v1/imports", {"file": SimpleUploadedFile("globex.zip", crafted), "format": "memoryhub", "store": "default", "agent": "spy"},
        format="multipart",
    )
    assert response.status_code == 202, response.content[:500]
    assert poll(lambda: api_client(actors.outsider_key).get(f"/api/v1/imports/{response.json()['id']}").json()["status"] in ("done", "failed"))
    untouched = MemoryEntry.objects.get(pk=first["id"])
    assert (untouched.workspace_id, untouched.superseded_by_id, untouched.content) == (actors.workspace.pk, None, "Ann lives in Oslo.")
    assert not MemoryRevision.objects.filter(entry_id=first["id"]).exists()
    assert_error(api_client(actors.bot_key).post(f"/api/v1/memories/{first['id']}/revert", {"revision": 9}, format="json"), 404, "REVISION_NOT_FOUND")
    # What globex's file held went into globex, under ids of its own.
    assert MemoryEntry.objects.filter(workspace=actors.foreign_workspace).exclude(pk=first["id"]).count() == 2


def test_a_restore_is_an_archive_this_hub_sealed_for_this_workspace(actors: Actors, transactional_db: None) -> None:
    # Ids are kept (a restore) only for the workspace's own, untouched export; the same file
    # changed by hand is a copy, under ids of its own.
    kept = remember(actors.bot_key, "Ann lives in Oslo.", user_id="ann")
    data = exported(actors.owner_key)
    MemoryEntry.objects.filter(pk=kept["id"]).delete()
    imported(actors.owner_key, data)
    assert MemoryEntry.objects.get(pk=kept["id"]).content == "Ann lives in Oslo."  # restored as it was
    MemoryEntry.objects.filter(pk=kept["id"]).delete()
    [memory] = archive_kinds(data)["memories"]
    imported(actors.owner_key, _rewritten(data, {"memories": [{**memory, "content": "Ann lives in Bergen."}]}))
    assert not MemoryEntry.objects.filter(pk=kept["id"]).exists()
    assert list(MemoryEntry.objects.filter(workspace=actors.workspace).values_list("content", flat=True)) == ["Ann lives in Bergen."]


def _zip_with(member: bytes, *, name: str = "manifest.json") -> bytearray:
    written = io.BytesIO()
    with zipfile.ZipFile(written, "w", compression=zipfile.ZIP_DEFLATED) as out:
        out.writestr(name, member)
    return bytearray(written.getvalue())


def _patched_header_field(data: bytearray, *, local: int, central: int, value: int, size: int = 2) -> bytes:
    """A field of the first member's headers (its offsets in the local and the central one) set to `value`."""
    at = data.index(b"PK\x03\x04") + local
    data[at:at + size] = value.to_bytes(size, "little")
    at = data.index(b"PK\x01\x02") + central
    data[at:at + size] = value.to_bytes(size, "little")
    return bytes(data)


@pytest.mark.parametrize("kind", ["compression method 99", "encrypted", "corrupt deflate data", "mem0 nested 100,000 deep"])
def test_it_refuses_a_file_it_cannot_read_with_a_4xx_never_a_500(actors: Actors, transactional_db: None, kind: str) -> None:
    # Issue 53, finding 7: each of these answered 500 INTERNAL_ERROR.
    manifest = json.dumps({"format": "memoryhub-archive", "version": 1, "files": {}, "counts": {}}).encode() * 20
    fmt, data = "memoryhub", b""
    if kind == "compression method 99":
        data = _patched_header_field(_zip_with(manifest), local=8, central=10, value=99)
    elif kind == "encrypted":
        data = _patched_header_field(_zip_with(manifest), local=6, central=8, value=1)
    elif kind == "corrupt deflate data":
        raw = _zip_with(manifest)
        start = raw.index(b"PK\x03\x04") + 30 + len("manifest.json")
        raw[start:start + 8] = b"\xff" * 8
        data = bytes(raw)
    else:
        fmt, data = "mem0", b"[" * 100_000 + b"]" * 100_000
    response = api_client(actors.owner_key).post(
        "/api/v1/imports", {"file": SimpleUploadedFile("odd.bin", data), "format": fmt, "store": "default", "agent": "bot"}, format="multipart",
    )
    assert_error(response, 422, "INVALID_IMPORT_FILE")
    assert not Import.objects.exists() and not MemoryEntry.objects.exists()


def archive_of(members: dict[str, bytes], counts: dict[str, int] | None = None) -> bytes:
    """A zip of the members as given and a manifest right about them: their checksums, and
    `counts` (by default each member's lines), so that an import reads them."""
    written = io.BytesIO()
    with zipfile.ZipFile(written, "w", compression=zipfile.ZIP_DEFLATED) as out:
        for name, data in members.items():
            out.writestr(name, data)
        out.writestr("manifest.json", json.dumps({
            "format": "memoryhub-archive", "version": 1,
            "counts": counts or {name.removesuffix(".jsonl"): data.count(b"\n") for name, data in members.items()},
            "files": {name: hashlib.sha256(data).hexdigest() for name, data in members.items()},
        }))
    return written.getvalue()


def _memories_archive(memories: bytes, count: int) -> bytes:
    """A zip of `memories.jsonl` as given and a manifest whose checksum matches it."""
    return archive_of({"memories.jsonl": memories}, {"memories": count})


def _upload(key: str, data: bytes) -> Any:
    return api_client(key).post(
        "/api/v1/imports", {"file": SimpleUploadedFile("archive.zip", data), "format": "memoryhub", "store": "default", "agent": "bot"},
        format="multipart",
    )


def test_it_refuses_a_line_longer_than_any_record_at_once(actors: Actors, transactional_db: None, settings: Any) -> None:
    # Issue 53, finding 2: a small zip holding one line of many megabytes was read whole into memory.
    settings.MEMORYHUB_MAX_BODY_BYTES = 64 * 1024  # the limit follows the API's largest body; a small one keeps the test small
    line = b" " * (3 * 1024 * 1024)  # three blocks of the checksum pass, no line break
    body = assert_error(_upload(actors.owner_key, _memories_archive(line, 1)), 422, "INVALID_IMPORT_FILE")
    assert "memories.jsonl: line 1 is longer than 65536 bytes" in body["message"]
    assert not Import.objects.exists()


def test_it_refuses_an_archive_that_inflates_past_the_limit(actors: Actors, transactional_db: None, settings: Any) -> None:
    settings.MEMORYHUB_IMPORT_MAX_INFLATED_BYTES = 1024 * 1024
    lines = b"".join(b'{"id": "x"}\n' for _ in range(200_000))  # 2.4 MB of short lines, a few kB zipped
    bomb = _memories_archive(lines, 200_000)
    assert len(bomb) < 100_000
    body = assert_error(_upload(actors.owner_key, bomb), 422, "INVALID_IMPORT_FILE")
    assert "MEMORYHUB_IMPORT_MAX_INFLATED_BYTES" in body["message"]


def test_it_reads_a_checkpoints_state_as_archives_wrote_it_before(actors: Actors, transactional_db: None) -> None:
    # Before 2026-12-07 a state was written as base64 of its zlib-compressed JSON.
    import zlib

    bot = api_client(actors.bot_key)
    bot.post("/api/v1/sessions", {"session_id": "s", "user_id": "ann"}, format="json")
    bot.post("/api/v1/sessions/s/checkpoints", {"expected_version": 0, "state": {"cursor": 7}}, format="json")
    data = exported(actors.owner_key)
    [checkpoint] = archive_kinds(data)["checkpoints"]
    older = {**checkpoint, "state": base64.b64encode(zlib.compress(json.dumps({"cursor": 7}).encode())).decode()}
    target = Target()
    imported(target.admin_key, _rewritten(data, {"checkpoints": [older]}))
    assert api_client(target.agent_key).get("/api/v1/sessions/s/checkpoints/latest").json()["state"] == {"cursor": 7}


def test_it_holds_imported_memories_and_messages_to_the_apis_limits(actors: Actors, transactional_db: None) -> None:
    # Issue 53, finding 3: an imported memory of 25,000,013 characters and a message of 10,000,003 were stored.
    remember(actors.bot_key, "Ann lives in Oslo.", user_id="ann")
    bot = api_client(actors.bot_key)
    bot.post("/api/v1/sessions", {"session_id": "s", "user_id": "ann"}, format="json")
    bot.post("/api/v1/sessions/s/messages", {"role": "user", "content": "Hello"}, format="json")
    data = exported(actors.owner_key)
    kinds = archive_kinds(data)
    [memory], [message], [session] = kinds["memories"], kinds["messages"], kinds["sessions"]
    long_text = "x" * 40_000
    crafted = _rewritten(data, {
        "memories": [
            {**memory, "content": long_text}, {**memory, "id": "m-nul", "content": "nul \u0000 here"},
            {**memory, "id": "m-tags", "tags": ["t"] * 65}, {**memory, "id": "m-user", "user_id": ""},
            {**memory, "id": "m-meta", "metadata": {"x": "y" * 70_000}}, {**memory, "id": "m-ok", "content": "Bo likes tea."},
        ],
        "messages": [
            {**message, "content": long_text}, {**message, "seq": 2, "content": "fine"}, {**message, "seq": 3, "item": "[1, 2]"},
            {**message, "seq": 4, "item": "{not json"}, {**message, "seq": 5, "item": {"as": "an object"}},
            {**message, "seq": 7, "item": '{"score": NaN}'},
            {**message, "seq": 6, "item": json.dumps({"x": "y" * 1_100_000})},
        ],
        "sessions": [
            session, {**session, "session_id": "s-text", "state": "text"}, {**session, "session_id": "s-big", "state": {"x": "y" * 1_100_000}},
            {**session, "session_id": "s-list", "metadata": ["a"]},
        ],
    })
    target = Target()
    done = imported(target.admin_key, crafted)
    refused = {(r["kind"], r["reason"]): r["count"] for r in done["refusals"]}
    assert refused == {
        ("memories", "content_too_long"): 1, ("memories", "invalid_text"): 1, ("memories", "invalid_tags"): 1,
        ("memories", "invalid_user_id"): 1, ("memories", "json_too_large"): 1, ("messages", "content_too_long"): 1,
        ("messages", "invalid_item"): 4, ("messages", "item_too_large"): 1,
        ("sessions", "invalid_state"): 1, ("sessions", "state_too_large"): 1, ("sessions", "invalid_metadata"): 1,
    }, done["refusals"]
    assert list(MemoryEntry.objects.filter(workspace=target.workspace).values_list("content", flat=True)) == ["Bo likes tea."]
    assert list(Message.objects.filter(workspace=target.workspace).values_list("content", flat=True)) == ["fine"]


def test_it_finds_a_long_line_between_short_ones_whatever_the_limit(actors: Actors, transactional_db: None, settings: Any) -> None:
    # A limit below the size of the blocks the check reads: the long line sits inside one block.
    settings.MEMORYHUB_MAX_BODY_BYTES = 1024
    memories = b'{"id": "a"}\n' + b"x" * 5000 + b'\n{"id": "b"}\n'
    body = assert_error(_upload(actors.owner_key, _memories_archive(memories, 3)), 422, "INVALID_IMPORT_FILE")
    assert "memories.jsonl: line 2 is longer than 1024 bytes" in body["message"]


def test_it_holds_imported_states_and_outputs_to_the_apis_limits(actors: Actors, transactional_db: None, settings: Any) -> None:
    # A checkpoint's state and a tool's output past what a save or a result over the API may be.
    bot = api_client(actors.bot_key)
    bot.post("/api/v1/sessions", {"session_id": "s", "user_id": "ann"}, format="json")
    assert bot.post("/api/v1/sessions/s/checkpoints", {"expected_version": 0, "state": {"step": 1}}, format="json").status_code == 201
    assert bot.post("/api/v1/sessions/s/tool-calls", {"call_id": "c1", "tool": "t", "result": "short"}, format="json").status_code == 201
    kinds = archive_kinds(exported(actors.owner_key))
    [checkpoint], [call] = kinds["checkpoints"], kinds["tool_calls"]
    settings.MEMORYHUB_MAX_CHECKPOINT_BYTES = 1000
    settings.MEMORYHUB_MAX_TOOL_RESULT_BYTES = 1000
    crafted = _rewritten(exported(actors.owner_key), {
        "checkpoints": [{**checkpoint, "state": {"notes": "n" * 2000}}, {**checkpoint, "id": 99, "version": 2, "state": {"step": 2}}],
        "tool_calls": [{**call, "output": "o" * 2000}, {**call, "id": 98, "call_id": "c2", "output": "fine"}],
    })
    target = Target()
    done = imported(target.admin_key, crafted)
    refused = {(r["kind"], r["reason"]): r["count"] for r in done["refusals"]}
    assert refused == {("checkpoints", "state_too_large"): 1, ("tool_calls", "output_too_large"): 1}, done["refusals"]
    assert done["counts"]["kinds"]["checkpoints"]["created"] == 1 and done["counts"]["kinds"]["tool_calls"]["created"] == 1


def test_it_refuses_a_record_of_more_values_than_it_would_parse(actors: Actors, transactional_db: None) -> None:
    # Issue 53, finding 2: a line of tiny objects is ten times its size once parsed (a 16 MB
    # line took 290 MB); past MAX_RECORD_VALUES it is refused unparsed, the rest imported.
    from memoryhub.portability.loading import MAX_RECORD_VALUES

    crowded = b'{"id": "m1", "user_id": "u1", "content": "c", "metadata": {"x": [' + b"0," * MAX_RECORD_VALUES + b'0]}}'
    fine = b'{"id": "m2", "user_id": "u1", "content": "Ann likes tea."}'
    done = imported(actors.owner_key, _memories_archive(crowded + b"\n" + fine + b"\n", 2))
    assert done["refusals"] == [{"kind": "memories", "reason": "too_many_values", "count": 1}]
    assert list(MemoryEntry.objects.filter(workspace=actors.workspace).values_list("content", flat=True)) == ["Ann likes tea."]
