from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from memoryhub.compliance.models import AuditEntry, BlockedUser, PurgeRequest, RetentionPolicy, RetentionRun


@admin.register(PurgeRequest)
class PurgeRequestAdmin(admin.ModelAdmin):
    list_display = ["id", "workspace", "status", "dry_run", "created_at", "finished_at"]
    exclude = ["pending_user_id"]
    readonly_fields = ["user_hash", "counts", "receipt"]


@admin.register(BlockedUser)
class BlockedUserAdmin(admin.ModelAdmin):
    list_display = ["workspace", "user_hash", "created_at"]


@admin.register(RetentionPolicy)
class RetentionPolicyAdmin(admin.ModelAdmin):
    # Changed on the console's Compliance page, where each change is audited.
    list_display = ["workspace", "kind", "value", "updated_at", "updated_by"]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(RetentionRun)
class RetentionRunAdmin(admin.ModelAdmin):
    list_display = ["workspace", "started_at", "finished_at", "counts"]


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
