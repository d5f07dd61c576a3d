"""The purge fence: writes about a user being erased are refused.

A write about end user U that is in flight when U's purge starts must
not survive the purge, and a write that starts while the purge runs must be refused.
Every table with a user_id gets an AFTER INSERT statement trigger that, inside the
writing transaction, takes a *shared* advisory lock on (workspace, user_id) and then
looks for a live purge of that user. The purge, once its request is committed, takes
the same lock *exclusively* before deleting anything: that waits for every writer that
got past the check before the request existed, so their rows are committed (and then
deleted) before the purge reads. A writer that checks later sees the request and fails
with SQLSTATE MH409 (PURGE_IN_PROGRESS), rolling back its whole transaction; one that
cannot have its shared lock at once (a purge holds or awaits the exclusive one) looks
for the purge first, and is refused without waiting if it is its user's.
Triggers are installed after every migrate for every model user_models() finds, so a
new model is fenced without anyone remembering to.

The trigger reads the purge table (compliance_purgerequest) by name: the purge job
lives in a higher layer, the promise that nothing is written about a user while it
runs is this layer's.
"""

from __future__ import annotations

from typing import Any

from django.db import connection

from memoryhub.core.registry import user_field, user_models

PURGE_IN_PROGRESS_SQLSTATE = "MH409"
LOCK_CLASS = 7243  # first key of the two-key advisory lock: the purge fence's namespace


# A purge of the trigger's current target that is not finished (its request commits
# before the purge takes the lock).
LIVE_PURGE = """
    SELECT 1 FROM compliance_purgerequest p
    WHERE p.workspace_id = target.workspace_id AND p.pending_user_id = target.user_id
      AND p.status IN ('queued', 'running') AND NOT p.dry_run"""


# The last (workspace, user) key this transaction passed the fence with: a statement that
# writes two rows about one user (a checkpoint and its timeline event) checks once. Local
# to the transaction, and undone with a rolled-back savepoint, as the lock it stands for.
FENCED_SETTING = "memoryhub.fenced_user"


REFUSE = f"RAISE EXCEPTION 'records about this user are being purged' USING ERRCODE = '{PURGE_IN_PROGRESS_SQLSTATE}';"


def _fence_function(name: str, targets: str) -> str:
    """The trigger function for tables whose rows name their user as `targets` selects."""
    return f"""
CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    target record;
    key integer;
    fenced text := current_setting('{FENCED_SETTING}', true);
BEGIN
    FOR target IN {targets} LOOP
        key := hashtext(target.workspace_id::text || ':' || target.user_id);
        IF fenced = key::text THEN
            -- Checked already in this transaction, whose shared lock a later purge waits
            -- for: it then deletes this row with the others (see the module's docstring).
            CONTINUE;
        END IF;
        IF NOT pg_try_advisory_xact_lock_shared({LOCK_CLASS}, key) THEN
            -- A purge holds the exclusive lock or waits for it, and a waiting one queues
            -- every later shared lock behind it: without this check a write about its
            -- user would hang until the writes in flight end, to be refused then.
            IF EXISTS ({LIVE_PURGE}) THEN
                {REFUSE}
            END IF;
            PERFORM pg_advisory_xact_lock_shared({LOCK_CLASS}, key);
        END IF;
        IF EXISTS ({LIVE_PURGE}) THEN
            {REFUSE}
        END IF;
        fenced := key::text;
        PERFORM set_config('{FENCED_SETTING}', fenced, true);
    END LOOP;
    RETURN NULL;
END $$;
"""


# Rows about one user (`user_id`), and rows about several (`user_ids`, core.registry).
FENCE_FUNCTIONS = {
    "user_id": ("memoryhub_purge_fence", "SELECT DISTINCT workspace_id, user_id FROM fenced_rows WHERE user_id <> ''"),
    "user_ids": (
        "memoryhub_purge_fence_many",
        "SELECT DISTINCT workspace_id, unnest(user_ids) AS user_id FROM fenced_rows",
    ),
}


def fence_lock_sql() -> str:
    return f"SELECT pg_advisory_xact_lock({LOCK_CLASS}, hashtext(%s::text || ':' || %s))"


def install(**_: Any) -> None:
    """post_migrate: (re)create the fence on every user_id table."""
    if "compliance_purgerequest" not in connection.introspection.table_names():
        return  # migrating towards an older state
    with connection.cursor() as cursor:
        for name, targets in FENCE_FUNCTIONS.values():
            cursor.execute(_fence_function(name, targets))
        for model in user_models():
            table = connection.ops.quote_name(model._meta.db_table)
            function = FENCE_FUNCTIONS[user_field(model)][0]
            cursor.execute(
                f"CREATE OR REPLACE TRIGGER memoryhub_purge_fence AFTER INSERT ON {table} "
                f"REFERENCING NEW TABLE AS fenced_rows FOR EACH STATEMENT EXECUTE FUNCTION {function}()"
            )


def fenced_tables() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT tgrelid::regclass::text FROM pg_trigger WHERE tgname = 'memoryhub_purge_fence'")
        return {row[0].strip('"') for row in cursor.fetchall()}
