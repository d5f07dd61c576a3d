"""Right to be forgotten: a canary string in every kind of record of user U, a control
user V; after the purge no table holds the canary and V is unchanged."""

from __future__ import annotations


from django.apps import apps
from django.db import connection

from memoryhub.approvals.models import ApprovalVote
from memoryhub.compliance.models import PurgeRequest
from memoryhub.compliance.services import purge_counts
from memoryhub.core.registry import user_models, user_rows
from memoryhub.memory.models import MemoryEntry
from memoryhub.notifications.models import EVENTS, WebhookDelivery
from memoryhub.notifications.services import EndpointInput, webhook_create
from tests.conftest import Actors, api_client, assert_error, purge_finished

CANARY = "canary-zx81-spectrum"


def seed_user(actors: Actors, user_id: str, marker: str) -> None:
    bot = api_client(actors.bot_key)
    sid = f"session-{user_id}"
    bot.post("/api/v1/memories", {"content": f"{marker} note", "user_id": user_id}, format="json")
    bot.post("/api/v1/memories", {"content": f"{marker} fact", "user_id": user_id, "memory_type": "factual",
                                  "data": {"subject": "x", "predicate": "likes", "object": marker}}, format="json")
    # Facts in the graph, one town shared with other users, and a rule that infers from them.
    api_client(actors.owner_key).put("/api/v1/graph/rules", {"rules": [{"predicate": "part of", "kind": "transitive"}]}, format="json")
    for subject, obj in ((f"{marker} street", f"{marker} town"), (f"{marker} town", "Europe")):
        bot.post("/api/v1/graph/edges", {"subject": subject, "predicate": "part of", "object": obj, "user_id": user_id}, format="json")
    bot.post("/api/v1/sessions", {"session_id": sid, "user_id": user_id, "metadata": {"m": marker}}, format="json")
    call = {"id": f"call-{user_id}", "type": "function", "function": {"name": "f", "arguments": marker}}
    bot.post(f"/api/v1/sessions/{sid}/messages", {"messages": [
        {"role": "user", "content": f"{marker} hello"}, {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "content": f"{marker} result", "tool_call_id": f"call-{user_id}"}, {"role": "assistant", "content": f"{marker} bye"},
    ]}, format="json")
    bot.patch(f"/api/v1/sessions/{sid}/messages/1", {"content": f"{marker} edited"}, format="json")
    bot.post(f"/api/v1/sessions/{sid}/summarize")
    bot.get(f"/api/v1/sessions/{sid}/context", {"strategy": "summarize", "summary_ratio": 0.8, "preserve_recent": 0})
    bot.put(f"/api/v1/sessions/{sid}/plan", {"goal": f"{marker} goal", "steps": [{"step_id": "a", "description": marker}]}, format="json")
    bot.post(f"/api/v1/sessions/{sid}/tool-calls", {"call_id": f"tc-{user_id}", "tool": "t", "args": {"q": marker}, "result": f"{marker} output", "step_id": "a"}, format="json")
    bot.post(f"/api/v1/sessions/{sid}/checkpoints", {"expected_version": 0, "state": {"m": marker}}, format="json")
    bot.post(f"/api/v1/sessions/{sid}/branch", {"new_session_id": f"{sid}-b"}, format="json")
    bot.post("/api/v1/episodes", {"user_id": user_id, "task": f"{marker} task", "outcome": "success", "narrative": f"{marker} one. Two. Three.", "session_id": sid}, format="json")
    # A pending approval, a decided one, and the decision remembered.
    bot.post("/api/v1/approvals", {"session_id": sid, "tool": f"{marker}-tool", "args": {"q": marker}, "context": marker}, format="json")
    decided = bot.post("/api/v1/approvals", {"session_id": sid, "tool": f"{marker}-tool", "args": {"r": marker}}, format="json").json()
    api_client(actors.owner_key).post(f"/api/v1/approvals/{decided['id']}/decision", {"decision": "approve", "remember": "exact"}, format="json")
    # One that needs two approvers, approved by one so far (its vote goes with it).
    several = bot.post("/api/v1/approvals", {"session_id": sid, "tool": f"{marker}-tool", "args": {"s": marker}, "required_approvals": 2}, format="json").json()
    api_client(actors.owner_key).post(f"/api/v1/approvals/{several['id']}/decision", {"decision": "approve"}, format="json")


