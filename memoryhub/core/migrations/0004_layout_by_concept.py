import django.utils.timezone
from django.db import migrations, models

from memoryhub.core.migration_ops import relabel_content_types


class Migration(migrations.Migration):

    dependencies = [
        ('core', '0003_workspace_redaction'),
        ('compliance', '0006_layout_by_concept'),
        ('contenttypes', '0002_remove_content_type_name'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='AuditEntry',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('workspace_id', models.BigIntegerField(blank=True, db_index=True, null=True)),
                        ('workspace_slug', models.CharField(blank=True, default='', max_length=100)),
                        ('actor', models.CharField(max_length=200)),
                        ('action', models.CharField(db_index=True, max_length=50)),
                        ('target', models.CharField(blank=True, default='', max_length=200)),
                        ('details', models.JSONField(blank=True, default=dict)),
                        ('ip', models.GenericIPAddressField(blank=True, null=True)),
                        ('created_at', models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                    ],
                    options={
                        'db_table': 'compliance_auditentry',
                        'ordering': ['-created_at', '-id'],
                    },
                ),
            ],
        ),
        relabel_content_types(old_app='compliance', new_app='core', models=['auditentry']),
    ]
