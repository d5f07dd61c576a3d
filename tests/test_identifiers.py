"""Identifiers clients choose follow one pattern (docs/api.md, "Conventions"): letters,
digits and -_.:@, up to 200 characters; anything else is a 400 that writes nothing."""

from __future__ import annotations

import pytest
from django.test import Client

from memoryhub.conversations.models import Session
from memoryhub.plans.models import PlanStep
from memoryhub.tools.models import ToolCall
from tests.conftest import Actors, api_client, assert_error

ODD = ["a/b", "has space", "tab\there", "new\nline", "ünïcode", "semi;colon", "x" * 201, "", " lead"]


@pytest.mark.parametrize("session_id", ODD)
def test_it_refuses_odd_session_ids(actors: Actors, session_id: str) -> None:
    response = api_client(actors.bot_key).post("/api/v1/sessions", {"session_id": session_id, "user_id": "u1"}, format="json")
    assert_error(response, 400, "VALIDATION_ERROR")
    assert not Session.objects.exists()


def test_it_takes_every_allowed_character_and_200_of_them(actors: Actors) -> None:
    bot = api_client(actors.bot_key)
    for session_id in ["user@example.com:run-1_a.b", "x" * 200]:
        assert bot.post("/api/v1/sessions", {"session_id": session_id, "user_id": "u1"}, format="json").status_code == 201
    # …and the console's pages that link to such a session answer.
    client = Client()
    client.force_login(actors.owner.user)
    assert client.get("/sessions/user@example.com:run-1_a.b/").status_code == 200


def test_it_refuses_odd_step_call_and_label_identifiers(actors: Actors) -> None:
    bot = api_client(actors.bot_key)
    bot.post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1"}, format="json")
    plan = {"goal": "g", "steps": [{"step_id": "step one", "description": "d"}]}
    assert_error(bot.put("/api/v1/sessions/s1/plan", plan, format="json"), 400, "VALIDATION_ERROR")
    plan = {"goal": "g", "steps": [{"step_id": "s" * 200, "description": "d"}, {"step_id": "b", "description": "d", "depends_on": ["a/b"]}]}
    assert_error(bot.put("/api/v1/sessions/s1/plan", plan, format="json"), 400, "VALIDATION_ERROR")
    assert not PlanStep.objects.exists()
    assert bot.put("/api/v1/sessions/s1/plan", {"goal": "g", "steps": [{"step_id": "s" * 200, "description": "d"}]}, format="json").status_code == 200
    assert_error(bot.post("/api/v1/sessions/s1/tool-calls", {"tool": "t", "call_id": "call 1"}, format="json"), 400, "VALIDATION_ERROR")
    assert not ToolCall.objects.exists()
    checkpoint = {"expected_version": 0, "state": {}, "label": "before deploy"}
    assert_error(bot.post("/api/v1/sessions/s1/checkpoints", checkpoint, format="json"), 400, "VALIDATION_ERROR")
    assert bot.post("/api/v1/sessions/s1/checkpoints", {**checkpoint, "label": "before-deploy"}, format="json").status_code == 201
    assert_error(bot.post("/api/v1/sessions/s1/branch", {"new_session_id": "s1/alt"}, format="json"), 400, "VALIDATION_ERROR")
