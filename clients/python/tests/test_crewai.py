"""MemoryHubStorage (memoryhub_client.integrations.crewai) with CrewAI itself, against the live
hub: the `StorageBackend` protocol and the cases CrewAI's own tests hold its LanceDB and Qdrant
Edge storages to, records kept field for field, searches by CrewAI's vectors and, where the
hub cannot use them, by their text; CrewAI's `Memory` remembering and recalling through it;
what operators and other workspaces see; and a crew that remembers across processes."""

from __future__ import annotations

import asyncio
import copy
import hashlib
import inspect
import json
import os
import re
from datetime import datetime, timedelta
from typing import Any, Callable

import pytest

# CrewAI's tracing (on unless told otherwise) waits 5 s at each memory step for a span
# that never comes (1.15.44): off, as the example turns it off.
os.environ["CREWAI_TRACING_ENABLED"] = "false"
os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"
os.environ["OTEL_SDK_DISABLED"] = "true"

from crewai.llms.base_llm import BaseLLM
from crewai.memory import Memory
from crewai.memory.storage.backend import StorageBackend
from crewai.memory.types import MemoryRecord
from crewai.utilities.i18n import I18N_DEFAULT

from conftest import Actors, run_example, unique
from memoryhub_client import MemoryHub
from memoryhub_client.errors import PermissionDenied
from memoryhub_client.integrations.crewai import MemoryHubStorage, QueryTextUnknown

# CrewAI's own times are datetime.utcnow(), deprecated since Python 3.12.
pytestmark = pytest.mark.filterwarnings("ignore:datetime.datetime.utcnow:DeprecationWarning")

HUB_DIMENSIONS = 384  # the test hub's local model (all-MiniLM-L6-v2)


def words(dimensions: int) -> Callable[[list[str]], list[list[float]]]:
    """A fake embedder (no network): each word counts in one dimension."""

    def embed(texts: list[str]) -> list[list[float]]:
        vectors = []
        for text in texts:
            vector = [0.0] * dimensions
            for word in re.findall(r"\w+", text.lower()):
                vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % dimensions] += 1.0
            vectors.append(vector)
        return vectors

    return embed


def one_hot(index: int, dimensions: int = HUB_DIMENSIONS) -> list[float]:
    return [1.0 if i == index else 0.0 for i in range(dimensions)]


class FakeLLM(BaseLLM):
    """Answers CrewAI memory's analysis prompts as a model would, offline."""

    def call(self, messages: Any, tools: Any = None, callbacks: Any = None, available_functions: Any = None,
             from_task: Any = None, from_agent: Any = None, response_model: Any = None) -> str:
        system = messages[0]["content"] if isinstance(messages, list) else ""
        if system == I18N_DEFAULT.memory("save_system"):
            return json.dumps({"suggested_scope": "/customers/ann", "categories": ["delivery"], "importance": 0.9,
                               "extracted_metadata": {"entities": ["Berlin"], "dates": [], "topics": ["parcels"]}})
        if system == I18N_DEFAULT.memory("consolidation_system"):
            return json.dumps({"actions": [], "insert_new": True})
        if system == I18N_DEFAULT.memory("query_system"):
            return json.dumps({"recall_queries": ["parcel delivery address"], "complexity": "simple"})
        return "Nothing is missing."

    def supports_function_calling(self) -> bool:
        return False


@pytest.fixture
def user() -> str:
    return unique("ann")  # the hub's other tests write about users of their own


@pytest.fixture
def storage(hub: MemoryHub, user: str) -> MemoryHubStorage:
    return MemoryHubStorage(hub=hub, user_id=user)


def rec(content: str = "test", scope: str = "/", categories: list[str] | None = None, importance: float = 0.5,
        embedding: list[float] | None = None, metadata: dict[str, Any] | None = None, created_at: datetime | None = None) -> MemoryRecord:
    """As CrewAI's storage tests make their records (a 4-dimensional vector: not the hub's)."""
    return MemoryRecord(
        content=content, scope=scope, categories=categories or [], importance=importance,
        embedding=embedding or [0.1, 0.2, 0.3, 0.4], metadata=metadata or {},
        **({"created_at": created_at} if created_at else {}),
    )


