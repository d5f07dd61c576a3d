"""Writes for tenancy and identities."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import IntegrityError, transaction
from django.utils import timezone

from memoryhub.core import live
from memoryhub.core.audit import audit_record
from memoryhub.core.errors import ApplicationError
from memoryhub.core.journal import KEY_REVOKED, MEMBERSHIP_REMOVED, Withdrawal, withdrawal_record
from memoryhub.core.keys import AGENT_KEY_KIND, OPERATOR_KEY_KIND, generate_key
from memoryhub.core.models import Agent, AgentKey, ApiKey, Membership, OperatorKey, Role, Store, Workspace
from memoryhub.core.selectors import agent_actor, operator_actor


def _slug(value: str, *, what: str) -> str:
    try:
        validate_slug(value)
    except ValidationError as exc:
        raise ApplicationError(
            f"{what} must use letters, numbers, underscores or hyphens.", code="INVALID_NAME", details={what: value}
        ) from exc
    if len(value) > 64:
        raise ApplicationError(f"{what} must be at most 64 characters.", code="INVALID_NAME", details={what: value})
    return value


def _get_or_create(model: type, **lookup: object) -> object:
    # get_or_create can race with another process creating the same row; the unique
    # constraint decides and the loser reads the winner's row.
    try:
        with transaction.atomic():
            obj, _ = model.objects.get_or_create(**lookup)
            return obj
    except IntegrityError:
        return model.objects.get(**lookup)


def workspace_get_or_create(*, slug: str) -> Workspace:
    return _get_or_create(Workspace, slug=_slug(slug, what="workspace"))  # type: ignore[return-value]


def store_get_or_create(*, workspace: Workspace, name: str) -> Store:
    return _get_or_create(Store, workspace=workspace, name=_slug(name, what="store"))  # type: ignore[return-value]


def agent_get_or_create(*, workspace: Workspace, name: str, stores: list[Store] | None = None) -> Agent:
    agent: Agent = _get_or_create(Agent, workspace=workspace, name=_slug(name, what="agent"))  # type: ignore[assignment]
    for store in stores or []:
        if store.workspace_id != workspace.pk:
            raise ApplicationError("A store of another workspace cannot be attached.", code="CROSS_WORKSPACE")
        agent.stores.add(store)
    return agent


def _audit_key(*, action: str, key: ApiKey, actor: str) -> None:
    if isinstance(key, AgentKey):
        workspace, owner = key.agent.workspace, agent_actor(key.agent)
    else:
        workspace, owner = key.membership.workspace, operator_actor(key.membership.user)
    audit_record(
        action=action, actor=actor, workspace=workspace, target=f"{key.prefix}",
        details={"owner": owner, "label": key.label, "expires_at": key.expires_at.isoformat() if key.expires_at else None},
    )


def _key_expiry(expires_at: datetime | None) -> datetime:
    """Every key expires, at the latest MEMORYHUB_KEY_MAX_DAYS after it is issued."""
    latest = timezone.now() + timedelta(days=settings.MEMORYHUB_KEY_MAX_DAYS)
    if expires_at is None:
        return latest
    if expires_at > latest:
        raise ApplicationError(
            f"A key lives at most {settings.MEMORYHUB_KEY_MAX_DAYS} days.", code="KEY_LIFETIME",
            details={"max_days": settings.MEMORYHUB_KEY_MAX_DAYS},
        )
    return expires_at


def agent_key_issue(*, agent: Agent, label: str = "", expires_at: datetime | None = None, actor: str = "system") -> tuple[AgentKey, str]:
    """Create a key for `agent`; the plaintext is returned once and never stored."""
    expires_at = _key_expiry(expires_at)
    new = generate_key(AGENT_KEY_KIND)
    with transaction.atomic():
        key = AgentKey.objects.create(agent=agent, prefix=new.prefix, key_hash=new.digest, label=label, expires_at=expires_at)
        _audit_key(action="key_created", key=key, actor=actor)
    return key, new.plaintext


def agent_key_provision(
    *, workspace: Workspace, store: str, agent: str, label: str = "", expires_at: datetime | None = None, actor: str,
) -> tuple[AgentKey, str]:
    """A key for agent `agent` attached to store `store`, both created if missing: the
    one way keys are issued (the issue_key command, the keys API, the console). All or
    nothing, and audited."""
    with transaction.atomic():
        attached = store_get_or_create(workspace=workspace, name=store)
        owner = agent_get_or_create(workspace=workspace, name=agent, stores=[attached])
        return agent_key_issue(agent=owner, label=label, expires_at=expires_at, actor=actor)


def operator_get_or_create(*, username: str, workspace: Workspace, role: str | None = None) -> Membership:
    """The operator account and its membership in `workspace`; `role` updates an existing one."""
    if role is not None and role not in Role.values:
        raise ApplicationError(f"Unknown role {role!r}.", code="INVALID_ROLE", details={"roles": Role.values})
    user_model = get_user_model()
    user: AbstractBaseUser = _get_or_create(user_model, username=username)  # type: ignore[assignment]
    if user.password == "":
        # Created just now: no password until the operator sets one (`changepassword`).
        user.set_unusable_password()
        user.save(update_fields=["password"])
    membership: Membership = _get_or_create(Membership, user=user, workspace=workspace)  # type: ignore[assignment]
    if role is not None and membership.role != role:
        membership.role = role
        membership.save(update_fields=["role"])
    return membership


def operator_key_issue(
    *, membership: Membership, label: str = "", expires_at: datetime | None = None, actor: str = "system"
) -> tuple[OperatorKey, str]:
    expires_at = _key_expiry(expires_at)
    new = generate_key(OPERATOR_KEY_KIND)
    with transaction.atomic():
        key = OperatorKey.objects.create(
            membership=membership, prefix=new.prefix, key_hash=new.digest, label=label, expires_at=expires_at
        )
        _audit_key(action="key_created", key=key, actor=actor)
    return key, new.plaintext


def api_key_revoke(*, key: ApiKey, actor: str = "system") -> bool:
    """Revoke `key`. Conditional on it being live, so two revokes record one time."""
    now = timezone.now()
    with transaction.atomic():
        updated = type(key).objects.filter(pk=key.pk, revoked_at__isnull=True).update(revoked_at=now)
        if updated:
            key.revoked_at = now
            _audit_key(action="key_revoked", key=key, actor=actor)
            live.publish(groups=[live.key_group(key)], message={"revoked": "key revoked"})
            withdrawal_record(kind=KEY_REVOKED, id=key.pk, key=key._meta.model_name, prefix=key.prefix)
    return bool(updated)


def withdrawals_reapply(*, withdrawals: list[Withdrawal], source: str) -> int:
    """After a restore: take away again the access withdrawn since the backup (revoked
    keys, removed memberships, changed roles, in the order they happened). Audited; how
    many applied."""
    applied = 0
    now = timezone.now()
    for withdrawal in withdrawals:
        with transaction.atomic():
            if withdrawal.kind == KEY_REVOKED:
                model = AgentKey if withdrawal.details.get("key") == AgentKey._meta.model_name else OperatorKey
                changed = model.objects.filter(pk=withdrawal.id, prefix=withdrawal.details.get("prefix"), revoked_at__isnull=True).update(revoked_at=now)
                target = str(withdrawal.details.get("prefix"))
            elif withdrawal.kind == MEMBERSHIP_REMOVED:
                changed, _ = Membership.objects.filter(
                    pk=withdrawal.id, user_id=withdrawal.details.get("user_id"), workspace_id=withdrawal.details.get("workspace_id"),
                ).delete()
                target = f"membership:{withdrawal.id}"
            else:
                changed = Membership.objects.filter(pk=withdrawal.id).exclude(role=withdrawal.details.get("role")).update(
                    role=withdrawal.details.get("role"),
                )
                target = f"membership:{withdrawal.id}"
            if changed:
                applied += 1
                audit_record(action=withdrawal.kind, actor="system", target=target, details={**withdrawal.details, "reapplied_after_restore": source})
    return applied


def workspace_redaction_set(*, membership: Membership, redact_messages: bool, redact_memories: bool) -> None:
    """Extend redaction to messages and memories (or not): audited, like every change of
    what the hub keeps about people."""
    workspace = membership.workspace
    before = {"redact_messages": workspace.redact_messages, "redact_memories": workspace.redact_memories}
    after = {"redact_messages": redact_messages, "redact_memories": redact_memories}
    if before == after:
        return
    with transaction.atomic():
        Workspace.objects.filter(pk=workspace.pk).update(**after)
        audit_record(
            action="redaction_changed", actor=operator_actor(membership.user), workspace=workspace, details={"from": before, "to": after}
        )
    workspace.redact_messages, workspace.redact_memories = redact_messages, redact_memories
