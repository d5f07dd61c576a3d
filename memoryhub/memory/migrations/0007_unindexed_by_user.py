"""The rows waiting for the HNSW indexer are indexed by user as well as workspace.

A search routed through HNSW ranks the waiting rows exactly beside it; indexed by
workspace alone, every such search read the whole backlog of the workspace, whoever it
was about (after a burst of 20,000 writes at 1,000,000 entries: ~40 ms a search until
the indexer caught up). Built concurrently, then the old index goes, so that a large hub
keeps taking writes while it upgrades."""

from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("memory", "0006_user_vector_index")]

    operations = [
        AddIndexConcurrently(
            model_name="memoryentry",
            index=models.Index(
                condition=models.Q(("vector_indexed", False)), fields=["workspace", "user_id", "created_at"], name="memory_unindexed_user"
            ),
        ),
        RemoveIndexConcurrently(model_name="memoryentry", name="memory_unindexed"),
    ]
