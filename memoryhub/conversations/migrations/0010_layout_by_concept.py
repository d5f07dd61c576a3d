from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('conversations', '0009_alter_chainsummary_options_alter_summary_options'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveConstraint(
                    model_name='checkpoint',
                    name='conversations_checkpoint_user_id_not_blank',
                ),
                migrations.RemoveConstraint(
                    model_name='checkpoint',
                    name='checkpoint_unique_version',
                ),
                migrations.DeleteModel(
                    name='Checkpoint',
                ),
            ],
        ),
    ]
