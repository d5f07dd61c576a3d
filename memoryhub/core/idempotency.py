"""Idempotent retries: a POST sent again with the same `Idempotency-Key` gets the first
answer back instead of a second effect (docs/api.md, "Conventions").

The front end runs the whole request in one transaction that begins by claiming the
key: an INSERT of the record that, for a key already claimed by a request still running,
waits for that request's transaction (the unique constraint decides) and then finds its
answer. The answer is stored in the same transaction as the effect, so a committed
effect always has its answer and a rolled-back one leaves the key free."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import timedelta

import orjson
from django.conf import settings
from django.db import connection
from django.utils import timezone

from memoryhub.core.errors import ApplicationError
from memoryhub.core.models import IdempotencyRecord, Workspace

MAX_KEY_LENGTH = 255


@dataclass(frozen=True)
class Claim:
    """Either this request holds the key (`record_id`) or an earlier answer exists."""

    record_id: int | None = None
    replay: IdempotencyRecord | None = None


def request_fingerprint(*, method: str, path: str, body: bytes) -> str:
    """What makes two requests the same: method, path and query, and the body (as JSON
    with sorted keys when it is JSON, so key order and spacing do not count)."""
    try:
        canonical = orjson.dumps(orjson.loads(body), option=orjson.OPT_SORT_KEYS) if body else b""
    except orjson.JSONDecodeError:
        canonical = body
    return hashlib.sha256(b"\0".join([method.encode(), path.encode(), canonical])).hexdigest()


def idempotency_key_checked(key: str) -> str:
    if not key or len(key) > MAX_KEY_LENGTH or not key.isascii() or not key.isprintable():
        raise ApplicationError(
            f"Idempotency-Key must be 1 to {MAX_KEY_LENGTH} printable ASCII characters.", code="INVALID_IDEMPOTENCY_KEY",
        )
    return key


def idempotency_claim(*, workspace: Workspace, credential: str, key: str, fingerprint: str) -> Claim:
    """Claim `key` for this request (inside the request's transaction), or find the answer
    given to it. A key whose answer is older than the TTL is free again."""
    table = IdempotencyRecord._meta.db_table
    cutoff = timezone.now() - timedelta(hours=settings.MEMORYHUB_IDEMPOTENCY_TTL_HOURS)
    for _ in range(2):
        with connection.cursor() as cursor:
            # A placeholder answer: replaced (delete + insert, so the write fence sees
            # the users it names) before this transaction commits.
            cursor.execute(
                f"INSERT INTO {table} (workspace_id, credential, key, request_hash, status, body, content_type, user_ids, created_at) "
                "VALUES (%s, %s, %s, %s, 0, '', '', '{}', now()) ON CONFLICT (credential, key) DO NOTHING RETURNING id",
                [workspace.pk, credential, key, fingerprint],
            )
            row = cursor.fetchone()
        if row is not None:
            return Claim(record_id=row[0])
        existing = IdempotencyRecord.objects.filter(credential=credential, key=key).first()
        if existing is None or existing.created_at < cutoff:
            IdempotencyRecord.objects.filter(credential=credential, key=key, created_at__lt=cutoff).delete()
            continue  # gone or expired: claim it afresh
        if existing.request_hash != fingerprint:
            raise ApplicationError(
                "This Idempotency-Key was used with another request; use a new key for a new request.",
                code="IDEMPOTENCY_KEY_REUSED", status=422,
            )
        return Claim(replay=existing)
    raise ApplicationError("This Idempotency-Key is busy; retry.", code="IDEMPOTENCY_KEY_BUSY", status=409)


def idempotency_answer(*, claim: Claim, status: int, body: bytes, content_type: str, user_ids: list[str]) -> None:
    """Store the answer of the request holding `claim`, in its transaction."""
    placeholder = IdempotencyRecord.objects.get(pk=claim.record_id)
    placeholder.delete()
    IdempotencyRecord.objects.create(
        workspace_id=placeholder.workspace_id, credential=placeholder.credential, key=placeholder.key,
        request_hash=placeholder.request_hash, status=status, body=body, content_type=content_type,
        user_ids=sorted(set(user_ids)), created_at=placeholder.created_at,
    )


def idempotency_sweep() -> int:
    """Delete answers older than the TTL (hourly)."""
    cutoff = timezone.now() - timedelta(hours=settings.MEMORYHUB_IDEMPOTENCY_TTL_HOURS)
    deleted, _ = IdempotencyRecord.objects.filter(created_at__lt=cutoff).delete()
    return deleted
