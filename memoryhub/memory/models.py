"""Long-term memory entries."""

from __future__ import annotations

import uuid

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models import F, Func, Q, Value
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import MD5, Cast, Lower, Trim
from django.utils import timezone
from pgvector.django import VectorField

from memoryhub.core.models import Agent, MemoryRecord, Store


class Scope(models.TextChoices):
    AGENT = "agent"  # only the owning agent
    SHARED = "shared"  # agents attached to the same store
    GLOBAL = "global"  # every agent of the workspace


class MemoryType(models.TextChoices):
    NOTE = "note"
    FACTUAL = "factual"
    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PROCEDURAL = "procedural"
    WORKING = "working"


class SourceKind(models.TextChoices):
    """Where a memory came from."""

    API = "api"  # written by an agent, nothing named
    MESSAGE = "message"
    TOOL_CALL = "tool_call"
    EPISODE = "episode"
    SUMMARY = "summary"  # a session's summary compacted into long-term memory
    IMPORT = "import"
    OPERATOR = "operator"


class Change(models.TextChoices):
    """What made a revision of a memory."""

    CREATE = "create"
    UPDATE = "update"  # the agent (an update, or a write to the same key)
    OPERATOR_EDIT = "operator_edit"
    REVERT = "revert"
    MERGE = "merge"
    REVIEW = "review"


class Review(models.TextChoices):
    """Where a person's review of a memory stands."""

    UNREVIEWED = "unreviewed"
    VERIFIED = "verified"
    FLAGGED = "flagged"
    QUARANTINED = "quarantined"  # invisible to agents until released


class OnDuplicate(models.TextChoices):
    """What a create does when the caller can already see the same memory."""

    KEEP = "keep"  # write it anyway, and say which entries are similar
    SKIP = "skip"  # write nothing, answer the existing entry
    UPDATE = "update"  # the existing entry's next revision takes the new content


# Case, whitespace and punctuation do not make two memories different: runs of
# punctuation and space become one space. PostgreSQL classifies the characters by the
# database's ctype (C.UTF-8 for the embedded one: every script's punctuation and case).
FINGERPRINT_SEPARATORS = "[[:punct:][:space:]]+"


def content_fingerprint(text: F | Value) -> Cast:
    """md5 of the normalised text, as a uuid (16 bytes in the index)."""
    normalised = Func(Lower(text), Value(FINGERPRINT_SEPARATORS), Value(" "), Value("g"), function="regexp_replace")
    return Cast(MD5(Trim(normalised)), models.UUIDField())


class GraphEntity(Func):
    """An entity's name as the graph matches it: case and runs of space folded, trimmed.
    An SQL function (migration 0012), so that indexes and queries say it the same way."""

    function = "graph_entity"
    output_field = models.TextField()


GRAPH_ENTITY_SQL = """
CREATE OR REPLACE FUNCTION graph_entity(name text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN lower(btrim(regexp_replace(name, '[[:space:]]+', ' ', 'g')))
"""


class MemoryEntryQuerySet(models.QuerySet):
    def live(self, now: timezone.datetime | None = None) -> MemoryEntryQuerySet:
        """Not expired. Every read path goes through this: an expired entry is gone for
        readers even before the sweep deletes it."""
        now = now or timezone.now()
        return self.filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))

    def current(self) -> MemoryEntryQuerySet:
        """Not superseded by a newer fact."""
        return self.filter(invalidated_at__isnull=True)

    def valid_at(self, moment: timezone.datetime) -> MemoryEntryQuerySet:
        return self.filter(created_at__lte=moment).filter(Q(invalidated_at__isnull=True) | Q(invalidated_at__gt=moment))


# New entries wait in a GIN index's pending list until it is merged into the index, and
# every search that uses the index reads that list whole: at PostgreSQL's default limit
# (4 MB) a heavy user's search statement took 8.7 ms instead of 4.8 at 100,000 entries
# after a burst of writes; at 512 kB a typical search still took 7.6-7.7 ms instead of
# 5.3-5.6 with 10,000 rows just written or just indexed. 64 kB (PostgreSQL's least) left
# no difference there, and writes no slower: 2,462-2,493 entries/s against 2,373-2,424
# at 512 kB, where no pending lists at all (`fastupdate` off) cost them 12-15%.
GIN_PENDING_LIST_KB = 64


