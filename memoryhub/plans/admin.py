from django.contrib import admin

from memoryhub.plans.models import Episode, Plan, PlanStep, ToolCall, ToolResult


@admin.register(Plan)
class PlanAdmin(admin.ModelAdmin):
    list_display = ["session", "version", "is_current", "created_at"]


@admin.register(PlanStep)
class PlanStepAdmin(admin.ModelAdmin):
    list_display = ["plan", "step_id", "status", "position"]


@admin.register(ToolCall)
class ToolCallAdmin(admin.ModelAdmin):
    list_display = ["call_id", "session", "tool", "status", "result_bytes", "created_at"]
    search_fields = ["call_id", "tool"]


@admin.register(ToolResult)
class ToolResultAdmin(admin.ModelAdmin):
    list_display = ["call", "created_at"]
    exclude = ["data"]


@admin.register(Episode)
class EpisodeAdmin(admin.ModelAdmin):
    list_display = ["task", "outcome", "agent", "user_id", "created_at"]
    list_filter = ["outcome"]
