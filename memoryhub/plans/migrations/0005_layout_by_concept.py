from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('plans', '0004_alter_toolresult_options'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveIndex(
                    model_name='episode',
                    name='episode_ws_created',
                ),
                migrations.RemoveConstraint(
                    model_name='episode',
                    name='plans_episode_user_id_not_blank',
                ),
                migrations.RemoveIndex(
                    model_name='toolcall',
                    name='tool_call_session',
                ),
                migrations.RemoveConstraint(
                    model_name='toolcall',
                    name='plans_toolcall_user_id_not_blank',
                ),
                migrations.RemoveConstraint(
                    model_name='toolcall',
                    name='tool_call_unique_id',
                ),
                migrations.RemoveConstraint(
                    model_name='toolresult',
                    name='plans_toolresult_user_id_not_blank',
                ),
                migrations.RemoveField(
                    model_name='toolcall',
                    name='session',
                ),
                migrations.RemoveField(
                    model_name='toolcall',
                    name='workspace',
                ),
                migrations.RemoveField(
                    model_name='toolresult',
                    name='call',
                ),
                migrations.RemoveField(
                    model_name='toolresult',
                    name='workspace',
                ),
                migrations.DeleteModel(
                    name='Episode',
                ),
                migrations.DeleteModel(
                    name='ToolCall',
                ),
                migrations.DeleteModel(
                    name='ToolResult',
                ),
            ],
        ),
    ]
