"""A membership changed, however it changed (the admin, a shell, a service): the streams
opened through it end at once (memoryhub/core/live.py), and the journal remembers it, so
that a restored backup does not bring the old access back (memoryhub/core/journal.py)."""

from __future__ import annotations

from typing import Any

from memoryhub.core import live
from memoryhub.core.journal import MEMBERSHIP_REMOVED, ROLE_CHANGED, withdrawal_record


def role_remembered(sender: Any, instance: Any, raw: bool = False, **_: Any) -> None:
    """pre_save: the role as stored, for `saved` to compare."""
    if not raw and instance.pk is not None:
        instance._stored_role = type(instance).objects.filter(pk=instance.pk).values_list("role", flat=True).first()


def saved(sender: Any, instance: Any, created: bool, raw: bool = False, **_: Any) -> None:
    """post_save: a new role ends the streams opened with the old one."""
    if not raw and not created and getattr(instance, "_stored_role", instance.role) != instance.role:
        live.publish(groups=[live.membership_group(instance.pk)], message={"revoked": "role changed"})
        withdrawal_record(kind=ROLE_CHANGED, id=instance.pk, role=instance.role)


def deleted(sender: Any, instance: Any, **_: Any) -> None:
    """post_delete: an operator removed from a workspace sees nothing more of it."""
    live.publish(groups=[live.membership_group(instance.pk)], message={"revoked": "membership removed"})
    withdrawal_record(kind=MEMBERSHIP_REMOVED, id=instance.pk, user_id=instance.user_id, workspace_id=instance.workspace_id)
