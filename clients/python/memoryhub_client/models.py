"""Typed requests and answers of the MemoryHub API (docs/api.md; the hub's /api/schema/).

Answers allow extra fields: a hub newer than this client may add fields, and an old
client must keep working (the extra fields are kept on the model, `model_extra`).
Request items (batch memories, plan steps, messages) forbid unknown fields instead, so a
typo fails here rather than as a 400 from the hub."""

from __future__ import annotations

import base64
from datetime import date, datetime
from typing import Any, Generic, Literal, Optional, TypeVar

from pydantic import BaseModel, ConfigDict, Field

Scope = Literal["agent", "shared", "global"]
MemoryType = Literal["note", "factual", "episodic", "semantic", "procedural", "working"]
OnDuplicate = Literal["keep", "skip", "update"]
SearchMode = Literal["hybrid", "semantic", "keyword"]
Role = Literal["system", "user", "assistant", "tool"]
StepStatus = Literal["pending", "running", "done", "failed"]
ToolCallStatus = Literal["ok", "error"]
Outcome = Literal["success", "failure", "handoff"]
ApprovalStatus = Literal["pending", "approved", "edited", "rejected", "suspended", "expired"]
Decision = Literal["approve", "edit", "reject", "suspend"]
Remember = Literal["none", "exact", "tool"]
RuleScope = Literal["workspace", "agent", "session"]
CheckpointPart = Literal["state", "messages", "plan", "summary"]
ContextStrategy = Literal["window", "summarize"]
SummaryPolicy = Literal["manual", "rolling"]
PurgeStatus = Literal["queued", "running", "done", "failed"]

T = TypeVar("T")


class Answer(BaseModel):
    """Base of every answer model."""

    model_config = ConfigDict(extra="allow")


class RequestItem(BaseModel):
    """Base of the structured items a request carries."""

    model_config = ConfigDict(extra="forbid")


class Page(Answer, Generic[T]):
    """One page of a list: `next` is the cursor of the following page (None at the end)."""

    results: list[T]
    next: Optional[str] = None


# Identity and keys


class Me(Answer):
    kind: Literal["agent", "operator"]
    workspace: str
    agent: Optional[str] = None
    stores: list[str] = []
    operator: Optional[str] = None
    role: Optional[str] = None
    key_prefix: Optional[str] = None


class AgentKey(Answer):
    prefix: str
    agent: str
    stores: list[str] = []
    label: str = ""
    status: str
    created_at: datetime
    expires_at: Optional[datetime] = None
    revoked_at: Optional[datetime] = None
    last_used_at: Optional[datetime] = None


class AgentKeyCreated(AgentKey):
    key: str
    """The secret: shown once."""


# Long-term memory


class MemoryInput(RequestItem):
    """One item of `memories.create_batch`."""

    content: str
    user_id: str
    scope: Optional[Scope] = None
    store: Optional[str] = None
    memory_type: Optional[MemoryType] = None
    tags: Optional[list[str]] = None
    metadata: Optional[dict[str, Any]] = None
    data: Optional[dict[str, Any]] = None
    key: Optional[str] = None
    ttl_seconds: Optional[int] = None
    expires_at: Optional[datetime] = None
    embedding: Optional[list[float]] = None
    source: Optional[dict[str, Any]] = None  # {session_id, seq}, {session_id, call_id} or {episode_id}


class Source(Answer):
    """Where a memory came from: `kind` (api, message, tool_call, episode, summary, import,
    operator) and what names it. To name one on create: {session_id, seq}, {session_id,
    call_id} or {episode_id}."""

    kind: str = "api"
    session_id: Optional[str] = None
    seq: Optional[int] = None
    call_id: Optional[str] = None
    episode_id: Optional[int] = None
    import_id: Optional[int] = None


class MemoryRevision(Answer):
    revision: int
    content: str
    tags: list[str] = []
    metadata: dict[str, Any] = {}
    data: Optional[dict[str, Any]] = None
    change: str  # create, update, operator_edit, revert, merge, review
    changed_by: str = ""
    changed_at: datetime
    reason: str = ""


