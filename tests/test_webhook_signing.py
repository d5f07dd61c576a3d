"""Standard Webhooks signatures: the spec's published vector, and the reference library's
verifier accepting what the hub signs (with either secret during a rotation)."""

from __future__ import annotations

import base64
import time

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from memoryhub.notifications.signing import secret_new, signature, signature_header

# The example of the Standard Webhooks specification (and of its libraries' tests).
SPEC_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
SPEC_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
SPEC_TIMESTAMP = 1614265330
SPEC_BODY = b'{"test": 2432232314}'
SPEC_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def test_it_signs_the_specifications_example_exactly() -> None:
    assert signature(secret=SPEC_SECRET, message_id=SPEC_ID, timestamp=SPEC_TIMESTAMP, body=SPEC_BODY) == SPEC_SIGNATURE


def test_it_makes_secrets_of_the_standards_form() -> None:
    secrets = {secret_new() for _ in range(3)}
    assert len(secrets) == 3
    for secret in secrets:
        assert secret.startswith("whsec_")
        assert 24 <= len(base64.b64decode(secret.removeprefix("whsec_"))) <= 64


def headers_for(secrets_now: list[str], body: bytes) -> dict[str, str]:
    now = int(time.time())
    return {
        "webhook-id": "msg_1", "webhook-timestamp": str(now),
        "webhook-signature": signature_header(secrets_now=secrets_now, message_id="msg_1", timestamp=now, body=body),
    }


def test_it_is_verified_by_the_reference_library_with_either_secret_while_rotating() -> None:
    old, new = secret_new(), secret_new()
    body = b'{"type":"webhook.test","timestamp":"2026-12-07T00:00:00Z","data":{}}'
    headers = headers_for([new, old], body)
    assert len(headers["webhook-signature"].split(" ")) == 2
    for secret in (new, old):
        assert Webhook(secret).verify(body, headers) == {"type": "webhook.test", "timestamp": "2026-12-07T00:00:00Z", "data": {}}
    with pytest.raises(WebhookVerificationError):
        Webhook(secret_new()).verify(body, headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(new).verify(body.replace(b"test", b"tost"), headers)
