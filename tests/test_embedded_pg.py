"""The embedded server's cache sizes follow the machine it runs on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from memoryhub.platform.embedded_pg import machine_memory_bytes, memory_defaults
from tests.conftest import run_python

GB = 2**30


def test_it_gives_a_quarter_of_memory_to_shared_buffers_and_half_to_the_cache_estimate() -> None:
    assert memory_defaults(24 * GB) == {"shared_buffers": "6144MB", "effective_cache_size": "12288MB"}
    assert memory_defaults(2 * GB) == {"shared_buffers": "512MB", "effective_cache_size": "1024MB"}


def test_it_stays_within_bounds_on_very_small_and_very_large_machines() -> None:
    assert memory_defaults(256 * 2**20) == {"shared_buffers": "128MB", "effective_cache_size": "512MB"}
    # Beyond 8 GB of buffers PostgreSQL gains little and checkpoints grow.
    assert memory_defaults(256 * GB)["shared_buffers"] == "8192MB"


def test_it_reads_this_machines_memory() -> None:
    with open("/proc/meminfo") as meminfo:
        total_kb = int(next(line for line in meminfo if line.startswith("MemTotal:")).split()[1])
    assert 0 < machine_memory_bytes() <= total_kb * 1024 * 1.01


def embedded_db(action: str, data_dir: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": ""} | ({"MEMORYHUB_DATA_DIR": str(data_dir)} if data_dir else {})
    return run_python([sys.executable, "manage.py", "embedded_db", action], env=env, timeout=60)


def test_its_status_says_whether_it_runs_and_never_starts_it(tmp_path: Path) -> None:
    assert embedded_db("status").stdout.startswith("running: pid ")  # the suite's own server
    stopped = embedded_db("status", tmp_path)
    assert (stopped.returncode, stopped.stdout.strip()) == (3, f"not running: data {tmp_path / 'postgres'}")
    assert stopped.stderr == ""
    assert not (tmp_path / "postgres").exists()
    # Stopping what does not run says so, and starts nothing either.
    assert embedded_db("stop", tmp_path).stdout.strip() == f"not running: data {tmp_path / 'postgres'}"
    assert not (tmp_path / "postgres").exists()
