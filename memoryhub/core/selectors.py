"""Reads for tenancy and identities."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from django.utils import timezone

from memoryhub.core.keys import AGENT_KEY_KIND, digest_matches, parse_key
from memoryhub.core.models import Agent, AgentKey, ApiKey, Membership, OperatorKey, Role, Store, Workspace
from memoryhub.core.pagination import Page, keyset_page

# Recording every use would turn each read request into a write; a coarse timestamp is
# all operators need to spot unused keys.
LAST_USED_RESOLUTION = timedelta(minutes=5)


def agent_actor(agent: Agent) -> str:
    """How the timeline and the audit log name an agent."""
    return f"agent:{agent.name}"


def operator_actor(user: object | None) -> str:
    """How the timeline and the audit log name an operator (no one: the system)."""
    return f"operator:{user.get_username()}" if user is not None else "system"  # type: ignore[attr-defined]


@dataclass
class Principal:
    """Who is calling the API: an agent or an operator, always inside one workspace."""

    kind: str
    workspace: Workspace
    key: ApiKey | None = None  # None for operators in the console (session login)
    agent: Agent | None = None
    membership: Membership | None = None
    stores: list[Store] = field(default_factory=list)
    is_authenticated: bool = True

    @property
    def is_agent(self) -> bool:
        return self.kind == "agent"

    @property
    def is_operator(self) -> bool:
        return self.kind == "operator"

    @property
    def role(self) -> str | None:
        return self.membership.role if self.membership else None

    @property
    def actor(self) -> str:
        """How the timeline and the audit log name this caller."""
        if self.agent is not None:
            return agent_actor(self.agent)
        return operator_actor(self.membership.user if self.membership else None)

    def allows(self, required_role: str) -> bool:
        return self.membership is not None and self.membership.allows(required_role)


def principal_for_key(plaintext: str) -> Principal | None:
    """The principal a presented key stands for, or None if unknown, revoked or expired."""
    parsed = parse_key(plaintext)
    if parsed is None:
        return None
    if parsed.kind == AGENT_KEY_KIND:
        agent_key = AgentKey.objects.usable().select_related("agent__workspace").filter(prefix=parsed.prefix).first()
        if agent_key is None or not digest_matches(plaintext, agent_key.key_hash):
            return None
        _touch(agent_key)
        agent = agent_key.agent
        return Principal(
            kind="agent", workspace=agent.workspace, key=agent_key, agent=agent, stores=list(agent.stores.order_by("name"))
        )
    operator_key = (
        OperatorKey.objects.usable()
        .select_related("membership__workspace", "membership__user")
        .filter(prefix=parsed.prefix, membership__user__is_active=True)
        .first()
    )
    if operator_key is None or not digest_matches(plaintext, operator_key.key_hash):
        return None
    _touch(operator_key)
    membership = operator_key.membership
    return Principal(
        kind="operator",
        workspace=membership.workspace,
        key=operator_key,
        membership=membership,
        stores=list(Store.objects.filter(workspace=membership.workspace).order_by("name")),
    )


def _touch(key: ApiKey) -> None:
    now = timezone.now()
    if key.last_used_at is None or now - key.last_used_at > LAST_USED_RESOLUTION:
        type(key).objects.filter(pk=key.pk).update(last_used_at=now)


def principal_for_membership(membership: Membership) -> Principal:
    """The console's operator, seen as an API principal, so pages and API share selectors."""
    return Principal(
        kind="operator",
        workspace=membership.workspace,
        membership=membership,
        stores=list(Store.objects.filter(workspace=membership.workspace).order_by("name")),
    )


def memberships_for_user(user: object) -> list[Membership]:
    return list(Membership.objects.filter(user=user).select_related("workspace").order_by("workspace__slug"))


def agents_with_keys(*, workspace: Workspace) -> list[Agent]:
    return list(
        Agent.objects.filter(workspace=workspace)
        .prefetch_related("stores", "keys")
        .order_by("name")
    )


def operator_keys(*, membership: Membership) -> list[OperatorKey]:
    return list(OperatorKey.objects.filter(membership=membership).order_by("-created_at"))


def agent_keys_page(*, workspace: Workspace, cursor: str | None, limit: int) -> Page[AgentKey]:
    """The workspace's agent keys in the order they were issued."""
    keys = AgentKey.objects.filter(agent__workspace=workspace).select_related("agent").prefetch_related("agent__stores")
    return keyset_page(keys, key="id", cursor=cursor, limit=limit)


def key_for_revocation(*, principal: Principal, prefix: str) -> ApiKey | None:
    """The key `principal` may revoke under this prefix, or None."""
    if principal.membership is None:
        return None
    own = OperatorKey.objects.filter(prefix=prefix, membership=principal.membership).first()
    if own is not None:
        return own
    if principal.membership.allows(Role.ADMIN):
        return AgentKey.objects.filter(prefix=prefix, agent__workspace=principal.workspace).first()
    return None


def agent_key_of(*, workspace: Workspace, key_id: int) -> AgentKey | None:
    return AgentKey.objects.select_related("agent").filter(pk=key_id, agent__workspace=workspace).first()


def operator_key_of(*, membership: Membership, key_id: int) -> OperatorKey | None:
    return OperatorKey.objects.filter(pk=key_id, membership=membership).first()


def workspace_counts(*, workspace: Workspace) -> dict[str, int]:
    return {
        "stores": workspace.stores.count(),
        "active_agent_keys": AgentKey.objects.usable().filter(agent__workspace=workspace).count(),
    }


def agent_names(*, workspace: Workspace) -> list[str]:
    return list(Agent.objects.filter(workspace=workspace).order_by("name").values_list("name", flat=True))


def store_names(*, workspace: Workspace) -> list[str]:
    return list(Store.objects.filter(workspace=workspace).order_by("name").values_list("name", flat=True))
