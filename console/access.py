"""Who may see which console page: a logged-in operator, in a workspace, with a role."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from memoryhub.core.models import Membership, Role
from memoryhub.core.selectors import memberships_for_user
from memoryhub.usage import metering

SESSION_WORKSPACE_KEY = "memoryhub_workspace_id"


def current_membership(request: HttpRequest) -> Membership | None:
    if not request.user.is_authenticated:
        return None
    memberships = memberships_for_user(request.user)
    wanted = request.session.get(SESSION_WORKSPACE_KEY)
    return next((m for m in memberships if m.workspace_id == wanted), memberships[0] if memberships else None)


def operator_required(role: str = Role.VIEWER) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """Sets request.membership; 403 when the operator's role does not allow `role`."""

    def decorator(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @login_required
        @wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            membership = current_membership(request)
            if membership is None:
                return render(request, "console/no_workspace.html", status=403)
            if not membership.allows(role):
                raise PermissionDenied(f"This needs the {role} role.")
            request.membership = membership  # type: ignore[attr-defined]
            # The model calls a page makes (a search by meaning) are the workspace's, metered
            # and held to its budget as its agents' are.
            with metering.attributed(workspace_id=membership.workspace_id):
                return view(request, *args, **kwargs)

        return wrapper

    return decorator