class Similar(Answer):
    """An entry like a new one: `score` 1 for the same text, else the embeddings' cosine similarity."""

    id: str
    score: float


class Memory(Answer):
    id: str
    key: Optional[str] = None
    content: str
    user_id: str
    scope: Scope
    store: str
    agent: str
    memory_type: MemoryType
    tags: list[str] = []
    metadata: dict[str, Any] = {}
    data: Optional[dict[str, Any]] = None
    created_at: datetime
    updated_at: datetime
    expires_at: Optional[datetime] = None
    version: int
    invalidated_at: Optional[datetime] = None
    superseded_by: Optional[str] = None
    # Hubs older than provenance and revisions answer none of these: the defaults say so.
    revision: Optional[int] = None
    source: Source = Source()
    review: str = "unreviewed"
    # Only a create's answer says these (and hubs older than duplicates say neither).
    duplicate: bool = False
    similar: list[Similar] = []


class MemorySearchHit(Answer):
    entry: Memory
    score: float
    # The better result this one repeats (its score is then only what it adds).
    repeat_of: Optional[str] = None
    # Ordered and scored by the hub's reranker (`score` is then its relevance); False
    # from hubs without one, and hubs older than the field.
    reranked: bool = False


class Item(Answer):
    """An item of the key-value store over memories (`hub.items`, LangGraph's store)."""

    namespace: list[str]
    key: str
    value: dict[str, Any]
    user_id: str
    created_at: datetime
    updated_at: datetime
    expires_at: Optional[datetime] = None


class ItemSearchHit(Item):
    score: Optional[float] = None


class MemoryCounts(Answer):
    total: int
    by_type: dict[str, int] = {}
    by_scope: dict[str, int] = {}
    invalidated_facts: int = 0
    expiring: int = 0


class EmbeddingModel(Answer):
    model: str
    dimensions: int


class MemoryStats(Answer):
    memories: MemoryCounts
    storage_bytes: int
    embedding_model: Optional[EmbeddingModel] = None
    as_of: Optional[datetime] = None


# Sessions and conversation


class MessageInput(RequestItem):
    """One message of `sessions.append_messages`."""

    role: Role
    content: Optional[str] = None
    tool_calls: Optional[list[Any]] = None
    tool_call_id: Optional[str] = None
    pinned: Optional[bool] = None
    item: Optional[dict[str, Any]] = None


class Message(Answer):
    seq: int
    role: Role
    content: str
    tool_calls: Optional[list[Any]] = None
    tool_call_id: Optional[str] = None
    pinned: bool = False
    # An agent framework's own form of the message, as appended (key order kept).
    item: Optional[dict[str, Any]] = None
    created_at: datetime


class EditedMessage(Message):
    revision: int


class DeletedMessages(Answer):
    deleted: int
    messages: list[Message] = []  # with `last`: what went, oldest first


class MessageCounts(Answer):
    messages: int
    pinned: int = 0
    by_role: dict[str, int] = {}


class ChainLink(Answer):
    index: int
    from_seq: int
    to_seq: int
    summariser: str
    text: str
    created_at: datetime


class Session(Answer):
    session_id: str
    user_id: str
    agent: str
    metadata: dict[str, Any] = {}
    # What the agent keeps beside the conversation (a framework's session state).
    state: dict[str, Any] = {}
    created_at: datetime
    updated_at: datetime
    last_seq: int = 0
    latest_checkpoint_version: int = 0
    current_plan_step: Optional[str] = None
    counts: Optional[MessageCounts] = None
    summary_policy: Optional[SummaryPolicy] = None
    last_summary_index: int = 0
    meta_compaction_threshold: Optional[int] = None
    summary_chain: list[ChainLink] = []
    suspended_at: Optional[datetime] = None
    suspended_by: Optional[str] = None


class BranchedSession(Session):
    parent: str
    parent_seq: Optional[int] = None
    label: str = ""


