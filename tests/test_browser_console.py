"""The console in a real browser: Debian's Chromium, driven by Playwright, against the
hub served by uvicorn."""

from __future__ import annotations

import re

import httpx
import pytest

from tests.conftest import PASSWORD, Actors, LiveHub

pytestmark = pytest.mark.browser


def log_in(page: object, hub: LiveHub, username: str, password: str = PASSWORD) -> None:
    page.goto(f"{hub.url}/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")


def test_it_logs_in_and_shows_the_console(actors: Actors, passwords: str, live_hub: LiveHub, page: object) -> None:
    log_in(page, live_hub, "owner")
    page.wait_for_url(f"{live_hub.url}/")
    assert page.locator("h1").inner_text() == "Overview of acme"
    nav = page.locator("nav.sidebar").inner_text()
    for section in ("Sessions", "Memory", "Episodes", "Approvals", "Compliance", "Settings & keys"):
        assert section in nav
    assert page.locator("[data-testid=workspace]").inner_text() == "acme"


def test_it_locks_an_operator_out_after_repeated_failures(actors: Actors, passwords: str, own_hub: LiveHub, page: object) -> None:
    # A hub of its own: the failures count against this machine's address in the hub's memory.
    for _ in range(5):
        log_in(page, own_hub, "teammate", "wrong password")
    assert "Too many failed log-ins" in page.content()
    # Even the right password is refused now.
    log_in(page, own_hub, "teammate")
    assert "Too many failed log-ins" in page.content()
    assert page.url.startswith(f"{own_hub.url}/login/")


def test_it_creates_and_revokes_an_agent_key(actors: Actors, passwords: str, live_hub: LiveHub, page: object) -> None:
    log_in(page, live_hub, "owner")
    page.wait_for_url(f"{live_hub.url}/")
    page.click("text=Settings & keys")
    page.fill("#id_agent", "browser-bot")
    page.fill("#id_store", "web")
    page.click("#agent-keys button.primary")
    key = page.locator("[data-testid=new-agent-key]").input_value()
    assert re.fullmatch(r"mha_[0-9a-f]{12}_[A-Za-z0-9]{43}", key)
    me = httpx.get(f"{live_hub.url}/api/v1/me", headers={"Authorization": f"Bearer {key}"}).json()
    assert (me["agent"], me["stores"]) == ("browser-bot", ["web"])

    prefix = key.split("_")[1]
    row = page.locator("tr", has_text=f"mha_{prefix}")
    page.once("dialog", lambda dialog: dialog.accept())
    row.locator("button", has_text="Revoke").click()
    page.locator("tr", has_text=f"mha_{prefix}").locator(".badge", has_text="revoked").wait_for()
    assert httpx.get(f"{live_hub.url}/api/v1/me", headers={"Authorization": f"Bearer {key}"}).status_code == 401


def test_it_serves_the_api_docs_from_its_own_files(live_hub: LiveHub, page: object) -> None:
    external: list[str] = []
    page.on("request", lambda request: external.append(request.url) if not request.url.startswith(live_hub.url) else None)
    page.goto(f"{live_hub.url}/api/docs/")
    page.locator(".swagger-ui .info .title").wait_for()
    assert "MemoryHub API" in page.locator(".swagger-ui .info .title").inner_text()
    assert external == []


def test_it_searches_memory_and_deletes_an_entry(actors: Actors, passwords: str, live_hub: LiveHub, page: object) -> None:
    from tests.conftest import remember

    remember(actors.bot_key, "Maria is allergic to peanuts and avoids Thai food.", user_id="maria")
    remember(actors.bot_key, "The payment service retries failed webhooks three times.", user_id="ops")
    log_in(page, live_hub, "owner")
    page.wait_for_url(f"{live_hub.url}/")
    page.click("nav >> text=Memory")
    assert page.locator("#results tbody tr").count() == 2
    page.fill("input[name=query]", "what can't Maria eat?")
    page.select_option("select[name=mode]", "semantic")
    page.click("button:has-text('Search')")
    page.wait_for_url(re.compile(r".*query=.*"))
    first = page.locator("#results tbody tr").first
    assert "peanuts" in first.inner_text()
    first.locator("a").click()
    assert "Maria is allergic to peanuts" in page.locator("[data-testid=entry-content]").inner_text()
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("button:has-text('Delete')")
    page.wait_for_url(f"{live_hub.url}/memory/")
    assert "Memory entry deleted." in page.content()
    assert page.locator("#results tbody tr").count() == 1


