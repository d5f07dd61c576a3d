"""`manage.py bench memory-quality`: retrieval quality on a LoCoMo-layout dataset."""

from __future__ import annotations

import json
import statistics
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError, CommandParser
from django.db import transaction

from benchmarks import retrieval_facts
from benchmarks.common import Log, Options, against, bench_workspace, delete_workspace, percentile
from memoryhub.core import services as core_services
from memoryhub.core.models import Role
from memoryhub.core.selectors import principal_for_membership

NAME = "memory-quality"
HELP = "recall@k of evidence turns on a LoCoMo-layout dataset"
DATABASE: str | None = None
FORWARDED: tuple[str, ...] = ()

DEFAULT_DATASET = Path(__file__).resolve().parent / "data" / "locomo_mini.json"
# Our own retrieval set (benchmarks/retrieval_set.py): long multi-session conversations,
# every question with a category and a split ("tuning" or "held-out", never tuned on).
HUB_DATASET = Path(__file__).resolve().parent / "data" / "hub_conversations.json"
# Our multi-hop set for following the graph (benchmarks/chain_set.py): two memories a
# question, linked by an entity, each stored as a fact or as a note.
CHAIN_DATASET = Path(__file__).resolve().parent / "data" / "graph_chains.json"

# LoCoMo numbers its question categories; our set names them.
LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
# Issue 17's recall goals: our set's held-out part +0.06 over the hybrid of the issue's
# day (0.813 on 2026-12-01, before repeats were demoted), and 0.75 on the full LoCoMo
# set's questions outside its adversarial category (which have no evidence to find).
HELD_OUT_BASELINE = 0.813
HELD_OUT_GOAL = HELD_OUT_BASELINE + 0.06
LOCOMO_GOAL = 0.75
LOCOMO_SCORED = "outside adversarial"

# What the retrieval benchmark compares: the three API modes, plus the alternatives the
# defaults were chosen against (AND keyword matching, other fusion weights, RRF,
# repeats kept in place, names not followed) and the second ranking through names; each
# without the reranker, whatever the hub's settings. With MEMORYHUB_RERANK_URL set,
# `hybrid-rerank` too: the hybrid's best results reordered by it (docs/memory.md, "Reranking").
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
    "hybrid-keep-repeats": {"mode": "hybrid", "repeats": "keep"},
    "hybrid-no-follow": {"mode": "hybrid", "follow_names": "off"},
    "hybrid-follow-all": {"mode": "hybrid", "follow_names": "all"},
}
RERANK_VARIANTS: dict[str, dict[str, Any]] = {"hybrid-rerank": {"mode": "hybrid", "rerank": True}}
# Search following the graph (`follow_graph`, memoryhub/graph/search.py), at its bonus and
# at half and twice it. Run by default on a dataset that stores facts (the chain set, our
# set with --facts), beside the hybrid with and without names followed, on the same entries.
GRAPH_VARIANTS: dict[str, dict[str, Any]] = {
    "hybrid-graph": {"mode": "hybrid", "follow_graph": True},
    "hybrid-graph-b0.05": {"mode": "hybrid", "follow_graph": True, "graph_bonus": 0.05},
    "hybrid-graph-b0.2": {"mode": "hybrid", "follow_graph": True, "graph_bonus": 0.2},
}
GRAPH_COMPARED = ("semantic", "hybrid", "hybrid-no-follow", "hybrid-follow-all")


@dataclass
class QualityResult:
    dataset: str
    samples: int
    turns: int
    questions: int
    recall: dict[str, dict[int, float]] = field(default_factory=dict)
    # Facts stored beside the turns: a turn stored as a fact (the chain set), or read from a
    # turn by benchmarks/retrieval_facts.py (--facts).
    facts: int = 0
    # recall@10 per variant, per group ("category", "split", "split/category"): {variant: {group: (recall, questions)}}
    by_group: dict[str, dict[str, tuple[float, int]]] = field(default_factory=dict)
    seconds: float = 0.0
    # Each variant's search in process (the question embedded by the hub), over this
    # set's own entries: {variant: {"p50": ms, "p95": ms}}. Its turns are real dialogue,
    # longer than `bench search-http`'s one-line sentences.
    latency_ms: dict[str, dict[str, float]] = field(default_factory=dict)


