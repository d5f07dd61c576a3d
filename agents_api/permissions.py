from __future__ import annotations

from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from memoryhub.core.models import Role


class OperatorRole(BasePermission):
    """Operators whose role allows `required_role` (admins always). Agents: 403."""

    required_role: str = Role.VIEWER
    message = "This needs an operator key."

    def has_permission(self, request: Request, view: APIView) -> bool:
        principal = request.user
        if principal is None or not getattr(principal, "is_operator", False):
            return False
        if not principal.allows(self.required_role):
            self.message = f"This needs an operator with the {self.required_role} role."
            return False
        return True


def operator_with_role(role: str) -> type[OperatorRole]:
    return type(f"Operator{role.title()}", (OperatorRole,), {"required_role": role})
