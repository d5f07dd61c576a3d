"""`manage.py bench duplicates`: how right duplicate detection is, and what it costs a create.

Precision and recall on a labelled set written through the hub's own path (its local
model embeds): facts about people, each written once, then written again three ways that
ARE the same memory (case, punctuation and spacing changed; a word added) and one way
that is NOT (the same sentence about another city, drink or day: the hard case for a
similarity threshold). A detection is a write whose `skip` answers the first entry. The
set is written twice: one create at a time, and in batches (whose lookup is its own).

Cost: single creates (`memory_write` of one item, in process, a workspace of `--rows`
entries over 200 users, statistics up to date) with detection (`keep`) and without,
alternating, p50 of each; and batches of 500 (over 50 users, as `bench memory-ingest`
sends them) with detection and without, alternating, entries/s of each. The vector
indexer catches up between timings: it runs on this process's task threads after each
write, and its HNSW inserts would land in whichever timing came next.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.core.management.base import CommandParser
from django.db import connection

from benchmarks.common import Log, Options, against, bench_workspace, copy_entries, delete_workspace, percentile, wait_for_indexer
from memoryhub.core import services as core_services

NAME = "duplicates"
HELP = "duplicate detection: precision/recall on a labelled set, create p50 with and without"
GOAL_PRECISION = 0.95
GOAL_CREATE_RATIO = 1.2
GOAL_BATCH_RATIO = 0.8
BATCH = 500
DATABASE: str | None = None
FORWARDED: tuple[str, ...] = ()

PEOPLE = ["Ana", "Bruno", "Chen", "Dara", "Eli", "Fatima", "Goran", "Hana", "Ivo", "Jun", "Kemal", "Lena", "Milo", "Nora",
          "Omar", "Pia", "Quinn", "Rosa", "Sven", "Tara", "Uma", "Viktor", "Wen", "Yara", "Zoe"]
FACTS = [
    ("{p} lives in {x}.", ["Lisbon", "Porto", "Berlin", "Munich", "Osaka", "Kyoto", "Denver", "Austin"]),
    ("{p} prefers {x} in the morning.", ["tea", "coffee", "espresso", "green tea", "hot chocolate", "orange juice"]),
    ("{p}'s weekly flight leaves on {x}.", ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]),
    ("{p} is allergic to {x}.", ["peanuts", "shellfish", "penicillin", "pollen", "cats", "latex"]),
]


@dataclass
class Labelled:
    """Detections on the labelled set, written one way."""

    positives: int = 0
    negatives: int = 0
    true_positives: int = 0
    false_positives: int = 0

    def count(self, *, same: bool, detected: bool) -> None:
        self.positives += same
        self.negatives += not same
        self.true_positives += detected and same
        self.false_positives += detected and not same

    @property
    def precision(self) -> float:
        detected = self.true_positives + self.false_positives
        return self.true_positives / detected if detected else 1.0

    @property
    def recall(self) -> float:
        return self.true_positives / self.positives if self.positives else 1.0


@dataclass
class DuplicatesResult:
    labelled: dict[str, Labelled]  # "single": creates of one item; "batch": batches (their own lookup)
    create_ms: dict[str, float]
    create_ms_without: dict[str, float]
    rows: int
    batch_per_second: float
    batch_per_second_without: float


def add_arguments(parser: CommandParser) -> None:
    parser.add_argument("--people", type=int, default=len(PEOPLE), help=f"people in the labelled set (at most {len(PEOPLE)})")
    parser.add_argument("--rows", type=int, default=20_000, help="entries in the workspace the creates are timed in")
    parser.add_argument("--creates", type=int, default=200, help="timed creates of each kind")
    parser.add_argument("--batches", type=int, default=10, help=f"timed batches of {BATCH} of each kind")


def run(options: Options, *, log: Log) -> DuplicatesResult:
    return bench_duplicates(people=options["people"], rows=options["rows"], creates=options["creates"], batches=options["batches"], log=log)


def report(result: DuplicatesResult, *, write: Log) -> None:
    for way, counts in result.labelled.items():
        write(f"labelled set, {'one create' if way == 'single' else 'in batches'} each: {counts.positives} writes of a memory again, "
              f"{counts.negatives} of another one alike; precision {counts.precision:.3f} "
              + against(counts.precision >= GOAL_PRECISION, f"≥ {GOAL_PRECISION}") + f", recall {counts.recall:.3f}")
    ratio = result.create_ms["p50"] / result.create_ms_without["p50"]
    write(f"create at {result.rows:,} entries: p50 {result.create_ms['p50']:.2f} ms with detection, "
          f"{result.create_ms_without['p50']:.2f} ms without ({ratio:.2f}×) " + against(ratio <= GOAL_CREATE_RATIO, f"≤ {GOAL_CREATE_RATIO}×"))
    ratio = result.batch_per_second / result.batch_per_second_without
    write(f"batches of {BATCH}: {result.batch_per_second:,.0f} entries/s with detection, {result.batch_per_second_without:,.0f} without "
          f"({ratio:.0%}) " + against(ratio >= GOAL_BATCH_RATIO, f"≥ {GOAL_BATCH_RATIO:.0%}"))


def _variants(sentence: str) -> list[str]:
    """The same memory, written again."""
    return [sentence.upper().replace(".", "!"), "  " + sentence.lower().replace(" ", "  ").rstrip(".") + " ", sentence.rstrip(".") + " now."]


def _labelled_singly(*, agent: Any, people: int, rng: np.random.Generator) -> Labelled:
    """Each fact written, then each of its writings again alone with `skip` against it."""
    from memoryhub.memory import services

    counts = Labelled()
    for person in PEOPLE[:people]:
        user_id = f"person-{person.lower()}"
        for template, values in FACTS:
            first, other = rng.choice(values, size=2, replace=False)
            sentence = template.format(p=person, x=first)
            [original] = services.memory_write(agent=agent, items=[services.MemoryInput(content=sentence, user_id=user_id)])
            for text, same in _again(template, sentence, person, other):
                # Each against the original alone: written with `skip`, nothing is added.
                [written] = services.memory_write(agent=agent, items=[services.MemoryInput(content=text, user_id=user_id)], on_duplicate="skip")
                counts.count(same=same, detected=written.duplicate and written.entry.pk == original.entry.pk)
    return counts


def _labelled_in_batches(*, agent: Any, people: int, rng: np.random.Generator) -> Labelled:
    """The same, through a batch's lookup: every person's facts in one batch, then each
    round of writings again (one per fact) in a batch with `skip`, so that nothing is added."""
    from memoryhub.memory import services

    counts = Labelled()
    facts = [(person, template, *rng.choice(values, size=2, replace=False)) for person in PEOPLE[:people] for template, values in FACTS]
    sentences = [template.format(p=person, x=first) for person, template, first, _ in facts]
    originals = services.memory_write(agent=agent, items=[
        services.MemoryInput(content=sentence, user_id=f"batch-person-{person.lower()}") for sentence, (person, *_) in zip(sentences, facts, strict=True)
    ])
    rounds = [_again(template, sentence, person, other) for sentence, (person, template, _, other) in zip(sentences, facts, strict=True)]
    for round_ in zip(*rounds, strict=True):
        written = services.memory_write(agent=agent, items=[
            services.MemoryInput(content=text, user_id=f"batch-person-{person.lower()}") for (text, _), (person, *_) in zip(round_, facts, strict=True)
        ], on_duplicate="skip")
        for (_, same), original, again in zip(round_, originals, written, strict=True):
            counts.count(same=same, detected=again.duplicate and again.entry.pk == original.entry.pk)
    return counts


def _again(template: str, sentence: str, person: str, other: str) -> list[tuple[str, bool]]:
    """A fact's writings again: the same memory three ways, and another one alike."""
    return [(text, True) for text in _variants(sentence)] + [(template.format(p=person, x=other), False)]


