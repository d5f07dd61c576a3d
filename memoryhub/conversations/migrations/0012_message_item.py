from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('conversations', '0011_session_suspension'),
    ]

    operations = [
        migrations.AddField(
            model_name='message',
            name='item',
            field=models.TextField(blank=True, null=True),
        ),
    ]
