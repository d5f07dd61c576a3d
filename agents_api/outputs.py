"""What the API answers, for the OpenAPI schema.

These serializers describe the bodies the views build with the hub's one representation
of each resource (memoryhub/representations/: `memory_json`, `message_json`,
`checkpoint_json`, …), which the MCP tools and the console's downloads use too; they
never render anything:
building dicts directly was measured to be faster on the hot paths (a batch of 500
entries, a checkpoint load). The tests check every response against them
(tests/conftest.py, `api_client`), so a description cannot drift from the body.

What a client sends and gets back as it was (memory `metadata` and `data`, checkpoint
`state`, tool `args` and results, timeline `ref`, audit `details`) is "any JSON":
`serializers.JSONField()` for any value, `serializers.DictField()` for any object.
"""

from __future__ import annotations

from functools import cache

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers

from memoryhub.approvals.models import ApprovalStatus, Decision, RuleScope
from memoryhub.checkpoints.services import CHECKPOINT_PARTS
from memoryhub.core.jobs import JobStatus
from memoryhub.conversations.models import Role, SummaryPolicy
from memoryhub.episodes.models import EpisodeOutcome
from memoryhub.memory.models import Change, MemoryType, Review, Scope, SourceKind
from memoryhub.plans.models import StepStatus
from memoryhub.tools.models import ToolCallStatus


def counts_field(**kwargs: object) -> serializers.DictField:
    """A map of names (kinds, types, roles, tools…) to non-negative counts."""
    return serializers.DictField(child=serializers.IntegerField(min_value=0), **kwargs)


@cache
def paged(item: type[serializers.Serializer]) -> type[serializers.Serializer]:
    """The list envelope of docs/api.md, "Lists and cursors", around `item`: `{results, next}`.
    One class per item (cached), so each page is one schema component, `<Item>Page`."""
    name = item.__name__.removesuffix("Serializer")

    class PageSerializer(serializers.Serializer):
        results = item(many=True)
        next = serializers.CharField(allow_null=True, help_text="The `cursor` of the next page; null on the last one.")

    PageSerializer.__name__ = PageSerializer.__qualname__ = f"{name}PageSerializer"
    PageSerializer.__doc__ = f"A page of {name} items, in the list's order."
    return PageSerializer


# --- long-term memory -------------------------------------------------------------------


class SourceSerializer(serializers.Serializer):
    """Where a memory came from: `kind`, and what names it (only what is set)."""

    kind = serializers.ChoiceField(choices=SourceKind.choices)
    session_id = serializers.CharField(required=False)
    seq = serializers.IntegerField(required=False)
    call_id = serializers.CharField(required=False)
    episode_id = serializers.IntegerField(required=False)
    import_id = serializers.IntegerField(required=False)


class MemorySerializer(serializers.Serializer):
    """A long-term memory entry."""

    id = serializers.UUIDField()
    key = serializers.CharField(allow_null=True)
    content = serializers.CharField()
    user_id = serializers.CharField()
    scope = serializers.ChoiceField(choices=Scope.choices)
    store = serializers.CharField()
    agent = serializers.CharField()
    memory_type = serializers.ChoiceField(choices=MemoryType.choices)
    tags = serializers.ListField(child=serializers.CharField())
    metadata = serializers.DictField(help_text="Any JSON object, as written.")
    data = serializers.DictField(
        allow_null=True, help_text="Typed memories' data (factual, procedural, semantic: see docs/memory.md, \"Typed memories\"); any JSON object for others."
    )
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField(allow_null=True)
    version = serializers.IntegerField()
    invalidated_at = serializers.DateTimeField(allow_null=True, help_text="When a newer fact superseded this one.")
    superseded_by = serializers.UUIDField(allow_null=True)
    revision = serializers.IntegerField(help_text="1 on create, one more on every change (the same number as `version`)")
    source = SourceSerializer()
    review = serializers.ChoiceField(choices=Review.choices)


