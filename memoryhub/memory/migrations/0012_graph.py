"""Graph memory: predicate rules, the entity-name function and the indexes of facts by
subject and by object (partial: facts only, so building them reads the table once and
writes only the facts)."""

import django.db.models.deletion
import django.db.models.fields.json
import django.utils.timezone
import memoryhub.memory.models
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('core', '0006_quarantine_sources'),
        ('memory', '0011_duplicates'),
    ]

    operations = [
        migrations.RunSQL(memoryhub.memory.models.GRAPH_ENTITY_SQL, reverse_sql="DROP FUNCTION IF EXISTS graph_entity(text)"),
        migrations.CreateModel(
            name='PredicateRule',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('predicate', models.CharField(help_text='Folded as facts are compared (case and spacing).', max_length=200)),
                ('kind', models.CharField(choices=[('transitive', 'Transitive'), ('symmetric', 'Symmetric'), ('inverse', 'Inverse'), ('multi', 'Multi')], max_length=16)),
                ('inverse', models.CharField(blank=True, default='', help_text='For `inverse`: the other predicate, folded.', max_length=200)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
            ],
        ),
        migrations.AddIndex(
            model_name='memoryentry',
            index=models.Index(models.F('workspace'), memoryhub.memory.models.GraphEntity(django.db.models.fields.json.KeyTextTransform('subject', 'data')), condition=models.Q(('memory_type', 'factual')), name='graph_subject'),
        ),
        migrations.AddIndex(
            model_name='memoryentry',
            index=models.Index(models.F('workspace'), memoryhub.memory.models.GraphEntity(django.db.models.fields.json.KeyTextTransform('object', 'data')), condition=models.Q(('memory_type', 'factual')), name='graph_object'),
        ),
        migrations.AddField(
            model_name='predicaterule',
            name='workspace',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='predicate_rules', to='core.workspace'),
        ),
        migrations.AddConstraint(
            model_name='predicaterule',
            constraint=models.UniqueConstraint(fields=('workspace', 'predicate', 'kind'), name='memory_predicate_rule_unique'),
        ),
        migrations.AddConstraint(
            model_name='predicaterule',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('kind', 'inverse'), _negated=True), ('inverse__gt', ''), _connector='OR'), name='memory_predicate_rule_inverse_named'),
        ),
    ]
