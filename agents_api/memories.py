"""Long-term memory endpoints (docs/api.md, "Long-term memory")."""

from __future__ import annotations

from typing import Any

import numpy as np
from django.conf import settings
from django.http import QueryDict
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from agents_api.base import AgentAPIView, HubAPIView, ListQuerySerializer
from agents_api.permissions import operator_with_role
from agents_api.outputs import (
    MemoryBatchSerializer,
    MemoryRevisionsSerializer,
    MemorySearchResultsSerializer,
    MemorySerializer,
    MemoryStatsSerializer,
    MemoryWrittenSerializer,
    ReviewQueuePageSerializer,
    paged,
)
from agents_api.serializers import (
    INT32_MAX,
    INT64_MAX,
    MAX_TTL_SECONDS,
    IdentifierField,
    StrictCharField,
    StrictInputSerializer,
    UserIdField,
    int_param,
    json_size_ok,
    validated,
)
from memoryhub.core.errors import ApplicationError, Forbidden
from memoryhub.core.models import Role, validate_user_id
from memoryhub.core.priority import lowered_priority
from memoryhub.core.text import text_problem
from memoryhub.graph import search as graph_search
from memoryhub.memory import search, selectors, services
from memoryhub.memory.models import MemoryType, OnDuplicate, Review, Scope, SourceKind
from memoryhub.operations import memory as operations
from memoryhub.representations.memory import memory_json

MAX_TAGS = 64
MAX_TAG_LENGTH = 100
MAX_KEY_LENGTH = 255


