from typing import Any

from django.apps import apps
from django.contrib import admin
from django.http import HttpRequest

from memoryhub.core.erasure import purging
from memoryhub.core.models import Agent, AgentKey, AuditEntry, IdempotencyRecord, Membership, OperatorKey, Store, Workspace


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "created_at"]
    search_fields = ["slug", "name"]

    # Deleting a workspace deletes its timeline too: the one deletion besides a purge
    # that the append-only timeline allows.
    def delete_model(self, request: object, obj: Workspace) -> None:
        with purging():
            super().delete_model(request, obj)

    def delete_queryset(self, request: object, queryset: object) -> None:
        with purging():
            super().delete_queryset(request, queryset)

    def get_deleted_objects(self, objs: object, request: object) -> tuple:
        # Timeline events cannot be deleted one by one in the admin, but they go with
        # their workspace: do not let that block the workspace's deletion. (Looked up by
        # name: the timeline is a layer above this one.)
        event = apps.get_model("timeline", "Event")
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        return deleted, counts, {p for p in perms_needed if p != event._meta.verbose_name}, protected


@admin.register(Store)
class StoreAdmin(admin.ModelAdmin):
    list_display = ["name", "workspace", "created_at"]
    list_filter = ["workspace"]


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = ["name", "workspace", "created_at"]
    list_filter = ["workspace"]
    filter_horizontal = ["stores"]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "workspace", "role", "created_at"]
    list_filter = ["workspace", "role"]
    readonly_fields = ["created_at"]


class KeyAdmin(admin.ModelAdmin):
    # Hashes are never editable: a key can only be created (shown once) or revoked.
    readonly_fields = ["prefix", "key_hash", "created_at", "last_used_at"]
    list_display = ["prefix", "label", "created_at", "expires_at", "revoked_at", "last_used_at"]

    def has_add_permission(self, request: object) -> bool:
        return False


@admin.register(AgentKey)
class AgentKeyAdmin(KeyAdmin):
    list_display = ["prefix", "agent", *KeyAdmin.list_display[1:]]


@admin.register(OperatorKey)
class OperatorKeyAdmin(KeyAdmin):
    list_display = ["prefix", "membership", *KeyAdmin.list_display[1:]]


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    """Read-only: the database refuses changes and deletions anyway."""

    list_display = ["created_at", "workspace_slug", "actor", "action", "target", "ip"]
    list_filter = ["action"]
    search_fields = ["actor", "target"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(IdempotencyRecord)
class IdempotencyRecordAdmin(admin.ModelAdmin):
    """Read-only: answers kept for retries, swept after MEMORYHUB_IDEMPOTENCY_TTL_HOURS."""

    list_display = ["created_at", "workspace", "credential", "key", "status"]
    exclude = ["body"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