def table_dump() -> str:
    """Every text and JSON column of every table of ours, as one string."""
    parts = []
    with connection.cursor() as cursor:
        for model in apps.get_models():
            table = model._meta.db_table
            columns = [f.column for f in model._meta.concrete_fields if f.get_internal_type() in ("TextField", "CharField", "JSONField", "ArrayField", "SlugField")]
            if columns:
                cursor.execute(f"SELECT {', '.join(f'CAST({c} AS text)' for c in columns)} FROM {table}")
                parts += [str(row) for row in cursor.fetchall()]
    return "\n".join(parts)


def api_views(actors: Actors) -> dict[str, str]:
    """What an agent reads back about user-u, path by path."""
    bot = api_client(actors.bot_key)
    paths = [
        "/api/v1/memories?user_id=user-u", "/api/v1/sessions/session-user-u/messages", "/api/v1/sessions/session-user-u-b/messages",
        "/api/v1/sessions/session-user-u/checkpoints/latest", "/api/v1/sessions/session-user-u/plan", "/api/v1/tool-calls/tc-user-u/result",
        "/api/v1/approvals?session_id=session-user-u",
    ]
    bodies = {path: bot.get(path).content.decode() for path in paths}
    bodies["search"] = bot.post("/api/v1/memories/search", {"query": CANARY, "mode": "hybrid"}, format="json").content.decode()
    bodies["similar episodes"] = bot.post("/api/v1/episodes/similar", {"task": f"{CANARY} task"}, format="json").content.decode()
    # The graph: the user's facts, and what the rules infer from them (Europe, from the street).
    bodies["graph neighbours"] = bot.get("/api/v1/graph/neighbors", {"entity": "Europe", "depth": 2}).content.decode()
    bodies["graph path"] = bot.get("/api/v1/graph/path", {"from": "Europe", "to": f"{CANARY} street"}).content.decode()
    bodies["graph grounding"] = bot.post("/api/v1/graph/grounding", {"text": "What is part of Europe?"}, format="json").content.decode()
    return bodies


def snapshot(workspace_id: int, user_id: str) -> dict[str, list]:
    return {m._meta.label: sorted(map(str, user_rows(m, workspace_id=workspace_id, user_id=user_id).values_list())) for m in user_models()}


