"""`manage.py bench portability`: export a workspace of 1,000,000 memories and 100,000
messages (with vectors), import the archive into an empty workspace, export that again.

Measured: the export's and the import's rate (records a second) and how far each grows
the process's memory (sampled every 50 ms: both stream, so it must stay flat); the round
trip (the two archives hold the same records, ids aside, and 100 questions get the same
answers in both workspaces, searched exactly so that an index's approximation cannot
differ); and, for an archive without vectors, the embedding model's rate, which bounds
an import that must compute them.
"""

from __future__ import annotations

import hashlib
import logging
import tempfile
import threading
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from django.core.management.base import CommandParser
from django.db import connection
from django.test.utils import override_settings
from django.utils import timezone

from benchmarks.common import BENCH_TAGS, Log, Options, against, delete_loaded_workspace, load_rows, percentile
from memoryhub.conversations.models import Message, Session
from memoryhub.core import services as core_services
from memoryhub.core.models import Agent, Role, Workspace
from memoryhub.core.selectors import principal_for_membership
from memoryhub.memory import search as memory_search
from memoryhub.memory import selectors
from memoryhub.memory.embeddings import get_provider
from memoryhub.portability.imports import archive_manifest, import_file
from memoryhub.portability.services import export_to_file

NAME = "portability"
HELP = "export 1M memories + 100k messages, import them into an empty workspace, compare the round trip (own database)"
DATABASE: str | None = "memoryhub_bench_portability"
FORWARDED: tuple[str, ...] = ("--memories", "--messages", "--questions")

SOURCE, TARGET = "bench-portability", "bench-portability-copy"
USERS = 1000
MESSAGES_PER_SESSION = 100
EXPORT_GOAL = 20_000  # records a second
IMPORT_GOAL = 5_000
RSS_GOAL_MB = 100
# Issue 53: an import of any archive the limits accept grows the process by at most this much.
HOSTILE_RSS_GOAL_MB = 200
# Fields naming a record in one workspace only: ids, and what refers to them by id.
ID_FIELDS = {"id", "entry", "plan", "rule", "memory", "superseded_by", "source_import_id", "source_episode_id"}


def add_arguments(parser: CommandParser) -> None:
    parser.add_argument("--memories", type=int, default=1_000_000, help="memories in the exported workspace (with vectors)")
    parser.add_argument("--messages", type=int, default=100_000, help="messages in it, in sessions of 100")
    parser.add_argument("--questions", type=int, default=100, help="searches compared between the two workspaces")


def run(options: Options, *, log: Log) -> dict[str, Any]:
    return bench_portability(memories=options["memories"], messages=options["messages"], questions=options["questions"], log=log)


def report(result: dict[str, Any], *, write: Log) -> None:
    write(f"workspace: {result['memories']:,} memories (with vectors) + {result['messages']:,} messages in {result['sessions']:,} sessions, "
          f"{result['users']:,} users")
    imported = result["import"]
    for name, label in (("export", "export"), ("export_vectors", "export with vectors")):
        export = result[name]
        write(f"{label}: {export['records']:,} records in {export['seconds']:.1f} s = {export['rate']:,.0f} records/s "
              f"{against(export['rate'] >= EXPORT_GOAL, f'>= {EXPORT_GOAL:,}/s')}, {export['bytes'] / 1e6:,.0f} MB zip; peak RSS growth "
              f"{export['rss_growth_mb']:.0f} MB {against(export['rss_growth_mb'] <= RSS_GOAL_MB, f'<= {RSS_GOAL_MB} MB')}")
    write(f"import of the archive with vectors into an empty workspace (checksums verified first: {imported['verify_seconds']:.1f} s of it): "
          f"{imported['created']:,} records created in {imported['seconds']:.1f} s = {imported['rate']:,.0f} records/s "
          f"{against(imported['rate'] >= IMPORT_GOAL, f'>= {IMPORT_GOAL:,}/s')}; peak RSS growth {imported['rss_growth_mb']:.0f} MB")
    for label, hostile in result.get("hostile", {}).items():
        write(f"hostile archive, {label} ({hostile['zip_kb']:,.0f} KB zip, {hostile['inflated_mb']:,.0f} MB inflated): peak RSS growth "
              f"{hostile['rss_growth_mb']:.0f} MB {against(hostile['rss_growth_mb'] <= HOSTILE_RSS_GOAL_MB, f'<= {HOSTILE_RSS_GOAL_MB} MB')} "
              f"in {hostile['seconds']:.1f} s; {hostile['outcome']}")
    write(f"without vectors: bounded by the embedding model, {result['embed_rate']:,.0f} memories/s here (local model, batches of 256): "
          f"{result['memories']:,} memories would take {result['memories'] / result['embed_rate'] / 60:,.0f} min")
    write(f"round trip export → import → export: {'the same records' if result['same_records'] else 'RECORDS DIFFER'}, ids aside "
          f"({', '.join(f'{kind} {n:,}' for kind, n in result['kinds'].items() if n)})")
    write(f"  {result['questions']} questions (hybrid, searched exactly): {result['same_answers']} answered the same in both workspaces "
          f"{against(result['same_answers'] == result['questions'], 'all')} (p50 {result['search_ms']['p50']:.0f} ms a search)")