class TagsField(serializers.ListField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(child=serializers.CharField(max_length=MAX_TAG_LENGTH, allow_blank=False), max_length=MAX_TAGS, **kwargs)

    def to_internal_value(self, data: Any) -> list[str]:
        if isinstance(data, list) and not all(isinstance(tag, str) for tag in data):
            raise serializers.ValidationError("Tags must be strings.")
        return list(dict.fromkeys(super().to_internal_value(data)))  # de-duplicated, order kept


class EmbeddingField(serializers.ListField):
    MAX_DIMENSIONS = 4096

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(child=serializers.FloatField(), max_length=self.MAX_DIMENSIONS, **kwargs)

    def to_internal_value(self, data: Any) -> list[float]:
        # Checked in one pass rather than through a FloatField per number: a batch of 500
        # vectors is 192,000 numbers, and per-item validation cost more than the insert.
        if not isinstance(data, list) or not set(map(type, data)) <= {float, int}:  # bool is not int here
            raise serializers.ValidationError("Must be a list of numbers.")
        if len(data) > self.MAX_DIMENSIONS:
            raise serializers.ValidationError(f"Must have at most {self.MAX_DIMENSIONS} numbers.")
        if not np.isfinite(np.asarray(data, dtype=np.float64)).all():
            raise serializers.ValidationError("Numbers must be finite.")
        return data


class _NeedsFullValidation(Exception):
    """The item is not plainly valid: DRF's own validation refuses or coerces it."""


_MISSING: Any = object()


def _plain_text(value: Any, *, max_length: int, trimmed: bool = True) -> str:
    """`value` if DRF's CharField keeps it as it is: a string, not blank, nothing to trim
    (where the field trims), no NUL and no lone surrogate (what its validators refuse)."""
    if type(value) is not str or not 0 < len(value) <= max_length:
        raise _NeedsFullValidation
    stripped = value.strip()
    if not stripped or (trimmed and stripped != value) or text_problem(value):
        raise _NeedsFullValidation
    return value


def _plain_choice(value: Any, *, field: serializers.ChoiceField) -> str:
    if value is _MISSING:
        return field.default
    if type(value) is not str or value not in field.choices:
        raise _NeedsFullValidation
    return value


def _plain_json_object(value: Any) -> dict[str, Any]:
    if type(value) is not dict:
        raise _NeedsFullValidation
    try:
        json_size_ok(value)
    except serializers.ValidationError:
        raise _NeedsFullValidation from None
    return dict(value)


class SourceInputSerializer(StrictInputSerializer):
    """What a memory came from: {session_id, seq}, {session_id, call_id} or {episode_id}."""

    session_id = IdentifierField(required=False)
    seq = serializers.IntegerField(min_value=1, max_value=INT64_MAX, required=False)
    call_id = IdentifierField(required=False)
    episode_id = serializers.IntegerField(min_value=1, max_value=INT64_MAX, required=False)

    def validate(self, attrs: dict[str, Any]) -> services.Source:
        return services.Source.named(**attrs)


class MemoryInputSerializer(StrictInputSerializer):
    content = StrictCharField(max_length=settings.MEMORYHUB_MAX_CONTENT_CHARS, trim_whitespace=False)
    user_id = UserIdField()
    scope = serializers.ChoiceField(choices=Scope.choices, default=Scope.AGENT)
    store = StrictCharField(max_length=64, required=False)
    memory_type = serializers.ChoiceField(choices=MemoryType.choices, default=MemoryType.NOTE)
    tags = TagsField(required=False, default=list)
    metadata = serializers.DictField(required=False, default=dict, validators=[json_size_ok])
    data = serializers.DictField(required=False, allow_null=True, default=None, validators=[json_size_ok])
    key = StrictCharField(max_length=MAX_KEY_LENGTH, required=False, allow_null=True, default=None)
    ttl_seconds = serializers.IntegerField(min_value=1, max_value=MAX_TTL_SECONDS, required=False, allow_null=True, default=None)
    expires_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    embedding = EmbeddingField(required=False, allow_null=True, default=None)
    source = SourceInputSerializer(required=False, help_text="Where the memory came from; what it names must be this agent's (422 SOURCE_NOT_FOUND)")

    def validate_content(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("Must not be blank.")
        return value

    def run_validation(self, data: Any = serializers.empty) -> Any:
        # A batch is up to 500 items and DRF's field-by-field validation took ~0.15 ms
        # each, more than storing them. Plainly valid items (the common case) are checked
        # here directly; anything else goes through DRF, so every refusal and every
        # coercion stays DRF's own (tests/test_memories_batch_validation.py compares the two).
        try:
            return self._plainly_valid(data)
        except _NeedsFullValidation:
            return super().run_validation(data)

    def _plainly_valid(self, data: Any) -> dict[str, Any]:
        # Limits, choices and defaults are read off the declared fields, so the two checks
        # cannot drift apart.
        fields = self.fields
        if type(data) is not dict or not data.keys() <= fields.keys() or "source" in data:
            raise _NeedsFullValidation
        get = data.get
        item: dict[str, Any] = {
            "content": _plain_text(get("content"), max_length=fields["content"].max_length, trimmed=False),
            "user_id": _plain_text(get("user_id"), max_length=fields["user_id"].max_length),
            "scope": _plain_choice(get("scope", _MISSING), field=fields["scope"]),
        }
        if "store" in data:
            item["store"] = _plain_text(data["store"], max_length=fields["store"].max_length)
        item["memory_type"] = _plain_choice(get("memory_type", _MISSING), field=fields["memory_type"])
        tags, tags_field = get("tags", []), fields["tags"]
        if type(tags) is not list or len(tags) > tags_field.max_length:
            raise _NeedsFullValidation
        item["tags"] = list(dict.fromkeys(_plain_text(tag, max_length=tags_field.child.max_length) for tag in tags))
        item["metadata"] = _plain_json_object(get("metadata", {}))
        item["data"] = None if get("data") is None else _plain_json_object(data["data"])
        item["key"] = None if get("key") is None else _plain_text(data["key"], max_length=fields["key"].max_length)
        ttl, ttl_field = get("ttl_seconds"), fields["ttl_seconds"]
        if ttl is not None and (type(ttl) is not int or not ttl_field.min_value <= ttl <= ttl_field.max_value):
            raise _NeedsFullValidation
        item["ttl_seconds"] = ttl
        if get("expires_at") is not None:
            raise _NeedsFullValidation  # rare in bulk; DRF parses the date
        item["expires_at"] = None
        embedding = get("embedding")
        if embedding is not None:
            try:
                embedding = fields["embedding"].run_validation(embedding)
            except serializers.ValidationError:
                raise _NeedsFullValidation from None
        item["embedding"] = embedding
        return item


ON_DUPLICATE_HELP = (
    "When you can already see the same memory (same user_id, scope and memory_type; the same text once case, spaces and "
    "punctuation are set aside, or an embedding at least MEMORYHUB_DUPLICATE_SIMILARITY similar): `keep` stores it anyway and "
    "lists `similar`; `skip` answers the existing entry (200); `update` makes the new content the next revision of the "
    "agent's own duplicate (200; another agent's is kept beside, as with `keep`). "
    "Keyed writes and facts follow their own rules."
)


class MemoryCreateSerializer(MemoryInputSerializer):
    on_duplicate = serializers.ChoiceField(choices=OnDuplicate.choices, default=OnDuplicate.KEEP, help_text=ON_DUPLICATE_HELP)

    def _plainly_valid(self, data: Any) -> dict[str, Any]:
        item = super()._plainly_valid(data)
        item["on_duplicate"] = _plain_choice(data.get("on_duplicate", _MISSING), field=self.fields["on_duplicate"])
        return item


def _input_of(data: dict[str, Any]) -> services.MemoryInput:
    return services.MemoryInput(**data)  # `source`, when given, is a services.Source already


class FiltersSerializer(StrictInputSerializer):
    tags = TagsField(required=False, default=list)
    metadata = serializers.DictField(required=False, default=dict)
    scope = serializers.ChoiceField(choices=Scope.choices, required=False)
    user_id = UserIdField(required=False)
    memory_type = serializers.ChoiceField(choices=MemoryType.choices, required=False)
    store = StrictCharField(max_length=64, required=False)
    agent = StrictCharField(max_length=64, required=False)
    start_time = serializers.DateTimeField(required=False)
    end_time = serializers.DateTimeField(required=False)
    include_invalidated = serializers.BooleanField(required=False, default=False)
    as_of = serializers.DateTimeField(required=False)

    def filters(self) -> selectors.MemoryFilters:
        data = self.validated_data
        return selectors.MemoryFilters(
            tags=data.get("tags", []),
            metadata=data.get("metadata", {}),
            scope=data.get("scope"),
            user_id=data.get("user_id"),
            memory_type=data.get("memory_type"),
            store=data.get("store"),
            agent=data.get("agent"),
            created_after=data.get("start_time"),
            created_before=data.get("end_time"),
            include_invalidated=data.get("include_invalidated", False),
            as_of=data.get("as_of"),
        )


def _filters_from_query(params: QueryDict) -> selectors.MemoryFilters:
    """GET ?tags=a,b&scope=&user_id=&memory_type=&created_after=&created_before=&metadata.K=V…"""
    raw: dict[str, Any] = {}
    metadata: dict[str, str] = {}
    renames = {"created_after": "start_time", "created_before": "end_time"}
    for name, value in params.items():
        if name.startswith("metadata."):
            metadata[name.removeprefix("metadata.")] = value
        elif name == "tags":
            raw["tags"] = [t for t in value.split(",") if t]
        elif name in ("cursor", "limit"):
            continue
        else:
            raw[renames.get(name, name)] = value
    raw["metadata"] = metadata
    serializer = validated(FiltersSerializer, raw)
    return serializer.filters()


class MemoriesView(AgentAPIView):
    written = "Memories"

    @extend_schema(
        request=MemoryCreateSerializer,
        responses={201: MemoryWrittenSerializer, 200: MemoryWrittenSerializer},
        summary="Store a memory (an existing key of this agent, or a duplicate skipped or updated: 200)",
    )
    def post(self, request: Request) -> Response:
        data = self.input(MemoryCreateSerializer)
        on_duplicate = data.pop("on_duplicate")
        made = operations.memory_store_answer(principal=request.user, item=_input_of(data), on_duplicate=on_duplicate)
        return Response(made.body, status=201 if made.new else 200)

    @extend_schema(
        parameters=[
            OpenApiParameter("tags", str, description="Comma-separated; entries having all of them"),
            OpenApiParameter("scope", str), OpenApiParameter("user_id", str), OpenApiParameter("memory_type", str),
            OpenApiParameter("store", str), OpenApiParameter("agent", str),
            OpenApiParameter("created_after", str), OpenApiParameter("created_before", str),
            OpenApiParameter("include_invalidated", bool), OpenApiParameter("as_of", str, description="Facts valid at that time"),
            OpenApiParameter("metadata.KEY", str, description="Metadata KEY equals the value"),
            OpenApiParameter("cursor", str), OpenApiParameter("limit", int, description="1..200, default 50"),
        ],
        responses=paged(MemorySerializer),
        summary="List memories, newest first, cursor-paginated",
        operation_id="v1_memories_list",
    )
    def get(self, request: Request) -> Response:
        filters = _filters_from_query(request.query_params)
        limit = int_param(request, "limit", 50, low=1, high=200)
        return Response(operations.memory_list_answer(principal=request.user, filters=filters, cursor=request.query_params.get("cursor"), limit=limit))


class MemoryBatchView(AgentAPIView):
    written = "Memories"

    class MemoryBatchInputSerializer(StrictInputSerializer):
        items = MemoryInputSerializer(many=True, allow_empty=False, max_length=settings.MEMORYHUB_MAX_BATCH_ITEMS)
        on_duplicate = serializers.ChoiceField(
            choices=OnDuplicate.choices, default=OnDuplicate.KEEP,
            help_text=f"For every item. {ON_DUPLICATE_HELP} Items are compared with what was stored before the batch.",
        )

    @extend_schema(request=MemoryBatchInputSerializer, responses={201: MemoryBatchSerializer}, summary="Store many memories, all or nothing")
    def post(self, request: Request) -> Response:
        with lowered_priority(settings.MEMORYHUB_BULK_WRITE_NICENESS):
            data = self.input(self.MemoryBatchInputSerializer)
            items = [_input_of(i) for i in data["items"]]
            return Response(operations.memory_batch_answer(principal=request.user, items=items, on_duplicate=data["on_duplicate"]), status=201)


class MemoryDetailView(AgentAPIView):
    written = "Memories"
    agent_methods = frozenset()  # operators with the role may edit (with a reason) and delete

    class MemoryPatchSerializer(StrictInputSerializer):
        content = StrictCharField(max_length=settings.MEMORYHUB_MAX_CONTENT_CHARS, required=False, trim_whitespace=False)
        tags = TagsField(required=False)
        metadata = serializers.DictField(required=False, validators=[json_size_ok])
        data = serializers.DictField(required=False, validators=[json_size_ok])
        ttl_seconds = serializers.IntegerField(min_value=1, max_value=MAX_TTL_SECONDS, required=False)
        expires_at = serializers.DateTimeField(required=False)
        embedding = EmbeddingField(required=False)
        version = serializers.IntegerField(min_value=1, max_value=INT32_MAX, required=False, help_text="The version you read; stale → 409")
        reason = StrictCharField(max_length=2000, required=False, default="", help_text="Why: required of operators, kept in the revision")

    @extend_schema(responses=MemorySerializer, summary="Read one memory")
    def get(self, request: Request, entry_id: str) -> Response:
        return Response(operations.memory_get_answer(principal=request.user, memory_id=entry_id))

    @extend_schema(request=MemoryPatchSerializer, responses=MemorySerializer, summary="Change a memory")
    def patch(self, request: Request, entry_id: str) -> Response:
        entry = selectors.entry_get(principal=request.user, entry_id=entry_id)
        services.ensure_may_change(principal=request.user, entry=entry)  # who, before what
        data = dict(self.input(self.MemoryPatchSerializer))
        version, reason = data.pop("version", None), data.pop("reason")
        entry = services.memory_update(
            principal=request.user, entry=entry, changes=services.MemoryChanges(**data), expected_version=version, reason=reason,
        )
        return Response(memory_json(selectors.entry_get(principal=request.user, entry_id=str(entry.pk))))

    @extend_schema(responses={204: None}, summary="Delete a memory")
    def delete(self, request: Request, entry_id: str) -> Response:
        entry = selectors.entry_get(principal=request.user, entry_id=entry_id)
        services.memory_delete(principal=request.user, entry=entry)
        return Response(status=204)


class MemoryRevisionsView(HubAPIView):
    @extend_schema(responses=MemoryRevisionsSerializer, summary="A memory's revisions, newest first (the first is the current one)")
    def get(self, request: Request, entry_id: str) -> Response:
        return Response(operations.memory_revisions_answer(principal=request.user, memory_id=entry_id))


class MemoryRevertView(HubAPIView):
    class RevertSerializer(StrictInputSerializer):
        revision = serializers.IntegerField(min_value=1, max_value=INT32_MAX)
        reason = StrictCharField(max_length=2000, required=False, default="")

    @extend_schema(request=RevertSerializer, responses=MemorySerializer, summary="Make an earlier revision the current one (as a new revision)")
    def post(self, request: Request, entry_id: str) -> Response:
        entry = selectors.entry_get(principal=request.user, entry_id=entry_id)
        services.ensure_may_change(principal=request.user, entry=entry)  # who, before what
        data = self.input(self.RevertSerializer)
        return Response(operations.memory_revert_answer(principal=request.user, memory_id=entry_id, **data))


class ReviewQueueView(HubAPIView):
    """What waits for a person (operators)."""

    permission_classes = [operator_with_role(Role.VIEWER)]

    class QueueQuerySerializer(ListQuerySerializer):
        reason = serializers.ChoiceField(choices=[Review.UNREVIEWED, Review.FLAGGED, Review.QUARANTINED, "duplicates"], default=Review.FLAGGED)

    @extend_schema(
        parameters=[QueueQuerySerializer],
        responses=ReviewQueuePageSerializer,
        operation_id="v1_memories_review_queue",
        summary="Memories in one review state, oldest first; or, for `duplicates`, the oldest 50 groups {entries, score} (operators)",
    )
    def get(self, request: Request) -> Response:
        query = self.input(self.QueueQuerySerializer, request.query_params.dict())
        return Response(operations.review_queue_answer(principal=request.user, reason=query["reason"], **self.page_query()))


class ReviewSettingsView(HubAPIView):
    """Which sources' new memories start quarantined: operators read, admins change."""

    permission_classes = [operator_with_role(Role.VIEWER)]

    class ReviewSettingsSerializer(StrictInputSerializer):
        quarantine_sources = serializers.ListField(child=serializers.ChoiceField(choices=SourceKind.choices), max_length=len(SourceKind.values))

    @extend_schema(responses=ReviewSettingsSerializer, summary="The workspace's review settings")
    def get(self, request: Request) -> Response:
        return Response({"quarantine_sources": sorted(request.user.workspace.quarantine_sources)})

    @extend_schema(request=ReviewSettingsSerializer, responses=ReviewSettingsSerializer, summary="Change the review settings (admins)")
    def put(self, request: Request) -> Response:
        if not request.user.allows(Role.ADMIN):  # who, before what
            raise Forbidden("Review settings need the admin role.")
        data = self.input(self.ReviewSettingsSerializer)
        kept = services.review_settings_set(membership=request.user.membership, quarantine_sources=data["quarantine_sources"])
        return Response({"quarantine_sources": kept})


class MemoryReviewView(HubAPIView):
    class ReviewSerializer(StrictInputSerializer):
        action = serializers.ChoiceField(choices=list(services.REVIEW_ACTIONS))
        reason = StrictCharField(max_length=2000, required=False, default="")

    @extend_schema(request=ReviewSerializer, responses=MemorySerializer,
                   summary="Verify, flag, quarantine or release a memory (agents may only flag)")
    def post(self, request: Request, entry_id: str) -> Response:
        selectors.entry_get(principal=request.user, entry_id=entry_id)  # 404 before the body is read
        data = self.input(self.ReviewSerializer)
        return Response(operations.memory_review_answer(principal=request.user, memory_id=entry_id, **data))


class MemoryMergeView(HubAPIView):
    class MergeSerializer(StrictInputSerializer):
        others = serializers.ListField(child=serializers.UUIDField(), min_length=1, max_length=services.MAX_MERGED)
        reason = StrictCharField(max_length=2000, required=False, default="")

    @extend_schema(request=MergeSerializer, responses=MemorySerializer,
                   summary="Keep this memory; the others are superseded by it (approvers and admins, or the agent owning them all)")
    def post(self, request: Request, entry_id: str) -> Response:
        entry = selectors.entry_get(principal=request.user, entry_id=entry_id, include_invalidated=False)
        services.ensure_may_merge(principal=request.user, entry=entry)  # who, before what
        data = self.input(self.MergeSerializer)
        entry = services.memory_merge(principal=request.user, entry=entry, others=[str(o) for o in data["others"]], reason=data["reason"])
        return Response(memory_json(selectors.entry_get(principal=request.user, entry_id=str(entry.pk))))


class MemorySearchView(HubAPIView):
    # A search, posted for its body: operators may search too.
    throttle_scope = "searches"

    class MemorySearchInputSerializer(FiltersSerializer):
        query = StrictCharField(max_length=4000, required=False, allow_blank=True)
        mode = serializers.ChoiceField(choices=search.MODES, default="hybrid")
        max_results = serializers.IntegerField(min_value=1, required=False, default=search.DEFAULT_MAX_RESULTS)
        min_relevance = serializers.FloatField(min_value=0, max_value=1, required=False, allow_null=True, default=None)
        embedding = EmbeddingField(required=False, allow_null=True, default=None, help_text="Your own query vector (same model as the hub's)")
        repeats = serializers.ChoiceField(
            choices=search.REPEATS, default="demote",
            help_text="`demote`: a result that says again what a better one says (cosine ≥ MEMORYHUB_SEARCH_REPEAT_SIMILARITY, 0.95 by default) scores only what it adds and follows the distinct results, with `repeat_of`; `keep`: ranked as any other",
        )
        follow_names = serializers.ChoiceField(
            choices=search.FOLLOW_NAMES, default="results",
            help_text="Two-hop questions: results that mention a name the two best results mention, and the query does not, score 0.03 more. "
            "`results`: among the results read (three times `max_results`); `all`: among every entry searched (a second ranking, ~1 ms more); `off`",
        )
        rerank = serializers.BooleanField(
            required=False, allow_null=True, default=None,
            help_text="Results reordered and scored by the hub's reranker (MEMORYHUB_RERANK_URL), which reads the query with each of the best "
            "MEMORYHUB_RERANK_CANDIDATES results. Default: where one is configured and there is a `query`; `true` without one → 400 "
            "`RERANK_NOT_CONFIGURED`. A reranker that fails leaves the results in the search's own order, `reranked` false",
        )
        follow_graph = serializers.BooleanField(
            default=False,
            help_text="Two-hop questions through the graph: the facts (factual memories) touching the entities the `query` names, and the "
            f"facts one step further (up to {graph_search.FOLLOWED_FACTS}, found as graph grounding finds them), join the candidates, each "
            f"scored as any result plus {graph_search.FOLLOWED_FACT_BONUS} × (0.5 + 0.5 × its confidence), at most 1. Only facts the "
            "caller sees about `user_id`, as of `as_of`, shown within the other filters. Default false; `true` needs a `query`",
        )

    @extend_schema(request=MemorySearchInputSerializer, responses=MemorySearchResultsSerializer, summary="Search memories (hybrid, semantic or keyword)")
    def post(self, request: Request) -> Response:
        serializer = self.input_serializer(self.MemorySearchInputSerializer)
        data = serializer.validated_data
        return Response(operations.memory_search_answer(
            principal=request.user,
            follow_graph=data["follow_graph"],
            request=search.SearchRequest(
                filters=serializer.filters(),
                query=data.get("query") or None,
                mode=data["mode"],
                max_results=data["max_results"],
                min_relevance=data["min_relevance"],
                query_embedding=data["embedding"],
                repeats=data["repeats"],
                follow_names=data["follow_names"],
                rerank=data["rerank"],
            ),
        ))


class StatsView(HubAPIView):
    @extend_schema(parameters=[OpenApiParameter("user_id", str)], responses=MemoryStatsSerializer, summary="Counts per memory kind and type, storage use")
    def get(self, request: Request) -> Response:
        user_id = request.query_params.get("user_id")
        if user_id is not None:
            try:
                validate_user_id(user_id)
            except Exception:
                raise ApplicationError("user_id must be a non-empty string of at most 255 characters.", code="VALIDATION_ERROR") from None
        return Response(operations.memory_stats_answer(principal=request.user, user_id=user_id))
