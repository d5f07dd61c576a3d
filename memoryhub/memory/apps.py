from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memoryhub.memory"
    label = "memory"
    verbose_name = "Long-term memory"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        from memoryhub.memory.vector_index import ensure_vector_index_after_migrate

        post_migrate.connect(ensure_vector_index_after_migrate, sender=self)