def query(storage: MemoryHubStorage, text: str, dimensions: int = 4) -> list[float]:
    """A query vector as CrewAI's Memory makes it: through the embedder it was given."""
    return storage.embedder(words(dimensions))([text])[0]


# --- the protocol ------------------------------------------------------------------------------


def test_it_is_crewais_storage_backend(storage: MemoryHubStorage) -> None:
    assert isinstance(storage, StorageBackend)  # the runtime-checkable protocol
    for name, member in inspect.getmembers(StorageBackend, inspect.isfunction):
        if not name.startswith("_"):
            ours = getattr(MemoryHubStorage, name)
            assert list(inspect.signature(ours).parameters) == list(inspect.signature(member).parameters), name
            assert inspect.iscoroutinefunction(ours) == inspect.iscoroutinefunction(member), name
    with pytest.raises(TypeError):
        MemoryHubStorage(hub=object(), user_id="ann")  # type: ignore[arg-type]


# And CrewAI's test_get_record_not_found.
def test_it_keeps_every_field_of_a_record(storage: MemoryHubStorage) -> None:
    record = MemoryRecord(
        content="Wir nutzen Python 3.13 ✈", scope="/crew/sales", categories=["decision", "lang"], importance=0.8,
        metadata={"ticket": "T-1", "n": 2**40, "ratio": 0.1 + 0.2, "nested": {"a": [1, None, "x"]}, "none": None},
        created_at=datetime(2026, 1, 2, 3, 4, 5, 678901), last_accessed=datetime(2026, 1, 3), source="session-7", private=True,
        embedding=[0.1, 0.2, 0.3, 0.4],
    )
    storage.save([record])
    found = storage.get_record(record.id)
    assert found is not None
    assert found.model_dump() == record.model_dump()  # every field but the embedding, which CrewAI leaves out too
    assert found.embedding is None  # not kept unless asked (the hub embedded the content itself)
    assert storage.get_record("nonexistent-id") is None


# Ported from CrewAI's own memory tests: test_save_search.
def test_it_saves_and_searches(storage: MemoryHubStorage) -> None:
    r = rec(content="test content", scope="/foo", categories=["cat1"], importance=0.8)
    storage.save([r])
    results = storage.search(query(storage, "test content"), scope_prefix="/foo", limit=5)
    assert len(results) == 1
    found, score = results[0]
    assert found.content == "test content" and found.scope == "/foo" and found.id == r.id
    assert 0.0 <= score <= 1.0
    assert storage.search(query(storage, "test content"), scope_prefix="/bar", limit=5) == []
    assert storage.search(query(storage, "test content"), limit=0) == []


# Ported from CrewAI's own memory tests: test_delete_count.
def test_it_deletes_and_counts(storage: MemoryHubStorage) -> None:
    storage.save([rec(scope="/")])
    assert storage.count() == 1
    assert storage.delete(scope_prefix="/") == 1
    assert storage.count() == 0


# Ported from CrewAI's own memory tests: test_update_get_record.
def test_it_updates_and_gets_a_record(storage: MemoryHubStorage, operator: MemoryHub) -> None:
    r = rec(content="original", scope="/a", categories=["x"])
    storage.save([r])
    r.content, r.scope, r.categories, r.importance = "updated", "/b", ["y"], 0.9
    storage.update(r)
    found = storage.get_record(r.id)
    assert found is not None and (found.content, found.scope, found.categories, found.importance) == ("updated", "/b", ["y"], 0.9)
    assert storage.count("/a") == 0 and storage.count("/b") == 1 and storage.list_categories() == {"y": 1}
    # One memory, whose history keeps the original (the hub's revisions).
    [memory] = operator.memories.list(user_id=storage.user_id).results
    assert [revision.content for revision in operator.memories.revisions(memory.id)] == ["updated", "original"]
    # Updating a record that is not there stores it, as LanceDB's delete-and-add does.
    new = rec(content="brand new")
    storage.update(new)
    assert storage.get_record(new.id) is not None and storage.count() == 2


