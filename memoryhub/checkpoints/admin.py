from django.contrib import admin

from memoryhub.checkpoints.models import Checkpoint


@admin.register(Checkpoint)
class CheckpointAdmin(admin.ModelAdmin):
    list_display = ["session", "version", "label", "state_bytes", "stored_bytes", "message_seq", "created_at"]
    exclude = ["state"]
