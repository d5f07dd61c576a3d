from __future__ import annotations

from memoryhub.conversations.models import Message, MessageRevision, Session
from memoryhub.timeline.models import Event
from tests.conftest import Actors, api_client, assert_error

CALL = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}


def seed(actors: Actors) -> object:
    client = api_client(actors.bot_key)
    client.post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1"}, format="json")
    client.post("/api/v1/sessions/s1/messages", {"messages": [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "", "tool_calls": [CALL]},
        {"role": "tool", "content": "result", "tool_call_id": "call_1"},
        {"role": "assistant", "content": "done"},
    ]}, format="json")
    return client


def test_it_edits_and_keeps_the_old_text(actors: Actors) -> None:
    client = seed(actors)
    response = client.patch("/api/v1/sessions/s1/messages/1", {"content": "first, corrected"}, format="json")
    assert response.status_code == 200
    assert (response.json()["content"], response.json()["revision"]) == ("first, corrected", 2)
    assert MessageRevision.objects.get().content == "first"
    assert client.get("/api/v1/sessions/s1/messages").json()["results"][0]["content"] == "first, corrected"
    assert Event.objects.filter(kind="edit", session_id="s1").count() == 1


def test_it_refuses_to_edit_tool_calls_and_unknown_messages(actors: Actors) -> None:
    client = seed(actors)
    assert_error(client.patch("/api/v1/sessions/s1/messages/2", {"content": "x"}, format="json"), 409, "MESSAGE_NOT_EDITABLE")
    assert_error(client.patch("/api/v1/sessions/s1/messages/99", {"content": "x"}, format="json"), 404, "MESSAGE_NOT_FOUND")
    assert_error(client.patch("/api/v1/sessions/s1/messages/1", {"content": 3}, format="json"), 400, "VALIDATION_ERROR")
    assert_error(api_client(actors.peer_key).patch("/api/v1/sessions/s1/messages/1", {"content": "x"}, format="json"), 404, "SESSION_NOT_FOUND")
    assert MessageRevision.objects.count() == 0


def test_it_branches_an_independent_copy(actors: Actors) -> None:
    client = seed(actors)
    response = client.post("/api/v1/sessions/s1/branch", {"new_session_id": "s1-alt", "upto_seq": 3, "label": "try-again"}, format="json")
    assert response.status_code == 201
    assert (response.json()["parent"], response.json()["parent_seq"]) == ("s1", 3)
    branch = client.get("/api/v1/sessions/s1-alt/messages").json()["results"]
    assert [m["seq"] for m in branch] == [1, 2, 3]
    # The two evolve independently.
    assert client.post("/api/v1/sessions/s1-alt/messages", {"role": "assistant", "content": "other answer"}, format="json").json()["seq"] == 4
    client.patch("/api/v1/sessions/s1-alt/messages/1", {"content": "changed in the branch"}, format="json")
    original = client.get("/api/v1/sessions/s1/messages").json()["results"]
    assert original[0]["content"] == "first" and original[3]["content"] == "done"
    assert set(Event.objects.filter(kind="branch").values_list("session_id", flat=True)) == {"s1", "s1-alt"}


def test_it_refuses_bad_branches(actors: Actors) -> None:
    client = seed(actors)
    assert_error(client.post("/api/v1/sessions/s1/branch", {"new_session_id": "s1"}, format="json"), 409, "SESSION_EXISTS")
    assert_error(client.post("/api/v1/sessions/s1/branch", {"new_session_id": "b", "upto_seq": 99}, format="json"), 400, "INVALID_SEQ")
    assert_error(client.post("/api/v1/sessions/s1/branch", {"upto_seq": 1}, format="json"), 400, "VALIDATION_ERROR")
    assert_error(api_client(actors.spy_key).post("/api/v1/sessions/s1/branch", {"new_session_id": "b"}, format="json"), 404, "SESSION_NOT_FOUND")
    assert Session.objects.count() == 1 and Message.objects.count() == 4
