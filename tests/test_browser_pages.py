"""Every console page in a real browser, filled with what a hostile agent could write.

Nothing an agent stored runs (no script, no handler, no htmx attribute, no template
syntax), no request leaves for anywhere but the page, its static files and its live
endpoints, the layout holds at 1280 px and at 390 px (a phone), and axe-core finds no
serious or critical accessibility problem. Each page is photographed at both widths into
var/screenshots/ (docs/contributing.md, "Tests"), for a reviewer who runs no server.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import resolve
from django.utils import timezone

from console.templatetags.console_ui import relative
from tests.conftest import BASE_DIR, Actors, LiveHub, api_client
from tests.test_browser_console import log_in

SCREENSHOTS = BASE_DIR / "var" / "screenshots"
# Full-page screenshots of every page at both widths take a quarter of this test's time:
# taken on request (`make screenshots`), not on every run.
TAKE_SCREENSHOTS = os.environ.get("MEMORYHUB_SCREENSHOTS", "") not in ("", "0")
WIDTHS = ((1280, 900), (390, 844))

# What a hostile agent writes. The markers around template syntax (T…T, J…J, R…R) make a
# rendered expression findable: "T49T" on a page means {{7*7}} was evaluated.
CORPUS = (
    "<script>window.__xss=1</script>",
    '<img src=x onerror="window.__xss=1">',
    "javascript:window.__xss=1",
    '<div hx-get="/api/v1/me" hx-trigger="load">x</div>',
    '<button hx-on:click="window.__xss=1">b</button>',
    '<div hx-on::load="window.__xss=1" hx-on:htmx:load="window.__xss=1">y</div>',
    '"><svg onload="window.__xss=1">',
    "' autofocus onfocus='window.__xss=1",
    "R{{ request.user }}R",
    "{% debug %}",
    "T{{7*7}}T",
    "J${7*7}J",
)
HOSTILE = "\n".join(CORPUS)
LONG = "W" * 5000  # one unbroken line
EVALUATED = ("T49T", "J49J", "Rowner", "DEFAULT_MESSAGE_LEVELS")  # the last: what {% debug %} prints

# Requests a page may make besides itself and /static/: its live feed and the polls it
# is built with. The hostile hx-get (/api/v1/me) is none of them.
LIVE_PATHS = (
    r"/activity/events/",
    r"/sessions/[^/]+/events/",
    r"/approvals/pending/",
    r"/compliance/purges/\d+/progress/",
    r"/portability/exports/[^/]+/progress/",
    r"/portability/imports/\d+/progress/",
    r"/settings/webhooks/\d+/",  # its delivery log, while deliveries wait
)

# Every console page with a GET view a walk must reach (the rest are POST targets,
# streams, downloads and htmx fragments).
PAGES = {
    "home", "activity", "sessions", "session", "session-conversation", "session-plan", "session-checkpoints", "session-summaries",
    "session-family", "checkpoint", "checkpoint-diff", "episodes", "memory", "memory-detail", "approvals", "approval-history",
    "approval-rules", "compliance", "keys", "review", "entity", "portability", "usage", "approval", "notifications", "webhooks",
    "webhook",
}
# 40 until the Export & import page and one of its imports joined the walk, 42 until the Usage
# page did with its other days (last month) and measures (cost, calls), 46 until a request's own
# page, Notifications, Webhooks and a webhook's did.
MAX_PAGES = 50
MAX_PER_TEMPLATE = 4

# Agent text outside an hx-disable container: htmx would act on any markup there that
# escaping ever let through. (Pages whose templates are being rewritten mark theirs then.)
OUTSIDE_HX_DISABLE = """() => {
  const out = [];
  const walker = document.createTreeWalker(document.querySelector("main") || document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    // A textarea's text is its value, never markup.
    if (!/__xss|7\\*7/.test(node.data) || node.parentElement.closest("[hx-disable], textarea")) continue;
    out.push(node.parentElement.tagName.toLowerCase() + (node.parentElement.className ? "." + node.parentElement.className : ""));
  }
  return [...new Set(out)];
}"""
HX_DISABLE_LATER: set[str] = set()

# The outermost elements sticking out of the window: where an overflow comes from.
WIDER_THAN_THE_WINDOW = """() => {
  const out = [];
  for (const el of document.querySelectorAll("body *")) {
    if (el.getBoundingClientRect().right <= window.innerWidth + 1) continue;
    if (out.some(outer => outer.contains(el))) continue;
    // A scrolling parent clips what is inside, except what is positioned against an outer box.
    let clipped = false;
    if (!["absolute", "fixed"].includes(getComputedStyle(el).position)) {
      for (let up = el.parentElement; up && !clipped; up = up.parentElement) clipped = getComputedStyle(up).overflowX !== "visible";
    }
    if (clipped) continue;
    out.push(el);
  }
  return out.slice(0, 5).map(el => el.tagName.toLowerCase() + (el.className ? "." + String(el.className).split(" ").join(".") : "")
    + " " + Math.round(el.getBoundingClientRect().right) + "px");
}"""

# Whatever an agent wrote that turned into markup: an attribute that runs code or makes a
# request, a script that is not one of the console's own files.
HOSTILE_MARKUP = """() => {
  const found = [];
  for (const el of document.querySelectorAll("*")) {
    for (const attr of el.attributes) {
      const name = attr.name.toLowerCase(), value = attr.value.trim().toLowerCase();
      if (name.startsWith("on") || name.startsWith("hx-on") || value.startsWith("javascript:")
          || (name === "hx-get" && value.startsWith("/api/"))) found.push(el.tagName + " " + name);
    }
  }
  for (const script of document.scripts) {
    if (!script.src || new URL(script.src).pathname.indexOf("/static/") !== 0) found.push("script " + script.outerHTML.slice(0, 80));
  }
  return found;
}"""


def seed(actors: Actors) -> dict[str, Any]:
    """The corpus in every kind of record the console shows, as agents and operators
    send it over the API."""
    bot, owner = api_client(actors.bot_key), api_client(actors.owner_key)

    def ok(response: Any) -> dict:
        assert response.status_code in (200, 201, 202), response.content[:500]
        return response.json()

    long_id = "s-" + "x" * 198  # the longest identifier allowed, unbroken
    entries = [
        ok(bot.post("/api/v1/memories", {
            "content": HOSTILE, "user_id": CORPUS[1], "tags": list(CORPUS), "metadata": {"note": HOSTILE, "long": LONG, CORPUS[0]: CORPUS[3]},
        }, format="json")),
        ok(bot.post("/api/v1/memories", {"content": LONG, "user_id": "U" * 255, "scope": "shared", "tags": ["t" * 100]}, format="json")),
        ok(bot.post("/api/v1/memories", {
            "content": "Maria's plan tier", "user_id": "maria", "memory_type": "factual",
            "data": {"subject": "maria", "predicate": "plan", "object": HOSTILE, "confidence": 0.9},
        }, format="json")),
    ]
    # The first entry written again: a pair of duplicates for the review page's side-by-side.
    again = ok(bot.post("/api/v1/memories", {"content": HOSTILE.upper(), "user_id": CORPUS[1], "tags": list(CORPUS)}, format="json"))
    assert again["similar"], again
    for session_id in ("chat", long_id):
        ok(bot.post("/api/v1/sessions", {"session_id": session_id, "user_id": CORPUS[1], "metadata": {"note": HOSTILE}}, format="json"))
    ok(bot.post("/api/v1/sessions/chat/messages", {"messages": [
        {"role": "system", "content": HOSTILE, "pinned": True},
        {"role": "user", "content": HOSTILE},
        {"role": "user", "content": LONG},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "call-1", "type": "function", "function": {"name": CORPUS[0], "arguments": HOSTILE}}]},
        {"role": "tool", "content": HOSTILE, "tool_call_id": "call-1"},
    ]}, format="json"))
    ok(bot.patch("/api/v1/sessions/chat/messages/2", {"content": HOSTILE + "\nedited"}, format="json"))
    ok(bot.post("/api/v1/sessions/chat/summarize", format="json"))
    ok(bot.put("/api/v1/sessions/chat/plan", {"goal": HOSTILE, "steps": [
        {"step_id": "s1", "description": HOSTILE}, {"step_id": "s2", "description": LONG[:4000], "depends_on": ["s1"]},
    ]}, format="json"))
    ok(bot.patch("/api/v1/sessions/chat/plan/steps/s1", {"status": "running"}, format="json"))
    ok(bot.patch("/api/v1/sessions/chat/plan/steps/s1", {"status": "done", "summary": HOSTILE}, format="json"))
    ok(bot.post("/api/v1/sessions/chat/tool-calls", {
        "call_id": "c1", "tool": CORPUS[1], "args": {"q": HOSTILE, CORPUS[0]: LONG}, "result": HOSTILE + LONG, "result_summary": HOSTILE, "step_id": "s1",
    }, format="json"))
    ok(bot.post("/api/v1/sessions/chat/checkpoints", {"expected_version": 0, "state": {"note": HOSTILE, "long": LONG}, "current_step": "s1", "label": "first"}, format="json"))
    ok(bot.post("/api/v1/sessions/chat/checkpoints", {"expected_version": 1, "state": {"note": HOSTILE + "\nlater", "long": LONG + "W", "x": CORPUS}, "current_step": "s2", "label": long_id}, format="json"))
    ok(bot.post("/api/v1/sessions/chat/branch", {"new_session_id": "chat-branch", "upto_seq": 2, "label": "what-if"}, format="json"))
    ok(bot.post("/api/v1/episodes", {
        "user_id": CORPUS[1], "task": HOSTILE, "outcome": "failure", "narrative": HOSTILE + "\n" + LONG[:3000], "session_id": "chat",
        "tools_used": {CORPUS[0]: 2, "W" * 200: 1}, "metadata": {"note": HOSTILE},
    }, format="json"))

    # A webhook with what reviewers read (its log fills with the approvals below; its host does not resolve).
    ok(owner.post("/api/v1/webhooks", {
        "url": "https://hooks.invalid/memoryhub", "events": ["approval.requested", "approval.decided"], "include_content": True,
        "description": HOSTILE[:500],
    }, format="json"))

    # Approvals: one waiting, one rejected and remembered, one that suspended its session.
    ok(bot.post("/api/v1/approvals", {
        "session_id": "chat", "tool": CORPUS[1], "args": {"to": HOSTILE, "long": LONG}, "context": HOSTILE,
        "response_schema": {"type": "object", "description": HOSTILE}, "expires_in": 3600,
    }, format="json"))
    rejected = ok(bot.post("/api/v1/approvals", {"session_id": "chat", "tool": CORPUS[3][:200], "args": {"q": HOSTILE}}, format="json"))
    ok(owner.post(f"/api/v1/approvals/{rejected['id']}/decision", {"decision": "reject", "reason": HOSTILE, "remember": "exact"}, format="json"))
    suspended = ok(bot.post("/api/v1/approvals", {"session_id": long_id, "tool": "W" * 200, "args": {"q": LONG}}, format="json"))
    ok(owner.post(f"/api/v1/approvals/{suspended['id']}/decision", {"decision": "suspend", "reason": LONG[:4000]}, format="json"))

    # The graph: hostile entity names, a long one, a rule that infers (the page marks it) and a hostile predicate.
    ok(owner.put("/api/v1/graph/rules", {"rules": [{"predicate": "part of", "kind": "transitive"},
                                                    {"predicate": CORPUS[1], "kind": "symmetric"}]}, format="json"))
    for subject, predicate, obj in ((CORPUS[0], "part of", "maria"), ("maria", "part of", HOSTILE[:2000]), ("maria", CORPUS[1], LONG[:2000])):
        ok(bot.post("/api/v1/graph/edges", {"subject": subject, "predicate": predicate, "object": obj, "user_id": "maria"}, format="json"))

    # Keys (their labels are in the audit log's details too) and an erased user.
    ok(owner.post("/api/v1/keys", {"agent": "helper", "label": HOSTILE[:200]}, format="json"))
    ok(owner.post("/api/v1/keys", {"agent": "longlabel", "label": LONG[:200]}, format="json"))
    ok(owner.post("/api/v1/purges", {"user_id": CORPUS[1], "dry_run": True}, format="json"))

    # Exports and imports: a user's export (its user_id shown), a session's, and a dry run of a
    # file whose name, user and memories are the corpus (no slash in a name: only its base is kept).
    ok(owner.post("/api/v1/exports", {"scope": "user", "user_id": CORPUS[1]}, format="json"))
    ok(owner.post("/api/v1/exports", {"scope": "session", "session_id": long_id}, format="json"))
    mem0 = json.dumps({"results": [{"id": text, "memory": text, "user_id": CORPUS[6]} for text in CORPUS]}).encode()
    ok(owner.post("/api/v1/imports", {
        "file": SimpleUploadedFile(CORPUS[1] + ".json", mem0), "format": "mem0", "store": "default", "agent": "bot",
        "user_id": CORPUS[7], "dry_run": True,
    }, format="multipart"))

    # Usage: what this process counted (the writes above, embedded by the built-in model) written
    # for the hub to read, and a budget whose warning is reached, so that every page shows its banner.
    ok(owner.get("/api/v1/usage"))
    ok(owner.put("/api/v1/settings/budget", {"monthly_limit": 100, "warn_at": 0}, format="json"))
    return {"entries": entries, "long_id": long_id}


@dataclass
class Watch:
    """What the browser did on one page: requests, dialogs, CSP refusals."""

    requests: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def clear(self) -> None:
        self.requests.clear()
        self.dialogs.clear()
        self.refused.clear()


def watch(page: Any) -> Watch:
    seen = Watch()
    page.on("request", lambda request: seen.requests.append(request.url))

    def on_dialog(dialog: Any) -> None:
        seen.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("console", lambda message: seen.refused.append(message.text) if "Content Security Policy" in message.text else None)
    return seen


def unexpected_requests(hub: LiveHub, page_url: str, requests: list[str]) -> list[str]:
    here = urlsplit(page_url).path
    wrong = []
    for url in requests:
        parts = urlsplit(url)
        if f"{parts.scheme}://{parts.netloc}" != hub.url:
            wrong.append(url)
        elif parts.path != here and not parts.path.startswith("/static/") and not any(re.fullmatch(p, parts.path) for p in LIVE_PATHS):
            wrong.append(url)
    return wrong


def serious_violations(axe: Axe, page: Any) -> list[str]:
    results = axe.run(page).response
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[node['target'] for node in v['nodes'][:3]]}"
        for v in results["violations"] if v["impact"] in ("serious", "critical")
    ]


def links_on(page: Any, hub: LiveHub) -> list[str]:
    """The console pages this one links to, as path?query."""
    hrefs = page.eval_on_selector_all("a[href]:not([download])", "links => links.map(a => a.href)")
    found = []
    for href in hrefs:
        parts = urlsplit(href)
        if f"{parts.scheme}://{parts.netloc}" != hub.url or parts.path.startswith(("/api/", "/static/", "/logout")):
            continue
        found.append(parts.path + (f"?{parts.query}" if parts.query else ""))
    return found


def check_page(page: Any, hub: LiveHub, axe: Axe, seen: Watch, path: str, name: str, *, axe_widths: int = len(WIDTHS)) -> list[str]:
    """Loads `path` at each width; what is wrong with it. axe-core runs at the first
    `axe_widths` widths (it is most of the walk's time)."""
    problems = []
    url = f"{hub.url}{path}"
    seen.clear()
    page.set_viewport_size({"width": WIDTHS[0][0], "height": WIDTHS[0][1]})
    response = page.goto(url, wait_until="load")
    assert response is not None and response.status in (200, 404), (path, response and response.status)
    # htmx processes the page as it loads; a frame and the tasks queued behind it later, a
    # hostile hx-trigger="load" would have fired (a quarter second's sleep per page was 11 s of the walk).
    page.evaluate("new Promise(settled => requestAnimationFrame(() => setTimeout(settled, 0)))")
    for index, (width, height) in enumerate(WIDTHS):
        page.set_viewport_size({"width": width, "height": height})
        where = f"{path} at {width} px"
        if page.evaluate("typeof window.__xss") != "undefined":
            problems.append(f"{where}: the corpus ran")
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        if overflow > 1:
            problems.append(f"{where}: {overflow} px wider than the window, from {page.evaluate(WIDER_THAN_THE_WINDOW)}")
        if index < axe_widths:
            problems += [f"{where}: {v}" for v in serious_violations(axe, page)]
        if TAKE_SCREENSHOTS:
            page.screenshot(path=str(SCREENSHOTS / f"{name}-{width}.png"), full_page=True)
    text = page.inner_text("body")
    problems += [f"{path}: shows {marker!r}, template syntax was evaluated" for marker in EVALUATED if marker in text]
    problems += [f"{path}: agent text became markup: {found}" for found in page.evaluate(HOSTILE_MARKUP)]
    problems += [f"{path}: unexpected request {url}" for url in unexpected_requests(hub, url, seen.requests)]
    problems += [f"{path}: a dialog opened: {message!r}" for message in seen.dialogs]
    problems += [f"{path}: CSP refused {message!r}" for message in seen.refused]
    if resolve(urlsplit(path).path).url_name not in HX_DISABLE_LATER:
        problems += [f"{path}: agent text outside hx-disable in {where}" for where in page.evaluate(OUTSIDE_HX_DISABLE)]
    if page.locator("main > ul.messages").count():  # nothing was done on the walk: nothing to report
        problems.append(f"{path}: a flash message box: {page.inner_text('main > ul.messages')!r}")
    return problems


@pytest.mark.browser
def test_no_page_runs_what_agents_wrote_and_every_page_fits(actors: Actors, passwords: str, live_hub: LiveHub, page: Any) -> None:
    started = time.monotonic()
    seeded = seed(actors)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for old in SCREENSHOTS.glob("*.png"):
        old.unlink()
    axe, seen = Axe(), watch(page)
    problems = check_page(page, live_hub, axe, seen, "/login/", "login")

    log_in(page, live_hub, "owner")
    page.wait_for_url(f"{live_hub.url}/")
    # Pages no link leads to (a GET form does, or nothing: a 404).
    extra = [
        "/sessions/chat/checkpoints/diff/?a=1&b=2",
        "/memory/?query=window&mode=keyword",
        "/episodes/?task=window",
        "/approvals/history/?tool=img",
        "/memory/no-such-entry/",
        "/graph/?name=maria&depth=2",
    ]
    # The review page's duplicates first: its tab would come late in the walk, past MAX_PAGES.
    queue, visited, names = ["/", "/memory/review/?reason=duplicates"], [], Counter()
    while queue and len(visited) < MAX_PAGES:
        path = queue.pop(0)
        if path in visited:
            continue
        match = resolve(urlsplit(path).path)
        if names[match.url_name] >= MAX_PER_TEMPLATE:  # the graph links every entity: enough of them
            continue
        visited.append(path)
        names[match.url_name] += 1
        name = match.url_name + (f"-{names[match.url_name]}" if names[match.url_name] > 1 else "")
        # Another page of a template already checked (one more entry, one more session)
        # differs by its data, not its layout: axe-core at the first width is enough there.
        axe_widths = len(WIDTHS) if names[match.url_name] == 1 else 1
        problems += check_page(page, live_hub, axe, seen, path, name, axe_widths=axe_widths)
        queue += [link for link in links_on(page, live_hub) if link not in visited and link not in queue]
        if not queue and extra:
            queue.append(extra.pop(0))

    assert not problems, "\n".join(problems)
    assert PAGES <= set(names), PAGES - set(names)
    assert names["memory-detail"] >= len(seeded["entries"]) and names["session"] >= 3, names
    assert names["portability"] >= 2, names  # the page, and an import's dry run shown on it
    assert names["usage"] >= 2, names  # this month's, and another's or another measure
    # What agents wrote is on the pages, as text.
    page.goto(f"{live_hub.url}/memory/{seeded['entries'][0]['id']}/")
    assert page.inner_text("[data-testid=entry-content]") == HOSTILE
    print(f"walked {len(visited)} pages in {time.monotonic() - started:.1f} s")


@pytest.mark.browser
def test_the_keyboard_skips_to_the_content_and_copies_an_id(actors: Actors, passwords: str, live_hub: LiveHub, page: Any) -> None:
    entry = api_client(actors.bot_key).post("/api/v1/memories", {"content": "Ann prefers e-mail.", "user_id": "ann"}, format="json").json()
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_hub.url)
    log_in(page, live_hub, "owner")
    page.wait_for_url(f"{live_hub.url}/")
    page.goto(f"{live_hub.url}/memory/{entry['id']}/")

    page.keyboard.press("Tab")
    skip = page.evaluate("({text: document.activeElement.textContent, href: document.activeElement.getAttribute('href')})")
    assert skip == {"text": "Skip to content", "href": "#content"}
    box = page.locator(".skip-link").bounding_box()
    assert box is not None and box["y"] >= 0  # shown once focused
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") != "none"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "content"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.closest('main') !== null")  # the navigation is behind
    assert page.evaluate("document.activeElement.closest('nav.breadcrumbs') !== null")

    copy = page.get_by_role("button", name="Copy entry id")
    copy.focus()
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") != "none"
    page.keyboard.press("Enter")
    page.locator("#announcer", has_text="Copied").wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == entry["id"]
    assert copy.inner_text() == "Copied"


