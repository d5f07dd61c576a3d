from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from memoryhub.core.health import run_checks


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    healthy, checks = run_checks()
    return JsonResponse({"status": "ok" if healthy else "unavailable", "checks": checks}, status=200 if healthy else 503)
