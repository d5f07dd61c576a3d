from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from memoryhub.core.keys import looks_like_key
from memoryhub.core.selectors import Principal, principal_for_key

# Names under which clients commonly put keys in URLs; URLs end up in logs and proxies.
QUERY_KEY_NAMES = {"key", "api_key", "apikey", "access_token", "token", "auth"}


class KeyInQueryString(exceptions.AuthenticationFailed):
    default_code = "KEY_IN_QUERY_STRING"
    default_detail = "Keys are accepted only in the Authorization header (Bearer), never in the URL."


class BearerKeyAuthentication(authentication.BaseAuthentication):
    """`Authorization: Bearer <agent or operator key>`."""

    def authenticate(self, request: Request) -> tuple[Principal, object] | None:
        for name, values in request.query_params.lists():
            if name.lower() in QUERY_KEY_NAMES or any(looks_like_key(v) for v in values):
                raise KeyInQueryString()
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise exceptions.AuthenticationFailed("Use `Authorization: Bearer <key>`.")
        principal = principal_for_key(token.strip())
        if principal is None:
            raise exceptions.AuthenticationFailed("Unknown, revoked or expired key.")
        return principal, principal.key

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="memoryhub"'


class BearerKeyScheme(OpenApiAuthenticationExtension):
    target_class = "agents_api.authentication.BearerKeyAuthentication"
    name = "bearerKey"

    def get_security_definition(self, auto_schema: object) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "description": "An agent key (mha_…) or operator key (mho_…)."}
