"""CrewAI's unified memory storage (`crewai.memory.storage.backend.StorageBackend`) over hub
memories (`pip install "memoryhub-client[crewai]"`):

    storage = MemoryHubStorage(hub=hub, user_id="ann")
    memory = Memory(storage=storage, embedder=storage.embedder(), llm=...)
    crew = Crew(agents=[...], tasks=[...], memory=memory)

Each `MemoryRecord` is one hub memory about `user_id`, written by the agent the key names:

| record | hub memory |
|---|---|
| `content` | `content` (what operators read, search, redact and purge) |
| `metadata` | `metadata`, as it is (the hub filters on it) |
| `categories` | `tags`, one each (and in `data`, exactly) |
| `scope` | a `scope:<path>` tag for the path and each of its ancestors (and in `data`) |
| `id` | the memory's `key` (so a write of the same id replaces it) and an `id:<id>` tag |
| `importance`, `created_at`, `last_accessed`, `source`, `private` | `data.crewai` |
| `embedding` | the memory's vector when it has the hub's dimension; else the hub embeds `content` |

Every memory also carries the `collection` tag ("crewai"): the storage reads, counts and
deletes those only, never the key's other memories. Tags that cannot be tags as they are
(over 100 characters, a comma, blank or padded) are kept as `scope#…`, `id#…` or
`category#…` and a hash; `data.crewai` always holds the exact values, and what a hub filter
answers is checked against them again.

CrewAI's `search` is handed a query vector, never the query's text. The hub searches with
that vector where it is of the hub's model (same dimension: `DIMENSION_MISMATCH` otherwise),
and by the text the vector was made from otherwise: `storage.embedder(...)` wraps the
embedder `Memory` uses, and remembers which text each vector it made stands for.
`storage.embedder()` (no embedder) lets the hub embed everything: CrewAI then gets stand-in
vectors that only name their text, and needs no embedding model or key of its own.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import math
import struct
import threading
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, timezone
from typing import Any, Callable, Optional

from crewai.memory.types import MemoryRecord, ScopeInfo

from memoryhub_client.client import MemoryHub
from memoryhub_client.errors import BadRequest, Conflict, NotFound
from memoryhub_client.models import Memory, Scope, SearchMode

__all__ = ["MemoryHubStorage", "QueryTextUnknown"]

# The hub's limits (docs/memory.md, "Limits"): a page, a batch, a search's results, a tag, a key, a question.
PAGE = 200
BATCH = 500
MAX_RESULTS = 100
MAX_TAG = 100
MAX_KEY = 255
MAX_QUERY = 4000
# Texts of the vectors the embedder made, for the searches that follow (bounded: an
# entry is needed for as long as one remember or recall takes).
REMEMBERED_TEXTS = 10_000
# Stand-in vectors (`storage.embedder()`): enough dimensions that two texts never look
# alike to CrewAI's in-batch dedup (cosine ≥ 0.98); the same text gives the same vector.
STAND_IN_DIMENSIONS = 64
DEFAULT_COLLECTION = "crewai"

Vector = list[float]


class QueryTextUnknown(LookupError):
    """A search by a vector the hub cannot use (not its model's dimension) whose text the
    storage does not know: `Memory(embedder=storage.embedder(...))` tells it."""


class MemoryHubStorage:
    """Implements `crewai.memory.storage.backend.StorageBackend` (every method, sync and
    async) and `touch_records`, over the memories of `user_id` that the agent key of `hub`
    sees. `hub` is a sync `MemoryHub`: CrewAI calls its storage from its own worker threads
    and sync code, and the async methods run the sync ones on a thread.

    `collection`: the tag that makes a memory one of this storage's (LanceDB's table);
    `hub_scope`: who sees the memories written (the hub's `agent`, `shared` or `global`),
    and the scope read; `store`: the hub store written and read (the key's only or default
    store when None); `search_mode`: the hub's `semantic` (the default: scores are the
    cosine similarity CrewAI's recall weighs and its consolidation threshold expects),
    `hybrid` (its keyword leg too, for names and numbers: scores then mix in the keyword
    rank) or `keyword`;
    `use_embeddings`: send CrewAI's vectors to the hub where they have its dimension, as
    memories' vectors and query vectors (False when CrewAI's embedder is another model of
    the same dimension: the hub then embeds every text itself); `keep_embeddings`: keep
    CrewAI's vectors in `data` too, so that records read back carry them (they are large:
    ~33 KB at 3,072 dimensions); `track_access`: `touch_records` writes `last_accessed`
    (one revision per memory recalled, so off by default)."""

    def __init__(
        self, *, hub: MemoryHub, user_id: str, collection: str = DEFAULT_COLLECTION, hub_scope: Scope = "agent",
        store: Optional[str] = None, search_mode: SearchMode = "semantic", use_embeddings: bool = True,
        keep_embeddings: bool = False, track_access: bool = False,
    ) -> None:
        if not isinstance(hub, MemoryHub):
            raise TypeError("MemoryHubStorage takes a sync MemoryHub: CrewAI calls its storage from threads of its own")
        if not _is_tag(collection):
            raise ValueError(f"collection must be a tag: 1 to {MAX_TAG} characters, no comma, no surrounding spaces")
        self.hub = hub
        self.user_id = user_id
        self.collection = collection
        self.hub_scope = hub_scope
        self.store = store
        self.search_mode = search_mode
        self.use_embeddings = use_embeddings
        self.keep_embeddings = keep_embeddings
        self.track_access = track_access
        # The hub's embedding dimension, once a search or a write has shown it.
        self.hub_dimensions: Optional[int] = None
        self._texts: OrderedDict[bytes, tuple[str, bool]] = OrderedDict()
        self._texts_lock = threading.Lock()

    def __deepcopy__(self, memo: dict[int, Any]) -> MemoryHubStorage:
        # A Memory deep-copies its fields (copying an agent copies its memory): the copy
        # keeps this storage, a connection to one hub, as the data it reaches is one.
        return self

    # --- the embedder ----------------------------------------------------------------------

    def embedder(self, embedder: Any = None) -> Callable[[list[str]], list[Vector]]:
        """The embedder to give `Memory` beside this storage: `embedder` (a callable, or a
        CrewAI provider spec such as `{"provider": "openai", "config": {...}}`), whose
        vectors' texts the storage remembers for its searches; or, with None, stand-in
        vectors, and the hub embeds every text itself."""
        return _Embedder(self, embedder)

    def _remember_texts(self, texts: Sequence[str], vectors: Sequence[Vector], stand_in: bool) -> None:
        with self._texts_lock:
            for text, vector in zip(texts, vectors):
                if vector:
                    key = _vector_key(vector)
                    self._texts[key] = (text, stand_in)
                    self._texts.move_to_end(key)
            while len(self._texts) > REMEMBERED_TEXTS:
                self._texts.popitem(last=False)

    def _text_of(self, vector: Sequence[float]) -> tuple[Optional[str], bool]:
        """The text a vector was made from, if the embedder made it, and whether it is a stand-in."""
        if not vector:
            return None, False
        with self._texts_lock:
            return self._texts.get(_vector_key(vector), (None, False))

    def _sendable(self, vector: Optional[Sequence[float]]) -> Optional[Vector]:
        """The vector as the hub would take it for its own model's, or None (the hub then embeds the text)."""
        if not self.use_embeddings or not vector:
            return None
        if self.hub_dimensions is not None and len(vector) != self.hub_dimensions:
            return None
        if self._text_of(vector)[1]:
            return None  # a stand-in names a text; it is no one's embedding
        values = [float(x) for x in vector]
        if not all(math.isfinite(x) for x in values) or not any(values):
            return None  # the hub refuses zero and non-finite vectors (LanceDB pads with zeros)
        return values

    def _note_dimensions(self, written: list[dict[str, Any]]) -> None:
        """A vector the hub took has its dimension."""
        if self.hub_dimensions is None:
            self.hub_dimensions = next((len(item["embedding"]) for item in written if "embedding" in item), None)

    def _learn_dimensions(self, error: BadRequest) -> bool:
        expected = error.details.get("expected_dimensions")
        if error.code in ("INVALID_EMBEDDING", "DIMENSION_MISMATCH") and isinstance(expected, int):
            self.hub_dimensions = expected
            return True
        return False

    # --- records and memories --------------------------------------------------------------

    def _memory_input(self, record: MemoryRecord) -> dict[str, Any]:
        crewai: dict[str, Any] = {
            "id": record.id, "scope": record.scope, "categories": list(record.categories), "importance": record.importance,
            "created_at": record.created_at.isoformat(), "last_accessed": record.last_accessed.isoformat(),
            "source": record.source, "private": record.private,
        }
        if self.keep_embeddings and record.embedding and not self._text_of(record.embedding)[1]:
            crewai["embedding"] = _packed(record.embedding)
        item: dict[str, Any] = {
            "content": record.content, "user_id": self.user_id, "scope": self.hub_scope, "tags": self._tags_of(record),
            "metadata": dict(record.metadata), "data": {"crewai": crewai}, "key": _key_of(record.id),
        }
        if self.store is not None:
            item["store"] = self.store
        embedding = self._sendable(record.embedding)
        if embedding is not None:
            item["embedding"] = embedding
        return item

    def _tags_of(self, record: MemoryRecord) -> list[str]:
        tags = [self.collection, _tag("id", record.id)]
        tags += [_tag("scope", path) for path in _ancestors(record.scope)]
        tags += [_category_tag(category) for category in record.categories]
        return list(dict.fromkeys(tags))

    def _record_of(self, memory: Memory) -> MemoryRecord:
        crewai = memory.data.get("crewai") if isinstance(memory.data, dict) else None
        if not isinstance(crewai, dict):
            # Tagged into the collection by another client: a record at the root scope, known by its hub id.
            bookkeeping = ("scope:", "scope#", "id:", "id#", "category#")
            created = _naive_utc(memory.created_at)
            return MemoryRecord(
                id=memory.id, content=memory.content, metadata=dict(memory.metadata),
                categories=[tag for tag in memory.tags if tag != self.collection and not tag.startswith(bookkeeping)],
                created_at=created, last_accessed=created,
            )
        embedding = crewai.get("embedding")
        return MemoryRecord(
            id=crewai["id"], content=memory.content, scope=crewai.get("scope", "/"), categories=list(crewai.get("categories", [])),
            metadata=dict(memory.metadata), importance=crewai.get("importance", 0.5),
            created_at=_time(crewai.get("created_at"), memory.created_at),
            last_accessed=_time(crewai.get("last_accessed"), memory.updated_at),
            embedding=_unpacked(embedding) if isinstance(embedding, str) else None,
            source=crewai.get("source"), private=bool(crewai.get("private", False)),
        )

    def _listed(self, tags: Iterable[str] = ()) -> Iterator[Memory]:
        """The collection's memories of this user having every tag, newest first."""
        yield from self.hub.memories.iter(
            tags=[self.collection, *tags], user_id=self.user_id, scope=self.hub_scope, store=self.store, limit=PAGE,
        )

    def _records(self, scope_prefix: Optional[str], tags: Iterable[str] = ()) -> Iterator[tuple[Memory, MemoryRecord]]:
        """Every record at or under `scope_prefix`, with its memory."""
        prefix = _prefix(scope_prefix)
        scope_tags = [_tag("scope", prefix)] if prefix else []
        for memory in self._listed([*scope_tags, *tags]):
            record = self._record_of(memory)
            if _under(record.scope, prefix):
                yield memory, record

    def _entry(self, record_id: str) -> Optional[tuple[Memory, MemoryRecord]]:
        """The memory holding the record `record_id`, or None."""
        for memory in self._listed([_tag("id", record_id)]):
            record = self._record_of(memory)
            if record.id == record_id:
                return memory, record
        if _is_uuid(record_id):
            # A memory written without a record of its own (tagged in by another client) is known by its hub id.
            try:
                memory = self.hub.memories.get(record_id)
            except NotFound:
                return None
            record = self._record_of(memory)
            if self._holds(memory) and record.id == record_id:
                return memory, record
        return None

    def _holds(self, memory: Memory) -> bool:
        """Whether a memory is one of this storage's (what `_listed` filters by)."""
        return (
            self.collection in memory.tags and memory.user_id == self.user_id and memory.scope == self.hub_scope
            and (self.store is None or memory.store == self.store)
        )

    # --- StorageBackend --------------------------------------------------------------------

    def save(self, records: list[MemoryRecord]) -> None:
        """Every record, as one memory each, all or nothing per 500; a record whose id is
        already stored replaces it (the hub's keyed writes)."""
        for start in range(0, len(records), BATCH):
            chunk = records[start:start + BATCH]
            items = [self._memory_input(record) for record in chunk]
            try:
                self.hub.memories.create_batch(items)
            except BadRequest as error:
                if not self._learn_dimensions(error):
                    raise
                # Vectors of another model: the hub embeds the contents itself.
                items = [self._memory_input(record) for record in chunk]
                self.hub.memories.create_batch(items)
            self._note_dimensions(items)

    def search(
        self, query_embedding: list[float], scope_prefix: Optional[str] = None, categories: Optional[list[str]] = None,
        metadata_filter: Optional[dict[str, Any]] = None, limit: int = 10, min_score: float = 0.0,
    ) -> list[tuple[MemoryRecord, float]]:
        """The best `limit` records at or under `scope_prefix`, in any of `categories`,
        whose metadata has every `metadata_filter` value, scoring at least `min_score`: the
        hub's score (0–1), best first."""
        if limit <= 0:
            return []
        prefix = _prefix(scope_prefix)
        wanted = list(dict.fromkeys(categories or []))
        # The hub's tags filter means all of them, CrewAI's categories any: one search each.
        groups: list[list[str]] = [[_category_tag(category)] for category in wanted] or [[]]
        best: dict[str, tuple[MemoryRecord, float]] = {}
        for group in groups:
            tags = [self.collection, *([_tag("scope", prefix)] if prefix else []), *group]
            for memory, score in self._hub_search(query_embedding, tags=tags, metadata=metadata_filter, limit=limit, min_score=min_score):
                record = self._record_of(memory)
                if score < min_score or not _matches(record, prefix=prefix, categories=wanted, metadata=metadata_filter):
                    continue
                if record.id not in best or score > best[record.id][1]:
                    best[record.id] = (record, score)
        return sorted(best.values(), key=lambda hit: hit[1], reverse=True)[:limit]

    def _hub_search(
        self, vector: Sequence[float], *, tags: list[str], metadata: Optional[dict[str, Any]], limit: int, min_score: float,
    ) -> list[tuple[Memory, float]]:
        text, _ = self._text_of(vector)
        query = text[:MAX_QUERY] if text and text.strip() else None
        # A None in CrewAI's filter also matches records without the key; the hub's
        # containment would not, so those are checked here only.
        hub_metadata = {key: value for key, value in (metadata or {}).items() if value is not None}
        filters: dict[str, Any] = {
            "tags": tags, "metadata": hub_metadata or None, "user_id": self.user_id, "scope": self.hub_scope, "store": self.store,
            # Without words there is no keyword leg, and a hybrid score would be 0.6 × the similarity.
            "mode": self.search_mode if query is not None else "semantic", "max_results": min(limit, MAX_RESULTS),
            "min_relevance": min(min_score, 1.0) if min_score > 0 else None,
            # CrewAI ranks and consolidates by similarity itself: a repeat keeps its own score.
            "repeats": "keep",
        }
        embedding = self._sendable(vector) if self.search_mode != "keyword" else None
        if embedding is not None:
            try:
                # The query's words too, where known: the keyword leg of a hybrid search.
                hits = self.hub.memories.search(query, embedding=embedding, **filters)
                self.hub_dimensions = len(embedding)
                return [(hit.entry, hit.score) for hit in hits]
            except BadRequest as error:
                if error.code != "DIMENSION_MISMATCH":
                    raise
                self._learn_dimensions(error)
        if query is None:
            if not self.use_embeddings:
                why = "use_embeddings is off"
            elif self.search_mode == "keyword":
                why = "a keyword search needs words"
            elif self.hub_dimensions is not None and len(vector) != self.hub_dimensions:
                why = f"it has {len(vector)} dimensions, the hub's model {self.hub_dimensions}"
            else:
                why = "a stand-in, or not a vector the hub takes"
            raise QueryTextUnknown(
                f"The hub cannot search by this query vector ({why}), and this storage does not know the text it stands for: "
                "give Memory `embedder=storage.embedder(your_embedder)`, or `storage.embedder()` to let the hub embed."
            )
        # The hub embeds the question with its own model.
        return [(hit.entry, hit.score) for hit in self.hub.memories.search(query, **filters)]

    def delete(
        self, scope_prefix: Optional[str] = None, categories: Optional[list[str]] = None, record_ids: Optional[list[str]] = None,
        older_than: Optional[datetime] = None, metadata_filter: Optional[dict[str, Any]] = None,
    ) -> int:
        """Deletes the records matching every criterion given (none: all of them, as
        CrewAI's own backends do) on the hub; answers how many."""
        prefix = _prefix(scope_prefix)
        wanted = list(dict.fromkeys(categories or []))
        if record_ids:
            found = (self._entry(record_id) for record_id in dict.fromkeys(record_ids))
            candidates: Iterable[tuple[Memory, MemoryRecord]] = [entry for entry in found if entry is not None]
        else:
            candidates = self._records(prefix, [_category_tag(wanted[0])] if len(wanted) == 1 else [])
        doomed = [
            memory for memory, record in candidates
            if _matches(record, prefix=prefix, categories=wanted, metadata=metadata_filter)
            and (older_than is None or _instant(record.created_at) < _instant(older_than))
        ]
        deleted = 0
        for memory in doomed:
            try:
                self.hub.memories.delete(memory.id)
            except NotFound:
                continue  # deleted meanwhile: not this call's
            deleted += 1
        return deleted

    def update(self, record: MemoryRecord) -> None:
        """Replaces the record with the same id (its memory's next revision), or saves it."""
        found = self._entry(record.id)
        if found is None:
            self.save([record])
            return
        memory, _ = found
        for attempt in range(2):
            item = self._memory_input(record)
            try:
                self.hub.memories.update(
                    memory.id, content=item["content"], tags=item["tags"], metadata=item["metadata"], data=item["data"],
                    embedding=item.get("embedding"),
                )
                self._note_dimensions([item])
                return
            except BadRequest as error:
                if attempt or not self._learn_dimensions(error):
                    raise

    def get_record(self, record_id: str) -> Optional[MemoryRecord]:
        found = self._entry(record_id)
        return found[1] if found is not None else None

    def list_records(self, scope_prefix: Optional[str] = None, limit: int = 200, offset: int = 0) -> list[MemoryRecord]:
        """Newest first by the records' own `created_at` (which CrewAI may set: the hub's
        is when the memory was written), so the whole scope is read to order it."""
        if limit <= 0 or offset < 0:
            return []
        records = [record for _, record in self._records(scope_prefix)]
        records.sort(key=lambda record: _instant(record.created_at), reverse=True)
        return records[offset:offset + limit]

    def get_scope_info(self, scope: str) -> ScopeInfo:
        path = scope.rstrip("/") or "/"
        prefix = _prefix(path)
        records = [record for _, record in self._records(prefix)]
        created = sorted((record.created_at for record in records), key=_instant)
        return ScopeInfo(
            path=path, record_count=len(records), categories=sorted({c for record in records for c in record.categories}),
            oldest_record=created[0] if created else None, newest_record=created[-1] if created else None,
            child_scopes=_children(prefix, records),
        )

    def list_scopes(self, parent: str = "/") -> list[str]:
        prefix = _prefix(parent)
        return _children(prefix, [record for _, record in self._records(prefix)])

    def list_categories(self, scope_prefix: Optional[str] = None) -> dict[str, int]:
        counts: dict[str, int] = {}
        for _, record in self._records(scope_prefix):
            for category in record.categories:
                counts[category] = counts.get(category, 0) + 1
        return counts

    def count(self, scope_prefix: Optional[str] = None) -> int:
        return sum(1 for _ in self._records(scope_prefix))

    def reset(self, scope_prefix: Optional[str] = None) -> None:
        """Deletes every record at or under `scope_prefix` (None: the whole collection)."""
        self.delete(scope_prefix=scope_prefix)

    def touch_records(self, record_ids: list[str]) -> None:
        """`last_accessed` set to now (CrewAI calls it after a recall), with `track_access`
        only: each is a revision of the memory. A record changed meanwhile keeps that change."""
        if not self.track_access:
            return
        now = datetime.now(timezone.utc).replace(tzinfo=None).isoformat()
        for record_id in dict.fromkeys(record_ids):
            found = self._entry(record_id)
            if found is None or not isinstance(found[0].data, dict) or not isinstance(found[0].data.get("crewai"), dict):
                continue
            memory = found[0]
            data = {**memory.data, "crewai": {**memory.data["crewai"], "last_accessed": now}}
            try:
                self.hub.memories.update(memory.id, data=data, version=memory.version)
            except (Conflict, NotFound):
                continue

    async def asave(self, records: list[MemoryRecord]) -> None:
        await asyncio.to_thread(self.save, records)

    async def asearch(
        self, query_embedding: list[float], scope_prefix: Optional[str] = None, categories: Optional[list[str]] = None,
        metadata_filter: Optional[dict[str, Any]] = None, limit: int = 10, min_score: float = 0.0,
    ) -> list[tuple[MemoryRecord, float]]:
        return await asyncio.to_thread(
            self.search, query_embedding, scope_prefix=scope_prefix, categories=categories, metadata_filter=metadata_filter,
            limit=limit, min_score=min_score,
        )

    async def adelete(
        self, scope_prefix: Optional[str] = None, categories: Optional[list[str]] = None, record_ids: Optional[list[str]] = None,
        older_than: Optional[datetime] = None, metadata_filter: Optional[dict[str, Any]] = None,
    ) -> int:
        return await asyncio.to_thread(
            self.delete, scope_prefix=scope_prefix, categories=categories, record_ids=record_ids, older_than=older_than,
            metadata_filter=metadata_filter,
        )


