"""A GIN index over sessions' metadata, for lists filtered by it (a framework's app). Built
concurrently, so a large hub keeps taking writes while it upgrades; in a migration of its
own, since a concurrent build cannot run in a transaction and a failed one must not leave
another operation half applied."""

import django.contrib.postgres.indexes
from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ('conversations', '0013_session_state'),
    ]

    operations = [
        AddIndexConcurrently(
            model_name='session',
            index=django.contrib.postgres.indexes.GinIndex(fields=['metadata'], name='session_metadata_gin', opclasses=['jsonb_path_ops']),
        ),
    ]
