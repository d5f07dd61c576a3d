"""`manage.py bench --all --report PATH` (make bench): every benchmark's figures beside
its goal in one Markdown file, misses marked, a failing benchmark recorded, not fatal."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command

from benchmarks.registry import Benchmark


def _benchmark(name: str, line: str | None) -> Benchmark:
    def run(options: dict, *, log: object) -> dict:
        if line is None:
            raise RuntimeError("the server went away")
        return {"line": line}

    return Benchmark(name=name, help=name, add_arguments=lambda parser: None, run=run,
                     report=lambda result, *, write: write(result["line"]), database=None, forwarded=())


def test_it_writes_each_figure_beside_its_goal_and_marks_misses(db: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from benchmarks.management.commands import bench

    fake = {
        "console": _benchmark("console", "Overview p95 33.3 ms ok (goal ≤ 150 ms)"),
        "checkpoint": _benchmark("checkpoint", "1 KB: ratio p50 1.85 MISSED"),
        "purge": _benchmark("purge", None),
    }
    monkeypatch.setattr(bench, "BENCHMARKS", fake)
    report = tmp_path / "BENCHMARKS.md"
    call_command("bench", "--all", "--report", str(report))

    text = report.read_text()
    assert "Machine: " in text and "PostgreSQL 18" in text
    assert "| [console](#console) | every console page p95 ≤ 150 ms | met |" in text
    assert "| [checkpoint](#checkpoint) | save + load no slower than LangGraph's PostgresSaver at any size | **missed** (1 line below) |" in text
    assert "- **missed**: 1 KB: ratio p50 1.85 MISSED" in text
    assert "**failed**: RuntimeError: the server went away" in text