class ForkOrigin(Answer):
    session_id: str
    version: int


class ForkedSession(Session):
    forked_from: ForkOrigin


class ContextMessage(Answer):
    seq: Optional[int] = None
    role: Role
    content: str
    tool_calls: Optional[list[Any]] = None
    tool_call_id: Optional[str] = None
    pinned: bool = False
    created_at: Optional[datetime] = None
    summary: bool = False
    summarizes: Optional[list[Any]] = None
    grounding: bool = False


class ContextSummary(Answer):
    from_seq: int
    to_seq: int
    text: str
    summariser: str


class GraphEdge(Answer):
    """An edge of the graph: a stored fact (`entry_id`) or one the workspace's rules infer
    at read time (`inferred`, `entry_id` None; `via` names the stored facts it follows from)."""

    subject: str
    predicate: str
    object: Any
    confidence: float = 1.0
    entry_id: Optional[str] = None
    user_id: Optional[str] = None  # the end user the fact is about
    inferred: bool = False
    via: list[str] = []
    depth: int = 1


class GroundingFact(GraphEdge):
    score: float


class Grounding(Answer):
    facts: list[GroundingFact]
    message: Optional[dict[str, str]] = None  # {"role": "system", "content": …}, None when no fact is relevant


class GraphPath(Answer):
    path: list[GraphEdge]


GraphRuleKind = Literal["transitive", "symmetric", "inverse", "multi"]


class GraphRule(RequestItem):
    predicate: str
    kind: GraphRuleKind
    inverse: Optional[str] = None  # for "inverse": the other predicate


class GraphRules(Answer):
    rules: list[GraphRule]


class Context(Answer):
    messages: list[ContextMessage]
    summary: Optional[ContextSummary] = None


class Summarized(Answer):
    summary: Optional[ChainLink] = None
    session: Session


class TimelineEvent(Answer):
    id: int
    kind: str
    at: datetime
    actor: str = ""
    summary: str = ""
    ref: dict[str, Any] = {}


# Plans


class StepInput(RequestItem):
    """One step of `plans.set`."""

    step_id: str
    description: str
    depends_on: Optional[list[str]] = None
    parent: Optional[str] = None


class PlanStep(Answer):
    step_id: str
    status: StepStatus
    summary: str = ""
    depends_on: list[str] = []
    parent: Optional[str] = None
    description: str = ""
    tool_calls: list[str] = []


class Plan(Answer):
    version: int
    goal: str
    steps: list[PlanStep]


class PlanRender(Answer):
    text: str


# Tool calls


class ToolCall(Answer):
    call_id: str
    tool: str
    args: Any = None
    result_summary: str = ""
    status: ToolCallStatus
    step_id: Optional[str] = None
    duration_ms: Optional[int] = None
    cost: Optional[float] = None
    result_bytes: int = 0
    redactions: dict[str, int] = {}
    created_at: datetime


class ToolResult(Answer):
    call_id: str
    tool: str
    result: Any = None
    result_bytes: int = 0


# Checkpoints


class ToolLog(Answer):
    last_call_id: Optional[str] = None
    calls: int = 0


class Checkpoint(Answer):
    version: int
    label: str = ""
    current_step: str = ""
    created_at: datetime
    state_bytes: int = 0
    stored_bytes: int = 0
    message_seq: int = 0
    tool_log: Optional[ToolLog] = None
    bundle: list[CheckpointPart] = []


class LoadedCheckpoint(Checkpoint):
    """A checkpoint with the parts asked for (`state` and `summary` by default)."""

    state: Any = None
    summary: Optional[str] = None
    messages: Optional[list[Message]] = None
    plan: Optional[Plan] = None


# LangGraph checkpoints (the storage of memoryhub_client.langgraph.MemoryHubSaver)


class GraphValue(Answer):
    """A value as LangGraph's serializer made it (`serde.dumps_typed`); the hub keeps it as is."""

    type: str
    data: str  # base64

    @property
    def typed(self) -> tuple[str, bytes]:
        """(type, bytes), what `serde.loads_typed` takes."""
        return self.type, base64.b64decode(self.data)


