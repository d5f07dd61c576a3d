from django.contrib import admin

from memoryhub.tools.models import ToolCall, ToolResult


@admin.register(ToolCall)
class ToolCallAdmin(admin.ModelAdmin):
    list_display = ["call_id", "session", "tool", "status", "result_bytes", "created_at"]
    search_fields = ["call_id", "tool"]


@admin.register(ToolResult)
class ToolResultAdmin(admin.ModelAdmin):
    list_display = ["call", "created_at"]
    exclude = ["data"]