class PeakRss:
    """The process's resident memory, sampled every 50 ms in a thread: the peak's growth
    over what it was at the start."""

    def __enter__(self) -> PeakRss:
        self.start = self.peak = _rss_mb()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(0.05):
            self.peak = max(self.peak, _rss_mb())

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss_mb())

    @property
    def growth(self) -> float:
        return self.peak - self.start


def _rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / 2**20


def bench_portability(*, memories: int, messages: int, questions: int, log: Log) -> dict[str, Any]:
    logging.getLogger("celery.app.trace").setLevel(logging.WARNING)
    provider = get_provider()
    source = _source(memories=memories, messages=messages, dim=provider.dimensions, model_id=provider.model_id, log=log)
    target = _empty_target()
    result: dict[str, Any] = {"memories": memories, "messages": messages, "sessions": messages // MESSAGES_PER_SESSION, "users": USERS}
    with tempfile.TemporaryDirectory() as folder:
        first, second = Path(folder) / "first.zip", Path(folder) / "second.zip"
        for with_vectors, name in ((False, "export"), (True, "export_vectors")):
            log(f"  exporting ({'with' if with_vectors else 'without'} vectors)…")
            with PeakRss() as rss:
                started = time.perf_counter()
                written = export_to_file(workspace=source, scope="workspace", path=first, with_vectors=with_vectors)
                seconds = time.perf_counter() - started
            records = sum(written.counts.values())
            result[name] = {"records": records, "seconds": seconds, "rate": records / seconds, "bytes": written.bytes, "rss_growth_mb": rss.growth}
            log(f"  export: {records:,} records in {seconds:.1f} s, RSS +{rss.growth:.0f} MB")
        log("  importing…")
        with PeakRss() as rss:
            started = time.perf_counter()
            job = import_file(workspace=target, path=first, format="memoryhub", store="default", agent="bench")
            seconds = time.perf_counter() - started
        verify_started = time.perf_counter()
        with zipfile.ZipFile(first) as archive:
            archive_manifest(archive)
        verify_seconds = time.perf_counter() - verify_started
        created = job.counts["created"]
        result["import"] = {"created": created, "refused": job.counts["refused"], "seconds": seconds, "rate": created / seconds,
                            "verify_seconds": verify_seconds, "rss_growth_mb": rss.growth}
        log(f"  import: {created:,} created in {seconds:.1f} s, RSS +{rss.growth:.0f} MB ({job.counts})")
        export_to_file(workspace=target, scope="workspace", path=second, with_vectors=True)
        before, after = _digests(first), _digests(second)
        result["same_records"] = before == after
        result["kinds"] = {kind: n for kind, (n, _) in before.items()}
        result["hostile"] = _hostile_imports(target=target, folder=Path(folder), log=log)
    result["embed_rate"] = _embed_rate(provider)
    same, timings = _same_answers(source, target, questions=questions, dim=provider.dimensions)
    result.update(questions=questions, same_answers=same, search_ms={"p50": percentile(timings, 50)})
    return result


def _hostile_archive(path: Path, members: dict[str, bytes]) -> None:
    """A zip whose manifest is right about its members (so that they are read), each
    compressed as far as deflate goes."""
    import json

    manifest = {
        "format": "memoryhub-archive", "version": 1, "workspace": "elsewhere",
        "counts": {name.removesuffix(".jsonl"): data.count(b"\n") for name, data in members.items()},
        "files": {name: hashlib.sha256(data).hexdigest() for name, data in members.items()},
    }
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as out:
        for name, data in members.items():
            out.writestr(name, data)
        out.writestr("manifest.json", json.dumps(manifest))


def _hostile_imports(*, target: Workspace, folder: Path, log: Log) -> dict[str, dict[str, Any]]:
    """Archives an admin could craft to make an import hold memory: the longest lines the
    limits accept, of one long string and of a million small objects (parsed, the second
    is ten times its size in Python objects), and a checkpoint's state at its limit. Each
    imported as the API's upload would be, its peak RSS growth measured."""
    from django.conf import settings

    from memoryhub.core.errors import ApplicationError

    line = settings.MEMORYHUB_MAX_BODY_BYTES - 4096  # just within the limit
    small_objects = b",".join(b'{"k":%d}' % n for n in range(line // 10))[: line - 200].rsplit(b",", 1)[0]
    state = b",".join(b'{"k":%d}' % n for n in range(settings.MEMORYHUB_MAX_CHECKPOINT_BYTES // 10))
    state = state[: settings.MEMORYHUB_MAX_CHECKPOINT_BYTES - 100].rsplit(b",", 1)[0]
    session = orjson.dumps({"id": 1, "session_id": "hostile", "user_id": "u1"}) + b"\n"
    cases = {
        "one memory line of a long string": {"memories.jsonl": b'{"id":"h1","user_id":"u1","content":"' + b"x" * (line - 100) + b'"}\n'},
        "one memory line of small objects": {"memories.jsonl": b'{"id":"h2","user_id":"u1","content":"c","metadata":[' + small_objects + b"]}\n"},
        "a checkpoint state at its limit, of small objects": {
            "sessions.jsonl": session,
            "checkpoints.jsonl": b'{"id":1,"user_id":"u1","session":"hostile","version":1,"state":[' + state + b"]}\n",
        },
    }
    results = {}
    for label, members in cases.items():
        path = folder / "hostile.zip"
        _hostile_archive(path, members)
        with PeakRss() as rss:
            started = time.perf_counter()
            try:
                job = import_file(workspace=target, path=path, format="memoryhub", store="default", agent="bench")
                outcome = f"{job.status}: created {job.counts.get('created', 0)}, refused {job.refusals or 0}"
            except ApplicationError as refused:
                outcome = f"refused at upload: {refused.message}"
            seconds = time.perf_counter() - started
        results[label] = {
            "rss_growth_mb": rss.growth, "seconds": seconds, "outcome": outcome, "zip_kb": path.stat().st_size / 1024,
            "inflated_mb": sum(len(data) for data in members.values()) / 2**20,
        }
        log(f"  hostile, {label}: RSS +{rss.growth:.0f} MB in {seconds:.1f} s ({outcome})")
    return results


def _source(*, memories: int, messages: int, dim: int, model_id: str, log: Log) -> Workspace:
    """The workspace to export: reused when a run loaded exactly these sizes (its operator,
    made last, marks a finished load)."""
    workspace = Workspace.objects.filter(slug=SOURCE).first()
    if workspace is not None and workspace.memberships.exists():
        agent = Agent.objects.get(workspace=workspace, name="bench")
        # (Loads before 2026-12-07 wrote each memory's metadata as a JSON string, which imports now refuse.)
        sample = agent.memories.first()
        if agent.memories.count() == memories and Message.objects.filter(workspace=workspace).count() == messages and isinstance(
            sample and sample.metadata, dict,
        ):
            log(f"  reusing workspace {SOURCE}")
            return workspace
    if workspace is not None:
        _delete(workspace)
    workspace = core_services.workspace_get_or_create(slug=SOURCE)
    # No vector index: the questions are answered exactly on both sides (and building one
    # over a million vectors is most of a load's time).
    load_rows(workspace=workspace, rows=memories, users=USERS, dim=dim, model_id=model_id, log=log, vector_index=False)
    agent = Agent.objects.get(workspace=workspace, name="bench")
    _conversations(workspace=workspace, agent=agent, messages=messages, log=log)
    core_services.operator_get_or_create(username="bench", workspace=workspace, role=Role.ADMIN)
    return workspace


def _conversations(*, workspace: Workspace, agent: Agent, messages: int, log: Log) -> None:
    rng = np.random.default_rng(11)
    vocabulary = np.array([f"w{i}" for i in range(5000)])
    now = timezone.now()
    sessions = Session.objects.bulk_create([
        Session(workspace=workspace, agent=agent, user_id=f"user-{i % USERS}", session_id=f"s-{i}", created_at=now,
                last_seq=MESSAGES_PER_SESSION)
        for i in range(messages // MESSAGES_PER_SESSION)
    ])
    batch: list[Message] = []
    for session in sessions:
        for seq in range(1, MESSAGES_PER_SESSION + 1):
            words = vocabulary[rng.integers(0, len(vocabulary), size=int(rng.integers(6, 30)))]
            batch.append(Message(workspace=workspace, user_id=session.user_id, session=session, seq=seq,
                                 role="user" if seq % 2 else "assistant", content=" ".join(words), created_at=now))
        if len(batch) >= 10_000:
            Message.objects.bulk_create(batch)
            batch = []
    Message.objects.bulk_create(batch)
    log(f"  {len(sessions):,} sessions, {messages:,} messages written")


def _empty_target() -> Workspace:
    existing = Workspace.objects.filter(slug=TARGET).first()
    if existing is not None:
        _delete(existing)
    workspace = core_services.workspace_get_or_create(slug=TARGET)
    store = core_services.store_get_or_create(workspace=workspace, name="default")
    core_services.agent_get_or_create(workspace=workspace, name="bench", stores=[store])
    return workspace


def _delete(workspace: Workspace) -> None:
    with connection.cursor() as cursor:
        for table in ("conversations_message", "conversations_checkpoint", "conversations_session"):
            cursor.execute(f"DELETE FROM {table} WHERE workspace_id = %s", [workspace.pk])
    delete_loaded_workspace(workspace)


def _digests(path: Path) -> dict[str, tuple[int, int]]:
    """Per kind: how many records, and an order-free digest of them with ids aside (the sum
    of each normalised record's hash), so that two archives of a million records compare
    without holding either."""
    digests = {}
    with zipfile.ZipFile(path) as archive:
        for name in sorted(n for n in archive.namelist() if n.endswith(".jsonl")):
            count, total = 0, 0
            for line in archive.open(name):
                record = {k: v for k, v in orjson.loads(line).items() if k not in ID_FIELDS}
                total += int.from_bytes(hashlib.blake2b(orjson.dumps(record, option=orjson.OPT_SORT_KEYS), digest_size=16).digest())
                count += 1
            digests[name.removesuffix(".jsonl")] = (count, total % 2**128)
    return digests


def _embed_rate(provider: Any) -> float:
    texts = [f"Note {i}: the traveller prefers an aisle seat on long flights and tea at breakfast" for i in range(1024)]
    provider.embed(texts[:32])  # warm
    started = time.perf_counter()
    for offset in range(0, len(texts), 256):
        provider.embed(texts[offset:offset + 256])
    return len(texts) / (time.perf_counter() - started)


def _same_answers(source: Workspace, target: Workspace, *, questions: int, dim: int) -> tuple[int, list[float]]:
    """Questions of the kind the data holds (a user, a tag, words and a vector), asked in
    both workspaces; how many got the same answers (contents and scores, in order)."""
    rng = np.random.default_rng(5)
    principals = [
        principal_for_membership(core_services.operator_get_or_create(username=f"bench-{w.slug}", workspace=w, role=Role.ADMIN))
        for w in (source, target)
    ]
    same, timings = 0, []
    with override_settings(MEMORYHUB_EXACT_SEARCH_MAX_ROWS=10**9):
        for q in range(questions):
            vector = rng.normal(size=dim).astype(np.float32)
            request = memory_search.SearchRequest(
                filters=selectors.MemoryFilters(tags=[BENCH_TAGS[q % len(BENCH_TAGS)]], user_id=f"user-{int(rng.integers(0, 50))}"),
                query=" ".join(f"w{i}" for i in rng.integers(0, 5000, size=4)), query_embedding=(vector / np.linalg.norm(vector)).tolist(),
                mode="hybrid", max_results=10,
            )
            answers = []
            for principal in principals:
                started = time.perf_counter()
                hits = memory_search.memory_search(principal=principal, request=request)
                timings.append((time.perf_counter() - started) * 1000)
                # Best first, equal scores by content: the two workspaces' ids (the last tie-break) differ.
                answers.append(sorted(((-round(hit.score, 5), hit.entry.content) for hit in hits)))
            same += answers[0] == answers[1] and bool(answers[0])
    return same, timings
