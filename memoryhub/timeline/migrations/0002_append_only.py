# Timeline rows are only ever inserted. The database refuses UPDATE always, and DELETE
# unless the transaction declared itself a purge (see timeline.services.purging), so
# neither a bug nor a stray script can rewrite the record.
from django.db import migrations

FORWARD = """
CREATE OR REPLACE FUNCTION timeline_event_append_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('memoryhub.timeline_purge', true) = 'on' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'timeline events are append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER timeline_event_append_only BEFORE UPDATE OR DELETE ON timeline_event
    FOR EACH ROW EXECUTE FUNCTION timeline_event_append_only();
"""

BACKWARD = """
DROP TRIGGER IF EXISTS timeline_event_append_only ON timeline_event;
DROP FUNCTION IF EXISTS timeline_event_append_only();
"""


class Migration(migrations.Migration):
    dependencies = [("timeline", "0001_initial")]
    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
