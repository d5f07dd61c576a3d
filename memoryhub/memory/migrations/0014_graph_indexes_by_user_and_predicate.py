"""The graph's indexes gain the user and the predicate (`bench graph`, issue 41).

Looked up by entity alone, one end user's facts about a well-known entity meant reading every
user's (6,265 rows for a hub of the benchmark, to keep the 60 of one user), and a transitive
chain's next step read every fact of the entity to keep those of one predicate. With
(workspace, entity, user, predicate), the first is a range of the index and the second is
checked in the index (or skipped to, across users, by PostgreSQL 18's skip scan).

The statistics: the planner keeps none for a partial expression index, so every entity looked
like 0.5% of the facts (503 rows a lookup, where the median entity has 4). Expression
statistics on the whole table give it the real spread (hubs in the most-common list).
"""

import django.db.models.fields.json
import memoryhub.memory.models
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('core', '0006_quarantine_sources'),
        ('memory', '0013_review_counts'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='memoryentry',
            name='graph_subject',
        ),
        migrations.RemoveIndex(
            model_name='memoryentry',
            name='graph_object',
        ),
        migrations.AddIndex(
            model_name='memoryentry',
            index=models.Index(models.F('workspace'), memoryhub.memory.models.GraphEntity(django.db.models.fields.json.KeyTextTransform('subject', 'data')), models.F('user_id'), memoryhub.memory.models.GraphEntity(django.db.models.fields.json.KeyTextTransform('predicate', 'data')), condition=models.Q(('memory_type', 'factual')), name='graph_subject_user_predicate'),
        ),
        migrations.AddIndex(
            model_name='memoryentry',
            index=models.Index(models.F('workspace'), memoryhub.memory.models.GraphEntity(django.db.models.fields.json.KeyTextTransform('object', 'data')), models.F('user_id'), memoryhub.memory.models.GraphEntity(django.db.models.fields.json.KeyTextTransform('predicate', 'data')), condition=models.Q(('memory_type', 'factual')), name='graph_object_user_predicate'),
        ),
        migrations.RunSQL(
            [f"CREATE STATISTICS IF NOT EXISTS memory_graph_{end} ON (graph_entity(data ->> '{end}')) FROM memory_memoryentry"
             for end in ("subject", "object")],
            [f"DROP STATISTICS IF EXISTS memory_graph_{end}" for end in ("subject", "object")],
        ),
    ]
