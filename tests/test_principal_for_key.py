"""principal_for_key: who an API key stands for, checked before every request."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from memoryhub.core import services
from memoryhub.core.models import AgentKey
from memoryhub.core.selectors import principal_for_key
from tests.conftest import Actors


def test_it_finds_the_agent_its_workspace_and_its_stores_in_name_order(actors: Actors) -> None:
    zeta = services.store_get_or_create(workspace=actors.workspace, name="zeta")
    alpha = services.store_get_or_create(workspace=actors.workspace, name="alpha")
    agent = services.agent_get_or_create(workspace=actors.workspace, name="sorter", stores=[zeta, alpha])
    _, key = services.agent_key_issue(agent=agent)

    principal = principal_for_key(key)

    assert principal is not None and principal.is_agent
    assert principal.agent == agent and principal.workspace == actors.workspace
    assert principal.agent.workspace.slug == "acme"
    assert [store.name for store in principal.stores] == ["alpha", "zeta"]
    assert [store.pk for store in principal.stores] == [alpha.pk, zeta.pk]
    assert principal.stores[0].created_at == alpha.created_at  # loaded on access


def test_it_gives_an_agent_without_stores_none(actors: Actors) -> None:
    agent = services.agent_get_or_create(workspace=actors.workspace, name="storeless")
    _, key = services.agent_key_issue(agent=agent)

    principal = principal_for_key(key)

    assert principal is not None and principal.stores == []


def test_it_refuses_a_revoked_key(actors: Actors) -> None:
    AgentKey.objects.filter(agent=actors.bot).update(revoked_at=timezone.now())

    assert principal_for_key(actors.bot_key) is None
    assert principal_for_key(actors.peer_key) is not None  # the teammate agent's key still works


def test_it_refuses_an_expired_key(actors: Actors) -> None:
    AgentKey.objects.filter(agent=actors.bot).update(expires_at=timezone.now() - timedelta(seconds=1))

    assert principal_for_key(actors.bot_key) is None


def test_it_refuses_a_key_whose_secret_part_is_wrong(actors: Actors) -> None:
    forged = actors.bot_key[:-4] + ("aaaa" if not actors.bot_key.endswith("aaaa") else "bbbb")

    assert principal_for_key(forged) is None
    assert principal_for_key("not a key") is None


def test_it_still_finds_operators_by_their_keys(actors: Actors) -> None:
    principal = principal_for_key(actors.owner_key)

    assert principal is not None and principal.is_operator and principal.workspace == actors.workspace
    assert principal.role == "admin"


def test_it_records_when_a_key_was_last_used(actors: Actors) -> None:
    AgentKey.objects.filter(agent=actors.bot).update(last_used_at=None)

    principal_for_key(actors.bot_key)

    assert AgentKey.objects.get(agent=actors.bot).last_used_at is not None