def test_it_replaces_a_record_saved_again(storage: MemoryHubStorage) -> None:
    r = rec(content="first")
    storage.save([r])
    storage.save([r.model_copy(update={"content": "second"})])
    assert [found.content for found in storage.list_records()] == ["second"]


# Ported from CrewAI's own memory tests: test_list_scopes_get_scope_info.
def test_it_lists_scopes_and_describes_them(storage: MemoryHubStorage) -> None:
    storage.save([
        rec(content="a", scope="/", categories=["c1"], created_at=datetime(2025, 1, 1)),
        rec(content="b", scope="/team", categories=["c2"], created_at=datetime(2025, 2, 1)),
        rec(content="c", scope="/team/eng/backend", created_at=datetime(2025, 3, 1)),
        rec(content="d", scope="/teamwork"),
    ])
    assert storage.list_scopes("/") == ["/team", "/teamwork"]  # children, not the root itself
    assert storage.list_scopes("/team") == ["/team/eng"] and storage.list_scopes("/team/eng/backend") == []
    info = storage.get_scope_info("/")
    assert (info.path, info.record_count, info.categories, info.child_scopes) == ("/", 4, ["c1", "c2"], ["/team", "/teamwork"])
    assert info.oldest_record == datetime(2025, 1, 1)
    team = storage.get_scope_info("/team/")
    assert (team.path, team.record_count, team.child_scopes) == ("/team", 2, ["/team/eng"])
    assert (team.oldest_record, team.newest_record) == (datetime(2025, 2, 1), datetime(2025, 3, 1))
    empty = storage.get_scope_info("/nowhere")
    assert (empty.record_count, empty.oldest_record, empty.child_scopes) == (0, None, [])


# Ported from CrewAI's own memory tests: test_scope_prefix_filter.
def test_it_filters_by_scope_prefix(storage: MemoryHubStorage) -> None:
    storage.save([
        rec(content="sales note", scope="/crew/sales"),
        rec(content="eng note", scope="/crew/eng"),
        rec(content="other note", scope="/other"),
        rec(content="crewai note", scope="/crewai"),  # "/crew" is a path: not its prefix
    ])
    results = storage.search(query(storage, "note"), scope_prefix="/crew", limit=10)
    assert {r.scope for r, _ in results} == {"/crew/sales", "/crew/eng"}
    assert storage.count("/crew") == 2 and storage.count("crew/") == 2 and storage.count("/") == 4


# Ported from CrewAI's own memory tests: test_category_filter.
def test_it_filters_by_category(storage: MemoryHubStorage) -> None:
    storage.save([
        rec(content="cat1 item", categories=["cat1"]),
        rec(content="cat2 item", categories=["cat2"]),
        rec(content="cat3 item", categories=["cat3", "cat1"]),
    ])
    results = storage.search(query(storage, "item"), categories=["cat2"], limit=10)
    assert [r.categories for r, _ in results] == [["cat2"]]
    # Any of the categories, as CrewAI's backends match them.
    either = storage.search(query(storage, "item"), categories=["cat2", "cat3"], limit=10)
    assert sorted(r.content for r, _ in either) == ["cat2 item", "cat3 item"]
    assert len(storage.search(query(storage, "item"), categories=["cat1", "cat3"], limit=10)) == 2


# Ported from CrewAI's own memory tests: test_metadata_filter.
def test_it_filters_by_metadata(storage: MemoryHubStorage) -> None:
    storage.save([
        rec(content="with key", metadata={"env": "prod", "tier": {"level": 1}}),
        rec(content="without key", metadata={"env": "dev"}),
    ])
    results = storage.search(query(storage, "key"), metadata_filter={"env": "prod"}, limit=10)
    assert [r.metadata["env"] for r, _ in results] == ["prod"]
    assert [r.content for r, _ in storage.search(query(storage, "key"), metadata_filter={"tier": {"level": 1}}, limit=10)] == ["with key"]
    # None matches a record without the key, as `record.metadata.get(k) == v` does.
    assert [r.content for r, _ in storage.search(query(storage, "key"), metadata_filter={"tier": None}, limit=10)] == ["without key"]


