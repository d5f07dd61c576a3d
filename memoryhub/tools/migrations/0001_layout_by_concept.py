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
        ('plans', '0005_layout_by_concept'),
        ('contenttypes', '0002_remove_content_type_name'),
    ]

    operations = [
        rename_constraint(table='plans_toolcall', old='plans_toolcall_user_id_not_blank', new='tools_toolcall_user_id_not_blank'),
        rename_constraint(table='plans_toolresult', old='plans_toolresult_user_id_not_blank', new='tools_toolresult_user_id_not_blank'),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='ToolCall',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('user_id', models.CharField(db_index=True, max_length=255, validators=[memoryhub.core.models.validate_user_id])),
                        ('created_at', models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('call_id', models.CharField(max_length=255)),
                        ('tool', models.CharField(max_length=200)),
                        ('args', models.JSONField(blank=True, default=dict)),
                        ('result_summary', models.TextField(blank=True, default='')),
                        ('status', models.CharField(choices=[('ok', 'ok'), ('error', 'error')], default='ok', max_length=8)),
                        ('step_id', models.CharField(blank=True, max_length=100, null=True)),
                        ('duration_ms', models.PositiveIntegerField(blank=True, null=True)),
                        ('cost', models.FloatField(blank=True, null=True)),
                        ('result_bytes', models.PositiveIntegerField(default=0)),
                        ('redactions', models.JSONField(blank=True, default=dict)),
                        ('session', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='tool_calls', to='conversations.session')),
                        ('workspace', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='core.workspace')),
                    ],
                    options={
                        'db_table': 'plans_toolcall',
                        'abstract': False,
                    },
                ),
                migrations.CreateModel(
                    name='ToolResult',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('user_id', models.CharField(db_index=True, max_length=255, validators=[memoryhub.core.models.validate_user_id])),
                        ('created_at', models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('data', models.BinaryField()),
                        ('call', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='result', to='tools.toolcall')),
                        ('workspace', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='core.workspace')),
                    ],
                    options={
                        'verbose_name': 'raw tool output',
                        'db_table': 'plans_toolresult',
                        'abstract': False,
                    },
                ),
                migrations.AddIndex(
                    model_name='toolcall',
                    index=models.Index(fields=['session', 'created_at'], name='tool_call_session'),
                ),
                migrations.AddConstraint(
                    model_name='toolcall',
                    constraint=models.CheckConstraint(condition=models.Q(('user_id__regex', '^\\s*$'), _negated=True), name='tools_toolcall_user_id_not_blank'),
                ),
                migrations.AddConstraint(
                    model_name='toolcall',
                    constraint=models.UniqueConstraint(fields=('workspace', 'call_id'), name='tool_call_unique_id'),
                ),
                migrations.AddConstraint(
                    model_name='toolresult',
                    constraint=models.CheckConstraint(condition=models.Q(('user_id__regex', '^\\s*$'), _negated=True), name='tools_toolresult_user_id_not_blank'),
                ),
            ],
        ),
        relabel_content_types(old_app='plans', new_app='tools', models=['toolcall', 'toolresult']),
    ]
