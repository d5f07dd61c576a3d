"""Who is calling: the SDK's bearer-token check over the hub's own agent keys."""

from __future__ import annotations

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from pydantic import PrivateAttr

from memoryhub.core.errors import ApplicationError
from memoryhub.core.selectors import Principal, principal_for_key
from memoryhub.serving.relay import in_worker


class AgentAccessToken(AccessToken):
    """The SDK's access token, carrying the hub's principal for the tools. Private, so
    that nothing the SDK serialises (session owners, request state) ever holds it."""

    _principal: Principal = PrivateAttr()


class AgentKeyVerifier:
    """The SDK's TokenVerifier over the hub's own key lookup (`principal_for_key`: unknown,
    revoked and expired keys are None). Agents only: an operator key is refused (401),
    as is anything that is not a key."""

    async def verify_token(self, token: str) -> AccessToken | None:
        principal = await in_worker(principal_for_key, plaintext=token.strip())
        if principal is None or not principal.is_agent:
            return None
        key = principal.key
        access = AgentAccessToken(
            token=token.strip(), client_id=f"{principal.workspace.slug}/{principal.agent.name}", scopes=["agent"],
            subject=key.prefix if key else None,
            expires_at=int(key.expires_at.timestamp()) if key is not None and key.expires_at is not None else None,
        )
        access._principal = principal
        return access


def caller() -> Principal:
    token = get_access_token()
    if not isinstance(token, AgentAccessToken):
        # RequireAuthMiddleware lets nothing else through; this is the fail-closed default.
        raise ApplicationError("An agent key is required.", code="AGENT_KEY_REQUIRED", status=401)
    return token._principal
