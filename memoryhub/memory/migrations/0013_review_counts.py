"""Two small partial indexes for what every console page counts (the sidebar's "Review"
badge) and the Review page's tabs (`bench review`, issue 40: ≤ 150 ms at 1M entries).

- memory_held_for_review: the flagged and quarantined entries with their expiry and id,
  so that counting the live ones is an index-only scan. Through memory_review_queue each
  counted entry was a read of its row for `expires_at`: 20,088 pages, 35-80 ms at 1M
  entries (2% held), twice a Review page; 180 pages and 5.6 ms with this one.
- memory_invalidated: the superseded entries alone (a merged duplicate, a replaced fact),
  which `duplicates.current_pairs` leaves out by looking them up here instead of reading
  both entries of every pair: 30-70 ms for 3,334 pairs, 1.8 ms with it.

Partial on rows few in a hub, so each holds a small share of the table; built in about a
second each at 1M entries. Raw SQL: they serve query shapes of the selectors and are not
part of the model's declared indexes."""

from django.db import migrations

FORWARD = [
    "CREATE INDEX IF NOT EXISTS memory_held_for_review ON memory_memoryentry (workspace_id, review) INCLUDE (expires_at, id) "
    "WHERE review IN ('flagged', 'quarantined')",
    "CREATE INDEX IF NOT EXISTS memory_invalidated ON memory_memoryentry (id) WHERE invalidated_at IS NOT NULL",
]
BACKWARD = ["DROP INDEX IF EXISTS memory_held_for_review", "DROP INDEX IF EXISTS memory_invalidated"]


class Migration(migrations.Migration):
    dependencies = [("memory", "0012_graph")]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
