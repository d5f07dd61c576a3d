from django.contrib import admin

from memoryhub.plans.models import Plan, PlanStep


@admin.register(Plan)
class PlanAdmin(admin.ModelAdmin):
    list_display = ["session", "version", "is_current", "created_at"]


@admin.register(PlanStep)
class PlanStepAdmin(admin.ModelAdmin):
    list_display = ["plan", "step_id", "status", "position"]
