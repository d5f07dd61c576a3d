from django.contrib import admin

from memoryhub.portability.models import Export, ExportPart, Import, ImportPart


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


@admin.register(Import)
class ImportAdmin(admin.ModelAdmin):
    list_display = ["id", "workspace", "format", "store", "agent", "dry_run", "status", "progress", "created_at"]
    exclude = ["user_id"]
    readonly_fields = ["counts", "refusals", "sha256", "error"]


@admin.register(ImportPart)
class ImportPartAdmin(admin.ModelAdmin):
    list_display = ["import_job", "seq"]
    exclude = ["data"]