# Ported from CrewAI's own memory tests: test_list_records_pagination.
def test_it_lists_records_newest_first_by_page(storage: MemoryHubStorage) -> None:
    records = [rec(content=f"item {i}", created_at=datetime(2025, 1, 1) + timedelta(days=i)) for i in range(5)]
    storage.save(records)
    page1 = storage.list_records(limit=2, offset=0)
    page2 = storage.list_records(limit=2, offset=2)
    page3 = storage.list_records(limit=2, offset=4)
    # Newest first by the records' own created_at (one batch: the hub's are all the same).
    assert [r.content for r in page1 + page2 + page3] == ["item 4", "item 3", "item 2", "item 1", "item 0"]
    assert storage.list_records(limit=0) == [] and storage.list_records(offset=-1) == []


def test_it_lists_past_a_hub_page(storage: MemoryHubStorage) -> None:
    storage.save([rec(content=f"bulk {i}", scope="/bulk", created_at=datetime(2025, 1, 1) + timedelta(minutes=i)) for i in range(230)])
    assert storage.count("/bulk") == 230
    assert [r.content for r in storage.list_records("/bulk", limit=3, offset=200)] == ["bulk 29", "bulk 28", "bulk 27"]


# Ported from CrewAI's own memory tests: test_list_categories.
def test_it_lists_categories(storage: MemoryHubStorage) -> None:
    storage.save([rec(categories=["a", "b"], scope="/x"), rec(categories=["b", "c"], scope="/y")])
    assert storage.list_categories() == {"a": 1, "b": 2, "c": 1}
    assert storage.list_categories("/y") == {"b": 1, "c": 1}


# Ported from CrewAI's own memory tests: test_touch_records.
def test_it_touches_records_only_when_asked(hub: MemoryHub, user: str, operator: MemoryHub) -> None:
    untracked = MemoryHubStorage(hub=hub, user_id=user)
    r = rec(content="touched")
    untracked.save([r])
    untracked.touch_records([r.id])  # off by default: a recall writes nothing
    [memory] = operator.memories.list(user_id=user).results
    assert memory.version == 1
    tracked = MemoryHubStorage(hub=hub, user_id=user, track_access=True)
    before = tracked.get_record(r.id)
    assert before is not None
    tracked.touch_records([r.id, "nonexistent-id"])
    after = tracked.get_record(r.id)
    assert after is not None and after.last_accessed > before.last_accessed and after.content == "touched"


# Ported from CrewAI's own memory tests: test_reset_full.
def test_it_resets_everything(storage: MemoryHubStorage) -> None:
    storage.save([rec(scope="/a"), rec(scope="/b")])
    assert storage.count() == 2
    storage.reset()
    assert storage.count() == 0


# Ported from CrewAI's own memory tests: test_reset_scoped.
def test_it_resets_a_scope(storage: MemoryHubStorage) -> None:
    storage.save([rec(scope="/a"), rec(scope="/a/deeper"), rec(scope="/b")])
    storage.reset(scope_prefix="/a")
    assert [r.scope for r in storage.list_records()] == ["/b"]


