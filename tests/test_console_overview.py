"""The Overview's charts and their numbers (the console home; its health table and the
first-agent guide are in test_console_home.py)."""

from __future__ import annotations

from datetime import timedelta
from html.parser import HTMLParser

from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memoryhub.approvals.models import Approval
from memoryhub.approvals.services import approval_decide
from memoryhub.compliance.models import PurgeRequest
from memoryhub.compliance.retention import retention_record
from memoryhub.conversations.sessions import session_of
from memoryhub.core import services
from memoryhub.core.models import Role
from memoryhub.memory.models import MemoryEntry
from memoryhub.timeline.models import Event
from memoryhub.tools.services import ToolCallInput, tool_call_record
from tests.conftest import Actors, api_client

# The queries of the whole page (session, operator, health, tiles and every chart); it
# must not grow with the data.
MAX_QUERIES = 25


class Tables(HTMLParser):
    """The cells' text of every table with a data-testid, by that id."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.current: list[list[str]] | None = None
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table" and dict(attrs).get("data-testid"):
            self.current = self.tables.setdefault(dict(attrs)["data-testid"] or "", [])
        elif self.current is not None and tag == "tr":
            self.current.append([])
        elif self.current is not None and tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self.current = None
        elif self.current is not None and tag in ("td", "th") and self.cell is not None:
            self.current[-1].append("".join(self.cell).strip())
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def numbers(html: str, testid: str) -> dict[str, list[str]]:
    """A table's rows by their first cell; the header row under ""."""
    parser = Tables()
    parser.feed(html)
    rows = parser.tables[testid]
    return {"": rows[0][1:], **{row[0]: row[1:] for row in rows[1:]}}


def overview(membership: object, query: str = "") -> str:
    client = Client()
    client.force_login(membership.user)
    response = client.get(f"/{query}")
    assert response.status_code == 200
    return response.content.decode()


def log_calls(key: str, session_id: str, calls: list[tuple[str, str]]) -> None:
    """An agent's session and its tool calls (tool, status), over the API."""
    agent = api_client(key)
    assert agent.post("/api/v1/sessions", {"session_id": session_id, "user_id": "u1"}, format="json").status_code == 201
    for tool, status in calls:
        body = {"tool": tool, "args": {}, "result": "done", "status": status, "duration_ms": 100}
        assert agent.post(f"/api/v1/sessions/{session_id}/tool-calls", body, format="json").status_code == 201


def test_it_needs_a_login(db: None, client: Client) -> None:
    response = client.get("/?range=7d")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_it_shows_the_tool_calls_recorded(actors: Actors) -> None:
    log_calls(actors.bot_key, "s1", [("crm.lookup", "ok")] * 3 + [("crm.lookup", "error")] * 2 + [("search", "ok")])
    html = overview(actors.teammate)
    tools = numbers(html, "numbers-tools")
    assert tools[""] == ["Calls", "Errors", "Error rate", "p50", "p95", "Cost"]
    assert tools["crm.lookup"][:5] == ["5", "2", "40.0 %", "100 ms", "100 ms"]
    assert tools["search"][:3] == ["1", "0", "0.0 %"]
    assert "6</span> tool calls, 2 failed" in html
    assert "6 calls in the last 24 hours, 2 failed (33.3 %)" in html


def test_it_counts_events_per_hour_by_kind(actors: Actors) -> None:
    log_calls(actors.bot_key, "s1", [("search", "ok")] * 2)
    api_client(actors.bot_key).post("/api/v1/sessions/s1/messages", {"messages": [{"role": "user", "content": "hi"}]}, format="json")
    recorded = {kind: Event.objects.filter(workspace=actors.workspace, kind=kind).count() for kind in ("run", "tool_call", "message")}
    assert recorded == {"run": 1, "tool_call": 2, "message": 1}
    html = overview(actors.owner)
    activity = numbers(html, "numbers-activity")
    assert activity[""] == ["tool_call", "message", "run", "All"]  # the most frequent kind first
    assert len(activity) == 1 + 24  # hours without events are rows too
    newest = list(activity.values())[-1]
    assert newest == ["2", "1", "1", "4"]
    assert all(row == ["0", "0", "0", "0"] for row in list(activity.values())[1:-1])
    assert 'role="img" aria-label="Stacked bars of events per hour in the last 24 hours: 4 in all; tool_call 2, message 1, run 1.' in html
    assert '<rect x="' in html and "of 4 events</title>" in html
    assert 'fill="#f28e2b"' in html  # tool_call's colour, the same everywhere


