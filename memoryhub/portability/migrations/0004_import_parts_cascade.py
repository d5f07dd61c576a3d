"""Parts of an import's upload go with it in the database itself, as an export's do
(0002): a purge of the user an import names deletes it by SQL."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("portability", "0003_imports")]

    operations = [
        migrations.RunSQL(
            """
            DO $$
            DECLARE name text;
            BEGIN
                SELECT conname INTO name FROM pg_constraint
                WHERE conrelid = 'portability_importpart'::regclass AND contype = 'f'
                  AND confrelid = 'portability_import'::regclass;
                EXECUTE format('ALTER TABLE portability_importpart DROP CONSTRAINT %I', name);
                ALTER TABLE portability_importpart ADD CONSTRAINT portability_importpart_import_cascade
                    FOREIGN KEY (import_job_id) REFERENCES portability_import (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED;
            END $$;
            """,
            migrations.RunSQL.noop,
        ),
    ]
