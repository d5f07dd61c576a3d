"""WSGI entry point, for tooling only: the hub is served under ASGI (memoryhub.asgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

application = get_wsgi_application()
