"""Votes go with their approval in the database itself: a purge deletes approvals by SQL
(memoryhub/compliance), not through the ORM."""

from django.db import migrations

from memoryhub.core.migration_ops import foreign_key_on_delete


class Migration(migrations.Migration):
    dependencies = [("approvals", "0002_approval_policies")]

    operations = [
        foreign_key_on_delete(
            table="approvals_approvalvote", column="approval_id", references="approvals_approval", action="CASCADE",
            name="approvals_approvalvote_approval_cascade",
        ),
    ]
