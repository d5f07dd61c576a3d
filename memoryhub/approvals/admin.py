from django.contrib import admin

from memoryhub.approvals.models import Approval, ApprovalRule, ApprovalVote


@admin.register(Approval)
class ApprovalAdmin(admin.ModelAdmin):
    list_display = ["id", "tool", "status", "session", "created_at", "decided_by"]
    list_filter = ["status"]


@admin.register(ApprovalVote)
class ApprovalVoteAdmin(admin.ModelAdmin):
    list_display = ["approval", "by", "at"]


@admin.register(ApprovalRule)
class ApprovalRuleAdmin(admin.ModelAdmin):
    list_display = ["id", "tool", "decision", "scope", "created_by", "created_at"]