def test_it_forgets_a_user_everywhere_and_keeps_the_others(actors: Actors, transactional_db: None, settings: object) -> None:
    # Webhook deliveries that carry what an approver reads: the canary's approval args, queued
    # for a receiver that does not answer.
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]  # type: ignore[attr-defined]
    webhook_create(membership=actors.owner, item=EndpointInput(url="http://127.0.0.1:9/hook", events=list(EVENTS), include_content=True))
    seed_user(actors, "user-u", CANARY)
    seed_user(actors, "user-v", "control-marker")
    assert CANARY in table_dump()
    assert WebhookDelivery.objects.filter(body__contains=CANARY, user_id="user-u").exists()
    assert [path for path, body in api_views(actors).items() if CANARY not in body] == []  # so that its absence later means something
    before = snapshot(actors.workspace.pk, "user-v")
    compliance = api_client(actors.owner_key)  # admins may purge too

    dry = compliance.post("/api/v1/purges", {"user_id": "user-u", "dry_run": True}, format="json").json()
    assert dry["status"] == "done" and dry["counts"]["memory.MemoryEntry"] >= 3 and dry["counts"]["conversations.Message"] == 8
    assert CANARY in table_dump()  # a dry run deletes nothing

    started = compliance.post("/api/v1/purges", {"user_id": "user-u"}, format="json")
    assert started.status_code == 202 and started.json()["status"] in ("queued", "running", "done")
    purge_finished(started.json()["id"])
    body = compliance.get(f"/api/v1/purges/{started.json()['id']}").json()
    assert body["status"] == "done", body
    receipt = body["receipt"]
    assert receipt["verification"]["passed"] is True and receipt["verification"]["remaining"] == {}
    assert "user-u" not in str(receipt) and CANARY not in str(receipt)
    assert all(n == 0 for n in purge_counts(workspace_id=actors.workspace.pk, user_id="user-u").values())
    assert CANARY not in table_dump()
    assert list(ApprovalVote.objects.values_list("approval__user_id", flat=True)) == ["user-v"]  # user-u's went with its approval
    assert snapshot(actors.workspace.pk, "user-v") == before
    for path, body in api_views(actors).items():
        assert CANARY not in body, path
    for path in ("/api/v1/purges", "/api/v1/audit"):
        assert CANARY not in compliance.get(path).content.decode() and "user-u" not in compliance.get(path).content.decode()


def test_only_compliance_and_admin_operators_purge(actors: Actors) -> None:
    assert_error(api_client(actors.teammate_key).post("/api/v1/purges", {"user_id": "u1"}, format="json"), 403, "FORBIDDEN")
    assert_error(api_client(actors.bot_key).post("/api/v1/purges", {"user_id": "u1"}, format="json"), 403, "FORBIDDEN")
    assert_error(api_client(actors.owner_key).post("/api/v1/purges", {"user_id": ""}, format="json"), 400, "VALIDATION_ERROR")
    purge = api_client(actors.owner_key).post("/api/v1/purges", {"user_id": "u1", "dry_run": True}, format="json").json()
    assert_error(api_client(actors.outsider_key).get(f"/api/v1/purges/{purge['id']}"), 404, "PURGE_NOT_FOUND")
    assert PurgeRequest.objects.get().pending_user_id == ""


def test_it_blocks_new_writes_for_a_purged_user_until_lifted(actors: Actors, transactional_db: None) -> None:
    from memoryhub.privacy.models import BlockedUser

    bot = api_client(actors.bot_key)
    bot.post("/api/v1/memories", {"content": "before", "user_id": "gone"}, format="json")
    response = api_client(actors.owner_key).post("/api/v1/purges", {"user_id": "gone", "block_new_writes": True}, format="json")
    assert response.status_code == 202
    assert "gone" not in BlockedUser.objects.get().user_hash
    assert_error(bot.post("/api/v1/memories", {"content": "after", "user_id": "gone"}, format="json"), 403, "USER_PURGED")
    assert_error(bot.post("/api/v1/sessions", {"session_id": "s", "user_id": "gone"}, format="json"), 403, "USER_PURGED")
    assert bot.post("/api/v1/memories", {"content": "others are fine", "user_id": "stays"}, format="json").status_code == 201
    # A batch about many users with the blocked one among them is refused whole.
    batch = [{"content": f"batch {n}", "user_id": f"user-{n}"} for n in range(20)] + [{"content": "hidden", "user_id": "gone"}]
    assert_error(bot.post("/api/v1/memories/batch", {"items": batch}, format="json"), 403, "USER_PURGED")
    assert not MemoryEntry.objects.filter(content__startswith="batch ").exists()
    assert_error(api_client(actors.teammate_key).post("/api/v1/purges/unblock", {"user_id": "gone"}, format="json"), 403, "FORBIDDEN")
    assert api_client(actors.owner_key).post("/api/v1/purges/unblock", {"user_id": "gone"}, format="json").status_code == 204
    assert_error(api_client(actors.owner_key).post("/api/v1/purges/unblock", {"user_id": "gone"}, format="json"), 404, "NOT_BLOCKED")
    assert purge_finished(response.json()["id"]).status == "done"
    assert bot.post("/api/v1/memories", {"content": "welcome back", "user_id": "gone"}, format="json").status_code == 201


