"""The audit log: who changed access, keys, purges and policies; append-only."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import DatabaseError, transaction
from django.test import Client

from memoryhub.core.models import AuditEntry
from memoryhub.privacy.services import retention_policy_set, user_hash
from tests.conftest import Actors, api_client


def test_it_records_key_changes_with_their_actor(actors: Actors) -> None:
    owner = api_client(actors.owner_key)
    created = owner.post("/api/v1/keys", {"agent": "scribe", "store": "default", "label": "ci"}, format="json").json()
    prefix = created["prefix"]
    assert owner.delete(f"/api/v1/keys/{prefix}").status_code == 204
    entries = list(AuditEntry.objects.filter(target=prefix).order_by("id").values_list("action", "actor", "workspace_slug"))
    assert entries == [("key_created", "operator:owner", "acme"), ("key_revoked", "operator:owner", "acme")]
    assert AuditEntry.objects.get(target=prefix, action="key_created").details["owner"] == "agent:scribe"
    assert created["key"] not in str(list(AuditEntry.objects.values_list("details", flat=True)))


def test_it_records_keys_issued_from_the_command_line(actors: Actors, capsys: pytest.CaptureFixture[str]) -> None:
    call_command("issue_key", "--operator", "auditor", "--role", "compliance", "--workspace", "acme")
    entry = AuditEntry.objects.get(action="key_created", details__owner="operator:auditor")
    assert entry.actor == "command:issue_key"


def test_it_records_logins_failures_and_logouts(actors: Actors, passwords: str) -> None:
    client = Client(REMOTE_ADDR="203.0.113.9")
    client.post("/login/", {"username": "teammate", "password": "wrong"})
    client.post("/login/", {"username": "teammate", "password": passwords})
    client.post("/logout/")
    entries = list(AuditEntry.objects.filter(action__startswith="log").order_by("id").values_list("action", "actor", "ip"))
    assert entries == [
        ("login_failed", "anonymous:teammate", "203.0.113.9"),
        ("login", "operator:teammate", "203.0.113.9"),
        ("logout", "operator:teammate", "203.0.113.9"),
    ]
    assert passwords not in str(list(AuditEntry.objects.values_list("details", flat=True)))


def test_it_records_purges_by_hash_never_the_user_id(actors: Actors) -> None:
    api_client(actors.owner_key).post("/api/v1/purges", {"user_id": "alice@example.com", "dry_run": True}, format="json")
    entry = AuditEntry.objects.get(action="purge_dry_run")
    assert entry.details == {"user_hash": user_hash(workspace_id=actors.workspace.pk, user_id="alice@example.com")}
    assert "alice" not in str(list(AuditEntry.objects.values_list("details", "target", "actor")))


def test_it_records_policy_changes_with_before_and_after(actors: Actors) -> None:
    retention_policy_set(membership=actors.owner, kind="tool_outputs", value=30)
    retention_policy_set(membership=actors.owner, kind="tool_outputs", value=30)  # no change, no entry
    retention_policy_set(membership=actors.owner, kind="tool_outputs", value=7)
    changes = list(AuditEntry.objects.filter(action="retention_changed").order_by("id").values_list("target", "details"))
    assert changes == [("tool_outputs", {"from": None, "to": 30}), ("tool_outputs", {"from": 30, "to": 7})]


def test_the_database_refuses_to_change_or_delete_an_entry(actors: Actors) -> None:
    entry = AuditEntry.objects.create(actor="operator:owner", action="login")
    with pytest.raises(DatabaseError), transaction.atomic():
        AuditEntry.objects.filter(pk=entry.pk).update(actor="someone else")
    with pytest.raises(DatabaseError), transaction.atomic():
        AuditEntry.objects.filter(pk=entry.pk).delete()
    assert AuditEntry.objects.get(pk=entry.pk).actor == "operator:owner"
