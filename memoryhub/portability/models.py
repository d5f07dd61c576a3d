"""Exports: an archive of a workspace, one end user's data or one session, built in the
background and kept in the database until it expires.

Kept in the database, in parts, rather than as a file: an export is about end users, and
a purge deletes every row about its user (memoryhub/core/registry.py) — so a purge takes
the archives holding them, and counts them on its receipt, without a file left on a disk."""

from __future__ import annotations

import uuid

from django.contrib.postgres.fields import ArrayField
from django.db import models

from memoryhub.core.jobs import Job
from memoryhub.core.models import USER_ID_MAX_LENGTH, Workspace


class ExportScope(models.TextChoices):
    WORKSPACE = "workspace"
    USER = "user"
    SESSION = "session"


class Export(Job):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    scope = models.CharField(max_length=16, choices=ExportScope.choices)
    # What was asked: the user of a user export (an access request), the session of a session
    # export. Not `user_id`: the registry would take it for the one user the row is about.
    asked_user_id = models.CharField(max_length=USER_ID_MAX_LENGTH, blank=True, default="")
    session_id = models.CharField(max_length=255, blank=True, default="")
    # Every end user whose data the archive holds (a workspace export: all of them), so that a
    # purge of any of them deletes it (the registry reads `user_ids` before `user_id`).
    user_ids = ArrayField(models.CharField(max_length=USER_ID_MAX_LENGTH), default=list, blank=True)
    with_vectors = models.BooleanField(default=False)
    counts = models.JSONField(default=dict, blank=True)
    bytes = models.BigIntegerField(default=0)
    sha256 = models.CharField(max_length=64, blank=True, default="")
    requested_by = models.CharField(max_length=200)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        indexes = [models.Index(fields=["workspace", "-created_at"], name="export_ws_created")]

    def __str__(self) -> str:
        return f"{self.scope} export {self.pk}"


class ExportPart(models.Model):
    """A piece of an export's zip, in order: written as the archive streams out, read back
    the same way for a download."""

    user_id_exemption = "A piece of an Export's archive; deleted with the export, which names its users in user_ids."

    # Also ON DELETE CASCADE in the database (migration 0001): a purge deletes exports by SQL
    # (memoryhub/compliance), not through the ORM, and their parts must go with them.
    export = models.ForeignKey(Export, on_delete=models.CASCADE, related_name="parts")
    seq = models.PositiveIntegerField()
    data = models.BinaryField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["export", "seq"], name="export_part_unique")]


class ImportFormat(models.TextChoices):
    MEMORYHUB = "memoryhub"
    CHATGPT = "chatgpt"
    CLAUDE = "claude"
    MEM0 = "mem0"


class Import(Job):
    """An upload brought into a workspace, into one store and agent, in the background; with
    what it created, skipped (there already) and refused (and why)."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    store = models.ForeignKey("core.Store", on_delete=models.CASCADE, related_name="+")
    agent = models.ForeignKey("core.Agent", on_delete=models.CASCADE, related_name="+")
    format = models.CharField(max_length=16, choices=ImportFormat.choices)
    # The end user a conversation export is about (ChatGPT and Claude exports name nobody);
    # for Mem0, the user given to memories that name none. Blank for an archive.
    user_id = models.CharField(max_length=USER_ID_MAX_LENGTH, blank=True, default="")
    dry_run = models.BooleanField(default=False)
    # The dry run this import applied (its upload moved here): a dry run shows what became of it.
    trial = models.OneToOneField("self", on_delete=models.SET_NULL, null=True, blank=True, related_name="applied")
    filename = models.CharField(max_length=255, blank=True, default="")
    bytes = models.BigIntegerField(default=0)
    sha256 = models.CharField(max_length=64, blank=True, default="")
    # {"created": n, "skipped": n, "refused": n, "kinds": {kind: {"created", "skipped", "refused"}}}
    counts = models.JSONField(default=dict, blank=True)
    refusals = models.JSONField(default=list, blank=True)  # [{"kind", "reason", "count"}]
    requested_by = models.CharField(max_length=200)

    class Meta:
        indexes = [models.Index(fields=["workspace", "-created_at"], name="import_ws_created")]

    def __str__(self) -> str:
        return f"{self.format} import {self.pk}"


class ImportPart(models.Model):
    """A piece of an import's upload, in order, kept until the import has run."""

    user_id_exemption = (
        "A piece of an uploaded file, deleted when its import ends; items of a user purged meanwhile are refused then."
    )

    import_job = models.ForeignKey(Import, on_delete=models.CASCADE, related_name="parts")
    seq = models.PositiveIntegerField()
    data = models.BinaryField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["import_job", "seq"], name="import_part_unique")]