def test_it_shows_a_session_with_tool_calls_folded(actors: Actors, passwords: str, live_hub: LiveHub, page: object) -> None:
    from tests.test_console_sessions import seed

    seed(actors)
    log_in(page, live_hub, "teammate")
    page.wait_for_url(f"{live_hub.url}/")
    page.click("nav >> text=Sessions")
    page.click("text=chat-1")
    page.click("nav.tabs >> text=Conversation")
    user_message = page.locator("[data-testid=message-2] .content")
    assert user_message.inner_text() == "<img src=x onerror=alert(1)> hello"
    assert page.locator("[data-testid=message-2] img").count() == 0
    details = page.locator("[data-testid=message-3] details.tool-calls")
    assert not details.evaluate("el => el.open")
    details.locator("summary").click()
    assert "lookup" in details.locator("pre").inner_text()


def test_it_compares_two_checkpoints(actors: Actors, passwords: str, live_hub: LiveHub, page: object) -> None:
    from tests.test_console_checkpoints import seed

    seed(actors)
    log_in(page, live_hub, "teammate")
    page.wait_for_url(f"{live_hub.url}/")
    page.goto(f"{live_hub.url}/sessions/s1/checkpoints/")
    page.select_option("#diff-a", "1")
    page.select_option("#diff-b", "2")
    page.click("button:has-text('Show the difference')")
    diff = page.locator("[data-testid=checkpoint-diff]")
    assert '+    "pay"' in diff.inner_text()
    assert page.locator(".diff-add").count() >= 1 and page.locator(".diff-del").count() >= 1


def test_it_loads_a_tool_output_when_the_call_is_expanded(actors: Actors, passwords: str, live_hub: LiveHub, page: object) -> None:
    from tests.conftest import api_client

    bot = api_client(actors.bot_key)
    bot.post("/api/v1/sessions", {"session_id": "tools", "user_id": "u1"}, format="json")
    bot.post("/api/v1/sessions/tools/tool-calls", {"call_id": "c1", "tool": "crm.lookup", "result": "Ann <ann@example.com> is a gold customer"}, format="json")
    log_in(page, live_hub, "teammate")
    page.wait_for_url(f"{live_hub.url}/")
    page.goto(f"{live_hub.url}/sessions/tools/")
    call = page.locator("[data-testid=tool-call-c1]")
    assert "Loading the output" in call.locator(".tool-output").text_content()  # not fetched before it is opened
    call.locator("summary").click()
    output = page.locator("[data-testid=tool-output]")
    output.wait_for()
    text = output.inner_text()
    assert text.startswith("Ann <[EMAIL_") and "ann@example.com" not in text


def test_it_finds_similar_episodes(actors: Actors, passwords: str, live_hub: LiveHub, page: object) -> None:
    from tests.test_episodes_api import seed

    seed(actors)
    log_in(page, live_hub, "teammate")
    page.wait_for_url(f"{live_hub.url}/")
    page.click("nav >> text=Episodes")
    assert page.locator("#results tbody tr").count() == 3
    page.fill("input[name=task]", "book me a plane ticket to Lisbon")
    page.click("button:has-text('Search')")
    page.wait_for_url(re.compile(r".*task=.*"))
    assert "Berlin to Lisbon" in page.locator("#results tbody tr").first.inner_text()
