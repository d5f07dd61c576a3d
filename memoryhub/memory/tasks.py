from __future__ import annotations

from celery import shared_task

from memoryhub.memory import services
from memoryhub.memory.vector_index import index_pending_vectors, user_vector_indexes_refresh


@shared_task
def reembed() -> int:
    # Bounded per run so one run never holds a worker for long; the schedule comes back.
    return services.memory_reembed(max_batches=20)


@shared_task
def index_vectors() -> int:
    return index_pending_vectors()


@shared_task
def index_heavy_users() -> dict[str, int]:
    return user_vector_indexes_refresh()