def add_arguments(parser: CommandParser) -> None:
    parser.add_argument(
        "--dataset", type=Path, default=None,
        help="a LoCoMo-layout file, or LoCoMo's release zip or folder of locomo10_v2/*.json (default: the three shipped sets)",
    )
    parser.add_argument(
        "--facts", action="store_true",
        help="also store the facts our set's turns state (benchmarks/retrieval_facts.py) beside them, as factual memories, "
        "and ask it with the graph variants too (our set only)",
    )
    parser.add_argument("--no-dates", action="store_true", help="store turns without their session date")
    parser.add_argument(
        "--variants", default="",
        help=f"comma-separated, of {', '.join(QUALITY_VARIANTS)}, hybrid-rerank, {', '.join(GRAPH_VARIANTS)} "
        f"(default: all but the graph's; on a set with facts, {', '.join(GRAPH_COMPARED)} and the graph's)",
    )
    parser.add_argument("--split", default=None, help="ask only the questions of this split (tuning, held-out)")


def run(options: Options, *, log: Log) -> list[QualityResult]:
    datasets = [options["dataset"]] if options["dataset"] else [HUB_DATASET, DEFAULT_DATASET, CHAIN_DATASET]
    usual = {**QUALITY_VARIANTS, **RERANK_VARIANTS} if settings.MEMORYHUB_RERANK_URL else QUALITY_VARIANTS
    known = {**usual, **GRAPH_VARIANTS}
    names = [n for n in options["variants"].split(",") if n]
    if unknown := [n for n in names if n not in known]:
        raise CommandError(f"Unknown variants {unknown}; known: {', '.join(known)} (hybrid-rerank with MEMORYHUB_RERANK_URL set)")
    results = []
    for dataset in datasets:
        if not dataset.exists():
            raise CommandError(f"No dataset at {dataset}")
        extract = options["facts"] and dataset.resolve() == HUB_DATASET
        # The graph variants where there are facts to follow; elsewhere they are the hybrid.
        with_facts = extract or _states_facts(load_samples(dataset))
        compared = {n: usual[n] for n in GRAPH_COMPARED} | GRAPH_VARIANTS
        variants = {n: known[n] for n in names} or (compared if with_facts else usual)
        results.append(bench_quality(
            dataset=dataset, with_dates=not options["no_dates"], variants=variants, split=options["split"], extract_facts=extract, log=log,
        ))
    return results


def _states_facts(samples: list[dict[str, Any]]) -> bool:
    return any(stated_facts(sample) for sample in samples)


def report(results: list[QualityResult], *, write: Log) -> None:
    for result in results:
        facts = f", {result.facts} factual memories stored" if result.facts else ""
        write(f"{result.dataset}: {result.questions} questions over {result.turns} turns{facts} ({result.samples} samples), {result.seconds:.1f} s")
        for mode, by_k in result.recall.items():
            latency = result.latency_ms.get(mode)
            took = f"  search p50 {latency['p50']:.1f} / p95 {latency['p95']:.1f} ms" if latency else ""
            write(f"{mode:13s} " + "  ".join(f"recall@{k} {v:.3f}" for k, v in by_k.items()) + took)
        at_10 = {mode: by_k.get(10) for mode, by_k in result.recall.items()}
        if all(at_10.get(mode) is not None for mode in ("hybrid", "keyword", "semantic")):
            beaten = at_10["hybrid"] > max(at_10["keyword"], at_10["semantic"])
            write(f"hybrid recall@10 {at_10['hybrid']:.3f} vs keyword {at_10['keyword']:.3f}, semantic {at_10['semantic']:.3f} "
                  + against(beaten, "hybrid beats both legs"))
        groups = sorted({g for by_group in result.by_group.values() for g in by_group})
        if len(groups) > 1:
            write("recall@10 by split and category (questions):")
            for group in groups:
                counts = {n for by_group in result.by_group.values() for _, n in [by_group.get(group, (0.0, 0))]}
                write(f"  {group:32s} ({max(counts):4d}) " + "  ".join(
                    f"{mode} {by_group[group][0]:.3f}" for mode, by_group in result.by_group.items() if group in by_group
                ))
        for line in goal_lines(result):
            write(line)


# The variants the goals are judged on: the default search, and the same through a
# reranker. The others are alternatives it was chosen against, reported beside it.
JUDGED_VARIANTS = ("hybrid", *RERANK_VARIANTS)


