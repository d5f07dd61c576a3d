"""The Celery app. With REDIS_URL set, tasks go to Redis and run in `celery -A memoryhub
worker` processes; without it they run in this process (memoryhub.core.tasking)."""

import os
from typing import Any

from celery import Celery, signals

from memoryhub.platform import request_id

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

app = Celery("memoryhub")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


# A task runs under the request id of the request that started it (its message header),
# so its log lines can be found with the request's.
@signals.task_prerun.connect
def _bind_request_id(task: Any = None, **_: Any) -> None:
    request = getattr(task, "request", None)
    _tokens[id(request)] = request_id.bind(request_id.from_task_request(request))


@signals.task_postrun.connect
def _unbind_request_id(task: Any = None, **_: Any) -> None:
    token = _tokens.pop(id(getattr(task, "request", None)), None)
    if token is not None:
        try:
            request_id.unbind(token)
        except ValueError:  # bound in another context (a thread that is gone): nothing to undo
            pass


@signals.setup_logging.connect
def _django_logging(**_: Any) -> None:
    """Workers log as the hub does (JSON with the request id, docs/operations/logs-and-metrics.md) instead of Celery's own format."""
    import logging.config

    from django.conf import settings

    logging.config.dictConfig(settings.LOGGING)


_tokens: dict[int, Any] = {}
