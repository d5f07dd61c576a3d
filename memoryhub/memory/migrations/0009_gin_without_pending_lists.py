"""The memory entries' GIN indexes without pending lists (models.GIN_FAST_UPDATE).

Every search that uses a GIN index reads its pending list whole; during and after a
burst of writes the lists stayed full and cost a search ~2 ms. An ALTER INDEX, not the
drop and rebuild Django would generate for a changed index option (rebuilding the
full-text index of a large hub takes minutes), then the entries already pending merged
into each index: turning `fastupdate` off does not move them by itself. The users' own
keyword indexes (vector_index.py) get the same."""

from typing import Any

import django.contrib.postgres.indexes
from django.db import migrations

INDEXES = {
    "memory_tags_gin": dict(fields=["tags"]),
    "memory_user_tags_gin": dict(fields=["user_id", "tags"]),
    "memory_metadata_gin": dict(fields=["metadata"], opclasses=["jsonb_path_ops"]),
    "memory_search_gin": dict(fields=["search_vector"]),
}
OWN_WORDS_INDEXES = r"^memory_words_[0-9]+_u[0-9a-f]+$"
LIMIT_KB = 512  # what migration 0004 set, for the way back


def _indexes(schema_editor: Any) -> list[str]:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT relname FROM pg_class WHERE relkind = 'i' AND relname ~ %s ORDER BY relname", [OWN_WORDS_INDEXES])
        return [*INDEXES, *(name for (name,) in cursor.fetchall())]


def without_pending_lists(apps: Any, schema_editor: Any) -> None:
    for name in _indexes(schema_editor):
        quoted = schema_editor.quote_name(name)
        schema_editor.execute(f"ALTER INDEX {quoted} SET (fastupdate = off)")
        schema_editor.execute(f"ALTER INDEX {quoted} RESET (gin_pending_list_limit)")
        schema_editor.execute("SELECT gin_clean_pending_list(%s::regclass)", [name])


def with_pending_lists(apps: Any, schema_editor: Any) -> None:
    for name in _indexes(schema_editor):
        schema_editor.execute(f"ALTER INDEX {schema_editor.quote_name(name)} SET (fastupdate = on, gin_pending_list_limit = {LIMIT_KB})")


def _state_operations() -> list[migrations.operations.base.Operation]:
    operations: list[migrations.operations.base.Operation] = []
    for name, options in INDEXES.items():
        operations.append(migrations.RemoveIndex(model_name="memoryentry", name=name))
        operations.append(
            migrations.AddIndex(
                model_name="memoryentry", index=django.contrib.postgres.indexes.GinIndex(name=name, fastupdate=False, **options)
            )
        )
    return operations


class Migration(migrations.Migration):
    dependencies = [("memory", "0008_vectors_inline")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(without_pending_lists, with_pending_lists)],
            state_operations=_state_operations(),
        )
    ]