def test_it_never_shows_another_workspace(actors: Actors) -> None:
    log_calls(actors.spy_key, "g1", [("globex.secret", "error")] * 3)
    api_client(actors.spy_key).post("/api/v1/memories", {"content": "globex plans", "user_id": "g"}, format="json")
    log_calls(actors.bot_key, "s1", [("search", "ok")])
    html = overview(actors.owner)
    assert "globex.secret" not in html and "1</span> tool calls, 0 failed" in html
    assert "0</span> memories" in html and "No memories yet" in html
    assert numbers(html, "numbers-activity")[""] == ["run", "tool_call", "All"]
    assert "Overview of acme" in html and "globex" not in html
    foreign = overview(actors.outsider)
    assert "globex.secret" in foreign and "search" not in foreign
    assert numbers(foreign, "numbers-tools")["globex.secret"][:3] == ["3", "3", "100.0 %"]


def test_it_switches_the_range(actors: Actors) -> None:
    # Events are append-only (a trigger refuses UPDATE): this one is written in the past.
    Event.objects.create(workspace=actors.workspace, kind="episode", summary="Episode recorded.", actor="system", at=timezone.now() - timedelta(days=3))
    day = overview(actors.owner)
    assert "No events in the last 24 hours" in day and '<a href="?range=7d">Look at the last 7 days</a>' in day
    assert '<a href="?range=24h" aria-current="page">Last 24 hours</a>' in day
    week = overview(actors.owner, "?range=7d")
    assert '<a href="?range=7d" aria-current="page">Last 7 days</a>' in week
    activity = numbers(week, "numbers-activity")
    assert activity[""] == ["episode", "All"] and len(activity) == 1 + 28  # quarters of a day
    assert sum(int(row[-1]) for row in list(activity.values())[1:]) == 1
    assert "Events per 6 hours, by kind" in week and "1</span> events in the last 7 days" in week
    assert "No events in the last 24 hours" in overview(actors.owner, "?range=nonsense")


def test_it_guides_an_empty_workspace(db: None) -> None:
    workspace = services.workspace_get_or_create(slug="fresh")
    html = overview(services.operator_get_or_create(username="newbie", workspace=workspace, role=Role.VIEWER))
    assert "Connect your first agent" in html
    assert "No events in the last 24 hours." in html and "Once an agent is connected" in html
    assert "No tool calls in the last 24 hours" in html and "Nothing waits for a decision" in html
    assert "No memories yet" in html and "Nothing removed in the last 24 hours" in html and "Nothing stored yet" in html
    assert "<svg class=\"chart-svg\"" not in html


def test_it_shows_the_requests_waiting_by_age(actors: Actors) -> None:
    agent = api_client(actors.bot_key)
    agent.post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1"}, format="json")
    ids = [
        agent.post("/api/v1/approvals", {"session_id": "s1", "tool": tool, "args": {"n": i}}, format="json").json()["id"]
        for i, tool in enumerate(("payments.send", "mail.send", "db.drop", "shell.run"))
    ]
    Approval.objects.filter(pk=ids[0]).update(created_at=timezone.now() - timedelta(hours=2))
    Approval.objects.filter(pk=ids[1]).update(created_at=timezone.now() - timedelta(days=3))
    approval_decide(membership=actors.owner, approval=Approval.objects.get(pk=ids[2]), decision="approve")
    Approval.objects.filter(pk=ids[3]).update(expires_at=timezone.now() - timedelta(seconds=1))  # no longer decidable
    html = overview(actors.owner)
    ages = numbers(html, "numbers-approvals")
    assert {age: row[0] for age, row in ages.items() if age} == {
        "< 1 min": "0", "1–5 min": "0", "5–15 min": "0", "15–60 min": "0", "1–4 h": "1", "4–24 h": "0", "≥ 1 day": "1",
    }
    oldest = numbers(html, "oldest-approvals")
    assert list(oldest)[1:] == ["mail.send", "payments.send"]
    assert '<a href="/sessions/s1/" hx-disable>s1</a>' in html
    assert "2</span> waiting for a decision, the oldest for 3\xa0days" in html


