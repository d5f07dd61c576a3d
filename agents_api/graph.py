"""Graph memory endpoints (docs/graph.md): edges are facts; rules, neighbours, paths and
grounding read them."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from agents_api.base import AgentAPIView, HubAPIView
from agents_api.memories import SourceInputSerializer
from agents_api.outputs import MemoryWrittenSerializer
from agents_api.serializers import StrictCharField, StrictInputSerializer, UserIdField
from memoryhub.core.errors import Forbidden
from memoryhub.core.models import Role
from memoryhub.graph import selectors, services
from memoryhub.memory.models import PredicateKind, Scope
from memoryhub.memory.typed_data import MAX_DATA_STRING
from memoryhub.operations import graph as operations

MAX_GROUNDING_TEXT = 20_000


class EdgeSerializer(serializers.Serializer):
    subject = serializers.CharField()
    predicate = serializers.CharField()
    object = serializers.JSONField()
    confidence = serializers.FloatField()
    entry_id = serializers.UUIDField(allow_null=True, help_text="The stored fact; null for an inferred edge")
    user_id = serializers.CharField(allow_null=True, help_text="The end user the fact is about (an inferred edge's when its facts are all one user's)")
    inferred = serializers.BooleanField()
    via = serializers.ListField(child=serializers.UUIDField(), help_text="The stored facts it follows from (itself, for a stored one)")
    depth = serializers.IntegerField(help_text="Facts away from the entity (1: touching it)")


class GroundingFactSerializer(EdgeSerializer):
    score = serializers.FloatField(help_text="Higher is more relevant: nearer the entities the text names, both ends named, more confident")


class EdgeInputSerializer(StrictInputSerializer):
    subject = StrictCharField(max_length=MAX_DATA_STRING)
    predicate = StrictCharField(max_length=MAX_DATA_STRING)
    object = serializers.JSONField(help_text="A string, a number or a boolean")
    user_id = UserIdField()
    confidence = serializers.FloatField(min_value=0, max_value=1, default=1.0)
    scope = serializers.ChoiceField(choices=Scope.choices, default=Scope.AGENT)
    store = StrictCharField(max_length=64, required=False, help_text="One of this agent's stores (the only one, or `default`, if not given)")
    source = SourceInputSerializer(required=False)


class GraphEdgesView(AgentAPIView):
    written = "Graph edges"

    @extend_schema(request=EdgeInputSerializer, responses={201: MemoryWrittenSerializer},
                   summary="Add a fact subject —predicate→ object (a factual memory; a new object for the subject and predicate supersedes the old)")
    def post(self, request: Request) -> Response:
        made = operations.graph_edge_add_answer(principal=request.user, **self.input(EdgeInputSerializer))
        return Response(made.body, status=201 if made.new else 200)


class RuleSerializer(StrictInputSerializer):
    predicate = StrictCharField(max_length=services.MAX_PREDICATE)
    kind = serializers.ChoiceField(choices=PredicateKind.choices)
    inverse = StrictCharField(max_length=services.MAX_PREDICATE, required=False, default="", allow_blank=True,
                              help_text="For `inverse`: the other predicate")


class RulesSerializer(StrictInputSerializer):
    rules = RuleSerializer(many=True)


def _rules_json(rules: list[Any]) -> dict[str, Any]:
    return {"rules": [{"predicate": r.predicate, "kind": r.kind, **({"inverse": r.inverse} if r.inverse else {})} for r in rules]}


class GraphRulesView(HubAPIView):
    @extend_schema(responses=RulesSerializer, summary="The workspace's graph rules")
    def get(self, request: Request) -> Response:
        return Response(_rules_json(selectors.graph_rules(workspace_id=request.user.workspace.pk)))

    @extend_schema(request=RulesSerializer, responses=RulesSerializer, summary="Replace the workspace's graph rules (admins)")
    def put(self, request: Request) -> Response:
        if not (request.user.is_operator and request.user.allows(Role.ADMIN)):  # who, before what
            raise Forbidden("Graph rules need the admin role.")
        data = self.input(RulesSerializer)
        rules = services.graph_rules_replace(
            membership=request.user.membership, rules=[services.RuleInput(**rule) for rule in data["rules"]],
        )
        return Response(_rules_json(rules))


def _predicates(value: str) -> list[str]:
    return [p for p in (part.strip() for part in value.split(",")) if p]


class NeighborsQuerySerializer(StrictInputSerializer):
    entity = StrictCharField(max_length=MAX_DATA_STRING)
    depth = serializers.IntegerField(min_value=1, max_value=selectors.MAX_DEPTH, default=1)
    predicate = StrictCharField(max_length=4000, required=False, default="", allow_blank=True, help_text="Comma-separated")
    user_id = UserIdField(required=False)
    as_of = serializers.DateTimeField(required=False)
    limit = serializers.IntegerField(default=100, help_text=f"Edges per page, 1–{selectors.MAX_LIMIT} (default 100)")
    cursor = StrictCharField(max_length=40, required=False)


class GraphNeighborsView(HubAPIView):
    @extend_schema(
        parameters=[NeighborsQuerySerializer],
        responses=inline_serializer("GraphNeighbors", {
            "results": EdgeSerializer(many=True), "next": serializers.CharField(allow_null=True),
            "truncated": serializers.BooleanField(help_text="The walk's bounds left edges out: a dense entity sampled, or past its end"),
        }),
        summary="The facts around an entity, nearest first, with the edges the rules infer",
    )
    def get(self, request: Request) -> Response:
        query = self.input(NeighborsQuerySerializer, request.query_params.dict())
        return Response(operations.graph_neighbors_answer(
            principal=request.user, entity=query["entity"], depth=query["depth"], predicates=_predicates(query["predicate"]),
            user_id=query.get("user_id"), as_of=query.get("as_of"), limit=query["limit"], cursor=query.get("cursor"),
        ))


class PathQuerySerializer(StrictInputSerializer):
    source = StrictCharField(max_length=MAX_DATA_STRING)
    to = StrictCharField(max_length=MAX_DATA_STRING)
    max_depth = serializers.IntegerField(min_value=1, max_value=selectors.MAX_PATH_DEPTH, default=4)
    user_id = UserIdField(required=False)
    as_of = serializers.DateTimeField(required=False)


class GraphPathView(HubAPIView):
    @extend_schema(
        parameters=[PathQuerySerializer],
        responses=inline_serializer("GraphPath", {"path": EdgeSerializer(many=True)}),
        summary="A shortest path of facts between two entities (404 NO_PATH when none within max_depth)",
    )
    def get(self, request: Request) -> Response:
        params = request.query_params.dict()
        if "from" in params:  # `from` is the contract's name, a Python keyword
            params["source"] = params.pop("from")
        query = self.input(PathQuerySerializer, params)
        return Response(operations.graph_path_answer(
            principal=request.user, source=query["source"], target=query["to"], max_depth=query["max_depth"],
            user_id=query.get("user_id"), as_of=query.get("as_of"),
        ))


class GroundingInputSerializer(StrictInputSerializer):
    text = StrictCharField(max_length=MAX_GROUNDING_TEXT, trim_whitespace=False)
    user_id = UserIdField(required=False)
    limit = serializers.IntegerField(min_value=1, max_value=selectors.MAX_GROUNDING, default=selectors.DEFAULT_GROUNDING)
    as_of = serializers.DateTimeField(required=False)


class GraphGroundingView(HubAPIView):
    @extend_schema(
        request=GroundingInputSerializer,
        responses=inline_serializer("GraphGrounding", {
            "facts": GroundingFactSerializer(many=True), "message": serializers.DictField(allow_null=True),
            "truncated": serializers.BooleanField(help_text="The bounds of the read cut the neighbourhood short (a dense entity sampled)"),
        }),
        summary="The facts most relevant to a text, best first, and a system message stating them",
    )
    def post(self, request: Request) -> Response:
        data = self.input(GroundingInputSerializer)
        answer = operations.graph_grounding_answer(
            principal=request.user, text=data["text"], user_id=data.get("user_id"), limit=data["limit"], as_of=data.get("as_of"),
        )
        self.users_answered = answer.user_ids
        return Response(answer.body)

    def answer_user_ids(self) -> list[str]:
        # A kept answer (Idempotency-Key) names facts of these users: a purge of any takes it.
        return getattr(self, "users_answered", [])
