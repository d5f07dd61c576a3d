from django.contrib import admin

from memoryhub.conversations.models import Message, Session


@admin.register(Session)
class SessionAdmin(admin.ModelAdmin):
    list_display = ["session_id", "workspace", "agent", "user_id", "last_seq", "created_at"]
    list_filter = ["workspace"]
    search_fields = ["session_id", "user_id"]


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ["session", "seq", "role", "pinned", "created_at"]
    list_filter = ["role"]
