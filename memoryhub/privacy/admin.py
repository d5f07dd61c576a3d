from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from memoryhub.privacy.models import BlockedUser, RetentionPolicy


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
