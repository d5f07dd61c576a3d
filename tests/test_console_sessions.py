from __future__ import annotations

from django.test import Client

from tests.conftest import Actors, api_client

CALL = {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}


def seed(actors: Actors, key: str | None = None, session_id: str = "chat-1") -> None:
    client = api_client(key or actors.bot_key)
    client.post("/api/v1/sessions", {"session_id": session_id, "user_id": "u1"}, format="json")
    client.post(f"/api/v1/sessions/{session_id}/messages", {"messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "<img src=x onerror=alert(1)> hello", "pinned": True},
        {"role": "assistant", "content": "", "tool_calls": [CALL]},
        {"role": "tool", "content": "found it", "tool_call_id": "call_1"},
    ]}, format="json")


def test_it_lists_the_workspaces_sessions(actors: Actors, client: Client) -> None:
    seed(actors)
    seed(actors, actors.spy_key, "globex-chat")
    client.force_login(actors.teammate.user)
    html = client.get("/sessions/").content.decode()
    assert "chat-1" in html and "globex-chat" not in html
    assert "chat-1" in client.get("/sessions/", {"q": "u1"}).content.decode()
    assert "No session matches" in client.get("/sessions/", {"q": "zzz"}).content.decode()


def test_it_shows_a_conversation_as_text(actors: Actors, client: Client) -> None:
    seed(actors)
    api_client(actors.bot_key).patch("/api/v1/sessions/chat-1/messages/2", {"content": "edited <b>text</b>"}, format="json")
    api_client(actors.bot_key).post("/api/v1/sessions/chat-1/branch", {"new_session_id": "chat-1b", "upto_seq": 2}, format="json")
    client.force_login(actors.teammate.user)
    html = client.get("/sessions/chat-1/conversation/").content.decode()
    assert "<b>text</b>" not in html and "edited &lt;b&gt;text&lt;/b&gt;" in html
    assert "role-tool" in html and "answers call_1" in html and "1 tool call" in html
    assert "pinned" in html and "edited ×1" in html
    family = client.get("/sessions/chat-1/family/").content.decode()
    assert "chat-1b" in family  # the branch
    assert "<img src=x" not in family and "&lt;img src=x" in family  # the revision before the edit
    timeline = client.get("/sessions/chat-1/").content.decode()
    assert "<b>text</b>" not in timeline and "edited &lt;b&gt;text&lt;/b&gt;" in timeline and "edited, revision 2" in timeline


def test_it_hides_sessions_of_another_workspace(actors: Actors, client: Client) -> None:
    seed(actors, actors.spy_key, "globex-chat")
    client.force_login(actors.owner.user)
    assert client.get("/sessions/globex-chat/").status_code == 404


def test_it_guides_an_empty_workspace(actors: Actors, client: Client) -> None:
    client.force_login(actors.owner.user)
    assert "No sessions yet" in client.get("/sessions/").content.decode()


def test_it_shows_the_summary_chain(actors: Actors, client: Client) -> None:
    seed(actors)
    api_client(actors.bot_key).post("/api/v1/sessions/chat-1/summarize")
    client.force_login(actors.teammate.user)
    html = client.get("/sessions/chat-1/summaries/").content.decode()
    assert "Link 1: messages #1–#4" in html and "summarised up to #4" in html


def test_it_shows_the_plan(actors: Actors, client: Client) -> None:
    seed(actors)
    plan = {"goal": "Find a flight", "steps": [{"step_id": "search", "description": "Search <flights>"}, {"step_id": "book", "description": "Book", "depends_on": ["search"]}]}
    api_client(actors.bot_key).put("/api/v1/sessions/chat-1/plan", plan, format="json")
    api_client(actors.bot_key).patch("/api/v1/sessions/chat-1/plan/steps/search", {"status": "running"}, format="json")
    client.force_login(actors.teammate.user)
    html = client.get("/sessions/chat-1/plan/").content.decode()
    assert "Find a flight" in html and "Search &lt;flights&gt;" in html and "after search" in html
    assert 'class="step-running"' in html


def test_it_serves_a_tool_output_only_inside_the_workspace(actors: Actors, client: Client) -> None:
    seed(actors)
    api_client(actors.bot_key).post("/api/v1/sessions/chat-1/tool-calls", {"call_id": "c9", "tool": "t", "result": "<b>raw</b>"}, format="json")
    client.force_login(actors.teammate.user)
    html = client.get("/sessions/chat-1/tool-calls/c9/result/", HTTP_HX_REQUEST="true").content.decode()
    assert html.startswith('<pre class="tool-output"') and "&lt;b&gt;raw&lt;/b&gt;" in html
    client.force_login(actors.outsider.user)
    assert client.get("/sessions/chat-1/tool-calls/c9/result/").status_code == 404
