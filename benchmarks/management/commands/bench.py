"""`manage.py bench NAME [options]`: one benchmark of `benchmarks.registry`;
`bench --list` (or no name) lists them, `bench --all` runs each with its defaults."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchmarks.common import Options, machine
from benchmarks.report import Section
from benchmarks.report import write as write_report
from benchmarks.registry import BENCHMARKS, Benchmark
from memoryhub.platform import embedded_pg


class Command(BaseCommand):
    help = f"Benchmarks: {', '.join(BENCHMARKS)} (see docs/benchmarks.md)."

    def add_arguments(self, parser: CommandParser) -> None:
        what = parser.add_mutually_exclusive_group()
        what.add_argument("--list", action="store_true", help="list the benchmarks (as does giving no name)")
        what.add_argument("--all", action="store_true", help="run every benchmark, one after another, with its defaults")
        parser.add_argument("--report", type=Path, help="with --all: write every result beside its goal to this Markdown file (BENCHMARKS.md)")
        sub = parser.add_subparsers(dest="benchmark", metavar="NAME")
        # Kept to read each benchmark's defaults for --all.
        self.parsers: dict[str, CommandParser] = {}
        for benchmark in BENCHMARKS.values():
            own = sub.add_parser(benchmark.name, help=benchmark.help)
            benchmark.add_arguments(own)
            if benchmark.database is not None:
                own.add_argument("--here", action="store_true", help=f"use the current database instead of {benchmark.database}")
            own.add_argument("--json", action="store_true", help="also print the result as one JSON line")
            self.parsers[benchmark.name] = own

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["benchmark"]
        if options["all"]:
            if name is not None:
                raise CommandError("Give a benchmark's name or --all, not both.")
            self._all(options["report"])
        elif name is None or options["list"]:
            width = max(map(len, BENCHMARKS))
            for benchmark in BENCHMARKS.values():
                self.stdout.write(f"{benchmark.name:{width}s}  {benchmark.help}")
        else:
            self._bench(BENCHMARKS[name], options)

    def _all(self, report: Path | None) -> None:
        """Each benchmark with its defaults; with `report`, a failing one is recorded and
        the others still run, and the file is rewritten after each."""
        started = datetime.now(UTC)
        sections: list[Section] = []
        for benchmark in BENCHMARKS.values():
            options = vars(self.parsers[benchmark.name].parse_args([]))
            if report is None:
                self._bench(benchmark, options)
                continue
            captured = _Tee(self.stdout)
            stdout, self.stdout = self.stdout, captured  # type: ignore[assignment]
            failed = None
            try:
                self._bench(benchmark, options)
            except (Exception, SystemExit) as exc:  # noqa: BLE001 - one failure must not lose the others' figures
                failed = f"{type(exc).__name__}: {exc}"
            finally:
                self.stdout = stdout
            sections.append(Section(name=benchmark.name, command=f"manage.py bench {benchmark.name}", output=captured.text(), failed=failed))
            write_report(report, machine=machine(), sections=sections, started=started)
        if report is not None:
            self.stdout.write(f"wrote {report}")

    def _bench(self, benchmark: Benchmark, options: Options) -> None:
        if benchmark.database is not None and not options["here"]:
            self._rerun_in_own_database(benchmark, options, database=benchmark.database)
            return
        self.stdout.write(f"{benchmark.name} on {machine()}")
        result = benchmark.run(options, log=self.stdout.write)
        benchmark.report(result, write=self.stdout.write)
        if options["json"]:
            payload = [asdict(r) for r in result] if isinstance(result, list) else result if isinstance(result, dict) else asdict(result)
            self.stdout.write(json.dumps({"benchmark": benchmark.name, "machine": machine(), "result": payload}, default=str))

    def _rerun_in_own_database(self, benchmark: Benchmark, options: Options, *, database: str) -> None:
        """Scale benchmarks drop and rebuild indexes: never on the hub's own database."""
        if settings.DATABASES["default"]["ENGINE"] != "memoryhub.platform.db_embedded":
            url = os.environ.get("MEMORYHUB_BENCH_DATABASE_URL")
            if not url:
                raise CommandError("With DATABASE_URL set, give the benchmark its own database in MEMORYHUB_BENCH_DATABASE_URL.")
        else:
            socket_dir = embedded_pg.ensure_running(Path(settings.MEMORYHUB_DATA_DIR))
            name = database.format(**options)
            embedded_pg.ensure_database(socket_dir, name)
            url = embedded_pg.database_url(socket_dir, name)
        env = {**os.environ, "DATABASE_URL": url}
        manage = [sys.executable, str(Path(settings.BASE_DIR) / "manage.py")]
        subprocess.run([*manage, "migrate", "--no-input", "-v0"], env=env, check=True)
        forwarded = [arg for option in benchmark.forwarded for arg in (option, str(options[option.removeprefix("--").replace("-", "_")]))]
        forwarded.append("--here")
        if options["json"]:
            forwarded.append("--json")
        # Its output goes through ours, line by line as it comes, so that --report gets it too.
        with subprocess.Popen([*manage, "bench", benchmark.name, *forwarded], env=env, stdout=subprocess.PIPE, text=True) as child:
            assert child.stdout is not None
            for line in child.stdout:
                self.stdout.write(line.rstrip("\n"))
        if child.returncode:
            raise CommandError(f"bench {benchmark.name} exited with {child.returncode}")


class _Tee:
    """Writes through to the command's output and keeps a copy for the report."""

    def __init__(self, out: Any) -> None:
        self.out = out
        self.lines: list[str] = []

    def write(self, text: str, *args: Any, **kwargs: Any) -> None:
        self.lines.append(text)
        self.out.write(text, *args, **kwargs)

    def text(self) -> str:
        return "\n".join(self.lines)
