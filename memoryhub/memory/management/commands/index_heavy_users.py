"""`manage.py index_heavy_users`: build (and drop) end users' own indexes now, rather than
at the schedule's next run; after a bulk import, say."""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from memoryhub.memory.models import UserVectorIndex
from memoryhub.memory.vector_index import user_vector_indexes_refresh


class Command(BaseCommand):
    help = "Give end users with MEMORYHUB_USER_INDEX_MIN_ROWS entries or more indexes of their own now (the schedule does every 10 min)."

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(f"users with {settings.MEMORYHUB_USER_INDEX_MIN_ROWS:,} entries or more get indexes of their own")
        started = time.monotonic()
        done = user_vector_indexes_refresh()
        self.stdout.write(
            f"built {done['built']}, dropped {done['dropped']} in {time.monotonic() - started:.1f} s; "
            f"users with indexes of their own: {UserVectorIndex.objects.count()}"
        )
