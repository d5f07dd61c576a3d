"""Email to operators (docs/notifications.md, "Email"): who chooses which emails, what an
email holds, the page its link opens (a login, and a decision only by POST), and what a
mail server's refusal does. Against a real SMTP server on 127.0.0.1 (aiosmtpd)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.utils import timezone

from memoryhub.approvals.models import Approval
from memoryhub.approvals.services import approvals_escalate
from memoryhub.core import services
from memoryhub.core.jobs import JobStatus
from memoryhub.core.models import Membership, Role
from memoryhub.notifications.models import EmailDelivery
from memoryhub.notifications.pump import deliveries_send
from tests.conftest import Actors, api_client, approver, approver_key, assert_error
from tests.smtp_server import Mailbox, free_port, smtp_server


def use_mail_server(settings: object, port: int) -> None:
    settings.MEMORYHUB_EMAIL_URL = f"smtp://127.0.0.1:{port}"  # type: ignore[attr-defined]
    # As settings.py makes of that URL (Django's tests swap every mailer for an outbox).
    settings.MAILERS = {"default": {"BACKEND": "django.core.mail.backends.smtp.EmailBackend", "OPTIONS": {"host": "127.0.0.1", "port": port, "timeout": 5}}}  # type: ignore[attr-defined]
    settings.MEMORYHUB_PUBLIC_URL = "https://hub.example.com"  # type: ignore[attr-defined]


@pytest.fixture
def mailbox(settings: object) -> Iterator[Mailbox]:
    with smtp_server() as mailbox:
        use_mail_server(settings, mailbox.port)
        yield mailbox


def choose(key: str, email: str, *events: str) -> object:
    return api_client(key).put("/api/v1/me/notifications", {"email": email, "events": list(events)}, format="json")


def ask(actors: Actors, tool: str = "payments.send", **body: object) -> int:
    bot = api_client(actors.bot_key)
    bot.post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1"}, format="json")
    asked = bot.post("/api/v1/approvals", {"session_id": "s1", "tool": tool, "args": {"amount": 1200}, **body}, format="json")
    assert asked.status_code == 201, asked.content
    return asked.json()["id"]


def logged_in(membership: Membership) -> Client:
    client = Client()
    client.force_login(membership.user)
    return client


def test_an_approver_who_asked_for_it_gets_an_email_with_the_link(actors: Actors, mailbox: Mailbox) -> None:
    assert choose(approver_key(actors), "reviewer@example.com", "approval.requested").json() == {
        "email": "reviewer@example.com", "events": ["approval.requested"], "email_enabled": True,
    }
    approval = ask(actors, context="The customer was charged twice; refund the second charge.")
    assert deliveries_send() == 1
    [mail] = mailbox.wait_for(1)
    assert mail["To"] == "reviewer@example.com"
    assert mail["Subject"] == "[MemoryHub acme] Approval needed: bot asks to run payments.send"
    text = mail.get_content()
    assert "Agent: bot" in text and "Tool: payments.send" in text and "charged twice" in text
    assert f"https://hub.example.com/approvals/{approval}/" in text
    assert "https://hub.example.com/settings/notifications/" in text
    assert EmailDelivery.objects.get().status == JobStatus.DONE


def test_nobody_gets_an_email_they_did_not_choose(actors: Actors, mailbox: Mailbox) -> None:
    choose(actors.owner_key, "owner@example.com", "approval.escalated")
    ask(actors)
    assert deliveries_send() == 0 and mailbox.messages == []


def test_only_operators_choose_and_only_what_their_role_receives(actors: Actors, mailbox: Mailbox) -> None:
    assert_error(choose(actors.bot_key, "bot@example.com", "approval.requested"), 403, "FORBIDDEN")
    assert_error(choose(actors.teammate_key, "viewer@example.com", "approval.requested"), 403, "FORBIDDEN")  # a viewer decides nothing
    assert_error(choose(approver_key(actors), "reviewer@example.com", "approval.escalated"), 403, "FORBIDDEN")  # admins only
    assert_error(choose(actors.owner_key, "owner@example.com", "memory.flagged"), 400, "VALIDATION_ERROR")
    assert_error(choose(actors.owner_key, "not an address", "approval.requested"), 400, "VALIDATION_ERROR")
    assert api_client(actors.teammate_key).get("/api/v1/me/notifications").json() == {"email": None, "events": [], "email_enabled": True}
    # Per workspace: the outsider's choice in globex sends nothing about acme.
    choose(actors.outsider_key, "outsider@example.com", "approval.requested", "approval.escalated")
    ask(actors)
    assert deliveries_send() == 0


def test_an_escalation_is_emailed_to_the_admins_who_chose_it(actors: Actors, mailbox: Mailbox) -> None:
    choose(actors.owner_key, "owner@example.com", "approval.escalated")
    choose(approver_key(actors), "reviewer@example.com", "approval.requested")
    approval = ask(actors, escalate_after=300)
    with time_machine.travel(timezone.now() + timedelta(seconds=301), tick=False):
        assert approvals_escalate() == 1
        assert deliveries_send() == 2
    escalated = next(mail for mail in mailbox.wait_for(2) if mail["To"] == "owner@example.com")
    assert escalated["Subject"].strip().startswith("[MemoryHub acme] Still undecided after 5 min")
    assert f"https://hub.example.com/approvals/{approval}/" in escalated.get_content()


def test_an_agents_tool_name_cannot_add_headers(actors: Actors, mailbox: Mailbox) -> None:
    choose(approver_key(actors), "reviewer@example.com", "approval.requested")
    ask(actors, tool="pay\r\nBcc: thief@example.com")
    deliveries_send()
    [mail] = mailbox.wait_for(1)
    assert mail["Bcc"] is None and "\n" not in mail["Subject"]


def test_a_refused_address_fails_at_once_and_a_server_that_is_down_is_tried_again(actors: Actors, mailbox: Mailbox, settings: object) -> None:
    mailbox.refused.add("gone@example.com")
    choose(approver_key(actors), "gone@example.com", "approval.requested")
    ask(actors)
    deliveries_send()
    refused = EmailDelivery.objects.get()
    assert refused.status == JobStatus.FAILED and refused.last_status_code == 550 and "gone@example.com" in refused.error
    use_mail_server(settings, free_port())  # nothing listens there
    choose(approver_key(actors), "reviewer@example.com", "approval.requested")
    ask(actors, tool="crm.update")
    deliveries_send()
    down = EmailDelivery.objects.get(address="reviewer@example.com")
    assert down.status == JobStatus.QUEUED and down.attempts == 1 and "could not send" in down.error


def test_the_link_opens_the_request_after_a_login_and_decides_only_by_post(actors: Actors) -> None:
    approval = ask(actors)
    page = f"/approvals/{approval}/"
    assert Client().get(page).status_code == 302  # to the login
    reviewer = logged_in(approver(actors))
    html = reviewer.get(page).content.decode()
    assert "payments.send" in html and f'action="/approvals/{approval}/decision/"' in html and 'method="post"' in html
    assert Approval.objects.get(pk=approval).status == "pending"  # opening it decided nothing
    assert reviewer.post(f"/approvals/{approval}/decision/", {"decision": "approve"}).status_code == 302
    assert Approval.objects.get(pk=approval).status == "approved"
    assert logged_in(actors.outsider).get(page).status_code == 404


def test_the_link_switches_an_operator_of_several_workspaces_to_the_requests_own(actors: Actors) -> None:
    approval = ask(actors)
    # The outsider becomes an approver of acme too; their console is on globex, their first workspace.
    services.operator_get_or_create(username=actors.outsider.user.username, workspace=actors.workspace, role=Role.APPROVER)
    html = logged_in(actors.outsider).get(f"/approvals/{approval}/").content.decode()
    assert "payments.send" in html and f'action="/approvals/{approval}/decision/"' in html
