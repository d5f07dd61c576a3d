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
        ('memory', '0002_vector_indexed'),
        ('plans', '0005_layout_by_concept'),
        ('contenttypes', '0002_remove_content_type_name'),
    ]

    operations = [
        rename_constraint(table='plans_episode', old='plans_episode_user_id_not_blank', new='episodes_episode_user_id_not_blank'),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Episode',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('user_id', models.CharField(db_index=True, max_length=255, validators=[memoryhub.core.models.validate_user_id])),
                        ('created_at', models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('task', models.TextField()),
                        ('outcome', models.CharField(choices=[('success', 'success'), ('failure', 'failure'), ('handoff', 'handoff')], max_length=8)),
                        ('narrative', models.TextField()),
                        ('tools_used', models.JSONField(blank=True, default=dict)),
                        ('elapsed_ms', models.PositiveBigIntegerField(blank=True, null=True)),
                        ('cost', models.FloatField(blank=True, null=True)),
                        ('metadata', models.JSONField(blank=True, default=dict)),
                        ('agent', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='episodes', to='core.agent')),
                        ('memory', models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='episode', to='memory.memoryentry')),
                        ('session', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='episodes', to='conversations.session')),
                        ('workspace', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='core.workspace')),
                    ],
                    options={
                        'db_table': 'plans_episode',
                        'abstract': False,
                        'indexes': [models.Index(fields=['workspace', '-created_at'], name='episode_ws_created')],
                        'constraints': [models.CheckConstraint(condition=models.Q(('user_id__regex', '^\\s*$'), _negated=True), name='episodes_episode_user_id_not_blank')],
                    },
                ),
            ],
        ),
        relabel_content_types(old_app='plans', new_app='episodes', models=['episode']),
    ]