@pytest.mark.browser
def test_a_request_that_arrives_live_still_checks_its_schema_in_the_browser(
    actors: Actors, passwords: str, live_hub: LiveHub, page: Any
) -> None:
    """htmx drops every <script> of swapped HTML (allowScriptTags off): the schema of a
    card the poll brings travels in an attribute."""
    from tests.test_browser_approvals import POLL_WAIT, SCHEMA, ask, open_inbox

    open_inbox(page, live_hub, "owner")
    page.locator("text=No request waits for you.").wait_for()
    approval = ask(live_hub, actors.bot_key, response_schema=SCHEMA)
    card = page.locator(f"[data-testid=approval-{approval['id']}]")
    card.wait_for(timeout=POLL_WAIT)
    posts: list[str] = []
    page.on("request", lambda request: posts.append(request.url) if request.method == "POST" else None)
    card.focus()
    page.keyboard.press("e")
    card.locator("textarea").fill('{"to": "cfo@example.com", "amount": 5000}')
    card.locator("text=Send the edited arguments").click()
    assert "amount must be at most 1000" in card.locator("[data-testid=args-problem]").inner_text()
    assert posts == []


def test_relative_times_read_as_the_script_writes_them() -> None:
    now = timezone.now()
    assert [relative(now - delta, now) for delta in (
        timedelta(seconds=5), timedelta(minutes=3), timedelta(minutes=89), timedelta(hours=5), timedelta(hours=47),
        timedelta(days=2), timedelta(days=59), timedelta(days=90), timedelta(days=800),
    )] == ["just now", "3 min ago", "89 min ago", "5 h ago", "47 h ago", "2 days ago", "59 days ago", "3 months ago", "2 years ago"]
    assert relative(now + timedelta(minutes=10, seconds=5), now) == "in 10 min"
    assert relative(now + timedelta(seconds=20), now) == "in under a minute"



