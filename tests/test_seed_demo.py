"""`manage.py seed_demo`: the demo workspace a first `make run` shows, seen as the
operator who logs in to look around, and the guards that keep it off real data."""

from __future__ import annotations

import json
import re
import tomllib
import zlib
from collections.abc import Iterator
from io import StringIO
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import transaction
from django.test import Client

from memoryhub.approvals.models import Approval
from memoryhub.compliance.models import PurgeRequest
from memoryhub.compliance.services import purge_counts
from console import demo
from memoryhub.conversations.models import Message
from memoryhub.core import services
from memoryhub.core.erasure import purging
from memoryhub.core.errors import ApplicationError
from memoryhub.core.models import AuditEntry, Workspace
from memoryhub.memory.models import MemoryEntry
from memoryhub.tools.models import ToolCall, ToolResult
from tests.conftest import Actors

# What the demo's customers told the agents; none of it may be kept in clear.
PII = [
    "maria.garcia@example.com", "4111 1111 1111 1111", "+34 612 345 678", "+81 90 1234 5678", "+44 7911 123456",
    "IT60 X054 2811 1010 0000 0123 456", "liam.obrien@example.org", "daniel.weber@example.net",
]


def seed(*args: str) -> str:
    out = StringIO()
    call_command("seed_demo", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.fixture(scope="class")
def seeded(django_db_setup: None, django_db_blocker: object) -> Iterator[str]:
    """The demo, seeded once for the class (it takes seconds): each test runs in a
    savepoint inside this transaction, which is rolled back after the last one."""
    with django_db_blocker.unblock(), transaction.atomic():  # type: ignore[attr-defined]
        output = seed("--if-empty")  # an empty hub: what a first `make run` finds
        yield output
        transaction.set_rollback(True)


@pytest.fixture
def console(seeded: str, db: None) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.get(username=demo.DEMO_USERNAME))
    return client