def test_it_deletes_by_every_criterion(storage: MemoryHubStorage) -> None:
    old, new = datetime(2024, 1, 1), datetime(2026, 1, 1)
    records = [
        rec(content="old a", scope="/a", categories=["x"], metadata={"k": 1}, created_at=old),
        rec(content="new a", scope="/a", categories=["y"], metadata={"k": 2}, created_at=new),
        rec(content="old b", scope="/b", categories=["x"], metadata={"k": 1}, created_at=old),
        rec(content="new b", scope="/b", categories=["y"], metadata={"k": 2}, created_at=new),
    ]
    storage.save(records)
    left = lambda: sorted(r.content for r in storage.list_records())  # noqa: E731
    assert storage.delete(record_ids=[records[0].id, "nonexistent-id"]) == 1 and left() == ["new a", "new b", "old b"]
    assert storage.delete(older_than=datetime(2025, 1, 1), scope_prefix="/a") == 0
    assert storage.delete(categories=["x"], metadata_filter={"k": 2}) == 0
    assert storage.delete(categories=["x", "z"]) == 1 and left() == ["new a", "new b"]
    assert storage.delete(record_ids=[records[1].id], scope_prefix="/b") == 0  # every criterion given must hold
    assert storage.delete(metadata_filter={"k": 2}, scope_prefix="/b") == 1 and left() == ["new a"]
    assert storage.delete() == 1 and left() == []


def test_it_keeps_odd_scopes_categories_and_ids_exactly(storage: MemoryHubStorage) -> None:
    long_scope = "/" + "/".join(["segment-" + "x" * 40] * 3)
    odd = MemoryRecord(id="crew, id " + "z" * 300, content="odd one", scope=long_scope, categories=["a, b", " padded ", "", "ü" * 150])
    plain = rec(content="plain one", scope=long_scope + "2", categories=["a"])
    storage.save([odd, plain])
    found = storage.get_record(odd.id)
    assert found is not None and (found.id, found.scope, found.categories) == (odd.id, odd.scope, odd.categories)
    assert storage.count(long_scope) == 1 and storage.list_scopes("/") == ["/segment-" + "x" * 40]
    assert [r.content for r, _ in storage.search(query(storage, "one"), categories=["a, b"], limit=5)] == ["odd one"]
    assert [r.content for r, _ in storage.search(query(storage, "one"), categories=["a"], limit=5)] == ["plain one"]
    assert storage.delete(record_ids=[odd.id]) == 1 and storage.get_record(odd.id) is None


def test_it_reads_memories_other_clients_tag_in(storage: MemoryHubStorage, hub: MemoryHub) -> None:
    written = hub.memories.create("Ann is a VIP customer.", user_id=storage.user_id, tags=["crewai", "vip"], metadata={"crm": 1})
    hub.memories.create("Not for the crew.", user_id=storage.user_id, tags=["other"])
    [record] = storage.list_records()
    assert (record.id, record.content, record.scope, record.categories, record.metadata) == (
        written.id, "Ann is a VIP customer.", "/", ["vip"], {"crm": 1})
    assert storage.get_record(written.id) == record and storage.list_categories() == {"vip": 1}
    assert storage.search(query(storage, "Who is a VIP?"), categories=["vip"], limit=5)[0][0].id == written.id
    assert storage.delete(record_ids=[written.id]) == 1 and storage.count() == 0


def test_it_is_shared_by_copies_of_a_memory(storage: MemoryHubStorage) -> None:
    memory = Memory(storage=storage, llm=FakeLLM(model="fake"), embedder=storage.embedder())
    copied = copy.deepcopy(memory)
    assert copied._storage is storage and copied.storage is storage
    copied.remember("Copied memories land in the same hub.", scope="/", categories=[], importance=0.5)
    assert [r.content for r in storage.list_records()] == ["Copied memories land in the same hub."]


# Ported from CrewAI's own memory tests: test_close_lifecycle.
def test_it_persists_for_another_process(actors: Actors, storage: MemoryHubStorage) -> None:
    storage.save([rec(content="persisted")])
    # Another process: a new client, a new storage; what was saved is in the hub.
    with actors.hub() as other_hub:
        other = MemoryHubStorage(hub=other_hub, user_id=storage.user_id)
        results = other.search(query(other, "persisted"), limit=5)
    assert [r.content for r, _ in results] == ["persisted"]


