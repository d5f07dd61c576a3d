"""Migration operations for moving a model between apps without moving its data
(the layout by concept): the table keeps its name, the state moves."""

from __future__ import annotations

from typing import Any

from django.db import migrations


def rename_constraint(*, table: str, old: str, new: str) -> migrations.RunSQL:
    """Constraints named after the app label (`%(app_label)s_%(class)s_…`) follow the
    model to its new app."""
    return migrations.RunSQL(
        f'ALTER TABLE "{table}" RENAME CONSTRAINT "{old}" TO "{new}"',
        reverse_sql=f'ALTER TABLE "{table}" RENAME CONSTRAINT "{new}" TO "{old}"',
    )


def relabel_content_types(*, old_app: str, new_app: str, models: list[str]) -> migrations.RunPython:
    """Content types (and so permissions and admin history) follow the model too."""

    def move(apps: Any, source: str, target: str) -> None:
        content_type = apps.get_model("contenttypes", "ContentType")
        for model in models:
            if content_type.objects.filter(app_label=target, model=model).exists():
                content_type.objects.filter(app_label=source, model=model).delete()
            else:
                content_type.objects.filter(app_label=source, model=model).update(app_label=target)

    return migrations.RunPython(
        lambda apps, schema_editor: move(apps, old_app, new_app),
        lambda apps, schema_editor: move(apps, new_app, old_app),
    )


def foreign_key_on_delete(*, table: str, column: str, references: str, action: str, name: str) -> migrations.RunSQL:
    """The foreign key `table.column` → `references(id)` made to act in the database itself
    (`ON DELETE CASCADE` or `SET NULL`): the purge deletes by SQL, where Django's on_delete
    never runs. The key Django made (its name is a hash) is found and replaced."""
    return migrations.RunSQL(
        f"""
        DO $$
        DECLARE name text;
        BEGIN
            SELECT conname INTO name FROM pg_constraint
            WHERE conrelid = '{table}'::regclass AND contype = 'f' AND confrelid = '{references}'::regclass;
            EXECUTE format('ALTER TABLE {table} DROP CONSTRAINT %I', name);
            ALTER TABLE {table} ADD CONSTRAINT {name}
                FOREIGN KEY ({column}) REFERENCES {references} (id) ON DELETE {action} DEFERRABLE INITIALLY DEFERRED;
        END $$;
        """,
        migrations.RunSQL.noop,
    )