DOCS_IMAGES = BASE_DIR / "docs" / "images"
# The manual's pictures (docs/images/<name>.png), each of a page of the demo workspace.
MANUALS_SCREENSHOTS = {
    "console-home": "/", "console-session": "/sessions/sup-maria-double-charge/", "console-approvals": "/approvals/",
    "console-memory": "/memory/{fact}/", "console-review": "/memory/review/?reason=duplicates", "console-graph": "/graph/?name=Lisbon&depth=2",
    "console-usage": "/usage/", "console-portability": "/portability/",
}


def test_every_picture_of_the_manual_is_one_make_screenshots_takes() -> None:
    # A page the docs show is refreshed with the console; a picture no page makes goes stale.
    shown = {name for page in (BASE_DIR / "docs").rglob("*.md") for name in re.findall(r"images/([\w-]+)\.png", page.read_text())}
    assert shown == set(MANUALS_SCREENSHOTS)
    assert {path.stem for path in DOCS_IMAGES.glob("*.png")} == set(MANUALS_SCREENSHOTS)


@pytest.mark.browser
@pytest.mark.skipif(not TAKE_SCREENSHOTS, reason="the manual's screenshots are taken by `make screenshots`")
def test_it_takes_the_manuals_screenshots_of_the_demo(live_hub: LiveHub, page: Any) -> None:
    """docs/images/console-*.png: the demo workspace as a newcomer first sees it."""
    from console.demo import DEFAULT_PASSWORD, DEMO_USERNAME, demo_seed
    from memoryhub.memory.models import MemoryEntry

    assert demo_seed().status == "seeded"
    fact = MemoryEntry.objects.filter(workspace__slug="demo", memory_type="factual", invalidated_at__isnull=True).order_by("created_at").first()
    assert fact is not None
    log_in(page, live_hub, DEMO_USERNAME, DEFAULT_PASSWORD)
    page.wait_for_url(f"{live_hub.url}/")
    page.set_viewport_size({"width": 1280, "height": 900})
    for name, path in MANUALS_SCREENSHOTS.items():
        path = path.format(fact=fact.pk)
        assert page.goto(f"{live_hub.url}{path}", wait_until="networkidle").status == 200, path
        page.evaluate("new Promise(settled => requestAnimationFrame(() => setTimeout(settled, 0)))")  # htmx's swaps painted
        page.screenshot(path=str(DOCS_IMAGES / f"{name}.png"))


