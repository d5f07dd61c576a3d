"""The Celery app. With REDIS_URL set, tasks go to Redis and run in `celery -A memoryhub
worker` processes; without it they run in this process (memoryhub.core.tasking)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

app = Celery("memoryhub")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