def test_a_purge_left_queued_by_a_crash_is_started_again(actors: Actors, transactional_db: None) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from memoryhub.compliance.tasks import resume_purges
    from memoryhub.privacy.services import user_hash

    api_client(actors.bot_key).post("/api/v1/memories", {"content": "left behind", "user_id": "crashy"}, format="json")
    # As if the process died after the 202, before its task ran.
    purge = PurgeRequest.objects.create(
        workspace=actors.workspace, requested_by=actors.owner.user, user_hash=user_hash(workspace_id=actors.workspace.pk, user_id="crashy"),
        pending_user_id="crashy", created_at=timezone.now() - timedelta(minutes=5),
    )
    assert resume_purges() == 1
    assert purge_finished(purge.pk).status == "done"
    assert all(n == 0 for n in purge_counts(workspace_id=actors.workspace.pk, user_id="crashy").values())


def test_it_lists_the_workspace_purges_newest_first(actors: Actors) -> None:
    owner = api_client(actors.owner_key)
    ids = [owner.post("/api/v1/purges", {"user_id": f"u{i}", "dry_run": True}, format="json").json()["id"] for i in range(3)]
    api_client(actors.outsider_key).post("/api/v1/purges", {"user_id": "u0", "dry_run": True}, format="json")
    # Dry runs are previews, not purges: the list is of real ones.
    assert owner.get("/api/v1/purges").json() == {"results": [], "next": None}
    PurgeRequest.objects.filter(pk__in=ids).update(dry_run=False, status="done")
    first = owner.get("/api/v1/purges", {"limit": 2}).json()
    assert [p["id"] for p in first["results"]] == ids[:0:-1] and first["next"] is not None
    assert [p["id"] for p in owner.get("/api/v1/purges", {"cursor": first["next"]}).json()["results"]] == [ids[0]]
    assert_error(api_client(actors.teammate_key).get("/api/v1/purges"), 403, "FORBIDDEN")


def test_a_second_request_joins_the_live_purge_and_keeps_its_block(actors: Actors) -> None:
    from memoryhub.core.models import AuditEntry
    from memoryhub.privacy.models import BlockedUser
    from memoryhub.privacy.services import user_hash

    digest = user_hash(workspace_id=actors.workspace.pk, user_id="twice")
    live = PurgeRequest.objects.create(workspace=actors.workspace, user_hash=digest, pending_user_id="twice", status="running")
    joined = api_client(actors.owner_key).post("/api/v1/purges", {"user_id": "twice", "block_new_writes": True}, format="json")
    assert joined.status_code == 202 and joined.json()["id"] == live.pk
    assert PurgeRequest.objects.filter(dry_run=False).count() == 1
    assert BlockedUser.objects.filter(user_hash=digest).exists()
    assert AuditEntry.objects.get(action="purge_requested").details == {"user_hash": digest, "block_new_writes": True, "joined": True}


def test_a_block_holds_when_the_secret_key_is_rotated(actors: Actors) -> None:
    # Finding 5 of the security review: blocks were keyed by SECRET_KEY, so rotating it
    # silently lifted every one. They are keyed by the never-rotated pseudonym key.
    from django.test import override_settings

    from memoryhub.privacy.services import user_block, user_hash

    user_block(workspace=actors.workspace, user_hash_value=user_hash(workspace_id=actors.workspace.pk, user_id="gone"), purge_id=None)
    with override_settings(SECRET_KEY="rotated-" + "k" * 50):
        refused = api_client(actors.bot_key).post("/api/v1/memories", {"content": "back?", "user_id": "gone"}, format="json")
        assert_error(refused, 403, "USER_PURGED")
