"""The sessions list (filters, order, pages, counts) and the session page told as one
timeline (every kind interleaved, filters, pages, links into the details), over
Django's client against the real database."""

from __future__ import annotations

import re

from django.test import Client

from console import session_views
from tests.conftest import Actors, api_client

ARGS = {"to": "acct-9", "amount": 1200}


def logged_in(membership: object) -> Client:
    client = Client()
    client.force_login(membership.user)
    return client


def start(key: str, session_id: str, user_id: str = "u1") -> object:
    agent = api_client(key)
    agent.post("/api/v1/sessions", {"session_id": session_id, "user_id": user_id}, format="json")
    return agent


def busy_session(key: str, session_id: str = "s1") -> None:
    """One of every kind of thing an agent does, in a known order."""
    agent = start(key, session_id)
    agent.post(f"/api/v1/sessions/{session_id}/messages", {"role": "user", "content": "Book me a flight to Oslo"}, format="json")
    agent.put(f"/api/v1/sessions/{session_id}/plan", {"goal": "Book a flight", "steps": [{"step_id": "search", "description": "Search"}]}, format="json")
    agent.post(f"/api/v1/sessions/{session_id}/tool-calls", {"call_id": "c1", "tool": "flights.search", "args": {"to": "OSL"}, "result": "3 flights", "status": "error"}, format="json")
    agent.post(f"/api/v1/sessions/{session_id}/checkpoints", {"expected_version": 0, "state": {"step": 1}, "label": "searched"}, format="json")
    agent.post(f"/api/v1/sessions/{session_id}/checkpoints", {"expected_version": 1, "state": {"step": 2}}, format="json")
    agent.post("/api/v1/approvals", {"session_id": session_id, "tool": "payments.send", "args": ARGS}, format="json")
    agent.post(f"/api/v1/sessions/{session_id}/messages", {"role": "assistant", "content": "Waiting for approval."}, format="json")


def long_session(key: str, turns: int = 25) -> None:
    start(key, "long").post(
        "/api/v1/sessions/long/messages", {"messages": [{"role": "user", "content": f"turn {n}"} for n in range(1, turns + 1)]}, format="json"
    )


def kinds_shown(html: str) -> list[str]:
    return re.findall(r'data-kind="([a-z_]+)"', html)


def rows_shown(html: str) -> list[str]:
    return re.findall(r'<tr data-testid="session-row">\s*<td><a href="/sessions/([^/]+)/"', html)


def test_it_tells_a_session_as_one_timeline_in_the_order_it_happened(actors: Actors) -> None:
    busy_session(actors.bot_key)
    html = logged_in(actors.teammate).get("/sessions/s1/").content.decode()
    assert kinds_shown(html) == ["run", "message", "plan", "tool_call", "checkpoint", "checkpoint", "approval", "message"]
    # Each event shows what it is about, and links into the detail views.
    assert "Book me a flight to Oslo" in html and 'href="/sessions/s1/conversation/?from=1#m-1"' in html
    assert "flights.search" in html and "3 flights" not in html.split('data-kind="tool_call"')[0]
    assert 'hx-get="/sessions/s1/tool-calls/c1/result/"' in html
    assert 'href="/sessions/s1/checkpoints/2/"' in html and 'href="/sessions/s1/checkpoints/diff/?a=1&amp;b=2"' in html
    assert "payments.send" in html and "answer in the inbox" in html and 'href="/sessions/s1/plan/"' in html
    counts = html[html.index('data-testid="session-counts"'):]
    assert re.findall(r"<dd>(?:<a [^>]+>)?(\d+)", counts)[:4] == ["2", "1", "2", "1"]  # messages, tool calls, checkpoints, pending


def test_it_shows_a_langgraph_thread_as_a_session_with_its_checkpoints(actors: Actors) -> None:
    bot = api_client(actors.bot_key)
    for n, step in enumerate((-1, 0)):
        saved = bot.post("/api/v1/langgraph/checkpoints", {
            "thread_id": "graph-1", "user_id": "u1", "checkpoint_id": f"1f0-{n}", "checkpoint": {"type": "msgpack", "data": "eA=="},
            "metadata": {"source": "input" if step < 0 else "loop", "step": step},
        }, format="json")
        assert saved.status_code == 201
    client = logged_in(actors.teammate)
    assert "graph-1" in rows_shown(client.get("/sessions/").content.decode())
    html = client.get("/sessions/graph-1/").content.decode()
    assert kinds_shown(html) == ["run", "checkpoint", "checkpoint"]
    assert "LangGraph checkpoint 1f0-1 (step 0, loop)" in html and "LangGraph checkpoint 1f0-0 (step -1, input)" in html


