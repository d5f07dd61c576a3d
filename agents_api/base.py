"""The skeleton of the API's views: who may write, which session, what input.

Every view opens the same way: an agent key for writes (403 AGENT_KEY_REQUIRED before
anything else is looked at), then the session of the URL (404 for a session the caller
may not see), then the input. The base classes do the first two once, in `initial`,
before the handler runs; `self.input()` does the third.
"""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.serializers import Serializer
from rest_framework.views import APIView

from agents_api.serializers import validated
from memoryhub.conversations.models import Session
from memoryhub.conversations.sessions import session_get
from memoryhub.core.errors import Forbidden
from memoryhub.core.models import Agent
from memoryhub.core.selectors import Principal

WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def agent_of(principal: Principal, *, written: str = "Sessions") -> Agent:
    if not principal.is_agent:
        raise Forbidden(f"{written} are written by agents; use an agent key.", code="AGENT_KEY_REQUIRED")
    return principal.agent


# No docstrings on these classes: drf-spectacular would describe every operation of
# their subclasses with them.


class HubAPIView(APIView):
    # Every view of the API: input is validated one way.

    def input_serializer(self, serializer: type[Serializer], data: Any = None) -> Serializer:
        """The input serializer, validated (400 in the envelope otherwise): of the request
        body, or of `data` (query parameters)."""
        return validated(serializer, self.request.data if data is None else data)

    def input(self, serializer: type[Serializer], data: Any = None) -> dict[str, Any]:
        """The validated input, as `input_serializer` finds it."""
        return self.input_serializer(serializer, data).validated_data


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
