from __future__ import annotations

from memoryhub.conversations.models import Session
from memoryhub.timeline.models import Event
from tests.conftest import Actors, api_client, assert_error


def start(key: str, session_id: str = "s1", user_id: str = "u1", **extra: object) -> object:
    return api_client(key).post("/api/v1/sessions", {"session_id": session_id, "user_id": user_id, **extra}, format="json")


def test_it_starts_a_session(actors: Actors) -> None:
    response = start(actors.bot_key, metadata={"channel": "web"})
    assert response.status_code == 201
    body = response.json()
    assert (body["session_id"], body["user_id"], body["agent"], body["metadata"]) == ("s1", "u1", "bot", {"channel": "web"})
    assert body["counts"]["messages"] == 0
    assert Event.objects.filter(kind="run", session_id="s1").exists()


def test_it_answers_200_for_the_same_session_again(actors: Actors) -> None:
    start(actors.bot_key)
    again = start(actors.bot_key)
    assert again.status_code == 200
    assert Session.objects.count() == 1


def test_it_answers_409_for_another_user_or_agent(actors: Actors) -> None:
    start(actors.bot_key)
    assert_error(start(actors.bot_key, user_id="u2"), 409, "SESSION_USER_MISMATCH")
    assert_error(start(actors.peer_key), 409, "SESSION_ID_TAKEN")
    # Another agent learns nothing of the session's end user: the same answer for any user_id.
    taken = assert_error(start(actors.peer_key, user_id="u2"), 409, "SESSION_ID_TAKEN")
    assert "user" not in taken["message"]
    assert Session.objects.get().user_id == "u1"


def test_it_keeps_session_ids_per_workspace(actors: Actors) -> None:
    start(actors.bot_key)
    assert start(actors.spy_key).status_code == 201
    assert Session.objects.count() == 2


def test_it_shows_a_session_to_its_agent_and_operators_only(actors: Actors) -> None:
    start(actors.bot_key)
    assert api_client(actors.bot_key).get("/api/v1/sessions/s1").status_code == 200
    assert api_client(actors.teammate_key).get("/api/v1/sessions/s1").status_code == 200
    assert_error(api_client(actors.peer_key).get("/api/v1/sessions/s1"), 404, "SESSION_NOT_FOUND")
    assert_error(api_client(actors.spy_key).get("/api/v1/sessions/s1"), 404, "SESSION_NOT_FOUND")
    assert_error(api_client(actors.outsider_key).get("/api/v1/sessions/s1"), 404, "SESSION_NOT_FOUND")


def test_it_refuses_bad_input(actors: Actors) -> None:
    for body in ({"session_id": "s1"}, {"session_id": "", "user_id": "u1"}, {"session_id": 5, "user_id": "u1"},
                 {"session_id": "s1", "user_id": "u1", "colour": "red"}, {"session_id": "s1", "user_id": "u1", "metadata": []}):
        assert_error(api_client(actors.bot_key).post("/api/v1/sessions", body, format="json"), 400, "VALIDATION_ERROR")
    assert_error(start(actors.owner_key), 403, "AGENT_KEY_REQUIRED")
    assert Session.objects.count() == 0


# --- state, lists, deletion (what a framework's session service needs: Google ADK's) ----------


def test_it_keeps_a_new_sessions_state_and_refuses_an_old_one_when_asked(actors: Actors) -> None:
    created = start(actors.bot_key, state={"cart": {"items": 2}, "flag": None})
    assert created.status_code == 201 and created.json()["state"] == {"cart": {"items": 2}, "flag": None}
    # The same session again keeps its own state; with on_exists=error it is a conflict.
    again = start(actors.bot_key, state={"cart": {}})
    assert again.status_code == 200 and again.json()["state"] == {"cart": {"items": 2}, "flag": None}
    assert_error(start(actors.bot_key, on_exists="error"), 409, "SESSION_EXISTS")
    # Ownership still comes first.
    assert_error(start(actors.peer_key, on_exists="error"), 409, "SESSION_ID_TAKEN")
    assert_error(start(actors.bot_key, user_id="u2", on_exists="error"), 409, "SESSION_USER_MISMATCH")
    assert_error(start(actors.bot_key, session_id="s2", on_exists="maybe"), 400, "VALIDATION_ERROR")
    assert_error(start(actors.bot_key, session_id="s2", state=[1]), 400, "VALIDATION_ERROR")


