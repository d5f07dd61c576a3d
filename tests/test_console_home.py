from __future__ import annotations

from django.test import Client

from memoryhub.core import services
from memoryhub.core.models import Role
from tests.conftest import Actors


def test_it_shows_the_workspace_overview(actors: Actors, client: Client) -> None:
    client.force_login(actors.teammate.user)
    html = client.get("/").content.decode()
    assert "Overview of acme" in html
    assert "all checks pass" in html
    assert "globex" not in html


def test_it_guides_a_workspace_without_agents(db: None, client: Client) -> None:
    workspace = services.workspace_get_or_create(slug="fresh")
    membership = services.operator_get_or_create(username="newbie", workspace=workspace, role=Role.ADMIN)
    client.force_login(membership.user)
    html = client.get("/").content.decode()
    assert "Connect your first agent" in html
    assert "issue_key --workspace fresh" in html


def test_it_switches_only_to_workspaces_of_the_operator(actors: Actors, client: Client) -> None:
    services.operator_get_or_create(username="owner", workspace=services.workspace_get_or_create(slug="initech"), role=Role.VIEWER)
    client.force_login(actors.owner.user)
    initech = actors.owner.user.memberships.get(workspace__slug="initech").workspace
    assert client.post("/workspace/", {"workspace": initech.pk}).status_code == 302
    assert "Overview of initech" in client.get("/").content.decode()
    assert client.post("/workspace/", {"workspace": actors.foreign_workspace.pk}).status_code == 403
    assert "Overview of initech" in client.get("/").content.decode()
