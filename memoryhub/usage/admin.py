from django.contrib import admin

from memoryhub.usage.models import Budget, UsageDaily, UsageRecord


@admin.register(UsageRecord)
class UsageRecordAdmin(admin.ModelAdmin):
    list_display = ["workspace", "minute", "agent", "provider", "operation", "calls", "input_tokens", "cost"]
    list_filter = ["operation", "provider"]
    exclude = ["user_id"]


@admin.register(UsageDaily)
class UsageDailyAdmin(admin.ModelAdmin):
    list_display = ["workspace", "day", "agent", "provider", "operation", "calls", "input_tokens", "cost"]
    list_filter = ["operation", "provider"]


@admin.register(Budget)
class BudgetAdmin(admin.ModelAdmin):
    list_display = ["workspace", "monthly_limit", "warn_at", "warned_month", "updated_at"]