def page(client: Client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return response.content.decode()


def rows_everywhere() -> dict[str, int]:
    """Rows of every table of ours and of the operators' accounts."""
    models = [m for config in apps.get_app_configs() if config.name.startswith("memoryhub.") for m in config.get_models()]
    return {m._meta.label: m._default_manager.count() for m in [*models, get_user_model()]}


class TestSeededDemo:
    def test_it_tells_how_to_log_in_and_the_password_works(self, seeded: str, db: None) -> None:
        assert "demo workspace seeded" in seeded
        assert f"Log in at http://127.0.0.1:8000/login/ as demo, password {demo.DEFAULT_PASSWORD}." in seeded
        client = Client()
        response = client.post("/login/", {"username": "demo", "password": demo.DEFAULT_PASSWORD})
        assert response.status_code == 302 and response["Location"] == "/"
        assert "sup-maria-double-charge" in page(client, "/sessions/")
        assert "Erase an end user" in page(client, "/compliance/")  # an admin: compliance is theirs too

    def test_the_login_page_names_the_demo_account_while_its_password_is_the_documented_one(self, seeded: str, db: None) -> None:
        hint = f"log in as <code>demo</code> with the password <code>{demo.DEFAULT_PASSWORD}</code>"
        assert hint in page(Client(), "/login/")
        account = get_user_model().objects.get(username=demo.DEMO_USERNAME)
        account.set_password("a different and long passphrase")
        account.save()
        assert "demo workspace" not in page(Client(), "/login/")

    def test_it_shows_sessions_with_plans_checkpoints_a_fork_and_a_branch(self, console: Client) -> None:
        listing = page(console, "/sessions/")
        for session_id in ("sup-maria-double-charge", "sup-maria-store-credit", "res-amara-battery-recycling-uk", "ops-liam-staging-restore"):
            assert session_id in listing
        assert "fork of v2" in listing
        plan = page(console, "/sessions/sup-maria-double-charge/plan/")
        assert "Refund the duplicate charge on order A-20931" in plan
        for status in ("done", "running", "pending"):
            assert f">{status}<" in plan
        assert "awaiting-approval" in page(console, "/sessions/sup-maria-double-charge/checkpoints/")
        assert "sup-maria-store-credit" in page(console, "/sessions/sup-maria-double-charge/")  # the fork, on the timeline
        assert Message.objects.filter(workspace__slug="demo").count() >= 30
        assert "failed" in page(console, "/sessions/res-amara-battery-recycling/plan/")
        assert "Market brief on heat pump subsidies in Italy" in page(console, "/episodes/")

    def test_it_shows_tool_calls_with_their_pii_redacted(self, console: Client) -> None:
        refund = page(console, "/sessions/sup-maria-double-charge/")
        output = page(console, "/sessions/sup-maria-double-charge/tool-calls/call_a20931_lookup/result/")
        for shown in (refund, output):
            assert "[EMAIL_" in shown and "[CARD_" in shown and "[PHONE_" in shown
        sms = ToolCall.objects.get(call_id="call_b11802_sms")
        assert sms.args["to"].startswith("[PHONE_") and sms.redactions == {"PHONE": 1}
        kept = [
            *Message.objects.values_list("content", flat=True),
            *(json.dumps(args, ensure_ascii=False) for args in ToolCall.objects.values_list("args", flat=True)),
            *ToolCall.objects.values_list("result_summary", flat=True),
            *(zlib.decompress(bytes(data)).decode() for data in ToolResult.objects.values_list("data", flat=True)),
            *MemoryEntry.objects.values_list("content", flat=True),
            *(json.dumps(args, ensure_ascii=False) for args in Approval.objects.values_list("args", flat=True)),
        ]
        for text in kept:
            assert not any(value in text for value in PII), text

    def test_it_has_pending_and_decided_approvals_and_a_remembered_rule(self, console: Client) -> None:
        inbox = page(console, "/approvals/")
        assert "issue_refund" in inbox and "apply_discount" in inbox and "expires in" in inbox
        assert "ops-sofia-dns-cleanup" in inbox  # suspended, waiting to be reactivated
        history = page(console, "/approvals/history/")
        for outcome in ("approved", "edited", "rejected", "suspended"):
            assert outcome in history
        assert "restart_service" in page(console, "/approvals/rules/")
        assert Approval.objects.filter(tool="restart_service", rule__isnull=False, status="approved").count() == 1

    def test_it_shows_a_finished_purge_with_its_receipt(self, console: Client) -> None:
        assert "verified" in page(console, "/compliance/")
        purge = PurgeRequest.objects.get(dry_run=False)
        receipt = json.loads(page(console, f"/compliance/purges/{purge.pk}/receipt.json"))
        assert purge.status == "done" and receipt["verification"]["passed"] and receipt["requested_by"] == demo.COMPLIANCE_USERNAME
        assert receipt["deleted"]["conversations.Message"] > 0 and receipt["deleted"]["memory.MemoryEntry"] > 0
        workspace = Workspace.objects.get(slug="demo")
        assert not any(purge_counts(workspace_id=workspace.pk, user_id=demo.PURGED_USER).values())

    def test_it_keeps_the_history_of_facts_that_changed(self, console: Client) -> None:
        current = MemoryEntry.objects.get(data__subject="Kenji Tanaka", data__predicate="lives in", invalidated_at__isnull=True)
        assert current.data["object"] == "Kyoto"
        assert "Osaka" in page(console, f"/memory/{current.pk}/")
        superseded = MemoryEntry.objects.filter(workspace__slug="demo", invalidated_at__isnull=False)
        assert superseded.count() >= 3 and all(entry.superseded_by_id for entry in superseded)

    def test_it_finds_demo_memories_by_meaning(self, console: Client) -> None:
        found = page(console, "/memory/?query=who+has+to+approve+a+refund&mode=semantic")
        assert "need a human&#x27;s approval" in found or "need a human's approval" in found

    def test_it_changes_nothing_when_run_again(self, seeded: str, db: None) -> None:
        before = rows_everywhere()
        assert seed().startswith("demo workspace already seeded")
        assert seed("--if-empty").startswith("demo workspace already seeded")
        assert rows_everywhere() == before
        assert AuditEntry.objects.filter(action=demo.SEEDED_ACTION).count() == 1

    def test_it_stays_deleted_for_make_run_and_comes_back_when_asked(self, seeded: str, db: None) -> None:
        with purging():
            Workspace.objects.get(slug="demo").delete()
        before = rows_everywhere()
        assert seed("--if-empty").startswith("demo data not seeded: the demo workspace was deleted")
        assert rows_everywhere() == before
        # Asked for, it is seeded again, with the accounts the first one left behind.
        assert seed().startswith("demo workspace seeded")
        assert Workspace.objects.get(slug="demo").memberships.count() == 3


def test_the_login_page_names_no_demo_account_without_the_demo(actors: Actors) -> None:
    assert "demo" not in page(Client(), "/login/")


def test_it_refuses_a_demo_workspace_it_did_not_make(db: None) -> None:
    workspace = services.workspace_get_or_create(slug="demo")
    services.agent_key_provision(workspace=workspace, store="default", agent="real-bot", actor="test")
    before = rows_everywhere()
    with pytest.raises(CommandError, match="did not write"):
        seed()
    # `make run` goes on: that workspace is data like any other.
    assert seed("--if-empty").startswith("demo data not seeded: this hub holds data already (workspace demo)")
    assert rows_everywhere() == before


def test_it_refuses_a_demo_login_someone_has_already(db: None) -> None:
    get_user_model().objects.create_user(username="demo", password="their own password")
    with pytest.raises(CommandError, match="demo exist already"):
        seed()
    assert not Workspace.objects.filter(slug="demo").exists()
    assert get_user_model().objects.get(username="demo").check_password("their own password")


def test_it_seeds_nothing_with_if_empty_when_another_workspace_holds_data(actors: Actors) -> None:
    before = rows_everywhere()
    output = seed("--if-empty")
    assert output.splitlines() == [
        "demo data not seeded: this hub holds data already (workspace acme, globex); `manage.py seed_demo` adds it anyway"
    ]
    assert rows_everywhere() == before


def test_it_refuses_a_password_the_console_would_refuse(db: None) -> None:
    with pytest.raises(CommandError, match="password"):
        seed("--password", "short")
    assert not Workspace.objects.filter(slug="demo").exists()


def story_file(*actions: dict[str, Any]) -> dict[str, Any]:
    """A story file as parsed: one story, `broken`, that opens a session and then does `actions`."""
    opening = {"action": "session", "session_id": "sup-broken", "user_id": "maria.garcia"}
    return {"story": [{"name": "broken", "agent": "support-bot", "about": "A story with a slip in it.", "do": [opening, *actions]}]}


@pytest.mark.parametrize(
    ("action", "error"),
    [
        ({"action": "sya", "messages": [{"user": "Hi!"}]}, 'story "broken", action 2: unknown action "sya"'),
        ({"action": "say"}, 'story "broken", action 2 (say): missing field `messages`'),
        ({"action": "say", "messages": [{"usr": "Hi!"}]}, 'story "broken", action 2 (say), message 1: a message is one of'),
        ({"action": "step", "step_id": "verify", "status": "running", "sumary": "Verified."}, 'story "broken", action 2 (step): unknown field `sumary`'),
        ({"action": "decide", "approval": "refund", "by": "approver", "decision": "approve"}, 'story "broken", action 2 (decide): `approval` = "refund" names no'),
    ],
    ids=["unknown action", "missing field", "misspelt message", "misspelt optional field", "name never given"],
)
def test_it_refuses_a_story_file_with_a_slip_naming_the_story_and_the_action(db: None, action: dict[str, Any], error: str) -> None:
    before = rows_everywhere()
    with pytest.raises(ApplicationError, match="^demo_story.toml: " + re.escape(error)) as refused:
        demo.demo_seed(data=story_file(action))
    assert refused.value.code == "DEMO_STORY_INVALID"
    assert rows_everywhere() == before and not Workspace.objects.filter(slug="demo").exists()


def test_it_writes_nothing_when_the_domain_refuses_an_action_midway(db: None) -> None:
    """Read whole, the story is right; written, its third action is refused (no plan to
    move a step of) after its session and message were written: the seed's one
    transaction takes them back."""
    before = rows_everywhere()
    data = story_file({"action": "say", "messages": [{"user": "Hi!"}]}, {"action": "step", "step_id": "verify", "status": "running"})
    with pytest.raises(ApplicationError, match=r'^demo_story.toml: story "broken", action 3 \(step\): This session has no plan') as refused:
        demo.demo_seed(data=data)
    assert refused.value.code == "PLAN_NOT_FOUND"
    assert rows_everywhere() == before and not Workspace.objects.filter(slug="demo").exists()


def test_it_purges_the_customer_the_demo_names() -> None:
    with demo.STORY_FILE.open("rb") as file:
        stories = tomllib.load(file)["story"]
    purged = {action["user_id"] for story in stories for action in story["do"] if action["action"] == "purge"}
    assert purged == {demo.PURGED_USER}
