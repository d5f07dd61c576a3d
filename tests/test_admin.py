from __future__ import annotations

from django.contrib import admin

from memoryhub.core.registry import own_models
from tests.conftest import Actors


def test_it_registers_every_model_we_own() -> None:
    unregistered = [model._meta.label for model in own_models() if not admin.site.is_registered(model)]
    assert unregistered == []


def test_it_shows_agents_to_a_superuser(actors: Actors, admin_client: object) -> None:
    response = admin_client.get("/admin/core/agent/")
    assert response.status_code == 200
    assert b"bot" in response.content


def test_it_never_shows_key_secrets(actors: Actors, admin_client: object) -> None:
    from memoryhub.core.models import AgentKey

    key = AgentKey.objects.get(agent=actors.bot)
    response = admin_client.get(f"/admin/core/agentkey/{key.pk}/change/")
    assert response.status_code == 200
    assert actors.bot_key.encode() not in response.content
    assert admin_client.get("/admin/core/agentkey/add/").status_code == 403


def test_it_keeps_operators_out_of_the_admin(actors: Actors, client: object) -> None:
    client.force_login(actors.owner.user)
    response = client.get("/admin/core/agent/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]
