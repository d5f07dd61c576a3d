"""The console's live views over Django's client: Activity lists the workspace's events,
and the stream plans are only for the ASGI layer and only for the workspace's sessions."""

from __future__ import annotations

from django.test import Client

from memoryhub.core import live
from memoryhub.core.models import Membership
from tests.conftest import Actors, api_client


def operator_client(membership: Membership) -> Client:
    client = Client()
    client.force_login(membership.user)
    return client


def test_it_lists_the_workspaces_activity_newest_first(actors: Actors) -> None:
    bot = api_client(actors.bot_key)
    bot.post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1"}, format="json")
    bot.post("/api/v1/sessions/s1/messages", {"role": "user", "content": "hi"}, format="json")
    api_client(actors.spy_key).post("/api/v1/sessions", {"session_id": "globex-chat", "user_id": "u1"}, format="json")
    html = operator_client(actors.teammate).get("/activity/").content.decode()
    assert html.index(">hi</div>") < html.index("Session started")
    # Whole links, not bare ids: a two-letter id turns up by chance in the page's CSRF token.
    assert 'href="/sessions/s1/"' in html and "globex-chat" not in html  # another workspace's
    assert 'sse-connect="/activity/events/?last_event_id=' in html


def test_it_shows_an_empty_state_before_anything_happens(actors: Actors) -> None:
    html = operator_client(actors.owner).get("/activity/").content.decode()
    assert "Nothing has happened yet" in html


def test_it_gives_stream_plans_only_to_the_asgi_layer(actors: Actors) -> None:
    api_client(actors.bot_key).post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1"}, format="json")
    api_client(actors.spy_key).post("/api/v1/sessions", {"session_id": "g1", "user_id": "u1"}, format="json")
    owner = operator_client(actors.owner)
    assert owner.get("/sessions/s1/events/?last_event_id=0").status_code == 400
    assert owner.get("/sessions/s1/events/?last_event_id=0", HTTP_X_MEMORYHUB_STREAM_PLAN="guess").status_code == 400
    token = {"HTTP_X_MEMORYHUB_STREAM_PLAN": live.STREAM_TOKEN}
    plan = owner.get("/sessions/s1/events/?last_event_id=7", **token).json()
    assert (plan["session_id"], plan["after"], plan["format"]) == ("s1", 7, "html")
    assert plan["ends_on"] == [live.login_group(owner.session.session_key), live.membership_group(actors.owner.pk)]
    assert owner.get("/sessions/g1/events/?last_event_id=0", **token).status_code == 404
    assert owner.get("/sessions/s1/events/?last_event_id=soon", **token).status_code == 400
    assert Client().get("/activity/events/?last_event_id=0", **token).status_code == 302  # to the login page
