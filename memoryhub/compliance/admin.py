from django.contrib import admin

from memoryhub.compliance.models import PurgeRequest, RetentionRun


@admin.register(PurgeRequest)
class PurgeRequestAdmin(admin.ModelAdmin):
    list_display = ["id", "workspace", "status", "dry_run", "created_at", "finished_at"]
    exclude = ["pending_user_id"]
    readonly_fields = ["user_hash", "counts", "receipt"]


@admin.register(RetentionRun)
class RetentionRunAdmin(admin.ModelAdmin):
    list_display = ["workspace", "started_at", "finished_at", "counts"]
