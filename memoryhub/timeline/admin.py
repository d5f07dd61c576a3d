from django.contrib import admin

from memoryhub.timeline.models import Event


@admin.register(Event)
class EventAdmin(admin.ModelAdmin):
    list_display = ["id", "workspace", "kind", "at", "actor", "summary"]
    list_filter = ["workspace", "kind"]

    # Append-only: the admin can read the timeline, not rewrite it.
    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False

    def has_add_permission(self, request: object) -> bool:
        return False

    def has_delete_permission(self, request: object, obj: object = None) -> bool:
        return False
