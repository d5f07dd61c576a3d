"""`manage.py bench adapters`: what each framework adapter adds to its hottest call, over the
plain client call that fetches or writes the same, timed alternating in one run against one
hub process. The frameworks live in their own environments (`make adapters-install`), so
the timing runs there (benchmarks/adapter_calls.py); this side serves the hub and reports."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from benchmarks.common import Log, Options, against, bench_workspace, delete_workspace, percentile
from memoryhub.core import services as core_services

NAME = "adapters"
HELP = "each framework adapter's hottest call vs the plain client call doing the same (p50 overhead, alternating)"
GOAL_OVERHEAD = 0.10
DATABASE: str | None = None
FORWARDED: tuple[str, ...] = ()

BASE_DIR = Path(__file__).resolve().parent.parent
# Which environment times which adapters.
ENVIRONMENTS = {".venv-adapters": ["openai-agents", "anthropic", "adk", "pydantic-ai", "llama-index"], ".venv-adapters-crewai": ["crewai"]}


@dataclass
class AdapterTiming:
    call: str
    adapter_p50_ms: float
    plain_p50_ms: float

    @property
    def overhead(self) -> float:
        return self.adapter_p50_ms / self.plain_p50_ms - 1


def add_arguments(parser: CommandParser) -> None:
    parser.add_argument("--rounds", type=int, default=300, help="timed calls of each side, alternating")


def run(options: Options, *, log: Log) -> dict[str, AdapterTiming]:
    from benchmarks.harness import current_database_url, start_hub

    missing = [env for env in ENVIRONMENTS if not (BASE_DIR / env / "bin" / "python").exists()]
    if missing:
        raise CommandError(f"{', '.join(missing)} missing: run `make adapters-install` first")
    workspace = bench_workspace(prefix="bench-adapters")
    store = core_services.store_get_or_create(workspace=workspace, name="default")
    agent = core_services.agent_get_or_create(workspace=workspace, name="agent", stores=[store])
    key = core_services.agent_key_issue(agent=agent)[1]
    hub = start_hub(database_url=current_database_url(), extra_env={f"MEMORYHUB_RATE_{kind}": "1000000/minute" for kind in ("READS", "WRITES", "SEARCHES")})
    results: dict[str, AdapterTiming] = {}
    try:
        for env, names in ENVIRONMENTS.items():
            done = subprocess.run(
                [str(BASE_DIR / env / "bin" / "python"), str(BASE_DIR / "benchmarks" / "adapter_calls.py"), hub.url, key, str(options["rounds"]), *names],
                capture_output=True, text=True, check=False, timeout=1800,
            )
            if done.returncode:
                raise CommandError(f"the timing run in {env} failed: {done.stderr[-2000:]}")
            for name, timings in json.loads(done.stdout.splitlines()[-1]).items():
                results[name] = AdapterTiming(call=timings["call"], adapter_p50_ms=percentile(timings["adapter"], 50), plain_p50_ms=percentile(timings["plain"], 50))
                log(f"  {name}: adapter p50 {results[name].adapter_p50_ms:.2f} ms, plain {results[name].plain_p50_ms:.2f} ms")
    finally:
        hub.stop()
        delete_workspace(workspace)
    return results


def report(result: dict[str, AdapterTiming], *, write: Log) -> None:
    write("each adapter's hottest call vs the plain client call, p50, alternating, one hub process, the same client on both sides")
    for name, timing in result.items():
        write(f"  {name}: {timing.call}: {timing.adapter_p50_ms:.2f} vs {timing.plain_p50_ms:.2f} ms, {timing.overhead:+.1%} "
              + against(timing.overhead <= GOAL_OVERHEAD, f"≤ {GOAL_OVERHEAD:.0%}"))
