"""The memory entries' GIN pending lists bounded at 64 kB (models.GIN_PENDING_LIST_KB),
PostgreSQL's least, instead of 512 kB.

Every search that uses a GIN index reads its pending list whole; during and after a
burst of writes the lists stayed near their bound and cost a search ~2 ms. An ALTER
INDEX, not the drop and rebuild Django would generate for a changed index option
(rebuilding the full-text index of a large hub takes minutes); a list already longer is
merged by the next write that finds it over the bound. The users' own keyword indexes
(vector_index.py) get the same bound."""

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
LIMIT_KB, BEFORE_KB = 64, 512


def _bound(schema_editor: Any, kb: int) -> None:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT relname FROM pg_class WHERE relkind = 'i' AND relname ~ %s ORDER BY relname", [OWN_WORDS_INDEXES])
        own = [name for (name,) in cursor.fetchall()]
    for name in [*INDEXES, *own]:
        schema_editor.execute(f"ALTER INDEX {schema_editor.quote_name(name)} SET (gin_pending_list_limit = {kb})")


def _state_operations() -> list[migrations.operations.base.Operation]:
    operations: list[migrations.operations.base.Operation] = []
    for name, options in INDEXES.items():
        operations.append(migrations.RemoveIndex(model_name="memoryentry", name=name))
        operations.append(
            migrations.AddIndex(
                model_name="memoryentry", index=django.contrib.postgres.indexes.GinIndex(name=name, gin_pending_list_limit=LIMIT_KB, **options)
            )
        )
    return operations


class Migration(migrations.Migration):
    dependencies = [("memory", "0008_vectors_inline")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunPython(lambda apps, schema_editor: _bound(schema_editor, LIMIT_KB), lambda apps, schema_editor: _bound(schema_editor, BEFORE_KB))
            ],
            state_operations=_state_operations(),
        )
    ]
