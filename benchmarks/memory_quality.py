"""`manage.py bench memory-quality`: retrieval quality on a LoCoMo-layout dataset."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.db import transaction

from benchmarks.common import Log, Options, bench_workspace, delete_workspace
from memoryhub.core import services as core_services
from memoryhub.core.models import Role
from memoryhub.core.selectors import principal_for_membership

NAME = "memory-quality"
HELP = "recall@k of evidence turns on a LoCoMo-layout dataset"
DATABASE: str | None = None
FORWARDED: tuple[str, ...] = ()

DEFAULT_DATASET = Path(__file__).resolve().parent / "data" / "locomo_mini.json"

# What the retrieval benchmark compares: the three API modes, plus the alternatives the
# defaults were chosen against (AND keyword matching, other fusion weights, RRF).
QUALITY_VARIANTS: dict[str, dict[str, Any]] = {
    "keyword": {"mode": "keyword"},
    "keyword-AND": {"mode": "keyword", "keyword_match": "all"},
    "semantic": {"mode": "semantic"},
    "hybrid": {"mode": "hybrid"},
    "hybrid-w0.4": {"mode": "hybrid", "semantic_weight": 0.4},
    "hybrid-w0.5": {"mode": "hybrid", "semantic_weight": 0.5},
    "hybrid-w0.7": {"mode": "hybrid", "semantic_weight": 0.7},
    "hybrid-w0.8": {"mode": "hybrid", "semantic_weight": 0.8},
    "hybrid-rrf60": {"mode": "hybrid", "fusion": "rrf"},
}


@dataclass
class QualityResult:
    dataset: str
    samples: int
    turns: int
    questions: int
    recall: dict[str, dict[int, float]] = field(default_factory=dict)
    seconds: float = 0.0


def add_arguments(parser: CommandParser) -> None:
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--no-dates", action="store_true", help="store turns without their session date")


def run(options: Options, *, log: Log) -> QualityResult:
    if not options["dataset"].exists():
        raise CommandError(f"No dataset at {options['dataset']}")
    return bench_quality(dataset=options["dataset"], with_dates=not options["no_dates"], log=log)


def report(result: QualityResult, *, write: Log) -> None:
    write(f"{result.questions} questions over {result.turns} turns ({result.samples} samples), {result.seconds:.1f} s")
    for mode, by_k in result.recall.items():
        write(f"{mode:13s} " + "  ".join(f"recall@{k} {v:.3f}" for k, v in by_k.items()))


def locomo_turns(sample: dict[str, Any]) -> Iterator[tuple[str, str, str, str]]:
    """(dia_id, speaker, text, session date) of every turn of one sample."""
    conversation = sample["conversation"]
    n = 1
    while f"session_{n}" in conversation:
        date = conversation.get(f"session_{n}_date_time", "")
        for turn in conversation[f"session_{n}"]:
            yield turn["dia_id"], turn["speaker"], turn["text"], date
        n += 1


def bench_quality(
    *, dataset: Path, ks: tuple[int, ...] = (1, 5, 10), with_dates: bool = True, variants: dict[str, dict[str, Any]] | None = None,
    log: Log,
) -> QualityResult:
    """Store every turn as an entry (one user per sample), ask every question, and
    measure recall@k of the evidence turns for each variant."""
    from memoryhub.memory import selectors, services

    variants = variants or QUALITY_VARIANTS
    samples = json.loads(Path(dataset).read_text())
    started = time.perf_counter()
    workspace = bench_workspace(prefix="bench-quality")
    store = core_services.store_get_or_create(workspace=workspace, name="default")
    agent = core_services.agent_get_or_create(workspace=workspace, name="bench", stores=[store])
    membership = core_services.operator_get_or_create(username="bench", workspace=workspace, role=Role.ADMIN)
    principal = principal_for_membership(membership)
    hits: dict[str, dict[int, list[float]]] = {name: {k: [] for k in ks} for name in variants}
    turns = questions = 0
    try:
        for sample in samples:
            user_id = f"sample-{sample['sample_id']}"
            items = []
            for dia_id, speaker, text, date in locomo_turns(sample):
                # The session's date goes into the stored text, so "when did…" questions can match it.
                content = f"[{date}] {speaker}: {text}" if with_dates else f"{speaker}: {text}"
                items.append(services.MemoryInput(content=content, user_id=user_id, metadata={"dia_id": dia_id}))
            with transaction.atomic():
                services.memory_write(agent=agent, items=items)
            turns += len(items)
            for qa in sample["qa"]:
                evidence = set(qa.get("evidence") or [])
                if not evidence:
                    continue
                questions += 1
                for name, knobs in variants.items():
                    request = selectors.SearchRequest(
                        filters=selectors.MemoryFilters(user_id=user_id), query=qa["question"], max_results=max(ks), **knobs
                    )
                    found = [h.entry.metadata.get("dia_id") for h in selectors.memory_search(principal=principal, request=request)]
                    for k in ks:
                        hits[name][k].append(len(evidence & set(found[:k])) / len(evidence))
            log(f"  {sample['sample_id']}: {len(items)} turns, {len(sample['qa'])} questions")
    finally:
        delete_workspace(workspace)
    result = QualityResult(dataset=str(dataset), samples=len(samples), turns=turns, questions=questions, seconds=time.perf_counter() - started)
    result.recall = {name: {k: statistics.mean(v) if v else 0.0 for k, v in by_k.items()} for name, by_k in hits.items()}
    return result