class _Embedder:
    """CrewAI's embedder interface (texts in, one vector each out) that tells the storage
    which text each vector stands for."""

    def __init__(self, storage: MemoryHubStorage, embedder: Any) -> None:
        self._storage = storage
        self._spec = embedder
        self._built: Any = None
        self._lock = threading.Lock()

    def __deepcopy__(self, memo: dict[int, Any]) -> _Embedder:
        return self  # as its storage (Memory deep-copies its embedder field)

    def _inner(self) -> Callable[[list[str]], Any]:
        with self._lock:
            if self._built is None:
                if isinstance(self._spec, dict):
                    # A provider spec, built as Memory builds its own (only when first used).
                    from crewai.rag.embeddings.factory import build_embedder

                    self._built = build_embedder(self._spec)  # type: ignore[arg-type]
                else:
                    self._built = self._spec
            return self._built

    def __call__(self, input: list[str]) -> list[Vector]:  # noqa: A002 - the name CrewAI's embedding functions take
        texts = list(input)
        if self._spec is None:
            vectors = [_stand_in(text) for text in texts]
        else:
            vectors = [_floats(vector) for vector in self._inner()(texts)]
        self._storage._remember_texts(texts, vectors, stand_in=self._spec is None)
        return vectors


# --- helpers ---------------------------------------------------------------------------------


