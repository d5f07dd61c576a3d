"""Every model that could hold end-user data carries user_id, or says why it can't."""

from __future__ import annotations

from django.core import checks
from django.db import models
from django.test.utils import isolate_apps

from memoryhub.core.checks import models_missing_user_id, user_id_coverage
from memoryhub.core.models import MemoryRecord
from memoryhub.core.registry import own_models


def test_it_finds_no_uncovered_model_in_the_project() -> None:
    missing = models_missing_user_id(own_models())
    assert missing == [], f"models without user_id or a written exemption: {[m._meta.label for m in missing]}"


def test_it_walks_every_model_we_own() -> None:
    labels = {model._meta.label for model in own_models()}
    assert {"core.Workspace", "core.Agent", "core.AgentKey", "core.OperatorKey"} <= labels
    assert not any(label.startswith(("auth.", "axes.", "sessions.")) for label in labels)


def test_it_runs_as_a_system_check() -> None:
    # Only our check: Django's own model checks ask the database server for its
    # version (GeneratedField support), which a test without the database may not.
    registered = checks.registry.registry.get_checks()
    assert user_id_coverage in registered
    assert user_id_coverage(app_configs=None) == []


@isolate_apps("memoryhub.core")
def test_it_flags_a_model_without_user_id() -> None:
    class Scratchpad(models.Model):
        text = models.TextField()

        class Meta:
            app_label = "core"

    assert models_missing_user_id([Scratchpad]) == [Scratchpad]


@isolate_apps("memoryhub.core")
def test_it_does_not_accept_an_empty_exemption() -> None:
    class Scratchpad(models.Model):
        user_id_exemption = "  "
        text = models.TextField()

        class Meta:
            app_label = "core"

    assert models_missing_user_id([Scratchpad]) == [Scratchpad]


@isolate_apps("memoryhub.core")
def test_it_accepts_memory_records_and_justified_exemptions() -> None:
    class Note(MemoryRecord):
        text = models.TextField()

        class Meta(MemoryRecord.Meta):
            app_label = "core"

    class Setting(models.Model):
        user_id_exemption = "Configuration of the hub, written by operators."

        class Meta:
            app_label = "core"

    assert models_missing_user_id([Note, Setting]) == []