def test_it_filters_the_timeline_by_kind(actors: Actors) -> None:
    busy_session(actors.bot_key)
    client = logged_in(actors.teammate)
    html = client.get("/sessions/s1/", {"kind": ["tool_call", "approval"]}).content.decode()
    assert kinds_shown(html) == ["tool_call", "approval"]
    assert "kind=tool_call,approval" in html  # the live stream follows the same filter
    assert "No events of these kinds" in client.get("/sessions/s1/", {"kind": "fork"}).content.decode()
    assert kinds_shown(client.get("/sessions/s1/", {"kind": "bogus"}).content.decode())[0] == "run"  # unknown kinds are ignored


def test_it_pages_a_long_session_instead_of_rendering_it_at_once(actors: Actors, monkeypatch: object) -> None:
    monkeypatch.setattr(session_views, "TIMELINE_PAGE", 10)
    long_session(actors.bot_key)
    client = logged_in(actors.teammate)
    newest = client.get("/sessions/long/").content.decode()
    assert re.findall(r">turn (\d+)<", newest) == [str(n) for n in range(16, 26)]  # the newest page, oldest first
    assert 'data-testid="later"' not in newest and "sse-connect" in newest
    earlier = re.search(r'href="\?before=(\d+)" data-testid="earlier"', newest)
    middle = client.get(f"/sessions/long/?before={earlier.group(1)}").content.decode()
    assert re.findall(r">turn (\d+)<", middle) == [str(n) for n in range(6, 16)]
    assert "sse-connect" not in middle  # an older page is not live
    later = re.search(r'href="\?after=(\d+)" data-testid="later"', middle)
    assert re.findall(r">turn (\d+)<", client.get(f"/sessions/long/?after={later.group(1)}").content.decode()) == [str(n) for n in range(16, 26)]
    first = client.get(f"/sessions/long/?before={re.search(r'href=\"\?before=(\d+)\"', middle).group(1)}").content.decode()
    assert 'data-testid="earlier"' not in first and re.findall(r">turn (\d+)<", first) == [str(n) for n in range(1, 6)]


def test_it_reads_a_timeline_page_in_a_bounded_number_of_queries(actors: Actors, django_assert_max_num_queries: object) -> None:
    busy_session(actors.bot_key)
    client = logged_in(actors.teammate)
    client.get("/sessions/s1/")
    # 15: the page's own, the sidebar's count of memories waiting for review and the budget banner's read.
    with django_assert_max_num_queries(15):
        client.get("/sessions/s1/")
    for n in range(30):
        api_client(actors.bot_key).post("/api/v1/sessions/s1/tool-calls", {"call_id": f"x{n}", "tool": "t", "result": "r"}, format="json")
        api_client(actors.bot_key).post("/api/v1/sessions/s1/checkpoints", {"expected_version": n + 2, "state": {"n": n}}, format="json")
    with django_assert_max_num_queries(15):
        assert len(kinds_shown(client.get("/sessions/s1/").content.decode())) == 68


def test_it_hides_another_workspaces_session_and_its_tabs(actors: Actors) -> None:
    busy_session(actors.spy_key, "globex-1")
    owner = logged_in(actors.owner)
    for path in ("", "conversation/", "plan/", "checkpoints/", "summaries/", "family/"):
        assert owner.get(f"/sessions/globex-1/{path}").status_code == 404
    assert logged_in(actors.outsider).get("/sessions/globex-1/").status_code == 200
    assert Client().get("/sessions/globex-1/").status_code == 302  # to the login


