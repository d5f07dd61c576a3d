"""The Approvals inbox in a real browser: an agent's request appears without a reload, is
decided by keyboard or in the JSON editor, and of two operators deciding at once one
wins and the other is told who."""

from __future__ import annotations

import re

import httpx
import pytest
from playwright.sync_api import expect

from memoryhub.core import services
from memoryhub.core.models import Role
from tests.conftest import PASSWORD, Actors, LiveHub
from tests.test_browser_console import log_in

pytestmark = pytest.mark.browser

ARGS = {"to": "ceo@example.com", "amount": 1200}
SCHEMA = {"type": "object", "properties": {"to": {"type": "string"}, "amount": {"type": "integer", "maximum": 1000}}, "required": ["amount"]}
POLL_WAIT = 6_000  # ms: the live feed triggers the look at once; the fallback poll is every 30 s


def ask(hub: LiveHub, key: str, session_id: str = "s1", **body: object) -> dict:
    """What an agent does before a risky tool call, over HTTP."""
    headers = {"Authorization": f"Bearer {key}"}
    httpx.post(f"{hub.url}/api/v1/sessions", json={"session_id": session_id, "user_id": "u1"}, headers=headers)
    response = httpx.post(f"{hub.url}/api/v1/approvals", json={"session_id": session_id, "tool": "payments.send", "args": ARGS, **body}, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()


def as_the_agent_sees_it(hub: LiveHub, key: str, approval_id: int) -> dict:
    return httpx.get(f"{hub.url}/api/v1/approvals/{approval_id}", headers={"Authorization": f"Bearer {key}"}).json()


def open_inbox(page: object, hub: LiveHub, username: str) -> None:
    log_in(page, hub, username)
    page.wait_for_url(f"{hub.url}/")
    page.goto(f"{hub.url}/approvals/")


def test_a_new_request_appears_without_reload_and_is_approved_by_keyboard(
    actors: Actors, passwords: str, live_hub: LiveHub, page: object
) -> None:
    log_in(page, live_hub, "owner")
    page.wait_for_url(f"{live_hub.url}/")
    page.click("nav >> text=Approvals")
    page.locator("text=No request waits for you.").wait_for()
    page.evaluate("window.stillTheSamePage = true")
    approval = ask(live_hub, actors.bot_key, context={"why": "a payment above 1000"}, expires_in=600)
    card = page.locator(f"[data-testid=approval-{approval['id']}]")
    card.wait_for(timeout=POLL_WAIT)
    assert page.evaluate("window.stillTheSamePage") is True
    assert '"amount": 1200' in card.locator("[data-testid=args]").inner_text()
    assert "a payment above 1000" in card.locator("[data-testid=context]").inner_text()
    # The page's clock rewrites the server's wording within a second: wait for it, don't sample.
    expect(card).to_contain_text(re.compile(r"expires in (9|10) min"))
    assert page.locator("[data-testid=pending-count]").inner_text() == "1"

    page.keyboard.press("j")
    assert page.evaluate("document.activeElement.dataset.testid") == f"approval-{approval['id']}"
    page.keyboard.press("a")
    card.locator("[data-testid=outcome]", has_text="Approved by operator:owner").wait_for()
    seen = as_the_agent_sees_it(live_hub, actors.bot_key, approval["id"])
    assert (seen["status"], seen["decided_by"], seen["args"]) == ("approved", "operator:owner", ARGS)
    page.locator("text=No request waits for you.").wait_for(timeout=POLL_WAIT)


def test_the_json_editor_refuses_bad_arguments_before_sending(actors: Actors, passwords: str, live_hub: LiveHub, page: object) -> None:
    approval = ask(live_hub, actors.bot_key, response_schema=SCHEMA)
    open_inbox(page, live_hub, "owner")
    posts: list[str] = []
    page.on("request", lambda request: posts.append(request.url) if request.method == "POST" else None)
    card = page.locator(f"[data-testid=approval-{approval['id']}]")
    card.focus()
    page.keyboard.press("e")
    editor = card.locator("textarea")
    assert page.evaluate("document.activeElement.name") == "args" and '"amount": 1200' in editor.input_value()
    problem = card.locator("[data-testid=args-problem]")
    for text, refusal in (
        ('{"to": "cfo@example.com", "amount": ', "This is not valid JSON"),
        ('["cfo@example.com"]', "must be a JSON object"),
        ('{"to": "cfo@example.com", "amount": 5000}', "amount must be at most 1000"),
        ('{"to": "cfo@example.com", "amount": "900"}', "amount must be integer"),
        ('{"to": "cfo@example.com"}', "“amount” is required"),
    ):
        editor.fill(text)
        card.locator("text=Send the edited arguments").click()
        assert refusal in problem.inner_text(), (text, problem.inner_text())
    assert posts == []  # refused in the browser: nothing was sent

    # A poll passes and is swapped in (as when another approval arrives); the card being edited stays as it is.
    page.evaluate("""() => new Promise(settled => {
        document.body.addEventListener('htmx:afterSettle', settled, {once: true});
        htmx.trigger('#inbox-poll', 'sse:timeline');
    })""")
    assert editor.input_value() == '{"to": "cfo@example.com"}'
    editor.fill('{"to": "cfo@example.com", "amount": 900}')
    assert problem.is_hidden()  # fixed: the message goes as the text is typed
    card.locator("text=Send the edited arguments").click()
    card.locator("[data-testid=outcome]", has_text="Edited by operator:owner").wait_for()
    assert len(posts) == 1
    seen = as_the_agent_sees_it(live_hub, actors.bot_key, approval["id"])
    assert (seen["status"], seen["args"], seen["requested_args"]) == ("edited", {"to": "cfo@example.com", "amount": 900}, ARGS)


def test_of_two_operators_one_wins_and_the_other_is_told_who(
    actors: Actors, passwords: str, live_hub: LiveHub, page: object, chromium: object
) -> None:
    second = services.operator_get_or_create(username="second", workspace=actors.workspace, role=Role.APPROVER)
    second.user.set_password(PASSWORD)
    second.user.save(update_fields=["password"])
    contested = ask(live_hub, actors.bot_key, tool="payments.send")
    idle = ask(live_hub, actors.bot_key, tool="mail.send")
    other = chromium.new_context().new_page()
    other.set_default_timeout(15_000)
    try:
        open_inbox(page, live_hub, "owner")
        open_inbox(other, live_hub, "second")
        # The second operator starts a rejection: a reason is being typed.
        theirs = other.locator(f"[data-testid=approval-{contested['id']}]")
        theirs.focus()
        other.keyboard.press("r")
        other.keyboard.type("Too large, ask for 500")
        assert other.evaluate("document.activeElement.name") == "reason"

        # Meanwhile the owner approves it, and rejects the other request.
        mine = page.locator(f"[data-testid=approval-{contested['id']}]")
        mine.focus()
        page.keyboard.press("a")
        mine.locator("[data-testid=outcome]", has_text="Approved by operator:owner").wait_for()
        # On to the next (once the swapped card has settled: wait for it, don't sample).
        expect(page.locator(f"[data-testid=approval-{idle['id']}]")).to_be_focused()
        page.keyboard.press("r")
        page.keyboard.type("Not by mail.")
        page.keyboard.press("Enter")
        page.locator(f"[data-testid=approval-{idle['id']}] [data-testid=outcome]", has_text="Rejected by operator:owner").wait_for()

        # The second operator's page: the request nobody there touched is replaced by the poll…
        other.locator(f"[data-testid=approval-{idle['id']}] [data-testid=outcome]", has_text="Already decided: rejected by operator:owner").wait_for(
            timeout=POLL_WAIT
        )
        # …the one being worked on is kept, and the late decision is answered with who was first.
        assert theirs.locator("[data-testid=reason]").input_value() == "Too large, ask for 500"
        other.keyboard.press("Enter")
        theirs.locator("[data-testid=outcome]", has_text="Already decided: approved by operator:owner").wait_for()
    finally:
        other.context.close()
    seen = as_the_agent_sees_it(live_hub, actors.bot_key, contested["id"])
    assert (seen["status"], seen["decided_by"], seen["reason"]) == ("approved", "operator:owner", "")


def test_a_suspended_session_is_reactivated_from_the_inbox(actors: Actors, passwords: str, live_hub: LiveHub, page: object) -> None:
    approval = ask(live_hub, actors.bot_key)
    open_inbox(page, live_hub, "owner")
    page.locator(f"[data-testid=approval-{approval['id']}]").locator("text=Suspend the session").click()
    row = page.locator("[data-testid=suspended-s1]")
    row.wait_for()
    assert "operator:owner" in row.inner_text()
    page.goto(f"{live_hub.url}/sessions/s1/")
    assert "Suspended by operator:owner" in page.locator("[data-testid=suspended-banner]").inner_text()
    page.goto(f"{live_hub.url}/approvals/")
    row.locator("text=Reactivate session").click()
    page.locator("[data-testid=reactivate-note]", has_text="Session s1 reactivated").wait_for()
    assert page.locator("#suspended-sessions", has_text="No session is suspended.").count() == 1
    ask(live_hub, actors.bot_key)  # the agent may ask again
