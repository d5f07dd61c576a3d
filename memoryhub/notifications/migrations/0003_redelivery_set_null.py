"""A redelivery outlives the delivery it repeats in the database itself: a purge deletes
deliveries by SQL (memoryhub/compliance), not through the ORM."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("notifications", "0002_emails")]

    operations = [
        migrations.RunSQL(
            """
            DO $$
            DECLARE name text;
            BEGIN
                SELECT conname INTO name FROM pg_constraint
                WHERE conrelid = 'notifications_webhookdelivery'::regclass AND contype = 'f'
                  AND confrelid = 'notifications_webhookdelivery'::regclass;
                EXECUTE format('ALTER TABLE notifications_webhookdelivery DROP CONSTRAINT %I', name);
                ALTER TABLE notifications_webhookdelivery ADD CONSTRAINT notifications_webhookdelivery_redelivery_set_null
                    FOREIGN KEY (redelivery_of_id) REFERENCES notifications_webhookdelivery (id) ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED;
            END $$;
            """,
            migrations.RunSQL.noop,
        ),
    ]