class MemoryRevisionSerializer(serializers.Serializer):
    revision = serializers.IntegerField()
    content = serializers.CharField()
    tags = serializers.ListField(child=serializers.CharField())
    metadata = serializers.DictField()
    data = serializers.DictField(allow_null=True)
    change = serializers.ChoiceField(choices=Change.choices)
    changed_by = serializers.CharField(allow_blank=True, help_text="agent:NAME, operator:NAME, or empty for memories older than revisions")
    changed_at = serializers.DateTimeField()
    reason = serializers.CharField(allow_blank=True)


class MemoryRevisionsSerializer(serializers.Serializer):
    results = MemoryRevisionSerializer(many=True)


class SimilarSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    score = serializers.FloatField(help_text="1 for the same text once case, spaces and punctuation are set aside; else the cosine similarity of the embeddings")


class MemoryWrittenSerializer(MemorySerializer):
    """A created memory, or the duplicate found instead (`on_duplicate` skip or update)."""

    duplicate = serializers.BooleanField(help_text="True when this is an entry you could already see, skipped or updated instead of a new one")
    similar = SimilarSerializer(many=True, help_text="Entries like this one that you can see, most similar first (at most 5); empty when none")


class MemoryBatchSerializer(serializers.Serializer):
    items = MemoryWrittenSerializer(many=True)


class DuplicateGroupSerializer(serializers.Serializer):
    entries = MemorySerializer(many=True, help_text="The first written first; the others were written while it was there")
    score = serializers.FloatField(help_text="The least similarity in the group")


class ReviewQueuePageSerializer(serializers.Serializer):
    """A page of the review queue: memories, or for `reason=duplicates` groups of them."""

    results = PolymorphicProxySerializer(
        component_name="ReviewQueueItem", serializers=[MemorySerializer, DuplicateGroupSerializer], resource_type_field_name=None, many=True,
    )
    next = serializers.CharField(allow_null=True, help_text="The `cursor` of the next page; null on the last one (always, for duplicates).")


class MemorySearchHitSerializer(serializers.Serializer):
    entry = MemorySerializer()
    score = serializers.FloatField(help_text="The mode's relevance, 0–1; 1 for every hit of a search without `query`.")
    repeat_of = serializers.UUIDField(
        allow_null=True, help_text="The better result this one repeats (its score is then only what it adds); null for a distinct result."
    )
    reranked = serializers.BooleanField(help_text="Ordered and scored by the hub's reranker: `score` is then its relevance, 0–1.")


class MemorySearchResultsSerializer(serializers.Serializer):
    results = MemorySearchHitSerializer(many=True, help_text="Best first.")


class ItemSerializer(serializers.Serializer):
    """An item of the key-value store over memories (LangGraph's BaseStore)."""

    namespace = serializers.ListField(child=serializers.CharField())
    key = serializers.CharField()
    value = serializers.DictField(help_text="Any JSON object, as written.")
    user_id = serializers.CharField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField(allow_null=True)


@extend_schema_field({
    "type": "array", "items": {"oneOf": [{"$ref": "#/components/schemas/Item"}, {"type": "null"}]},
    "description": "One per key asked, in order; null where there is none.",
})
class NullableItemsField(serializers.ListField):
    pass


class ItemGetResultsSerializer(serializers.Serializer):
    results = NullableItemsField()


class ItemSearchHitSerializer(ItemSerializer):
    score = serializers.FloatField(allow_null=True, help_text="Cosine similarity to the query; null without a query or for an item not indexed.")


class ItemSearchResultsSerializer(serializers.Serializer):
    results = ItemSearchHitSerializer(many=True)


class ItemNamespacesSerializer(serializers.Serializer):
    results = serializers.ListField(child=serializers.ListField(child=serializers.CharField()))


class MemoryCountsSerializer(serializers.Serializer):
    total = serializers.IntegerField()
    by_type = counts_field()
    by_scope = counts_field()
    invalidated_facts = serializers.IntegerField()
    expiring = serializers.IntegerField()


class EmbeddingModelSerializer(serializers.Serializer):
    model = serializers.CharField()
    dimensions = serializers.IntegerField()


