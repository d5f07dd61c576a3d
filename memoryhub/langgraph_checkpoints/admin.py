from django.contrib import admin

from memoryhub.langgraph_checkpoints.models import GraphBlob, GraphCheckpoint, GraphWrite


# The serialized payloads are opaque msgpack bytes: showing them helps nobody and
# loading a megabyte per row would make the change list slow.
@admin.register(GraphCheckpoint)
class GraphCheckpointAdmin(admin.ModelAdmin):
    list_display = ["session", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type", "created_at"]
    search_fields = ["checkpoint_id"]
    exclude = ["checkpoint"]


@admin.register(GraphBlob)
class GraphBlobAdmin(admin.ModelAdmin):
    list_display = ["session", "checkpoint_ns", "channel", "version", "type", "created_at"]
    exclude = ["blob"]


@admin.register(GraphWrite)
class GraphWriteAdmin(admin.ModelAdmin):
    list_display = ["session", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "channel", "created_at"]
    exclude = ["blob"]