def test_it_pages_the_conversation(actors: Actors, monkeypatch: object) -> None:
    monkeypatch.setattr(session_views, "CONVERSATION_PAGE", 10)
    long_session(actors.bot_key)
    client = logged_in(actors.teammate)
    first = client.get("/sessions/long/conversation/").content.decode()
    assert re.findall(r">turn (\d+)<", first) == [str(n) for n in range(1, 11)] and "?from=11" in first
    page = client.get("/sessions/long/conversation/", {"from": 21}).content.decode()
    assert re.findall(r">turn (\d+)<", page) == [str(n) for n in range(21, 26)] and "?from=11" in page


def test_it_lists_sessions_with_their_counts_and_status(actors: Actors) -> None:
    busy_session(actors.bot_key, "busy")
    start(actors.peer_key, "quiet", user_id="maria")
    start(actors.spy_key, "foreign")
    agent = start(actors.bot_key, "done")
    agent.post("/api/v1/episodes", {"user_id": "u1", "session_id": "done", "task": "t", "outcome": "success", "narrative": "n"}, format="json")
    html = logged_in(actors.teammate).get("/sessions/").content.decode()
    assert sorted(rows_shown(html)) == ["busy", "done", "quiet"]
    busy = html[html.index('href="/sessions/busy/"'):].split("</tr>")[0]
    assert re.findall(r'class="num">(?:<a [^>]+>)?(\d+)', busy) == ["2", "1", "2", "1"]
    assert '<span class="badge ok">finished</span>' in html.split('href="/sessions/done/"')[1].split("</tr>")[0]


def test_it_filters_and_sorts_the_sessions_list(actors: Actors) -> None:
    busy_session(actors.bot_key, "busy")
    start(actors.peer_key, "quiet", user_id="maria")
    start(actors.loner_key, "lonely")
    client = logged_in(actors.teammate)

    def listed(**filters: str) -> list[str]:
        return rows_shown(client.get("/sessions/", filters).content.decode())

    assert listed(agent="peer") == ["quiet"]
    assert listed(store="other") == ["lonely"]
    assert listed(user_id="maria") == ["quiet"] and listed(q="maria") == ["quiet"] and listed(q="bus") == ["busy"]
    assert listed(status="active", order="oldest") == ["busy", "quiet", "lonely"]
    assert listed(status="suspended") == [] and listed(started_from="2000-01-01", order="newest") == ["lonely", "quiet", "busy"]
    assert listed(order="messages")[0] == "busy"
    assert listed(order="recent") == ["lonely", "quiet", "busy"]
    api_client(actors.bot_key).post("/api/v1/sessions/busy/messages", {"role": "user", "content": "still there?"}, format="json")
    assert listed(order="recent") == ["busy", "lonely", "quiet"]  # the last activity, not the start
    assert "Check the filters" in client.get("/sessions/", {"started_from": "yesterday"}).content.decode()
    assert "Check the filters" in client.get("/sessions/", {"agent": "spy"}).content.decode()  # another workspace's agent


def test_it_pages_the_sessions_list_by_cursor(actors: Actors, monkeypatch: object) -> None:
    monkeypatch.setattr(session_views, "PAGE_SIZE", 2)
    for n in range(5):
        start(actors.bot_key, f"s{n}")
    client = logged_in(actors.teammate)
    seen, query = [], {"order": "oldest"}
    while True:
        html = client.get("/sessions/", query).content.decode()
        seen += rows_shown(html)
        more = re.search(r'cursor=([\w-]+)" data-testid="next-page"', html)
        if not more:
            break
        query = {"order": "oldest", "cursor": more.group(1)}
    assert seen == [f"s{n}" for n in range(5)]
    assert "not one this console gave out" in client.get("/sessions/", {"cursor": "garbage"}).content.decode()


def test_it_lists_sessions_in_a_bounded_number_of_queries(actors: Actors, django_assert_max_num_queries: object) -> None:
    client = logged_in(actors.teammate)
    busy_session(actors.bot_key, "busy")
    # 12: the page's own, the sidebar's count of memories waiting for review and the budget banner's read.
    with django_assert_max_num_queries(12):
        client.get("/sessions/")
    for n in range(20):
        busy_session(actors.bot_key, f"more-{n}")
    with django_assert_max_num_queries(12):
        assert len(rows_shown(client.get("/sessions/").content.decode())) == 21