def _floats(vector: Any) -> Vector:
    """A vector as CrewAI's `embed_texts` turns it into a list (numpy arrays, lists, tuples)."""
    if hasattr(vector, "tolist"):
        vector = vector.tolist()
    return [float(x) for x in vector]


def _vector_key(vector: Sequence[float]) -> bytes:
    return hashlib.blake2b(struct.pack(f"<{len(vector)}d", *(float(x) for x in vector)), digest_size=16).digest()


def _stand_in(text: str) -> Vector:
    """A unit vector that names `text`: the same for the same text, unlike any other's."""
    raw = hashlib.shake_256(text.encode("utf-8", "surrogatepass")).digest(2 * STAND_IN_DIMENSIONS)
    values = [v - 32767.5 for v in struct.unpack(f"<{STAND_IN_DIMENSIONS}H", raw)]
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values]


def _packed(vector: Sequence[float]) -> str:
    """A vector as base64 of little-endian doubles: exact, and a third of its JSON."""
    return base64.b64encode(struct.pack(f"<{len(vector)}d", *(float(x) for x in vector))).decode("ascii")


def _unpacked(text: str) -> Vector:
    raw = base64.b64decode(text)
    return list(struct.unpack(f"<{len(raw) // 8}d", raw))


def _parts(scope: Optional[str]) -> list[str]:
    return [part for part in (scope or "").split("/") if part]


