"""Writes of the privacy policy: pseudonymous user hashes, blocks, retention limits."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable

from django.db import transaction

from memoryhub.core.audit import audit_record
from memoryhub.core.errors import ApplicationError, Forbidden
from memoryhub.core.models import Membership, Workspace
from memoryhub.core.selectors import operator_actor
from memoryhub.privacy.models import RETENTION_RULES, BlockedUser, RetentionKind, RetentionPolicy
from memoryhub.privacy.redaction import pseudonym_key
from memoryhub.privacy.selectors import retention_policies


def user_hash(*, workspace_id: int, user_id: str) -> str:
    """A keyed hash: proves which user a receipt is about to whoever knows the user_id,
    reveals nothing to whoever does not."""
    key = pseudonym_key(workspace_id, purpose="purge")
    return hmac.new(key, user_id.encode(), hashlib.sha256).hexdigest()


def ensure_not_blocked(*, workspace_id: int, user_id: str) -> None:
    """Every service that creates records about a user calls this first."""
    ensure_none_blocked(workspace_id=workspace_id, user_ids=[user_id])


def ensure_none_blocked(*, workspace_id: int, user_ids: Iterable[str]) -> None:
    """`ensure_not_blocked` for the users of a batch, in one query (a batch of 500 entries
    about 50 users made 50)."""
    hashes = {user_hash(workspace_id=workspace_id, user_id=user_id) for user_id in user_ids}
    if hashes and BlockedUser.objects.filter(workspace_id=workspace_id, user_hash__in=hashes).exists():
        raise Forbidden("This user was purged and new records about them are blocked.", code="USER_PURGED")


def user_block(*, workspace: Workspace, user_hash_value: str, purge_id: int | None) -> BlockedUser:
    """Block new records about a user (idempotent: an existing block is kept as it is)."""
    block, _ = BlockedUser.objects.get_or_create(workspace=workspace, user_hash=user_hash_value, defaults={"purge_id": purge_id})
    return block


def block_lift(*, membership: Membership, user_hash_value: str) -> bool:
    workspace = membership.workspace
    with transaction.atomic():
        deleted, _ = BlockedUser.objects.filter(workspace=workspace, user_hash=user_hash_value).delete()
        if deleted:
            audit_record(action="block_lifted", actor=operator_actor(membership.user), workspace=workspace, details={"user_hash": user_hash_value})
    return bool(deleted)


def retention_policy_set(*, membership: Membership, kind: str, value: int | None) -> RetentionPolicy | None:
    """Set a workspace's limit for one kind. Saving the value already in force writes
    nothing: a workspace keeps following the deployment's default until it departs."""
    if kind not in RetentionKind.values:
        raise ApplicationError(f"Unknown kind {kind!r}.", code="INVALID_RETENTION_KIND", details={"kinds": RetentionKind.values})
    largest = RETENTION_RULES[kind][2]
    if value is not None and not 1 <= value <= largest:
        raise ApplicationError(f"A {kind} limit is between 1 and {largest}.", code="INVALID_RETENTION_VALUE", details={"max": largest})
    if value is None and kind in (RetentionKind.CHECKPOINTS, RetentionKind.WORKING_MEMORIES):
        raise ApplicationError("This kind always has a limit.", code="INVALID_RETENTION_VALUE")
    workspace = membership.workspace
    with transaction.atomic():
        before = retention_policies(workspace_id=workspace.pk)[kind]
        if before == value:
            return RetentionPolicy.objects.filter(workspace=workspace, kind=kind).first()
        policy, _ = RetentionPolicy.objects.update_or_create(
            workspace=workspace, kind=kind, defaults={"value": value, "updated_by": membership.user}
        )
        audit_record(
            action="retention_changed", actor=operator_actor(membership.user), workspace=workspace, target=kind,
            details={"from": before, "to": value},
        )
    return policy


def retention_policies_set(*, membership: Membership, policies: dict[str, int | None]) -> None:
    """Set several limits at once, all or nothing (an unknown kind changes none)."""
    unknown = sorted(set(policies) - set(RETENTION_RULES))
    if unknown:
        raise ApplicationError(f"Unknown kind(s): {', '.join(unknown)}.", code="INVALID_RETENTION_KIND", details={"kinds": list(RETENTION_RULES)})
    with transaction.atomic():
        for kind, value in policies.items():
            retention_policy_set(membership=membership, kind=kind, value=value)
