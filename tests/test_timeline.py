from __future__ import annotations

import pytest
from django.db import DatabaseError, transaction

from memoryhub.core.erasure import purging
from memoryhub.core.models import Workspace
from memoryhub.timeline.models import Event
from memoryhub.timeline.services import event_record
from tests.conftest import Actors


def test_it_refuses_to_update_or_delete_events(actors: Actors) -> None:
    event = event_record(workspace=actors.workspace, kind="run", summary="started")
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        Event.objects.filter(pk=event.pk).update(summary="rewritten")
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        Event.objects.filter(pk=event.pk).delete()
    assert Event.objects.get(pk=event.pk).summary == "started"


def test_it_allows_deletion_inside_a_purge(actors: Actors) -> None:
    event = event_record(workspace=actors.workspace, kind="run", summary="started", user_id="u1")
    with purging():
        Event.objects.filter(pk=event.pk).delete()
    assert not Event.objects.filter(pk=event.pk).exists()
    # The permission ends with the purge's transaction.
    other = event_record(workspace=actors.workspace, kind="run", summary="again")
    with pytest.raises(DatabaseError), transaction.atomic():
        Event.objects.filter(pk=other.pk).delete()


def test_deleting_a_workspace_in_the_admin_takes_its_timeline(actors: Actors, admin_client: object) -> None:
    event_record(workspace=actors.foreign_workspace, kind="run", summary="globex event")
    response = admin_client.post(f"/admin/core/workspace/{actors.foreign_workspace.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Workspace.objects.filter(slug="globex").exists()
    assert not Event.objects.filter(summary="globex event").exists()