class MemoryEntry(MemoryRecord):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    store = models.ForeignKey(Store, on_delete=models.CASCADE, related_name="memories")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="memories")
    key = models.CharField(max_length=255, null=True, blank=True)
    # Items of a key-value store over memories (LangGraph's BaseStore): a path of labels,
    # unique with `key` per store. Null for plain memories, whose `key` is per agent.
    namespace = ArrayField(models.CharField(max_length=255), null=True, blank=True)
    # An item's time to live, kept so that a read can extend `expires_at` by it again.
    ttl_seconds = models.PositiveIntegerField(null=True, blank=True)
    scope = models.CharField(max_length=8, choices=Scope.choices, default=Scope.AGENT)
    memory_type = models.CharField(max_length=16, choices=MemoryType.choices, default=MemoryType.NOTE)
    content = models.TextField()
    tags = ArrayField(models.CharField(max_length=100), default=list, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    data = models.JSONField(default=dict, blank=True)
    version = models.PositiveIntegerField(default=1)
    expires_at = models.DateTimeField(null=True, blank=True)

    # Provenance: what this memory came from (docs/memory.md, "Provenance and revisions").
    # Defaults in the database, so that the bulk path (COPY) need not name them.
    source_kind = models.CharField(max_length=16, choices=SourceKind.choices, default=SourceKind.API, db_default=SourceKind.API)
    source_session_id = models.CharField(max_length=200, null=True, blank=True)
    source_seq = models.BigIntegerField(null=True, blank=True)
    source_call_id = models.CharField(max_length=200, null=True, blank=True)
    source_episode_id = models.BigIntegerField(null=True, blank=True)
    source_import_id = models.BigIntegerField(null=True, blank=True)
    # The current revision (`version`) and what made it; earlier ones are MemoryRevisions.
    change = models.CharField(max_length=16, choices=Change.choices, default=Change.CREATE, db_default=Change.CREATE)
    changed_by = models.CharField(max_length=200, blank=True, default="", db_default="")
    change_reason = models.TextField(blank=True, default="", db_default="")
    review = models.CharField(max_length=16, choices=Review.choices, default=Review.UNREVIEWED, db_default=Review.UNREVIEWED)

    # Facts over time: a newer fact with the same (subject, predicate) supersedes this one.
    fact_key = models.CharField(max_length=600, null=True, blank=True, editable=False)
    invalidated_at = models.DateTimeField(null=True, blank=True)
    superseded_by = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="supersedes")

    # Untyped `vector` so that a change of model (and dimension) is possible without a
    # schema change; the HNSW index is per dimension, on a cast (see vector_index.py).
    # Beside it the table has `embedding_signs`, its signs as bytes, which a trigger keeps
    # and only the duplicate lookup reads (migration 0015): not a field of the model.
    embedding = VectorField(null=True, blank=True)
    embedding_model = models.CharField(max_length=200, blank=True, default="")
    embedding_dim = models.PositiveIntegerField(null=True, blank=True)
    # Writes land unindexed (outside the partial HNSW index) and are searched exactly
    # until the indexer flips this flag in the background: inserting into HNSW costs
    # ~1-2 ms per row and would cap a batch write at a few hundred rows/s.
    vector_indexed = models.BooleanField(default=False, db_default=False)

    # Text the keyword leg indexes besides the content: tags and the entry's date in
    # words, so that "what did we decide in March?" can match an entry from March.
    search_extra = models.TextField(blank=True, default="", editable=False)
    search_vector = models.GeneratedField(
        expression=SearchVector("content", weight="A", config="english") + SearchVector("search_extra", weight="B", config="english"),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    # The same text once normalised (OnDuplicate): computed by the database, so no write
    # path can forget it.
    content_fingerprint = models.GeneratedField(
        expression=content_fingerprint(F("content")), output_field=models.UUIDField(), db_persist=True,
    )

    objects = MemoryEntryQuerySet.as_manager()

    class Meta(MemoryRecord.Meta):
        verbose_name_plural = "memory entries"
        indexes = [
            models.Index(fields=["workspace", "user_id", "-created_at"], name="memory_ws_user_created"),
            models.Index(fields=["workspace", "-created_at", "id"], name="memory_ws_created"),
            models.Index(fields=["expires_at"], name="memory_expires", condition=Q(expires_at__isnull=False)),
            # Rows not yet in HNSW, searched exactly beside it: by user, so that a search
            # about one user reads that user's backlog only (with a workspace-wide index
            # every search through HNSW read all 20,000 rows of a burst, ~40 ms, at 1M).
            models.Index(fields=["workspace", "user_id", "created_at"], name="memory_unindexed_user", condition=Q(vector_indexed=False)),
            GinIndex(fields=["tags"], name="memory_tags_gin", gin_pending_list_limit=GIN_PENDING_LIST_KB),
            # A user's entries with given tags in one index scan (btree_gin): as two
            # bitmaps ANDed, every search with a tag read that tag's whole posting list
            # (100,000 rows at 1M entries, ~25 ms) however few entries the user had.
            GinIndex(fields=["user_id", "tags"], name="memory_user_tags_gin", gin_pending_list_limit=GIN_PENDING_LIST_KB),
            GinIndex(
                fields=["metadata"], name="memory_metadata_gin", opclasses=["jsonb_path_ops"], gin_pending_list_limit=GIN_PENDING_LIST_KB
            ),
            GinIndex(fields=["search_vector"], name="memory_search_gin", gin_pending_list_limit=GIN_PENDING_LIST_KB),
            # The review queue: a workspace's entries in one review state, oldest first.
            models.Index(fields=["workspace", "review", "created_at", "id"], name="memory_review_queue"),
            # A user's entries of the same text: duplicates on create, the review queue's groups.
            models.Index(fields=["workspace", "user_id", "content_fingerprint"], name="memory_fingerprint"),
            # The graph (memoryhub.graph): a workspace's facts by subject and by object, then by
            # user (one end user's graph is a range) and predicate (a transitive chain's next
            # step; across users, skipped over by PostgreSQL 18's skip scan or checked in the
            # index, never by reading the row). Migration memory 0014.
            models.Index(
                F("workspace"), GraphEntity(KeyTextTransform("subject", "data")), F("user_id"),
                GraphEntity(KeyTextTransform("predicate", "data")), name="graph_subject_user_predicate",
                condition=Q(memory_type=MemoryType.FACTUAL),
            ),
            models.Index(
                F("workspace"), GraphEntity(KeyTextTransform("object", "data")), F("user_id"),
                GraphEntity(KeyTextTransform("predicate", "data")), name="graph_object_user_predicate",
                condition=Q(memory_type=MemoryType.FACTUAL),
            ),
            # What a session's messages and tool calls taught: the console's conversation and tool calls.
            models.Index(
                fields=["workspace", "source_session_id"], name="memory_source_session", condition=Q(source_session_id__isnull=False),
            ),
        ]
        constraints = [
            *MemoryRecord.Meta.constraints,
            models.UniqueConstraint(
                fields=["agent", "key"], condition=Q(key__isnull=False, namespace__isnull=True), name="memory_unique_agent_key"
            ),
            # Puts of one item race to one row (an upsert on this index).
            models.UniqueConstraint(fields=["store", "namespace", "key"], condition=Q(namespace__isnull=False), name="memory_unique_item"),
            # At most one current fact per (agent, store, user, subject, predicate): two
            # racing writers of the same fact cannot both become current.
            models.UniqueConstraint(
                fields=["agent", "store", "user_id", "fact_key"],
                condition=Q(fact_key__isnull=False, invalidated_at__isnull=True),
                name="memory_unique_current_fact",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.memory_type} {self.id}"


class MemoryRevision(MemoryRecord):
    """An earlier revision of a memory, kept when the next one was made: the entry
    holds its current revision, so creating a memory writes nothing here."""

    entry = models.ForeignKey(MemoryEntry, on_delete=models.CASCADE, related_name="revisions")
    revision = models.PositiveIntegerField()
    content = models.TextField()
    tags = ArrayField(models.CharField(max_length=100), default=list, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    data = models.JSONField(default=dict, blank=True)
    change = models.CharField(max_length=16, choices=Change.choices)
    changed_by = models.CharField(max_length=200, blank=True, default="")
    changed_at = models.DateTimeField()
    reason = models.TextField(blank=True, default="")

    class Meta(MemoryRecord.Meta):
        constraints = [
            *MemoryRecord.Meta.constraints,
            # Two writers keeping the same revision: one wins, the other's change conflicts.
            models.UniqueConstraint(fields=["entry", "revision"], name="memory_revision_unique"),
        ]

    def __str__(self) -> str:
        return f"revision {self.revision} of {self.entry_id}"


class MemoryDuplicate(MemoryRecord):
    """A memory written although the writer could already see one like it (OnDuplicate.KEEP):
    a pair for the review queue, until an operator merges or deletes one of them."""

    entry = models.ForeignKey(MemoryEntry, on_delete=models.CASCADE, related_name="duplicates_found")
    duplicate_of = models.ForeignKey(MemoryEntry, on_delete=models.CASCADE, related_name="+")
    score = models.FloatField(help_text="1 for the same text once normalised, else the cosine similarity of their embeddings")

    class Meta(MemoryRecord.Meta):
        constraints = [
            *MemoryRecord.Meta.constraints,
            models.UniqueConstraint(fields=["entry", "duplicate_of"], name="memory_duplicate_unique"),
        ]
        indexes = [models.Index(fields=["workspace", "created_at", "id"], name="memory_duplicate_queue")]

    def __str__(self) -> str:
        return f"{self.entry_id} like {self.duplicate_of_id}"


class UserVectorIndex(MemoryRecord):
    """Indexes of one end user's entries alone (HNSW for meaning, GIN for words), built
    for users with many of them (`vector_index.user_vector_indexes_refresh`). The indexes
    live in PostgreSQL's catalog, their predicates naming the user; this row says they
    are built and valid, so a search may route to them, and is removed by a purge of the
    user like every record about them, after which the indexes are dropped."""

    dim = models.PositiveIntegerField()
    name = models.CharField(max_length=63, unique=True)
    entries = models.PositiveIntegerField(help_text="The user's entries when the index was built.")

    class Meta:
        constraints = [
            *MemoryRecord.Meta.constraints,
            models.UniqueConstraint(fields=["workspace", "user_id", "dim"], name="memory_one_vector_index_per_user"),
        ]

    def __str__(self) -> str:
        return self.name


class PredicateKind(models.TextChoices):
    TRANSITIVE = "transitive"  # a p b, b p c: a p c
    SYMMETRIC = "symmetric"  # a p b: b p a
    INVERSE = "inverse"  # a p b: b q a (q is the rule's `inverse`)
    MULTI = "multi"  # a p b and a p c stand side by side; otherwise a new object supersedes the old


class PredicateRule(models.Model):
    """How the graph reads facts with a predicate (memoryhub.graph). It lives with the
    facts rather than with the graph because one kind, `multi`, changes how a fact is
    written: without it, a new object for a subject and predicate supersedes the old one."""

    user_id_exemption = "Configuration of the workspace by its admins: predicates, never anything about an end user."

    workspace = models.ForeignKey("core.Workspace", on_delete=models.CASCADE, related_name="predicate_rules")
    predicate = models.CharField(max_length=200, help_text="Folded as facts are compared (case and spacing).")
    kind = models.CharField(max_length=16, choices=PredicateKind.choices)
    inverse = models.CharField(max_length=200, blank=True, default="", help_text="For `inverse`: the other predicate, folded.")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "predicate", "kind"], name="memory_predicate_rule_unique"),
            models.CheckConstraint(condition=~Q(kind=PredicateKind.INVERSE) | Q(inverse__gt=""), name="memory_predicate_rule_inverse_named"),
        ]

    def __str__(self) -> str:
        return f"{self.predicate}: {self.kind}" + (f" of {self.inverse}" if self.inverse else "")
