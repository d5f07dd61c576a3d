"""Tenancy (workspaces, stores, agents), identities (keys, operator roles), the audit
log and the abstract base every memory record inherits from."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone

USER_ID_MAX_LENGTH = 255


def validate_user_id(value: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError("user_id must be a non-empty string.", code="blank")
    if len(value) > USER_ID_MAX_LENGTH:
        raise ValidationError(f"user_id must be at most {USER_ID_MAX_LENGTH} characters.", code="max_length")


class Workspace(models.Model):
    """A tenant. Nothing ever crosses workspaces."""

    user_id_exemption = "The tenant itself: it names a customer of the hub, not an end user."

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    # Tool calls are always redacted; these extend redaction to messages and memories.
    redact_messages = models.BooleanField(default=False)
    redact_memories = models.BooleanField(default=False)
    # New memories from these sources (memoryhub.memory.models.SourceKind) start quarantined.
    quarantine_sources = ArrayField(models.CharField(max_length=16), default=list, blank=True, db_default=[])

    def __str__(self) -> str:
        return self.slug


class Store(models.Model):
    """A named memory space inside a workspace; agents are attached to stores."""

    user_id_exemption = "A named container configured by operators; holds no end-user content itself."

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="stores")
    name = models.SlugField(max_length=64)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "name"], name="store_unique_name")]

    def __str__(self) -> str:
        return f"{self.workspace.slug}/{self.name}"


class Agent(models.Model):
    """An API identity of an AI agent."""

    user_id_exemption = "An API identity of the operator's software, serving many end users."

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="agents")
    name = models.SlugField(max_length=64)
    stores = models.ManyToManyField(Store, related_name="agents", blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "name"], name="agent_unique_name")]

    def __str__(self) -> str:
        return f"{self.workspace.slug}/{self.name}"


class Role(models.TextChoices):
    VIEWER = "viewer", "Viewer (read)"
    APPROVER = "approver", "Approver (human-in-the-loop decisions)"
    COMPLIANCE = "compliance", "Compliance (purges)"
    ADMIN = "admin", "Admin"


def role_allows(role: str, required: str) -> bool:
    """Admin may do everything; every role may read; otherwise the role must match."""
    return role == Role.ADMIN or required == Role.VIEWER or role == required


class Membership(models.Model):
    """An operator (a Django user) in a workspace, with a role."""

    user_id_exemption = "Links an operator account to a workspace; operators are not end users."

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "workspace"], name="membership_unique")]

    def __str__(self) -> str:
        return f"{self.user} in {self.workspace} ({self.role})"

    def allows(self, required: str) -> bool:
        return role_allows(self.role, required)


class ApiKeyQuerySet(models.QuerySet):
    def usable(self) -> ApiKeyQuerySet:
        now = timezone.now()
        return self.filter(revoked_at__isnull=True).filter(models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=now))


class ApiKey(models.Model):
    """Only a lookup prefix and a SHA-256 of the key are stored; the key is shown once.

    A plain (fast) hash is enough here, unlike passwords: keys are 256 random bits, so
    there is nothing to brute-force, and a slow hash would cost every API request.
    """

    user_id_exemption = "Credentials of agents and operators; they carry no end-user data."

    prefix = models.CharField(max_length=16, unique=True)
    key_hash = models.CharField(max_length=64)
    label = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    objects = ApiKeyQuerySet.as_manager()

    class Meta:
        abstract = True

    @property
    def is_usable(self) -> bool:
        if self.revoked_at is not None:
            return False
        return self.expires_at is None or self.expires_at > timezone.now()

    @property
    def status(self) -> str:
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= timezone.now():
            return "expired"
        return "active"


class AgentKey(ApiKey):
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="keys")

    def __str__(self) -> str:
        return f"mha_{self.prefix}… ({self.agent})"


class OperatorKey(ApiKey):
    membership = models.ForeignKey(Membership, on_delete=models.CASCADE, related_name="keys")

    def __str__(self) -> str:
        return f"mho_{self.prefix}… ({self.membership.user})"


class MemoryRecord(models.Model):
    """Base of every model that holds agent memory.

    Every record carries the workspace and the end user it is about, so that a purge
    of one user can reach every store (docs/concepts.md, "What the hub keeps"). The `user_id_coverage` system check
    fails for a model without `user_id` that does not explain why in
    `user_id_exemption`.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    user_id = models.CharField(max_length=USER_ID_MAX_LENGTH, validators=[validate_user_id], db_index=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(user_id__regex=r"^\s*$"),
                name="%(app_label)s_%(class)s_user_id_not_blank",
            )
        ]


class AuditEntry(models.Model):
    """Who did what to access, keys, purges and policies. Rows are only ever inserted:
    a database trigger refuses UPDATE and DELETE (see audit.py). The workspace is kept
    by id and slug rather than a foreign key, so deleting a workspace leaves its record."""

    user_id_exemption = "Names operators, never end users: purges are recorded by the keyed hash of the user_id."

    workspace_id = models.BigIntegerField(null=True, blank=True, db_index=True)
    workspace_slug = models.CharField(max_length=100, blank=True, default="")
    actor = models.CharField(max_length=200)
    action = models.CharField(max_length=50, db_index=True)
    target = models.CharField(max_length=200, blank=True, default="")
    details = models.JSONField(default=dict, blank=True)
    ip = models.GenericIPAddressField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        # The table predates the layout by concept (it began in the compliance app).
        db_table = "compliance_auditentry"
        ordering = ["-created_at", "-id"]


class IdempotencyRecord(models.Model):
    """The first answer to a POST sent with an `Idempotency-Key`, replayed to every retry
    with the same key and body for MEMORYHUB_IDEMPOTENCY_TTL_HOURS (docs/api.md,
    "Retries and Idempotency-Key"). Written in the request's own transaction, so a record exists exactly
    when the effect it answers for was committed."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    # Keys are per credential: the API key that sent the request ("agent_key:12").
    credential = models.CharField(max_length=64)
    key = models.CharField(max_length=255)
    request_hash = models.CharField(max_length=64)
    status = models.PositiveSmallIntegerField()
    body = models.BinaryField()
    content_type = models.CharField(max_length=100)
    # The end users the stored answer is about: a purge deletes every answer naming its
    # user, and the write fence guards this table like the others (core.registry).
    user_ids = ArrayField(models.CharField(max_length=USER_ID_MAX_LENGTH), default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["credential", "key"], name="idempotency_unique_key")]
        indexes = [GinIndex(fields=["user_ids"], name="idempotency_user_ids")]
