"""Imports and tenancy (issue 53): whatever an archive names — another workspace's memory
ids, its sessions' ids, its plans, episodes and rules by their ids — an import into one
workspace leaves every row of another exactly as it was, whether the archive is taken for
a restore or for a copy."""

from __future__ import annotations

from typing import Any

import pytest
from django.apps import apps
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import models

from memoryhub.core.registry import user_models
from tests.conftest import Actors, api_client, poll, remember
from tests.test_imports_api import _rewritten, archive_kinds, exported


def _rows_of(workspace_id: int) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the workspace, in every model that holds memory, as it is stored."""
    found = {}
    for model in user_models():
        fields = [f.attname for f in model._meta.concrete_fields if not isinstance(f, models.BinaryField)]
        found[model._meta.label] = list(model._default_manager.filter(workspace_id=workspace_id).order_by("pk").values_list(*fields))
    return found


def _acme_with_every_kind(actors: Actors) -> None:
    bot, owner = api_client(actors.bot_key), api_client(actors.owner_key)
    bot.post("/api/v1/sessions", {"session_id": "s", "user_id": "ann"}, format="json")
    bot.post("/api/v1/sessions/s/messages", {"role": "user", "content": "Book the flight."}, format="json")
    bot.put("/api/v1/sessions/s/plan", {"goal": "Trip", "steps": [{"step_id": "fly", "description": "Fly"}]}, format="json")
    bot.post("/api/v1/sessions/s/tool-calls", {"call_id": "c1", "tool": "book", "result": "booked"}, format="json")
    bot.post("/api/v1/sessions/s/checkpoints", {"expected_version": 0, "state": {"step": "fly"}}, format="json")
    episode = bot.post("/api/v1/episodes", {"user_id": "ann", "session_id": "s", "task": "Book", "outcome": "success",
                                            "narrative": "Booked."}, format="json").json()
    first = remember(actors.bot_key, "Ann lives in Oslo.", user_id="ann", source={"episode_id": episode["id"]})
    bot.patch(f"/api/v1/memories/{first['id']}", {"content": "Ann lives in Bergen."}, format="json")
    remember(actors.bot_key, "Ann flies on Friday.", user_id="ann")
    asked = bot.post("/api/v1/approvals", {"session_id": "s", "tool": "pay", "args": {"eur": 40}}, format="json").json()
    owner.post(f"/api/v1/approvals/{asked['id']}/decision", {"decision": "approve", "remember": "exact"}, format="json")


def _pointing_at_acme(acme: dict[str, list[dict[str, Any]]], globex: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """globex's own records, each naming acme's rows where it names anything by id."""
    memories = [m["id"] for m in acme["memories"]]
    return {
        "memories": [{**m, "id": memories[0], "superseded_by": memories[1], "source_episode_id": acme["episodes"][0]["id"]}
                     for m in globex["memories"]],
        "memory_revisions": [{**r, "entry": memories[0], "revision": 9, "content": "INJECTED"} for r in acme["memory_revisions"]],
        "plan_steps": [{**step, "plan": acme["plans"][0]["id"]} for step in acme["plan_steps"]],
        "episodes": [{**e, "memory": memories[0]} for e in acme["episodes"]],
        "approvals": [{**a, "rule": acme["approval_rules"][0]["id"]} for a in acme["approvals"]],
    }


@pytest.mark.parametrize("archive", ["acme's own export", "globex's export naming acme's rows"])
def test_an_import_into_one_workspace_changes_no_row_of_another(actors: Actors, transactional_db: None, archive: str) -> None:
    _acme_with_every_kind(actors)
    remember(actors.spy_key, "Bo likes tea.", user_id="bo")
    acme_archive = exported(actors.owner_key)
    before = _rows_of(actors.workspace.pk)
    assert all(before[label] for label in ("memory.MemoryEntry", "memory.MemoryRevision", "plans.Plan", "tools.ToolCall",
                                              "checkpoints.Checkpoint", "episodes.Episode", "approvals.Approval")), before
    if archive == "acme's own export":
        # Sealed for acme, not for globex: a copy there, whatever ids it holds.
        data = acme_archive
    else:
        globex_archive = exported(actors.outsider_key)
        data = _rewritten(globex_archive, _pointing_at_acme(archive_kinds(acme_archive), archive_kinds(globex_archive)))
    response = api_client(actors.outsider_key).post(
        "/api/v1/imports", {"file": SimpleUploadedFile("archive.zip", data), "format": "memoryhub", "store": "default", "agent": "spy"},
        format="multipart",
    )
    assert response.status_code == 202, response.content[:500]
    done = poll(lambda: (body := api_client(actors.outsider_key).get(f"/api/v1/imports/{response.json()['id']}").json())["status"]
                in ("done", "failed") and body)
    assert done and done["status"] == "done", done
    assert _rows_of(actors.workspace.pk) == before
    assert apps.get_model("memory", "MemoryEntry").objects.filter(workspace=actors.foreign_workspace).exists()
