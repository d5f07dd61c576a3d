from django.contrib import admin

from memoryhub.memory.models import MemoryEntry


@admin.register(MemoryEntry)
class MemoryEntryAdmin(admin.ModelAdmin):
    list_display = ["id", "workspace", "agent", "store", "user_id", "memory_type", "scope", "created_at", "expires_at"]
    list_filter = ["workspace", "memory_type", "scope"]
    search_fields = ["user_id", "key"]
    exclude = ["embedding"]
    readonly_fields = ["search_extra", "fact_key", "embedding_model", "embedding_dim", "version"]
