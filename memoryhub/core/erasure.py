"""The one door through which append-only rows may be deleted."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection, transaction


@contextmanager
def purging() -> Iterator[None]:
    """Within this block (one transaction) timeline rows may be deleted: the compliance
    purge and the deletion of a whole workspace. Nothing else can: the timeline's
    trigger refuses a DELETE unless this setting is on."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL memoryhub.timeline_purge = 'on'")
        try:
            yield
        finally:
            # Inside an outer transaction SET LOCAL would outlive this block.
            cursor.execute("SET LOCAL memoryhub.timeline_purge = 'off'")