def test_it_shows_memory_by_type_and_scope(actors: Actors) -> None:
    agent = api_client(actors.bot_key)
    for content, memory_type, scope, data in (
        ("Ann likes tea", "factual", "shared", {"subject": "ann", "predicate": "likes", "object": "tea"}),
        ("Ann drinks coffee", "factual", "agent", {"subject": "ann", "predicate": "drinks", "object": "coffee"}),
        ("Ann likes green tea", "factual", "agent", {"subject": "ann", "predicate": "likes", "object": "green tea"}),  # supersedes
        ("met on Monday", "episodic", "agent", None),
        ("scratch", "working", "agent", None),
        ("how to call", "procedural", "global", {"task": "call Ann", "steps": ["dial"]}),
        ("old note", "note", "agent", None),
    ):
        body = {"content": content, "user_id": "u1", "memory_type": memory_type, "scope": scope, "data": data}
        assert agent.post("/api/v1/memories", body, format="json").status_code == 201
    old = agent.get("/api/v1/memories?memory_type=note").json()["results"][0]["id"]
    MemoryEntry.objects.filter(pk=old).update(created_at=timezone.now() - timedelta(days=2))
    html = overview(actors.teammate)
    by_type = numbers(html, "numbers-memory-type")
    assert by_type[""] == ["Memories", "New in the last 24 hours"]
    # What readers can find: the superseded fact is not counted.
    assert {t: row for t, row in by_type.items() if t} == {
        "note": ["1", "0"], "factual": ["2", "2"], "episodic": ["1", "1"], "semantic": ["0", "0"], "procedural": ["1", "1"],
        "working": ["1", "1"],
    }
    by_scope = numbers(html, "numbers-memory-scope")
    assert {s: row for s, row in by_scope.items() if s} == {"agent": ["5", "4"], "shared": ["0", "0"], "global": ["1", "1"]}
    assert "6</span> memories" in html
    storage = numbers(html, "numbers-storage")
    assert storage["Memory entries"][:2] == ["memory_memoryentry", "7"]  # on disk: the superseded fact too


def test_it_shows_purges_and_retention_removals(actors: Actors) -> None:
    now = timezone.now()
    PurgeRequest.objects.create(
        workspace=actors.workspace, user_hash="a" * 64, status="done", counts={"memory.MemoryEntry": 4, "conversations.Message": 6},
        finished_at=now,
    )
    PurgeRequest.objects.create(workspace=actors.workspace, user_hash="b" * 64, status="failed", finished_at=now)
    PurgeRequest.objects.create(workspace=actors.workspace, user_hash="c" * 64, dry_run=True, status="done", counts={"memory.MemoryEntry": 9})
    PurgeRequest.objects.create(workspace=actors.foreign_workspace, user_hash="d" * 64, status="done", counts={"memory.MemoryEntry": 50}, finished_at=now)
    retention_record(workspace=actors.workspace, counts={"tool_outputs": 3, "memories_expired": 2}, started_at=now)
    retention_record(workspace=actors.workspace, counts={"tool_outputs": 1}, started_at=now - timedelta(days=2))
    html = overview(actors.owner)
    assert "purges 1 done, 0 under way, 1 failed; 1 retention run." in html
    removed = numbers(html, "numbers-removals")
    assert removed == {
        "": ["By purges", "By retention", "All"],
        "Messages": ["6", "0", "6"],
        "Memory entries": ["4", "0", "4"],
        "Raw tool outputs": ["0", "3", "3"],
        "Expired memories": ["0", "2", "2"],
    }
    week = numbers(overview(actors.owner, "?range=7d"), "numbers-removals")
    assert week["Raw tool outputs"] == ["0", "4", "4"]


def test_it_escapes_what_agents_named(actors: Actors) -> None:
    log_calls(actors.bot_key, "s1", [])
    session = session_of(workspace=actors.workspace, session_id="s1")
    hostile = '<img src=x onerror="alert(1)">'
    tool_call_record(session=session, item=ToolCallInput(tool=hostile, args={}, result="x", status="error"), actor="agent:bot")
    html = overview(actors.owner)
    assert "<img src=x" not in html and "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html
    assert " style=" not in html and "<style" not in html  # the CSP allows style sheets only


def test_its_queries_do_not_grow_with_the_data(actors: Actors, django_assert_max_num_queries: object) -> None:
    log_calls(actors.bot_key, "s1", [("search", "ok")])
    api_client(actors.bot_key).post("/api/v1/memories", {"content": "likes tea", "user_id": "u1"}, format="json")
    client = Client()
    client.force_login(actors.owner.user)
    client.get("/")  # sessions and caches warm
    with CaptureQueriesContext(connection) as captured:
        assert client.get("/").status_code == 200
    few = len(captured)  # now: the context reads the connection's log, which the next request clears
    assert few <= MAX_QUERIES

    log_calls(actors.peer_key, "s2", [(f"tool.{i % 7}", "error" if i % 3 else "ok") for i in range(40)])
    agent = api_client(actors.bot_key)
    agent.post("/api/v1/memories/batch", {"items": [{"content": f"fact {i}", "user_id": f"u{i}"} for i in range(30)]}, format="json")
    for i in range(5):
        agent.post("/api/v1/approvals", {"session_id": "s1", "tool": f"pay.{i}", "args": {"n": i}}, format="json")
    retention_record(workspace=actors.workspace, counts={"tool_outputs": 3}, started_at=timezone.now())
    with django_assert_max_num_queries(few):
        html = client.get("/?range=7d").content.decode()
    assert "41</span> tool calls" in html
