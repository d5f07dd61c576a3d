"""A typed client for MemoryHub: `MemoryHub` (sync) and `AsyncMemoryHub` (asyncio), with
the same methods; README.md beside this package maps them to the API."""

from memoryhub_client._transport import NO_RETRIES, RetryPolicy
from memoryhub_client.aio import AsyncMemoryHub
from memoryhub_client.client import MemoryHub
from memoryhub_client.webhooks import WebhookVerificationError, verify_webhook
from memoryhub_client.errors import (
    AuthenticationError, BadRequest, Conflict, ConnectionFailed, MemoryHubError, NotFound, PayloadTooLarge, PermissionDenied, RateLimited,
    ServerError, UnprocessableEntity,
)

__all__ = [
    "MemoryHub", "AsyncMemoryHub", "RetryPolicy", "NO_RETRIES",
    "MemoryHubError", "BadRequest", "AuthenticationError", "PermissionDenied", "NotFound", "Conflict", "PayloadTooLarge",
    "UnprocessableEntity", "RateLimited", "ServerError", "ConnectionFailed", "verify_webhook", "WebhookVerificationError",
]