def bench_duplicates(*, people: int, rows: int, creates: int, batches: int, log: Log) -> DuplicatesResult:
    from memoryhub.memory import services
    from memoryhub.memory.embeddings import get_provider

    provider = get_provider()
    workspace = bench_workspace(prefix="bench-duplicates")
    store = core_services.store_get_or_create(workspace=workspace, name="default")
    agent = core_services.agent_get_or_create(workspace=workspace, name="bench", stores=[store])
    rng = np.random.default_rng(5)
    labelled: dict[str, Labelled] = {}
    try:
        labelled["single"] = _labelled_singly(agent=agent, people=people, rng=rng)
        labelled["batch"] = _labelled_in_batches(agent=agent, people=people, rng=rng)
        for way, counts in labelled.items():
            log(f"  labelled set, {way}: {counts.true_positives}/{counts.positives} found, {counts.false_positives} of {counts.negatives} wrongly")

        users = 200
        vectors = rng.normal(size=(rows, provider.dimensions)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        copy_entries(workspace=workspace, store=store, agent=agent, model_id=provider.model_id, rows=(
            (f"user-{i % users}", f"Entry {i} about user {i % users}.", "bench", vectors[i]) for i in range(rows)
        ))
        # The steady state: statistics as autovacuum keeps them. Read just after a burst, before
        # they catch up, the lookup took 6.3 ms instead of 0.5 (bench memory-ingest measures that case).
        wait_for_indexer(workspace.pk)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE memory_memoryentry")
        probes = rng.normal(size=(creates * 2, provider.dimensions)).astype(np.float32)
        timings: dict[str, list[float]] = {"keep": [], "none": []}
        for i in range(creates * 2):
            mode = "keep" if i % 2 == 0 else "none"
            item = services.MemoryInput(content=f"Timed note {i}.", user_id=f"user-{i % users}", embedding=probes[i].tolist())
            started = time.perf_counter()
            services.memory_write(agent=agent, items=[item], on_duplicate="keep" if mode == "keep" else None)
            timings[mode].append((time.perf_counter() - started) * 1000)
            wait_for_indexer(workspace.pk)  # between the timings: its HNSW inserts would land in the next one
        seconds = {"keep": 0.0, "none": 0.0}
        batch_vectors = rng.normal(size=(batches * 2 * BATCH, provider.dimensions)).astype(np.float32)
        for b in range(batches * 2):
            mode = "keep" if b % 2 == 0 else "none"
            items = [
                services.MemoryInput(content=f"Batch {b} note {i} about a thing.", user_id=f"user-{i % 50}", embedding=batch_vectors[b * BATCH + i].tolist())
                for i in range(BATCH)
            ]
            started = time.perf_counter()
            services.memory_write(agent=agent, items=items, on_duplicate="keep" if mode == "keep" else None)
            seconds[mode] += time.perf_counter() - started
            wait_for_indexer(workspace.pk)
        log(f"  batches: {seconds['keep']:.2f} s with detection, {seconds['none']:.2f} s without")
    finally:
        delete_workspace(workspace)

    def summary(values: list[float]) -> dict[str, Any]:
        return {"p50": percentile(values, 50), "p95": percentile(values, 95)}

    return DuplicatesResult(
        labelled=labelled, create_ms=summary(timings["keep"]), create_ms_without=summary(timings["none"]), rows=rows,
        batch_per_second=batches * BATCH / seconds["keep"], batch_per_second_without=batches * BATCH / seconds["none"],
    )
