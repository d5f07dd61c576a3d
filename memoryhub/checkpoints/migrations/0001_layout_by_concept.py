import django.db.models.deletion
import django.utils.timezone
import memoryhub.core.models
from django.db import migrations, models

from memoryhub.core.migration_ops import relabel_content_types, rename_constraint


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('conversations', '0010_layout_by_concept'),
        ('core', '0004_layout_by_concept'),
        ('contenttypes', '0002_remove_content_type_name'),
    ]

    operations = [
        rename_constraint(table='conversations_checkpoint', old='conversations_checkpoint_user_id_not_blank', new='checkpoints_checkpoint_user_id_not_blank'),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Checkpoint',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('user_id', models.CharField(db_index=True, max_length=255, validators=[memoryhub.core.models.validate_user_id])),
                        ('created_at', models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('version', models.PositiveIntegerField()),
                        ('label', models.CharField(blank=True, default='', max_length=200)),
                        ('current_step', models.CharField(blank=True, default='', max_length=255)),
                        ('state', models.BinaryField(null=True)),
                        ('state_bytes', models.PositiveIntegerField(default=0)),
                        ('stored_bytes', models.PositiveIntegerField(default=0)),
                        ('message_seq', models.PositiveBigIntegerField(default=0)),
                        ('summary', models.TextField(blank=True, default='')),
                        ('plan', models.JSONField(blank=True, null=True)),
                        ('last_call_id', models.CharField(blank=True, default='', max_length=255)),
                        ('tool_calls', models.PositiveIntegerField(default=0)),
                        ('bundle', models.JSONField(default=list)),
                        ('session', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='checkpoints', to='conversations.session')),
                        ('workspace', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='core.workspace')),
                    ],
                    options={
                        'db_table': 'conversations_checkpoint',
                        'abstract': False,
                        'constraints': [models.CheckConstraint(condition=models.Q(('user_id__regex', '^\\s*$'), _negated=True), name='checkpoints_checkpoint_user_id_not_blank'), models.UniqueConstraint(fields=('session', 'version'), name='checkpoint_unique_version')],
                    },
                ),
            ],
        ),
        relabel_content_types(old_app='conversations', new_app='checkpoints', models=['checkpoint']),
    ]
