"""Bounds the pending lists of the memory entries' GIN indexes (models.GIN_PENDING_LIST_KB).

An ALTER INDEX, not the drop and rebuild Django would generate for a changed index
option: rebuilding the full-text index of a large hub takes minutes."""

import django.contrib.postgres.indexes
from django.db import migrations

INDEXES = {
    "memory_tags_gin": dict(fields=["tags"]),
    "memory_metadata_gin": dict(fields=["metadata"], opclasses=["jsonb_path_ops"]),
    "memory_search_gin": dict(fields=["search_vector"]),
}
LIMIT_KB = 512


def _state_operations() -> list[migrations.operations.base.Operation]:
    operations: list[migrations.operations.base.Operation] = []
    for name, options in INDEXES.items():
        operations.append(migrations.RemoveIndex(model_name="memoryentry", name=name))
        operations.append(
            migrations.AddIndex(
                model_name="memoryentry",
                index=django.contrib.postgres.indexes.GinIndex(name=name, gin_pending_list_limit=LIMIT_KB, **options),
            )
        )
    return operations


class Migration(migrations.Migration):
    dependencies = [("memory", "0003_store_items")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    [f"ALTER INDEX {name} SET (gin_pending_list_limit = {LIMIT_KB})" for name in INDEXES],
                    reverse_sql=[f"ALTER INDEX {name} RESET (gin_pending_list_limit)" for name in INDEXES],
                )
            ],
            state_operations=_state_operations(),
        )
    ]
