"""The skeleton of the API's views: who may write, which session, what input.

Every view opens the same way: an agent key for writes (403 AGENT_KEY_REQUIRED before
anything else is looked at), then the session of the URL (404 for a session the caller
may not see), then the input. The base classes do the first two once, in `initial`,
before the handler runs; `self.input()` does the third. Retries: agents_api.idempotency.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import QueryDict
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import Serializer
from rest_framework.views import APIView

from agents_api.idempotency import IdempotentPosts
from agents_api.serializers import StrictInputSerializer, int_param, validated
from memoryhub.conversations.models import Session
from memoryhub.conversations.sessions import session_get
from memoryhub.core.errors import ApplicationError, Forbidden
from memoryhub.core.models import Agent
from memoryhub.core.pagination import DEFAULT_LIMIT, MAX_LIMIT, Page
from memoryhub.core.selectors import Principal
from memoryhub.core.text import text_problem
from memoryhub.usage import metering

WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# Every list takes these and answers {"results": [...], "next": cursor or null}.
PAGE_PARAMETERS = [
    OpenApiParameter("cursor", str, description="`next` of the page before; omit for the first page"),
    OpenApiParameter("limit", int, description=f"items per page, 1–{MAX_LIMIT} (default {DEFAULT_LIMIT})"),
]


class ListQuerySerializer(StrictInputSerializer):
    """A list's filters: unknown parameters are refused, but `cursor` and `limit` belong
    to every list (HubAPIView.page_query reads them)."""

    cursor = serializers.CharField(required=False)
    limit = serializers.CharField(required=False)


def agent_of(principal: Principal, *, written: str = "Sessions") -> Agent:
    if not principal.is_agent:
        raise Forbidden(f"{written} are written by agents; use an agent key.", code="AGENT_KEY_REQUIRED")
    return principal.agent


def refuse_unstorable_parameters(path: dict[str, Any], query: QueryDict) -> None:
    """What a body may not hold, a path or a query string may not either (the database
    refuses NUL characters and lone surrogates): a 400 before anything is looked up."""
    for name, value in [*path.items(), *((key, value) for key in query for value in [key, *query.getlist(key)])]:
        if isinstance(value, str) and (problem := text_problem(value)):
            raise ApplicationError(f"{problem} (in {name!r})", code="INVALID_PARAMETER", details={"parameter": name.encode("unicode_escape").decode()})


# No docstrings on these classes: drf-spectacular would describe every operation of
# their subclasses with them.


class HubAPIView(IdempotentPosts, APIView):
    # Every view of the API: parameters checked and input validated one way; POSTs
    # retried safely (IdempotentPosts).

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        # The model calls this request makes are the caller's workspace's (and agent's).
        principal = request.user
        self.usage_attribution = metering.attribute(workspace_id=principal.workspace.pk, agent_id=principal.agent.pk if principal.agent else None)
        refuse_unstorable_parameters(kwargs, request.query_params)
        self.idempotency_key_claim(request)

    def finalize_response(self, request: Request, response: Response, *args: Any, **kwargs: Any) -> Response:
        if (attribution := getattr(self, "usage_attribution", None)) is not None:
            metering.release(attribution)
            self.usage_attribution = None
        return super().finalize_response(request, response, *args, **kwargs)

    def input_serializer(self, serializer: type[Serializer], data: Any = None) -> Serializer:
        """The input serializer, validated (400 in the envelope otherwise): of the request
        body, or of `data` (query parameters)."""
        return validated(serializer, self.request.data if data is None else data)

    def input(self, serializer: type[Serializer], data: Any = None) -> dict[str, Any]:
        """The validated input, as `input_serializer` finds it."""
        return self.input_serializer(serializer, data).validated_data

    def page_query(self) -> dict[str, Any]:
        """The `cursor` and `limit` of a list request (limit clamped to 1..MAX_LIMIT)."""
        return {
            "cursor": self.request.query_params.get("cursor") or None,
            "limit": int_param(self.request, "limit", DEFAULT_LIMIT, low=1, high=MAX_LIMIT),
        }

    def page_response(self, page: Page, output: Callable[[Any], Any]) -> Response:
        return Response({"results": [output(row) for row in page.results], "next": page.next})


class AgentAPIView(HubAPIView):
    # A view whose writes only agents make. `agent_methods` are the methods that need an
    # agent key (every write unless a view says otherwise); `written` names what they
    # write, for the error message.

    agent_methods: frozenset[str] = WRITES
    written = "Sessions"
    agent: Agent | None = None

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        if request.method in self.agent_methods:
            self.agent = agent_of(request.user, written=self.written)


class SessionAPIView(AgentAPIView):
    # A view under /sessions/{session_id}/: `self.session` is the caller's session (an
    # agent's own, or any of an operator's workspace).

    session: Session

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        self.session = session_get(principal=request.user, session_id=kwargs["session_id"])

    def answer_user_ids(self) -> list[str]:
        return [self.session.user_id]
