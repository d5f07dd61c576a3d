"""Items: the key-value store over memories that LangGraph's BaseStore needs
(docs/client.md, "LangGraph store"; docs/api.md, "Items: the LangGraph store"). Agent keys only; an item belongs to a
store of the agent (`store`, or the agent's only or `default` one)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from agents_api.base import WRITES, AgentAPIView
from agents_api.outputs import ItemGetResultsSerializer, ItemNamespacesSerializer, ItemSearchResultsSerializer, ItemSerializer
from agents_api.serializers import (
    MAX_TTL_SECONDS,
    StrictCharField,
    StrictInputSerializer,
    UserIdField,
    json_size_ok,
    validated,
)
from memoryhub.memory import items
from memoryhub.operations import items as operations

MAX_LABELS = 32
MAX_LABEL_LENGTH = 255
MAX_ITEMS_PER_GET = 500
MAX_SEARCH_LIMIT = 1000
MAX_OFFSET = 1_000_000


class LabelField(StrictCharField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(max_length=MAX_LABEL_LENGTH, trim_whitespace=False, **kwargs)


def namespace_field(**kwargs: Any) -> serializers.ListField:
    return serializers.ListField(child=LabelField(), max_length=MAX_LABELS, **kwargs)


@extend_schema_field({"oneOf": [{"type": "null"}, {"type": "boolean", "enum": [False]}, {"type": "array", "items": {"type": "string"}}]})
class IndexField(serializers.Field):
    """null (the whole value's text), false (not indexed) or the paths of the fields to index."""

    def to_internal_value(self, data: Any) -> list[str] | bool:
        if data is False:
            return False
        if isinstance(data, list) and len(data) <= 64 and all(isinstance(path, str) and 0 < len(path) <= 500 for path in data):
            return data
        raise serializers.ValidationError("Must be null, false or a list of up to 64 field paths.")

    def to_representation(self, value: Any) -> Any:
        return value


class ItemKeySerializer(StrictInputSerializer):
    namespace = namespace_field(allow_empty=False)
    key = StrictCharField(max_length=255, trim_whitespace=False)


class StoreSerializer(StrictInputSerializer):
    store = StrictCharField(max_length=64, required=False)


class ItemPutSerializer(ItemKeySerializer, StoreSerializer):
    value = serializers.DictField(validators=[json_size_ok], help_text="Any JSON object.")
    index = IndexField(
        required=False, allow_null=True, default=None,
        help_text="null: the whole value's text is embedded; false: not in semantic search; or the field paths (`a.b`, `a[0]`, `a[*].b`) to embed.",
    )
    ttl_seconds = serializers.IntegerField(
        min_value=1, max_value=MAX_TTL_SECONDS, required=False, allow_null=True, default=None,
        help_text="Expires this long after the last write, or the last read that asked to refresh it.",
    )
    user_id = UserIdField(required=False, help_text="The end user the item is about, for purges (default `store`).")


class ItemGetSerializer(StoreSerializer):
    items = ItemKeySerializer(many=True, allow_empty=False, max_length=MAX_ITEMS_PER_GET)
    refresh_ttl = serializers.BooleanField(required=False, default=True)


class ItemDeleteSerializer(ItemKeySerializer, StoreSerializer):
    pass


class ItemSearchSerializer(StoreSerializer):
    namespace_prefix = namespace_field(required=False, default=list)
    query = StrictCharField(max_length=4000, required=False, allow_null=True, allow_blank=True, trim_whitespace=False)
    filter = serializers.DictField(
        required=False, default=dict, validators=[json_size_ok],
        help_text="Field path → value (equal), or → {$eq, $ne, $gt, $gte, $lt, $lte: value}.",
    )
    limit = serializers.IntegerField(min_value=1, max_value=MAX_SEARCH_LIMIT, required=False, default=10)
    offset = serializers.IntegerField(min_value=0, max_value=MAX_OFFSET, required=False, default=0)
    refresh_ttl = serializers.BooleanField(required=False, default=True)


class NamespacesQuerySerializer(StoreSerializer):
    prefix = namespace_field(required=False, default=list)
    suffix = namespace_field(required=False, default=list)
    max_depth = serializers.IntegerField(min_value=1, max_value=MAX_LABELS, required=False, allow_null=True, default=None)
    limit = serializers.IntegerField(min_value=1, max_value=MAX_SEARCH_LIMIT, required=False, default=100)
    offset = serializers.IntegerField(min_value=0, max_value=MAX_OFFSET, required=False, default=0)


class ItemAPIView(AgentAPIView):
    agent_methods = WRITES | {"GET"}
    written = "Items"


class ItemsView(ItemAPIView):
    @extend_schema(
        request=ItemPutSerializer, responses={201: ItemSerializer, 200: ItemSerializer}, operation_id="v1_memories_items_put",
        summary="Store an item under (namespace, key): created (201) or replaced (200)",
    )
    def put(self, request: Request) -> Response:
        data = self.input(ItemPutSerializer)
        made = operations.item_put_answer(
            principal=request.user, store=data.get("store"), namespace=data["namespace"], key=data["key"], value=data["value"],
            index=data["index"], ttl_seconds=data["ttl_seconds"], user_id=data.get("user_id"),
        )
        return Response(made.body, status=201 if made.new else 200)


class ItemsGetView(ItemAPIView):
    @extend_schema(
        request=ItemGetSerializer, responses={200: ItemGetResultsSerializer}, operation_id="v1_memories_items_get",
        summary="Read items by (namespace, key): one result per key asked, null where there is none",
    )
    def post(self, request: Request) -> Response:
        data = self.input(ItemGetSerializer)
        keys = [(key["namespace"], key["key"]) for key in data["items"]]
        return Response(operations.items_get_answer(principal=request.user, store=data.get("store"), keys=keys, refresh_ttl=data["refresh_ttl"]))


class ItemsDeleteView(ItemAPIView):
    @extend_schema(request=ItemDeleteSerializer, responses={204: None}, operation_id="v1_memories_items_delete",
                   summary="Delete an item (no error if there is none)")
    def post(self, request: Request) -> Response:
        data = self.input(ItemDeleteSerializer)
        store = items.item_store(agent=self.agent, name=data.get("store"))
        items.item_delete(store=store, namespace=data["namespace"], key=data["key"])
        return Response(status=204)


class ItemsSearchView(ItemAPIView):
    throttle_scope = "searches"

    @extend_schema(
        request=ItemSearchSerializer, responses={200: ItemSearchResultsSerializer}, operation_id="v1_memories_items_search",
        summary="Items under a namespace prefix, by meaning (with `query`) or newest first, filtered on their values",
    )
    def post(self, request: Request) -> Response:
        data = self.input(ItemSearchSerializer)
        return Response(operations.items_search_answer(
            principal=request.user, store=data.get("store"), namespace_prefix=data["namespace_prefix"], query=data.get("query"),
            filters=data["filter"], limit=data["limit"], offset=data["offset"], refresh_ttl=data["refresh_ttl"],
        ))


class NamespacesView(ItemAPIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("prefix", str, many=True, description="Repeated, one label each; `*` matches any label"),
            OpenApiParameter("suffix", str, many=True, description="Repeated, one label each; `*` matches any label"),
            OpenApiParameter("max_depth", int, description="Namespaces cut to this many labels"),
            OpenApiParameter("limit", int, description=f"1–{MAX_SEARCH_LIMIT}, default 100"),
            OpenApiParameter("offset", int), OpenApiParameter("store", str),
        ],
        responses={200: ItemNamespacesSerializer}, operation_id="v1_memories_namespaces",
        summary="The namespaces holding items, sorted",
    )
    def get(self, request: Request) -> Response:
        params = request.query_params
        raw: dict[str, Any] = {name: params.get(name) for name in params if name not in ("prefix", "suffix")}
        raw.update({name: params.getlist(name) for name in ("prefix", "suffix") if name in params})
        data = validated(NamespacesQuerySerializer, raw).validated_data
        store = items.item_store(agent=self.agent, name=data.get("store"))
        found = items.item_namespaces(
            store=store, prefix=data["prefix"], suffix=data["suffix"], max_depth=data["max_depth"], limit=data["limit"], offset=data["offset"],
        )
        return Response({"results": found})

