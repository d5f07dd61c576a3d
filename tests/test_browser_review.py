"""The Review page in Chromium (console/memory_views.py, static/console/review.js): an
approver works through flagged memories and a group of duplicates with the keyboard."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from memoryhub.memory.models import MemoryEntry
from tests.conftest import Actors, LiveHub, api_client, poll, remember
from tests.test_browser_console import log_in

pytestmark = pytest.mark.browser


def test_an_approver_quarantines_and_merges_by_keyboard(actors: Actors, passwords: str, live_hub: LiveHub, page: object) -> None:
    doubtful = remember(actors.bot_key, "Rae's <b>PIN</b> is 1234")
    api_client(actors.bot_key).post(f"/api/v1/memories/{doubtful['id']}/review", {"action": "flag"}, format="json")
    first, again = remember(actors.bot_key, "Sam flies on Fridays"), remember(actors.bot_key, "sam flies on fridays!")
    log_in(page, live_hub, "owner")
    page.wait_for_url(f"{live_hub.url}/")

    page.goto(f"{live_hub.url}/memory/review/")
    expect(page.locator("[data-testid=review-row]")).to_contain_text("Rae's <b>PIN</b> is 1234")  # as text
    page.keyboard.press("j")
    assert page.evaluate("document.activeElement.dataset.testid") == "review-row"
    page.keyboard.press("q")
    page.locator("text=Nothing flagged").wait_for()
    assert poll(lambda: MemoryEntry.objects.get(pk=doubtful["id"]).review == "quarantined")

    page.goto(f"{live_hub.url}/memory/review/?reason=duplicates")
    page.keyboard.press("j")
    page.keyboard.press("2")  # keep the second, merge the first into it
    page.locator("text=No duplicates wait").wait_for()
    assert poll(lambda: MemoryEntry.objects.get(pk=first["id"]).superseded_by_id is not None)
    assert str(MemoryEntry.objects.get(pk=first["id"]).superseded_by_id) == again["id"]