def test_it_has_the_async_methods(storage: MemoryHubStorage) -> None:
    async def scenario() -> tuple[list[tuple[MemoryRecord, float]], int]:
        await storage.asave([rec(content="async one", scope="/async"), rec(content="async two", scope="/async")])
        found = await storage.asearch(query(storage, "async one"), scope_prefix="/async", limit=1)
        return found, await storage.adelete(scope_prefix="/async")

    found, deleted = asyncio.run(scenario())
    assert [r.content for r, _ in found] == ["async one"] and deleted == 2 and storage.count() == 0


# --- embeddings and the text fallback ------------------------------------------------------------


def test_it_searches_by_vectors_of_the_hubs_dimension(storage: MemoryHubStorage) -> None:
    # The texts say nothing of the vectors: only the vectors can find these records.
    sky = rec(content="The sky is blue today.", embedding=one_hot(3))
    invoices = rec(content="Invoices are due on Friday.", embedding=one_hot(7))
    storage.save([sky, invoices])
    assert storage.hub_dimensions == HUB_DIMENSIONS  # the hub took them
    # A query vector whose text the storage never saw: the hub searches by it alone.
    results = storage.search(one_hot(7), limit=2)
    assert results[0][0].id == invoices.id and results[0][1] > 0.99
    assert storage.search(one_hot(3), limit=1)[0][0].id == sky.id
    assert storage.hub_dimensions == HUB_DIMENSIONS


def test_it_falls_back_to_text_for_another_dimension(storage: MemoryHubStorage) -> None:
    embed = storage.embedder(words(8))
    contents = ["The sky is blue today.", "Invoices are due on Friday.", "Our office dog is called Rex."]
    records = [MemoryRecord(content=text, embedding=vector) for text, vector in zip(contents, embed(contents))]
    storage.save(records)  # the hub refuses 8 dimensions once (learning its own), and embeds the texts
    assert storage.hub_dimensions == HUB_DIMENSIONS
    [question] = embed(["When do we have to pay the bills?"])
    results = storage.search(question, limit=3)
    assert results[0][0].content == "Invoices are due on Friday."  # by meaning: no word is shared
    with pytest.raises(QueryTextUnknown, match="it has 8 dimensions, the hub's model 384"):
        storage.search([0.5] * 8)  # neither usable nor known


def test_it_falls_back_on_a_fresh_storages_first_search(storage: MemoryHubStorage) -> None:
    storage.save([rec(content="Invoices are due on Friday."), rec(content="The sky is blue today.")])
    fresh = MemoryHubStorage(hub=storage.hub, user_id=storage.user_id)
    assert fresh.hub_dimensions is None
    [(found, _)] = fresh.search(query(fresh, "When do we have to pay the bills?", dimensions=1536), limit=1)
    assert found.content == "Invoices are due on Friday." and fresh.hub_dimensions == HUB_DIMENSIONS


def test_it_leaves_every_vector_to_the_hub_without_use_embeddings(storage: MemoryHubStorage) -> None:
    hub_only = MemoryHubStorage(hub=storage.hub, user_id=storage.user_id, use_embeddings=False)
    hub_only.save([rec(content="Invoices are due on Friday.", embedding=one_hot(7))])
    # Not stored as its vector: the one-hot query finds nothing alike, its text does.
    embed = hub_only.embedder(lambda texts: [one_hot(7) for _ in texts])
    [(found, score)] = hub_only.search(embed(["When do we have to pay the bills?"])[0], limit=1)
    assert found.content == "Invoices are due on Friday." and score < 0.99


def test_it_hands_crewais_vectors_back_with_keep_embeddings(hub: MemoryHub, user: str) -> None:
    keeping = MemoryHubStorage(hub=hub, user_id=user, keep_embeddings=True)
    vector = [0.1 + 0.2, -1e-300, 3.0, 2.0 ** 0.5] * 768  # 3,072 dimensions, as text-embedding-3-large
    r = rec(content="kept vector", embedding=vector)
    keeping.save([r])
    found = keeping.get_record(r.id)
    assert found is not None and found.embedding == vector


