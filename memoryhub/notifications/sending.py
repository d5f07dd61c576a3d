"""One attempt at one delivery: a signed POST, an answer judged, nothing written here."""

from __future__ import annotations

import email.utils
import smtplib
import ssl
import time
from dataclasses import dataclass
from functools import cache

import httpcore
from django.conf import settings
from django.core.mail import EmailMessage

from memoryhub.notifications.addresses import AddressRefused, GuardedBackend
from memoryhub.notifications.signing import signature_header

# Enough of a receiver's answer for the delivery log; the rest is never read.
ANSWER_READ_BYTES = 4096
USER_AGENT = "MemoryHub-Webhooks/1"


@dataclass(frozen=True)
class Attempt:
    status_code: int | None = None
    error: str = ""
    # Seconds the receiver asked us to wait (Retry-After), if it did.
    retry_after: float | None = None
    # Not to be tried again: refused by the address guard (or a 410, see `gone`).
    final: bool = False

    @property
    def delivered(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300

    @property
    def gone(self) -> bool:
        """The receiver says the endpoint is gone for good: disable it."""
        return self.status_code == 410


@cache
def _pool() -> httpcore.ConnectionPool:
    # A connection per attempt (no keep-alive): a receiver that closes an idle connection
    # as it is reused fails a delivery that did nothing wrong, and each new connection has
    # its address checked again.
    return httpcore.ConnectionPool(
        ssl_context=ssl.create_default_context(), network_backend=GuardedBackend(), max_connections=settings.MEMORYHUB_WEBHOOK_WORKERS * 2,
        max_keepalive_connections=0, retries=0,
    )


def retry_after_seconds(value: str | None, *, now: float) -> float | None:
    """A Retry-After header (seconds, or an HTTP date) as seconds from now."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now)


def delivery_attempt(*, url: str, message_id: str, body: bytes, secrets_now: list[str]) -> Attempt:
    """POST `body` to `url`, signed now, within MEMORYHUB_WEBHOOK_TIMEOUT_SECONDS all told."""
    timeout = settings.MEMORYHUB_WEBHOOK_TIMEOUT_SECONDS
    started = time.time()
    timestamp = int(started)
    headers = [
        (b"content-type", b"application/json"),
        (b"user-agent", USER_AGENT.encode()),
        (b"webhook-id", message_id.encode()),
        (b"webhook-timestamp", str(timestamp).encode()),
        (b"webhook-signature", signature_header(secrets_now=secrets_now, message_id=message_id, timestamp=timestamp, body=body).encode()),
    ]
    deadline = time.monotonic() + timeout
    limits = {"connect": timeout, "read": timeout, "write": timeout, "pool": timeout}
    try:
        with _pool().stream("POST", url, headers=headers, content=body, extensions={"timeout": limits}) as answer:
            read = 0
            for chunk in answer.iter_stream():
                read += len(chunk)
                # A receiver that trickles its answer is held to the whole attempt's deadline.
                if read >= ANSWER_READ_BYTES or time.monotonic() > deadline:
                    break
            headers_in = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in answer.headers}
            status = answer.status
    except AddressRefused as refused:
        return Attempt(error=str(refused), final=True)
    except httpcore.TimeoutException:
        return Attempt(error=f"no answer within {timeout:g} s")
    except httpcore.ConnectError as exc:
        return Attempt(error=f"could not connect: {exc}"[:300])
    except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.UnsupportedProtocol, httpcore.LocalProtocolError) as exc:
        return Attempt(error=f"{type(exc).__name__}: {exc}"[:300])
    retry_after = retry_after_seconds(headers_in.get("retry-after"), now=time.time())
    error = "" if 200 <= status < 300 else f"HTTP {status}" + (" (redirects are not followed)" if 300 <= status < 400 else "")
    return Attempt(status_code=status, error=error, retry_after=retry_after)


def email_attempt(*, to: str, subject: str, body: str) -> Attempt:
    """One email through MEMORYHUB_EMAIL_URL's server (Django's SMTP backend): accepted, or
    why not. A refused address or a permanent (5xx) answer is final; the rest is retried."""
    try:
        EmailMessage(subject=subject, body=body, to=[to]).send()
    except smtplib.SMTPRecipientsRefused as refused:
        code, message = next(iter(refused.recipients.values()), (None, b""))
        return Attempt(status_code=code, error=f"the server refused {to}: {message.decode(errors='replace')}"[:300], final=True)
    except smtplib.SMTPResponseException as answer:
        text = answer.smtp_error.decode(errors="replace") if isinstance(answer.smtp_error, bytes) else str(answer.smtp_error)
        return Attempt(status_code=answer.smtp_code, error=f"SMTP {answer.smtp_code}: {text}"[:300], final=answer.smtp_code >= 500)
    except (smtplib.SMTPException, OSError) as exc:
        return Attempt(error=f"could not send: {exc}"[:300])
    return Attempt(status_code=250)