class MemoryStatsSerializer(serializers.Serializer):
    memories = MemoryCountsSerializer()
    storage_bytes = serializers.IntegerField()
    embedding_model = EmbeddingModelSerializer()
    as_of = serializers.DateTimeField()


# --- sessions and messages ----------------------------------------------------------------


class MessageSerializer(serializers.Serializer):
    seq = serializers.IntegerField()
    role = serializers.ChoiceField(choices=Role.choices)
    content = serializers.CharField(allow_blank=True)
    tool_calls = serializers.ListField(child=serializers.DictField(), allow_null=True, help_text="OpenAI-style tool calls.")
    tool_call_id = serializers.CharField(allow_null=True)
    pinned = serializers.BooleanField()
    item = serializers.DictField(allow_null=True, help_text="The agent framework's own form of the message, exactly as appended (or null).")
    created_at = serializers.DateTimeField()


class MessageBatchSerializer(serializers.Serializer):
    messages = MessageSerializer(many=True)


class EditedMessageSerializer(MessageSerializer):
    revision = serializers.IntegerField(help_text="1 for the original text, one more per edit.")


class ContextMessageSerializer(MessageSerializer):
    """A message of a context: one of the session's, or (`summary` true) the summary
    standing in for the messages `summarizes` names."""

    seq = serializers.IntegerField(allow_null=True, help_text="null for the summary")
    created_at = serializers.DateTimeField(allow_null=True, help_text="null for the summary")
    summary = serializers.BooleanField()
    summarizes = serializers.ListField(
        child=serializers.IntegerField(), min_length=2, max_length=2, allow_null=True, help_text="[from_seq, to_seq] of the summary"
    )
    grounding = serializers.BooleanField(help_text="True for the system message `grounding=N` appends (the graph's facts)")


class ContextSummarySerializer(serializers.Serializer):
    from_seq = serializers.IntegerField()
    to_seq = serializers.IntegerField()
    text = serializers.CharField(allow_blank=True)
    summariser = serializers.CharField()


class ContextSerializer(serializers.Serializer):
    messages = ContextMessageSerializer(many=True)
    summary = ContextSummarySerializer(allow_null=True)


class ChainLinkSerializer(serializers.Serializer):
    """One link of a session's rolling summary chain."""

    index = serializers.IntegerField()
    from_seq = serializers.IntegerField()
    to_seq = serializers.IntegerField()
    summariser = serializers.CharField()
    text = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()


class MessageCountsSerializer(serializers.Serializer):
    messages = serializers.IntegerField()
    pinned = serializers.IntegerField()
    by_role = counts_field()


class SessionSerializer(serializers.Serializer):
    session_id = serializers.CharField()
    user_id = serializers.CharField()
    agent = serializers.CharField()
    metadata = serializers.DictField(help_text="Any JSON object, as written.")
    state = serializers.DictField(help_text="What the agent keeps beside the conversation (a framework's session state): any JSON object.")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    last_seq = serializers.IntegerField()
    latest_checkpoint_version = serializers.IntegerField(help_text="0 before the first checkpoint")
    current_plan_step = serializers.CharField(allow_null=True)
    counts = MessageCountsSerializer()
    summary_policy = serializers.ChoiceField(choices=SummaryPolicy.choices)
    last_summary_index = serializers.IntegerField()
    meta_compaction_threshold = serializers.IntegerField()
    summary_chain = ChainLinkSerializer(many=True)
    suspended_at = serializers.DateTimeField(
        allow_null=True, help_text="Set while an operator has the session suspended (an approval answered with suspend): the agent pauses."
    )
    suspended_by = serializers.CharField(allow_null=True)


class BranchedSessionSerializer(SessionSerializer):
    parent = serializers.CharField()
    parent_seq = serializers.IntegerField(allow_null=True)
    label = serializers.CharField(allow_blank=True)


class ForkOriginSerializer(serializers.Serializer):
    session_id = serializers.CharField()
    version = serializers.IntegerField()


class ForkedSessionSerializer(SessionSerializer):
    forked_from = ForkOriginSerializer()