# --- CrewAI's Memory on the hub ---------------------------------------------------------------------


# Ported from CrewAI's own memory tests: test_memory_remember_recall_shallow, test_memory_forget,
# test_memory_list_scopes_info_tree.
def test_it_lets_crewais_memory_remember_and_recall(storage: MemoryHubStorage, operator: MemoryHub) -> None:
    memory = Memory(storage=storage, llm=FakeLLM(model="fake"), embedder=storage.embedder(words(16)))
    # Scope, categories and importance given: no analysis by the model.
    python = memory.remember("We decided to use Python for the backend.", scope="/project", categories=["decision"],
                             importance=0.7, metadata={"ticket": "T-1"})
    assert python is not None
    memory.remember("Ann prefers email over phone calls.", scope="/customers/ann", categories=["preference"], importance=0.9)
    matches = memory.recall("Which programming language did we choose?", scope="/project", depth="shallow")
    assert [m.record.id for m in matches] == [python.id] and matches[0].record.metadata == {"ticket": "T-1"}
    deep = memory.recall("How should we contact Ann?", limit=1)
    assert [m.record.content for m in deep] == ["Ann prefers email over phone calls."]
    memory.update(python.id, content="We decided to use Python 3.13 for the backend.", importance=0.8)
    updated = storage.get_record(python.id)
    assert updated is not None and (updated.content, updated.importance, updated.scope) == (
        "We decided to use Python 3.13 for the backend.", 0.8, "/project")
    assert memory.list_scopes() == ["/customers", "/project"] and memory.list_categories() == {"decision": 1, "preference": 1}
    assert memory.info("/customers").child_scopes == ["/customers/ann"]
    assert "/customers/ann (1 records)" in memory.tree()
    memory.remember_many(["Ann's parcels go to the Berlin office.", "Ann's invoices go to accounting."],
                         scope="/customers/ann", categories=["delivery"], importance=0.5)
    assert [m.record.content for m in memory.recall("Where are Ann's parcels delivered?", limit=1)] == [
        "Ann's parcels go to the Berlin office."]  # recall waits for the background save
    assert memory.forget(scope="/project") == 1 and memory.list_scopes() == ["/customers"]
    assert len(operator.memories.list(user_id=storage.user_id).results) == 3
    memory.reset()
    assert storage.count() == 0 and operator.memories.list(user_id=storage.user_id).results == []
    memory.close()


def test_it_lets_the_hub_embed_and_the_model_analyse(storage: MemoryHubStorage) -> None:
    # No embedding model in this process: stand-in vectors, the hub embeds every text.
    memory = Memory(storage=storage, llm=FakeLLM(model="fake"), embedder=storage.embedder(), root_scope="/crew/support")
    record = memory.remember("Ann's parcels go to the Berlin office.")  # the (fake) model picks scope and categories
    assert record is not None and (record.scope, record.categories, record.importance) == ("/crew/support/customers/ann", ["delivery"], 0.9)
    assert record.metadata == {"entities": ["Berlin"], "dates": [], "topics": ["parcels"]}
    memory.remember("Our office dog is called Rex.", scope="/office", categories=["trivia"], importance=0.2)
    # A question sharing no word with the answer: the hub's model finds it.
    [match] = memory.recall("Which city are deliveries for Ann sent to?", limit=1)
    assert match.record.id == record.id and storage.hub_dimensions is None  # no vector was ever sent
    # A long question goes through the model's analysis first (its sub-queries are embedded too).
    long = memory.recall("Please tell me " + "everything about where things are sent, " * 8, limit=1)
    assert [m.record.id for m in long] == [record.id]
    assert memory.list_records()[0].scope.startswith("/crew/support/")