class GraphChannelValue(GraphValue):
    channel: str


class GraphPendingWrite(GraphValue):
    task_id: str
    channel: str


class GraphCheckpoint(Answer):
    thread_id: str
    checkpoint_ns: str = ""
    checkpoint_id: str
    parent_checkpoint_id: Optional[str] = None
    checkpoint: GraphValue
    metadata: dict[str, Any] = {}
    channel_values: list[GraphChannelValue] = []
    pending_writes: list[GraphPendingWrite] = []  # in the order LangGraph replays them
    created_at: datetime


class GraphCheckpointSaved(Answer):
    thread_id: str
    checkpoint_ns: str = ""
    checkpoint_id: str


class GraphWritesSaved(GraphCheckpointSaved):
    stored: int


class GraphThreadCopied(Answer):
    thread_id: str
    copied: int


class GraphDeleted(Answer):
    deleted: int


# Episodes


class Episode(Answer):
    id: int
    user_id: str
    agent: str
    task: str
    outcome: Outcome
    narrative: str
    tools_used: dict[str, int] = {}
    elapsed_ms: Optional[int] = None
    cost: Optional[float] = None
    session_id: Optional[str] = None
    metadata: dict[str, Any] = {}
    created_at: datetime


class EpisodeDraft(Answer):
    user_id: str
    session_id: str
    task: str
    outcome: Outcome
    narrative: str
    tools_used: dict[str, int] = {}
    elapsed_ms: Optional[int] = None


class SimilarEpisode(Answer):
    episode: Episode
    score: float


class SimilarEpisodes(Answer):
    results: list[SimilarEpisode]
    guidance: str = ""


# Human in the loop


class ApprovalGiven(Answer):
    by: str
    at: datetime


class Approval(Answer):
    id: int
    status: ApprovalStatus
    session_id: str
    agent: str
    tool: str
    args: Any = None
    requested_args: Any = None
    allowed_decisions: list[Decision] = []
    context: Any = None
    response_schema: Optional[dict[str, Any]] = None
    decision: Optional[Decision] = None
    reason: str = ""
    decided_by: Optional[str] = None
    decided_at: Optional[datetime] = None
    rule: Optional[int] = None
    created_at: datetime
    expires_at: Optional[datetime] = None
    required_approvals: int = 1
    approvals: list[ApprovalGiven] = []
    escalate_at: Optional[datetime] = None
    escalated_at: Optional[datetime] = None

    @property
    def decided(self) -> bool:
        return self.status != "pending"


class ApprovalRule(Answer):
    id: int
    tool: str
    args: Optional[dict[str, Any]] = None
    match: Literal["exact", "tool"]
    decision: Decision
    reason: str = ""
    scope: RuleScope
    created_by: str = ""
    created_at: datetime


# Compliance


class Verification(Answer):
    models_checked: list[str] = []
    remaining: dict[str, Any] = {}
    passed: bool


class PurgeReceipt(Answer):
    purge_id: int
    workspace: str
    user_hash: str
    requested_by: Optional[str] = None
    requested_at: datetime
    started_at: Optional[datetime] = None
    finished_at: datetime
    deleted: dict[str, Any] = {}
    verification: Verification


class Purge(Answer):
    id: int
    status: PurgeStatus
    dry_run: bool
    progress: float
    counts: dict[str, Any] = {}
    receipt: Optional[PurgeReceipt] = None
    created_at: datetime
    finished_at: Optional[datetime] = None
    storage_cleaned_at: Optional[datetime] = None


ExportScope = Literal["workspace", "user", "session"]


class Export(Answer):
    """An archive being built or ready to download (docs/portability.md)."""

    id: str
    scope: ExportScope
    status: PurgeStatus
    progress: float
    counts: dict[str, int] = {}
    bytes: int = 0
    sha256: str = ""
    user_id: Optional[str] = None
    session_id: Optional[str] = None
    with_vectors: bool = False
    created_at: datetime
    finished_at: Optional[datetime] = None
    expires_at: datetime
    error: Optional[str] = None