def goal_lines(result: QualityResult) -> list[str]:
    """Each variant's recall@10 beside issue 17's goals, where the dataset has them: our
    set's held-out split, and the full LoCoMo set (not the shipped 63 questions)."""
    lines = []
    for variant, by_group in result.by_group.items():
        # Issue 17's goal is our retrieval set's, its turns alone (the chain set has a held-out
        # split too; facts read from the turns are another setting).
        if "split held-out" in by_group and Path(result.dataset).name == HUB_DATASET.name and not result.facts:
            recall = by_group["split held-out"][0]
            lines.append(f"{variant}: held-out recall@10 {recall:.3f}, {recall - HELD_OUT_BASELINE:+.3f} over issue 17's hybrid "
                         + _verdict(variant, recall >= HELD_OUT_GOAL - 1e-9, f"≥ {HELD_OUT_GOAL:.3f}"))
        if LOCOMO_SCORED in by_group and result.dataset != str(DEFAULT_DATASET):
            recall = by_group[LOCOMO_SCORED][0]
            lines.append(f"{variant}: LoCoMo recall@10 {recall:.3f} on its {by_group[LOCOMO_SCORED][1]:,} questions {LOCOMO_SCORED} "
                         + _verdict(variant, recall >= LOCOMO_GOAL, f"≥ {LOCOMO_GOAL:.2f}"))
    return lines


def _verdict(variant: str, met: bool, goal: str) -> str:
    return against(met, goal) if variant in JUDGED_VARIANTS else f"(an alternative: the goal, {goal}, is the default's)"


def question_groups(qa: dict[str, Any]) -> list[str]:
    """The groups a question is reported in: its category, its split, both."""
    category = qa.get("category")
    category = LOCOMO_CATEGORIES.get(category, str(category)) if isinstance(category, int) else category
    split = qa.get("split")
    groups = ["all"]
    if category:
        groups.append(f"category {category}")
    if isinstance(qa.get("category"), int) and category != "adversarial":
        groups.append(LOCOMO_SCORED)
    if split:
        groups.append(f"split {split}")
        if category:
            groups.append(f"{split}/{category}")
    return groups


def load_samples(path: Path) -> list[dict[str, Any]]:
    """The samples of a LoCoMo-layout file (a list of samples, as `locomo10.json`), or of
    LoCoMo's release zip or a folder of its `locomo10_v2/<n>.json` files: each of those
    is one conversation with its questions beside it, wrapped here as a sample. The
    repository's snapshot (snap-research/locomo) ships the zip, not `locomo10.json`."""
    if path.is_file() and not zipfile.is_zipfile(path):
        return json.loads(path.read_text())
    if path.is_dir():
        files = {f.name: f.read_text() for f in path.rglob("*.json")}
    else:
        with zipfile.ZipFile(path) as archive:
            files = {Path(n).name: archive.read(n).decode() for n in archive.namelist() if n.endswith(".json")}
    if not files:
        raise CommandError(f"No LoCoMo conversations (*.json) in {path}")
    samples = []
    for name in sorted(files, key=lambda n: (len(n), n)):
        conversation = json.loads(files[name])
        samples.append({"sample_id": f"conv-{Path(name).stem}", "conversation": conversation, "qa": conversation.get("qa", [])})
    return samples