class SummarizedSerializer(serializers.Serializer):
    summary = ChainLinkSerializer(allow_null=True, help_text="The new link; null when there was nothing new to summarise.")
    session = SessionSerializer()


# --- plans, tool calls ----------------------------------------------------------------------


class StepSerializer(serializers.Serializer):
    step_id = serializers.CharField()
    status = serializers.ChoiceField(choices=StepStatus.choices)
    summary = serializers.CharField(allow_blank=True)
    depends_on = serializers.ListField(child=serializers.CharField())
    parent = serializers.CharField(allow_null=True)


class PlanStepSerializer(StepSerializer):
    description = serializers.CharField()
    tool_calls = serializers.ListField(child=serializers.CharField(), help_text="call_ids logged under this step, oldest first")


class PlanSerializer(serializers.Serializer):
    version = serializers.IntegerField()
    goal = serializers.CharField()
    steps = PlanStepSerializer(many=True)


class PlanRenderSerializer(serializers.Serializer):
    text = serializers.CharField()


class ToolCallSerializer(serializers.Serializer):
    call_id = serializers.CharField()
    tool = serializers.CharField()
    args = serializers.JSONField(help_text="Any JSON, redacted.")
    result_summary = serializers.CharField(allow_blank=True)
    status = serializers.ChoiceField(choices=ToolCallStatus.choices)
    step_id = serializers.CharField(allow_null=True)
    duration_ms = serializers.IntegerField(allow_null=True)
    cost = serializers.FloatField(allow_null=True)
    result_bytes = serializers.IntegerField()
    redactions = counts_field(help_text="Redactions per type (EMAIL, PHONE, …)")
    created_at = serializers.DateTimeField()


class ToolResultSerializer(serializers.Serializer):
    call_id = serializers.CharField()
    tool = serializers.CharField()
    result = serializers.JSONField(help_text="The raw output as logged (any JSON), redacted.")
    result_bytes = serializers.IntegerField()


# --- checkpoints ------------------------------------------------------------------------------


class ToolLogSerializer(serializers.Serializer):
    last_call_id = serializers.CharField(allow_null=True)
    calls = serializers.IntegerField()


class CheckpointSerializer(serializers.Serializer):
    """A checkpoint's metadata."""

    version = serializers.IntegerField()
    label = serializers.CharField(allow_blank=True)
    current_step = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()
    state_bytes = serializers.IntegerField()
    stored_bytes = serializers.IntegerField()
    message_seq = serializers.IntegerField(help_text="The session's last message when saved; 0 if messages were not saved.")
    tool_log = ToolLogSerializer()
    bundle = serializers.ListField(child=serializers.ChoiceField(choices=list(CHECKPOINT_PARTS)), help_text="The parts saved")


class LoadedCheckpointSerializer(CheckpointSerializer):
    """A checkpoint with the parts asked for (`include`, `exclude`)."""

    state = serializers.JSONField(required=False, allow_null=True, help_text="Any JSON, as saved; null if the state was not saved.")
    summary = serializers.CharField(required=False, allow_blank=True)
    messages = MessageSerializer(many=True, required=False)
    plan = PlanSerializer(required=False, allow_null=True)


class ResumedCheckpointSerializer(LoadedCheckpointSerializer):
    """A checkpoint with all of its parts."""

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        for part in CHECKPOINT_PARTS:
            fields[part].required = True
        return fields


# --- episodes, timeline -----------------------------------------------------------------------


# --- LangGraph checkpoints (docs/client.md, "LangGraph checkpointer") -----------------------------


class GraphValueSerializer(serializers.Serializer):
    """A value as LangGraph's serializer made it (`serde.dumps_typed`), kept as it came."""

    type = serializers.CharField(help_text="The serializer's type name (msgpack, json, empty…).")
    data = serializers.CharField(allow_blank=True, help_text="The bytes, base64.")


class GraphChannelValueSerializer(GraphValueSerializer):
    channel = serializers.CharField()


class GraphPendingWriteSerializer(GraphValueSerializer):
    task_id = serializers.CharField()
    channel = serializers.CharField()


