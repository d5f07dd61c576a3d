from django.contrib import admin

from memoryhub.conversations.models import ChainSummary, Message, MessageRevision, Session, Summary


@admin.register(Session)
class SessionAdmin(admin.ModelAdmin):
    list_display = ["session_id", "workspace", "agent", "user_id", "last_seq", "created_at"]
    list_filter = ["workspace"]
    search_fields = ["session_id", "user_id"]


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ["session", "seq", "role", "pinned", "created_at"]
    list_filter = ["role"]


@admin.register(MessageRevision)
class MessageRevisionAdmin(admin.ModelAdmin):
    list_display = ["message", "revision", "replaced_at"]


@admin.register(Summary)
class SummaryAdmin(admin.ModelAdmin):
    list_display = ["session", "from_seq", "to_seq", "summariser", "created_at"]


@admin.register(ChainSummary)
class ChainSummaryAdmin(admin.ModelAdmin):
    list_display = ["session", "index", "from_seq", "to_seq", "summariser", "created_at"]
