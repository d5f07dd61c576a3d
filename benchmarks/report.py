"""BENCHMARKS.md: what `bench --all --report PATH` (`make bench`) writes. One section per
benchmark with its goal, its command and what it printed, and a summary table on top
whose verdict comes from the benchmark's own words (a line saying MISS is a miss)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

# The goals of the issues, as docs/benchmarks.md, "Results against goals", states them.
GOALS: dict[str, str] = {
    "memory-ingest": "≥ 3,000 entries/s with client vectors; with the local model within 20% of the raw model",
    "memory-search": "hybrid p95 ≤ 50 ms at 1M entries; HNSW recall@10 ≥ 0.95",
    "search-http": "hybrid p95 ≤ 15 ms at 100k (≤ 30 ms at 1M); recall@10 ≥ 0.95; p95 during a write burst ≤ 2× steady; indexer ≥ 3,000 rows/s",
    "memory-quality": "hybrid beats both the keyword and the semantic leg",
    "conversation": "context p95 ≤ 50 ms at 10k messages; the window flat with history",
    "checkpoint": "save + load no slower than LangGraph's PostgresSaver at any size",
    "working-state": "tool-call append with a 10 KB output p50 ≤ 10 ms; redaction ≥ 5 MB/s on one core",
    "purge": "≤ 5 s per erased user on a 1M-row hub",
    "hitl": "500 waiting agents: connections in use ≤ the pool minimum; decision → answer p95 ≤ 200 ms; no failed waiter",
    "live": "≥ 1,000 streams per process; event p95 ≤ 200 ms",
    "console": "every console page p95 ≤ 150 ms",
    "load": "zero 5xx under the agent mix; p50/p95/p99 per operation",
    "duplicates": "precision ≥ 0.95 on labelled pairs (recall reported); create p50 with detection ≤ 1.2× without; batch of 500 ≥ 80% of the rate without",
    "review": "review queue and a memory's revisions page ≤ 150 ms server time at 1M memories and 100 revisions",
    "portability": "export of 1M memories + 100k messages ≥ 20,000 records/s, peak RSS growth ≤ 100 MB; import of it with vectors ≥ 5,000 records/s; round trip gives the same records and the same answers to 100 questions",
    "usage": "metering costs ≤ 2% of ingest throughput and ≤ 0.5 ms p50 a search; GET /usage over a month of 10M calls ≤ 100 ms",
    "webhooks": "1,000 approvals in a burst with 3 endpoints: all 3,000 deliveries made, p95 from commit to the receiver's 2xx ≤ 1 s; POST /approvals with webhooks within 5% of without; a receiver failing (10 min, or its scale) then back gets every message, one id each",
    "adapters": "each framework adapter's hottest call (OpenAI Agents SDK get_items, …) within 10% of the plain client call doing the same, p50, alternating",
    "graph": "100k facts over 20k entities + 1M memories: neighbours depth 2 p95 ≤ 20 ms, grounding p95 ≤ 30 ms, path (≤ 4) p95 ≤ 50 ms over HTTP; POST /graph/edges p50 ≤ 1.2× a factual create",
}

MISS = re.compile(r"\bMISS(ED)?\b")


@dataclass
class Section:
    name: str
    command: str
    output: str
    failed: str | None = None

    @property
    def verdict(self) -> str:
        if self.failed:
            return f"**failed**: {self.failed}"
        misses = [line.strip() for line in self.output.splitlines() if MISS.search(line)]
        if misses:
            return f"**missed** ({len(misses)} line{'s' if len(misses) > 1 else ''} below)"
        if re.search(r"\b(met|ok)\b", self.output):
            return "met"
        return "see the figures (no verdict printed)"


def write(path: Path, *, machine: str, sections: list[Section], started: datetime) -> None:
    lines = [
        "# MemoryHub benchmarks",
        "",
        f"Written by `make bench` (`manage.py bench --all --report {path.name}`) on {started:%Y-%m-%d %H:%M} UTC "
        f"(last section ended {datetime.now(UTC):%H:%M} UTC).",
        f"Machine: {machine}.",
        "Every figure is beside its goal (from the issues); misses are marked **missed** and the "
        "lines that say so are quoted. docs/benchmarks.md explains each one.",
        "",
        "| benchmark | goal | verdict |",
        "|---|---|---|",
    ]
    lines += [f"| [{s.name}](#{s.name}) | {GOALS.get(s.name, '')} | {s.verdict} |" for s in sections]
    for section in sections:
        lines += ["", f"## {section.name}", "", f"Goal: {GOALS.get(section.name, 'none stated')}.", "", f"`{section.command}`", ""]
        misses = [line.strip() for line in section.output.splitlines() if MISS.search(line)]
        lines += [f"- **missed**: {line}" for line in misses]
        if section.failed:
            lines.append(f"- **failed**: {section.failed}")
        lines += ["", "```", section.output.rstrip(), "```"]
    path.write_text("\n".join(lines) + "\n")