def _prefix(scope_prefix: Optional[str]) -> Optional[str]:
    """A scope prefix as a path ("/a/b"), or None for the root (everything)."""
    parts = _parts(scope_prefix)
    return "/" + "/".join(parts) if parts else None


def _ancestors(scope: str) -> list[str]:
    """"/crew/sales" → ["/crew", "/crew/sales"]: the prefixes a record is found under (the root aside)."""
    parts = _parts(scope)
    return ["/" + "/".join(parts[:depth]) for depth in range(1, len(parts) + 1)]


def _under(scope: str, prefix: Optional[str]) -> bool:
    """Whether `scope` is `prefix` or below it, path by path ("/crew" holds "/crew/a", not "/crewai")."""
    return prefix is None or prefix in _ancestors(scope)


def _children(prefix: Optional[str], records: Iterable[MemoryRecord]) -> list[str]:
    """The immediate child scopes of `prefix` that the records are at or under."""
    depth = len(_parts(prefix))
    return sorted({"/" + "/".join(_parts(record.scope)[:depth + 1]) for record in records if len(_parts(record.scope)) > depth})


def _matches(record: MemoryRecord, *, prefix: Optional[str], categories: list[str], metadata: Optional[dict[str, Any]]) -> bool:
    """CrewAI's filters, exactly (the hub's tags and metadata containment narrow first)."""
    return (
        _under(record.scope, prefix)
        and (not categories or any(category in record.categories for category in categories))
        and all(record.metadata.get(key) == value for key, value in (metadata or {}).items())
    )


