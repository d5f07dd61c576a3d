"""The hub's own work on stored entries: expired ones deleted, vectors of an older model
made again."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from memoryhub.memory.embeddings import get_provider
from memoryhub.memory.models import MemoryEntry
from memoryhub.memory.services.rows import index_soon
from memoryhub.usage import metering


def memory_sweep_expired(*, batch_size: int = 5000) -> dict[int, int]:
    """Delete expired entries for real; how many per workspace (the retention job
    records the counts)."""
    now = timezone.now()
    deleted: dict[int, int] = {}
    while True:
        batch = list(MemoryEntry.objects.filter(expires_at__lte=now).values_list("pk", "workspace_id")[:batch_size])
        if not batch:
            break
        with transaction.atomic():
            MemoryEntry.objects.filter(pk__in=[pk for pk, _ in batch], expires_at__lte=now).delete()
        for _, workspace_id in batch:
            deleted[workspace_id] = deleted.get(workspace_id, 0) + 1
    return deleted


def memory_reembed(*, batch_size: int = 256, max_batches: int | None = None) -> int:
    """Move vectors of an older model (or missing vectors) to the current one.

    The HNSW index of a new dimension is made by `migrate` or `manage.py reembed`, not
    here: building it is heavy and must not run inside a periodic job's transaction."""
    provider = get_provider()
    done = 0
    batches = 0
    while max_batches is None or batches < max_batches:
        stale = list(
            MemoryEntry.objects.exclude(embedding_model=provider.model_id, embedding_dim=provider.dimensions)
            .order_by("pk")
            .values_list("pk", "content", "version")[:batch_size]
        )
        if not stale:
            break
        with metering.hub_work():  # the hub's own cost of a model change, no workspace's
            vectors = provider.embed([content for _, content, _ in stale])
        with transaction.atomic():
            for (pk, _, version), vector in zip(stale, vectors, strict=True):
                # Conditional on the version: an entry edited meanwhile keeps its newer vector.
                MemoryEntry.objects.filter(pk=pk, version=version).update(
                    embedding=vector, embedding_model=provider.model_id, embedding_dim=provider.dimensions, vector_indexed=False
                )
        done += len(stale)
        batches += 1
    if done:
        index_soon()
    return done
