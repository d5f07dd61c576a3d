"""Entries keep their vector in the row, not in the TOAST table.

A row over ~2 kB is toasted, and pgvector stores `vector` as EXTERNAL, so the vector
(1,544 bytes at 384 dimensions, the largest value) was the first to go out of line: any
entry of about 100 characters or more (half of LoCoMo's turns) had its vector read
through the TOAST index and another page by every exact ranking and every score.
MAIN keeps it in the row while the text goes out of line first, and rows up to 8 kB
stay whole (toast_tuple_target), the full-text vector beside them for the keyword leg.

Both are catalog changes, instant on any size of table; rows written before keep their
layout until they are rewritten (VACUUM FULL, or when they change)."""

from django.db import migrations

TABLE = "memory_memoryentry"


class Migration(migrations.Migration):
    dependencies = [("memory", "0007_unindexed_by_user")]

    operations = [
        migrations.RunSQL(
            sql=[
                f"ALTER TABLE {TABLE} ALTER COLUMN embedding SET STORAGE MAIN",
                f"ALTER TABLE {TABLE} SET (toast_tuple_target = 8160)",
            ],
            reverse_sql=[
                f"ALTER TABLE {TABLE} ALTER COLUMN embedding SET STORAGE EXTERNAL",
                f"ALTER TABLE {TABLE} RESET (toast_tuple_target)",
            ],
        ),
    ]
