"""Console hardening (security review, finding 9): session lifetimes, password length,
no caching of pages that show secrets, only admins mint operator keys, keys that
expire, and audited redaction settings."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.test import Client
from django.utils import timezone

from memoryhub.core.middleware import LOGIN_AT
from memoryhub.core.models import AgentKey, AuditEntry
from tests.conftest import PASSWORD, Actors, api_client, assert_error


def test_passwords_are_at_least_12_characters() -> None:
    with pytest.raises(ValidationError):
        validate_password("Tr0ub4dor&3")  # 11
    validate_password("Tr0ub4dor&3x")


def test_a_session_ends_after_its_idle_and_absolute_limits(actors: Actors, passwords: str, client: Client, settings: object) -> None:
    assert client.post("/login/", {"username": "owner", "password": PASSWORD}).status_code == 302
    assert client.get("/keys/").status_code == 200
    # Idle: the cookie lives MEMORYHUB_SESSION_IDLE_MINUTES, renewed by each request.
    assert settings.SESSION_COOKIE_AGE == 30 * 60 and settings.SESSION_SAVE_EVERY_REQUEST
    assert client.cookies["sessionid"]["max-age"] == 30 * 60
    # Absolute: however busy, the session ends MEMORYHUB_SESSION_MAX_HOURS after the login.
    session = client.session
    session[LOGIN_AT] = time.time() - 13 * 3600
    session.save()
    response = client.get("/keys/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")
    assert client.get("/keys/").status_code == 302  # logged out, not just redirected once


def test_pages_with_secrets_are_never_cached_nor_kept_by_htmx(actors: Actors, client: Client) -> None:
    client.force_login(actors.owner.user)
    response = client.post("/keys/agent/", {"agent": "planner", "store": "default"})
    assert "no-store" in response["Cache-Control"]
    assert "no-store" in client.get("/keys/")["Cache-Control"]
    assert '"historyCacheSize": 0' in client.get("/").content.decode()


def test_every_key_expires_within_the_maximum_lifetime(actors: Actors) -> None:
    created = api_client(actors.owner_key).post("/api/v1/keys", {"agent": "planner"}, format="json")
    expires = AgentKey.objects.get(prefix=created.json()["prefix"]).expires_at
    assert timezone.now() + timedelta(days=364) < expires < timezone.now() + timedelta(days=366)
    too_long = (timezone.now() + timedelta(days=400)).isoformat()
    assert_error(api_client(actors.owner_key).post("/api/v1/keys", {"agent": "planner", "expires_at": too_long}, format="json"), 400, "KEY_LIFETIME")


def test_redaction_changes_are_audited(actors: Actors, client: Client) -> None:
    client.force_login(actors.owner.user)
    client.post("/settings/redaction/", {"redact_memories": "on"})
    entry = AuditEntry.objects.get(action="redaction_changed")
    assert entry.actor == "operator:owner" and entry.details["to"] == {"redact_messages": False, "redact_memories": True}
    client.post("/settings/redaction/", {"redact_memories": "on"})  # the same again changes nothing
    assert AuditEntry.objects.filter(action="redaction_changed").count() == 1
