import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

from memoryhub.core.migration_ops import relabel_content_types


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('core', '0004_layout_by_concept'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ('compliance', '0006_layout_by_concept'),
        ('contenttypes', '0002_remove_content_type_name'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='BlockedUser',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('user_hash', models.CharField(max_length=64)),
                        ('purge_id', models.BigIntegerField(blank=True, db_index=True, null=True)),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('workspace', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='blocked_users', to='core.workspace')),
                    ],
                    options={
                        'db_table': 'compliance_blockeduser',
                        'constraints': [models.UniqueConstraint(fields=('workspace', 'user_hash'), name='blocked_user_unique')],
                    },
                ),
                migrations.CreateModel(
                    name='RetentionPolicy',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('kind', models.CharField(choices=[('tool_outputs', 'Raw tool outputs'), ('checkpoints', 'Checkpoints'), ('working_memories', 'Working memories'), ('sessions', 'Inactive sessions')], max_length=20)),
                        ('value', models.PositiveIntegerField(blank=True, null=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('updated_by', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('workspace', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='retention_policies', to='core.workspace')),
                    ],
                    options={
                        'db_table': 'compliance_retentionpolicy',
                        'constraints': [models.UniqueConstraint(fields=('workspace', 'kind'), name='retention_policy_unique')],
                    },
                ),
            ],
        ),
        relabel_content_types(old_app='compliance', new_app='privacy', models=['blockeduser', 'retentionpolicy']),
    ]
