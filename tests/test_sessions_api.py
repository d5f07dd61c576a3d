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
