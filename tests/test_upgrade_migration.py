"""A database made by the previous release, with a row in every table, migrates to
this code and keeps every row.

The previous release is the tag v0.1.0, or, where tags did not travel with the clone,
the commit CHANGELOG.md names for it. Its tree is taken from this clone's history
(`git archive`), migrated and seeded by its own code in a subprocess, then migrated by
this code; every table's rows are counted before and after and read through today's
models."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from memoryhub.platform import embedded_pg

BASE_DIR = Path(__file__).resolve().parent.parent
SEED = BASE_DIR / "tests" / "seed_every_table.py"
DATABASE = f"upgrade_from_previous_{os.getpid()}"
# Filled by Django itself as models and migrations are added: they may only grow.
GROWING = {"django_migrations", "django_content_type", "auth_permission"}


def git(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(BASE_DIR), *args], capture_output=True)


def previous_release() -> str:
    """The commit of the previous release: the tag if present, else CHANGELOG.md's line."""
    if git("rev-parse", "--git-dir").returncode:
        pytest.skip("not a git clone: the previous release's code comes from the history")
    tag = git("rev-parse", "-q", "--verify", "v0.1.0^{commit}")
    if tag.returncode == 0:
        return tag.stdout.decode().strip()
    found = re.search(r"^## 0\.1\.0 — commit ([0-9a-f]{7,40})", (BASE_DIR / "CHANGELOG.md").read_text(), re.M)
    assert found, "CHANGELOG.md names no commit for 0.1.0"
    return found.group(1)


@pytest.fixture
def old_database(db: None) -> Iterator[str]:
    host = connection.get_connection_params()["host"]
    admin = {"host": host, "user": "postgres", "dbname": "postgres", "autocommit": True}
    with psycopg.connect(**admin) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DATABASE}"')
        conn.execute(f'CREATE DATABASE "{DATABASE}"')
    try:
        yield embedded_pg.database_url(host, DATABASE)
    finally:
        with psycopg.connect(**admin) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{DATABASE}" WITH (FORCE)')


def run(tree: Path, url: str, data_dir: Path, *command: str) -> str:
    env = {**os.environ, "DATABASE_URL": url, "MEMORYHUB_DATA_DIR": str(data_dir), "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, *command], cwd=tree, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, f"{' '.join(command)} in {tree.name}:\n{done.stderr[-3000:]}"
    return done.stdout


def test_a_database_of_the_previous_release_migrates_with_every_row(old_database: str, tmp_path: Path) -> None:
    commit = previous_release()
    archive = git("archive", "--format=tar", commit)
    assert archive.returncode == 0, f"commit {commit} of the previous release is not in this clone: {archive.stderr.decode()}"
    old_tree = tmp_path / "previous"
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(old_tree, filter="data")

    run(old_tree, old_database, tmp_path / "data", "manage.py", "migrate", "--no-input", "-v0")
    before = json.loads(run(old_tree, old_database, tmp_path / "data", str(SEED)).splitlines()[-1])
    empty = sorted(table for table, rows in before.items() if not rows)
    assert not empty, f"the previous release's tables left empty by the seed: {empty}"

    run(BASE_DIR, old_database, tmp_path / "data", "manage.py", "migrate", "--no-input", "-v0")
    read = json.loads(run(BASE_DIR, old_database, tmp_path / "data", str(SEED), "--read").splitlines()[-1])
    with psycopg.connect(old_database) as conn:
        after = {table: conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0] for table in before}
    for table, rows in before.items():
        if table in GROWING:
            assert after[table] >= rows, table
        else:
            assert after[table] == rows, f"{table}: {rows} rows before the upgrade, {after[table]} after"
            assert read.get(table) == rows, f"{table}: today's models read {read.get(table)} of its {rows} rows"
