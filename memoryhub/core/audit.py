"""The audit log: purges, retention policy changes, logins and key changes.

Appended in the same transaction as the change it records, so neither exists without
the other; never updated or deleted: a database trigger, installed after every migrate,
refuses UPDATE and DELETE. (TRUNCATE is left to the database owner: the test suite
empties tables with it between tests.)"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.signals import user_logged_in, user_logged_out, user_login_failed
from django.db import connection
from django.http import HttpRequest
from django.utils import timezone

from memoryhub.core.login_limits import count_failure
from memoryhub.core.models import AuditEntry, Workspace
from memoryhub.core.selectors import operator_actor


def audit_record(
    *, action: str, actor: str, workspace: Workspace | None = None, target: str = "", details: dict[str, Any] | None = None,
    ip: str | None = None,
) -> AuditEntry:
    return AuditEntry.objects.create(
        workspace_id=workspace.pk if workspace else None, workspace_slug=workspace.slug if workspace else "", actor=actor[:200],
        action=action, target=target[:200], details=details or {}, ip=ip,
    )


def _client_ip(request: HttpRequest | None) -> str | None:
    # REMOTE_ADDR only: a forwarded-for header is whatever the client says it is.
    return request.META.get("REMOTE_ADDR") if request is not None else None


def _on_login(sender: Any, request: HttpRequest, user: Any, **_: Any) -> None:
    audit_record(action="login", actor=operator_actor(user), ip=_client_ip(request))


def _on_logout(sender: Any, request: HttpRequest, user: Any, **_: Any) -> None:
    if user is not None:
        audit_record(action="logout", actor=operator_actor(user), ip=_client_ip(request))


def _on_login_failed(sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **_: Any) -> None:
    """The first failed login of each address and minute: the append-only log must not
    grow with every guess of an attacker (django-axes keeps each attempt, and sweeps
    them after MEMORYHUB_LOGIN_LOG_RETENTION_DAYS)."""
    ip = _client_ip(request)
    minute = timezone.now().replace(second=0, microsecond=0)
    if AuditEntry.objects.filter(action="login_failed", ip=ip, created_at__gte=minute).exists():
        return
    # The username tried is kept (an auditor looks for guessing); the password never is.
    username = str(credentials.get("username", ""))[:150]
    audit_record(action="login_failed", actor=f"anonymous:{username}", ip=ip, details={"first_of_minute": True})


def connect_signals() -> None:
    user_logged_in.connect(_on_login, dispatch_uid="memoryhub-audit-login")
    user_logged_out.connect(_on_logout, dispatch_uid="memoryhub-audit-logout")
    user_login_failed.connect(_on_login_failed, dispatch_uid="memoryhub-audit-login-failed")
    user_login_failed.connect(count_failure, dispatch_uid="memoryhub-login-address-limit")


APPEND_ONLY_GUARD = f"""
CREATE OR REPLACE FUNCTION memoryhub_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the audit log is append-only' USING ERRCODE = 'MH403';
END $$;
DROP TRIGGER IF EXISTS memoryhub_audit_append_only ON {AuditEntry._meta.db_table};
CREATE TRIGGER memoryhub_audit_append_only BEFORE UPDATE OR DELETE ON {AuditEntry._meta.db_table}
    FOR EACH ROW EXECUTE FUNCTION memoryhub_audit_append_only();
"""


def install_append_only_guard(**_: Any) -> None:
    """post_migrate: (re)create the trigger that keeps the audit log append-only."""
    if AuditEntry._meta.db_table not in connection.introspection.table_names():
        return  # migrating towards an older state
    with connection.cursor() as cursor:
        cursor.execute(APPEND_ONLY_GUARD)
