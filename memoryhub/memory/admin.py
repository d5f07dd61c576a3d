from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from memoryhub.memory.models import MemoryDuplicate, MemoryEntry, MemoryRevision, PredicateRule, UserVectorIndex


@admin.register(MemoryEntry)
class MemoryEntryAdmin(admin.ModelAdmin):
    list_display = ["id", "workspace", "agent", "store", "user_id", "memory_type", "scope", "created_at", "expires_at"]
    list_filter = ["workspace", "memory_type", "scope"]
    search_fields = ["user_id", "key"]
    exclude = ["embedding"]
    readonly_fields = ["search_extra", "fact_key", "embedding_model", "embedding_dim", "version", "change", "changed_by", "change_reason"]


@admin.register(UserVectorIndex)
class UserVectorIndexAdmin(admin.ModelAdmin):
    """Read-only: the schedule builds and drops these; a row edited by hand would route
    searches to an index that is not there."""

    list_display = ["name", "workspace", "user_id", "dim", "entries", "created_at"]
    list_filter = ["workspace"]
    search_fields = ["user_id"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: UserVectorIndex | None = None) -> bool:
        return False


@admin.register(MemoryRevision)
class MemoryRevisionAdmin(admin.ModelAdmin):
    """Read-only: a memory's history is made by its changes, never written by hand."""

    list_display = ["entry", "revision", "change", "changed_by", "changed_at", "workspace", "user_id"]
    list_filter = ["workspace", "change"]
    search_fields = ["user_id", "changed_by"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: MemoryRevision | None = None) -> bool:
        return False


@admin.register(MemoryDuplicate)
class MemoryDuplicateAdmin(admin.ModelAdmin):
    """Read-only, deletable: pairs are found by writes; deleting one takes it off the review queue."""

    list_display = ["entry", "duplicate_of", "score", "workspace", "user_id", "created_at"]
    list_filter = ["workspace"]
    search_fields = ["user_id"]
    raw_id_fields = ["entry", "duplicate_of"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: MemoryDuplicate | None = None) -> bool:
        return False


@admin.register(PredicateRule)
class PredicateRuleAdmin(admin.ModelAdmin):
    """Read-only: rules are changed through PUT /api/v1/graph/rules, which folds and
    checks them and audits the change."""

    list_display = ["predicate", "kind", "inverse", "workspace", "created_at"]
    list_filter = ["workspace", "kind"]
    search_fields = ["predicate"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: PredicateRule | None = None) -> bool:
        return False
