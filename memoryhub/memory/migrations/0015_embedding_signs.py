"""Each entry keeps the signs of its vector (`binary_quantize`, as bytes: 48 at 384
dimensions), for a batch's duplicate lookup (memoryhub.memory.duplicates, `bench duplicates`).

The lookup reads every compared entry's signs, thousands a batch; computed from the vector
at read time they were a third of that read. A column of the database's own, not of the
model: a trigger fills it on every insert and every change of the vector, so no write path
(the ORM, COPY, imports, restores) can forget it, and no reader of the model carries it.
Added empty, without rewriting the table (and its HNSW index): rows written before it are
read through their vector until they change (`COALESCE` in the lookup).
"""

from django.db import migrations

TABLE = "memory_memoryentry"

FORWARD = f"""
ALTER TABLE {TABLE} ADD COLUMN embedding_signs bytea;
CREATE FUNCTION memory_embedding_signs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.embedding_signs := substring(varbit_send(binary_quantize(NEW.embedding)) FROM 5);
    RETURN NEW;
END $$;
CREATE TRIGGER memory_embedding_signs BEFORE INSERT OR UPDATE OF embedding ON {TABLE}
    FOR EACH ROW EXECUTE FUNCTION memory_embedding_signs();
"""

BACKWARD = f"""
DROP TRIGGER memory_embedding_signs ON {TABLE};
DROP FUNCTION memory_embedding_signs();
ALTER TABLE {TABLE} DROP COLUMN embedding_signs;
"""


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0014_graph_indexes_by_user_and_predicate'),
    ]

    operations = [
        migrations.RunSQL(FORWARD, BACKWARD),
    ]