def _is_tag(value: str) -> bool:
    # What the hub keeps as it is, and what a comma-separated `tags=` of a listing can name.
    return 0 < len(value) <= MAX_TAG and value.strip() == value and "," not in value and value.isprintable()


def _hashed(kind: str, value: str) -> str:
    return f"{kind}#{hashlib.sha256(value.encode('utf-8', 'surrogatepass')).hexdigest()[:40]}"


def _tag(kind: str, value: str) -> str:
    tag = f"{kind}:{value}"
    return tag if _is_tag(tag) else _hashed(kind, value)


def _category_tag(category: str) -> str:
    return category if _is_tag(category) else _hashed("category", category)


def _key_of(record_id: str) -> str:
    return record_id if 0 < len(record_id) <= MAX_KEY and record_id.strip() == record_id else _hashed("id", record_id)


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def _naive_utc(moment: datetime) -> datetime:
    """CrewAI's times are naive UTC (`datetime.utcnow()`), and its scoring subtracts them from it."""
    return moment.astimezone(timezone.utc).replace(tzinfo=None) if moment.tzinfo else moment


def _time(kept: Any, otherwise: datetime) -> datetime:
    """A record's time as CrewAI wrote it, or the hub's (naive UTC) where it is not kept."""
    return datetime.fromisoformat(kept) if isinstance(kept, str) and kept else _naive_utc(otherwise)


def _instant(moment: datetime) -> float:
    """A time to order and compare by, naive ones taken as UTC as CrewAI writes them."""
    return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).timestamp()
