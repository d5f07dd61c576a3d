"""The console's Approvals pages through Django's test client: the inbox, decisions on a
card, the history, remembered decisions and suspended sessions (the browser tests are
in test_browser_approvals.py)."""

from __future__ import annotations

import re
from datetime import timedelta

from django.test import Client
from django.utils import timezone

from memoryhub.approvals.models import Approval, ApprovalRule
from memoryhub.approvals.services import ApprovalInput, approval_decide, approval_request, approvals_expire
from memoryhub.conversations.sessions import session_of
from memoryhub.core import services
from memoryhub.core.models import AuditEntry, Membership, Role
from tests.conftest import Actors, api_client

ARGS = {"to": "ceo@example.com", "amount": 1200}
SCHEMA = {"type": "object", "properties": {"amount": {"type": "integer", "maximum": 1000}}, "required": ["amount"]}
HTMX = {"HTTP_HX_REQUEST": "true"}


def ask(key: str, session_id: str = "s1", **body: object) -> int:
    """An agent's pending request, made over the API as agents make them; its id."""
    agent = api_client(key)
    agent.post("/api/v1/sessions", {"session_id": session_id, "user_id": "u1"}, format="json")
    response = agent.post("/api/v1/approvals", {"session_id": session_id, "tool": "payments.send", "args": ARGS, **body}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def logged_in(membership: Membership) -> Client:
    client = Client()
    client.force_login(membership.user)
    return client


def approver(actors: Actors) -> Membership:
    return services.operator_get_or_create(username="second", workspace=actors.workspace, role=Role.APPROVER)


def decide(client: Client, approval_id: int, decision: str, **fields: str) -> object:
    return client.post(f"/approvals/{approval_id}/decision/", {"decision": decision, **fields}, **HTMX)


def test_it_lists_only_this_workspaces_pending_requests_oldest_first(actors: Actors) -> None:
    first = ask(actors.bot_key, tool="crm.first")
    ask(actors.peer_key, "s2", tool="crm.second", context="The customer asked twice.")
    foreign = ask(actors.spy_key, "g1", tool="globex.secret")
    done = ask(actors.bot_key, tool="crm.done")
    approval_decide(membership=actors.owner, approval=Approval.objects.get(pk=done), decision="approve")
    owner = logged_in(actors.owner)
    html = owner.get("/approvals/").content.decode()
    assert html.index("crm.first") < html.index("crm.second") and "The customer asked twice." in html
    assert "globex.secret" not in html and "crm.done" not in html
    assert re.search(r'data-testid="pending-count">2</strong> requests wait for a decision', html)
    assert 'href="/sessions/s2/"' in html and "agent <strong>peer</strong>" in html and "&quot;amount&quot;: 1200" in html
    assert decide(owner, foreign, "approve").status_code == 404
    assert decide(logged_in(actors.outsider), first, "approve").status_code == 404
    assert "crm.first" not in logged_in(actors.outsider).get("/approvals/").content.decode()
    assert Approval.objects.get(pk=foreign).status == Approval.objects.get(pk=first).status == "pending"


def test_it_links_the_approvals_page_from_the_navigation(actors: Actors) -> None:
    html = logged_in(actors.teammate).get("/").content.decode()
    assert '<a href="/approvals/">Approvals</a>' in html


def test_it_guides_an_empty_inbox(actors: Actors) -> None:
    owner = logged_in(actors.owner)
    html = owner.get("/approvals/").content.decode()
    assert "No request waits for you." in html and "No session is suspended." in html
    assert "Nothing decided yet." in owner.get("/approvals/history/").content.decode()
    assert "No remembered decisions." in owner.get("/approvals/rules/").content.decode()


def test_it_decides_on_the_card_and_audits_the_decision(actors: Actors) -> None:
    owner = logged_in(actors.owner)
    approved, edited, rejected = ask(actors.bot_key), ask(actors.bot_key), ask(actors.bot_key)
    response = decide(owner, approved, "approve", remember="none")
    html = response.content.decode()
    assert response.status_code == 200 and "<strong>Approved</strong> by operator:owner" in html and 'class="card approval decided' in html
    approval = Approval.objects.get(pk=approved)
    assert (approval.status, approval.decided_by, approval.decided_from) == ("approved", "operator:owner", "127.0.0.1")
    entry = AuditEntry.objects.get(action="approval_decided", target=f"approval:{approved}")
    assert (entry.actor, entry.ip, entry.details) == ("operator:owner", "127.0.0.1", {"decision": "approve", "remember": "none"})

    assert decide(owner, edited, "edit", args='{"to": "cfo@example.com", "amount": 900}').status_code == 200
    assert Approval.objects.get(pk=edited).decided_args == {"to": "cfo@example.com", "amount": 900}
    assert decide(owner, rejected, "reject", reason="Too large.", remember="tool", remember_scope="agent").status_code == 200
    rule = ApprovalRule.objects.get()
    assert (rule.decision, rule.args_hash, rule.scope, rule.agent_id, rule.reason) == ("reject", "", "agent", actors.bot.pk, "Too large.")
    seen = api_client(actors.bot_key).get(f"/api/v1/approvals/{rejected}").json()
    assert (seen["status"], seen["reason"], seen["decided_by"]) == ("rejected", "Too large.", "operator:owner")


def test_it_works_without_javascript(actors: Actors) -> None:
    owner = logged_in(actors.owner)
    approval_id = ask(actors.bot_key)
    response = owner.post(f"/approvals/{approval_id}/decision/", {"decision": "approve"}, follow=True)
    assert response.redirect_chain == [("/approvals/", 302)] and "payments.send: approved." in response.content.decode()
    response = owner.post(f"/approvals/{approval_id}/decision/", {"decision": "reject"})
    assert response.status_code == 409 and "was decided already (approved, by operator:owner)" in response.content.decode()


def test_a_viewer_sees_the_inbox_but_may_not_decide(actors: Actors) -> None:
    approval_id = ask(actors.bot_key)
    teammate = logged_in(actors.teammate)
    html = teammate.get("/approvals/").content.decode()
    assert "payments.send" in html and "deciding them needs the approver or admin role" in html
    assert 'data-decision="approve"' not in html and "Reject…" not in html and "Edit the arguments" not in html
    refused = decide(teammate, approval_id, "approve")
    assert refused.status_code == 403 and "Deciding needs the approver or admin role." in refused.content.decode()
    assert teammate.post(f"/approvals/{approval_id}/decision/", {"decision": "approve"}).status_code == 403
    assert Approval.objects.get(pk=approval_id).status == "pending"
    assert not AuditEntry.objects.filter(action="approval_decided").exists()


def test_a_late_decision_says_who_decided_first(actors: Actors) -> None:
    approval_id = ask(actors.bot_key)
    approval_decide(membership=approver(actors), approval=Approval.objects.get(pk=approval_id), decision="approve")
    response = decide(logged_in(actors.owner), approval_id, "reject", reason="No.")
    assert response.status_code == 409
    assert "Already decided: <strong>approved</strong> by operator:second" in response.content.decode()
    assert Approval.objects.get(pk=approval_id).decided_by == "operator:second"


def test_an_expired_request_is_not_offered_nor_approved(actors: Actors) -> None:
    approval_id = ask(actors.bot_key, expires_in=60)
    Approval.objects.filter(pk=approval_id).update(expires_at=timezone.now() - timedelta(seconds=1))  # time passes
    owner = logged_in(actors.owner)
    assert "payments.send" not in owner.get("/approvals/").content.decode()
    response = decide(owner, approval_id, "approve")
    assert response.status_code == 409 and "Expired before a decision" in response.content.decode()
    assert approvals_expire() == 1
    history = owner.get("/approvals/history/").content.decode()
    assert ">expired</span>" in history and "no call to run" in history


def test_a_schema_violation_is_shown_on_the_card_and_changes_nothing(actors: Actors) -> None:
    approval_id = ask(actors.bot_key, allowed_decisions=["approve", "edit"], response_schema=SCHEMA)
    owner = logged_in(actors.owner)
    card = owner.get("/approvals/").content.decode()
    assert 'value="reject"' not in card and 'value="suspend"' not in card  # only what the agent allows
    assert 'data-schema="{' in card  # the schema, for the check in the browser
    response = decide(owner, approval_id, "edit", args='{"to": "ceo@example.com", "amount": 5000}')
    html = response.content.decode()
    assert response.status_code == 400 and "The edited args break the response schema: 5000 is greater than the maximum of 1000" in html
    assert "&quot;amount&quot;: 5000}</textarea>" in html and "<details class=\"panel\" data-panel=\"edit\" open>" in html  # kept, open
    for text, problem in (('{"amount": ', "not valid JSON"), ('{"amount": NaN}', "NaN is not a JSON number"), ("[1]", "must be a JSON object")):
        response = decide(owner, approval_id, "edit", args=text)
        assert response.status_code == 400 and problem in response.content.decode(), text
    response = decide(owner, approval_id, "reject")
    assert response.status_code == 400 and "&#x27;reject&#x27; is not allowed for this request." in response.content.decode()
    assert Approval.objects.get(pk=approval_id).status == "pending"
    assert not AuditEntry.objects.filter(action="approval_decided").exists()


def test_agent_content_is_rendered_as_text(actors: Actors) -> None:
    ask(
        actors.bot_key, tool="<script>alert(1)</script>", args={"note": "</pre><script>alert(2)</script>"},
        context="<img src=x onerror=alert(3)>", response_schema={"type": "object", "description": "</script><script>alert(4)</script>"},
    )
    owner = logged_in(actors.owner)
    pages = [owner.get("/approvals/").content.decode(), owner.get("/approvals/pending/", **HTMX).content.decode()]
    approval_decide(membership=actors.owner, approval=Approval.objects.get(), decision="reject", reason="<b>no</b>")
    pages.append(owner.get("/approvals/history/").content.decode())
    for html in pages:
        assert "<script>alert" not in html and "<img src=x" not in html and "<b>no</b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in pages[0] and "&lt;img src=x onerror=alert(3)&gt;" in pages[0]
    assert "&lt;/script&gt;&lt;script&gt;alert(4)" in pages[0]  # the schema's JSON for the browser, escaped in its attribute
    assert "&lt;/pre&gt;&lt;script&gt;alert(2)" in pages[1] and "&lt;b&gt;no&lt;/b&gt;" in pages[2]


def test_the_poll_sends_new_cards_and_replaces_those_decided_elsewhere(actors: Actors) -> None:
    owner = logged_in(actors.owner)
    first, second = ask(actors.bot_key, tool="crm.first"), ask(actors.bot_key, tool="crm.second")
    html = owner.get("/approvals/pending/", {"shown": [first]}, **HTMX).content.decode()
    assert f'id="approval-{second}"' in html and f'id="approval-{first}"' not in html
    assert '<p id="inbox-status" class="inbox-status" aria-live="polite" hx-swap-oob="true">' in html
    approval_decide(membership=approver(actors), approval=Approval.objects.get(pk=first), decision="approve")
    html = owner.get("/approvals/pending/", {"shown": [first, second, "x", "²", "9" * 30]}, **HTMX).content.decode()
    assert re.search(rf'id="approval-{first}" [^>]*hx-swap-oob="true"', html)
    assert "Already decided: <strong>approved</strong> by operator:second" in html
    assert f'id="approval-{second}"' not in html and ">1</strong> request waits" in html
    assert owner.get("/approvals/pending/").status_code == 302  # a page, not a fragment, without htmx


def test_the_history_filters_and_pages(actors: Actors) -> None:
    owner = logged_in(actors.owner)
    approval_decide(membership=actors.owner, approval=Approval.objects.get(pk=ask(actors.bot_key)), decision="approve", remember="tool")
    rejected = ask(actors.peer_key, "s2", tool="mail.send")
    approval_decide(membership=actors.owner, approval=Approval.objects.get(pk=rejected), decision="reject", reason="Not now.")
    ask(actors.bot_key, tool="still.pending")

    def rows(**filters: str) -> list[str]:
        return re.findall(r'data-testid="history-(\d+)"', owner.get("/approvals/history/", filters).content.decode())

    assert rows(status="rejected") == rows(tool="MAIL") == rows(agent="peer") == rows(session_id="s2") == [str(rejected)]
    assert len(rows()) == 2 and rows(status="edited") == [] and rows(agent="nobody") == []
    assert "No decided request matches these filters." in owner.get("/approvals/history/", {"tool": "zzz"}).content.decode()
    session = session_of(workspace=actors.workspace, session_id="s1")
    for n in range(50):  # answered at once by the remembered decision
        approval_request(session=session, item=ApprovalInput(tool="payments.send", args={"n": n}, allowed_decisions=["approve"]))
    first_page = owner.get("/approvals/history/", {"tool": "payments"}).content.decode()
    assert first_page.count('data-testid="history-') == 50 and "remembered decision #" in first_page
    cursor = re.search(r'href="\?tool=payments&amp;cursor=([\w-]+)"', first_page).group(1)
    second_page = owner.get("/approvals/history/", {"tool": "payments", "cursor": cursor}, **HTMX).content.decode()
    assert second_page.count('data-testid="history-') == 1 and "← Newest" in second_page and "Older" not in second_page
    assert "not one this API gave out" in owner.get("/approvals/history/", {"cursor": "nonsense"}).content.decode()


def test_remembered_decisions_are_listed_and_revoked(actors: Actors) -> None:
    owner = logged_in(actors.owner)
    decide(owner, ask(actors.bot_key), "approve", remember="exact", remember_scope="session")
    rule = ApprovalRule.objects.get()
    html = owner.get("/approvals/rules/").content.decode()
    assert "these exact arguments" in html and 'session <a class="mono" href="/sessions/s1/">s1</a>' in html and "operator:owner" in html
    teammate = logged_in(actors.teammate)
    assert "Revoke" not in teammate.get("/approvals/rules/").content.decode()
    assert teammate.post(f"/approvals/rules/{rule.pk}/revoke/").status_code == 403
    assert logged_in(actors.outsider).post(f"/approvals/rules/{rule.pk}/revoke/").status_code == 404
    assert owner.post(f"/approvals/rules/{rule.pk}/revoke/", **HTMX).content == b""
    assert not ApprovalRule.objects.exists()
    assert AuditEntry.objects.get(action="approval_rule_revoked").actor == "operator:owner"


def test_a_suspended_session_is_shown_and_reactivated(actors: Actors) -> None:
    owner = logged_in(actors.owner)
    response = decide(owner, ask(actors.bot_key), "suspend", reason="Let me look first.")
    html = response.content.decode()
    assert response.status_code == 200 and "<strong>Suspended</strong> by operator:owner" in html
    assert '<section class="card" id="suspended-sessions" aria-labelledby="suspended-heading" hx-swap-oob="true">' in html
    assert session_of(workspace=actors.workspace, session_id="s1").suspended_by == "operator:owner"
    assert 'data-testid="suspended-s1"' in owner.get("/approvals/").content.decode()
    page = owner.get("/sessions/s1/").content.decode()
    assert 'data-testid="suspended-banner"' in page and "Reactivate session" in page
    viewer_page = logged_in(actors.teammate).get("/sessions/s1/").content.decode()
    assert 'data-testid="suspended-banner"' in viewer_page and "Reactivate session" not in viewer_page
    assert logged_in(actors.teammate).post("/approvals/sessions/s1/reactivate/").status_code == 403
    assert logged_in(actors.outsider).post("/approvals/sessions/s1/reactivate/").status_code == 404

    said = api_client(actors.bot_key).post("/api/v1/sessions/s1/messages", {"messages": [{"role": "user", "content": "hi"}]}, format="json")
    assert said.status_code == 201  # a conversation on the page, and flash messages above it
    response = owner.post("/approvals/sessions/s1/reactivate/", {"on": "session"}, follow=True)
    flashed = re.findall(r'<ul class="messages">(.*?)</ul>', response.content.decode(), re.S)
    assert response.redirect_chain == [("/sessions/s1/", 302)] and flashed == ['<li class="success">Session s1 reactivated: its agent may go on.</li>']
    assert 'data-testid="suspended-banner"' not in response.content.decode()
    assert session_of(workspace=actors.workspace, session_id="s1").suspended_at is None
    assert AuditEntry.objects.get(action="session_reactivated").ip == "127.0.0.1"
    again = owner.post("/approvals/sessions/s1/reactivate/", **HTMX)
    assert again.status_code == 409 and "not suspended (any more)" in again.content.decode()
    assert "No session is suspended." in again.content.decode()
    ask(actors.bot_key)  # the agent may ask again


def test_a_request_for_two_approvers_shows_who_approved_and_offers_no_edit_or_remember(actors: Actors) -> None:
    pending = ask(actors.bot_key, required_approvals=2)
    second = logged_in(approver(actors))
    counted = decide(second, pending, "approve")
    assert counted.status_code == 200
    card = counted.content.decode()
    assert re.search(r"<strong>1 of 2 approvals</strong>: <span hx-disable>operator:second</span>", card)
    assert 'data-panel="edit"' not in card and 'name="remember"' not in card
    assert "The first rejection rejects." in card
    assert decide(second, pending, "approve").status_code == 409  # once each
    final = decide(logged_in(actors.owner), pending, "approve").content.decode()
    assert "<strong>Approved</strong> by operator:owner" in final