class GraphCheckpointSerializer(serializers.Serializer):
    """A LangGraph checkpoint with its channel values and pending writes."""

    thread_id = serializers.CharField()
    checkpoint_ns = serializers.CharField(allow_blank=True)
    checkpoint_id = serializers.CharField()
    parent_checkpoint_id = serializers.CharField(allow_null=True)
    checkpoint = GraphValueSerializer()
    metadata = serializers.DictField()
    channel_values = GraphChannelValueSerializer(many=True, help_text="The values of the versions the checkpoint names.")
    pending_writes = GraphPendingWriteSerializer(many=True, help_text="In the order LangGraph replays them.")
    created_at = serializers.DateTimeField()


class GraphCheckpointSavedSerializer(serializers.Serializer):
    thread_id = serializers.CharField()
    checkpoint_ns = serializers.CharField(allow_blank=True)
    checkpoint_id = serializers.CharField()


class GraphWritesSavedSerializer(GraphCheckpointSavedSerializer):
    stored = serializers.IntegerField(help_text="Writes stored or replaced; those sent before are kept as they were.")


class GraphThreadCopiedSerializer(serializers.Serializer):
    thread_id = serializers.CharField(help_text="The target thread.")
    copied = serializers.IntegerField(help_text="Checkpoints copied.")


class GraphDeletedSerializer(serializers.Serializer):
    deleted = serializers.IntegerField(help_text="Checkpoints deleted.")


class EpisodeDraftSerializer(serializers.Serializer):
    user_id = serializers.CharField()
    session_id = serializers.CharField()
    task = serializers.CharField(allow_blank=True)
    outcome = serializers.ChoiceField(choices=EpisodeOutcome.choices)
    narrative = serializers.CharField()
    tools_used = counts_field(help_text="Calls per tool name")
    elapsed_ms = serializers.IntegerField(allow_null=True)


class EpisodeSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    user_id = serializers.CharField()
    agent = serializers.CharField()
    task = serializers.CharField()
    outcome = serializers.ChoiceField(choices=EpisodeOutcome.choices)
    narrative = serializers.CharField()
    tools_used = counts_field(help_text="Calls per tool name")
    elapsed_ms = serializers.IntegerField(allow_null=True)
    cost = serializers.FloatField(allow_null=True)
    session_id = serializers.CharField(allow_null=True)
    metadata = serializers.DictField(help_text="Any JSON object, as written.")
    created_at = serializers.DateTimeField()


class SimilarEpisodeSerializer(serializers.Serializer):
    episode = EpisodeSerializer()
    score = serializers.FloatField()


class SimilarEpisodesSerializer(serializers.Serializer):
    results = SimilarEpisodeSerializer(many=True, help_text="Most similar first.")
    guidance = serializers.CharField(help_text="A text to put in the prompt.")


class TimelineEventSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField(help_text="run, message, edit, branch, fork, resume, checkpoint, summary, plan, tool…")
    at = serializers.DateTimeField()
    actor = serializers.CharField()
    summary = serializers.CharField()
    ref = serializers.DictField(help_text="What the event is about (any JSON object, e.g. {type, version}).")


# --- compliance ------------------------------------------------------------------------------


class VerificationSerializer(serializers.Serializer):
    models_checked = serializers.ListField(child=serializers.CharField())
    remaining = counts_field(help_text="Rows left per kind; empty when the purge passed.")
    passed = serializers.BooleanField()


class StorageCleanupSerializer(serializers.Serializer):
    finished_at = serializers.DateTimeField()
    tables = serializers.ListField(child=serializers.CharField())
    seconds = serializers.FloatField()
    index_cleanup = serializers.BooleanField()


class PurgeReceiptSerializer(serializers.Serializer):
    """What a purge proves; the user only by a keyed hash."""

    purge_id = serializers.IntegerField()
    workspace = serializers.CharField()
    user_hash = serializers.CharField()
    requested_by = serializers.CharField(allow_null=True)
    requested_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField()
    deleted = counts_field(help_text="Rows deleted per kind.")
    verification = VerificationSerializer()
    attempts = serializers.IntegerField(required=False, help_text="Failed purges only.")
    error = serializers.CharField(required=False, allow_blank=True, help_text="Failed purges only: the error's type.")
    storage_cleanup = StorageCleanupSerializer(required=False, help_text="Once the indexes have been cleaned.")


class PurgeSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=JobStatus.choices)
    dry_run = serializers.BooleanField()
    progress = serializers.FloatField(min_value=0, max_value=1)
    counts = counts_field(help_text="Rows per kind: deleted so far, or found by a dry run.")
    receipt = PurgeReceiptSerializer(allow_null=True, help_text="null until the purge has ended, and for dry runs.")
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    storage_cleaned_at = serializers.DateTimeField(allow_null=True)


class RetentionRunSerializer(serializers.Serializer):
    started_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    counts = counts_field(help_text="Rows removed per kind.")


def limits_field(help_text: str) -> serializers.DictField:
    """A limit per retention kind; null: kept."""
    return serializers.DictField(child=serializers.IntegerField(allow_null=True), help_text=help_text)


class RetentionSerializer(serializers.Serializer):
    policies = limits_field("The limits in force per kind (null: kept).")
    defaults = limits_field("The limits a workspace starts from.")
    meaning = serializers.DictField(child=serializers.CharField(), help_text="What each kind's limit means.")
    max = serializers.DictField(child=serializers.IntegerField(), help_text="The largest limit per kind.")
    runs = RetentionRunSerializer(many=True, help_text="The latest retention passes, newest first.")


class AuditEntrySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    at = serializers.DateTimeField()
    workspace = serializers.CharField(allow_null=True, help_text="The workspace's slug when the entry was written; null for the hub's own.")
    actor = serializers.CharField()
    action = serializers.CharField()
    target = serializers.CharField(allow_blank=True)
    details = serializers.DictField(help_text="Any JSON object.")
    ip = serializers.IPAddressField(allow_null=True)


# --- human in the loop ------------------------------------------------------------------


class ApprovalGivenSerializer(serializers.Serializer):
    by = serializers.CharField()
    at = serializers.DateTimeField()


class ApprovalSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=ApprovalStatus.choices)
    session_id = serializers.CharField()
    agent = serializers.CharField()
    tool = serializers.CharField()
    args = serializers.DictField(help_text="The args to use: as requested, or as an operator edited them.")
    requested_args = serializers.DictField(help_text="The args the agent asked with.")
    allowed_decisions = serializers.ListField(child=serializers.ChoiceField(choices=Decision.choices))
    context = serializers.JSONField(help_text="What the agent told the human: any JSON (null if nothing).")
    response_schema = serializers.DictField(allow_null=True, help_text="A JSON Schema edited args must satisfy.")
    decision = serializers.ChoiceField(choices=Decision.choices, allow_null=True)
    reason = serializers.CharField(allow_blank=True, help_text="For the model to read (rejections, edits).")
    decided_by = serializers.CharField(allow_null=True, help_text="`operator:NAME`, or `rule:ID` for a remembered decision.")
    decided_at = serializers.DateTimeField(allow_null=True)
    rule = serializers.IntegerField(allow_null=True, help_text="The remembered decision that answered, if one did.")
    created_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField(allow_null=True)
    required_approvals = serializers.IntegerField(help_text="Different approvers whose approval decides it (the first reject rejects).")
    approvals = ApprovalGivenSerializer(many=True, help_text="Who approved so far, in order.")
    escalate_at = serializers.DateTimeField(allow_null=True, help_text="Undecided by then, it is escalated to the workspace's admins.")
    escalated_at = serializers.DateTimeField(allow_null=True)


class ApprovalRuleSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    tool = serializers.CharField()
    args = serializers.DictField(allow_null=True, help_text="The exact args matched; null for the tool's every call.")
    match = serializers.ChoiceField(choices=["exact", "tool"])
    decision = serializers.ChoiceField(choices=Decision.choices)
    reason = serializers.CharField(allow_blank=True)
    scope = serializers.ChoiceField(choices=RuleScope.choices)
    created_by = serializers.CharField()
    created_at = serializers.DateTimeField()