def test_it_sets_keys_of_the_state_and_metadata_and_keeps_the_others(actors: Actors) -> None:
    start(actors.bot_key, metadata={"app": "shop", "channel": "web"}, state={"profile": {"name": "ada", "role": "admin"}, "flag": True, "n": 1})
    bot = api_client(actors.bot_key)
    patched = bot.patch("/api/v1/sessions/s1", {"state": {"profile": {"name": "bob"}, "flag": None, "new": [1, "two"]},
                                                "metadata": {"channel": "app"}}, format="json")
    assert patched.status_code == 200
    # An object replaces the old one (no deep merge); null is kept as a value; other keys stay.
    assert patched.json()["state"] == {"profile": {"name": "bob"}, "flag": None, "n": 1, "new": [1, "two"]}
    assert patched.json()["metadata"] == {"app": "shop", "channel": "app"}
    assert bot.get("/api/v1/sessions/s1").json()["state"] == patched.json()["state"]
    assert bot.patch("/api/v1/sessions/s1", {}, format="json").json()["state"] == patched.json()["state"]
    for body in ({"state": []}, {"state": {"a": 1}, "colour": "red"}, {"metadata": "x"}):
        assert_error(bot.patch("/api/v1/sessions/s1", body, format="json"), 400, "VALIDATION_ERROR")
    # Agents write; an operator reads; another agent or workspace does not see it.
    assert_error(api_client(actors.owner_key).patch("/api/v1/sessions/s1", {"state": {"n": 2}}, format="json"), 403, "AGENT_KEY_REQUIRED")
    assert_error(api_client(actors.peer_key).patch("/api/v1/sessions/s1", {"state": {"n": 2}}, format="json"), 404, "SESSION_NOT_FOUND")
    assert_error(api_client(actors.spy_key).patch("/api/v1/sessions/s1", {"state": {"n": 2}}, format="json"), 404, "SESSION_NOT_FOUND")
    assert Session.objects.get().state["n"] == 1


def test_it_refuses_a_state_beyond_its_limit_and_changes_nothing(actors: Actors, settings: object) -> None:
    settings.MEMORYHUB_MAX_ITEM_BYTES = 1000
    start(actors.bot_key, state={"small": 1})
    bot = api_client(actors.bot_key)
    refused = assert_error(bot.patch("/api/v1/sessions/s1", {"state": {"big": "x" * 2000}}, format="json"), 413, "STATE_TOO_LARGE")
    assert refused["details"] == {"limit_bytes": 1000}
    assert_error(start(actors.bot_key, session_id="s2", state={"big": "x" * 2000}), 413, "STATE_TOO_LARGE")
    url = "/api/v1/sessions/s1/messages"
    assert_error(bot.post(url, {"messages": [{"role": "user", "content": "hi"}], "session": {"state": {"big": "x" * 2000}}}, format="json"),
                 413, "STATE_TOO_LARGE")
    # All or nothing: the message went with the state.
    assert bot.get(url).json()["results"] == [] and Session.objects.get().state == {"small": 1}
    assert Session.objects.count() == 1


def test_an_append_sets_the_state_and_metadata_in_its_own_transaction(actors: Actors) -> None:
    start(actors.bot_key, metadata={"app": "shop"})
    bot = api_client(actors.bot_key)
    url = "/api/v1/sessions/s1/messages"
    appended = bot.post(url, {"messages": [{"role": "user", "content": "I'm Ann", "item": {"author": "user", "id": "e1"}}],
                              "session": {"state": {"name": "Ann"}, "metadata": {"last_update_time": 1700000000.5}}}, format="json")
    assert appended.status_code == 201 and [m["seq"] for m in appended.json()["messages"]] == [1]
    session = bot.get("/api/v1/sessions/s1").json()
    assert session["state"] == {"name": "Ann"} and session["metadata"] == {"app": "shop", "last_update_time": 1700000000.5}
    # A refused message leaves the state as it was.
    orphan = {"role": "tool", "content": "x", "tool_call_id": "nope"}
    assert_error(bot.post(url, {"messages": [orphan], "session": {"state": {"name": "Bob"}}}, format="json"), 400, "ORPHAN_TOOL_RESULT")
    assert bot.get("/api/v1/sessions/s1").json()["state"] == {"name": "Ann"}
    assert_error(bot.post(url, {"messages": [{"role": "user", "content": "x"}], "session": {"colour": 1}}, format="json"), 400, "VALIDATION_ERROR")


