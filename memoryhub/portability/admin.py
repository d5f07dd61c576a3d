from django.contrib import admin

from memoryhub.portability.models import Export, ExportPart


@admin.register(Export)
class ExportAdmin(admin.ModelAdmin):
    list_display = ["id", "workspace", "scope", "status", "progress", "bytes", "created_at", "expires_at"]
    # Which users an archive holds is for purges to read, not for browsing.
    exclude = ["user_ids", "asked_user_id"]
    readonly_fields = ["counts", "sha256", "error"]


@admin.register(ExportPart)
class ExportPartAdmin(admin.ModelAdmin):
    list_display = ["export", "seq"]
    exclude = ["data"]