def stated_facts(sample: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """{dia_id: {subject, predicate, object}} of the turns stored as facts (the chain set's
    layout: a turn's `fact`)."""
    conversation = sample["conversation"]
    return {
        turn["dia_id"]: turn["fact"] for key, turns in conversation.items()
        if key.startswith("session_") and isinstance(turns, list) for turn in turns if "fact" in turn
    }


def locomo_turns(sample: dict[str, Any]) -> Iterator[tuple[str, str, str, str]]:
    """(dia_id, speaker, text, session date) of every turn of one sample.

    A turn that shares a photo carries LoCoMo's caption of it in `blip_caption`: it is
    part of what the turn says (the issue's 0.684 was measured with it), so it goes into
    the text as an agent would store it."""
    conversation = sample["conversation"]
    n = 1
    while f"session_{n}" in conversation:
        date = conversation.get(f"session_{n}_date_time", "")
        for turn in conversation[f"session_{n}"]:
            text = turn["text"]
            if turn.get("blip_caption"):
                text = f"{text} [shares a photo: {turn['blip_caption']}]"
            yield turn["dia_id"], turn["speaker"], text, date
        n += 1


def bench_quality(
    *, dataset: Path, ks: tuple[int, ...] = (1, 5, 10), with_dates: bool = True, variants: dict[str, dict[str, Any]] | None = None,
    split: str | None = None, extract_facts: bool = False, log: Log,
) -> QualityResult:
    """Store every turn as an entry (one user per sample), ask every question, and
    measure recall@k of the evidence turns for each variant.

    A turn carrying a `fact` (the chain set) is stored as that factual memory; with
    `extract_facts`, the facts each turn states (benchmarks/retrieval_facts.py) are stored
    beside it. Either way a fact carries its turn's dia_id: finding it finds the turn."""
    from memoryhub.graph import search as graph_search
    from memoryhub.graph import services as graph_services
    from memoryhub.memory import search, selectors, services

    variants = variants or QUALITY_VARIANTS
    samples = load_samples(Path(dataset))
    started = time.perf_counter()
    workspace = bench_workspace(prefix="bench-quality")
    store = core_services.store_get_or_create(workspace=workspace, name="default")
    agent = core_services.agent_get_or_create(workspace=workspace, name="bench", stores=[store])
    membership = core_services.operator_get_or_create(username="bench", workspace=workspace, role=Role.ADMIN)
    principal = principal_for_membership(membership)
    if extract_facts:
        graph_services.graph_rules_replace(
            membership=membership, rules=[graph_services.RuleInput(predicate=p, kind="multi") for p in retrieval_facts.MULTI_PREDICATES],
        )
    hits: dict[str, dict[int, list[float]]] = {name: {k: [] for k in ks} for name in variants}
    grouped: dict[str, dict[str, list[float]]] = {name: {} for name in variants}
    took: dict[str, list[float]] = {name: [] for name in variants}
    turns = questions = facts = 0
    try:
        for sample in samples:
            user_id = f"sample-{sample['sample_id']}"
            items, fact_items = [], []
            stated = stated_facts(sample)
            for dia_id, speaker, text, date in locomo_turns(sample):
                said = [stated[dia_id]] if dia_id in stated else []
                if extract_facts:
                    said += [{"subject": s, "predicate": p, "object": o} for s, p, o in retrieval_facts.facts_of(speaker, text)]
                # A fact's text is its three parts in a row, as POST /graph/edges writes it.
                fact_items += [
                    services.MemoryInput(content=f"{f['subject']} {f['predicate']} {f['object']}", user_id=user_id, memory_type="factual",
                                         data=f, metadata={"dia_id": dia_id})
                    for f in said
                ]
                if dia_id in stated:
                    continue
                # The session's date goes into the stored text, so "when did…" questions can match it.
                content = f"[{date}] {speaker}: {text}" if with_dates else f"{speaker}: {text}"
                items.append(services.MemoryInput(content=content, user_id=user_id, metadata={"dia_id": dia_id}))
            with transaction.atomic():
                services.memory_write(agent=agent, items=items, on_duplicate=None)  # generated: nothing to compare
                # In the turns' order: a later fact supersedes an earlier one, as the hub keeps facts.
                services.memory_write(agent=agent, items=fact_items, on_duplicate=None)
            turns += len(items) + len(stated)
            facts += len(fact_items)
            for qa in sample["qa"]:
                evidence = set(qa.get("evidence") or [])
                if not evidence or (split and qa.get("split") != split):
                    continue
                questions += 1
                for name, knobs in variants.items():
                    knobs = dict(knobs)
                    follow_graph, bonus = knobs.pop("follow_graph", False), knobs.pop("graph_bonus", graph_search.FOLLOWED_FACT_BONUS)
                    request = search.SearchRequest(
                        filters=selectors.MemoryFilters(user_id=user_id), query=qa["question"], max_results=max(ks), **{"rerank": False, **knobs}
                    )
                    asked = time.perf_counter()
                    if follow_graph:
                        answer = graph_search.memory_search_following_graph(principal=principal, request=request, bonus=bonus)
                    else:
                        answer = search.memory_search(principal=principal, request=request)
                    took[name].append((time.perf_counter() - asked) * 1000)
                    found = [h.entry.metadata.get("dia_id") for h in answer]
                    for k in ks:
                        hits[name][k].append(len(evidence & set(found[:k])) / len(evidence))
                    for group in question_groups(qa):
                        grouped[name].setdefault(group, []).append(len(evidence & set(found[:10])) / len(evidence))
            log(f"  {sample['sample_id']}: {len(items) + len(stated)} turns, {len(fact_items)} facts, {len(sample['qa'])} questions")
    finally:
        delete_workspace(workspace)
    result = QualityResult(
        dataset=str(dataset), samples=len(samples), turns=turns, questions=questions, facts=facts, seconds=time.perf_counter() - started,
    )
    result.recall = {name: {k: statistics.mean(v) if v else 0.0 for k, v in by_k.items()} for name, by_k in hits.items()}
    result.by_group = {name: {g: (statistics.mean(v), len(v)) for g, v in by_group.items()} for name, by_group in grouped.items()}
    result.latency_ms = {name: {"p50": percentile(ms, 50), "p95": percentile(ms, 95)} for name, ms in took.items() if ms}
    return result
