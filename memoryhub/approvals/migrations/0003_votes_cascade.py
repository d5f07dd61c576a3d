"""Votes go with their approval in the database itself: a purge deletes approvals by SQL
(memoryhub/compliance), not through the ORM."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("approvals", "0002_approval_policies")]

    operations = [
        migrations.RunSQL(
            """
            DO $$
            DECLARE name text;
            BEGIN
                SELECT conname INTO name FROM pg_constraint
                WHERE conrelid = 'approvals_approvalvote'::regclass AND contype = 'f'
                  AND confrelid = 'approvals_approval'::regclass;
                EXECUTE format('ALTER TABLE approvals_approvalvote DROP CONSTRAINT %I', name);
                ALTER TABLE approvals_approvalvote ADD CONSTRAINT approvals_approvalvote_approval_cascade
                    FOREIGN KEY (approval_id) REFERENCES approvals_approval (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED;
            END $$;
            """,
            migrations.RunSQL.noop,
        ),
    ]
