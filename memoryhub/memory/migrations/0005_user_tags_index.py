"""One GIN index over (user_id, tags) for searches filtered by user and tags.

btree_gin lets a GIN index hold a scalar column beside the array; PostgreSQL ships it
with its contrib modules (the embedded server has it). The index is built concurrently,
so a large hub keeps taking writes while it upgrades."""

import django.contrib.postgres.indexes
from django.contrib.postgres.operations import AddIndexConcurrently, BtreeGinExtension
from django.db import migrations


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("memory", "0004_gin_pending_lists")]

    operations = [
        BtreeGinExtension(),
        AddIndexConcurrently(
            model_name="memoryentry",
            index=django.contrib.postgres.indexes.GinIndex(
                fields=["user_id", "tags"], gin_pending_list_limit=512, name="memory_user_tags_gin"
            ),
        ),
    ]
