"""Sessions and messages (docs/api.md, "Sessions and conversation")."""

from __future__ import annotations


from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, PolymorphicProxySerializer, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from agents_api.base import PAGE_PARAMETERS, AgentAPIView, ListQuerySerializer, SessionAPIView
from agents_api.outputs import (
    BranchedSessionSerializer,
    ContextSerializer,
    EditedMessageSerializer,
    MessageBatchSerializer,
    MessageSerializer,
    SessionSerializer,
    SummarizedSerializer,
    paged,
)
from agents_api.permissions import operator_with_role
from agents_api.serializers import (
    INT64_MAX,
    IdentifierField,
    StrictCharField,
    StrictInputSerializer,
    UserIdField,
    json_size_ok,
)
from memoryhub.conversations.messages import MessageInput, messages_delete, messages_page
from memoryhub.conversations.models import Role, SummaryPolicy
from memoryhub.conversations.sessions import session_reactivate, sessions_page
from memoryhub.core.models import Role as OperatorRole
from memoryhub.core.pagination import MAX_LIMIT
from memoryhub.graph.selectors import MAX_GROUNDING
from memoryhub.operations import sessions as operations
from memoryhub.representations.conversations import message_json, session_json

MAX_MESSAGES_PER_APPEND = 500


class SessionsView(AgentAPIView):
    class SessionInputSerializer(StrictInputSerializer):
        session_id = IdentifierField()
        user_id = UserIdField()
        metadata = serializers.DictField(required=False, default=dict, validators=[json_size_ok])
        state = serializers.DictField(
            required=False, default=dict,
            help_text="The new session's state (any JSON object, up to MEMORYHUB_MAX_ITEM_BYTES as JSON); an existing session keeps its own",
        )
        on_exists = serializers.ChoiceField(
            choices=["return", "error"], default="return",
            help_text="What a session id this agent has already for this user answers: the session (200), or 409 SESSION_EXISTS",
        )
        summary_policy = serializers.ChoiceField(choices=SummaryPolicy.values, default=SummaryPolicy.MANUAL)
        meta_compaction_threshold = serializers.IntegerField(min_value=1, max_value=1000, default=10)

    @extend_schema(request=SessionInputSerializer, responses={201: SessionSerializer, 200: SessionSerializer}, summary="Start (or find) a session")
    def post(self, request: Request) -> Response:
        made = operations.session_start_answer(principal=request.user, **self.input(self.SessionInputSerializer))
        return Response(made.body, status=201 if made.new else 200)

    class SessionListQuerySerializer(ListQuerySerializer):
        user_id = UserIdField(required=False)

    @extend_schema(
        parameters=[
            *PAGE_PARAMETERS, OpenApiParameter("user_id", str, description="Only this end user's sessions"),
            OpenApiParameter("metadata.KEY", str, description="Only sessions whose metadata KEY is this string (several: each of them)"),
        ],
        responses=paged(SessionSerializer), summary="The caller's sessions, newest first (an agent's own; an operator's workspace's)",
        operation_id="v1_sessions_list",
    )
    def get(self, request: Request) -> Response:
        params = request.query_params
        metadata = {name.removeprefix("metadata."): params[name] for name in params if name.startswith("metadata.") and name != "metadata."}
        query = self.input(self.SessionListQuerySerializer, {name: params[name] for name in params if not name.startswith("metadata.")})
        page = sessions_page(principal=request.user, user_id=query.get("user_id"), metadata=metadata, **self.page_query())
        return self.page_response(page, session_json)


class SessionUpdateSerializer(StrictInputSerializer):
    """Keys of the session's state and metadata to set; the keys left out stay as they are."""

    state = serializers.DictField(
        required=False, default=dict,
        help_text="Keys to set in the session's state, each to its new value (an object replaces the old one; null is kept as a value)",
    )
    metadata = serializers.DictField(required=False, default=dict, validators=[json_size_ok], help_text="Keys to set in the session's metadata, likewise")


