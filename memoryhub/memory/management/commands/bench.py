"""`manage.py bench memory-ingest|memory-search|memory-quality|…|purge`: performance and quality
benchmarks of long-term memory (numbers, not pass/fail; the README keeps them)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub import embedded_pg
from memoryhub.memory import bench

BENCH_DATABASE = "memoryhub_bench_{rows}"  # one per size: measurements never share a table


class Command(BaseCommand):
    help = "Benchmarks: memory-ingest, memory-search, memory-quality, conversation, checkpoint, working-state, purge (see README, Benchmarks)."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="benchmark", required=True)
        ingest = sub.add_parser("memory-ingest", help="entries/s through POST /api/v1/memories/batch")
        ingest.add_argument("--items", type=int, default=20_000)
        ingest.add_argument("--batch", type=int, default=500)
        ingest.add_argument("--mode", choices=["client", "model"], default="client", help="client-supplied vectors or the hub's model")
        ingest.add_argument("--workers", type=int, default=1, help="uvicorn worker processes (and as many concurrent clients)")
        search = sub.add_parser("memory-search", help="latency per mode and HNSW recall at scale (own database)")
        search.add_argument("--rows", type=int, default=100_000)
        search.add_argument("--users", type=int, default=1000)
        search.add_argument("--queries", type=int, default=200)
        search.add_argument("--here", action="store_true", help="use the current database instead of memoryhub_bench_ROWS")
        quality = sub.add_parser("memory-quality", help="recall@k of evidence turns on a LoCoMo-layout dataset")
        quality.add_argument("--dataset", type=Path, default=bench.DEFAULT_DATASET)
        quality.add_argument("--no-dates", action="store_true", help="store turns without their session date")
        conversation = sub.add_parser("conversation", help="append and context latency per session size and strategy")
        conversation.add_argument("--sizes", default="100,10000,100000", help="messages per session, comma-separated")
        conversation.add_argument("--repeats", type=int, default=50)
        checkpoint = sub.add_parser("checkpoint", help="save+load latency vs LangGraph's PostgresSaver (own database)")
        checkpoint.add_argument("--sizes", default="1000,100000,1000000", help="state sizes in bytes, comma-separated")
        checkpoint.add_argument("--repeats", type=int, default=50)
        checkpoint.add_argument("--here", action="store_true", help="use the current database instead of memoryhub_bench_checkpoint")
        working = sub.add_parser("working-state", help="tool-call append with redaction, redaction throughput, plan render")
        working.add_argument("--repeats", type=int, default=100)
        purge = sub.add_parser("purge", help="erase one user's records of every kind from a large hub, with searches running (own database)")
        purge.add_argument("--hub-rows", type=int, default=1_000_000, help="synthetic memory entries of other users in the hub")
        purge.add_argument("--records", type=int, default=10_000, help="records of the user to erase, over every kind")
        purge.add_argument("--here", action="store_true", help="use the current database instead of memoryhub_bench_purge")
        for p in (ingest, search, quality, conversation, checkpoint, working, purge):
            p.add_argument("--json", action="store_true", help="also print the result as one JSON line")

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["benchmark"]
        if name in ("memory-search", "checkpoint", "purge") and not options["here"]:
            self._rerun_in_bench_database(options)
            return
        self.stdout.write(f"{name} on {bench.machine()}")
        log = self.stdout.write
        if name == "memory-ingest":
            result = bench.bench_ingest(
                items=options["items"], batch=options["batch"], mode=options["mode"], workers=options["workers"], log=log
            )
            self.stdout.write(
                f"{result.items} entries in {result.seconds:.1f} s: {result.items_per_second:.0f} entries/s "
                f"({result.mode} vectors, {result.workers} worker(s), batches of {result.batch})"
            )
            if result.raw_model_per_second:
                ratio = result.items_per_second / result.raw_model_per_second
                self.stdout.write(f"raw model {result.raw_model_per_second:.0f} texts/s: the hub ingests at {ratio:.0%} of it")
        elif name == "memory-search":
            result = bench.bench_search(rows=options["rows"], users=options["users"], queries=options["queries"], log=log)
            for mode, numbers in result.latency_ms.items():
                self.stdout.write(f"{mode:8s} p50 {numbers['p50']:6.1f} ms  p95 {numbers['p95']:6.1f} ms  (tag + user_id filter, {result.rows} rows)")
            by_filter = ", ".join(f"{name} {value:.3f}" for name, value in result.recall_by_filter.items())
            self.stdout.write(f"recall@10 HNSW vs exact: {result.recall_at_10:.3f} ({by_filter}) over {result.recall_queries} queries")
        elif name == "checkpoint":
            result = bench.bench_checkpoint(sizes=[int(x) for x in options["sizes"].split(",")], repeats=options["repeats"], log=log)
            for size, row in result.items():
                line = "  ".join(f"{k} p50 {v['p50']:.1f} / p95 {v['p95']:.1f} ms" for k, v in row.items() if isinstance(v, dict))
                ratio = f"  (service/LangGraph p50 {row['service_vs_langgraph_p50']:.2f})" if "service_vs_langgraph_p50" in row else ""
                self.stdout.write(f"{int(size):>8} B state: {line}{ratio}")
            if not any("langgraph" in row for row in result.values()):
                self.stdout.write("LangGraph's PostgresSaver not installed: pip install langgraph-checkpoint-postgres==3.2.0 to compare.")
        elif name == "working-state":
            result = bench.bench_working_state(repeats=options["repeats"], log=lambda line: None)
            append, render = result["tool_call_append_ms"], result["plan_render_200_steps_ms"]
            self.stdout.write(f"tool-call append, 10 KB output with redaction: p50 {append['p50']:.1f} / p95 {append['p95']:.1f} ms")
            self.stdout.write(f"redaction throughput (one core): {result['redaction_mb_per_s']:.1f} MB/s")
            self.stdout.write(f"plan render, 200 steps: p50 {render['p50']:.1f} / p95 {render['p95']:.1f} ms")
        elif name == "purge":
            from memoryhub.compliance.bench import bench_purge

            result = bench_purge(hub_rows=options["hub_rows"], user_records=options["records"], log=log)
            self._purge_lines(result)
        elif name == "conversation":
            sizes = [int(x) for x in options["sizes"].split(",")]
            result = bench.bench_conversation(sizes=sizes, repeats=options["repeats"], log=log)
            for r in result:
                self.stdout.write(f"{r.messages:>7} messages: append p50 {r.append_ms['p50']:.1f} / p95 {r.append_ms['p95']:.1f} ms")
                for strategy, v in r.context_ms.items():
                    self.stdout.write(f"          context {strategy:9s} p50 {v['p50']:6.1f} / p95 {v['p95']:6.1f} ms (max_messages 50)")
        else:
            if not options["dataset"].exists():
                raise CommandError(f"No dataset at {options['dataset']}")
            result = bench.bench_quality(dataset=options["dataset"], with_dates=not options["no_dates"], log=log)
            self.stdout.write(f"{result.questions} questions over {result.turns} turns ({result.samples} samples), {result.seconds:.1f} s")
            for mode, by_k in result.recall.items():
                self.stdout.write(f"{mode:13s} " + "  ".join(f"recall@{k} {v:.3f}" for k, v in by_k.items()))
        if options["json"]:
            payload = [asdict(r) for r in result] if isinstance(result, list) else result if isinstance(result, dict) else asdict(result)
            self.stdout.write(json.dumps({"benchmark": name, "machine": bench.machine(), "result": payload}, default=str))

    def _rerun_in_bench_database(self, options: dict[str, Any]) -> None:
        """Scale benchmarks drop and rebuild indexes: never on the hub's own database."""
        import os

        if settings.DATABASES["default"]["ENGINE"] != "memoryhub.db_embedded":
            url = os.environ.get("MEMORYHUB_BENCH_DATABASE_URL")
            if not url:
                raise CommandError("With DATABASE_URL set, give the benchmark its own database in MEMORYHUB_BENCH_DATABASE_URL.")
        else:
            socket_dir = embedded_pg.ensure_running(Path(settings.MEMORYHUB_DATA_DIR))
            name = BENCH_DATABASE.format(rows=options["rows"]) if options["benchmark"] == "memory-search" else f"memoryhub_bench_{options['benchmark']}"
            embedded_pg.ensure_database(socket_dir, name)
            url = embedded_pg.database_url(socket_dir, name)
        env = {**os.environ, "DATABASE_URL": url}
        manage = [sys.executable, str(Path(settings.BASE_DIR) / "manage.py")]
        subprocess.run([*manage, "migrate", "--no-input", "-v0"], env=env, check=True)
        if options["benchmark"] == "memory-search":
            forwarded = ["--rows", str(options["rows"]), "--users", str(options["users"]), "--queries", str(options["queries"])]
        elif options["benchmark"] == "purge":
            forwarded = ["--hub-rows", str(options["hub_rows"]), "--records", str(options["records"])]
        else:
            forwarded = ["--sizes", options["sizes"], "--repeats", str(options["repeats"])]
        forwarded.append("--here")
        if options["json"]:
            forwarded.append("--json")
        subprocess.run([*manage, "bench", options["benchmark"], *forwarded], env=env, check=True)

    def _purge_lines(self, r: dict[str, Any]) -> None:
        write = self.stdout.write
        loaded = f", loaded by COPY in {r['hub_load_seconds']:.0f} s, indexes built in {r['hub_index_seconds']:.0f} s" if r["hub_load_seconds"] else ""
        write(f"hub: {r['hub_rows']:,} rows about other users{loaded} (shared_buffers {r['shared_buffers']})")
        records = ", ".join(f"{n:,}" for n in r["user_records"])
        write(f"{r['rounds']} users erased one after another, {records} records each (seeded through the services, {r['seed_seconds']:.0f} s each):")
        write("  " + ", ".join(f"{label} {n:,}" for label, n in sorted(r["user_counts"].items(), key=lambda kv: -kv[1])))
        purge = r["purge_seconds"]
        write(
            f"purge, VACUUM excluded: median {purge['median']:.2f} s, max {purge['max']:.2f} s "
            f"({', '.join(f'{s:.2f}' for s in purge['all'])}; batches of {r['batch_rows']}); "
            f"goal <= {r['goal_seconds']:.0f} s: {'met' if r['goal_met'] else 'MISSED'}"
        )
        write(
            f"storage clean-up (VACUUM with INDEX_CLEANUP ON of the touched tables, in the background, one pass serving every "
            f"purge finished before it began): {', '.join(f'{v:.1f} s' for v in r['vacuum_seconds'])}; "
            f"from the first purge's end to the last clean-up {r['cleanup_window_seconds']:.1f} s"
        )
        write(
            f"  receipts' verification {'passed' if r['verification_passed'] else 'FAILED'}, "
            f"other users' rows {'unchanged' if r['hub_unchanged'] else 'CHANGED'}"
        )
        for phase, numbers in r["search_ms"].items():
            write(
                f"search {phase:20s} p50 {numbers['p50']:7.1f} ms  p95 {numbers['p95']:7.1f} ms  max {numbers['max']:7.1f} ms  "
                f"({numbers['count']} hybrid searches, tag + user_id filter, one connection)"
            )
        write(f"load average (1 min) before / after: {' / '.join(f'{x:.2f}' for x in r['load_average_1min'])}")
