"""Every benchmark `manage.py bench` knows, in the order it lists and runs them.

A benchmark is a module declaring NAME, HELP, DATABASE, FORWARDED, `add_arguments`,
`run` and `report`; the modules do not import this one, so that each stays importable
on its own (the tests import `memory_quality`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

from django.core.management.base import CommandParser

from benchmarks import adapters, checkpoint, console, conversation, duplicates, graph, hitl, live, load, memory_ingest, memory_quality, memory_search, portability, purge, review, search_http, usage, webhooks, working_state
from benchmarks.common import Log, Options


class Run(Protocol):
    def __call__(self, options: Options, /, *, log: Log) -> Any: ...


class Report(Protocol):
    def __call__(self, result: Any, /, *, write: Log) -> None: ...


@dataclass(frozen=True, kw_only=True)
class Benchmark:
    name: str
    help: str
    add_arguments: Callable[[CommandParser], None]
    run: Run
    report: Report
    # The name (formatted with the options) of the database it re-runs itself in unless
    # given --here, for benchmarks that drop and rebuild indexes; None runs it in place.
    database: str | None
    # The options it passes on to that re-run, as their command-line names.
    forwarded: tuple[str, ...]


def _declared_by(module: ModuleType) -> Benchmark:
    return Benchmark(
        name=module.NAME, help=module.HELP, add_arguments=module.add_arguments, run=module.run, report=module.report,
        database=module.DATABASE, forwarded=module.FORWARDED,
    )


BENCHMARKS: dict[str, Benchmark] = {
    benchmark.name: benchmark
    for benchmark in map(
        _declared_by, (memory_ingest, duplicates, memory_search, search_http, memory_quality, conversation, checkpoint, working_state, purge, hitl, live, load, console, review, graph, portability, usage, webhooks, adapters)
    )
}