def test_it_shows_operators_what_crewai_remembered(storage: MemoryHubStorage, operator: MemoryHub) -> None:
    r = MemoryRecord(content="Ann prefers email over phone calls.", scope="/customers/ann", categories=["preference"],
                     importance=0.9, metadata={"ticket": "T-1"}, source="session-7")
    storage.save([r])
    [memory] = operator.memories.list(user_id=storage.user_id, tags=["crewai"]).results
    assert memory.content == r.content and memory.metadata == {"ticket": "T-1"} and memory.key == r.id
    assert memory.scope == "agent" and memory.memory_type == "note"
    assert memory.tags == ["crewai", f"id:{r.id}", "scope:/customers", "scope:/customers/ann", "preference"]
    assert memory.data == {"crewai": {
        "id": r.id, "scope": "/customers/ann", "categories": ["preference"], "importance": 0.9, "created_at": r.created_at.isoformat(),
        "last_accessed": r.last_accessed.isoformat(), "source": "session-7", "private": False,
    }}
    # Found by operators' own searches, by meaning (the hub embedded the content).
    [hit] = operator.memories.search("How do we reach Ann?", user_id=storage.user_id)
    assert hit.entry.id == memory.id
    # An operator's correction is what the agent reads next.
    operator.memories.update(memory.id, content="Ann prefers email; never call.", reason="customer asked")
    found = storage.get_record(r.id)
    assert found is not None and found.content == "Ann prefers email; never call." and found.importance == 0.9


def test_it_shows_other_workspaces_and_agents_nothing(actors: Actors, storage: MemoryHubStorage) -> None:
    r = rec(content="Invoices are due on Friday.", scope="/billing", categories=["billing"])
    storage.save([r])
    for key in (actors.outsider_key, actors.teammate_key):
        with actors.hub(key) as other_hub:
            spy = MemoryHubStorage(hub=other_hub, user_id=storage.user_id)
            assert spy.count() == 0 and spy.list_records() == [] and spy.list_scopes() == [] and spy.list_categories() == {}
            assert spy.get_record(r.id) is None and spy.search(query(spy, "invoices due"), limit=5) == []
            assert spy.delete(record_ids=[r.id]) == 0 and spy.delete() == 0
            spy.reset()
    assert storage.get_record(r.id) is not None


def test_it_shares_a_collection_with_the_store(actors: Actors, hub: MemoryHub, user: str) -> None:
    shared = MemoryHubStorage(hub=hub, user_id=user, hub_scope="shared")
    r = rec(content="The team ships on Thursdays.", scope="/team")
    shared.save([r])
    with actors.hub(actors.teammate_key) as teammate_hub:
        teammate = MemoryHubStorage(hub=teammate_hub, user_id=user, hub_scope="shared")
        assert [found.id for found in teammate.list_records()] == [r.id]
        assert teammate.search(query(teammate, "When do we ship?"), limit=1)[0][0].id == r.id
        # Each agent changes and deletes only what it wrote (the hub's rule), and says so.
        with pytest.raises(PermissionDenied):
            teammate.delete(record_ids=[r.id])
        with pytest.raises(PermissionDenied):
            teammate.update(r.model_copy(update={"content": "The team ships on Fridays."}))
    assert [found.content for found in shared.list_records()] == ["The team ships on Thursdays."]
    # The agent's own (agent-scoped) collection is another one.
    assert MemoryHubStorage(hub=hub, user_id=user).count() == 0


# --- the example --------------------------------------------------------------------------------------


@pytest.mark.timeout(240)
def test_it_runs_the_example_crew_across_processes(actors: Actors, operator: MemoryHub, user: str) -> None:
    def run(message: str) -> str:
        return run_example(actors, "examples/crewai/agent.py", "--user", user, message, timeout=200)

    first = run("I prefer email over phone. My parcels go to the Berlin office.")
    assert "memories: 0" in first and "agent: Noted, thank you." in first
    second = run("How should you contact me?")
    assert "memories: 2" in second
    assert re.search(r"agent: From what you told us before: .*I prefer email over phone\.", second), second
    kept = sorted(m.content for m in operator.memories.list(user_id=user, tags=["crewai"]).results)
    assert kept == ["The customer said: I prefer email over phone.", "The customer said: My parcels go to the Berlin office."]
