"""A redelivery outlives the delivery it repeats in the database itself: a purge deletes
deliveries by SQL (memoryhub/compliance), not through the ORM."""

from django.db import migrations

from memoryhub.core.migration_ops import foreign_key_on_delete


class Migration(migrations.Migration):
    dependencies = [("notifications", "0002_emails")]

    operations = [
        foreign_key_on_delete(
            table="notifications_webhookdelivery", column="redelivery_of_id", references="notifications_webhookdelivery",
            action="SET NULL", name="notifications_webhookdelivery_redelivery_set_null",
        ),
    ]
