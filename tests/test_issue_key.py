from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memoryhub.core.models import Agent, Membership, Store, Workspace
from tests.conftest import api_client


def issue_key(*args: str) -> str:
    out = StringIO()
    call_command("issue_key", *args, stdout=out, stderr=StringIO())
    lines = out.getvalue().splitlines()
    assert lines, "nothing printed"
    return lines[-1]


def test_it_creates_what_is_missing_and_prints_an_agent_key(db: None) -> None:
    key = issue_key("--workspace", "acme", "--store", "notes", "--agent", "bot")
    assert Workspace.objects.filter(slug="acme").exists()
    assert Store.objects.filter(workspace__slug="acme", name="notes").exists()
    me = api_client(key).get("/api/v1/me").json()
    assert me == {**me, "kind": "agent", "workspace": "acme", "agent": "bot", "stores": ["notes"]}


def test_it_prints_the_key_alone_on_the_last_line(db: None) -> None:
    key = issue_key("--workspace", "acme", "--store", "notes", "--agent", "bot")
    assert key.startswith("mha_") and " " not in key


def test_it_reuses_existing_objects_and_adds_stores(db: None) -> None:
    first = issue_key("--workspace", "acme", "--store", "notes", "--agent", "bot")
    second = issue_key("--workspace", "acme", "--store", "facts", "--agent", "bot")
    assert first != second
    assert Agent.objects.count() == 1
    assert api_client(first).get("/api/v1/me").json()["stores"] == ["facts", "notes"]


def test_it_issues_an_operator_key_with_a_role(db: None) -> None:
    key = issue_key("--operator", "carol", "--role", "compliance", "--workspace", "acme")
    me = api_client(key).get("/api/v1/me").json()
    assert (me["kind"], me["operator"], me["role"], me["workspace"]) == ("operator", "carol", "compliance", "acme")


def test_it_defaults_operators_to_viewer_in_the_only_workspace(db: None) -> None:
    issue_key("--workspace", "acme", "--store", "notes", "--agent", "bot")
    key = issue_key("--operator", "dave")
    me = api_client(key).get("/api/v1/me").json()
    assert (me["role"], me["workspace"]) == ("viewer", "acme")


def test_it_changes_the_role_of_an_existing_operator(db: None) -> None:
    issue_key("--operator", "erin", "--workspace", "acme")
    issue_key("--operator", "erin", "--workspace", "acme", "--role", "approver")
    assert Membership.objects.get(user__username="erin").role == "approver"


def test_it_creates_operators_without_a_usable_password(db: None) -> None:
    issue_key("--operator", "frank", "--workspace", "acme")
    assert not Membership.objects.get(user__username="frank").user.has_usable_password()


def test_it_explains_missing_arguments(db: None) -> None:
    with pytest.raises(CommandError, match="--store"):
        issue_key("--workspace", "acme", "--agent", "bot")
    assert not Workspace.objects.exists()


def test_it_refuses_bad_names_and_roles(db: None) -> None:
    with pytest.raises(CommandError, match="workspace"):
        issue_key("--workspace", "bad name", "--store", "s", "--agent", "a")
    with pytest.raises(CommandError):
        issue_key("--operator", "gina", "--role", "root")
    assert not Workspace.objects.exists()