# The text of each cell, where it runs over more than one line.
BROKEN_CELLS = """[...document.querySelectorAll('table td.mono, table td.name')].filter(td => {
  const range = document.createRange(); range.selectNodeContents(td);
  return new Set([...range.getClientRects()].map(rect => Math.round(rect.top))).size > 1;
}).map(td => td.textContent.trim())"""


@pytest.mark.browser
def test_the_demo_fits_1280_px_with_ids_and_labels_whole(live_hub: LiveHub, page: Any) -> None:
    # What a newcomer sees first: the sessions table cut its last column and broke user ids
    # and agent names mid-word; the removals chart drew labels too small and cut.
    from console.demo import DEFAULT_PASSWORD, DEMO_USERNAME, demo_seed

    assert demo_seed().status == "seeded"
    log_in(page, live_hub, DEMO_USERNAME, DEFAULT_PASSWORD)
    page.wait_for_url(f"{live_hub.url}/")
    page.set_viewport_size({"width": 1280, "height": 900})
    for path in ("/sessions/", "/episodes/", "/"):
        page.goto(f"{live_hub.url}{path}")
        # Tables shown (not the numbers behind a chart, folded away, which may scroll).
        cut = page.evaluate("[...document.querySelectorAll('.table-scroll')].filter(s => !s.closest('details:not([open])'))"
                            ".map(s => s.scrollWidth - s.clientWidth)")
        assert all(width <= 1 for width in cut), (path, cut)
        assert page.evaluate(BROKEN_CELLS) == [], path
    labels = page.evaluate("[...document.querySelectorAll('#chart-removals svg text')].map(text => text.textContent)")
    assert "Timeline events" in labels and not any(label.endswith("…") for label in labels), labels
