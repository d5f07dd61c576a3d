"""Live pages in Chromium: the session page and Activity show events as they happen, and
a dropped connection fills its gap when it comes back."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import expect

from tests.conftest import Actors, LiveHub
from tests.tcp_proxy import CuttableProxy
from tests.test_browser_console import log_in

pytestmark = pytest.mark.browser


def say(hub: LiveHub, key: str, content: str, session_id: str = "s1") -> None:
    headers = {"Authorization": f"Bearer {key}"}
    httpx.post(f"{hub.url}/api/v1/sessions", json={"session_id": session_id, "user_id": "u1"}, headers=headers)
    httpx.post(f"{hub.url}/api/v1/sessions/{session_id}/messages", json={"role": "user", "content": content}, headers=headers).raise_for_status()


def test_it_shows_a_sessions_events_live_without_reload(actors: Actors, passwords: str, live_hub: LiveHub, page: object) -> None:
    say(live_hub, actors.bot_key, "first")
    log_in(page, live_hub, "owner")
    page.wait_for_url(f"{live_hub.url}/")
    page.goto(f"{live_hub.url}/sessions/s1/")
    timeline = page.locator("[data-testid=session-timeline]")
    assert timeline.locator("li").count() == 2  # started, first message
    page.locator("[data-testid=live-state]", has_text="(live)").wait_for()
    say(live_hub, actors.bot_key, "second")
    expect(timeline.locator("li")).to_have_count(3)
    assert "second" in timeline.locator("li").last.inner_text()  # in the order it happened


def test_it_fills_the_gap_after_a_dropped_connection(actors: Actors, passwords: str, live_hub: LiveHub, page: object) -> None:
    proxy = CuttableProxy(int(live_hub.url.rsplit(":", 1)[1]))
    try:
        say(live_hub, actors.bot_key, "before")
        log_in(page, proxy, "owner")  # type: ignore[arg-type]
        page.wait_for_url(f"{proxy.url}/")
        page.goto(f"{proxy.url}/activity/")
        activity = page.locator("[data-testid=activity]")
        page.locator("[data-testid=live-state]", has_text="(live)").wait_for()
        before = activity.locator("li").count()
        say(live_hub, actors.bot_key, "live one")
        expect(activity.locator("li")).to_have_count(before + 1)

        proxy.cut(refuse=True)  # the stream drops and cannot come back at once
        page.locator("[data-testid=live-state]", has_text="reconnecting").wait_for()
        for n in range(3):
            say(live_hub, actors.bot_key, f"missed {n}")
        proxy.resume()
        expect(activity.locator("li")).to_have_count(before + 4, timeout=30_000)
        ids = [int(x) for x in activity.locator("li").evaluate_all("items => items.map(li => li.dataset.eventId)")]
        assert ids == sorted(ids, reverse=True) and len(set(ids)) == len(ids)  # in order, none twice
        assert "missed 2" in activity.locator("li").first.inner_text()  # the last one missed
    finally:
        proxy.close()


def test_it_ends_live_pages_when_the_operator_logs_out(actors: Actors, passwords: str, live_hub: LiveHub, page: object) -> None:
    log_in(page, live_hub, "owner")
    page.wait_for_url(f"{live_hub.url}/")
    page.goto(f"{live_hub.url}/activity/")
    page.locator("[data-testid=live-state]", has_text="(live)").wait_for()
    other_tab = page.context.new_page()
    other_tab.goto(f"{live_hub.url}/")
    other_tab.locator("button", has_text="Log out").click()
    other_tab.wait_for_url(lambda url: "/login/" in url or url.endswith("/logout/") or url == f"{live_hub.url}/")
    page.locator("[data-testid=live-state]", has_text="ended").wait_for(timeout=10_000)