class SessionDetailView(SessionAPIView):
    @extend_schema(responses=SessionSerializer, summary="A session with its counts")
    def get(self, request: Request, session_id: str) -> Response:
        return Response(session_json(self.session))

    @extend_schema(
        request=SessionUpdateSerializer, responses=SessionSerializer,
        summary="Set keys of the session's state and metadata (the others stay); one statement, so concurrent updates of other keys all land",
    )
    def patch(self, request: Request, session_id: str) -> Response:
        return Response(operations.session_update_answer(principal=request.user, session=self.session, **self.input(SessionUpdateSerializer)))

    @extend_schema(
        responses={204: None},
        summary="Delete the session and everything in it (its messages, plans, checkpoints, tool calls, approvals); audited, on the feed",
    )
    def delete(self, request: Request, session_id: str) -> Response:
        operations.session_delete_answer(principal=request.user, session=self.session)
        return Response(status=204)


class ReactivateView(SessionAPIView):
    permission_classes = [operator_with_role(OperatorRole.APPROVER)]
    agent_methods = frozenset()  # an operator's write

    @extend_schema(request=None, responses=SessionSerializer, summary="Let a suspended session go on (approvers and admins)")
    def post(self, request: Request, session_id: str) -> Response:
        session = session_reactivate(membership=request.user.membership, session=self.session, address=request.META.get("REMOTE_ADDR"))
        return Response(session_json(session))


class MessageInputSerializer(StrictInputSerializer):
    role = serializers.ChoiceField(choices=Role.choices)
    content = StrictCharField(max_length=settings.MEMORYHUB_MAX_CONTENT_CHARS, required=False, default="", allow_blank=True, trim_whitespace=False)
    tool_calls = serializers.ListField(child=serializers.DictField(), required=False, allow_null=True, default=None, max_length=128)
    tool_call_id = StrictCharField(max_length=255, required=False, allow_null=True, default=None)
    pinned = serializers.BooleanField(required=False, default=False)
    item = serializers.DictField(
        required=False, allow_null=True, default=None,
        help_text="An agent framework's own form of the message (any JSON object, up to MEMORYHUB_MAX_ITEM_BYTES, 1 MiB), kept and returned exactly, key order included",
    )


class MessagesView(SessionAPIView):
    class MessagesBatchSerializer(StrictInputSerializer):
        messages = MessageInputSerializer(many=True, allow_empty=False, max_length=MAX_MESSAGES_PER_APPEND)
        session = SessionUpdateSerializer(
            required=False, help_text="Keys to set in the session's state and metadata, as PATCH /sessions/{sid} sets them, in the append's transaction",
        )

    @extend_schema(
        request=MessageInputSerializer,
        responses={201: PolymorphicProxySerializer(
            component_name="MessagesAppended", serializers=[MessageSerializer, MessageBatchSerializer], resource_type_field_name=None,
        )},
        summary="Append one message, or {\"messages\": [...], \"session\"?: {state?, metadata?}}",
    )
    def post(self, request: Request, session_id: str) -> Response:
        batch = isinstance(request.data, dict) and "messages" in request.data
        data = self.input(self.MessagesBatchSerializer) if batch else {"messages": [self.input(MessageInputSerializer)]}
        messages = operations.messages_append_answer(
            principal=request.user, session=self.session, messages=[MessageInput(**item) for item in data["messages"]],
            **data.get("session", {}),
        )
        return Response({"messages": messages} if batch else messages[0], status=201)

    class OrderQuerySerializer(serializers.Serializer):
        # Not strict: this list took no filters before `order`, and ignored what it was sent.
        order = serializers.ChoiceField(
            choices=["asc", "desc"], default="asc",
            help_text="`desc`: newest first (a framework's \"latest N\" is the first page, reversed)",
        )

    @extend_schema(
        parameters=[*PAGE_PARAMETERS, OrderQuerySerializer], responses=paged(MessageSerializer),
        summary="The history in order (or newest first), a page at a time",
    )
    def get(self, request: Request, session_id: str) -> Response:
        order = self.input(self.OrderQuerySerializer, request.query_params.dict())["order"]
        page = messages_page(session=self.session, newest_first=order == "desc", **self.page_query())
        return self.page_response(page, message_json)

    class DeleteQuerySerializer(StrictInputSerializer):
        last = serializers.IntegerField(
            min_value=1, max_value=MAX_LIMIT, required=False, help_text=f"Delete the last N messages (1–{MAX_LIMIT}); they are answered",
        )
        all = serializers.BooleanField(required=False, help_text="Delete every message (`all=true`)")

        def validate(self, data: dict) -> dict:
            if ("last" in data) == bool(data.get("all")):
                raise serializers.ValidationError("Say which: `last=N` or `all=true`.")
            return data

    class DeletedSerializer(serializers.Serializer):
        deleted = serializers.IntegerField(help_text="How many messages were deleted")
        messages = MessageSerializer(many=True, required=False, help_text="With `last`: the messages deleted, oldest first")

    @extend_schema(
        parameters=[DeleteQuerySerializer], responses={200: DeletedSerializer},
        summary="Delete the last N messages, or all (what a framework pops or clears); audited, on the feed",
    )
    def delete(self, request: Request, session_id: str) -> Response:
        query = self.input(self.DeleteQuerySerializer, request.query_params.dict())
        deleted = messages_delete(session=self.session, last=query.get("last"), actor=request.user.actor)
        if "last" not in query:
            return Response({"deleted": deleted.count})
        return Response({"deleted": deleted.count, "messages": [message_json(m) for m in deleted.messages]})


