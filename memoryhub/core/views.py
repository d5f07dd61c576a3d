from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from memoryhub.core import live
from memoryhub.core.health import run_checks
from memoryhub.core.selectors import memberships_for_user, principal_for_key


def _is_operator(request: HttpRequest) -> bool:
    """An operator's key (Bearer) or console session."""
    scheme, _, credential = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() == "bearer" and credential:
        principal = principal_for_key(credential.strip())
        return principal is not None and principal.is_operator
    return request.user.is_authenticated and bool(memberships_for_user(request.user))


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """Whether each part answers, for anyone (load balancers); what it runs and why it
    failed (versions, exception text) for operators only: to others it maps the attack
    surface."""
    healthy, checks = run_checks()
    body: dict[str, object] = {"status": "ok" if healthy else "unavailable", "checks": checks}
    if _is_operator(request):
        body["live"] = live.held()  # streams and waiters held open by this process
    else:
        body["checks"] = {name: {"ok": check["ok"]} for name, check in checks.items()}
    return JsonResponse(body, status=200 if healthy else 503)
