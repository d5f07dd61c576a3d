"""Parts of an export go with it in the database itself: a purge deletes exports by SQL
(memoryhub/compliance), not through the ORM. A migration of its own: Django adds the
foreign key of 0001 at the end of that migration, after any operation in it."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("portability", "0001_exports")]

    operations = [
        migrations.RunSQL(
            """
            DO $$
            DECLARE name text;
            BEGIN
                SELECT conname INTO name FROM pg_constraint
                WHERE conrelid = 'portability_exportpart'::regclass AND contype = 'f'
                  AND confrelid = 'portability_export'::regclass;
                EXECUTE format('ALTER TABLE portability_exportpart DROP CONSTRAINT %I', name);
                ALTER TABLE portability_exportpart ADD CONSTRAINT portability_exportpart_export_cascade
                    FOREIGN KEY (export_id) REFERENCES portability_export (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED;
            END $$;
            """,
            migrations.RunSQL.noop,
        ),
    ]