class ContextView(SessionAPIView):
    class ContextQuerySerializer(StrictInputSerializer):
        strategy = serializers.ChoiceField(choices=["window", "truncate", "summarize"], default="window")
        max_messages = serializers.IntegerField(min_value=0, max_value=10_000, default=50)
        max_tokens = serializers.IntegerField(min_value=1, max_value=2_000_000, required=False, allow_null=True, default=None)
        pin_first = serializers.IntegerField(min_value=0, max_value=10_000, default=0)
        summary_ratio = serializers.FloatField(min_value=0, max_value=1, default=0.5, help_text="clamped to 0.1–0.8")
        preserve_recent = serializers.IntegerField(min_value=0, max_value=10_000, default=4)
        grounding = serializers.IntegerField(
            min_value=0, max_value=MAX_GROUNDING, default=0,
            help_text="Append one system message stating up to this many facts relevant to the latest user message (docs/graph.md)",
        )

    @extend_schema(parameters=[ContextQuerySerializer], responses=ContextSerializer, summary="A prompt-sized context of the session")
    def get(self, request: Request, session_id: str) -> Response:
        query = self.input(self.ContextQuerySerializer, request.query_params.dict())
        return Response(operations.context_answer(principal=request.user, session=self.session, **query))


class MessageEditView(SessionAPIView):
    class MessageEditSerializer(StrictInputSerializer):
        content = StrictCharField(max_length=settings.MEMORYHUB_MAX_CONTENT_CHARS, allow_blank=True, trim_whitespace=False)

    @extend_schema(request=MessageEditSerializer, responses=EditedMessageSerializer, summary="Edit a message (the old text is kept as a revision)")
    def patch(self, request: Request, session_id: str, seq: int) -> Response:
        content = self.input(self.MessageEditSerializer)["content"]
        return Response(operations.message_edit_answer(principal=request.user, session=self.session, seq=seq, content=content))


class BranchView(SessionAPIView):
    class BranchSerializer(StrictInputSerializer):
        new_session_id = IdentifierField()
        upto_seq = serializers.IntegerField(min_value=0, max_value=INT64_MAX, required=False, allow_null=True, default=None)
        label = IdentifierField(required=False, default="", allow_blank=True)

    @extend_schema(request=BranchSerializer, responses={201: BranchedSessionSerializer}, summary="Branch into a new session with a copy of the history")
    def post(self, request: Request, session_id: str) -> Response:
        return Response(operations.session_branch_answer(principal=request.user, session=self.session, **self.input(self.BranchSerializer)), status=201)


class SummarizeView(SessionAPIView):
    @extend_schema(request=None, responses=SummarizedSerializer, summary="Summarise the messages since the last summary into the chain")
    def post(self, request: Request, session_id: str) -> Response:
        return Response(operations.session_summarise_answer(principal=request.user, session=self.session))