ImportFormat = Literal["memoryhub", "chatgpt", "claude", "mem0"]


class ImportCounts(Answer):
    created: int = 0
    skipped: int = 0
    refused: int = 0
    kinds: dict[str, dict[str, int]] = {}


class ImportRefusal(Answer):
    kind: str
    reason: str
    count: int


class Import(Answer):
    """A file being loaded into a store and agent, or loaded: what it created, skipped
    (there already) and refused, and why (docs/portability.md, "Imports")."""

    id: int
    status: PurgeStatus
    format: ImportFormat
    store: str
    agent: str
    user_id: Optional[str] = None
    dry_run: bool = False
    progress: float
    filename: str = ""
    bytes: int = 0
    sha256: str = ""
    counts: ImportCounts = ImportCounts()
    refusals: list[ImportRefusal] = []
    created_at: datetime
    finished_at: Optional[datetime] = None
    error: Optional[str] = None


class RetentionRun(Answer):
    started_at: datetime
    finished_at: Optional[datetime] = None
    counts: dict[str, Any] = {}


class Retention(Answer):
    policies: dict[str, Any]
    defaults: dict[str, Any] = {}
    meaning: dict[str, Any] = {}
    max: dict[str, Any] = {}
    runs: list[RetentionRun] = []


UsageGroup = Literal["provider", "operation", "agent", "day"]


class UsageSums(Answer):
    calls: int = 0
    items: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0


class UsageLine(UsageSums):
    key: str


class Usage(Answer):
    """What model calls cost over some days, grouped one way (docs/usage.md)."""

    results: list[UsageLine] = []
    totals: UsageSums = UsageSums()
    from_: Optional[date] = Field(default=None, alias="from")
    to: Optional[date] = None
    group_by: UsageGroup = "provider"


class Budget(Answer):
    monthly_limit: Optional[float] = None
    warn_at: Optional[float] = None
    month: str
    spent: float = 0.0


class AuditEntry(Answer):
    id: int
    at: datetime
    actor: str
    action: str
    target: str = ""
    details: dict[str, Any] = {}
    ip: Optional[str] = None


# The live feed


class Event(Answer):
    """One Server-Sent Event of the live feed: `id` the timeline event's id, `kind` its
    kind (the SSE `event:` field), `data` its JSON."""

    id: Optional[int] = None
    kind: str = Field(default="message")
    data: Any = None

    @property
    def session_id(self) -> Optional[str]:
        return self.data.get("session_id") if isinstance(self.data, dict) else None



# Notifications and webhooks

WebhookEvent = Literal[
    "approval.requested", "approval.decided", "approval.expired", "approval.escalated", "memory.flagged", "memory.quarantined",
    "purge.completed", "export.completed", "import.completed", "budget.warning", "budget.exceeded", "webhook.test",
]
WebhookFormat = Literal["standard", "slack"]
EmailEvent = Literal["approval.requested", "approval.escalated"]


class Webhook(Answer):
    id: int
    url: str
    events: list[str]
    format: WebhookFormat
    include_content: bool
    enabled: bool
    disabled_reason: Optional[str] = None
    description: str = ""
    created_at: datetime
    previous_secret_until: Optional[datetime] = None


class WebhookCreated(Webhook):
    secret: str
    """`whsec_…`: shown once."""


class WebhookSecret(Answer):
    secret: str
    previous_secret_until: datetime


class WebhookDelivery(Answer):
    id: int
    message_id: str
    event: str
    status: Literal["pending", "succeeded", "failed"]
    attempts: int
    last_status_code: Optional[int] = None
    error: Optional[str] = None
    next_attempt_at: Optional[datetime] = None
    created_at: datetime
    finished_at: Optional[datetime] = None
    redelivery_of: Optional[int] = None


class Notifications(Answer):
    email: Optional[str] = None
    events: list[str] = []
    email_enabled: bool = False
