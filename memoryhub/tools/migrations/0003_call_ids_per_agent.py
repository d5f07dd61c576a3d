import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    """Call ids unique per agent rather than per workspace: the agent is copied from the
    session onto each call, then the constraint moves."""

    dependencies = [
        ("core", "0005_idempotency"),
        ("tools", "0002_identifiers_200"),
    ]

    operations = [
        migrations.AddField(
            model_name="toolcall",
            name="agent",
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="core.agent"),
        ),
        migrations.RunSQL(
            "UPDATE plans_toolcall t SET agent_id = s.agent_id FROM conversations_session s WHERE t.session_id = s.id",
            reverse_sql=migrations.RunSQL.noop,
        ),
        migrations.AlterField(
            model_name="toolcall",
            name="agent",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+", to="core.agent"),
        ),
        migrations.RemoveConstraint(model_name="toolcall", name="tool_call_unique_id"),
        migrations.AddConstraint(
            model_name="toolcall",
            constraint=models.UniqueConstraint(fields=("agent", "call_id"), name="tool_call_unique_per_agent"),
        ),
    ]
