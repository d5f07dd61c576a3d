"""Failed console logins (security review, finding 4): one address is limited across
the usernames it tries, and the append-only audit log keeps one entry per address and
minute, not one per guess."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.core.cache import cache
from django.test import Client, override_settings

from memoryhub.core.models import AuditEntry
from tests.conftest import Actors


@pytest.fixture(autouse=True)
def fresh_counts() -> None:
    cache.clear()
    yield
    cache.clear()


@override_settings(MEMORYHUB_LOGIN_ADDRESS_LIMIT=6)
def test_one_address_spraying_usernames_is_stopped(actors: Actors, passwords: str) -> None:
    sprayer = Client(REMOTE_ADDR="198.51.100.7")
    for n in range(6):  # each username stays under django-axes' limit of 5 per username
        assert sprayer.post("/login/", {"username": f"user{n}", "password": "guess"}).status_code == 200
    # Now even the right password is refused from this address…
    refused = sprayer.post("/login/", {"username": "owner", "password": passwords})
    assert refused.status_code in (200, 403) and "_auth_user_id" not in sprayer.session
    # …and only from it.
    colleague = Client(REMOTE_ADDR="198.51.100.8")
    assert colleague.post("/login/", {"username": "owner", "password": passwords}).status_code == 302


def test_the_audit_log_keeps_one_failure_per_address_and_minute(actors: Actors) -> None:
    client = Client(REMOTE_ADDR="198.51.100.9")
    with time_machine.travel(datetime(2026, 3, 2, 9, 15, 5, tzinfo=UTC)) as clock:
        for n in range(4):
            client.post("/login/", {"username": f"guess{n}", "password": "nope"})
            clock.shift(timedelta(seconds=10))  # four guesses over 40 s of one minute
        Client(REMOTE_ADDR="198.51.100.10").post("/login/", {"username": "guess", "password": "nope"})
        clock.shift(timedelta(seconds=20))  # 9:16:05: the next minute
        client.post("/login/", {"username": "guess4", "password": "nope"})
    failures = list(AuditEntry.objects.filter(action="login_failed").values_list("ip", "actor"))
    assert sorted(failures) == [("198.51.100.10", "anonymous:guess"), ("198.51.100.9", "anonymous:guess0"), ("198.51.100.9", "anonymous:guess4")]
