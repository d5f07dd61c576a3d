"""Checking a MemoryHub webhook on the receiving side: Standard Webhooks 1.0 signatures
(https://www.standardwebhooks.com), so any of the standard's libraries would do too."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Any, Optional, Union

# How far a delivery's timestamp may be from the receiver's clock: an older one is a replay.
TOLERANCE_SECONDS = 5 * 60


class WebhookVerificationError(Exception):
    """The delivery did not come from the hub holding the secret, was changed, or is stale."""


def verify_webhook(
    secret: str, headers: Mapping[str, str], body: Union[bytes, str], *, tolerance: int = TOLERANCE_SECONDS, now: Optional[float] = None,
) -> Any:
    """The delivery's JSON (`{type, timestamp, data}`), once its `webhook-signature` is
    found to be the secret's (`whsec_…`) HMAC of `{webhook-id}.{webhook-timestamp}.{body}`
    and its timestamp within `tolerance` seconds of `now`; WebhookVerificationError
    otherwise. `body` is the raw request body, before any JSON parsing."""
    lower = {name.lower(): value for name, value in headers.items()}
    try:
        message_id, stamp, signatures = lower["webhook-id"], lower["webhook-timestamp"], lower["webhook-signature"]
    except KeyError as missing:
        raise WebhookVerificationError(f"the {missing.args[0]} header is missing") from None
    try:
        sent_at = int(stamp)
    except ValueError:
        raise WebhookVerificationError("webhook-timestamp is not a number") from None
    current = time.time() if now is None else now
    if abs(current - sent_at) > tolerance:
        raise WebhookVerificationError("webhook-timestamp is too far from now: a replay, or a clock that is off")
    try:
        key = base64.b64decode(secret.removeprefix("whsec_"), validate=True)
    except binascii.Error:
        raise ValueError("the secret is not `whsec_` followed by base64") from None
    raw = body.encode() if isinstance(body, str) else body
    expected = base64.b64encode(hmac.new(key, f"{message_id}.{sent_at}.".encode() + raw, hashlib.sha256).digest()).decode()
    for signature in signatures.split():
        version, _, value = signature.partition(",")
        if version == "v1" and hmac.compare_digest(value, expected):
            return json.loads(raw)
    raise WebhookVerificationError("no signature matches the secret")
