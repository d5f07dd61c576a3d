from django.contrib import admin

from memoryhub.episodes.models import Episode


@admin.register(Episode)
class EpisodeAdmin(admin.ModelAdmin):
    list_display = ["task", "outcome", "agent", "user_id", "created_at"]
    list_filter = ["outcome"]
