"""Standard Webhooks 1.0 signatures (https://www.standardwebhooks.com): a receiver with any
library of the standard (or `memoryhub_client.verify_webhook`) checks a delivery came from
this hub, unchanged, and recently."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

SECRET_PREFIX = "whsec_"


def secret_new() -> str:
    """`whsec_` + base64 of 32 random bytes (the standard asks for 24 to 64)."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def signature(*, secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """`v1,` + base64 of HMAC-SHA256 over "{id}.{timestamp}.{body}", keyed with the
    secret's bytes (base64-decoded after the prefix)."""
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    signed = f"{message_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def signature_header(*, secrets_now: list[str], message_id: str, timestamp: int, body: bytes) -> str:
    """`webhook-signature`: one signature per secret in use, space-separated (two for a day
    after a rotation, so a receiver holding either secret accepts the delivery)."""
    return " ".join(signature(secret=secret, message_id=message_id, timestamp=timestamp, body=body) for secret in secrets_now)