def test_it_lists_the_callers_sessions_by_user_and_metadata_newest_first(actors: Actors) -> None:
    start(actors.bot_key, session_id="a1", user_id="ann", metadata={"app": "shop", "kind": "chat"})
    start(actors.bot_key, session_id="a2", user_id="ann", metadata={"app": "bank"})
    start(actors.bot_key, session_id="b1", user_id="bob", metadata={"app": "shop"})
    start(actors.peer_key, session_id="p1", user_id="ann", metadata={"app": "shop"})
    start(actors.spy_key, session_id="x1", user_id="ann", metadata={"app": "shop"})

    def listed(key: str, query: str = "") -> list[str]:
        response = api_client(key).get(f"/api/v1/sessions{query}")
        assert response.status_code == 200, response.content
        return [s["session_id"] for s in response.json()["results"]]

    assert listed(actors.bot_key) == ["b1", "a2", "a1"]  # an agent's own, newest first
    assert listed(actors.bot_key, "?user_id=ann") == ["a2", "a1"]
    assert listed(actors.bot_key, "?metadata.app=shop") == ["b1", "a1"]
    assert listed(actors.bot_key, "?metadata.app=shop&metadata.kind=chat&user_id=ann") == ["a1"]
    assert listed(actors.bot_key, "?metadata.app=none") == []
    assert listed(actors.teammate_key, "?metadata.app=shop") == ["p1", "b1", "a1"]  # an operator: the workspace's
    assert listed(actors.spy_key) == ["x1"] and listed(actors.outsider_key) == ["x1"]
    first = api_client(actors.bot_key).get("/api/v1/sessions?limit=2").json()
    assert [s["session_id"] for s in first["results"]] == ["b1", "a2"] and first["next"]
    rest = api_client(actors.bot_key).get(f"/api/v1/sessions?limit=2&cursor={first['next']}").json()
    assert [s["session_id"] for s in rest["results"]] == ["a1"] and rest["next"] is None
    assert_error(api_client(actors.bot_key).get("/api/v1/sessions?colour=red"), 400, "VALIDATION_ERROR")
    assert_error(api_client(actors.bot_key).get("/api/v1/sessions?cursor=nonsense"), 400, "INVALID_CURSOR")


def test_it_deletes_a_session_with_everything_in_it_audited_and_on_the_feed(actors: Actors) -> None:
    from memoryhub.conversations.models import Message
    from memoryhub.core.models import AuditEntry

    start(actors.bot_key, state={"k": "v"})
    bot = api_client(actors.bot_key)
    bot.post("/api/v1/sessions/s1/messages", {"messages": [{"role": "user", "content": "secret"}, {"role": "assistant", "content": "ok"}]}, format="json")
    bot.put("/api/v1/sessions/s1/plan", {"goal": "g", "steps": [{"step_id": "a", "description": "d"}]}, format="json")
    # Agents delete their own; operators, other agents and workspaces cannot.
    assert_error(api_client(actors.owner_key).delete("/api/v1/sessions/s1"), 403, "AGENT_KEY_REQUIRED")
    assert_error(api_client(actors.peer_key).delete("/api/v1/sessions/s1"), 404, "SESSION_NOT_FOUND")
    assert_error(api_client(actors.spy_key).delete("/api/v1/sessions/s1"), 404, "SESSION_NOT_FOUND")
    deleted = bot.delete("/api/v1/sessions/s1")
    assert deleted.status_code == 204
    assert not Session.objects.exists() and not Message.objects.exists()
    assert_error(bot.get("/api/v1/sessions/s1"), 404, "SESSION_NOT_FOUND")
    assert_error(bot.delete("/api/v1/sessions/s1"), 404, "SESSION_NOT_FOUND")
    # On the feed and in the audit log, without the content; the session's timeline stays.
    event = Event.objects.get(session_id="s1", ref__type="session_deleted")
    assert (event.kind, event.actor, event.ref["messages"]) == ("run", "agent:bot", 2) and "secret" not in event.summary
    audit = AuditEntry.objects.get(action="session_deleted")
    assert (audit.actor, audit.target, audit.details) == ("agent:bot", "session:s1", {"messages": 2})
    assert Event.objects.filter(session_id="s1", kind="message").count() == 2
    # The id is free again: a new session starts with a state of its own.
    assert start(actors.bot_key).json()["state"] == {}


def test_it_keeps_a_session_whose_approval_waits_for_a_person(actors: Actors) -> None:
    start(actors.bot_key)
    bot = api_client(actors.bot_key)
    approval = bot.post("/api/v1/approvals", {"session_id": "s1", "tool": "refund", "args": {"amount": 5}}, format="json").json()
    assert_error(bot.delete("/api/v1/sessions/s1"), 409, "SESSION_HAS_PENDING_APPROVAL")
    assert Session.objects.exists()
    api_client(actors.owner_key).post(f"/api/v1/approvals/{approval['id']}/decision", {"decision": "reject"}, format="json")
    assert bot.delete("/api/v1/sessions/s1").status_code == 204
