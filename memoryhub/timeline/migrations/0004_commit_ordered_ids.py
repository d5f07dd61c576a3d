# Timeline ids in commit order, per workspace, so that "everything after id N" is a
# cursor that never skips an event: the live feed replays by it (Last-Event-ID), and
# pollers of the timeline page by it.
#
# A sequence hands out ids in insert order, but transactions commit in another order:
# a reader that has seen id 12 may later find an id 11 that committed after it. So a row
# gets a provisional id on insert (from 2^62 up: above any final id, still increasing,
# so reads inside the writing transaction keep their order), and a deferred constraint
# trigger gives it its final id when its transaction commits, holding a per-workspace
# advisory lock until the commit is visible. Of two transactions recording events in
# one workspace, the second to commit waits for the first and gets the larger ids.
# Transactions without events never take the lock; the wait is only the other commit.
from django.db import migrations

PROVISIONAL_FROM = 2**62
LOCK_CLASS = 1952804453  # the timeline's advisory locks: (class, workspace id)

FORWARD = f"""
CREATE SEQUENCE timeline_event_final_id AS bigint;
SELECT setval('timeline_event_final_id', COALESCE((SELECT max(id) FROM timeline_event), 0) + 1, false);
ALTER TABLE timeline_event ALTER COLUMN id RESTART WITH {PROVISIONAL_FROM};

CREATE OR REPLACE FUNCTION timeline_event_append_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('memoryhub.timeline_purge', true) = 'on' THEN
        RETURN OLD;
    END IF;
    -- The one update allowed: the commit trigger giving a row its final id.
    IF TG_OP = 'UPDATE' AND OLD.id >= {PROVISIONAL_FROM} AND NEW.id < {PROVISIONAL_FROM}
       AND to_jsonb(OLD) - 'id' = to_jsonb(NEW) - 'id' THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'timeline events are append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION timeline_event_commit_order() RETURNS trigger AS $$
BEGIN
    PERFORM pg_advisory_xact_lock({LOCK_CLASS}, NEW.workspace_id::int);
    UPDATE timeline_event SET id = nextval('timeline_event_final_id') WHERE id = NEW.id;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE CONSTRAINT TRIGGER timeline_event_commit_order AFTER INSERT ON timeline_event
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION timeline_event_commit_order();
"""

BACKWARD = f"""
DROP TRIGGER IF EXISTS timeline_event_commit_order ON timeline_event;
DROP FUNCTION IF EXISTS timeline_event_commit_order();
CREATE OR REPLACE FUNCTION timeline_event_append_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('memoryhub.timeline_purge', true) = 'on' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'timeline events are append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
DO $$
BEGIN
    EXECUTE format('ALTER TABLE timeline_event ALTER COLUMN id RESTART WITH %s',
                   COALESCE((SELECT max(id) FROM timeline_event WHERE id < {PROVISIONAL_FROM}), 0) + 1);
END $$;
DROP SEQUENCE IF EXISTS timeline_event_final_id;
"""


class Migration(migrations.Migration):
    dependencies = [("timeline", "0003_alter_event_options")]
    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
