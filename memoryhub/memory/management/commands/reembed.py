"""`manage.py reembed`: move every stored vector to the configured embedding model."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand

from memoryhub.memory.embeddings import get_provider
from memoryhub.memory.models import MemoryEntry
from memoryhub.memory.services import memory_reembed
from memoryhub.memory.vector_index import ensure_vector_index


class Command(BaseCommand):
    help = "Re-embed memory entries whose vectors come from another model (after changing MEMORYHUB_EMBEDDINGS*)."

    def handle(self, *args: Any, **options: Any) -> None:
        provider = get_provider()
        if ensure_vector_index(provider.dimensions):
            self.stdout.write(f"created the HNSW index for {provider.dimensions} dimensions")
        stale = MemoryEntry.objects.exclude(embedding_model=provider.model_id, embedding_dim=provider.dimensions).count()
        self.stdout.write(f"{stale} entries to re-embed with {provider.model_id}")
        started, done = time.monotonic(), 0
        while True:
            batch = memory_reembed(max_batches=1)
            if not batch:
                break
            done += batch
            self.stdout.write(f"  {done}/{stale} ({done / max(time.monotonic() - started, 1e-6):.0f}/s)")
        self.stdout.write(f"done: {done} re-embedded")
