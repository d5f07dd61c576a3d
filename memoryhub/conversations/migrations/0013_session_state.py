"""A session's state: what the agent keeps beside the conversation (a framework's session
state)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('conversations', '0012_message_item'),
    ]

    operations = [
        migrations.AddField(
            model_name='session',
            name='state',
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
