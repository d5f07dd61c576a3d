"""LangGraph checkpoints (docs/api.md, "LangGraph checkpoints"; docs/client.md, "LangGraph checkpointer"): the
storage behind `memoryhub_client.langgraph.MemoryHubSaver`. A thread is the agent's
session of the same id; values travel as LangGraph serialised them, base64."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from agents_api.base import PAGE_PARAMETERS, WRITES, AgentAPIView, ListQuerySerializer
from agents_api.outputs import (
    GraphCheckpointSavedSerializer,
    GraphCheckpointSerializer,
    GraphDeletedSerializer,
    GraphThreadCopiedSerializer,
    GraphWritesSavedSerializer,
    paged,
)
from agents_api.serializers import INT32_MAX, IdentifierField, StrictCharField, StrictInputSerializer, UserIdField, json_size_ok
from memoryhub.conversations.models import Session
from memoryhub.core.errors import ApplicationError
from memoryhub.langgraph_checkpoints import selectors, services
from memoryhub.langgraph_checkpoints.models import ID_MAX_LENGTH, NAME_MAX_LENGTH, NAMESPACE_MAX_LENGTH, TYPE_MAX_LENGTH
from memoryhub.representations import iso_datetime

MAX_ITEMS = 10_000  # channel values or writes in one request
MAX_THREADS = 1000  # threads or runs named in one prune or delete


def _utf8_bytes(limit: int) -> Any:
    def check(value: str) -> None:
        if len(value.encode("utf-8", "surrogatepass")) > limit:
            raise serializers.ValidationError(f"Must be at most {limit} bytes as UTF-8.")

    return check


def _text(max_length: int, **kwargs: Any) -> StrictCharField:
    """Ids, namespaces and channel names as LangGraph has them: any text, kept exactly,
    at most `max_length` bytes (not characters: together they key a unique index, which
    PostgreSQL keeps under 2,704 bytes a row)."""
    return StrictCharField(max_length=max_length, trim_whitespace=False, validators=[_utf8_bytes(max_length)], **kwargs)


@extend_schema_field({"type": "string", "format": "byte", "description": "base64"})
class Base64Field(serializers.Field):
    default_error_messages = {"invalid": "Must be base64."}

    def to_internal_value(self, data: Any) -> bytes:
        if not isinstance(data, str):
            self.fail("invalid")
        try:
            return base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            self.fail("invalid")

    def to_representation(self, value: bytes) -> str:
        return base64.b64encode(value).decode()


class ValueInputSerializer(StrictInputSerializer):
    type = _text(TYPE_MAX_LENGTH)
    data = Base64Field()


class BlobInputSerializer(ValueInputSerializer):
    channel = _text(NAME_MAX_LENGTH)
    version = _text(ID_MAX_LENGTH)


class WriteInputSerializer(ValueInputSerializer):
    idx = serializers.IntegerField(min_value=-INT32_MAX, max_value=INT32_MAX, help_text="Negative for LangGraph's special writes (WRITES_IDX_MAP).")
    channel = _text(NAME_MAX_LENGTH)


def _encoded(value: selectors.StoredValue) -> dict[str, str]:
    return {"type": value.type, "data": base64.b64encode(value.data).decode()}


def graph_checkpoint_output(row: selectors.GraphCheckpointRow) -> dict[str, Any]:
    return {
        "thread_id": row.thread_id, "checkpoint_ns": row.checkpoint_ns, "checkpoint_id": row.checkpoint_id,
        "parent_checkpoint_id": row.parent_checkpoint_id or None, "checkpoint": _encoded(row.checkpoint), "metadata": row.metadata,
        "channel_values": [{"channel": channel, **_encoded(value)} for channel, value in row.channel_values],
        "pending_writes": [{"task_id": task_id, "channel": channel, **_encoded(value)} for task_id, channel, value in row.pending_writes],
        "created_at": iso_datetime(row.created_at),
    }


class GraphAPIView(AgentAPIView):
    # Every call needs an agent key, reads too: the values are the agent's own,
    # serialised for its own code, and mean nothing to an operator.
    agent_methods = WRITES | {"GET"}
    written = "LangGraph checkpoints"
    users: list[str]

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        self.users = []
        super().initial(request, *args, **kwargs)

    def answer_user_ids(self) -> list[str]:
        return self.users

    def thread_open(self, thread_id: str, user_id: str | None) -> Session:
        session = services.graph_thread_open(agent=self.agent, thread_id=thread_id, user_id=user_id)
        self.users = [session.user_id]
        return session


class GraphCheckpointsView(GraphAPIView):
    class ListQuery(ListQuerySerializer):
        thread_id = IdentifierField(required=False)
        checkpoint_ns = _text(NAMESPACE_MAX_LENGTH, required=False, allow_blank=True)
        checkpoint_id = _text(ID_MAX_LENGTH, required=False)
        before = _text(ID_MAX_LENGTH, required=False)
        filter = StrictCharField(required=False, max_length=65_536)

        def validate_filter(self, value: str) -> dict[str, Any]:
            try:
                parsed = json.loads(value)
            except ValueError:
                parsed = None
            if not isinstance(parsed, dict):
                raise serializers.ValidationError("Must be a JSON object.")
            return parsed

    @extend_schema(
        parameters=[
            *PAGE_PARAMETERS, OpenApiParameter("thread_id", str, description="one thread; all of the agent's if left out"),
            OpenApiParameter("checkpoint_ns", str, description="one namespace (empty: the root); all if left out"),
            OpenApiParameter("checkpoint_id", str), OpenApiParameter("before", str, description="only checkpoints with a smaller id"),
            OpenApiParameter("filter", str, description='JSON object the metadata must contain, e.g. {"source": "input"}'),
        ],
        responses=paged(GraphCheckpointSerializer), operation_id="langgraph_checkpoints_list",
        summary="LangGraph checkpoints, newest first, with their channel values and pending writes (get_tuple, list)",
    )
    def get(self, request: Request) -> Response:
        query = self.input(self.ListQuery, request.query_params.dict())
        page = selectors.graph_checkpoints_page(
            agent=self.agent, thread_id=query.get("thread_id"), checkpoint_ns=query.get("checkpoint_ns"),
            checkpoint_id=query.get("checkpoint_id"), before=query.get("before"), metadata=query.get("filter"), **self.page_query(),
        )
        return self.page_response(page, graph_checkpoint_output)
    class PutInput(StrictInputSerializer):
        thread_id = IdentifierField()
        user_id = UserIdField(required=False, help_text="The end user of a new thread (an existing thread keeps its own).")
        checkpoint_ns = _text(NAMESPACE_MAX_LENGTH, required=False, allow_blank=True, default="")
        checkpoint_id = _text(ID_MAX_LENGTH)
        parent_checkpoint_id = _text(ID_MAX_LENGTH, required=False, allow_null=True, allow_blank=True, default=None)
        checkpoint = ValueInputSerializer(help_text="The checkpoint without its channel values.")
        metadata = serializers.DictField(required=False, default=dict, validators=[json_size_ok])
        channel_versions = serializers.DictField(
            child=_text(ID_MAX_LENGTH), required=False, default=dict, help_text="channel → version (as text) of the checkpoint's values",
        )
        blobs = BlobInputSerializer(many=True, required=False, default=list, max_length=MAX_ITEMS, help_text="The values of the new versions.")

    @extend_schema(
        request=PutInput, responses={201: GraphCheckpointSavedSerializer}, operation_id="langgraph_checkpoints_put",
        summary="Save a LangGraph checkpoint (put): a checkpoint id saved again replaces the earlier one",
    )
    def post(self, request: Request) -> Response:
        data = self.input(self.PutInput)
        for channel in data["channel_versions"]:
            if len(channel.encode("utf-8", "surrogatepass")) > NAME_MAX_LENGTH:
                raise ApplicationError("A channel name is too long.", code="VALIDATION_ERROR", details={"limit": NAME_MAX_LENGTH})
        session = self.thread_open(data["thread_id"], data.get("user_id"))
        services.graph_checkpoint_put(
            session=session, checkpoint_ns=data["checkpoint_ns"], checkpoint_id=data["checkpoint_id"],
            parent_checkpoint_id=data["parent_checkpoint_id"] or "", type=data["checkpoint"]["type"], checkpoint=data["checkpoint"]["data"],
            metadata=data["metadata"], channel_versions=data["channel_versions"], blobs=[services.Blob(**b) for b in data["blobs"]],
            actor=request.user.actor,
        )
        return Response({"thread_id": data["thread_id"], "checkpoint_ns": data["checkpoint_ns"], "checkpoint_id": data["checkpoint_id"]}, status=201)


class GraphWritesView(GraphAPIView):
    class WritesInput(StrictInputSerializer):
        thread_id = IdentifierField()
        user_id = UserIdField(required=False, help_text="The end user of a new thread (an existing thread keeps its own).")
        checkpoint_ns = _text(NAMESPACE_MAX_LENGTH, required=False, allow_blank=True, default="")
        checkpoint_id = _text(ID_MAX_LENGTH)
        task_id = _text(ID_MAX_LENGTH)
        task_path = _text(NAME_MAX_LENGTH, required=False, allow_blank=True, default="")
        writes = WriteInputSerializer(many=True, max_length=MAX_ITEMS)

    @extend_schema(
        request=WritesInput, responses={200: GraphWritesSavedSerializer}, operation_id="langgraph_writes_put",
        summary="Save a task's pending writes (put_writes): sent again, regular writes are kept as first stored, special ones replaced",
    )
    def post(self, request: Request) -> Response:
        data = self.input(self.WritesInput)
        session = self.thread_open(data["thread_id"], data.get("user_id"))
        stored = services.graph_writes_put(
            session=session, checkpoint_ns=data["checkpoint_ns"], checkpoint_id=data["checkpoint_id"], task_id=data["task_id"],
            task_path=data["task_path"], writes=[services.Write(**w) for w in data["writes"]],
        )
        return Response({"thread_id": data["thread_id"], "checkpoint_ns": data["checkpoint_ns"], "checkpoint_id": data["checkpoint_id"], "stored": stored})


class GraphThreadView(GraphAPIView):
    @extend_schema(responses={204: None}, operation_id="langgraph_threads_destroy", summary="Delete a thread's LangGraph checkpoints (delete_thread)")
    def delete(self, request: Request, thread_id: str) -> Response:
        session = selectors.graph_thread_get(agent=self.agent, thread_id=thread_id)
        self.users = [session.user_id]
        services.graph_thread_delete(session=session, actor=request.user.actor)
        return Response(status=204)


class GraphThreadCopyView(GraphAPIView):
    class CopyInput(StrictInputSerializer):
        target_thread_id = IdentifierField()

    @extend_schema(
        request=CopyInput, responses={201: GraphThreadCopiedSerializer}, operation_id="langgraph_threads_copy",
        summary="Copy a thread's LangGraph checkpoints, values and writes to another thread (copy_thread)",
    )
    def post(self, request: Request, thread_id: str) -> Response:
        data = self.input(self.CopyInput)
        source = selectors.graph_thread_get(agent=self.agent, thread_id=thread_id)
        self.users = [source.user_id]
        target, copied = services.graph_thread_copy(source=source, agent=self.agent, target_thread_id=data["target_thread_id"], actor=request.user.actor)
        return Response({"thread_id": target.session_id, "copied": copied}, status=201)


class GraphPruneView(GraphAPIView):
    class PruneInput(StrictInputSerializer):
        thread_ids = serializers.ListField(child=IdentifierField(), max_length=MAX_THREADS)
        strategy = serializers.ChoiceField(choices=list(services.PRUNE_STRATEGIES), default="keep_latest")

    @extend_schema(
        request=PruneInput, responses={200: GraphDeletedSerializer}, operation_id="langgraph_prune",
        summary="Prune threads (prune): keep_latest keeps each namespace's latest checkpoint, delete keeps none",
    )
    def post(self, request: Request) -> Response:
        data = self.input(self.PruneInput)
        sessions = selectors.graph_threads_of(agent=self.agent, thread_ids=data["thread_ids"])
        self.users = sorted({s.user_id for s in sessions})
        return Response({"deleted": services.graph_threads_prune(sessions=sessions, strategy=data["strategy"], actor=request.user.actor)})


class GraphRunsDeleteView(GraphAPIView):
    class RunsInput(StrictInputSerializer):
        run_ids = serializers.ListField(child=_text(ID_MAX_LENGTH), max_length=MAX_THREADS)

    @extend_schema(
        request=RunsInput, responses={200: GraphDeletedSerializer}, operation_id="langgraph_runs_delete",
        summary="Delete the checkpoints and writes of runs, by their metadata run_id (delete_for_runs)",
    )
    def post(self, request: Request) -> Response:
        data = self.input(self.RunsInput)
        return Response({"deleted": services.graph_runs_delete(agent=self.agent, run_ids=data["run_ids"])})
