import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('compliance', '0005_purge_attempts'),
    ]

    operations = [
        # The block list moves below the purges (privacy app): it keeps the purge's id, not a foreign key.
        migrations.AlterField(
            model_name='blockeduser',
            name='purge',
            field=models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='compliance.purgerequest'),
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(
                    name='AuditEntry',
                ),
                migrations.RemoveConstraint(
                    model_name='blockeduser',
                    name='blocked_user_unique',
                ),
                migrations.RemoveConstraint(
                    model_name='retentionpolicy',
                    name='retention_policy_unique',
                ),
                migrations.RemoveField(
                    model_name='retentionpolicy',
                    name='updated_by',
                ),
                migrations.RemoveField(
                    model_name='retentionpolicy',
                    name='workspace',
                ),
                migrations.DeleteModel(
                    name='BlockedUser',
                ),
                migrations.DeleteModel(
                    name='RetentionPolicy',
                ),
            ],
        ),
    ]
